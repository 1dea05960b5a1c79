//! The edge-indexed bookkeeping of the bending springs (SOFA's `edgeInfo` TopologyData of
//! `TriangularBendingSprings` and `QuadularBendingSprings`), and how it follows topological
//! changes.
//!
//! Each edge carries two flags: `initialized` (an element visiting the edge already decided
//! whether it has springs) and `active` (it has them). An element added to the mesh visits its
//! edges and, for each edge not yet initialized, creates the springs when exactly two elements
//! share the edge; the initial build is the addition of every element in index order. Removing
//! an element resets its edges (deactivated and uninitialized), except an edge shared by three
//! elements before the removal, whose springs are rebuilt across the two others. Edges that
//! were on the border at creation stay initialized without springs, so an element added later
//! next to them does not create springs there (SOFA's behaviour, kept).
//!
//! SOFA's handlers read the container as it is when each event is delivered: before a removal,
//! after an addition. The log reaches us after the whole operation, so the tracker keeps its
//! own copy of the edges and elements (as of its last update) and replays each event on it:
//! removals are handled on the copy before they are applied, additions after. Point events
//! rename the springs' ends (swap-with-last). Rest lengths of new springs are taken from the
//! rest positions once the log is applied (a surviving point's rest position does not change).

use std::collections::HashMap;

use settee_core::topology_change::{removal_map, validate, ElementData, ElementKind, TopologyChange};

use settee_core::topology_change::Follow;
use settee_core::{InitCtx, MeshData, SimResult, StateId};

use crate::topo::{self, norm3, sub3};

/// The springs an edge gets from the two elements around it: `t1` (the other element) with the
/// edge at local index `i1`, and `t2` (the element visiting the edge) with local index `i2`.
pub(crate) type SpringRule<const K: usize> = fn(&[usize; K], usize, &[usize; K], usize) -> Vec<[usize; 2]>;

/// What one edge holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct EdgeInfo {
    pub initialized: bool,
    pub active: bool,
    /// The springs' ends (one spring for triangles, two for quads).
    pub springs: Vec<[usize; 2]>,
    /// Their rest lengths; `None` until computed from the rest positions.
    pub rest: Vec<Option<f64>>,
}

/// Per-edge spring data of a mesh of `K`-vertex elements (triangles or quads), with the copy of
/// the mesh it was last updated with.
#[derive(Clone, Debug)]
pub(crate) struct BendingTopology<const K: usize> {
    kind: ElementKind,
    rule: SpringRule<K>,
    nb_points: usize,
    edges: Vec<[usize; 2]>,
    elements: Vec<[usize; K]>,
    info: ElementData<EdgeInfo>,
}

fn key(a: usize, b: usize) -> (usize, usize) {
    (a.min(b), a.max(b))
}

impl<const K: usize> BendingTopology<K> {
    /// Builds the springs of a mesh (`kind` = the elements' kind), as SOFA's `reinit`: every
    /// element added in index order.
    pub fn new(kind: ElementKind, rule: SpringRule<K>, nb_points: usize, edges: &[[usize; 2]], elements: &[[usize; K]]) -> Result<Self, String> {
        let mut t = BendingTopology {
            kind,
            rule,
            nb_points,
            edges: edges.to_vec(),
            elements: elements.to_vec(),
            info: ElementData::new(ElementKind::Edge, vec![EdgeInfo::default(); edges.len()]),
        };
        let all: Vec<usize> = (0..elements.len()).collect();
        t.elements_added(&all)?;
        Ok(t)
    }

    /// Edge index of every element edge (edge `j` = `(e[j+1], e[j+2])`), and the elements
    /// around each edge in increasing order.
    #[allow(clippy::type_complexity)]
    fn adjacency(&self) -> Result<(Vec<[usize; K]>, Vec<Vec<usize>>), String> {
        let mut index = HashMap::with_capacity(self.edges.len());
        for (i, e) in self.edges.iter().enumerate() {
            index.entry(key(e[0], e[1])).or_insert(i);
        }
        let mut edges_in = Vec::with_capacity(self.elements.len());
        let mut around = vec![Vec::new(); self.edges.len()];
        for (t, el) in self.elements.iter().enumerate() {
            let mut local = [0usize; K];
            for (j, slot) in local.iter_mut().enumerate() {
                let (a, b) = (el[(j + 1) % K], el[(j + 2) % K]);
                *slot = *index
                    .get(&key(a, b))
                    .ok_or_else(|| format!("{} {t} has the edge ({a}, {b}) which is not in the topology's edge list", self.kind.name()))?;
            }
            for &e in &local {
                around[e].push(t);
            }
            edges_in.push(local);
        }
        Ok((edges_in, around))
    }

    fn springs_across(&self, edges_in: &[[usize; K]], e: usize, t1: usize, t2: usize) -> Vec<[usize; 2]> {
        let i1 = edges_in[t1].iter().position(|&x| x == e).expect("edge of its shell's element");
        let i2 = edges_in[t2].iter().position(|&x| x == e).expect("edge of its element");
        (self.rule)(&self.elements[t1], i1, &self.elements[t2], i2)
    }

    fn set_springs(info: &mut EdgeInfo, springs: Vec<[usize; 2]>) {
        info.rest = vec![None; springs.len()];
        info.springs = springs;
        info.active = true;
    }

    /// SOFA's `apply*Creation` for elements already in the copy.
    fn elements_added(&mut self, added: &[usize]) -> Result<(), String> {
        let (edges_in, around) = self.adjacency()?;
        for &t in added {
            for &e in &edges_in[t] {
                if self.info.values()[e].initialized {
                    continue;
                }
                let shell = &around[e];
                let springs = (shell.len() == 2).then(|| {
                    let other = if shell[0] == t { shell[1] } else { shell[0] };
                    self.springs_across(&edges_in, e, other, t)
                });
                let info = &mut self.info.values_mut()[e];
                info.initialized = true;
                match springs {
                    Some(s) => Self::set_springs(info, s),
                    None => info.active = false,
                }
            }
        }
        Ok(())
    }

    /// SOFA's `apply*Destruction`, on the copy before the elements leave it.
    fn elements_removed(&mut self, removed: &[usize]) -> Result<(), String> {
        let (edges_in, around) = self.adjacency()?;
        for &t in removed {
            for &e in &edges_in[t] {
                let shell = &around[e];
                let rebuilt = (self.info.values()[e].initialized && shell.len() == 3).then(|| {
                    // The two other elements, in the shell's cyclic order after the removed one.
                    let (t1, t2) = if shell[0] == t {
                        (shell[1], shell[2])
                    } else if shell[1] == t {
                        (shell[2], shell[0])
                    } else {
                        (shell[0], shell[1])
                    };
                    self.springs_across(&edges_in, e, t1, t2)
                });
                let info = &mut self.info.values_mut()[e];
                match rebuilt {
                    Some(s) => Self::set_springs(info, s),
                    None => {
                        info.active = false;
                        info.initialized = false;
                    }
                }
            }
        }
        Ok(())
    }

    /// Replays a container's change log; `rest` (3 reals per point) is the state's rest
    /// positions after the changes, for the rest lengths of new springs.
    pub fn apply(&mut self, changes: &[TopologyChange], rest: &[f64]) -> Result<(), String> {
        for c in changes {
            let err = |e: settee_core::topology_change::ChangeError| e.0;
            match (c.kind(), c) {
                (ElementKind::Point, TopologyChange::Added { count, .. }) => self.nb_points += count,
                (ElementKind::Point, TopologyChange::Removed { indices, .. }) => {
                    validate(c, self.nb_points).map_err(err)?;
                    let map = removal_map(self.nb_points, indices);
                    let rename = |p: &mut usize| *p = map.get(*p).copied().flatten().unwrap_or(usize::MAX);
                    self.edges.iter_mut().flatten().for_each(rename);
                    self.elements.iter_mut().flatten().for_each(rename);
                    for info in self.info.values_mut() {
                        info.springs.iter_mut().flatten().for_each(rename);
                        if info.springs.iter().flatten().any(|&p| p == usize::MAX) {
                            // A spring end that disappears (SOFA removes only isolated points,
                            // which no spring uses): the spring goes with it.
                            info.active = false;
                        }
                    }
                    self.nb_points -= indices.len();
                }
                (ElementKind::Point, TopologyChange::Renumbered { old_of_new, .. }) => {
                    validate(c, self.nb_points).map_err(err)?;
                    let mut new_of_old = vec![0; old_of_new.len()];
                    for (n, &o) in old_of_new.iter().enumerate() {
                        new_of_old[o] = n;
                    }
                    let rename = |p: &mut usize| *p = new_of_old[*p];
                    self.edges.iter_mut().flatten().for_each(rename);
                    self.elements.iter_mut().flatten().for_each(rename);
                    self.info.values_mut().iter_mut().flat_map(|i| i.springs.iter_mut().flatten()).for_each(rename);
                }
                (ElementKind::Edge, _) => {
                    validate(c, self.edges.len()).map_err(err)?;
                    apply_to_list(&mut self.edges, c, "edge")?;
                    self.info.apply(std::slice::from_ref(c), |_| EdgeInfo::default()).map_err(err)?;
                }
                (k, _) if k == self.kind => {
                    validate(c, self.elements.len()).map_err(err)?;
                    match c {
                        TopologyChange::Removed { indices, .. } => {
                            self.elements_removed(indices)?;
                            apply_to_list(&mut self.elements, c, self.kind.name())?;
                        }
                        TopologyChange::Added { count, .. } => {
                            let base = self.elements.len();
                            apply_to_list(&mut self.elements, c, self.kind.name())?;
                            self.elements_added(&(base..base + count).collect::<Vec<_>>())?;
                        }
                        TopologyChange::Renumbered { .. } => apply_to_list(&mut self.elements, c, self.kind.name())?,
                    }
                }
                _ => {}
            }
        }
        self.fill_rest_lengths(rest)
    }

    /// Computes the rest lengths still unknown.
    pub fn fill_rest_lengths(&mut self, rest: &[f64]) -> Result<(), String> {
        let n = rest.len() / 3;
        for info in self.info.values_mut().iter_mut().filter(|i| i.active) {
            for (s, r) in info.springs.iter().zip(info.rest.iter_mut()) {
                if r.is_none() {
                    if let Some(&p) = s.iter().find(|&&p| p >= n) {
                        return Err(format!("a bending spring uses point {p} but the mechanical state has {n} DOFs"));
                    }
                    *r = Some(norm3(sub3(&rest[3 * s[0]..3 * s[0] + 3], &rest[3 * s[1]..3 * s[1] + 3])));
                }
            }
        }
        Ok(())
    }

    /// The active springs in edge order: `(edge, ends, rest length)`.
    pub fn active(&self) -> Vec<(usize, [usize; 2], f64)> {
        let mut out = Vec::new();
        for (e, info) in self.info.values().iter().enumerate().filter(|(_, i)| i.active) {
            for (s, r) in info.springs.iter().zip(&info.rest) {
                out.push((e, *s, r.unwrap_or(0.0)));
            }
        }
        out
    }

    /// Checks the copy against the container's lists and the state's size after a change log.
    pub fn check_against(&self, nb_points: usize, edges: &[[usize; 2]], elements: &[[usize; K]]) -> Result<(), String> {
        if self.edges != edges || self.elements != elements {
            return Err(format!(
                "the change log does not lead to the container's lists ({} edges and {} {}s expected, {} and {} found)",
                self.edges.len(),
                self.elements.len(),
                self.kind.name(),
                edges.len(),
                elements.len()
            ));
        }
        if self.nb_points != nb_points {
            return Err(format!("the change log leaves {} points, the mechanical state has {nb_points}", self.nb_points));
        }
        Ok(())
    }
}

/// Applies one validated change to an element list, taking new elements' vertices from the
/// event.
fn apply_to_list<const N: usize>(list: &mut Vec<[usize; N]>, c: &TopologyChange, what: &str) -> Result<(), String> {
    match c {
        TopologyChange::Added { count, elements, .. } => {
            if elements.len() != *count {
                return Err(format!("{count} {what}s added without their vertices"));
            }
            for el in elements {
                let v: [usize; N] = el.as_slice().try_into().map_err(|_| format!("an added {what} has {} vertices", el.len()))?;
                list.push(v);
            }
        }
        TopologyChange::Removed { indices, .. } => {
            for &i in indices {
                list.swap_remove(i);
            }
        }
        TopologyChange::Renumbered { old_of_new, .. } => {
            let old = std::mem::take(list);
            *list = old_of_new.iter().map(|&o| old[o]).collect();
        }
    }
    Ok(())
}

/// Triangles: one spring from the other triangle's vertex opposite the edge to this one's.
/// A bending-spring force field whose springs live in a [`BendingTopology`] of its elements
/// (TriangularBendingSprings, QuadularBendingSprings): built at init from the mesh and the rest
/// positions, and following the topological changes (SOFA's edge-data handlers: elements
/// added/removed, points removed/renumbered, on the whole log; edges follow as edge-indexed data).
pub(crate) trait BendingSprings<const K: usize> {
    /// The kind of the elements.
    const KIND: ElementKind;
    /// Their name in messages.
    const WHAT: &'static str;
    /// Which springs two elements sharing an edge make.
    const RULE: SpringRule<K>;
    /// The elements of a mesh.
    fn elements(mesh: &MeshData) -> &[[usize; K]];
    /// The state the springs act on (after init) and where the tracker is kept.
    fn tracker(&mut self) -> (Option<StateId>, &mut Option<BendingTopology<K>>);
    /// Takes the springs of the tracker.
    fn set_springs(&mut self, t: &BendingTopology<K>);

    /// Builds the tracker (and the springs) from `mesh` and the rest positions of `s`.
    fn build_springs(&mut self, cx: &InitCtx, s: StateId, mesh: &MeshData) -> SimResult {
        let rest = cx.rest_or_position(s);
        topo::check_points(Self::elements(mesh), rest.len() / 3, Self::WHAT).map_err(|m| cx.error(m))?;
        let mut t = BendingTopology::new(Self::KIND, Self::RULE, rest.len() / 3, &mesh.edges, Self::elements(mesh)).map_err(|m| cx.error(m))?;
        t.fill_rest_lengths(&rest).map_err(|m| cx.error(m))?;
        self.set_springs(&t);
        *self.tracker().1 = Some(t);
        Ok(())
    }

    /// Follows the changes of the topology (`Component::topology_changed`).
    fn follow_changes(&mut self, cx: &mut InitCtx, changes: &[TopologyChange]) -> SimResult<Follow> {
        let (Some(s), Some(t)) = self.tracker() else { return Ok(Follow::NotConcerned) };
        let rest = cx.rest_or_position(s);
        let mesh = cx.require_mesh()?;
        t.apply(changes, &rest)
            .and_then(|_| {
                t.check_against(settee_core::topology_change::state_size_after(changes, rest.len() / 3), &mesh.edges, Self::elements(&mesh))
            })
            .map_err(|m| cx.error(m))?;
        let t = self.tracker().1.take().expect("tracker");
        self.set_springs(&t);
        *self.tracker().1 = Some(t);
        Ok(Follow::Followed)
    }
}

pub(crate) fn triangle_rule(t1: &[usize; 3], i1: usize, t2: &[usize; 3], i2: usize) -> Vec<[usize; 2]> {
    vec![[t1[i1], t2[i2]]]
}

/// Quads: two crossed springs, each joining the vertices next to one end of the edge.
pub(crate) fn quad_rule(t1: &[usize; 4], i1: usize, t2: &[usize; 4], i2: usize) -> Vec<[usize; 2]> {
    vec![[t1[i1], t2[(i2 + 3) % 4]], [t1[(i1 + 3) % 4], t2[i2]]]
}
