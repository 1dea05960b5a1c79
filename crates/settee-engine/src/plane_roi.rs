//! `PlaneROI`: the points and elements inside thick parallelograms ("planes").
//!
//! Follows SOFA's `PlaneROI` (Vec3d, Rigid3d):
//! * a plane `p0 p1 p2 depth` is the parallelogram (p0, p1, p2, p0 + p2 − p1) extruded by depth/2
//!   on both sides; a point is inside when its distances to the four side planes and to the mid
//!   plane are within the half-extents (bounds inclusive); the geometry is computed as SOFA does
//!   (side normals from the corners moved by depth/2 along the normal), so that points on the
//!   bounds fall on the same side;
//! * the default plane is all zeros: every normal is then zero and every point is inside;
//! * inputs: `position` (alias `rest_position`; when not set: the `rest_position` of the first
//!   state of the component's template in the node or above, else the `position` of the nearest
//!   loader), `edges`, `triangles`, `tetrahedra` (when not set, and only when `edges` or
//!   `triangles` is not set, the lists of the context topology whose `compute…` flag is on);
//! * an element is inside when all its points are inside one same plane;
//! * computed at init and again when an input changes.

use settee_core::math::{add, cross, dot, normalized, scale, sub};
use settee_core::role::{self, Engine};
use settee_core::topology::group;
use settee_core::{component, Component, InitCtx, Layout, SimResult};

use crate::subset_topology::context_state_of_template;

/// One plane prepared for point tests (SOFA's `computePlane`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    p0: [f64; 3],
    p2: [f64; 3],
    normal: [f64; 3],
    plane0: [f64; 3],
    plane1: [f64; 3],
    plane2: [f64; 3],
    plane3: [f64; 3],
    width: f64,
    length: f64,
    depth: f64,
}

impl Plane {
    /// From `p0 p1 p2 depth`.
    pub fn new(v: &[f64]) -> Plane {
        let p0 = [v[0], v[1], v[2]];
        let p1 = [v[3], v[4], v[5]];
        let p2 = [v[6], v[7], v[8]];
        let depth = v[9];
        let normal = normalized(cross(sub(p1, p0), sub(p2, p0)));
        let p3 = add(p0, sub(p2, p1));
        let p4 = add(p0, scale(normal, depth / 2.0));
        let p6 = add(p2, scale(normal, depth / 2.0));
        let plane0 = normalized(cross(sub(p1, p0), sub(p4, p0)));
        let plane1 = normalized(cross(sub(p2, p3), sub(p6, p3)));
        let plane2 = normalized(cross(sub(p3, p0), sub(p4, p0)));
        let plane3 = normalized(cross(sub(p2, p1), sub(p6, p2)));
        Plane { p0, p2, normal, plane0, plane1, plane2, plane3, width: dot(sub(p2, p0), plane0).abs(), length: dot(sub(p2, p0), plane2).abs(), depth }
    }

    pub fn contains(&self, p: [f64; 3]) -> bool {
        let pv0 = sub(p, self.p0);
        let pv1 = sub(p, self.p2);
        dot(pv0, self.plane0).abs() <= self.width
            && dot(pv1, self.plane1).abs() <= self.width
            && dot(pv0, self.plane2).abs() <= self.length
            && dot(pv1, self.plane3).abs() <= self.length
            && dot(pv0, self.normal).abs() <= (self.depth / 2.0).abs()
    }
}

/// The indices of the elements whose points all lie in one same plane.
fn inside<const K: usize>(elements: &[[usize; K]], planes: &[Plane], pos: &dyn Fn(usize) -> [f64; 3]) -> Vec<usize> {
    (0..elements.len()).filter(|&i| planes.iter().any(|pl| elements[i].iter().all(|&v| pl.contains(pos(v))))).collect()
}

fn pick<const K: usize>(elements: &[[usize; K]], idx: &[usize]) -> Vec<usize> {
    idx.iter().flat_map(|&i| elements[i]).collect()
}

/// Find the primitives (vertex/edge/triangle/tetrahedron) inside a given plane.
///
/// The PlaneROI engine.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d", "Rigid3d"],
    template_rule = FromStateWhenNotGiven,
    create = |args| PlaneROI { layout: args.layout.unwrap_or(Layout::Vec3) },
    data = {
        /// List of planes defined by 3 points and a depth distance
        plane: RealTuples(10) = "0 0 0 0 0 0 0 0 0 0",
        /// Rest position coordinates of the degrees of freedom (default: the context state's rest positions)
        #[alias("rest_position")]
        position: Coords,
        /// Edge Topology (default: the context topology's)
        edges: IndexTuples(2),
        /// Triangle Topology (default: the context topology's)
        triangles: IndexTuples(3),
        /// Tetrahedron Topology (default: the context topology's)
        tetrahedra: IndexTuples(4),
        /// If true, will compute edge list and index list inside the ROI.
        computeEdges: Bool = "true",
        /// If true, will compute triangle list and index list inside the ROI.
        computeTriangles: Bool = "true",
        /// If true, will compute tetrahedra list and index list inside the ROI.
        computeTetrahedra: Bool = "true",
        /// output: Indices of the points contained in the ROI
        indices: Indices = "0",
        /// output: Indices of the edges contained in the ROI
        edgeIndices: Indices,
        /// output: Indices of the triangles contained in the ROI
        triangleIndices: Indices,
        /// output: Indices of the tetrahedra contained in the ROI
        tetrahedronIndices: Indices,
        /// output: Points contained in the ROI
        pointsInROI: Coords,
        /// output: Edges contained in the ROI
        edgesInROI: IndexTuples(2),
        /// output: Triangles contained in the ROI
        trianglesInROI: IndexTuples(3),
        /// output: Tetrahedra contained in the ROI
        tetrahedraInROI: IndexTuples(4),
        /// Draw Box(es) (rendering only)
        #[alias("isVisible")]
        drawBoxes: Bool = "false",
        /// Draw Points (rendering only)
        drawPoints: Bool = "false",
        /// Draw Edges (rendering only)
        drawEdges: Bool = "false",
        /// Draw Triangles (rendering only)
        drawTriangles: Bool = "false",
        /// Draw Tetrahedra (rendering only)
        drawTetrahedra: Bool = "false",
        /// rendering size for box and topological elements (rendering only)
        drawSize: Real = "1",
    },
)]
#[derive(Clone)]
pub struct PlaneROI {
    layout: Layout,
}

impl Component for PlaneROI {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        if !cx.data().is_given(Self::POSITION) {
            if let Some(ms) = context_state_of_template(cx, self.layout.name()) {
                cx.scene.link_data(cx.id, "position", ms, "rest_position")?;
            } else if let Some(l) = cx.scene.find_up(cx.node(), role::LOADER) {
                cx.scene.link_data(cx.id, "position", l, "position")?;
            }
        }
        let d = cx.data();
        // As in SOFA, the tetrahedra are looked for only when the edges or the triangles are.
        if !d.is_given(Self::EDGES) || !d.is_given(Self::TRIANGLES) {
            let wanted = [
                (!d.is_given(Self::EDGES) && d.get(Self::COMPUTE_EDGES), "edges"),
                (!d.is_given(Self::TRIANGLES) && d.get(Self::COMPUTE_TRIANGLES), "triangles"),
                (!d.is_given(Self::TETRAHEDRA) && d.get(Self::COMPUTE_TETRAHEDRA), "tetrahedra"),
            ];
            if let Some(topo) = cx.scene.find_up(cx.node(), role::TOPOLOGY) {
                for (_, name) in wanted.iter().filter(|w| w.0) {
                    if cx.scene.entry(topo).data.index_of(name).is_some() {
                        cx.scene.link_data(cx.id, name, topo, name)?;
                    }
                }
            }
        }
        self.update(cx)
    }

    /// A DataEngine: its outputs follow its inputs.
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

impl PlaneROI {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let planes: Vec<Plane> = d.get(Self::PLANE).chunks_exact(10).map(Plane::new).collect();
        if planes.is_empty() {
            return Ok(());
        }
        let cs = self.layout.coord_size();
        let coords = d.get(Self::POSITION);
        let n = coords.len() / cs;
        let pos = |i: usize| [coords[i * cs], coords[i * cs + 1], coords[i * cs + 2]];
        let edges = group::<2>(d.get(Self::EDGES));
        let triangles = group::<3>(d.get(Self::TRIANGLES));
        let tetrahedra = group::<4>(d.get(Self::TETRAHEDRA));
        let flags = [d.get(Self::COMPUTE_EDGES), d.get(Self::COMPUTE_TRIANGLES), d.get(Self::COMPUTE_TETRAHEDRA)];
        let beyond = |e: &[usize]| e.iter().any(|&v| v >= n);
        if (flags[0] && edges.iter().any(|e| beyond(e)))
            || (flags[1] && triangles.iter().any(|e| beyond(e)))
            || (flags[2] && tetrahedra.iter().any(|e| beyond(e)))
        {
            return Err(cx
                .error(format!("an element refers to a point beyond the {n} positions"))
                .hint("the element lists must refer to points of `position`"));
        }
        let indices: Vec<usize> = (0..n).filter(|&i| planes.iter().any(|pl| pl.contains(pos(i)))).collect();
        let points: Vec<f64> = indices.iter().flat_map(|&i| coords[i * cs..(i + 1) * cs].to_vec()).collect();
        let ein = if flags[0] { inside(&edges, &planes, &pos) } else { Vec::new() };
        let tin = if flags[1] { inside(&triangles, &planes, &pos) } else { Vec::new() };
        let tetin = if flags[2] { inside(&tetrahedra, &planes, &pos) } else { Vec::new() };
        let (e_roi, t_roi, tet_roi) = (pick(&edges, &ein), pick(&triangles, &tin), pick(&tetrahedra, &tetin));
        let out = cx.data_mut();
        out.put(Self::INDICES, indices);
        out.put(Self::POINTS_IN_ROI, points);
        out.put(Self::EDGE_INDICES, ein);
        out.put(Self::EDGES_IN_ROI, e_roi);
        out.put(Self::TRIANGLE_INDICES, tin);
        out.put(Self::TRIANGLES_IN_ROI, t_roi);
        out.put(Self::TETRAHEDRON_INDICES, tetin);
        out.put(Self::TETRAHEDRA_IN_ROI, tet_roi);
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

    /// The unit square of z = 0 (p0 = origin, p1 = (1,0,0), p2 = (1,1,0)), 0.2 thick: points
    /// inside within |z| ≤ 0.1, bounds inclusive.
    #[test]
    fn thick_square() {
        let pl = Plane::new(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.2]);
        assert!(pl.contains([0.5, 0.5, 0.0]));
        assert!(pl.contains([1.0, 1.0, 0.1]));
        assert!(pl.contains([0.0, 0.0, -0.1]));
        assert!(!pl.contains([0.5, 0.5, 0.1001]));
        assert!(!pl.contains([1.0001, 0.5, 0.0]));
        assert!(!pl.contains([0.5, -0.0001, 0.0]));
        // a slanted parallelogram: (0,0) (1,0) (2,1) (1,1)
        let sl = Plane::new(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 1.0, 0.0, 1.0]);
        assert!(sl.contains([1.5, 0.9, 0.0]));
        assert!(!sl.contains([0.2, 0.9, 0.0]));
        // the default plane (all zeros) holds every point
        assert!(Plane::new(&[0.0; 10]).contains([5.0, -3.0, 2.0]));
    }

    /// In a scene: rest positions of the state, triangles of the topology; the triangles whose
    /// three points lie in the plane x ∈ [0, 1], y ∈ [0, 1], |z| ≤ 0.1.
    #[test]
    fn scene_selection() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0  2 0 0  0 1 0  1 1 0  2 1 0")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 4  0 4 3  1 2 5  1 5 4")]);
        let e = add(&mut s, &f, Scene::ROOT, "PlaneROI", &[("plane", "0 0 0 1 0 0 1 1 0 0.2"), ("computeEdges", "0")]);
        let all = add(&mut s, &f, Scene::ROOT, "PlaneROI", &[("computeTriangles", "false")]);
        init_scene(&mut s).unwrap();
        let d = &s.entry(e).data;
        assert_eq!(d.indices("indices"), [0, 1, 3, 4]);
        assert_eq!(d.indices("triangleIndices"), [0, 1]);
        assert_eq!(d.indices("trianglesInROI"), [0, 1, 4, 0, 4, 3]);
        assert!(d.indices("edgeIndices").is_empty());
        let d = &s.entry(all).data;
        assert_eq!(d.indices("indices"), [0, 1, 2, 3, 4, 5]);
        assert!(d.indices("triangleIndices").is_empty());
    }
}
