//! The input as a topological mapping of SOFA sees it at each event.
//!
//! SOFA delivers an input's events to its topological mappings in batches, at each
//! `propagateTopologicalChanges` of the operation: a removal event arrives before its elements
//! are removed, an addition after they are appended. Here the whole log arrives once the
//! operation is over, so the mappings that read the input while handling an event rebuild the
//! lists it had then: [`Mirror::before`] undoes the log from the input's current lists, and
//! [`Mirror::apply`] redoes it one event at a time (the payloads carry the removed elements).
//! Every topological mapping uses this one mirror.

use crate::modifier::DynTopo;
use crate::set_container::SetTopologyContainer;
use settee_core::topology_change::{ElementKind, TopologyChange};
use settee_core::{ComponentId, InitCtx, SimResult};

/// The point count and element lists of an input topology at some point of its log.
#[derive(Clone, Debug, Default)]
pub struct Mirror {
    pub nb_points: usize,
    pub edges: Vec<[usize; 2]>,
    pub triangles: Vec<[usize; 3]>,
    pub quads: Vec<[usize; 4]>,
    pub tetrahedra: Vec<[usize; 4]>,
    pub hexahedra: Vec<[usize; 8]>,
}

fn array<const K: usize>(v: &[usize], kind: ElementKind) -> Result<[usize; K], String> {
    v.try_into().map_err(|_| format!("a {} event carries {} vertices for an element ({K} expected)", kind.name(), v.len()))
}

/// Applies `f` to the list of `kind` (points have none).
macro_rules! on_list {
    ($m:expr, $kind:expr, |$list:ident, $k:ident| $body:expr) => {
        match $kind {
            ElementKind::Point => Ok(()),
            ElementKind::Edge => {
                let $list = &mut $m.edges;
                let $k = ElementKind::Edge;
                $body
            }
            ElementKind::Triangle => {
                let $list = &mut $m.triangles;
                let $k = ElementKind::Triangle;
                $body
            }
            ElementKind::Quad => {
                let $list = &mut $m.quads;
                let $k = ElementKind::Quad;
                $body
            }
            ElementKind::Tetrahedron => {
                let $list = &mut $m.tetrahedra;
                let $k = ElementKind::Tetrahedron;
                $body
            }
            ElementKind::Hexahedron => {
                let $list = &mut $m.hexahedra;
                let $k = ElementKind::Hexahedron;
                $body
            }
        }
    };
}

impl Mirror {
    /// The lists of the mapping's input container `input` before `changes` (an error when the
    /// input is not a dynamic container, or the log does not undo).
    pub fn of_input(cx: &InitCtx, input: ComponentId, changes: &[TopologyChange]) -> SimResult<Mirror> {
        let Some(from) = cx.scene.get::<SetTopologyContainer>(input) else {
            return Err(cx.error(format!("the input {} is not a dynamic topology container", cx.scene.entry(input).label())));
        };
        Mirror::before(from.topo(), changes).map_err(|e| cx.error(format!("cannot follow the input's changes: {e}")))
    }

    /// The lists of `t` as they are.
    pub fn of(t: &DynTopo) -> Mirror {
        let m = &t.mesh;
        Mirror {
            nb_points: t.nb_points,
            edges: m.edges.clone(),
            triangles: m.triangles.clone(),
            quads: m.quads.clone(),
            tetrahedra: m.tetrahedra.clone(),
            hexahedra: m.hexahedra.clone(),
        }
    }

    /// The lists before `changes`, from the lists after them.
    pub fn before(t: &DynTopo, changes: &[TopologyChange]) -> Result<Mirror, String> {
        let mut m = Mirror::of(t);
        for c in changes.iter().rev() {
            m.undo(c)?;
        }
        Ok(m)
    }

    /// Renames point `from` into `to` in every list.
    pub fn rename(&mut self, from: usize, to: usize) {
        if from == to {
            return;
        }
        let f = |v: &mut usize| {
            if *v == from {
                *v = to;
            }
        };
        self.edges.iter_mut().flatten().for_each(f);
        self.triangles.iter_mut().flatten().for_each(f);
        self.quads.iter_mut().flatten().for_each(f);
        self.tetrahedra.iter_mut().flatten().for_each(f);
        self.hexahedra.iter_mut().flatten().for_each(f);
    }

    fn undo(&mut self, c: &TopologyChange) -> Result<(), String> {
        match c {
            TopologyChange::Added { kind: ElementKind::Point, count, .. } => {
                self.nb_points = self.nb_points.saturating_sub(*count);
                Ok(())
            }
            TopologyChange::Added { kind, count, .. } => on_list!(self, *kind, |list, _k| {
                list.truncate(list.len().saturating_sub(*count));
                Ok(())
            }),
            TopologyChange::Removed { kind: ElementKind::Point, indices, .. } => {
                // The removal renamed the last point into the removed one.
                for &p in indices.iter().rev() {
                    self.nb_points += 1;
                    self.rename(p, self.nb_points - 1);
                }
                Ok(())
            }
            TopologyChange::Removed { kind, indices, elements } => {
                if elements.len() != indices.len() {
                    return Err(format!("a {} removal without the removed elements' vertices", kind.name()));
                }
                on_list!(self, *kind, |list, k| {
                    for (&i, e) in indices.iter().zip(elements).rev() {
                        unremove(list, i, array(e, k)?)?;
                    }
                    Ok(())
                })
            }
            TopologyChange::Renumbered { kind, .. } => Err(format!("{} renumberings are not followed by topological mappings", kind.name())),
        }
    }

    /// Applies one event of the log.
    pub fn apply(&mut self, c: &TopologyChange) -> Result<(), String> {
        match c {
            TopologyChange::Added { kind: ElementKind::Point, count, .. } => {
                self.nb_points += count;
                Ok(())
            }
            TopologyChange::Added { kind, elements, .. } => on_list!(self, *kind, |list, k| {
                for e in elements {
                    list.push(array(e, k)?);
                }
                Ok(())
            }),
            TopologyChange::Removed { kind: ElementKind::Point, indices, .. } => {
                for &p in indices {
                    let last = self.nb_points.checked_sub(1).ok_or("a point removal from an empty set")?;
                    self.rename(last, p);
                    self.nb_points = last;
                }
                Ok(())
            }
            TopologyChange::Removed { kind, indices, .. } => on_list!(self, *kind, |list, _k| remove_all(list, indices)),
            TopologyChange::Renumbered { kind, .. } => Err(format!("{} renumberings are not followed by topological mappings", kind.name())),
        }
    }
}

/// Puts back element `e` removed at `i` by swap-with-last.
fn unremove<T: Copy>(list: &mut Vec<T>, i: usize, e: T) -> Result<(), String> {
    if i > list.len() {
        return Err(format!("a removal names element {i} of {}", list.len() + 1));
    }
    if i == list.len() {
        list.push(e);
    } else {
        let moved = list[i];
        list.push(moved);
        list[i] = e;
    }
    Ok(())
}

fn remove_all<T>(list: &mut Vec<T>, indices: &[usize]) -> Result<(), String> {
    for &i in indices {
        if i >= list.len() {
            return Err(format!("a removal names element {i} of {}", list.len()));
        }
        list.swap_remove(i);
    }
    Ok(())
}

/// Key of a face whatever its orientation and first vertex.
pub(crate) fn face_key(q: [usize; 4]) -> [usize; 4] {
    let mut k = q;
    k.sort_unstable();
    k
}
