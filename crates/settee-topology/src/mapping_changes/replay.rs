//! The input as a topological mapping of SOFA sees it at each event.
//!
//! SOFA delivers an input's events to its topological mappings in batches, at each
//! `propagateTopologicalChanges` of the operation: a removal event arrives before its elements
//! are removed, an addition after they are appended. Here the whole log arrives once the
//! operation is over, so the mappings that read the input while handling an event rebuild the
//! lists it had then: [`Mirror::before`] undoes the log from the input's current lists, and
//! [`Mirror::apply`] redoes it one event at a time (the payloads carry the removed elements).

use crate::modifier::DynTopo;
use settee_core::topology_change::{ElementKind, TopologyChange};

/// The point count, quads and hexahedra of an input topology at some point of its log.
#[derive(Clone, Debug, Default)]
pub struct Mirror {
    pub nb_points: usize,
    pub quads: Vec<[usize; 4]>,
    pub hexahedra: Vec<[usize; 8]>,
}

fn array<const K: usize>(v: &[usize], kind: ElementKind) -> Result<[usize; K], String> {
    v.try_into().map_err(|_| format!("a {} event carries {} vertices for an element ({K} expected)", kind.name(), v.len()))
}

impl Mirror {
    /// The lists before `changes`, from the lists after them.
    pub fn before(t: &DynTopo, changes: &[TopologyChange]) -> Result<Mirror, String> {
        let mut m = Mirror { nb_points: t.nb_points, quads: t.mesh.quads.clone(), hexahedra: t.mesh.hexahedra.clone() };
        for c in changes.iter().rev() {
            m.undo(c)?;
        }
        Ok(m)
    }

    fn rename(&mut self, from: usize, to: usize) {
        let f = |v: &mut usize| {
            if *v == from {
                *v = to;
            }
        };
        self.quads.iter_mut().flatten().for_each(f);
        self.hexahedra.iter_mut().flatten().for_each(f);
    }

    fn undo(&mut self, c: &TopologyChange) -> Result<(), String> {
        match c {
            TopologyChange::Added { kind, count, .. } => match kind {
                ElementKind::Point => self.nb_points = self.nb_points.saturating_sub(*count),
                ElementKind::Quad => self.quads.truncate(self.quads.len().saturating_sub(*count)),
                ElementKind::Hexahedron => self.hexahedra.truncate(self.hexahedra.len().saturating_sub(*count)),
                _ => {}
            },
            TopologyChange::Removed { kind, indices, elements } => match kind {
                ElementKind::Point => {
                    // The removal renamed the last point into the removed one.
                    for &p in indices.iter().rev() {
                        self.nb_points += 1;
                        let last = self.nb_points - 1;
                        if p != last {
                            self.rename(p, last);
                        }
                    }
                }
                ElementKind::Quad => {
                    for (&i, e) in indices.iter().zip(elements).rev() {
                        unremove(&mut self.quads, i, array(e, *kind)?)?;
                    }
                }
                ElementKind::Hexahedron => {
                    for (&i, e) in indices.iter().zip(elements).rev() {
                        unremove(&mut self.hexahedra, i, array(e, *kind)?)?;
                    }
                }
                _ => {}
            },
            TopologyChange::Renumbered { kind, .. } => {
                if matches!(kind, ElementKind::Point | ElementKind::Quad | ElementKind::Hexahedron) {
                    return Err(format!("{} renumberings are not followed", kind.name()));
                }
            }
        }
        Ok(())
    }

    /// Applies one event of the log.
    pub fn apply(&mut self, c: &TopologyChange) -> Result<(), String> {
        match c {
            TopologyChange::Added { kind, count, elements, .. } => match kind {
                ElementKind::Point => self.nb_points += count,
                ElementKind::Quad => {
                    for e in elements {
                        self.quads.push(array(e, *kind)?);
                    }
                }
                ElementKind::Hexahedron => {
                    for e in elements {
                        self.hexahedra.push(array(e, *kind)?);
                    }
                }
                _ => {}
            },
            TopologyChange::Removed { kind, indices, .. } => match kind {
                ElementKind::Point => {
                    for &p in indices {
                        let last = self.nb_points.checked_sub(1).ok_or("a point removal from an empty set")?;
                        self.rename(last, p);
                        self.nb_points = last;
                    }
                }
                ElementKind::Quad => remove_all(&mut self.quads, indices)?,
                ElementKind::Hexahedron => remove_all(&mut self.hexahedra, indices)?,
                _ => {}
            },
            TopologyChange::Renumbered { .. } => {}
        }
        Ok(())
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
