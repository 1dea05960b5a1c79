//! `Hexa2QuadTopologicalMapping::updateTopologicalMappingTopDown`: the output holds the border
//! quads of the input (`loc2glob[j]` = the input quad output quad `j` shows, `glob2loc` its
//! inverse).
//!
//! * hexahedra removed: every face the removed hexahedron shared with a hexahedron that stays
//!   (one not earlier in the removal list) becomes a border quad and is appended to the output,
//!   with the vertices of that neighbour's face (reversed with `flipNormals`);
//! * quads removed (the faces left without hexahedra): each one shown by the output is removed
//!   from it (isolated edges too, not the points), the maps following both swaps-with-last as
//!   SOFA's bookkeeping does;
//! * points removed: the same points go from the output.
//!
//! Other events (additions among them) do not change the output, as in SOFA.

use super::replay::{face_key, Mirror};
use super::{Following, IndexMaps};
use crate::mesh::QUADS_IN_HEXAHEDRON;
use crate::modifier::{modify, point, quad};
use crate::set_container::SetTopologyContainer;
use crate::topological_mapping::TopologicalMapping;
use settee_core::topology_change::{ElementKind, Follow, TopologyChange};
use settee_core::{ComponentId, InitCtx, SimResult};
use std::collections::HashMap;

/// Faces of the hexahedra and hexahedra around the quads of `m` (SOFA's `quadsInHexahedron`
/// and `hexahedraAroundQuad` as built from the lists).
fn adjacency(m: &Mirror) -> (Vec<[Option<usize>; 6]>, Vec<Vec<usize>>) {
    let index: HashMap<[usize; 4], usize> = m.quads.iter().enumerate().map(|(i, &q)| (face_key(q), i)).collect();
    let mut around = vec![Vec::new(); m.quads.len()];
    let faces = m
        .hexahedra
        .iter()
        .enumerate()
        .map(|(hi, h)| {
            let mut row = [None; 6];
            for (j, f) in QUADS_IN_HEXAHEDRON.iter().enumerate() {
                row[j] = index.get(&face_key(f.map(|k| h[k]))).copied();
                if let Some(q) = row[j] {
                    around[q].push(hi);
                }
            }
            row
        })
        .collect();
    (faces, around)
}

/// The maps at init: the input quads with exactly one hexahedron around, in order.
pub(crate) fn initial_maps(m: &Mirror) -> IndexMaps {
    let (_, around) = adjacency(m);
    let loc2glob: Vec<usize> = (0..m.quads.len()).filter(|&q| around[q].len() == 1).collect();
    let glob2loc = loc2glob.iter().enumerate().map(|(l, &g)| (g, l)).collect();
    IndexMaps { loc2glob, glob2loc, in2out: Vec::new() }
}

fn quad_count(cx: &InitCtx, id: ComponentId) -> usize {
    cx.scene.get::<SetTopologyContainer>(id).map_or(0, |c| c.topo().mesh.quads.len())
}

/// Follows the input's changes (`maps` is None until the first change: build it then from the
/// input as it was before the change, which is the input at init).
pub fn follow(cx: &mut InitCtx, following: Following) -> SimResult<Follow> {
    let Following { maps, input, output, changes } = following;
    let mut m = Mirror::of_input(cx, input, changes)?;
    let maps = maps.get_or_insert_with(|| initial_maps(&m));
    let flip = cx.data().get(TopologicalMapping::FLIP_NORMALS);

    for c in changes {
        match c {
            TopologyChange::Removed { kind: ElementKind::Hexahedron, indices, .. } => {
                let quads = newly_visible(&m, indices, flip, maps);
                modify(cx.scene, output, |t| quad::add_quads(t, &quads))?;
            }
            TopologyChange::Removed { kind: ElementKind::Quad, indices, .. } => {
                let mut last = m.quads.len().wrapping_sub(1);
                let mut ind_last = quad_count(cx, output);
                for &k in indices {
                    if let Some(&ind_k) = maps.glob2loc.get(&k) {
                        ind_last = ind_last.saturating_sub(1);
                        unmap(maps, k, ind_k, last, ind_last);
                        modify(cx.scene, output, |t| quad::remove_quads(t, vec![ind_k], true, false))?;
                    } else {
                        cx.warn(format!("input quad {k} is removed but the output does not show it"));
                    }
                    last = last.wrapping_sub(1);
                }
            }
            TopologyChange::Removed { kind: ElementKind::Point, indices, .. } => {
                modify(cx.scene, output, |t| point::remove_points(t, indices.clone()))?;
            }
            _ => {}
        }
        m.apply(c).map_err(|e| cx.error(format!("cannot follow the input's changes: {e}")))?;
    }
    Ok(Follow::Followed)
}

/// The faces that the removal of hexahedra `removed` (decreasing, as SOFA sorts them) uncovers,
/// read on the input before the removal; they are recorded in the maps as appended to the
/// output.
fn newly_visible(m: &Mirror, removed: &[usize], flip: bool, maps: &mut IndexMaps) -> Vec<[usize; 4]> {
    let (faces, around) = adjacency(m);
    let mut out = Vec::new();
    for (i, &h) in removed.iter().enumerate() {
        let Some(row) = faces.get(h) else { continue };
        for &k in row.iter().flatten() {
            let shell = &around[k];
            if shell.len() < 2 {
                continue; // a border quad: it goes with the quads removed
            }
            let other = if shell[0] == h { shell[1] } else { shell[0] };
            if removed[..i].contains(&other) {
                continue;
            }
            let Some(j) = faces[other].iter().position(|&f| f == Some(k)) else { continue };
            let he = m.hexahedra[other];
            let q = QUADS_IN_HEXAHEDRON[j].map(|v| he[v]);
            out.push(if flip { [q[3], q[2], q[1], q[0]] } else { q });
            maps.loc2glob.push(k);
            maps.glob2loc.insert(k, maps.loc2glob.len() - 1);
        }
    }
    out
}

/// SOFA's map bookkeeping when input quad `k` (output quad `ind_k`) is removed while `last` is
/// the input's last quad and `ind_last` the output's last quad after the removal.
fn unmap(maps: &mut IndexMaps, k: usize, ind_k: usize, last: usize, ind_last: usize) {
    let l2g = &mut maps.loc2glob;
    let g2l = &mut maps.glob2loc;
    // The input's last quad moves into k's slot.
    if let Some(&ind_real_last) = g2l.get(&last) {
        if k != last {
            g2l.insert(k, ind_real_last);
            g2l.insert(last, ind_k);
            l2g.swap(ind_real_last, ind_k);
        }
    }
    // The output's last quad moves into ind_k's slot.
    if ind_k != ind_last {
        let (a, b) = (l2g[ind_last], l2g[ind_k]);
        g2l.insert(a, ind_k);
        g2l.insert(b, ind_last);
        l2g.swap(ind_k, ind_last);
    }
    if let Some(gone) = l2g.pop() {
        g2l.remove(&gone);
    }
}

#[cfg(test)]
mod tests {
    use crate::mesh::QUADS_IN_HEXAHEDRON;
    use crate::modifier::{hexahedron, modify, quad};
    use crate::set_container::SetTopologyContainer;
    use crate::test_util::{add, factory_and_scene, hexa_quad_triangle_chain, init_scene};
    use proptest::prelude::*;
    use settee_core::{ComponentId, Scene};
    use std::collections::HashMap;

    /// Hexahedra → Hexa2Quad → quads → Quad2Triangle → triangles.
    fn chain(hexahedra: &str) -> (Scene, ComponentId, ComponentId, ComponentId) {
        let (f, mut scene) = factory_and_scene();
        let ([hexa, quads, tris], _) = hexa_quad_triangle_chain(&f, &mut scene, hexahedra);
        init_scene(&mut scene).unwrap();
        (scene, hexa, quads, tris)
    }

    fn topo(scene: &Scene, id: ComponentId) -> &crate::modifier::DynTopo {
        scene.get::<SetTopologyContainer>(id).unwrap().topo()
    }

    /// Two cubes A = [0,1,4,3,6,7,10,9], B = [1,2,5,4,7,8,11,10]; removing A uncovers the
    /// shared face with B's orientation, then A's own faces and points go.
    #[test]
    fn removing_one_of_two_cubes_uncovers_the_shared_face() {
        let (mut scene, hexa, quads, tris) = chain("0 1 4 3 6 7 10 9  1 2 5 4 7 8 11 10");
        // Output at init: the 10 border faces (input quads 0-2, 4-10: the shared quad 3 is
        // inside), and 20 triangles.
        assert_eq!(topo(&scene, quads).mesh.quads.len(), 10);
        modify(&mut scene, hexa, |t| hexahedron::remove_hexahedra(t, vec![0], true)).unwrap();
        // Input (see the modifier's test): quads [1,4,5,2] [7,0,3,6] [1,2,0,7] [1,4,6,7]
        // [2,5,3,0] [4,6,3,5] after points 9,6,3,0 went (11 → 3, 10 → 6, 8 → 0).
        //
        // Output at init: input quads q0-q2, q4-q10 (loc2glob [0,1,2,4,..,10]). The hexahedron
        // removal uncovers q3, appended with B's face 5 (B3, B0, B4, B7) = [4,1,7,10]. Then input
        // quads 5, 4, 2, 1, 0 go: they are output quads 4, 3, 2, 1, 0 (through the maps), each
        // removed by swap-with-last: [q7, q8, q9, q10, new, q6]; finally points 9, 6, 3, 0 go
        // (11 → 3, 10 → 6, 8 → 0).
        let out = topo(&scene, quads);
        assert_eq!(out.nb_points, 8);
        assert_eq!(out.mesh.quads, vec![[7, 0, 3, 6], [1, 2, 0, 7], [2, 5, 3, 0], [4, 6, 3, 5], [4, 1, 7, 6], [1, 4, 5, 2]]);
        // All 6 faces of B are on the border now, each once, in some orientation.
        let inp = topo(&scene, hexa);
        let mut a: Vec<[usize; 4]> = out.mesh.quads.iter().map(|&q| super::face_key(q)).collect();
        let mut b: Vec<[usize; 4]> = inp.mesh.quads.iter().map(|&q| super::face_key(q)).collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
        // Two triangles per output quad.
        let t = topo(&scene, tris);
        assert_eq!(t.mesh.triangles.len(), 12);
        assert_eq!(t.nb_points, 8);
    }

    /// Border faces of a hexahedron mesh: faces used by one hexahedron, as sorted keys.
    fn border(hexahedra: &[[usize; 8]]) -> Vec<[usize; 4]> {
        let mut count: HashMap<[usize; 4], usize> = HashMap::new();
        for h in hexahedra {
            for f in QUADS_IN_HEXAHEDRON {
                *count.entry(super::face_key(f.map(|k| h[k]))).or_default() += 1;
            }
        }
        let mut v: Vec<[usize; 4]> = count.into_iter().filter(|&(_, c)| c == 1).map(|(k, _)| k).collect();
        v.sort_unstable();
        v
    }

    fn block_text(nx: usize, ny: usize, nz: usize) -> String {
        let mut s = String::new();
        for v in crate::grid::hexahedra([nx + 1, ny + 1, nz + 1]).into_iter().flatten() {
            s += &format!("{v} ");
        }
        s
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// After random removals of hexahedra the output holds exactly the border quads of the
        /// input, the triangles are two per quad on the same points, and every container stays
        /// consistent.
        #[test]
        fn random_removals_keep_the_output_on_the_border(ops in prop::collection::vec(prop::collection::vec(0usize..1000, 1..4), 1..5)) {
            let (mut scene, hexa, quads, tris) = chain(&block_text(3, 2, 2));
            for raw in ops {
                let n = topo(&scene, hexa).mesh.hexahedra.len();
                if n == 0 { break; }
                let ids: Vec<usize> = raw.iter().map(|r| r % n).collect();
                modify(&mut scene, hexa, |t| hexahedron::remove_hexahedra(t, ids, true)).unwrap();
                let inp = topo(&scene, hexa);
                let out = topo(&scene, quads);
                let mut got: Vec<[usize; 4]> = out.mesh.quads.iter().map(|&q| super::face_key(q)).collect();
                got.sort_unstable();
                prop_assert_eq!(got, border(&inp.mesh.hexahedra));
                prop_assert_eq!(out.nb_points, inp.nb_points);
                crate::modifier::hexahedron::tests::check_consistent(inp).map_err(TestCaseError::fail)?;
                crate::modifier::hexahedron::tests::check_consistent(out).map_err(TestCaseError::fail)?;
                let t = topo(&scene, tris);
                prop_assert_eq!(t.mesh.triangles.len(), 2 * out.mesh.quads.len());
                prop_assert!(t.mesh.triangles.iter().flatten().all(|&v| v < t.nb_points));
                // The triangles cover the quads' vertices exactly.
                let mut tv: Vec<usize> = t.mesh.triangles.iter().flatten().copied().collect();
                let mut qv: Vec<usize> = out.mesh.quads.iter().flatten().copied().collect();
                tv.sort_unstable();
                tv.dedup();
                qv.sort_unstable();
                qv.dedup();
                prop_assert_eq!(tv, qv);
            }
        }
    }

    #[test]
    fn quads_added_to_the_input_are_split_in_the_output() {
        let (f, mut scene) = factory_and_scene();
        let qs = add(&f, &mut scene, Scene::ROOT, "QuadSetTopologyContainer", &[("name", "Quad_topo"), ("quads", "0 1 2 3")]);
        add(&f, &mut scene, Scene::ROOT, "QuadSetTopologyModifier", &[]);
        let tn = scene.add_node(Scene::ROOT, "T");
        let tris = add(&f, &mut scene, tn, "TriangleSetTopologyContainer", &[("name", "Triangle_topo")]);
        add(&f, &mut scene, tn, "TriangleSetTopologyModifier", &[]);
        add(&f, &mut scene, tn, "Quad2TriangleTopologicalMapping", &[("input", "@../Quad_topo"), ("output", "@Triangle_topo")]);
        init_scene(&mut scene).unwrap();
        // Init split of quad 0 (not swapped): (1,2,0), (3,0,2).
        assert_eq!(topo(&scene, tris).mesh.triangles, vec![[1, 2, 0], [3, 0, 2]]);
        modify(&mut scene, qs, |t| quad::add_quads(t, &[[1, 4, 5, 2]])).unwrap();
        assert_eq!(topo(&scene, tris).mesh.triangles, vec![[1, 2, 0], [3, 0, 2], [1, 4, 5], [1, 5, 2]]);
        assert_eq!(topo(&scene, tris).nb_points, 6);
        // Removing quad 0 removes its two triangles: 1 (← 3), then 0 (← 2).
        modify(&mut scene, qs, |t| quad::remove_quads(t, vec![0], true, true)).unwrap();
        let t = topo(&scene, tris);
        // Input points 3 and 0 go (5 → 3, 4 → 0): quad [1,0,3,2]; triangles [1,0,3], [1,3,2].
        assert_eq!(topo(&scene, qs).mesh.quads, vec![[1, 0, 3, 2]]);
        assert_eq!(t.mesh.triangles, vec![[1, 0, 3], [1, 3, 2]]);
        assert_eq!(t.nb_points, 4);
    }
}
