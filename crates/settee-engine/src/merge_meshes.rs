//! `MergeMeshes`: the union of `nbMeshes` meshes (SOFA's Engine/Generate).
//!
//! The output positions are the inputs' positions one mesh after the other; the elements of mesh
//! `i` are renumbered by the number of points of the meshes before it. The inputs are the
//! indexed Data families `position1..N`, `edges1..N`, `triangles1..N`, `quads1..N`,
//! `tetrahedra1..N`, `hexahedra1..N` (N = `nbMeshes`). As in SOFA, `polygons` stays empty: it
//! has no inputs.

use settee_core::role::Engine;
use settee_core::{component, Component, DataFamilyRef, InitCtx, SimResult};

/// Concatenates the lists of flat `groups` (one per mesh), adding to every index of a mesh's
/// elements the number of points (`counts`) of the meshes before it.
pub fn merge_elements(groups: &[&[usize]], counts: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(groups.iter().map(|g| g.len()).sum());
    let mut shift = 0;
    for (g, n) in groups.iter().zip(counts) {
        out.extend(g.iter().map(|&i| i + shift));
        shift += n;
    }
    out
}

/// Merge several meshes.
#[component(
    module = "Sofa.Component.Engine.Generate",
    markers = [Engine],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Rigid2d", "Rigid3d"],
    create = |_| MergeMeshes,
    data = {
        /// number of meshes to merge
        nbMeshes: Int = "2",
        /// input positions for mesh i
        #[indexed(nbMeshes)]
        "position" as INPUT_POSITION: Coords,
        /// input edges for mesh i
        #[indexed(nbMeshes)]
        "edges" as INPUT_EDGES: IndexTuples(2),
        /// input triangles for mesh i
        #[indexed(nbMeshes)]
        "triangles" as INPUT_TRIANGLES: IndexTuples(3),
        /// input quads for mesh i
        #[indexed(nbMeshes)]
        "quads" as INPUT_QUADS: IndexTuples(4),
        /// input tetrahedra for mesh i
        #[indexed(nbMeshes)]
        "tetrahedra" as INPUT_TETRAHEDRA: IndexTuples(4),
        /// input hexahedra for mesh i
        #[indexed(nbMeshes)]
        "hexahedra" as INPUT_HEXAHEDRA: IndexTuples(8),
        /// Number Of out points
        npoints: Int = "0",
        /// Output Vertices of the merged mesh
        position: Coords,
        /// Output Edges of the merged mesh
        edges: IndexTuples(2),
        /// Output Triangles of the merged mesh
        triangles: IndexTuples(3),
        /// Output Quads of the merged mesh
        quads: IndexTuples(4),
        /// Output Polygons of the merged mesh (always empty: there are no polygon inputs)
        polygons: Indices,
        /// Output Tetrahedra of the merged mesh
        tetrahedra: IndexTuples(4),
        /// Output Hexahedra of the merged mesh
        hexahedra: IndexTuples(8),
    },
)]
#[derive(Clone)]
pub struct MergeMeshes;

impl MergeMeshes {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        if let Err((count, n)) = cx.data_mut().resize_families() {
            return Err(cx
                .error(format!("{count}={n} is too many meshes"))
                .hint(format!("{count} can be at most {}", settee_core::data::MAX_FAMILY_COUNT)));
        }
        let k = cx.data().arity().coord.max(1);
        let d = cx.data();
        let n = d.family_len(Self::INPUT_POSITION);
        let mut x = Vec::new();
        let mut counts = Vec::with_capacity(n);
        for i in 1..=n {
            let p = d.get_at(Self::INPUT_POSITION, i);
            x.extend_from_slice(p);
            counts.push(p.len() / k);
        }
        let merged = |r: DataFamilyRef<settee_core::data_ref::Indices>| {
            let groups: Vec<&[usize]> = (1..=n).map(|i| d.get_at(r, i)).collect();
            merge_elements(&groups, &counts)
        };
        let (e, t, q, te, h) = (
            merged(Self::INPUT_EDGES),
            merged(Self::INPUT_TRIANGLES),
            merged(Self::INPUT_QUADS),
            merged(Self::INPUT_TETRAHEDRA),
            merged(Self::INPUT_HEXAHEDRA),
        );
        let npoints = (x.len() / k) as i64;
        let out = cx.data_mut();
        out.put(Self::POSITION, x);
        out.put(Self::EDGES, e);
        out.put(Self::TRIANGLES, t);
        out.put(Self::QUADS, q);
        out.put(Self::TETRAHEDRA, te);
        out.put(Self::HEXAHEDRA, h);
        out.put(Self::NPOINTS, npoints);
        Ok(())
    }
}

impl Component for MergeMeshes {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    /// Three meshes (2, 3 and 1 points): the positions follow one another and the elements of
    /// mesh i are shifted by the points of the meshes before it (0, 2, 5).
    #[test]
    fn merges_three_meshes_with_shifted_indices() {
        let f = factory();
        let mut s = Scene::new("root");
        let e = add(
            &mut s,
            &f,
            Scene::ROOT,
            "MergeMeshes",
            &[
                ("nbMeshes", "3"),
                ("position1", "0 0 0  1 0 0"),
                ("edges1", "0 1"),
                ("position2", "0 1 0  1 1 0  0 2 0"),
                ("triangles2", "0 1 2"),
                ("edges2", "2 0"),
                ("position3", "5 5 5"),
                ("triangles3", "0 0 0"),
            ],
        );
        assert!(s.messages.iter().all(|m| !m.message.contains("unused")), "{:?}", s.messages);
        init_scene(&mut s).unwrap();
        let d = &s.entry(e).data;
        assert_eq!(d.reals("position"), [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 2.0, 0.0, 5.0, 5.0, 5.0]);
        assert_eq!(d.indices("edges"), [0, 1, 4, 2]);
        assert_eq!(d.indices("triangles"), [2, 3, 4, 5, 5, 5]);
        assert_eq!(d.int("npoints"), 6);
        assert!(d.field("position4").is_none());
    }

    /// Without `nbMeshes`, two meshes as in SOFA; `position3` is not a Data then.
    #[test]
    fn two_meshes_by_default() {
        let f = factory();
        let mut s = Scene::new("root");
        let e = add(&mut s, &f, Scene::ROOT, "MergeMeshes", &[("position1", "1 2 3"), ("position2", "4 5 6"), ("position3", "7 8 9")]);
        assert!(s.messages.iter().any(|m| m.message.contains("unused attribute 'position3'")));
        init_scene(&mut s).unwrap();
        assert_eq!(s.entry(e).data.reals("position"), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(merge_elements(&[&[0, 1], &[0]], &[10, 3]), [0, 1, 10]);
    }
}
