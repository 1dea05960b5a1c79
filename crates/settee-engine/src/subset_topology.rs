//! `SubsetTopology`: the points and elements of a mesh inside boxes or spheres, as lists ready to
//! build a sub-mesh (optionally renumbered, `localIndices`).
//!
//! Follows SOFA's `SubsetTopology` (Vec3d, Rigid3d):
//! * inputs: `rest_position` (when not set: the `position` of the first mechanical state of the
//!   component's template in the node or above; SOFA's fallback to a loader's `rest_position`
//!   finds nothing, loaders having no such Data), `edges`, `triangles`, `tetrahedra` (when not
//!   set: the lists of the context topology), `quads` and `hexahedra` (never defaulted);
//! * the region: spheres (`centers`, `radii`) when `centers` is given at init, else the boxes
//!   (`box`, normalised so that min ≤ max; default `0 0 0 1 1 1`); a point is inside a box when
//!   `min ≤ p ≤ max` on the three axes, inside a sphere when `|p − c| ≤ r`; an element is inside
//!   when all its points are inside one same box or sphere;
//! * every element lands in the `…InROI` or the `…OutROI` list, in input order;
//! * `localIndices`: the points are renumbered per output mesh. The border points (the inside
//!   points of the triangles, or of the tetrahedra when there are some, that straddle the first
//!   region) come first in both point lists, by increasing index; then the inside points follow
//!   in `pointsInROI` and the outside points in `pointsOutROI`; the elements are written with
//!   these numbers; `nbrborder` counts the border points;
//! * `tetrahedraInput`: the tetrahedra listed there (instead of those inside the region) form the
//!   inside mesh, their points listed as first met (appended to `indices`, which keeps the points
//!   found inside the region, as in SOFA);
//! * computed at init and again when an input changes (and as soon as parsed, when
//!   `rest_position` is given: SOFA computes when the outputs are first read, which may be
//!   while the scene loads).
//!
//! One difference: SOFA never clears `quadIndices` and `hexahedronIndices` between two updates
//! (they grow at each one); here every output is replaced.

use settee_core::role::{self, Engine};
use settee_core::topology::group;
use settee_core::{component, Component, ComponentId, InitCtx, Layout, SimResult};

/// The region: boxes `xmin ymin zmin xmax ymax zmax` (normalised) or spheres.
#[derive(Clone, Debug, PartialEq)]
pub enum Region {
    Boxes(Vec<[f64; 6]>),
    Spheres(Vec<([f64; 3], f64)>),
}

impl Region {
    fn len(&self) -> usize {
        match self {
            Region::Boxes(b) => b.len(),
            Region::Spheres(s) => s.len(),
        }
    }

    /// Whether `p` is inside the region number `k`.
    pub fn contains(&self, k: usize, p: [f64; 3]) -> bool {
        match self {
            Region::Boxes(b) => {
                let b = &b[k];
                p[0] >= b[0] && p[0] <= b[3] && p[1] >= b[1] && p[1] <= b[4] && p[2] >= b[2] && p[2] <= b[5]
            }
            Region::Spheres(s) => {
                let (c, r) = s[k];
                let d = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
                (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() <= r
            }
        }
    }
}

/// The mesh given to the selection; `points` are the spatial parts of the coordinates.
pub struct SubsetInput<'a> {
    pub coords: &'a [f64],
    pub coord_size: usize,
    pub edges: &'a [[usize; 2]],
    pub triangles: &'a [[usize; 3]],
    pub quads: &'a [[usize; 4]],
    pub tetrahedra: &'a [[usize; 4]],
    pub hexahedra: &'a [[usize; 8]],
    /// `tetrahedraInput` when given.
    pub tetrahedra_input: Option<&'a [usize]>,
    pub local: bool,
}

/// Every output list, elements flattened.
#[derive(Debug, Default, PartialEq)]
pub struct SubsetOutput {
    pub indices: Vec<usize>,
    pub points_in: Vec<f64>,
    pub points_out: Vec<f64>,
    pub nbrborder: usize,
    pub edge_indices: Vec<usize>,
    pub edges_in: Vec<usize>,
    pub edges_out: Vec<usize>,
    pub triangle_indices: Vec<usize>,
    pub triangles_in: Vec<usize>,
    pub triangles_out: Vec<usize>,
    pub quad_indices: Vec<usize>,
    pub quads_in: Vec<usize>,
    pub quads_out: Vec<usize>,
    pub tetrahedron_indices: Vec<usize>,
    pub tetrahedra_in: Vec<usize>,
    pub tetrahedra_out: Vec<usize>,
    pub hexahedron_indices: Vec<usize>,
    pub hexahedra_in: Vec<usize>,
    pub hexahedra_out: Vec<usize>,
}

/// Sorts the elements of one list into the inside and outside lists (renumbered through `map`).
fn split<const K: usize>(
    elements: &[[usize; K]],
    inside: impl Fn(&[usize; K]) -> bool,
    map: Option<&[usize]>,
    idx: &mut Vec<usize>,
    ins: &mut Vec<usize>,
    outs: &mut Vec<usize>,
) {
    for (i, e) in elements.iter().enumerate() {
        let renumbered = e.iter().map(|&v| map.map_or(v, |m| m[v]));
        if inside(e) {
            idx.push(i);
            ins.extend(renumbered);
        } else {
            outs.extend(renumbered);
        }
    }
}

/// The selection; `Err` names an element referring to a point beyond the positions.
pub fn subset(input: &SubsetInput, region: &Region) -> Result<SubsetOutput, String> {
    let cs = input.coord_size;
    let n = input.coords.len() / cs;
    let coord = |i: usize| &input.coords[i * cs..(i + 1) * cs];
    let pos = |i: usize| [input.coords[i * cs], input.coords[i * cs + 1], input.coords[i * cs + 2]];
    check("edge", input.edges, n)?;
    check("triangle", input.triangles, n)?;
    check("quad", input.quads, n)?;
    check("tetrahedron", input.tetrahedra, n)?;
    check("hexahedron", input.hexahedra, n)?;

    let rois = region.len();
    let point_in = |i: usize| (0..rois).any(|k| region.contains(k, pos(i)));
    let element_in = |e: &[usize]| (0..rois).any(|k| e.iter().all(|&v| region.contains(k, pos(v))));
    let mut out = SubsetOutput::default();

    // Local numbering: the border points of the first region first.
    let mut local = vec![0usize; if input.local { n } else { 0 }];
    let mut border = vec![false; if input.local { n } else { 0 }];
    if input.local {
        let mut mark = |e: &[usize]| {
            if rois == 0 {
                return;
            }
            let inside: Vec<bool> = e.iter().map(|&v| region.contains(0, pos(v))).collect();
            if inside.contains(&true) && inside.contains(&false) {
                for (&v, &ok) in e.iter().zip(&inside) {
                    if ok {
                        border[v] = true;
                    }
                }
            }
        };
        if input.tetrahedra.is_empty() {
            input.triangles.iter().for_each(|t| mark(t));
        } else {
            input.tetrahedra.iter().for_each(|t| mark(t));
        }
        let mut rank = 0;
        for i in 0..n {
            if border[i] {
                local[i] = rank;
                out.indices.push(i);
                out.points_in.extend_from_slice(coord(i));
                out.points_out.extend_from_slice(coord(i));
                rank += 1;
            }
        }
        out.nbrborder = rank;
    }

    let (mut next_in, mut next_out) = (out.nbrborder, out.nbrborder);
    for i in 0..n {
        if input.local && border[i] {
            continue;
        }
        if point_in(i) {
            out.indices.push(i);
            out.points_in.extend_from_slice(coord(i));
            if input.local {
                local[i] = next_in;
                next_in += 1;
            }
        } else {
            out.points_out.extend_from_slice(coord(i));
            if input.local {
                local[i] = next_out;
                next_out += 1;
            }
        }
    }

    let map = input.local.then_some(local.as_slice());
    split(input.edges, |e| element_in(e), map, &mut out.edge_indices, &mut out.edges_in, &mut out.edges_out);
    split(input.triangles, |e| element_in(e), map, &mut out.triangle_indices, &mut out.triangles_in, &mut out.triangles_out);
    split(input.quads, |e| element_in(e), map, &mut out.quad_indices, &mut out.quads_in, &mut out.quads_out);
    match input.tetrahedra_input {
        None => split(input.tetrahedra, |e| element_in(e), map, &mut out.tetrahedron_indices, &mut out.tetrahedra_in, &mut out.tetrahedra_out),
        Some(chosen) => {
            // The listed tetrahedra are the inside mesh; its points and those of the others are
            // listed (and numbered, with `localIndices`) as first met.
            out.points_in.clear();
            out.points_out.clear();
            let mut seen_in = vec![false; n];
            let mut seen_out = vec![false; n];
            let mut local_out = vec![0usize; n];
            let (mut next_in, mut next_out) = (0, 0);
            for (i, t) in input.tetrahedra.iter().enumerate() {
                let mut t = *t;
                if chosen.contains(&i) {
                    for v in &mut t {
                        if !seen_in[*v] {
                            seen_in[*v] = true;
                            out.indices.push(*v);
                            out.points_in.extend_from_slice(coord(*v));
                            if input.local {
                                local[*v] = next_in;
                                next_in += 1;
                            }
                        }
                        if input.local {
                            *v = local[*v];
                        }
                    }
                    out.tetrahedron_indices.push(i);
                    out.tetrahedra_in.extend(t);
                } else {
                    for v in &mut t {
                        if !seen_out[*v] {
                            seen_out[*v] = true;
                            out.points_out.extend_from_slice(coord(*v));
                            if input.local {
                                local_out[*v] = next_out;
                                next_out += 1;
                            }
                        }
                        if input.local {
                            *v = local_out[*v];
                        }
                    }
                    out.tetrahedra_out.extend(t);
                }
            }
        }
    }
    let map = input.local.then_some(local.as_slice());
    split(input.hexahedra, |e| element_in(e), map, &mut out.hexahedron_indices, &mut out.hexahedra_in, &mut out.hexahedra_out);
    Ok(out)
}

fn check<const K: usize>(what: &str, elements: &[[usize; K]], n: usize) -> Result<(), String> {
    match elements.iter().enumerate().find(|(_, e)| e.iter().any(|&v| v >= n)) {
        Some((i, e)) => Err(format!("{what} {i} ({}) refers to a point beyond the {n} rest positions", e.map(|v| v.to_string()).join(" "))),
        None => Ok(()),
    }
}

/// Engine used to create subset topology given box, sphere, plan, ...
///
/// The SubsetTopology engine.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d", "Rigid3d"],
    template_rule = FromStateWhenNotGiven,
    create = |args| SubsetTopology { layout: args.layout.unwrap_or(Layout::Vec3), spheres: false },
    data = {
        /// Box defined by xmin,ymin,zmin, xmax,ymax,zmax
        "box" as BOX: RealTuples(6) = "0 0 0 1 1 1",
        /// Center(s) of the sphere(s) (when given, the spheres are the region)
        centers: RealTuples(3),
        /// Radius(i) of the sphere(s)
        radii: Reals,
        /// Edge direction (if edgeAngle > 0; unused, as in SOFA)
        direction: Fixed(3) as Vec3 = "0 0 0",
        /// Normal direction of the triangles (if triAngle > 0; unused, as in SOFA)
        normal: Fixed(3) as Vec3 = "0 0 0",
        /// Max angle between the direction of the selected edges and the specified direction (unused, as in SOFA)
        edgeAngle: Real = "0",
        /// Max angle between the normal of the selected triangle and the specified normal direction (unused, as in SOFA)
        triAngle: Real = "0",
        /// Rest position coordinates of the degrees of freedom (default: the positions of the context state)
        rest_position: Coords,
        /// Edge Topology (default: the context topology's)
        edges: IndexTuples(2),
        /// Triangle Topology (default: the context topology's)
        triangles: IndexTuples(3),
        /// Quad Topology
        quads: IndexTuples(4),
        /// Tetrahedron Topology (default: the context topology's)
        tetrahedra: IndexTuples(4),
        /// Hexahedron Topology
        hexahedra: IndexTuples(8),
        /// Indices of the tetrahedra to keep
        tetrahedraInput: Indices,
        /// output: Indices of the points contained in the ROI
        indices: Indices = "0",
        /// output: Indices of the edges contained in the ROI
        edgeIndices: Indices,
        /// output: Indices of the triangles contained in the ROI
        triangleIndices: Indices,
        /// output: Indices of the quads contained in the ROI
        quadIndices: Indices,
        /// output: Indices of the tetrahedra contained in the ROI
        tetrahedronIndices: Indices,
        /// output: Indices of the hexahedra contained in the ROI
        hexahedronIndices: Indices,
        /// output: Points contained in the ROI
        pointsInROI: Coords,
        /// output: Points out of the ROI
        pointsOutROI: Coords,
        /// output: Edges contained in the ROI
        edgesInROI: IndexTuples(2),
        /// output: Edges out of the ROI
        edgesOutROI: IndexTuples(2),
        /// output: Triangles contained in the ROI
        trianglesInROI: IndexTuples(3),
        /// output: Triangles out of the ROI
        trianglesOutROI: IndexTuples(3),
        /// output: Quads contained in the ROI
        quadsInROI: IndexTuples(4),
        /// output: Quads out of the ROI
        quadsOutROI: IndexTuples(4),
        /// output: Tetrahedra contained in the ROI
        tetrahedraInROI: IndexTuples(4),
        /// output: Tetrahedra out of the ROI
        tetrahedraOutROI: IndexTuples(4),
        /// output: Hexahedra contained in the ROI
        hexahedraInROI: IndexTuples(8),
        /// output: Hexahedra out of the ROI
        hexahedraOutROI: IndexTuples(8),
        /// output: with localIndices, the number of points on the border of the ROI (the first points of both output meshes)
        nbrborder: Int = "0",
        /// If true, will compute local dof indices in topological elements
        localIndices: Bool = "false",
        /// Draw ROI (rendering only)
        drawROI: Bool = "false",
        /// Draw Points (rendering only)
        drawPoints: Bool = "false",
        /// Draw Edges (rendering only)
        drawEdges: Bool = "false",
        /// Draw Triangles (rendering only)
        drawTriangle: Bool = "false",
        /// Draw Tetrahedra (rendering only)
        drawTetrahedra: Bool = "false",
        /// rendering size for box and topological elements (rendering only)
        drawSize: Real = "1",
    },
)]
#[derive(Clone)]
pub struct SubsetTopology {
    layout: Layout,
    /// Spheres rather than boxes: decided at init, from whether `centers` is given.
    spheres: bool,
}

/// SOFA's `getContext()->get(MechanicalState<T>*)`: the first state of the template `template`
/// in `node`, then in each ancestor.
pub(crate) fn context_state_of_template(cx: &InitCtx, template: &str) -> Option<ComponentId> {
    let scene = &*cx.scene;
    let mut cur = Some(cx.node());
    while let Some(n) = cur {
        let found = scene.node(n).objects.iter().copied().find(|&c| {
            let e = scene.entry(c);
            e.plays(role::MECHANICAL_STATE) && e.template == template
        });
        if found.is_some() {
            return found;
        }
        cur = scene.node(n).parent();
    }
    None
}

impl Component for SubsetTopology {
    /// SOFA computes the outputs when they are first read, which may be while the scene loads (a
    /// SparseGridTopology built from `pointsOutROI`): with the inputs the scene gives, they are
    /// computed as soon as parsed too. A failure is left for init to report.
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.spheres = cx.data().is_given(Self::CENTERS);
        if cx.data().is_given(Self::REST_POSITION) {
            let _ = self.update(cx, false);
        }
        Ok(())
    }

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.spheres = cx.data().is_given(Self::CENTERS);
        if !cx.data().is_given(Self::REST_POSITION) {
            match context_state_of_template(cx, self.layout.name()) {
                Some(ms) => cx.scene.link_data(cx.id, "rest_position", ms, "position")?,
                None => cx.warn(format!(
                    "no rest positions: `rest_position` is not set and there is no {} MechanicalObject in this node or above; every output is empty",
                    self.layout.name()
                )),
            }
        }
        let d = cx.data();
        let missing =
            [(!d.is_given(Self::EDGES), "edges"), (!d.is_given(Self::TRIANGLES), "triangles"), (!d.is_given(Self::TETRAHEDRA), "tetrahedra")];
        if missing.iter().any(|m| m.0) {
            if let Some(topo) = cx.scene.find_up(cx.node(), role::TOPOLOGY) {
                for (_, name) in missing.iter().filter(|m| m.0) {
                    if cx.scene.entry(topo).data.index_of(name).is_some() {
                        cx.scene.link_data(cx.id, name, topo, name)?;
                    }
                }
            }
        }
        self.update(cx, true)
    }

    /// A DataEngine: its outputs follow its inputs.
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx, true)
    }
}

impl SubsetTopology {
    /// Computes every output; `report`: warn about a sphere/radius count mismatch.
    fn update(&mut self, cx: &mut InitCtx, report: bool) -> SimResult {
        let d = cx.data();
        let boxes: Vec<[f64; 6]> = d
            .get(Self::BOX)
            .chunks_exact(6)
            .map(|b| [b[0].min(b[3]), b[1].min(b[4]), b[2].min(b[5]), b[0].max(b[3]), b[1].max(b[4]), b[2].max(b[5])])
            .collect();
        let region = if self.spheres {
            let centers = d.get(Self::CENTERS);
            let radii = d.get(Self::RADII);
            if centers.is_empty() {
                return Ok(());
            }
            if centers.len() / 3 != radii.len() {
                let msg = format!("{} sphere centers but {} radii: the selection is not computed", centers.len() / 3, radii.len());
                if report {
                    cx.warn(msg);
                }
                return Ok(());
            }
            Region::Spheres(centers.chunks_exact(3).zip(radii).map(|(c, &r)| ([c[0], c[1], c[2]], r)).collect())
        } else {
            Region::Boxes(boxes.clone())
        };
        let (edges, triangles, quads) = (group::<2>(d.get(Self::EDGES)), group::<3>(d.get(Self::TRIANGLES)), group::<4>(d.get(Self::QUADS)));
        let (tetrahedra, hexahedra) = (group::<4>(d.get(Self::TETRAHEDRA)), group::<8>(d.get(Self::HEXAHEDRA)));
        let chosen = d.is_given(Self::TETRAHEDRA_INPUT).then(|| d.get(Self::TETRAHEDRA_INPUT).to_vec());
        let input = SubsetInput {
            coords: d.get(Self::REST_POSITION),
            coord_size: self.layout.coord_size(),
            edges: &edges,
            triangles: &triangles,
            quads: &quads,
            tetrahedra: &tetrahedra,
            hexahedra: &hexahedra,
            tetrahedra_input: chosen.as_deref(),
            local: d.get(Self::LOCAL_INDICES),
        };
        let o = subset(&input, &region).map_err(|e| cx.error(e).hint("the element lists must refer to points of `rest_position`"))?;
        let out = cx.data_mut();
        out.put(Self::BOX, boxes.into_iter().flatten().collect());
        out.put(Self::INDICES, o.indices);
        out.put(Self::POINTS_IN_ROI, o.points_in);
        out.put(Self::POINTS_OUT_ROI, o.points_out);
        out.put(Self::NBRBORDER, o.nbrborder as i64);
        out.put(Self::EDGE_INDICES, o.edge_indices);
        out.put(Self::EDGES_IN_ROI, o.edges_in);
        out.put(Self::EDGES_OUT_ROI, o.edges_out);
        out.put(Self::TRIANGLE_INDICES, o.triangle_indices);
        out.put(Self::TRIANGLES_IN_ROI, o.triangles_in);
        out.put(Self::TRIANGLES_OUT_ROI, o.triangles_out);
        out.put(Self::QUAD_INDICES, o.quad_indices);
        out.put(Self::QUADS_IN_ROI, o.quads_in);
        out.put(Self::QUADS_OUT_ROI, o.quads_out);
        out.put(Self::TETRAHEDRON_INDICES, o.tetrahedron_indices);
        out.put(Self::TETRAHEDRA_IN_ROI, o.tetrahedra_in);
        out.put(Self::TETRAHEDRA_OUT_ROI, o.tetrahedra_out);
        out.put(Self::HEXAHEDRON_INDICES, o.hexahedron_indices);
        out.put(Self::HEXAHEDRA_IN_ROI, o.hexahedra_in);
        out.put(Self::HEXAHEDRA_OUT_ROI, o.hexahedra_out);
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

    /// A 2×1 strip of four triangles in the plane z = 0:
    /// ```text
    /// 3 --- 4 --- 5
    /// |  \  |  \  |
    /// 0 --- 1 --- 2
    /// ```
    const STRIP: [f64; 18] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 2.0, 1.0, 0.0];
    const STRIP_TRIANGLES: [[usize; 3]; 4] = [[0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4]];
    const STRIP_EDGES: [[usize; 2]; 3] = [[0, 1], [1, 2], [4, 5]];
    /// Holds x ∈ [0.5, 2.5]: points 1, 2, 4, 5.
    const RIGHT: [f64; 6] = [0.5, -1.0, -1.0, 2.5, 2.0, 1.0];

    fn strip(local: bool) -> SubsetInput<'static> {
        SubsetInput {
            coords: &STRIP,
            coord_size: 3,
            edges: &STRIP_EDGES,
            triangles: &STRIP_TRIANGLES,
            quads: &[],
            tetrahedra: &[],
            hexahedra: &[],
            tetrahedra_input: None,
            local,
        }
    }

    fn pts(ids: &[usize]) -> Vec<f64> {
        ids.iter().flat_map(|&i| STRIP[i * 3..i * 3 + 3].to_vec()).collect()
    }

    #[test]
    fn box_splits_points_and_elements_in_input_order() {
        let o = subset(&strip(false), &Region::Boxes(vec![RIGHT])).unwrap();
        assert_eq!(o.indices, [1, 2, 4, 5]);
        assert_eq!(o.points_in, pts(&[1, 2, 4, 5]));
        assert_eq!(o.points_out, pts(&[0, 3]));
        assert_eq!(o.triangle_indices, [2, 3]);
        assert_eq!(o.triangles_in, [1, 2, 5, 1, 5, 4]);
        assert_eq!(o.triangles_out, [0, 1, 4, 0, 4, 3]);
        assert_eq!(o.edge_indices, [1, 2]);
        assert_eq!(o.edges_in, [1, 2, 4, 5]);
        assert_eq!(o.edges_out, [0, 1]);
        assert_eq!(o.nbrborder, 0);
    }

    /// Border points 1 and 4 (inside points of the straddling triangles 0 and 1) come first in
    /// both meshes; then 2, 5 inside and 0, 3 outside; the elements use these numbers.
    #[test]
    fn local_indices_put_the_border_first() {
        let o = subset(&strip(true), &Region::Boxes(vec![RIGHT])).unwrap();
        assert_eq!(o.nbrborder, 2);
        assert_eq!(o.indices, [1, 4, 2, 5]);
        assert_eq!(o.points_in, pts(&[1, 4, 2, 5]));
        assert_eq!(o.points_out, pts(&[1, 4, 0, 3]));
        // triangle 2 = (1 2 5) → (0 2 3), triangle 3 = (1 5 4) → (0 3 1)
        assert_eq!(o.triangles_in, [0, 2, 3, 0, 3, 1]);
        // triangle 0 = (0 1 4) → (2 0 1), triangle 1 = (0 4 3) → (2 1 3)
        assert_eq!(o.triangles_out, [2, 0, 1, 2, 1, 3]);
        assert_eq!(o.edges_in, [0, 2, 1, 3]);
        assert_eq!(o.edges_out, [2, 0]);
    }

    /// A sphere of radius 1 around point 2 holds points 1, 2 and 5 (at distance 1: inclusive),
    /// not 4 (at √2).
    #[test]
    fn sphere_region_is_inclusive() {
        let o = subset(&strip(false), &Region::Spheres(vec![([2.0, 0.0, 0.0], 1.0)])).unwrap();
        assert_eq!(o.indices, [1, 2, 5]);
        assert_eq!(o.triangle_indices, [2]);
        // two regions: an element is inside when one region holds all its points
        let two = Region::Spheres(vec![([2.0, 0.0, 0.0], 1.0), ([0.0, 0.0, 0.0], 1.0)]);
        let o = subset(&strip(false), &two).unwrap();
        assert_eq!(o.indices, [0, 1, 2, 3, 5]);
        assert_eq!(o.triangle_indices, [2]);
    }

    /// Tetrahedron 1 chosen by `tetrahedraInput`: its points follow those found in the box in
    /// `indices`; each point list is rebuilt from the tetrahedra, points as first met.
    #[test]
    fn tetrahedra_input_chooses_the_inside_mesh() {
        let x = [0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 5.0, 1.0, 0.0, 5.0, 0.0, 1.0, 6.0, 1.0, 1.0];
        let tets = [[0, 1, 2, 3], [1, 3, 2, 4]];
        let mut input = SubsetInput {
            coords: &x,
            coord_size: 3,
            edges: &[],
            triangles: &[],
            quads: &[],
            tetrahedra: &tets,
            hexahedra: &[],
            tetrahedra_input: Some(&[1]),
            local: false,
        };
        let unit = Region::Boxes(vec![[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]]);
        let o = subset(&input, &unit).unwrap();
        assert_eq!(o.indices, [0, 1, 3, 2, 4]);
        assert_eq!(o.points_in, [5.0, 0.0, 0.0, 5.0, 0.0, 1.0, 5.0, 1.0, 0.0, 6.0, 1.0, 1.0]);
        assert_eq!(o.points_out, x[..12]);
        assert_eq!(o.tetrahedron_indices, [1]);
        assert_eq!(o.tetrahedra_in, [1, 3, 2, 4]);
        assert_eq!(o.tetrahedra_out, [0, 1, 2, 3]);
        input.local = true;
        let o = subset(&input, &unit).unwrap();
        // point 0 is on the border of tetrahedron 0 (the only one in the box)
        assert_eq!(o.nbrborder, 1);
        assert_eq!(o.tetrahedra_in, [0, 1, 2, 3]);
        assert_eq!(o.tetrahedra_out, [0, 1, 2, 3]);
    }

    #[test]
    fn rigid_points_keep_their_orientation() {
        let x = [0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 1.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.6, 0.8];
        let input = SubsetInput { coords: &x, coord_size: 7, ..strip(false) };
        let input = SubsetInput { edges: &[], triangles: &[], ..input };
        let o = subset(&input, &Region::Boxes(vec![[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]])).unwrap();
        assert_eq!(o.indices, [0]);
        assert_eq!(o.points_in, x[..7]);
        assert_eq!(o.points_out, x[7..]);
    }

    #[test]
    fn element_beyond_the_points_is_an_error() {
        let input = SubsetInput { triangles: &[[0, 1, 9]], ..strip(false) };
        let e = subset(&input, &Region::Boxes(vec![RIGHT])).unwrap_err();
        assert!(e.contains("triangle 0 (0 1 9)") && e.contains("6 rest positions"), "{e}");
    }

    /// In a scene: positions from the context state (its `position`), triangles and edges from
    /// the context topology, swapped box corners normalised; a Rigid3 context state makes the
    /// template Rigid3d unless one is given.
    #[test]
    fn scene_defaults_and_template() {
        let f = factory();
        let mut s = Scene::new("root");
        let x = STRIP.map(|v| v.to_string()).join(" ");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", &x)]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 4  0 4 3  1 2 5  1 5 4"), ("edges", "0 1 1 2 4 5")]);
        let e = add(&mut s, &f, Scene::ROOT, "SubsetTopology", &[("box", "2.5 2 1  0.5 -1 -1"), ("localIndices", "1")]);
        init_scene(&mut s).unwrap();
        let d = &s.entry(e).data;
        assert_eq!(d.reals("box"), RIGHT);
        assert_eq!(d.indices("indices"), [1, 4, 2, 5]);
        assert_eq!(d.indices("trianglesInROI"), [0, 2, 3, 0, 3, 1]);
        assert_eq!(d.indices("edgesOutROI"), [2, 0]);
        assert_eq!(d.int("nbrborder"), 2);

        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", "0.5 0.5 0.5 0 0 0 1")]);
        let r = add(&mut s, &f, Scene::ROOT, "SubsetTopology", &[]);
        let v = add(&mut s, &f, Scene::ROOT, "SubsetTopology", &[("template", "Vec3"), ("rest_position", "0 0 0  2 2 2")]);
        init_scene(&mut s).unwrap();
        assert_eq!(s.entry(r).template, "Rigid3d");
        assert_eq!(s.entry(r).data.reals("pointsInROI"), [0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(s.entry(v).template, "Vec3d");
        assert_eq!(s.entry(v).data.indices("indices"), [0]);
        assert!(!s.has_errors(), "{:?}", s.messages);
    }

    /// Spheres are the region when `centers` is given; a radius count that differs leaves the
    /// outputs as they were, with a warning.
    #[test]
    fn scene_spheres() {
        let f = factory();
        let mut s = Scene::new("root");
        let x = STRIP.map(|v| v.to_string()).join(" ");
        let a = add(&mut s, &f, Scene::ROOT, "SubsetTopology", &[("rest_position", &x), ("centers", "2 0 0"), ("radii", "1")]);
        let b = add(&mut s, &f, Scene::ROOT, "SubsetTopology", &[("rest_position", &x), ("centers", "2 0 0"), ("radii", "1 2")]);
        init_scene(&mut s).unwrap();
        assert_eq!(s.entry(a).data.indices("indices"), [1, 2, 5]);
        assert_eq!(s.entry(b).data.indices("indices"), [0]);
        assert!(s.messages.iter().any(|m| m.to_string().contains("1 sphere centers but 2 radii")), "{:?}", s.messages);
    }
}
