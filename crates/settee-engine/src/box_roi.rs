//! `BoxROI`: selects the points (and the elements) inside axis-aligned and oriented boxes.
//!
//! Follows SOFA's `BaseROI`/`BoxROI`:
//! * inputs: `position` (when not set: the rest positions of the node's first mechanical state,
//!   else the positions of the node's first loader, else the rest positions of the nearest
//!   ancestor's state), and the element lists (when not set and their `compute…` flag is on: the
//!   lists of the node's first topology);
//! * a point is inside an aligned box when `min ≤ p ≤ max` on every spatial axis (inclusive);
//!   boxes are normalised so that `min ≤ max`; no box at all means `0 0 0 1 1 1`;
//! * an element is inside when all its points are (`strict`, default) or when its centre (sum of
//!   its points divided by their number) is;
//! * outputs are computed at init (components linking `@box.indices` read them at their own init,
//!   which comes later) and again, with `doUpdate`, at the start of a step whose inputs changed
//!   (the default `position` is a live link to the context's rest positions).

// SOFA's `normalize` is `normalized`: unchanged when the norm is not above machine epsilon.
use settee_core::math::{add, cross, dot, normalized, scale, sub};
use settee_core::role::{self, Engine};
use settee_core::topology::group;
use settee_core::{component, Component, ComponentId, InitCtx, Layout, SimResult};

/// An oriented box prepared for point tests (SOFA's `computeOrientedBoxes`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrientedBox {
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

impl OrientedBox {
    /// From `p0 p1 p2 depth`.
    pub fn new(b: &[f64]) -> OrientedBox {
        let p0 = [b[0], b[1], b[2]];
        let p1 = [b[3], b[4], b[5]];
        let p2 = [b[6], b[7], b[8]];
        let depth = b[9];
        let normal = normalized(cross(sub(p1, p0), sub(p2, p0)));
        let p3 = add(p0, sub(p2, p1));
        let p6 = add(p2, scale(normal, depth));
        let plane0 = normalized(cross(sub(p1, p0), normal));
        let plane1 = normalized(cross(sub(p2, p3), sub(p6, p3)));
        let plane2 = normalized(cross(sub(p3, p0), normal));
        let plane3 = normalized(cross(sub(p2, p1), sub(p6, p2)));
        OrientedBox {
            p0,
            p2,
            normal,
            plane0,
            plane1,
            plane2,
            plane3,
            width: dot(sub(p2, p0), plane0).abs(),
            length: dot(sub(p2, p0), plane2).abs(),
            depth,
        }
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

/// The region: aligned boxes (normalised) and oriented boxes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Region {
    pub aligned: Vec<[f64; 6]>,
    pub oriented: Vec<OrientedBox>,
    /// Number of spatial coordinates tested (1, 2 or 3).
    pub dims: usize,
}

impl Region {
    /// True when `p` (its first `dims` coordinates) is inside one of the boxes.
    pub fn contains(&self, p: &[f64]) -> bool {
        let dims = self.dims.min(p.len()).min(3);
        if self.aligned.iter().any(|b| (0..dims).all(|i| !(p[i] < b[i] || p[i] > b[i + 3]))) {
            return true;
        }
        if dims == 3 {
            let q = [p[0], p[1], p[2]];
            return self.oriented.iter().any(|b| b.contains(q));
        }
        false
    }
}

/// Which elements of a list are inside: `(inside indices, outside indices)` (SOFA's `BaseROI`).
/// An element is inside when all its points are (`strict`) or its centre is, for `contains`, and
/// `accept` (a shape's extra condition: SphereROI's angles) holds. `dims` spatial coordinates.
pub(crate) fn select_elements<const K: usize>(
    elements: &[[usize; K]],
    points: &[Vec<f64>],
    contains: &dyn Fn(&[f64]) -> bool,
    accept: &dyn Fn(&[usize]) -> bool,
    dims: usize,
    strict: bool,
    bad: &mut bool,
) -> (Vec<usize>, Vec<usize>) {
    let mut inside = Vec::new();
    let mut outside = Vec::new();
    for (i, e) in elements.iter().enumerate() {
        let ok = if e.iter().any(|&v| v >= points.len()) {
            *bad = true;
            false
        } else if strict {
            e.iter().all(|&v| contains(&points[v]))
        } else {
            let mut c = vec![0.0; dims];
            for &v in e {
                for (cd, pv) in c.iter_mut().zip(&points[v]) {
                    *cd += *pv;
                }
            }
            for cd in &mut c {
                *cd /= K as f64;
            }
            contains(&c)
        };
        if ok && accept(e) {
            inside.push(i);
        } else {
            outside.push(i);
        }
    }
    (inside, outside)
}

fn select<const K: usize>(elements: &[[usize; K]], points: &[Vec<f64>], region: &Region, strict: bool, bad: &mut bool) -> (Vec<usize>, Vec<usize>) {
    select_elements(elements, points, &|p| region.contains(p), &|_| true, region.dims, strict, bad)
}

pub(crate) fn pick<const K: usize>(elements: &[[usize; K]], idx: &[usize]) -> Vec<usize> {
    idx.iter().flat_map(|&i| elements[i]).collect()
}

/// The element lists a `BaseROI` works on: each given list, else (when its `compute…` flag is
/// on) the list of the node's first topology.
pub(crate) struct RoiElements {
    pub edges: Vec<[usize; 2]>,
    pub triangles: Vec<[usize; 3]>,
    pub quads: Vec<[usize; 4]>,
    pub tetrahedra: Vec<[usize; 4]>,
    pub hexahedra: Vec<[usize; 8]>,
}

impl RoiElements {
    /// `lists`: edges, triangles, quads, tetrahedra, hexahedra as given (flat) and whether the
    /// scene gave them; `flags`: the `compute…` flags in the same order.
    pub(crate) fn gather(cx: &InitCtx, lists: [(&[usize], bool); 5], flags: [bool; 5]) -> RoiElements {
        let mut r = RoiElements {
            edges: group::<2>(lists[0].0),
            triangles: group::<3>(lists[1].0),
            quads: group::<4>(lists[2].0),
            tetrahedra: group::<4>(lists[3].0),
            hexahedra: group::<8>(lists[4].0),
        };
        let defaulted = |k: usize| !lists[k].1 && flags[k];
        if let Some(mesh) = cx.scene.find_local(cx.node(), role::TOPOLOGY).and_then(|t| cx.scene.mesh_of(t)) {
            if defaulted(0) {
                r.edges = mesh.edges.clone();
            }
            if defaulted(1) {
                r.triangles = mesh.triangles.clone();
            }
            if defaulted(2) {
                r.quads = mesh.quads.clone();
            }
            if defaulted(3) {
                r.tetrahedra = mesh.tetrahedra.clone();
            }
            if defaulted(4) {
                r.hexahedra = mesh.hexahedra.clone();
            }
        }
        r
    }
}

/// Finds the points, edges, triangles, quads, tetrahedra and hexahedra inside given boxes.
///
/// The BoxROI engine.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Rigid3d", "Vec6d"],
    template_rule = FromState,
    create = |args| BoxROI { layout: args.layout.unwrap_or(Layout::Vec3) },
    data = {
        /// axis-aligned boxes `xmin ymin zmin xmax ymax zmax` (default: one box 0 0 0 1 1 1 when no
        /// box is given)
        "box" as BOX: RealTuples(6),
        /// oriented boxes `p0 p1 p2 depth`: the parallelogram (p0, p1, p2, p0+p2-p1) extruded by
        /// depth/2 on each side
        orientedBox: RealTuples(10),
        /// rest positions of the points (default: the rest positions of the context mechanical state)
        position: Coords,
        /// edge topology (default: the node's topology)
        edges: IndexTuples(2),
        /// triangle topology (default: the node's topology)
        triangles: IndexTuples(3),
        /// quad topology (default: the node's topology)
        #[alias("quad")]
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
        #[alias("computeQuad")]
        computeQuads: Bool = "true",
        /// compute the tetrahedra inside the ROI
        computeTetrahedra: Bool = "true",
        /// compute the hexahedra inside the ROI
        computeHexahedra: Bool = "true",
        /// an element is inside when all its points are (else: when its centre is)
        strict: Bool = "true",
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
        #[alias("quadInROI")]
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
        /// draw the boxes (rendering only)
        #[alias("drawBoxes")]
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
pub struct BoxROI {
    layout: Layout,
}

impl BoxROI {
    /// The component whose Data feeds `position` when it is not set, and the Data name.
    pub(crate) fn position_source(cx: &InitCtx) -> Option<(ComponentId, &'static str)> {
        let node = cx.node();
        if let Some(ms) = cx.scene.find_local(node, role::MECHANICAL_STATE) {
            return Some((ms, "rest_position"));
        }
        if let Some(l) = cx.scene.find_local(node, role::LOADER) {
            return Some((l, "position"));
        }
        cx.scene.find_up(node, role::MECHANICAL_STATE).map(|ms| (ms, "rest_position"))
    }
}

impl Component for BoxROI {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        // Without `position`, the positions of the context are linked in, as SOFA's `setParent`
        // does: the selection follows them when they change (see `data_changed`).
        let mut warned = false;
        if !cx.data().is_given(Self::POSITION) {
            let Some((src, field)) = Self::position_source(cx) else {
                return Err(cx
                    .error("no positions: `position` is not set and there is no MechanicalObject or mesh loader in this node or above")
                    .hint("set `position=\"@dofs.rest_position\"` or add a MechanicalObject before the BoxROI"));
            };
            if cx.scene.entry(src).plays(role::MECHANICAL_STATE) && !cx.scene.entry(src).initialized {
                warned = true;
                cx.warn(format!(
                    "{} is declared after this BoxROI: its rest positions are not known yet and the selection is empty",
                    cx.scene.entry(src).label()
                ));
            }
            cx.scene.link_data(cx.id, "position", src, field)?;
        }
        self.select(cx, !warned)
    }

    /// SOFA's `doUpdate`: the selection is recomputed when an input changed.
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        if cx.data().get(Self::DO_UPDATE) {
            self.select(cx, false)?;
        }
        Ok(())
    }

    /// A topological change changes the inputs (the linked positions, the topology's lists): as
    /// SOFA's engine, the selection is recomputed from them with `doUpdate` (now, so that the
    /// components reading it see the selection of the changed mesh), and kept otherwise.
    fn topology_changed(
        &mut self,
        cx: &mut InitCtx,
        _topology: ComponentId,
        _changes: &[settee_core::topology_change::TopologyChange],
    ) -> SimResult<settee_core::topology_change::Follow> {
        if cx.data().get(Self::DO_UPDATE) {
            cx.scene.refresh_links(cx.id);
            self.select(cx, false)?;
        }
        Ok(settee_core::topology_change::Follow::Followed)
    }
}

impl BoxROI {
    /// Computes every output from the inputs; `warn_empty` reports an empty position list.
    fn select(&mut self, cx: &mut InitCtx, warn_empty: bool) -> SimResult {
        let layout = self.layout;
        let (cs, dims) = (layout.coord_size(), layout.spatial_size());
        let positions: Vec<f64> = cx.data().get(Self::POSITION).to_vec();
        let points: Vec<Vec<f64>> = positions.chunks_exact(cs).map(|c| c[..dims].to_vec()).collect();

        // Topology inputs.
        let d = cx.data();
        let flags = [
            d.get(Self::COMPUTE_EDGES),
            d.get(Self::COMPUTE_TRIANGLES),
            d.get(Self::COMPUTE_QUADS),
            d.get(Self::COMPUTE_TETRAHEDRA),
            d.get(Self::COMPUTE_HEXAHEDRA),
        ];
        let strict = d.get(Self::STRICT);
        let mut edges = group::<2>(d.get(Self::EDGES));
        let mut triangles = group::<3>(d.get(Self::TRIANGLES));
        let mut quads = group::<4>(d.get(Self::QUADS));
        let mut tetrahedra = group::<4>(d.get(Self::TETRAHEDRA));
        let mut hexahedra = group::<8>(d.get(Self::HEXAHEDRA));
        let set = [
            d.is_given(Self::EDGES),
            d.is_given(Self::TRIANGLES),
            d.is_given(Self::QUADS),
            d.is_given(Self::TETRAHEDRA),
            d.is_given(Self::HEXAHEDRA),
        ];
        if let Some(mesh) = cx.scene.find_local(cx.node(), role::TOPOLOGY).and_then(|t| cx.scene.mesh_of(t)) {
            if !set[0] && flags[0] {
                edges = mesh.edges.clone();
            }
            if !set[1] && flags[1] {
                triangles = mesh.triangles.clone();
            }
            if !set[2] && flags[2] {
                quads = mesh.quads.clone();
            }
            if !set[3] && flags[3] {
                tetrahedra = mesh.tetrahedra.clone();
            }
            if !set[4] && flags[4] {
                hexahedra = mesh.hexahedra.clone();
            }
        }

        // Boxes.
        let d = cx.data();
        let mut boxes: Vec<[f64; 6]> = d.get(Self::BOX).chunks_exact(6).map(|b| [b[0], b[1], b[2], b[3], b[4], b[5]]).collect();
        if !d.is_given(Self::BOX) && !d.is_given(Self::ORIENTED_BOX) {
            boxes.push([0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        }
        for b in &mut boxes {
            for a in 0..3 {
                if b[a] > b[a + 3] {
                    b.swap(a, a + 3);
                }
            }
        }
        let oriented: Vec<OrientedBox> =
            if dims == 3 { d.get(Self::ORIENTED_BOX).chunks_exact(10).map(OrientedBox::new).collect() } else { Vec::new() };
        if dims != 3 && d.is_given(Self::ORIENTED_BOX) {
            cx.warn(format!("oriented boxes are not supported in {dims}D"));
        }
        let region = Region { aligned: boxes.clone(), oriented, dims };
        let out = cx.data_mut();
        out.put(Self::BOX, boxes.iter().flatten().copied().collect());

        // Selection (SOFA clears every output first).
        let (mut pin, mut pout) = (Vec::new(), Vec::new());
        let (mut xin, mut xout) = (Vec::new(), Vec::new());
        let selecting = !points.is_empty() && (!region.aligned.is_empty() || !region.oriented.is_empty());
        if points.is_empty() && warn_empty {
            cx.warn("no rest positions defined yet: the selection is empty");
        }
        let mut bad = false;
        let empty = (Vec::new(), Vec::new());
        if selecting {
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
        }
        let run = |on: bool| selecting && on;
        let (ein, eout) = if run(flags[0]) { select(&edges, &points, &region, strict, &mut bad) } else { empty.clone() };
        let (tin, tout) = if run(flags[1]) { select(&triangles, &points, &region, strict, &mut bad) } else { empty.clone() };
        let (qin, _) = if run(flags[2]) { select(&quads, &points, &region, strict, &mut bad) } else { empty.clone() };
        let (tetin, tetout) = if run(flags[3]) { select(&tetrahedra, &points, &region, strict, &mut bad) } else { empty.clone() };
        let (hin, _) = if run(flags[4]) { select(&hexahedra, &points, &region, strict, &mut bad) } else { empty.clone() };
        if bad {
            cx.warn("some elements refer to points beyond the positions: they are treated as outside");
        }
        if selecting && warn_empty && pin.is_empty() {
            let mut lo = [f64::INFINITY; 3];
            let mut hi = [f64::NEG_INFINITY; 3];
            for p in &points {
                for (a, x) in p.iter().enumerate() {
                    lo[a] = lo[a].min(*x);
                    hi[a] = hi[a].max(*x);
                }
            }
            let fmt = |v: &[f64]| v[..dims].iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(" ");
            cx.warn(format!(
                "the box{} select{} none of the {} points (the points span {} to {}): every output is empty",
                if region.aligned.len() + region.oriented.len() == 1 { "" } else { "es" },
                if region.aligned.len() + region.oriented.len() == 1 { "s" } else { "" },
                points.len(),
                fmt(&lo),
                fmt(&hi)
            ));
        }

        let out = cx.data_mut();
        out.put(Self::NB_INDICES, pin.len() as i64);
        out.put(Self::POINTS_IN_ROI, xin);
        out.put(Self::POINTS_OUT_ROI, xout);
        out.put(Self::INDICES, pin);
        out.put(Self::INDICES_OUT, pout);
        out.put(Self::EDGES_IN_ROI, pick(&edges, &ein));
        out.put(Self::EDGES_OUT_ROI, pick(&edges, &eout));
        out.put(Self::EDGE_INDICES, ein);
        out.put(Self::EDGE_OUT_INDICES, eout);
        out.put(Self::TRIANGLES_IN_ROI, pick(&triangles, &tin));
        out.put(Self::TRIANGLES_OUT_ROI, pick(&triangles, &tout));
        out.put(Self::TRIANGLE_INDICES, tin);
        out.put(Self::TRIANGLE_OUT_INDICES, tout);
        out.put(Self::QUADS_IN_ROI, pick(&quads, &qin));
        out.put(Self::QUAD_INDICES, qin);
        out.put(Self::TETRAHEDRA_IN_ROI, pick(&tetrahedra, &tetin));
        out.put(Self::TETRAHEDRA_OUT_ROI, pick(&tetrahedra, &tetout));
        out.put(Self::TETRAHEDRON_INDICES, tetin);
        out.put(Self::TETRAHEDRON_OUT_INDICES, tetout);
        out.put(Self::HEXAHEDRA_IN_ROI, pick(&hexahedra, &hin));
        out.put(Self::HEXAHEDRON_INDICES, hin);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{attrs, factory, init_scene};
    use settee_core::Scene;
    use settee_topology::testing::FEMBAR_GRID;

    #[test]
    fn fembar_box_selects_the_z0_layer() {
        let f = factory();
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        f.create(&mut scene, Scene::ROOT, "MechanicalObject", None, attrs(&[("name", "DoFs")]), None, dir).unwrap();
        f.create(&mut scene, Scene::ROOT, "RegularGridTopology", None, attrs(FEMBAR_GRID), None, dir).unwrap();
        let b =
            f.create(&mut scene, Scene::ROOT, "BoxROI", None, attrs(&[("name", "box"), ("box", "-10 -1 -0.0001  -5 4 0.0001")]), None, dir).unwrap();
        assert_eq!(scene.entry(b).template, "Vec3d");
        assert!(scene.messages.is_empty(), "{:?}", scene.messages);
        init_scene(&mut scene).unwrap();
        let d = &scene.entry(b).data;
        assert_eq!(d.indices("indices"), (0..16).collect::<Vec<_>>().as_slice());
        assert_eq!(d.int("nbIndices"), 16);
        assert_eq!(d.indices("indicesOut").len(), 320 - 16);
        assert_eq!(d.reals("pointsInROI").len(), 48);
        assert_eq!(&d.reals("pointsInROI")[3..6], &[-8.0, 0.0, 0.0]);
        // the 9 quads of the z = 0 face, the 24 + 9 … edges on it, no hexahedron (strict)
        assert_eq!(d.indices("quadIndices"), (0..9).collect::<Vec<_>>().as_slice());
        assert!(d.indices("hexahedronIndices").is_empty());
        assert_eq!(d.indices("triangleIndices").len(), 18);
        assert_eq!(d.indices("edgeIndices").len(), 24 + 9);
        assert!(scene.messages.is_empty(), "{:?}", scene.messages);
    }

    #[test]
    fn a_box_that_selects_nothing_is_reported_at_init() {
        let f = factory();
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        f.create(&mut scene, Scene::ROOT, "MechanicalObject", None, attrs(&[("name", "DoFs")]), None, dir).unwrap();
        f.create(&mut scene, Scene::ROOT, "RegularGridTopology", None, attrs(FEMBAR_GRID), None, dir).unwrap();
        let b = f.create(&mut scene, Scene::ROOT, "BoxROI", None, attrs(&[("name", "box"), ("box", "10 10 10  11 11 11")]), None, dir).unwrap();
        init_scene(&mut scene).unwrap();
        assert!(scene.entry(b).data.indices("indices").is_empty());
        let w: Vec<String> = scene.messages.iter().filter(|m| m.severity == settee_core::Severity::Warning).map(|m| m.to_string()).collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("BoxROI 'box'") && w[0].contains("selects none of the 320 points (the points span -9 0 0 to -6 3 19)"), "{w:?}");
        // A box that selects something says nothing (checked in the other tests), and the
        // selection recomputed while the scene runs does not repeat the warning.
        scene.with_taken(b, |obj, scene| obj.data_changed(&mut InitCtx { scene, id: b })).unwrap();
        assert_eq!(scene.messages.len(), 1);
    }

    #[test]
    fn non_strict_elements_defaults_and_swapped_boxes() {
        let f = factory();
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        f.create(&mut scene, Scene::ROOT, "MechanicalObject", None, attrs(&[("name", "DoFs")]), None, dir).unwrap();
        f.create(&mut scene, Scene::ROOT, "RegularGridTopology", None, attrs(FEMBAR_GRID), None, dir).unwrap();
        // reversed corners, centres of the first hexahedron layer only
        let b = f.create(&mut scene, Scene::ROOT, "BoxROI", None, attrs(&[("box", "-5 4 0.6  -10 -1 0.4"), ("strict", "false")]), None, dir).unwrap();
        // default box 0 0 0 1 1 1: nothing of the grid (x in [-9,-6])
        let def = f.create(&mut scene, Scene::ROOT, "BoxROI", None, attrs(&[]), None, dir).unwrap();
        // oriented box: the plane z = 19 (p0 p1 p2 span it), depth 0.2
        let ob = f.create(&mut scene, Scene::ROOT, "BoxROI", None, attrs(&[("orientedBox", "-9 0 19  -6 0 19  -6 3 19  0.2")]), None, dir).unwrap();
        init_scene(&mut scene).unwrap();

        let d = &scene.entry(b).data;
        assert!(d.indices("indices").is_empty());
        assert_eq!(d.indices("hexahedronIndices"), (0..9).collect::<Vec<_>>().as_slice());
        assert_eq!(d.reals("box"), &[-10.0, -1.0, 0.4, -5.0, 4.0, 0.6]);

        let d = &scene.entry(def).data;
        assert!(d.indices("indices").is_empty());
        assert_eq!(d.reals("box"), &[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);

        let d = &scene.entry(ob).data;
        assert_eq!(d.indices("indices"), (304..320).collect::<Vec<_>>().as_slice());
    }

    #[test]
    fn explicit_positions_and_missing_state() {
        let f = factory();
        let dir = std::path::Path::new(".");
        let mut scene = Scene::new("root");
        let b = f
            .create(
                &mut scene,
                Scene::ROOT,
                "BoxROI",
                None,
                attrs(&[("position", "0 0 0  2 0 0  0.5 0.5 0.5"), ("box", "-0.1 -0.1 -0.1 1 1 1"), ("edges", "0 1 0 2")]),
                None,
                dir,
            )
            .unwrap();
        init_scene(&mut scene).unwrap();
        let d = &scene.entry(b).data;
        assert_eq!(d.indices("indices"), &[0, 2]);
        assert_eq!(d.indices("edgeIndices"), &[1]);
        assert_eq!(d.indices("edgesInROI"), &[0, 2]);

        let mut scene = Scene::new("root");
        f.create(&mut scene, Scene::ROOT, "BoxROI", None, attrs(&[]), None, dir).unwrap();
        let e = init_scene(&mut scene).unwrap_err();
        assert!(e.diagnostic().hint.is_some());
    }

    #[test]
    fn points_on_the_box_faces_are_inside() {
        let r = Region { aligned: vec![[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]], oriented: vec![], dims: 3 };
        assert!(r.contains(&[1.0, 0.0, 1.0]));
        assert!(!r.contains(&[1.0 + 1e-15, 0.5, 0.5]));
        let r2 = Region { dims: 2, ..r.clone() };
        assert!(r2.contains(&[0.5, 0.5]));
    }
}
