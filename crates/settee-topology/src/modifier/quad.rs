//! QuadSet level (`QuadSetTopologyModifier`, `QuadSetTopologyContainer`).
//!
//! Shells of this level: `edges_in_quad` (the edge of side `j` of quad `q` joins
//! `q[(j+1)%4]` and `q[(j+2)%4]`), `quads_around_vertex`, `quads_around_edge`. SOFA builds them
//! all when a non-empty container is initialised; here they are built from the lists the first
//! time an operation needs them, which gives the same content (the order inside a shell only
//! differs for shells SOFA has already modified, and every use below is order-independent:
//! removal lists are sorted, lookups find a unique element).

pub(crate) use super::edge::edge_index;
use super::{hexahedron, point, DynTopo};
use settee_core::topology_change::ElementKind;

/// Marks a side whose edge is missing from the edge list (an inconsistent container; SOFA
/// asserts). Entries holding it are skipped by the shell updates.
pub(crate) const MISSING: usize = usize::MAX;

// ----- shells --------------------------------------------------------------------------------

/// SOFA's `createEdgesInQuadArray`.
pub(crate) fn ensure_edges_in_quad(t: &mut DynTopo) {
    if t.edges_in_quad.is_some() || t.mesh.edges.is_empty() {
        return;
    }
    let n = t.mesh.quads.len();
    let out = super::item_rows(t, n, |t, qi, j| {
        let q = t.mesh.quads[qi];
        edge_index(t, q[(j + 1) % 4], q[(j + 2) % 4])
    });
    t.edges_in_quad = Some(out);
}

/// SOFA's `createQuadsAroundVertexArray`.
pub(crate) fn ensure_quads_around_vertex(t: &mut DynTopo) {
    super::ensure_around_vertex(&mut t.quads_around_vertex, &t.mesh.quads, t.nb_points);
}

/// SOFA's `createQuadsAroundEdgeArray` (builds `edges_in_quad` first if needed).
pub(crate) fn ensure_quads_around_edge(t: &mut DynTopo) {
    if t.quads_around_edge.is_some() || t.mesh.quads.is_empty() || t.mesh.edges.is_empty() {
        return;
    }
    ensure_edges_in_quad(t);
    let Some(eiq) = t.edges_in_quad.as_ref() else { return };
    t.quads_around_edge = Some(super::shells_from_rows(t.mesh.edges.len(), eiq));
}

/// SOFA's `getQuadIndex(a, b, c, d)`: the quad having the four vertices (in any order), found
/// from the vertex shells; `None` when there is none or more than one, or when the shells do
/// not exist and there are no quads.
pub(crate) fn quad_index(t: &mut DynTopo, q: [usize; 4]) -> Option<usize> {
    ensure_quads_around_vertex(t);
    let qav = t.quads_around_vertex.as_ref()?;
    let empty = Vec::new();
    let shell = |v: usize| qav.get(v).unwrap_or(&empty);
    let mut found: Vec<usize> = shell(q[0]).clone();
    for &v in &q[1..] {
        let s = shell(v);
        found.retain(|x| s.contains(x));
    }
    found.sort_unstable();
    found.dedup();
    (found.len() == 1).then(|| found[0])
}

// ----- removal -------------------------------------------------------------------------------

/// SOFA's `removeQuads(ids, removeIsolatedEdges, removeIsolatedPoints)` (`removeItems` uses
/// true, true). Indices out of range are dropped (SOFA warns), repeats are dropped.
pub fn remove_quads(t: &mut DynTopo, ids: Vec<usize>, remove_isolated_edges: bool, remove_isolated_points: bool) {
    let ids = point::removal_order(ids, t.mesh.quads.len());
    if ids.is_empty() {
        return;
    }
    t.log_removed(ElementKind::Quad, &ids);
    remove_quads_process(t, &ids, remove_isolated_edges, remove_isolated_points);
}

/// SOFA's `removeQuadsProcess` (with the hexahedron level's override first). `ids` are sorted
/// in decreasing order and distinct.
fn remove_quads_process(t: &mut DynTopo, ids: &[usize], remove_isolated_edges: bool, remove_isolated_points: bool) {
    if t.mesh.quads.is_empty() {
        return;
    }
    hexahedron::on_quads_removed(t, ids);
    if !t.mesh.edges.is_empty() && remove_isolated_edges {
        ensure_edges_in_quad(t);
        ensure_quads_around_edge(t);
    }
    if remove_isolated_points {
        ensure_quads_around_vertex(t);
    }

    let mut edges_to_remove = Vec::new();
    let mut points_to_remove = Vec::new();
    for &i in ids {
        // The last quad takes the place of the removed one.
        let last = t.mesh.quads.len() - 1;
        super::leave_shells(t.quads_around_vertex.as_mut(), Some(&t.mesh.quads), i, last, remove_isolated_points, &mut points_to_remove);
        super::leave_shells(t.quads_around_edge.as_mut(), t.edges_in_quad.as_deref(), i, last, remove_isolated_edges, &mut edges_to_remove);
        super::swap_remove_row(t.edges_in_quad.as_mut(), i, last);
        t.mesh.quads.swap_remove(i);
    }

    super::remove_isolated(t, edges_to_remove, points_to_remove);
}

// ----- addition ------------------------------------------------------------------------------

/// SOFA's `addQuads`: each quad is appended (creating its missing edges, each logged as it is
/// created), then the quads' addition is logged.
pub fn add_quads(t: &mut DynTopo, quads: &[[usize; 4]]) {
    add_quads_with(t, quads, Vec::new(), Vec::new());
}

/// [`add_quads`] with ancestors and coefficients (SOFA's second `addQuads`).
pub fn add_quads_with(t: &mut DynTopo, quads: &[[usize; 4]], ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) {
    super::add_logged(t, ElementKind::Quad, quads, ancestors, coefs, add_quads_process);
}

/// SOFA's `addQuadsProcess` (with the hexahedron level's override after it).
fn add_quads_process(t: &mut DynTopo, quads: &[[usize; 4]]) {
    for &q in quads {
        add_quad_process(t, q);
    }
    hexahedron::on_quads_added(t, quads.len());
}

/// SOFA's `addQuadProcess` (without the optional `checkTopology` tests).
fn add_quad_process(t: &mut DynTopo, q: [usize; 4]) {
    // The shells SOFA has had since init (or since its first quad): build them from the lists
    // before this quad is appended.
    ensure_quads_around_vertex(t);
    ensure_edges_in_quad(t);
    ensure_quads_around_edge(t);

    let qi = t.mesh.quads.len();
    super::attach_new(t, &q, qi, |t| &mut t.quads_around_vertex);
    let ends = (0..4).map(|j| [q[(j + 1) % 4], q[(j + 2) % 4]]);
    super::record_edges(t, qi, ends, |t| (&mut t.quads_around_edge, &mut t.edges_in_quad));
    t.mesh.quads.push(q);
}

// ----- hooks of the lower levels ---------------------------------------------------------------

/// Quad-level part of a point removal (`ids` sorted decreasing, `t.nb_points` not yet
/// reduced): quads using the last point are given the removed point's index.
pub(crate) fn on_points_removed(t: &mut DynTopo, ids: &[usize]) {
    super::rename_points_in(t, ids, ensure_quads_around_vertex, |t| (&mut t.quads_around_vertex, &mut t.mesh.quads));
}

/// Quad-level part of an edge removal (`ids` sorted decreasing, the edge list not yet
/// shortened): the quads around the last edge name the removed edge's index instead.
pub(crate) fn on_edges_removed(t: &mut DynTopo, ids: &[usize]) {
    let n = t.mesh.edges.len();
    super::rename_removed_items(t, ids, Some(n), ensure_quads_around_edge, |t| (&mut t.quads_around_edge, &mut t.edges_in_quad));
}

/// Quad-level part of a point addition: the vertex shells grow to the number of points.
pub(crate) fn on_points_added(t: &mut DynTopo, count: usize) {
    super::grow_shells(&mut t.quads_around_vertex, count, t.nb_points);
}

/// Quad-level part of an edge addition: the edge shells grow by `count`.
pub(crate) fn on_edges_added(t: &mut DynTopo, count: usize) {
    super::grow_shells(&mut t.quads_around_edge, count, 0);
}
