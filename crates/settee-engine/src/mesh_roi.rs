//! `MeshROI`: selects the points (and the elements) inside a closed triangle mesh.
//!
//! A `BaseROI` of SOFA as [`crate::BoxROI`] (same inputs, defaults, outputs and `doUpdate`; but
//! `strict` defaults to false), with the region:
//! * the ROI mesh: `ROIposition` (default: the `rest_position` of the node's first state, else
//!   the `position` of its first loader), `ROItriangles` and `ROIedges` (default, with their
//!   `compute…` flag: the node's topology's lists);
//! * `box` is the bounding box of `ROIposition`, computed once at init;
//! * a point is inside when it is in the box and a ray from it crosses the ROI triangles an odd
//!   number of times (SOFA's test: the ray goes towards the box corner farther from the point,
//!   pushed 100 further along each axis; a crossing on an edge or a vertex counts for each
//!   triangle sharing it); with `computeMeshROI="false"` every point is inside;
//! * an element is inside when all its points are (`strict`), or when all its points are
//!   selected or its centre is inside (not `strict`).

use settee_core::role::{self, Engine};
use settee_core::{component, Component, ComponentId, InitCtx, Layout, SimResult};

use crate::box_roi::{pick, select_elements, BoxROI, RoiElements};

/// The closed surface and its bounding box.
#[derive(Clone, Debug, PartialEq)]
pub struct RoiMesh {
    pub points: Vec<[f64; 3]>,
    pub triangles: Vec<[usize; 3]>,
    /// `xmin ymin zmin xmax ymax zmax`.
    pub bbox: [f64; 6],
    /// `computeMeshROI`: test against the mesh (else every point is inside).
    pub use_mesh: bool,
}

/// SOFA's `checkSameOrder`: whether `pt` is on the inner side of the edge `a b` for normal `n`.
fn same_order(a: [f64; 3], b: [f64; 3], pt: [f64; 3], n: [f64; 3]) -> bool {
    let v = [
        (b[1] - a[1]) * (pt[2] - a[2]) - (pt[1] - a[1]) * (b[2] - a[2]),
        (b[2] - a[2]) * (pt[0] - a[0]) - (pt[2] - a[2]) * (b[0] - a[0]),
        (b[0] - a[0]) * (pt[1] - a[1]) - (pt[0] - a[0]) * (b[1] - a[1]),
    ];
    v[0] * n[0] + v[1] * n[1] + v[2] * n[2] >= 0.0
}

/// The bounding box of `points` (SOFA's `computeBoundingBox`; zeros without points).
pub fn bounding_box(points: &[[f64; 3]]) -> [f64; 6] {
    let mut b = [0.0; 6];
    if let Some(first) = points.first() {
        b = [first[0], first[1], first[2], first[0], first[1], first[2]];
        for q in &points[1..] {
            for a in 0..3 {
                b[a] = b[a].min(q[a]);
                b[a + 3] = b[a + 3].max(q[a]);
            }
        }
    }
    b
}

impl RoiMesh {
    pub fn in_box(&self, p: [f64; 3]) -> bool {
        let b = &self.bbox;
        p[0] >= b[0] && p[0] <= b[3] && p[1] >= b[1] && p[1] <= b[4] && p[2] >= b[2] && p[2] <= b[5]
    }

    pub fn contains(&self, p: &[f64]) -> bool {
        if !self.use_mesh {
            return true;
        }
        let p = [p[0], p[1], p[2]];
        if !self.in_box(p) {
            return false;
        }
        let b = &self.bbox;
        let to_min = (b[0] - p[0]) * (b[0] - p[0]) + (b[1] - p[1]) * (b[1] - p[1]) + (b[2] - p[2]) * (b[2] - p[2]);
        let to_max = (b[3] - p[0]) * (b[3] - p[0]) + (b[4] - p[1]) * (b[4] - p[1]) + (b[5] - p[2]) * (b[5] - p[2]);
        let dir = if to_min < to_max {
            [(b[0] - 100.0) - p[0], (b[1] - 100.0) - p[1], (b[2] - 100.0) - p[2]]
        } else {
            [(b[3] + 100.0) - p[0], (b[4] + 100.0) - p[1], (b[5] + 100.0) - p[2]]
        };
        let mut crossings = 0usize;
        for t in &self.triangles {
            let (p0, p1, p2) = (self.points[t[0]], self.points[t[1]], self.points[t[2]]);
            let n = [
                (p1[1] - p0[1]) * (p2[2] - p1[2]) - (p1[2] - p0[2]) * (p2[1] - p1[1]),
                (p1[2] - p0[2]) * (p2[0] - p1[0]) - (p1[0] - p0[0]) * (p2[2] - p1[2]),
                (p1[0] - p0[0]) * (p2[1] - p1[1]) - (p1[1] - p0[1]) * (p2[0] - p1[0]),
            ];
            let along = n[0] * dir[0] + n[1] * dir[1] + n[2] * dir[2];
            if along != 0.0 {
                let d = (n[0] * (p0[0] - p[0]) + n[1] * (p0[1] - p[1]) + n[2] * (p0[2] - p[2])) / along;
                if d >= 0.0 {
                    let hit = [p[0] + d * dir[0], p[1] + d * dir[1], p[2] + d * dir[2]];
                    if same_order(p0, p1, hit, n) && same_order(p1, p2, hit, n) && same_order(p2, p0, hit, n) {
                        crossings += 1;
                    }
                }
            }
        }
        !crossings.is_multiple_of(2)
    }
}

/// MeshROI's element test: an element whose points are all selected is inside; else all its
/// points (`strict`: then it is outside) or its centre decide, as in any `BaseROI`.
fn split_elements<const K: usize>(
    elements: &[[usize; K]],
    points: &[Vec<f64>],
    mesh: &RoiMesh,
    selected: &[bool],
    strict: bool,
    bad: &mut bool,
) -> (Vec<usize>, Vec<usize>) {
    let (mut inside, outside) = select_elements(elements, points, &|p| mesh.contains(p), &|_| true, 3, strict, bad);
    if strict {
        return (inside, outside);
    }
    let all_selected = |i: usize| elements[i].iter().all(|&v| selected.get(v) == Some(&true));
    inside.extend(outside.iter().copied().filter(|&i| all_selected(i)));
    inside.sort_unstable();
    (inside, outside.into_iter().filter(|&i| !all_selected(i)).collect())
}

/// Find the primitives (vertex/edge/triangle/tetrahedron) inside a given mesh
///
/// The MeshROI engine.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d", "Rigid3d", "Vec6d"],
    create = |args| MeshROI { layout: args.layout.unwrap_or(Layout::Vec3) },
    data = {
        /// ROI position coordinates of the degrees of freedom (default: the node's state's rest positions)
        "ROIposition" as ROI_POSITION: Coords,
        /// ROI Edge Topology (default: the node's topology's)
        "ROIedges" as ROI_EDGES: IndexTuples(2),
        /// ROI Triangle Topology (default: the node's topology's)
        "ROItriangles" as ROI_TRIANGLES: IndexTuples(3),
        /// Compute with the mesh (not only bounding box)
        computeMeshROI: Bool = "true",
        /// output: Bounding box defined by xmin,ymin,zmin, xmax,ymax,zmax
        "box" as BOX: Fixed(6) as Reals = "0 0 0 0 0 0",
        /// Draw the data not contained in the ROI (rendering only)
        drawOut: Bool = "false",
        /// Draw the Bounding box around the mesh used for the ROI (rendering only)
        drawBox: Bool = "false",
        /// rest positions of the points (default: the rest positions of the context mechanical state)
        position: Coords,
        /// edge topology (default: the node's topology)
        edges: IndexTuples(2),
        /// triangle topology (default: the node's topology)
        triangles: IndexTuples(3),
        /// quad topology (default: the node's topology)
        quads: IndexTuples(4),
        /// tetrahedron topology (default: the node's topology)
        tetrahedra: IndexTuples(4),
        /// hexahedron topology (default: the node's topology)
        hexahedra: IndexTuples(8),
        /// compute the edges inside the ROI
        computeEdges: Bool = "true",
        /// compute the triangles inside the ROI
        computeTriangles: Bool = "true",
        /// compute the quads inside the ROI
        computeQuads: Bool = "true",
        /// compute the tetrahedra inside the ROI
        computeTetrahedra: Bool = "true",
        /// compute the hexahedra inside the ROI
        computeHexahedra: Bool = "true",
        /// an element is inside when all its points are (else: when its centre is)
        strict: Bool = "false",
        /// output: indices of the points inside the ROI
        indices: Indices = "0",
        /// output: indices of the edges inside the ROI
        edgeIndices: Indices,
        /// output: indices of the triangles inside the ROI
        triangleIndices: Indices,
        /// output: indices of the quads inside the ROI
        quadIndices: Indices,
        /// output: indices of the tetrahedra inside the ROI
        tetrahedronIndices: Indices,
        /// output: indices of the hexahedra inside the ROI
        hexahedronIndices: Indices,
        /// output: points inside the ROI
        pointsInROI: Coords,
        /// output: edges inside the ROI
        edgesInROI: IndexTuples(2),
        /// output: triangles inside the ROI
        trianglesInROI: IndexTuples(3),
        /// output: quads inside the ROI
        quadsInROI: IndexTuples(4),
        /// output: tetrahedra inside the ROI
        tetrahedraInROI: IndexTuples(4),
        /// output: hexahedra inside the ROI
        hexahedraInROI: IndexTuples(8),
        /// output: number of selected points
        nbIndices: Int = "0",
        /// output: points outside the ROI
        pointsOutROI: Coords,
        /// output: edges outside the ROI
        edgesOutROI: IndexTuples(2),
        /// output: triangles outside the ROI
        trianglesOutROI: IndexTuples(3),
        /// output: tetrahedra outside the ROI
        tetrahedraOutROI: IndexTuples(4),
        /// output: indices of the points outside the ROI
        indicesOut: Indices,
        /// output: indices of the edges outside the ROI
        edgeOutIndices: Indices,
        /// output: indices of the triangles outside the ROI
        triangleOutIndices: Indices,
        /// output: indices of the tetrahedra outside the ROI
        tetrahedronOutIndices: Indices,
        /// draw the ROI mesh (rendering only)
        drawROI: Bool = "false",
        /// draw the points inside (rendering only)
        drawPoints: Bool = "false",
        /// draw the edges inside (rendering only)
        drawEdges: Bool = "false",
        /// draw the triangles inside (rendering only)
        drawTriangles: Bool = "false",
        /// draw the quads inside (rendering only)
        drawQuads: Bool = "false",
        /// draw the tetrahedra inside (rendering only)
        drawTetrahedra: Bool = "false",
        /// draw the hexahedra inside (rendering only)
        drawHexahedra: Bool = "false",
        /// rendering size (rendering only)
        drawSize: Real = "1",
        /// update the selection at the beginning of a step when an input changed
        doUpdate: Bool = "true",
    },
)]
#[derive(Clone)]
pub struct MeshROI {
    layout: Layout,
}

impl Component for MeshROI {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if !cx.data().is_given(Self::POSITION) {
            let Some((src, field)) = BoxROI::position_source(cx) else {
                return Err(cx
                    .error("no positions: `position` is not set and there is no MechanicalObject or mesh loader in this node or above")
                    .hint("set `position=\"@dofs.rest_position\"` or add a MechanicalObject before the MeshROI"));
            };
            cx.scene.link_data(cx.id, "position", src, field)?;
        }
        self.link_roi_mesh(cx)?;
        // The bounding box of the ROI mesh, once (SOFA's `roiInit`).
        let cs = self.layout.coord_size();
        let roi: Vec<[f64; 3]> = cx.data().get(Self::ROI_POSITION).chunks_exact(cs).map(|c| [c[0], c[1], c[2]]).collect();
        let bbox = if roi.is_empty() { normalised(cx.data().get(Self::BOX)) } else { bounding_box(&roi) };
        cx.data_mut().put(Self::BOX, bbox.to_vec());
        self.select(cx, true)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        if cx.data().get(Self::DO_UPDATE) {
            self.select(cx, false)?;
        }
        Ok(())
    }
}

fn normalised(b: &[f64]) -> [f64; 6] {
    [b[0].min(b[3]), b[1].min(b[4]), b[2].min(b[5]), b[0].max(b[3]), b[1].max(b[4]), b[2].max(b[5])]
}

impl MeshROI {
    /// SOFA's `checkInputData`: the ROI mesh from the node's state (or loader) and topology.
    fn link_roi_mesh(&self, cx: &mut InitCtx) -> SimResult {
        let node = cx.node();
        if !cx.data().is_given(Self::ROI_POSITION) {
            cx.warn("`ROIposition` is not set: the rest positions of the node's mechanical state (or loader) are used");
            let src: Option<(ComponentId, &str)> = match cx.scene.find_local(node, role::MECHANICAL_STATE) {
                Some(ms) => Some((ms, "rest_position")),
                None => cx.scene.find_local(node, role::LOADER).map(|l| (l, "position")),
            };
            if let Some((c, field)) = src {
                cx.scene.link_data(cx.id, "ROIposition", c, field)?;
            }
        }
        let d = cx.data();
        let wanted = [
            (!d.is_given(Self::ROI_EDGES) && d.get(Self::COMPUTE_EDGES), "ROIedges", "edges"),
            (!d.is_given(Self::ROI_TRIANGLES) && d.get(Self::COMPUTE_TRIANGLES), "ROItriangles", "triangles"),
        ];
        if let Some(topo) = cx.scene.find_local(node, role::TOPOLOGY) {
            for (_, mine, theirs) in wanted.iter().filter(|w| w.0) {
                if cx.scene.entry(topo).data.index_of(theirs).is_some() {
                    cx.scene.link_data(cx.id, mine, topo, theirs)?;
                }
            }
        }
        Ok(())
    }

    fn select(&mut self, cx: &mut InitCtx, at_init: bool) -> SimResult {
        let cs = self.layout.coord_size();
        let positions: Vec<f64> = cx.data().get(Self::POSITION).to_vec();
        let points: Vec<Vec<f64>> = positions.chunks_exact(cs).map(|c| c[..3].to_vec()).collect();

        let d = cx.data();
        let flags = [
            d.get(Self::COMPUTE_EDGES),
            d.get(Self::COMPUTE_TRIANGLES),
            d.get(Self::COMPUTE_QUADS),
            d.get(Self::COMPUTE_TETRAHEDRA),
            d.get(Self::COMPUTE_HEXAHEDRA),
        ];
        let strict = d.get(Self::STRICT);
        let lists = [
            (d.get(Self::EDGES), d.is_given(Self::EDGES)),
            (d.get(Self::TRIANGLES), d.is_given(Self::TRIANGLES)),
            (d.get(Self::QUADS), d.is_given(Self::QUADS)),
            (d.get(Self::TETRAHEDRA), d.is_given(Self::TETRAHEDRA)),
            (d.get(Self::HEXAHEDRA), d.is_given(Self::HEXAHEDRA)),
        ];
        let RoiElements { edges, triangles, quads, tetrahedra, hexahedra } = RoiElements::gather(cx, lists, flags);
        let d = cx.data();
        let roi_points: Vec<[f64; 3]> = d.get(Self::ROI_POSITION).chunks_exact(cs).map(|c| [c[0], c[1], c[2]]).collect();
        let roi_triangles: Vec<[usize; 3]> = d.get(Self::ROI_TRIANGLES).chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        if let Some(t) = roi_triangles.iter().find(|t| t.iter().any(|&v| v >= roi_points.len())) {
            return Err(cx.error(format!("ROI triangle {} {} {} refers to a point beyond the {} ROI positions", t[0], t[1], t[2], roi_points.len())));
        }
        let b = d.get(Self::BOX);
        let mesh = RoiMesh {
            points: roi_points,
            triangles: roi_triangles,
            bbox: [b[0], b[1], b[2], b[3], b[4], b[5]],
            use_mesh: d.get(Self::COMPUTE_MESH_ROI),
        };

        // SOFA clears every output first, then gives up without positions.
        let (mut pin, mut pout, mut xin, mut xout) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let empty = (Vec::new(), Vec::new());
        let (mut es, mut ts, mut qs, mut tets, mut hs) = (empty.clone(), empty.clone(), empty.clone(), empty.clone(), empty.clone());
        if points.is_empty() {
            if at_init {
                cx.warn("no rest positions defined yet: the selection is empty");
            }
        } else {
            let mut selected = vec![false; points.len()];
            for (i, p) in points.iter().enumerate() {
                let c = &positions[i * cs..(i + 1) * cs];
                if mesh.contains(p) {
                    selected[i] = true;
                    pin.push(i);
                    xin.extend_from_slice(c);
                } else {
                    pout.push(i);
                    xout.extend_from_slice(c);
                }
            }
            let mut bad = false;
            if flags[0] {
                es = split_elements(&edges, &points, &mesh, &selected, strict, &mut bad);
            }
            if flags[1] {
                ts = split_elements(&triangles, &points, &mesh, &selected, strict, &mut bad);
            }
            if flags[2] {
                qs = split_elements(&quads, &points, &mesh, &selected, strict, &mut bad);
            }
            if flags[3] {
                tets = split_elements(&tetrahedra, &points, &mesh, &selected, strict, &mut bad);
            }
            if flags[4] {
                hs = split_elements(&hexahedra, &points, &mesh, &selected, strict, &mut bad);
            }
            if bad {
                cx.warn("some elements refer to points beyond the positions: they are treated as outside");
            }
        }

        let out = cx.data_mut();
        out.put(Self::NB_INDICES, pin.len() as i64);
        out.put(Self::POINTS_IN_ROI, xin);
        out.put(Self::POINTS_OUT_ROI, xout);
        out.put(Self::INDICES, pin);
        out.put(Self::INDICES_OUT, pout);
        out.put(Self::EDGES_IN_ROI, pick(&edges, &es.0));
        out.put(Self::EDGES_OUT_ROI, pick(&edges, &es.1));
        out.put(Self::EDGE_INDICES, es.0);
        out.put(Self::EDGE_OUT_INDICES, es.1);
        out.put(Self::TRIANGLES_IN_ROI, pick(&triangles, &ts.0));
        out.put(Self::TRIANGLES_OUT_ROI, pick(&triangles, &ts.1));
        out.put(Self::TRIANGLE_INDICES, ts.0);
        out.put(Self::TRIANGLE_OUT_INDICES, ts.1);
        out.put(Self::QUADS_IN_ROI, pick(&quads, &qs.0));
        out.put(Self::QUAD_INDICES, qs.0);
        out.put(Self::TETRAHEDRA_IN_ROI, pick(&tetrahedra, &tets.0));
        out.put(Self::TETRAHEDRA_OUT_ROI, pick(&tetrahedra, &tets.1));
        out.put(Self::TETRAHEDRON_INDICES, tets.0);
        out.put(Self::TETRAHEDRON_OUT_INDICES, tets.1);
        out.put(Self::HEXAHEDRA_IN_ROI, pick(&hexahedra, &hs.0));
        out.put(Self::HEXAHEDRON_INDICES, hs.0);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    /// The surface of the cube [0, 2]³: 8 corners, 12 triangles (outward normals).
    const CUBE_POINTS: &str = "0 0 0  2 0 0  2 2 0  0 2 0  0 0 2  2 0 2  2 2 2  0 2 2";
    const CUBE_TRIANGLES: &str = "0 2 1  0 3 2  4 5 6  4 6 7  0 1 5  0 5 4  1 2 6  1 6 5  2 3 7  2 7 6  3 0 4  3 4 7";

    fn cube() -> RoiMesh {
        let p: Vec<f64> = CUBE_POINTS.split_whitespace().map(|v| v.parse().unwrap()).collect();
        let t: Vec<usize> = CUBE_TRIANGLES.split_whitespace().map(|v| v.parse().unwrap()).collect();
        let points: Vec<[f64; 3]> = p.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
        RoiMesh { bbox: bounding_box(&points), points, triangles: t.chunks(3).map(|c| [c[0], c[1], c[2]]).collect(), use_mesh: true }
    }

    #[test]
    fn ray_parity_inside_a_cube() {
        let c = cube();
        assert_eq!(c.bbox, [0.0, 0.0, 0.0, 2.0, 2.0, 2.0]);
        assert!(c.contains(&[1.0, 0.7, 0.3]));
        assert!(c.contains(&[0.2, 1.9, 1.3]));
        assert!(!c.contains(&[2.5, 1.0, 1.0])); // outside the box
                                                // (0.5, 0.3, 0.8) is nearer the min corner: its ray, towards (−100, −100, −100), leaves
                                                // through the face y = 0 (at x = 0.2, z ≈ 0.4985, in the triangle 0 5 4); without that
                                                // face there is no crossing
        assert!(c.contains(&[0.5, 0.3, 0.8]));
        let mut open = cube();
        open.triangles.retain(|t| t != &[0, 1, 5] && t != &[0, 5, 4]);
        assert!(!open.contains(&[0.5, 0.3, 0.8]));
        assert!(open.contains(&[1.0, 0.7, 0.3]));
        assert!(RoiMesh { use_mesh: false, ..cube() }.contains(&[50.0, 0.0, 0.0]));
    }

    /// Points inside and outside the cube mesh; edges: (0 1) both inside, (1 2) one inside with
    /// its middle (1.5, 0.65, 0.9) inside, (2 3) both outside. Not strict (the default): (0 1)
    /// by its points, (1 2) by its centre.
    #[test]
    fn scene_selection() {
        let f = factory();
        let mut s = Scene::new("root");
        let roi = s.add_node(Scene::ROOT, "roi");
        let e = add(
            &mut s,
            &f,
            roi,
            "MeshROI",
            &[
                ("position", "1 0.7 0.3  0.5 0.3 0.8  2.5 1 1  3 3 3"),
                ("edges", "0 1  1 2  2 3"),
                ("ROIposition", CUBE_POINTS),
                ("ROItriangles", CUBE_TRIANGLES),
            ],
        );
        init_scene(&mut s).unwrap();
        let d = &s.entry(e).data;
        assert_eq!(d.reals("box"), [0.0, 0.0, 0.0, 2.0, 2.0, 2.0]);
        assert_eq!(d.indices("indices"), [0, 1]);
        assert_eq!(d.indices("indicesOut"), [2, 3]);
        assert_eq!(d.indices("edgeIndices"), [0, 1]);
        assert_eq!(d.indices("edgeOutIndices"), [2]);
        assert!(!d.bool("strict"));
    }
}
