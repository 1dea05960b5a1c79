//! `Triangle2EdgeTopologicalMapping::updateTopologicalMappingTopDown`: the output edge container
//! holds the border edges of the input triangulation (edges with exactly one triangle); the
//! mapping keeps `loc2glob` (output edge → input edge) and `glob2loc` (input edge → output edge)
//! and turns the input's events into operations of the output's modifier:
//!
//! * triangles removed: each side shared with a triangle that stays (not removed earlier in the
//!   same list) becomes a border edge and is added, its vertices in increasing order;
//! * edges removed: the mapped ones are removed from the output one by one, with SOFA's
//!   bookkeeping of the two maps (the input's last edge takes the removed one's number);
//! * triangles added: their sides that are borders and not mapped yet are added (in the
//!   input's orientation); mapped sides that are no longer borders are removed (with the
//!   points this isolates, SOFA's `removeEdges` default);
//! * points removed / added: the same on the output.
//!
//! SOFA's mapping reads the input container while each event is delivered: before a removal is
//! applied, after an addition. Here the whole log arrives after the operation, so the input as
//! it was before the operation is rebuilt by undoing the log on a copy of its lists, and the
//! events are replayed on that copy, which gives the mapping the state SOFA's would have seen.

use super::replay::Mirror;
use super::{Following, IndexMaps};
use crate::modifier::{edge, point, triangle, DynTopo};
use crate::set_container::SetTopologyContainer;
use settee_core::topology_change::{ElementKind, Follow, TopologyChange};
use settee_core::{ComponentId, InitCtx, MeshData, SimResult};

/// Follows the input's changes (`maps` is None until the first change: build it then from the
/// input and output as they were at init).
pub fn follow(cx: &mut InitCtx, following: Following) -> SimResult<Follow> {
    let Following { maps, input, output, changes } = following;
    let Some(current) = cx.scene.get::<SetTopologyContainer>(input).map(|c| c.topo().clone()) else {
        return Err(cx.error("the input of Triangle2EdgeTopologicalMapping is not a dynamic triangle container: it cannot change"));
    };
    let mut mirror = before_changes(&current, changes).map_err(|e| cx.error(format!("cannot follow the input's changes: {e}")))?;
    triangle::init_shells(&mut mirror);
    let maps = maps.get_or_insert_with(|| initial_maps(&mut mirror));

    for change in changes {
        match change {
            TopologyChange::Removed { kind: ElementKind::Triangle, indices, .. } => {
                let created = border_edges_of_removed(&mut mirror, indices, maps);
                crate::modifier::modify(cx.scene, output, |t| edge::add_edges(t, &created))?;
                triangle::remove_triangles_process(&mut mirror, indices, false, false);
            }
            TopologyChange::Removed { kind: ElementKind::Edge, indices, .. } => {
                let out_edges = output_edge_count(cx, output);
                for local in mapped_edges_removed(&mirror, indices, maps, out_edges) {
                    crate::modifier::modify(cx.scene, output, |t| edge::remove_edges(t, vec![local], false))?;
                }
                edge::remove_edges_process(&mut mirror, indices, false);
            }
            TopologyChange::Removed { kind: ElementKind::Point, indices, .. } => {
                crate::modifier::modify(cx.scene, output, |t| point::remove_points(t, indices.clone()))?;
                point::remove_points_process(&mut mirror, indices);
            }
            TopologyChange::Added { kind: ElementKind::Point, count, ancestors, coefs, .. } => {
                point::add_points_process(&mut mirror, *count, ancestors, coefs);
                crate::modifier::modify(cx.scene, output, |t| point::add_points(t, *count, ancestors.clone(), coefs.clone()))?;
            }
            TopologyChange::Added { kind: ElementKind::Edge, elements, .. } => {
                let edges = pairs(elements);
                edge::add_edges_process(&mut mirror, &edges);
            }
            TopologyChange::Added { kind: ElementKind::Triangle, count, elements, .. } => {
                let triangles = triples(elements);
                triangle::add_triangles_process(&mut mirror, &triangles);
                mirror.log.clear();
                let first = mirror.mesh.triangles.len() - count.min(&mirror.mesh.triangles.len());
                let (created, removed) = border_changes_of_added(&mut mirror, first, maps);
                crate::modifier::modify(cx.scene, output, |t| edge::add_edges(t, &created))?;
                crate::modifier::modify(cx.scene, output, |t| edge::remove_edges(t, removed, true))?;
            }
            TopologyChange::Renumbered { kind: ElementKind::Point, .. } => {
                return Err(cx.error("Triangle2EdgeTopologicalMapping cannot follow a renumbering of the input's points"));
            }
            // Other events concern no edge of the border.
            _ => {}
        }
    }
    Ok(Follow::Followed)
}

fn output_edge_count(cx: &InitCtx, output: ComponentId) -> usize {
    cx.scene.get::<SetTopologyContainer>(output).map_or(0, |c| c.topo().mesh.edges.len())
}

fn pairs(elements: &[Vec<usize>]) -> Vec<[usize; 2]> {
    elements.iter().filter(|e| e.len() == 2).map(|e| [e[0], e[1]]).collect()
}

fn triples(elements: &[Vec<usize>]) -> Vec<[usize; 3]> {
    elements.iter().filter(|e| e.len() == 3).map(|e| [e[0], e[1], e[2]]).collect()
}

/// The input's points, edges and triangles as they were before `changes` (the shared
/// [`Mirror`]), as a topology the modifiers' processes can replay the log on.
fn before_changes(current: &DynTopo, changes: &[TopologyChange]) -> Result<DynTopo, String> {
    let m = Mirror::before(current, changes)?;
    let used = m.edges.iter().flatten().chain(m.triangles.iter().flatten()).max().map_or(0, |v| v + 1);
    Ok(DynTopo::new(ElementKind::Triangle, m.nb_points.max(used), MeshData { edges: m.edges, triangles: m.triangles, ..MeshData::default() }))
}

/// The maps SOFA's `init` builds: the border edges of the input, in edge order.
fn initial_maps(m: &mut DynTopo) -> IndexMaps {
    ensure_edge_shells(m);
    let mut maps = IndexMaps::default();
    if let Some(tae) = &m.triangles_around_edge {
        for (e, shell) in tae.iter().enumerate() {
            if shell.len() == 1 {
                maps.glob2loc.insert(e, maps.loc2glob.len());
                maps.loc2glob.push(e);
            }
        }
    }
    maps
}

fn ensure_edge_shells(m: &mut DynTopo) {
    if m.edges_in_triangle.is_none() {
        triangle::create_edges_in_triangle(m);
    }
    if m.triangles_around_edge.is_none() {
        triangle::create_triangles_around_edge(m);
    }
}

/// SOFA's TRIANGLESREMOVED case, on the input before the removal: the sides of each removed
/// triangle shared with one other triangle not removed earlier in the list become borders.
fn border_edges_of_removed(m: &mut DynTopo, removed: &[usize], maps: &mut IndexMaps) -> Vec<[usize; 2]> {
    ensure_edge_shells(m);
    let mut created = Vec::new();
    let (Some(eit), Some(tae)) = (&m.edges_in_triangle, &m.triangles_around_edge) else { return created };
    for (k, &tri) in removed.iter().enumerate() {
        let Some(sides) = eit.get(tri) else { continue };
        for &e in sides {
            let Some(around) = tae.get(e) else { continue };
            if around.len() != 2 {
                continue;
            }
            let neighbour = if around[0] == tri { around[1] } else { around[0] };
            if removed[..k].contains(&neighbour) {
                continue;
            }
            let [a, b] = m.mesh.edges[e];
            created.push([a.min(b), a.max(b)]);
            maps.loc2glob.push(e);
            maps.glob2loc.insert(e, maps.loc2glob.len() - 1);
        }
    }
    created
}

/// SOFA's EDGESREMOVED case, on the input before the removal: the output edges to remove, one
/// after the other, with SOFA's updates of the maps (the input's last edge takes each removed
/// edge's number; the output's last edge takes the removed output edge's slot).
fn mapped_edges_removed(m: &DynTopo, removed: &[usize], maps: &mut IndexMaps, out_edges: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut last = m.mesh.edges.len().wrapping_sub(1);
    let mut ind_last = out_edges;
    for &k in removed {
        if let Some(&ind_k) = maps.glob2loc.get(&k) {
            ind_last = ind_last.saturating_sub(1);
            if let Some(&ind_real_last) = maps.glob2loc.get(&last) {
                if k != last {
                    maps.glob2loc.insert(k, ind_real_last);
                    maps.glob2loc.insert(last, ind_k);
                    maps.loc2glob.swap(ind_real_last, ind_k);
                }
            }
            if ind_k != ind_last && ind_last < maps.loc2glob.len() && ind_k < maps.loc2glob.len() {
                let (g_last, g_k) = (maps.loc2glob[ind_last], maps.loc2glob[ind_k]);
                maps.glob2loc.insert(g_last, ind_k);
                maps.glob2loc.insert(g_k, ind_last);
                maps.loc2glob.swap(ind_k, ind_last);
            }
            if let Some(g) = maps.loc2glob.pop() {
                maps.glob2loc.remove(&g);
            }
            out.push(ind_k);
        }
        last = last.wrapping_sub(1);
    }
    out
}

/// SOFA's TRIANGLESADDED case, on the input after the addition (new triangles from `first`):
/// the border sides not mapped yet are created; mapped sides that are no longer borders are
/// removed (their local numbers, with SOFA's swap-with-last updates of the maps in decreasing
/// order of input edge).
fn border_changes_of_added(m: &mut DynTopo, first: usize, maps: &mut IndexMaps) -> (Vec<[usize; 2]>, Vec<usize>) {
    ensure_edge_shells(m);
    let mut created = Vec::new();
    let mut no_longer = Vec::new();
    if let (Some(eit), Some(tae)) = (&m.edges_in_triangle, &m.triangles_around_edge) {
        for sides in eit.iter().skip(first) {
            for &e in sides {
                let around = tae.get(e).map_or(0, Vec::len);
                if maps.glob2loc.contains_key(&e) {
                    if around != 1 {
                        no_longer.push(e);
                    }
                } else if around <= 1 {
                    created.push(m.mesh.edges[e]);
                    maps.loc2glob.push(e);
                    maps.glob2loc.insert(e, maps.loc2glob.len() - 1);
                }
            }
        }
    }
    no_longer.sort_unstable_by(|a, b| b.cmp(a));
    let mut local = Vec::new();
    for e in no_longer {
        let Some(&loc) = maps.glob2loc.get(&e) else { continue };
        let Some(last_glob) = maps.loc2glob.pop() else { continue };
        if loc < maps.loc2glob.len() {
            maps.loc2glob[loc] = last_glob;
        }
        maps.glob2loc.remove(&e);
        maps.glob2loc.insert(last_glob, loc);
        local.push(loc);
    }
    (created, local)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Two squares side by side, two triangles each (6 points).
    fn strip() -> DynTopo {
        let triangles = vec![[0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4]];
        let edges = crate::mesh::edges_from_surface(&triangles, &[]);
        DynTopo::new(ElementKind::Triangle, 6, MeshData { edges, triangles, ..MeshData::default() })
    }

    #[test]
    fn removed_triangles_expose_their_shared_sides_as_borders() {
        let mut m = strip();
        triangle::init_shells(&mut m);
        let mut maps = initial_maps(&mut m);
        // Border: every edge but the diagonals (0,4), (1,5) and the middle edge (1,4).
        let border: Vec<[usize; 2]> = maps.loc2glob.iter().map(|&e| m.mesh.edges[e]).collect();
        assert_eq!(border.len(), 6);
        assert!(!border.contains(&[4, 1]) && !border.contains(&[1, 4]));
        // Triangle 3 ([1,5,4]) has sides (5,4) (a border already), (4,1) (shared with triangle
        // 0) and (1,5) (shared with triangle 2): removing it exposes the last two, in side
        // order, vertices increasing.
        let created = border_edges_of_removed(&mut m, &[3], &mut maps);
        assert_eq!(created, vec![[1, 4], [1, 5]]);
        assert_eq!(maps.loc2glob.len(), 8);
        assert_eq!(maps.glob2loc[&maps.loc2glob[7]], 7);
    }

    proptest! {
        /// Undoing the log of any sequence of operations gives back the lists as they were.
        #[test]
        fn undoing_the_log_restores_the_lists(ops in prop::collection::vec((0u8..3, 0usize..100, 0usize..100), 1..12)) {
            let mut t = strip();
            let before = t.clone();
            for (op, a, b) in ops {
                match op {
                    0 if !t.mesh.triangles.is_empty() => {
                        let n = t.mesh.triangles.len();
                        triangle::remove_triangles(&mut t, vec![a % n, b % n], true, true);
                    }
                    1 if t.nb_points >= 3 => {
                        let n = t.nb_points;
                        let (x, y) = (a % n, (a % n + 1 + b % (n - 1)) % n);
                        let z = (0..n).find(|&z| z != x && z != y).unwrap();
                        triangle::add_triangles(&mut t, &[[x, y, z]], vec![], vec![]);
                    }
                    _ => point::add_points(&mut t, 1 + a % 2, vec![], vec![]),
                }
            }
            let log = t.log.clone();
            let undone = before_changes(&t, &log).unwrap();
            prop_assert_eq!(&undone.mesh.triangles, &before.mesh.triangles);
            prop_assert_eq!(&undone.mesh.edges, &before.mesh.edges);
            prop_assert_eq!(undone.nb_points, before.nb_points);
        }
    }
}
