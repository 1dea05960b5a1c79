//! `Quad2TriangleTopologicalMapping::updateTopologicalMappingTopDown`: every input quad is shown
//! by two output triangles (`in2out[q]`, empty for none; `loc2glob[t]` = the quad triangle `t`
//! comes from).
//!
//! * quads added: each is split into `(q0, q1, q2)` and `(q0, q2, q3)` (SOFA's split for added
//!   quads, the same triangles as the init split up to rotation), appended to the output;
//! * quads removed: the two triangles of each are removed from the output (isolated edges too,
//!   not the points), the maps following SOFA's bookkeeping of the swaps-with-last;
//! * points removed or added: the same points go from, or are added to, the output.

use super::replay::Mirror;
use super::{Following, IndexMaps};
use crate::modifier::{modify, point, triangle};
use crate::set_container::SetTopologyContainer;
use settee_core::topology_change::{ElementKind, Follow, TopologyChange};
use settee_core::{InitCtx, SimResult};

/// The maps at init: quad `i` shows as triangles `2i` and `2i + 1`.
pub(crate) fn initial_maps(nb_quads: usize) -> IndexMaps {
    IndexMaps {
        loc2glob: (0..2 * nb_quads).map(|t| t / 2).collect(),
        glob2loc: Default::default(),
        in2out: (0..nb_quads).map(|i| vec![2 * i, 2 * i + 1]).collect(),
    }
}

fn set(in2out: &mut Vec<Vec<usize>>, k: usize, v: Vec<usize>) {
    if in2out.len() <= k {
        in2out.resize(k + 1, Vec::new());
    }
    in2out[k] = v;
}

fn get(in2out: &[Vec<usize>], k: usize) -> Option<&Vec<usize>> {
    in2out.get(k).filter(|v| !v.is_empty())
}

/// Follows the input's changes (`maps` is None until the first change: build it then from the
/// input as it was before the change, which is the input at init).
pub fn follow(cx: &mut InitCtx, following: Following) -> SimResult<Follow> {
    let Following { maps, input, output, changes } = following;
    let mut m = Mirror::of_input(cx, input, changes)?;
    let maps = maps.get_or_insert_with(|| initial_maps(m.quads.len()));

    for c in changes {
        match c {
            TopologyChange::Added { kind: ElementKind::Quad, elements, .. } => {
                let base = m.quads.len();
                let mut triangles = Vec::with_capacity(2 * elements.len());
                for (j, q) in elements.iter().enumerate() {
                    let &[p0, p1, p2, p3] = q.as_slice() else {
                        return Err(cx.error(format!("an added quad has {} vertices", q.len())));
                    };
                    triangles.push([p0, p1, p2]);
                    triangles.push([p0, p2, p3]);
                    maps.loc2glob.push(base + j);
                    maps.loc2glob.push(base + j);
                    let n = maps.loc2glob.len();
                    set(&mut maps.in2out, base + j, vec![n - 2, n - 1]);
                }
                modify(cx.scene, output, |t| triangle::add_triangles(t, &triangles, Vec::new(), Vec::new()))?;
            }
            TopologyChange::Removed { kind: ElementKind::Quad, indices, .. } => {
                let mut last = m.quads.len().wrapping_sub(1);
                let mut ind_last = cx.scene.get::<SetTopologyContainer>(output).map_or(0, |c| c.topo().mesh.triangles.len());
                for &k in indices {
                    if let Some(ind_k) = get(&maps.in2out, k).cloned() {
                        if ind_k.len() < 2 {
                            return Err(cx.error(format!("input quad {k} is shown by {} triangles", ind_k.len())));
                        }
                        let (t1, t2) = (ind_k[0], ind_k[1]);
                        ind_last = ind_last.saturating_sub(1);
                        unmap(maps, k, &ind_k, last, &mut ind_last);
                        modify(cx.scene, output, |t| triangle::remove_triangles(t, vec![t1, t2], true, false))?;
                    }
                    last = last.wrapping_sub(1);
                }
            }
            TopologyChange::Removed { kind: ElementKind::Point, indices, .. } => {
                modify(cx.scene, output, |t| point::remove_points(t, indices.clone()))?;
            }
            TopologyChange::Added { kind: ElementKind::Point, count, ancestors, coefs, .. } => {
                let (count, ancestors, coefs) = (*count, ancestors.clone(), coefs.clone());
                modify(cx.scene, output, |t| point::add_points(t, count, ancestors, coefs))?;
            }
            _ => {}
        }
        m.apply(c).map_err(|e| cx.error(format!("cannot follow the input's changes: {e}")))?;
    }
    Ok(Follow::Followed)
}

/// SOFA's map bookkeeping when input quad `k` (triangles `ind_k`) is removed while `last` is
/// the input's last quad; `ind_last` is the output's last triangle, lowered once more here for
/// the second triangle.
fn unmap(maps: &mut IndexMaps, k: usize, ind_k: &[usize], last: usize, ind_last: &mut usize) {
    let l2g = &mut maps.loc2glob;
    let i2o = &mut maps.in2out;
    // The input's last quad moves into k's slot.
    if let Some(ind_real_last) = get(i2o, last).cloned() {
        if k != last {
            set(i2o, k, ind_real_last.clone());
            set(i2o, last, ind_k.to_vec());
            l2g.swap(ind_real_last[0], ind_k[0]);
            l2g.swap(ind_real_last[1], ind_k[1]);
        }
    }
    // The output's last triangles move into the removed ones' slots.
    if ind_k[1] != *ind_last {
        let moved = l2g[*ind_last];
        set(i2o, moved, ind_k.to_vec());
        let other = l2g[ind_k[1]];
        set(i2o, other, vec![*ind_last, ind_last.saturating_sub(1)]);
        l2g.swap(ind_k[1], *ind_last);
    }
    *ind_last = ind_last.saturating_sub(1);
    if ind_k[0] != *ind_last {
        l2g.swap(ind_k[0], *ind_last);
    }
    if let Some(&gone) = l2g.last() {
        if let Some(v) = i2o.get_mut(gone) {
            v.clear();
        }
    }
    let keep = l2g.len().saturating_sub(2);
    l2g.truncate(keep);
}
