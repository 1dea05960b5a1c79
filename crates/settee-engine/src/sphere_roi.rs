//! `SphereROI`: selects the points (and the elements) inside spheres.
//!
//! A `BaseROI` of SOFA as [`crate::BoxROI`] (same inputs, defaults, outputs, `strict` and
//! `doUpdate`), with the region:
//! * a point is inside when `|p − c|² ≤ r²` for one of the spheres (`centers`, `radii`); a single
//!   radius is repeated for every centre (written back into `radii`); no centre, or another count
//!   of radii (a warning), leaves every output empty;
//! * with `edgeAngle > 0` an edge inside must also make an angle with `direction` (normalised)
//!   whose |cos| is below |cos edgeAngle|; with `triAngle > 0` a triangle inside must have its
//!   normal `(p2 − p0) × (p1 − p0)` (normalised) with a dot product with `normal` (normalised)
//!   below cos triAngle (angles in degrees).

use settee_core::math::{cross, dot, normalized, sub};
use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, Layout, SimResult};

use crate::box_roi::{pick, select_elements, BoxROI, RoiElements};

fn vec3(p: &[f64]) -> [f64; 3] {
    [p[0], p[1], p[2]]
}

/// The spheres and the angle conditions.
#[derive(Clone, Debug, PartialEq)]
pub struct Spheres {
    pub spheres: Vec<([f64; 3], f64)>,
    /// `(direction, edgeAngle)` when edgeAngle > 0.
    pub edge_angle: Option<([f64; 3], f64)>,
    /// `(normal, triAngle)` when triAngle > 0.
    pub triangle_angle: Option<([f64; 3], f64)>,
}

impl Spheres {
    pub fn contains(&self, p: &[f64]) -> bool {
        self.spheres.iter().any(|&(c, r)| {
            let d = sub(vec3(p), c);
            dot(d, d) <= r * r
        })
    }

    pub fn edge_ok(&self, a: [f64; 3], b: [f64; 3]) -> bool {
        match self.edge_angle {
            Some((dir, angle)) => {
                let n = normalized(sub(b, a));
                dot(n, dir).abs() < (angle * std::f64::consts::PI / 180.0).cos().abs()
            }
            None => true,
        }
    }

    pub fn triangle_ok(&self, a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> bool {
        match self.triangle_angle {
            Some((normal, angle)) => {
                let n = normalized(cross(sub(c, a), sub(b, a)));
                dot(n, normal) < (angle * std::f64::consts::PI / 180.0).cos()
            }
            None => true,
        }
    }
}

/// Find the primitives (vertex/edge/triangle/quad/tetrahedron/hexahedron) inside given spheres.
///
/// The SphereROI engine.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d", "Rigid3d"],
    create = |args| SphereROI { layout: args.layout.unwrap_or(Layout::Vec3) },
    data = {
        /// Center(s) of the sphere(s)
        centers: RealTuples(3),
        /// Radius(i) of the sphere(s) (one radius serves every centre)
        radii: Reals,
        /// Edge direction (if edgeAngle > 0)
        direction: Fixed(3) as Vec3 = "0 0 0",
        /// Normal direction of the triangles (if triAngle > 0)
        normal: Fixed(3) as Vec3 = "0 0 0",
        /// Max angle between the direction of the selected edges and the specified direction
        edgeAngle: Real = "0",
        /// Max angle between the normal of the selected triangle and the specified normal direction
        #[alias("angle")]
        triAngle: Real = "0",
        /// rest positions of the points (default: the rest positions of the context mechanical state)
        #[alias("rest_position")]
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
        strict: Bool = "true",
        /// output: indices of the points inside the ROI
        #[alias("pointIndices")]
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
        /// draw the spheres (rendering only)
        #[alias("isVisible", "drawSphere")]
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
pub struct SphereROI {
    layout: Layout,
}

impl Component for SphereROI {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if !cx.data().is_given(Self::POSITION) {
            let Some((src, field)) = BoxROI::position_source(cx) else {
                return Err(cx
                    .error("no positions: `position` is not set and there is no MechanicalObject or mesh loader in this node or above")
                    .hint("set `position=\"@dofs.rest_position\"` or add a MechanicalObject before the SphereROI"));
            };
            cx.scene.link_data(cx.id, "position", src, field)?;
        }
        self.select(cx, true)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        if cx.data().get(Self::DO_UPDATE) {
            self.select(cx, false)?;
        }
        Ok(())
    }
}

impl SphereROI {
    /// The region from the Data (SOFA's `roiDoUpdate`), `None` when nothing is to be selected.
    fn spheres(&mut self, cx: &mut InitCtx) -> Option<Spheres> {
        let d = cx.data();
        let centers: Vec<[f64; 3]> = d.get(Self::CENTERS).chunks_exact(3).map(vec3).collect();
        let mut radii = d.get(Self::RADII).to_vec();
        if centers.is_empty() {
            return None;
        }
        if centers.len() != radii.len() {
            if radii.len() == 1 {
                radii = vec![radii[0]; centers.len()];
                cx.data_mut().put(Self::RADII, radii.clone());
            } else {
                let msg = format!("{} sphere centers but {} radii: nothing is selected", centers.len(), radii.len());
                cx.warn(msg);
                return None;
            }
        }
        let d = cx.data();
        let (edge_angle, tri_angle) = (d.get(Self::EDGE_ANGLE), d.get(Self::TRI_ANGLE));
        let (direction, normal) = (normalized(d.get(Self::DIRECTION)), normalized(d.get(Self::NORMAL)));
        if edge_angle > 0.0 {
            cx.data_mut().put(Self::DIRECTION, direction);
        }
        if tri_angle > 0.0 {
            cx.data_mut().put(Self::NORMAL, normal);
        }
        Some(Spheres {
            spheres: centers.into_iter().zip(radii).collect(),
            edge_angle: (edge_angle > 0.0).then_some((direction, edge_angle)),
            triangle_angle: (tri_angle > 0.0).then_some((normal, tri_angle)),
        })
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

        // SOFA clears every output first, then gives up without positions or spheres.
        let (mut pin, mut pout, mut xin, mut xout) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let empty = (Vec::new(), Vec::new());
        let (mut es, mut ts, mut qs, mut tets, mut hs) = (empty.clone(), empty.clone(), empty.clone(), empty.clone(), empty.clone());
        let region = if points.is_empty() {
            if at_init {
                cx.warn("no rest positions defined yet: the selection is empty");
            }
            None
        } else {
            self.spheres(cx)
        };
        if let Some(region) = region {
            for (i, p) in points.iter().enumerate() {
                let c = &positions[i * cs..(i + 1) * cs];
                if region.contains(p) {
                    pin.push(i);
                    xin.extend_from_slice(c);
                } else {
                    pout.push(i);
                    xout.extend_from_slice(c);
                }
            }
            let mut bad = false;
            let contains = |p: &[f64]| region.contains(p);
            let all = |_: &[usize]| true;
            let edge_ok = |e: &[usize]| region.edge_ok(vec3(&points[e[0]]), vec3(&points[e[1]]));
            let tri_ok = |t: &[usize]| region.triangle_ok(vec3(&points[t[0]]), vec3(&points[t[1]]), vec3(&points[t[2]]));
            if flags[0] {
                es = select_elements(&edges, &points, &contains, &edge_ok, 3, strict, &mut bad);
            }
            if flags[1] {
                ts = select_elements(&triangles, &points, &contains, &tri_ok, 3, strict, &mut bad);
            }
            if flags[2] {
                qs = select_elements(&quads, &points, &contains, &all, 3, strict, &mut bad);
            }
            if flags[3] {
                tets = select_elements(&tetrahedra, &points, &contains, &all, 3, strict, &mut bad);
            }
            if flags[4] {
                hs = select_elements(&hexahedra, &points, &contains, &all, 3, strict, &mut bad);
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

    #[test]
    fn sphere_and_angle_tests() {
        let s = Spheres { spheres: vec![([0.0, 0.0, 0.0], 1.0)], edge_angle: None, triangle_angle: None };
        assert!(s.contains(&[0.6, 0.8, 0.0])); // on the sphere: inside
        assert!(!s.contains(&[0.6, 0.8, 0.01]));
        // edges within 30° of x are refused: |cos| must be below cos 30° ≈ 0.866
        let s = Spheres { edge_angle: Some(([1.0, 0.0, 0.0], 30.0)), ..s };
        assert!(!s.edge_ok([0.0; 3], [1.0, 0.1, 0.0]));
        assert!(s.edge_ok([0.0; 3], [1.0, 1.0, 0.0]));
        // triangle (0,0,0) (1,0,0) (0,1,0): normal (p2−p0)×(p1−p0) = −z
        let s = Spheres { triangle_angle: Some(([0.0, 0.0, 1.0], 10.0)), ..s };
        assert!(s.triangle_ok([0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]));
        assert!(!s.triangle_ok([0.0; 3], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]));
    }

    /// The strip 0..5 of unit squares (as SphereROI.scn, positions from the state, triangles from
    /// the topology): one radius for two centres; triangles whose points are all in one of the
    /// spheres (strict) or whose centre is (not strict).
    #[test]
    fn scene_selection() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0  2 0 0  0 1 0  1 1 0  2 1 0")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 4  0 4 3  1 2 5  1 5 4")]);
        let a = add(&mut s, &f, Scene::ROOT, "SphereROI", &[("centers", "0 0 0  2 1 0"), ("radii", "1.01")]);
        let b = add(&mut s, &f, Scene::ROOT, "SphereROI", &[("centers", "1.5 0.5 0"), ("radii", "0.75"), ("strict", "0")]);
        let c = add(&mut s, &f, Scene::ROOT, "SphereROI", &[("centers", "0 0 0  1 1 1"), ("radii", "1 2 3")]);
        init_scene(&mut s).unwrap();
        let d = &s.entry(a).data;
        assert_eq!(d.reals("radii"), [1.01, 1.01]);
        assert_eq!(d.indices("indices"), [0, 1, 2, 3, 4, 5]);
        assert!(d.indices("indicesOut").is_empty());
        // strict: every point of each triangle is in a sphere (not the same one: 0 1 3 are in the
        // first, 2 4 5 in the second)
        assert_eq!(d.indices("triangleIndices"), [0, 1, 2, 3]);
        assert!(d.indices("triangleOutIndices").is_empty());
        let d = &s.entry(b).data;
        // centres (2/3, 1/3), (1/3, 2/3), (5/3, 1/3), (4/3, 2/3): the last two within 0.75
        assert_eq!(d.indices("triangleIndices"), [2, 3]);
        // points 1 2 4 5 at √0.5 ≈ 0.707 from the centre
        assert_eq!(d.indices("indices"), [1, 2, 4, 5]);
        let d = &s.entry(c).data;
        assert!(d.indices("indices").is_empty());
        assert!(s.messages.iter().any(|m| m.to_string().contains("2 sphere centers but 3 radii")), "{:?}", s.messages);
    }
}
