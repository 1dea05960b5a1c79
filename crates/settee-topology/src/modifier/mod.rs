//! SOFA's topology modifiers (`DYN/*SetTopologyModifier.cpp` with the `*Process` methods of the
//! containers): adding and removing elements of a set container while the simulation runs.
//!
//! [`DynTopo`] is a container's element lists plus the adjacency arrays ("shells") SOFA builds
//! lazily (`create*Array`); the modifiers keep every existing shell up to date, because the
//! order of a shell decides later results (which faces a topological mapping picks, which
//! elements become isolated first). Every operation appends its events to [`DynTopo::log`] in
//! SOFA's order (the warnings SOFA queues before `propagateTopologicalChanges`), each event
//! carrying the vertices of the elements it adds or removes; the caller delivers the log with
//! [`settee_core::topology_change::propagate`].
//!
//! SOFA sorts every removal list in decreasing order before removing (its `remove*Warning`
//! methods sort their argument in place), then removes one element after the other by
//! swap-with-last; removing a point renames the last point in every element that uses it.
//!
//! Files follow SOFA's class hierarchy: [`point`], [`edge`], [`triangle`], [`tetrahedron`]
//! (PointSet ⊂ EdgeSet ⊂ TriangleSet ⊂ TetrahedronSet) and [`quad`], [`hexahedron`]
//! (EdgeSet ⊂ QuadSet ⊂ HexahedronSet). A lower level's process calls the hooks of the higher
//! levels first, as SOFA's overrides do before calling their parent's method.

pub mod edge;
pub mod hexahedron;
pub mod point;
pub mod quad;
pub mod tetrahedron;
pub mod triangle;

use settee_core::topology_change::{ElementKind, TopologyChange};
use settee_core::{ComponentId, MeshData, Scene, SimError, SimResult};

use crate::set_container::SetTopologyContainer;

/// A set container's lists and shells (SOFA's `*SetTopologyContainer` members).
#[derive(Clone, Debug, Default)]
pub struct DynTopo {
    /// The container's kind (its highest element type).
    pub kind: ElementKind,
    /// SOFA's `getNbPoints()`.
    pub nb_points: usize,
    /// The element lists (and the container's rest positions when it has as many as points).
    pub mesh: MeshData,

    // PointSet/EdgeSet level
    pub edges_around_vertex: Option<Vec<Vec<usize>>>,
    // TriangleSet level
    pub edges_in_triangle: Option<Vec<[usize; 3]>>,
    pub triangles_around_vertex: Option<Vec<Vec<usize>>>,
    pub triangles_around_edge: Option<Vec<Vec<usize>>>,
    // QuadSet level
    pub edges_in_quad: Option<Vec<[usize; 4]>>,
    pub quads_around_vertex: Option<Vec<Vec<usize>>>,
    pub quads_around_edge: Option<Vec<Vec<usize>>>,
    // TetrahedronSet level
    pub edges_in_tetrahedron: Option<Vec<[usize; 6]>>,
    pub triangles_in_tetrahedron: Option<Vec<[usize; 4]>>,
    pub tetrahedra_around_vertex: Option<Vec<Vec<usize>>>,
    pub tetrahedra_around_edge: Option<Vec<Vec<usize>>>,
    pub tetrahedra_around_triangle: Option<Vec<Vec<usize>>>,
    // HexahedronSet level
    pub edges_in_hexahedron: Option<Vec<[usize; 12]>>,
    pub quads_in_hexahedron: Option<Vec<[usize; 6]>>,
    pub hexahedra_around_vertex: Option<Vec<Vec<usize>>>,
    pub hexahedra_around_edge: Option<Vec<Vec<usize>>>,
    pub hexahedra_around_quad: Option<Vec<Vec<usize>>>,

    /// Events of the operations since the log was last taken.
    pub log: Vec<TopologyChange>,
}

impl DynTopo {
    pub fn new(kind: ElementKind, nb_points: usize, mesh: MeshData) -> DynTopo {
        DynTopo { kind, nb_points, mesh, ..DynTopo::default() }
    }

    /// Takes the events logged so far.
    pub fn take_log(&mut self) -> Vec<TopologyChange> {
        std::mem::take(&mut self.log)
    }

    /// Number of elements of a kind.
    pub fn count(&self, kind: ElementKind) -> usize {
        match kind {
            ElementKind::Point => self.nb_points,
            ElementKind::Edge => self.mesh.edges.len(),
            ElementKind::Triangle => self.mesh.triangles.len(),
            ElementKind::Quad => self.mesh.quads.len(),
            ElementKind::Tetrahedron => self.mesh.tetrahedra.len(),
            ElementKind::Hexahedron => self.mesh.hexahedra.len(),
        }
    }

    /// The vertices of element `i` of a kind.
    pub fn vertices(&self, kind: ElementKind, i: usize) -> Vec<usize> {
        match kind {
            ElementKind::Point => vec![i],
            ElementKind::Edge => self.mesh.edges[i].to_vec(),
            ElementKind::Triangle => self.mesh.triangles[i].to_vec(),
            ElementKind::Quad => self.mesh.quads[i].to_vec(),
            ElementKind::Tetrahedron => self.mesh.tetrahedra[i].to_vec(),
            ElementKind::Hexahedron => self.mesh.hexahedra[i].to_vec(),
        }
    }

    /// Logs the removal of `ids` (already in SOFA's order), with their vertices as they are now.
    /// Call it before the lists change.
    pub fn log_removed(&mut self, kind: ElementKind, ids: &[usize]) {
        if ids.is_empty() {
            return;
        }
        // The vertices each removed element has when its turn comes: earlier removals in the
        // same list move the last element into their slot.
        // at[p] = the original element now at position p, for the positions that moved.
        let mut at: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        let mut len = self.count(kind);
        let mut elements = Vec::with_capacity(ids.len());
        for &i in ids {
            let orig = at.get(&i).copied().unwrap_or(i);
            elements.push(if kind == ElementKind::Point { Vec::new() } else { self.vertices(kind, orig) });
            len -= 1;
            let last = at.get(&len).copied().unwrap_or(len);
            at.insert(i, last);
        }
        self.log.push(TopologyChange::Removed { kind, indices: ids.to_vec(), elements });
    }

    /// Logs the addition of elements (already appended to the lists).
    pub fn log_added(&mut self, kind: ElementKind, elements: Vec<Vec<usize>>, count: usize, ancestors: Vec<Vec<usize>>, coefs: Vec<Vec<f64>>) {
        if count == 0 {
            return;
        }
        self.log.push(TopologyChange::Added { kind, count, elements, ancestors, coefs });
    }
}

/// Runs a modifier operation on the set container `container`, writes the new lists back into
/// its Data and delivers the logged events to everything following it
/// ([`settee_core::topology_change::propagate`]).
pub fn modify(scene: &mut Scene, container: ComponentId, op: impl FnOnce(&mut DynTopo)) -> SimResult {
    if let Some(m) = owning_mapping(scene, container) {
        return Err(SimError::new(format!(
            "{} is filled by {}: changing it directly would leave the mapping's index maps inconsistent",
            scene.entry(container).label(),
            scene.entry(m).label()
        ))
        .hint("change the mapping's input topology instead; the change reaches this container through the mapping"));
    }
    let log = {
        let label = scene.entry(container).label();
        let Some(c) = scene.get_mut::<SetTopologyContainer>(container) else {
            return Err(SimError::unsupported(format!("{label} is not a dynamic topology container: its elements cannot be added or removed"))
                .hint("use a *SetTopologyContainer (TriangleSetTopologyContainer, TetrahedronSetTopologyContainer, …) with its modifier"));
        };
        op(c.topo_mut());
        c.topo_mut().take_log()
    };
    let linked = linked_fields(scene, container);
    let mut data = std::mem::take(&mut scene.components[container].data);
    if let Some(c) = scene.get::<SetTopologyContainer>(container) {
        let wanted: Vec<&'static str> = linked.iter().filter_map(|&i| data.fields.get(i).map(|f| f.decl.name)).collect();
        c.write_back(&mut data, |name| wanted.contains(&name));
    }
    scene.components[container].data = data;
    settee_core::topology_change::propagate(scene, container, &log)
}

/// The topological mapping whose output is `container`, unless that mapping is the one changing
/// it now (it is taken out of the scene while it follows its input).
fn owning_mapping(scene: &Scene, container: ComponentId) -> Option<ComponentId> {
    let mut found = None;
    for n in scene.preorder(Scene::ROOT) {
        for &c in &scene.node(n).objects {
            if !scene.entry(c).class.name.ends_with("TopologicalMapping") || scene.entry(c).class.name == "Mesh2PointTopologicalMapping" {
                continue;
            }
            let output = scene.link_targets(c, "output").first().copied().or_else(|| scene.slot(n, settee_core::role::TOPOLOGY));
            if output != Some(container) {
                continue;
            }
            // Taken out: the mapping itself is forwarding a change.
            scene.components[c].obj.as_ref()?;
            found = Some(c);
        }
    }
    found
}

/// The fields of `container` other components' Data are linked to.
fn linked_fields(scene: &Scene, container: ComponentId) -> Vec<usize> {
    let mut out = Vec::new();
    for (_, e) in scene.components.iter() {
        for f in &e.data.fields {
            if let Some(l) = &f.link {
                if l.owner_component() == Some(container) && !out.contains(&l.field) {
                    out.push(l.field);
                }
            }
        }
    }
    out
}

/// A higher level's part of a swap-with-last removal of lower elements (points, edges,
/// triangles, quads): `ids` in decreasing order, `count` lower elements before the removal.
/// For each removed index, the rows around the current last element (its `shells` entry)
/// rename it into the removed index and its shell takes the removed slot; the shells then
/// shrink by the number removed. `rows` are the higher elements' vertex lists, or their
/// "edges/faces in element" arrays.
pub(crate) fn rename_last_in_rows<R: AsMut<[usize]>>(shells: &mut Vec<Vec<usize>>, rows: &mut [R], count: usize, ids: &[usize]) {
    if shells.len() < count {
        shells.resize(count, Vec::new());
    }
    let mut last = count;
    for &i in ids {
        let Some(l) = last.checked_sub(1) else { break };
        last = l;
        let shell = std::mem::take(&mut shells[last]);
        for &k in &shell {
            if let Some(x) = rows.get_mut(k).and_then(|r| r.as_mut().iter_mut().find(|x| **x == last)) {
                *x = i;
            }
        }
        shells[i] = shell;
    }
    shells.truncate(count.saturating_sub(ids.len()));
}

/// Replaces `from` by `to` in a shell (`std::replace`).
pub(crate) fn rename(shell: &mut [usize], from: usize, to: usize) {
    for x in shell.iter_mut().filter(|x| **x == from) {
        *x = to;
    }
}

/// One shell kind's part of the swap-with-last removal of element `i` (`last`: the index of the
/// last element before this removal). Element `i` leaves the shells of its lower items (row `i`
/// of `rows`: its vertices, edges or faces); with `collect`, an item whose shell empties goes to
/// `isolated`. Then, when `i < last`, the last element, which takes `i`'s place, is renamed `i`
/// in the shells of its own items (row `last`). Missing shells, rows or items are skipped.
pub(crate) fn leave_shells<R: AsRef<[usize]>>(
    shells: Option<&mut Vec<Vec<usize>>>,
    rows: Option<&[R]>,
    i: usize,
    last: usize,
    collect: bool,
    isolated: &mut Vec<usize>,
) {
    let (Some(shells), Some(rows)) = (shells, rows) else { return };
    if let Some(items) = rows.get(i) {
        for &v in items.as_ref() {
            if let Some(shell) = shells.get_mut(v) {
                shell.retain(|&x| x != i);
                if collect && shell.is_empty() {
                    isolated.push(v);
                }
            }
        }
    }
    if i < last {
        if let Some(items) = rows.get(last) {
            for &v in items.as_ref() {
                if let Some(shell) = shells.get_mut(v) {
                    rename(shell, last, i);
                }
            }
        }
    }
}

/// Moves row `last` of an "items in element" array into slot `i` and drops the last row (the
/// array follows the swap-with-last removal of element `i`); nothing when the array does not
/// exist or does not reach `last`.
pub(crate) fn swap_remove_row<R: Copy>(rows: Option<&mut Vec<R>>, i: usize, last: usize) {
    if let Some(rows) = rows {
        if last < rows.len() {
            rows[i] = rows[last];
            rows.truncate(last);
        }
    }
}

/// The shells of `count` lower items from the rows naming them: shell `v` lists, in element
/// order, the elements whose row holds `v` (an item beyond `count` is skipped).
pub(crate) fn shells_from_rows<R: AsRef<[usize]>>(count: usize, rows: &[R]) -> Vec<Vec<usize>> {
    let mut shells = vec![Vec::new(); count];
    for (i, row) in rows.iter().enumerate() {
        for &v in row.as_ref() {
            if let Some(s) = shells.get_mut(v) {
                s.push(i);
            }
        }
    }
    shells
}

/// Adds `element` to the shells of `items`, creating the shells and growing them to at least
/// `count` first.
pub(crate) fn attach(shells: &mut Option<Vec<Vec<usize>>>, count: usize, items: &[usize], element: usize) {
    let shells = shells.get_or_insert_with(Vec::new);
    if shells.len() < count {
        shells.resize(count, Vec::new());
    }
    for &v in items {
        shells[v].push(element);
    }
}

/// A level's vertex shells and its elements.
pub(crate) type PointRows<'a, const N: usize> = (&'a mut Option<Vec<Vec<usize>>>, &'a mut Vec<[usize; N]>);

/// A level's shells around lower items and its "items in element" rows.
pub(crate) type ItemRows<'a, const N: usize> = (&'a mut Option<Vec<Vec<usize>>>, &'a mut Option<Vec<[usize; N]>>);

/// A level's part of a removal of lower items (`ids` in decreasing order, the item list not yet
/// changed), when it has "items in element" rows: its shells around the items are built
/// (`ensure`), then the elements around the last item name each removed item's index instead.
/// `count`: the number of items (`None`: the shells' length).
pub(crate) fn rename_removed_items<const N: usize>(
    t: &mut DynTopo,
    ids: &[usize],
    count: Option<usize>,
    ensure: fn(&mut DynTopo),
    parts: for<'a> fn(&'a mut DynTopo) -> ItemRows<'a, N>,
) {
    if parts(t).1.is_none() {
        return;
    }
    ensure(t);
    let (Some(shells), Some(rows)) = parts(t) else { return };
    let count = count.unwrap_or(shells.len());
    rename_last_in_rows(shells, rows, count, ids);
}

/// A removal by swap-with-last of `ids` (decreasing) from `len` elements: `(i, last)` for each
/// id naming an element, `last` being the element that takes its place.
pub(crate) fn swaps(ids: &[usize], len: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut last = len;
    ids.iter().filter_map(move |&i| {
        if i >= last {
            return None;
        }
        last -= 1;
        Some((i, last))
    })
}

/// The part of a point removal (`ids` in decreasing order, the point count not yet reduced) of
/// a level whose vertex shells keep one entry per point even without elements (edges,
/// triangles): without elements the shells are only shortened; else they are built when
/// missing (`ensure`) and the last point takes each removed point's index in the elements.
pub(crate) fn rename_removed_points<const N: usize>(
    t: &mut DynTopo,
    ids: &[usize],
    ensure: fn(&mut DynTopo),
    parts: for<'a> fn(&'a mut DynTopo) -> PointRows<'a, N>,
) {
    let nb = t.nb_points;
    if parts(t).1.is_empty() {
        // Nothing names the points; a shell that exists keeps one entry per point.
        if let Some(shells) = parts(t).0.as_mut() {
            shells.truncate(nb.saturating_sub(ids.len()));
        }
        return;
    }
    rename_points_in(t, ids, ensure, parts);
}

/// SOFA's `add*` operations: nothing for no elements; else `process` appends them (with what it
/// creates on the way), then their addition is logged.
pub(crate) fn add_logged<const N: usize>(
    t: &mut DynTopo,
    kind: ElementKind,
    elements: &[[usize; N]],
    ancestors: Vec<Vec<usize>>,
    coefs: Vec<Vec<f64>>,
    process: fn(&mut DynTopo, &[[usize; N]]),
) {
    if elements.is_empty() {
        return;
    }
    process(t, elements);
    t.log_added(kind, elements.iter().map(|e| e.to_vec()).collect(), elements.len(), ancestors, coefs);
}

/// SOFA's `create*AroundVertexArray` of the quad and hexahedron levels: when missing and there
/// are elements, the shells of every point (at least `nb_points`) around them.
pub(crate) fn ensure_around_vertex<const N: usize>(shells: &mut Option<Vec<Vec<usize>>>, rows: &[[usize; N]], nb_points: usize) {
    if shells.is_some() || rows.is_empty() {
        return;
    }
    let n = nb_points.max(crate::elements::count_points(rows));
    *shells = Some(shells_from_rows(n, rows));
}

/// An "items in element" array of `count` elements: slot `i` of element `e` is `item(t, e, i)`,
/// [`quad::MISSING`] when the item is not found.
pub(crate) fn item_rows<const N: usize>(t: &mut DynTopo, count: usize, item: fn(&mut DynTopo, usize, usize) -> Option<usize>) -> Vec<[usize; N]> {
    (0..count).map(|e| std::array::from_fn(|i| item(t, e, i).unwrap_or(quad::MISSING))).collect()
}

/// The part of a point removal (`ids` in decreasing order, the point count not yet reduced) of
/// a level with elements: its vertex shells are built (`ensure`), then the last point takes
/// each removed point's index in the elements around it.
pub(crate) fn rename_points_in<const N: usize>(
    t: &mut DynTopo,
    ids: &[usize],
    ensure: fn(&mut DynTopo),
    parts: for<'a> fn(&'a mut DynTopo) -> PointRows<'a, N>,
) {
    if parts(t).1.is_empty() {
        return;
    }
    ensure(t);
    let nb = t.nb_points;
    let (Some(shells), rows) = parts(t) else { return };
    rename_last_in_rows(shells, rows, nb, ids);
}

/// The edges of a new element `index` (slot `j` joining `ends[j]`): its row is reserved, then
/// each edge is found, or added (and logged) when missing, and recorded in the row and in the
/// edge's shell.
pub(crate) fn record_edges<const N: usize>(
    t: &mut DynTopo,
    index: usize,
    ends: impl IntoIterator<Item = [usize; 2]>,
    parts: for<'a> fn(&'a mut DynTopo) -> ItemRows<'a, N>,
) {
    reserve_row(parts(t).1, index, quad::MISSING);
    for (j, [a, b]) in ends.into_iter().enumerate() {
        let Some(e) = find_or_add(t, |t| edge::edge_index(t, a, b), |t| edge::add_edges(t, &[[a, b]])) else { continue };
        let n = t.mesh.edges.len();
        let (shells, rows) = parts(t);
        record_item(rows.as_mut(), shells, n, index, j, e);
    }
}

/// A new element `index` on the points `vertices` (quads, hexahedra): the point count covers
/// them, and each lists the element in its shell.
pub(crate) fn attach_new(t: &mut DynTopo, vertices: &[usize], index: usize, shells: fn(&mut DynTopo) -> &mut Option<Vec<Vec<usize>>>) {
    let nb = vertices.iter().map(|&v| v + 1).max().unwrap_or(0).max(t.nb_points);
    t.nb_points = nb;
    attach(shells(t), nb, vertices, index);
}

/// Grows shells that exist by `count` entries, and to at least `at_least` (the hooks of an
/// addition at a lower level).
pub(crate) fn grow_shells(shells: &mut Option<Vec<Vec<usize>>>, count: usize, at_least: usize) {
    if let Some(s) = shells.as_mut() {
        let n = (s.len() + count).max(at_least);
        s.resize(n, Vec::new());
    }
}

/// Gives an "items in element" array (created when missing) a row for `element`, filled with
/// `missing` when it is new.
pub(crate) fn reserve_row<const N: usize>(rows: &mut Option<Vec<[usize; N]>>, element: usize, missing: usize) {
    let rows = rows.get_or_insert_with(Vec::new);
    if rows.len() < element + 1 {
        rows.resize(element + 1, [missing; N]);
    }
}

/// Records lower item `item` as slot `slot` of `element` (when the "items in element" array
/// exists) and `element` in the item's shell (grown to `count` items), as SOFA's
/// `add*Process` does for each face or edge of a new element.
pub(crate) fn record_item<const N: usize>(
    rows: Option<&mut Vec<[usize; N]>>,
    shells: &mut Option<Vec<Vec<usize>>>,
    count: usize,
    element: usize,
    slot: usize,
    item: usize,
) {
    if let Some(rows) = rows {
        rows[element][slot] = item;
    }
    attach(shells, count, &[item], element);
}

/// The index `find` gives, else the one it gives after `add` created the item (SOFA's
/// `get*Index`, then `add*` when it is missing); `None` when even then there is none.
pub(crate) fn find_or_add(t: &mut DynTopo, find: impl Fn(&mut DynTopo) -> Option<usize>, add: impl FnOnce(&mut DynTopo)) -> Option<usize> {
    if let Some(k) = find(t) {
        return Some(k);
    }
    add(t);
    find(t)
}

/// The end of an element removal: the edges, then the points, it left isolated (each list sorted
/// and removed as SOFA's `removeEdges` and `removePoints` do, when not empty; the edges without
/// looking for isolated points).
pub(crate) fn remove_isolated(t: &mut DynTopo, edges: Vec<usize>, points: Vec<usize>) {
    if !edges.is_empty() {
        edge::remove_edges(t, edges, false);
    }
    if !points.is_empty() {
        point::remove_points(t, points);
    }
}
