//! `Tetra2TriangleTopologicalMapping` following its input (SOFA's
//! `updateTopologicalMappingTopDown`): the output holds the border faces of the tetrahedra.
//!
//! * Tetrahedra removed: each face shared with exactly one other tetrahedron becomes a border
//!   face and is added, oriented as that other tetrahedron sees it (its local face
//!   [`FACES`]`[j]`, `(t0, t2, t1)` with `flipNormals`), rotated to start with its smallest
//!   vertex. A face whose other tetrahedron was removed earlier in the same list is skipped; one
//!   whose other tetrahedron is removed later is added, then goes with the triangle removal.
//! * Triangles removed from the input: their output triangles go (isolated edges too, not
//!   points), and the index maps follow both swap-with-last removals.
//! * Tetrahedra added: faces of the new tetrahedra that are on the border and not yet mapped are
//!   added (as the input stores them); mapped faces no longer on the border are removed.
//! * Edges and points added, points removed: the output does the same.
//!
//! SOFA's mapping reacts at each propagation of the input, while the input is between two steps
//! of an operation (a tetrahedron removal is seen before the tetrahedra go, the triangle removal
//! it causes before the triangles go; additions after everything was added). The log arrives
//! here after the whole operation, so the input's lists are first rewound through the log to
//! what they were before it, then replayed event by event, each event being handled against the
//! lists SOFA's mapping would have seen.

use super::replay::Mirror;
use super::{Following, IndexMaps};
use crate::modifier::tetrahedron::FACES;
use crate::modifier::{self, edge, point, triangle};
use crate::set_container::{SetKind, SetTopologyContainer};
use crate::topological_mapping::{find_modifier, TopologicalMapping};
use settee_core::topology_change::{ElementKind, Follow, TopologyChange};
use settee_core::{ComponentId, InitCtx, SimResult};
use std::collections::HashMap;

/// Follows the input's changes (`maps` is None until the first change: build it then from the
/// input and output as they were at init).
pub fn follow(cx: &mut InitCtx, following: Following) -> SimResult<Follow> {
    let Following { maps, input, output, changes } = following;
    // Without a triangle modifier for the output SOFA's mapping ignores the changes (it warned
    // at init).
    let has_modifier =
        !cx.scene.link_targets(cx.id, "modifier").is_empty() || find_modifier(cx.scene, cx.scene.entry(output).node, SetKind::Triangle).is_some();
    if !has_modifier {
        return Ok(Follow::NotConcerned);
    }
    let opts = Options {
        flip: cx.data().get(TopologicalMapping::FLIP_NORMALS),
        no_new: cx.data().get(TopologicalMapping::NO_NEW_TRIANGLES),
        no_initial: cx.data().get(TopologicalMapping::NO_INITIAL_TRIANGLES),
    };
    let Some(c) = cx.scene.get::<SetTopologyContainer>(input) else {
        return Err(cx
            .error(format!("the input {} changed, but it is not a dynamic topology container", cx.scene.entry(input).label()))
            .hint("use a TetrahedronSetTopologyContainer as the input"));
    };
    let mut state = Mirror::before(c.topo(), changes)
        .map_err(|e| cx.error(format!("cannot follow the changes of the input {}: {e}", cx.scene.entry(input).label())))?;

    let mut m = match maps.take() {
        Some(m) => m,
        None => {
            let m = initial_maps(&state, opts.no_initial);
            let out_len = cx.scene.mesh_of(output).map_or(0, |o| o.triangles.len());
            if out_len != m.loc2glob.len() {
                return Err(cx
                    .error(format!(
                        "the output {} has {out_len} triangles, but the input has {} border triangles: the output was changed by something else",
                        cx.scene.entry(output).label(),
                        m.loc2glob.len()
                    ))
                    .hint("let only the mapping change the output container"));
            }
            m
        }
    };
    let result = replay(&mut m, &mut state, cx, output, changes, opts);
    *maps = Some(m);
    result.map(|_| Follow::Followed)
}

#[derive(Clone, Copy)]
struct Options {
    flip: bool,
    no_new: bool,
    no_initial: bool,
}

/// SOFA's maps after init: the input triangles with exactly one tetrahedron, in input order.
fn initial_maps(state: &Mirror, no_initial: bool) -> IndexMaps {
    let mut m = IndexMaps::default();
    if no_initial {
        return m;
    }
    let around = state.tetrahedra_around_faces();
    for (k, tri) in state.triangles.iter().enumerate() {
        if around.get(&sorted3(*tri)).map_or(0, |v| v.len()) == 1 {
            m.glob2loc.insert(k, m.loc2glob.len());
            m.loc2glob.push(k);
        }
    }
    m
}

fn replay(m: &mut IndexMaps, state: &mut Mirror, cx: &mut InitCtx, output: ComponentId, changes: &[TopologyChange], opts: Options) -> SimResult {
    for change in changes {
        match change {
            TopologyChange::Removed { kind: ElementKind::Tetrahedron, indices, .. } if !opts.no_new => {
                let new = tetrahedra_removed(m, state, indices, opts.flip);
                if !new.is_empty() {
                    modifier::modify(cx.scene, output, |t| triangle::add_triangles(t, &new, Vec::new(), Vec::new()))?;
                }
            }
            TopologyChange::Removed { kind: ElementKind::Triangle, indices, .. } => {
                let gone = triangles_removed(m, state, indices).map_err(|e| cx.error(e))?;
                if !gone.is_empty() {
                    modifier::modify(cx.scene, output, |t| triangle::remove_triangles(t, gone, true, false))?;
                }
            }
            TopologyChange::Removed { kind: ElementKind::Point, indices, .. } => {
                let ids = indices.clone();
                modifier::modify(cx.scene, output, |t| point::remove_points(t, ids))?;
            }
            _ => {}
        }
        state.apply(change).map_err(|e| cx.error(e))?;
        match change {
            TopologyChange::Added { kind: ElementKind::Tetrahedron, count, .. } if !opts.no_new => {
                let first = state.tetrahedra.len() - count;
                let (new, gone) = tetrahedra_added(m, state, first..state.tetrahedra.len()).map_err(|e| cx.error(e))?;
                if !new.is_empty() {
                    modifier::modify(cx.scene, output, |t| triangle::add_triangles(t, &new, Vec::new(), Vec::new()))?;
                }
                if !gone.is_empty() {
                    modifier::modify(cx.scene, output, |t| triangle::remove_triangles(t, gone, true, false))?;
                }
            }
            TopologyChange::Added { kind: ElementKind::Edge, elements, .. } => {
                let edges: Vec<[usize; 2]> = elements.iter().filter(|e| e.len() == 2).map(|e| [e[0], e[1]]).collect();
                modifier::modify(cx.scene, output, |t| edge::add_edges(t, &edges))?;
            }
            TopologyChange::Added { kind: ElementKind::Point, count, ancestors, coefs, .. } => {
                let (n, a, w) = (*count, ancestors.clone(), coefs.clone());
                modifier::modify(cx.scene, output, |t| point::add_points(t, n, a, w))?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Tetrahedra `ids` (decreasing, each naming the tetrahedron it had before the removal) are
/// about to go: the faces they share with exactly one other tetrahedron become border
/// triangles. Returns the triangles to add to the output; the maps already name them.
fn tetrahedra_removed(m: &mut IndexMaps, state: &Mirror, ids: &[usize], flip: bool) -> Vec<[usize; 3]> {
    let around = state.tetrahedra_around_faces();
    let index = state.triangle_index();
    let mut new = Vec::new();
    for (k, &tet) in ids.iter().enumerate() {
        let Some(&vertices) = state.tetrahedra.get(tet) else { continue };
        for f in FACES {
            let key = sorted3([vertices[f[0]], vertices[f[1]], vertices[f[2]]]);
            let Some(&glob) = index.get(&key) else { continue };
            let shell = around.get(&key).map_or(&[][..], |v| v.as_slice());
            if shell.len() != 2 {
                continue;
            }
            let other = if shell[0] == tet { shell[1] } else { shell[0] };
            if ids[..k].contains(&other) {
                continue;
            }
            // The face as the other tetrahedron orients it.
            let o = state.tetrahedra[other];
            let Some(g) = FACES.iter().find(|g| sorted3([o[g[0]], o[g[1]], o[g[2]]]) == key) else { continue };
            let mut tri = [o[g[0]], o[g[1]], o[g[2]]];
            if flip {
                tri.swap(1, 2);
            }
            while tri[0] > tri[1] || tri[0] > tri[2] {
                tri.rotate_left(1);
            }
            new.push(tri);
            m.loc2glob.push(glob);
            m.glob2loc.insert(glob, m.loc2glob.len() - 1);
        }
    }
    new
}

/// Input triangles `ids` (decreasing) are about to go: returns the output triangles to remove
/// (decreasing) and updates the maps for both removals, as SOFA's mapping does.
fn triangles_removed(m: &mut IndexMaps, state: &Mirror, ids: &[usize]) -> Result<Vec<usize>, String> {
    let mut local: Vec<usize> = ids.iter().filter_map(|g| m.glob2loc.get(g).copied()).collect();
    local.sort_unstable_by(|a, b| b.cmp(a));
    let n_in = state.triangles.len();
    let kept_in = n_in.saturating_sub(ids.len());
    let kept_out = m.loc2glob.len().saturating_sub(local.len());

    // The input's swap-with-last: the last mapped input triangle takes the removed one's id.
    let mut last = n_in as isize - 1;
    for &old in ids {
        if last >= 0 {
            if let Some(&last_loc) = m.glob2loc.get(&(last as usize)) {
                m.glob2loc.insert(old, last_loc);
                if last_loc < m.loc2glob.len() {
                    m.loc2glob[last_loc] = old;
                }
                m.glob2loc.remove(&(last as usize));
                last -= 1;
                continue;
            }
        }
        m.glob2loc.remove(&old);
        last -= 1;
    }
    // The output's swap-with-last.
    for &loc in &local {
        let Some(&moved) = m.loc2glob.last() else {
            return Err("the mapping's index maps are inconsistent with the triangles removed from its input".into());
        };
        if loc >= m.loc2glob.len() {
            return Err(format!("output triangle {loc} is beyond the {} mapped triangles", m.loc2glob.len()));
        }
        m.loc2glob[loc] = moved;
        if moved < kept_in && loc < kept_out {
            m.glob2loc.insert(moved, loc);
        }
        m.loc2glob.pop();
    }
    Ok(local)
}

/// Tetrahedra `added` were appended: returns the border faces to add to the output (as the
/// input stores them) and the output triangles no longer on the border (decreasing).
fn tetrahedra_added(m: &mut IndexMaps, state: &Mirror, added: std::ops::Range<usize>) -> Result<(Vec<[usize; 3]>, Vec<usize>), String> {
    let around = state.tetrahedra_around_faces();
    let index = state.triangle_index();
    let mut new = Vec::new();
    let mut inner = Vec::new();
    for tet in added {
        let v = state.tetrahedra[tet];
        for f in FACES {
            let key = sorted3([v[f[0]], v[f[1]], v[f[2]]]);
            let Some(&glob) = index.get(&key) else {
                return Err(format!("face {key:?} of added tetrahedron {tet} is not among the input's triangles"));
            };
            let count = around.get(&key).map_or(0, |s| s.len());
            if m.glob2loc.contains_key(&glob) {
                if count != 1 {
                    inner.push(glob);
                }
            } else if count <= 1 {
                new.push(state.triangles[glob]);
                m.loc2glob.push(glob);
                m.glob2loc.insert(glob, m.loc2glob.len() - 1);
            }
        }
    }
    let mut gone = Vec::new();
    for glob in inner {
        // A face listed twice was already taken out of the map (SOFA reports an error).
        if let Some(loc) = m.glob2loc.remove(&glob) {
            gone.push(loc);
        }
    }
    gone.sort_unstable_by(|a, b| b.cmp(a));
    for &loc in &gone {
        let Some(&moved) = m.loc2glob.last() else { break };
        if loc < m.loc2glob.len() {
            m.loc2glob[loc] = moved;
        }
        m.loc2glob.pop();
        m.glob2loc.insert(moved, loc);
    }
    Ok((new, gone))
}

/// What the mapping reads from the input's lists.
trait InputLists {
    fn tetrahedra_around_faces(&self) -> HashMap<[usize; 3], Vec<usize>>;
    fn triangle_index(&self) -> HashMap<[usize; 3], usize>;
}

impl InputLists for Mirror {
    /// Tetrahedra around each face (sorted vertices).
    fn tetrahedra_around_faces(&self) -> HashMap<[usize; 3], Vec<usize>> {
        let mut around: HashMap<[usize; 3], Vec<usize>> = HashMap::with_capacity(self.tetrahedra.len() * 2);
        for (i, t) in self.tetrahedra.iter().enumerate() {
            for f in FACES {
                around.entry(sorted3([t[f[0]], t[f[1]], t[f[2]]])).or_default().push(i);
            }
        }
        around
    }

    /// Triangle index of each face (sorted vertices; the first if repeated).
    fn triangle_index(&self) -> HashMap<[usize; 3], usize> {
        self.triangles.iter().enumerate().rev().map(|(k, t)| (sorted3(*t), k)).collect()
    }
}

fn sorted3(mut v: [usize; 3]) -> [usize; 3] {
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modifier::tetrahedron::remove_tetrahedra;
    use crate::test_util::{add, init_scene};
    use proptest::prelude::*;
    use settee_core::{Factory, Scene};

    /// A tetrahedron container in the root, its border triangles in a child node.
    fn build(tetrahedra: &[[usize; 4]], extra: &[(&str, &str)]) -> (Scene, ComponentId, ComponentId) {
        let mut f = Factory::new();
        crate::register(&mut f);
        let mut scene = Scene::new("root");
        let tets: Vec<String> = tetrahedra.iter().flatten().map(|v| v.to_string()).collect();
        let input = add(&f, &mut scene, Scene::ROOT, "TetrahedronSetTopologyContainer", &[("name", "Tetra"), ("tetrahedra", &tets.join(" "))]);
        add(&f, &mut scene, Scene::ROOT, "TetrahedronSetTopologyModifier", &[]);
        let t = scene.add_node(Scene::ROOT, "T");
        let output = add(&f, &mut scene, t, "TriangleSetTopologyContainer", &[("name", "Tri")]);
        add(&f, &mut scene, t, "TriangleSetTopologyModifier", &[]);
        let mut a = vec![("input", "@../Tetra"), ("output", "@Tri")];
        a.extend_from_slice(extra);
        add(&f, &mut scene, t, "Tetra2TriangleTopologicalMapping", &a);
        init_scene(&mut scene).unwrap();
        (scene, input, output)
    }

    fn triangles(scene: &Scene, c: ComponentId) -> Vec<[usize; 3]> {
        scene.mesh_of(c).unwrap().triangles.clone()
    }

    #[test]
    fn removing_one_of_two_tetrahedra_exposes_the_shared_face() {
        let (mut scene, input, output) = build(&[[0, 1, 2, 3], [1, 2, 3, 4]], &[]);
        assert_eq!(triangles(&scene, output), [[0, 3, 2], [0, 1, 3], [0, 2, 1], [2, 3, 4], [1, 4, 3], [1, 2, 4]]);
        modifier::modify(&mut scene, input, |t| remove_tetrahedra(t, vec![0], true)).unwrap();
        // The shared face is added as the remaining tetrahedron orients it, (1 3 2); the three
        // faces of the removed one go (2 ← 6, 1 ← 5, 0 ← 4), then point 0 takes point 4's place.
        assert_eq!(triangles(&scene, input), [[1, 2, 3], [2, 3, 0], [1, 0, 3], [1, 2, 0]]);
        assert_eq!(triangles(&scene, output), [[1, 0, 3], [1, 2, 0], [1, 3, 2], [2, 3, 0]]);
        let c = scene.get::<SetTopologyContainer>(output).unwrap();
        assert_eq!(c.nb_points(), 4);
    }

    #[test]
    fn options_flip_and_skip_new_triangles() {
        let (mut scene, input, output) = build(&[[0, 1, 2, 3], [1, 2, 3, 4]], &[("flipNormals", "1"), ("noInitialTriangles", "1")]);
        assert!(triangles(&scene, output).is_empty());
        modifier::modify(&mut scene, input, |t| remove_tetrahedra(t, vec![1], true)).unwrap();
        // Face (1 2 3) seen from tetrahedron 0 is (1 2 3): flipped, (1 3 2).
        assert_eq!(triangles(&scene, output), [[1, 3, 2]]);

        let (mut scene, input, output) = build(&[[0, 1, 2, 3], [1, 2, 3, 4]], &[("noNewTriangles", "1")]);
        modifier::modify(&mut scene, input, |t| remove_tetrahedra(t, vec![1], true)).unwrap();
        assert_eq!(triangles(&scene, output), [[0, 3, 2], [0, 1, 3], [0, 2, 1]]);
    }

    /// The 12 tetrahedra of a 2×1×1-cell grid.
    fn block() -> Vec<[usize; 4]> {
        let p = |x: usize, y: usize, z: usize| x + 3 * y + 6 * z;
        let hexa = |x| [p(x, 0, 0), p(x + 1, 0, 0), p(x + 1, 1, 0), p(x, 1, 0), p(x, 0, 1), p(x + 1, 0, 1), p(x + 1, 1, 1), p(x, 1, 1)];
        crate::elements::hexahedra_to_tetrahedra(&[hexa(0), hexa(1)], false, 2, 1)
    }

    proptest! {
        /// After random removals the output holds exactly the input's border faces, once each,
        /// and the mapping's maps pair each output triangle with the input triangle it shows.
        #[test]
        fn the_output_is_the_border_of_the_input(steps in prop::collection::vec(prop::collection::vec(0usize..100, 1..4), 1..6)) {
            let (mut scene, input, output) = build(&block(), &[]);
            for raw in steps {
                let n = scene.mesh_of(input).unwrap().tetrahedra.len();
                if n == 0 { break; }
                let ids: Vec<usize> = raw.iter().map(|r| r % n).collect();
                modifier::modify(&mut scene, input, |t| remove_tetrahedra(t, ids, true)).unwrap();
                let m = scene.mesh_of(input).unwrap();
                let state = Mirror { tetrahedra: m.tetrahedra.clone(), triangles: m.triangles.clone(), ..Mirror::default() };
                let around = state.tetrahedra_around_faces();
                let mut border: Vec<[usize; 3]> = around.iter().filter(|(_, s)| s.len() == 1).map(|(f, _)| *f).collect();
                border.sort();
                let mut out: Vec<[usize; 3]> = triangles(&scene, output).into_iter().map(sorted3).collect();
                out.sort();
                prop_assert_eq!(out, border);
                let np = scene.get::<SetTopologyContainer>(input).unwrap().nb_points();
                prop_assert_eq!(scene.get::<SetTopologyContainer>(output).unwrap().nb_points(), np);
                let mapping = scene.node(scene.entry(output).node).objects.iter().copied()
                    .find(|&c| scene.entry(c).class.name == "Tetra2TriangleTopologicalMapping").unwrap();
                let maps = scene.get::<crate::topological_mapping::TopologicalMapping>(mapping).unwrap().maps().unwrap();
                let out = triangles(&scene, output);
                prop_assert_eq!(maps.loc2glob.len(), out.len());
                for (loc, &glob) in maps.loc2glob.iter().enumerate() {
                    prop_assert_eq!(sorted3(m.triangles[glob]), sorted3(out[loc]));
                    prop_assert_eq!(maps.glob2loc.get(&glob), Some(&loc));
                }
            }
        }
    }
}
