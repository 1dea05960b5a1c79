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
                if l.component == container && !out.contains(&l.field) {
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
