//! `DistanceMapping`, `DistanceMultiMapping` and `SquareDistanceMapping` (spec §5.7): one scalar
//! per edge of a topology, the edge length minus its rest length, or the squared length.
//!
//! As in SOFA, `apply` computes and caches the unit directions, the inverse lengths and the
//! Jacobian; `applyJ`/`applyJT` go through that Jacobian and the geometric stiffness (`applyDJT`)
//! uses the cached directions until the next `apply`.

use settee_core::component::{Mapping, SparseRows};
use settee_core::role::Topology;
use settee_core::{Component, InitCtx, Layout, MatrixAccumulator, SimError, SimResult, StateId, VecId};

use crate::assembled::orthogonal_projector3;
use crate::common::{
    check_len, dot, finish_init, mapping_ports, norm, resolve_mechanical_ports, scale, sub, v3, DrawData, GeometricStiffness, MappingData, Ports,
    GEOMETRIC_STIFFNESS_OPTIONS, V3,
};
use crate::distance_from_target::YellowDrawData;

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec3, Layout::Vec1), (Layout::Rigid3, Layout::Vec1)];

/// The Data of `DistanceMapping`, which `DistanceMultiMapping` has too.
#[settee_core::data_group(data = {
    /// if 'computeDistance = true', then rest length of each element equal 0, otherwise rest length is the initial length of each of them
    computeDistance: Bool = "false",
    /// Rest lengths of the connections
    restLengths: Reals,
})]
pub struct DistanceData;

/// The last Data of the three distance mappings.
#[settee_core::data_group(data = {
    /// Method used to compute the geometric stiffness: None (not computed), Exact, or Stabilized (only the edges in extension)
    geometricStiffness: Options(GEOMETRIC_STIFFNESS_OPTIONS) = "Stabilized",
})]
pub struct DistanceStiffnessData;

/// Which of the three classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `l - L0`, one input.
    Distance,
    /// `l - L0`, end points `(parent, index)` from `indexPairs`.
    Multi,
    /// `l²`, one input.
    Square,
}

/// One end of an edge: input number and element index in that input.
type End = (usize, usize);

crate::common::mapping_class! {
    with {
        /// link to the topology container (its edges are the mapped pairs)
        topology: Topology,
    }
    {
        templates = ["Vec3d,Vec1d", "Rigid3d,Vec1d"],
        default_template = "Vec3d,Vec1d",
        class(
            name = "DistanceMapping", module = "Sofa.Component.Mapping.NonLinear",
            description = "Maps point positions to the distances between the ends of the topology's edges, minus their rest lengths.",
            create = |_| DistanceMapping::new(Kind::Distance),
            inherit = [MappingData, DistanceData, YellowDrawData, DistanceStiffnessData, Self],
        ),
        multi_class(
            name = "DistanceMultiMapping", module = "Sofa.Component.Mapping.NonLinear",
            description = "Maps points of several states to the distances between the pairs given by the topology's edges (indices into indexPairs).",
            create = |_| DistanceMapping::new(Kind::Multi),
            inherit = [MappingData, DistanceData, YellowDrawData, DistanceStiffnessData, Self],
            data = {
                /// list of couples (parent index + index in the parent)
                indexPairs: IndexTuples(2),
            },
        ),
        class(
            name = "SquareDistanceMapping", module = "Sofa.Component.Mapping.NonLinear",
            description = "Maps point positions to the squared distances between the ends of the topology's edges.",
            create = |_| DistanceMapping::new(Kind::Square),
            inherit = [MappingData, DrawData, DistanceStiffnessData],
        ),
    }
    /// The three mappings (they share everything but the formula and the way ends are named).
    #[derive(Clone)]
    pub struct DistanceMapping {
        kind: Kind,
        ports: Ports,
        /// Ends of each mapped edge.
        ends: Vec<[End; 2]>,
        rest: Vec<f64>,
        gs: GeometricStiffness,
        /// Number of elements of each input.
        sizes: Vec<usize>,
        /// Coordinate and derivative sizes of the input elements.
        cs: usize,
        ds: usize,
        /// Cached by `apply`: unit directions (Distance) or `2·(x_b − x_a)` (Square), inverse lengths.
        directions: Vec<V3>,
        invlengths: Vec<f64>,
        /// Cached by `apply`: one Jacobian per input.
        jac: Vec<SparseRows>,
        /// The output force of the last `update_k` when it kept at least one edge (SOFA's non-empty
        /// `m_geometricStiffnessMatrix`); empty otherwise.
        k_force: Vec<f64>,
    }
}

impl DistanceMapping {
    pub fn new(kind: Kind) -> DistanceMapping {
        DistanceMapping {
            kind,
            ports: Ports::default(),
            ends: Vec::new(),
            rest: Vec::new(),
            gs: GeometricStiffness::Stabilized,
            sizes: Vec::new(),
            cs: 3,
            ds: 3,
            directions: Vec::new(),
            invlengths: Vec::new(),
            jac: Vec::new(),
            k_force: Vec::new(),
        }
    }

    /// A mapping built directly (for tests and programmatic use): `inputs` with their sizes and
    /// layout (Vec3d or Rigid3d), the output Vec1d state, and the edges' ends.
    pub fn build(
        kind: Kind,
        inputs: &[(StateId, usize)],
        layout: Layout,
        output: StateId,
        ends: Vec<[End; 2]>,
        rest: Vec<f64>,
        gs: GeometricStiffness,
    ) -> DistanceMapping {
        let mut m = DistanceMapping::new(kind);
        m.ports = Ports::direct(&inputs.iter().map(|i| i.0).collect::<Vec<_>>(), layout, output, Layout::Vec1);
        m.sizes = inputs.iter().map(|i| i.1).collect();
        m.cs = layout.coord_size();
        m.ds = layout.deriv_size();
        m.rest = rest;
        m.rest.resize(ends.len(), 0.0);
        m.ends = ends;
        m.gs = gs;
        m
    }

    pub fn rest_lengths(&self) -> &[f64] {
        &self.rest
    }

    fn pos(&self, inputs: &[&[f64]], (p, i): End) -> V3 {
        v3(&inputs[p][i * self.cs..])
    }

    fn check_inputs(&self, what: &str, inputs: &[&[f64]], k: usize) -> SimResult {
        if inputs.len() != self.sizes.len() {
            return Err(SimError::new(format!("{} inputs lent, {} expected", inputs.len(), self.sizes.len())));
        }
        for (v, &n) in inputs.iter().zip(&self.sizes) {
            check_len(what, v, n, k)?;
        }
        Ok(())
    }

    /// `kFactor·b·(dx_b − dx_a)` with `b = (I − uuᵀ)·f/l` for Distance, `2f·kFactor` for Square.
    fn djt_delta(&self, e: usize, f: f64, k: f64, dxa: V3, dxb: V3) -> V3 {
        match self.kind {
            Kind::Square => {
                let tmp = 2.0 * f * k;
                let d = sub(dxa, dxb);
                [tmp * d[0], tmp * d[1], tmp * d[2]]
            }
            _ => {
                let b = self.stiffness_block(e, f * self.invlengths[e] * k);
                let dx = sub(dxb, dxa);
                let mut df = [0.0; 3];
                for j in 0..3 {
                    for c in 0..3 {
                        df[j] += b[j][c] * dx[c];
                    }
                }
                df
            }
        }
    }

    /// `(I − uuᵀ)·s`, entries computed as SOFA does.
    fn stiffness_block(&self, e: usize, s: f64) -> [[f64; 3]; 3] {
        orthogonal_projector3(&self.directions[e], s)
    }
}

impl Component for DistanceMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, self.kind == Kind::Multi, "a Vec1d MechanicalObject", TEMPLATES)?;
        let layout = self.ports.in_layouts[0];
        self.cs = layout.coord_size();
        self.ds = layout.deriv_size();
        self.sizes = self.ports.inputs.iter().map(|s| cx.state_size(*s)).collect();
        let d = cx.data();
        // Every class declares `geometricStiffness` (SquareDistanceMapping its own, the others
        // through [`DistanceData`]); only those two have `computeDistance` and `restLengths`.
        self.gs = GeometricStiffness::from_name(d.get(DistanceStiffnessData::GEOMETRIC_STIFFNESS));
        let compute_distance = self.kind != Kind::Square && d.get(DistanceData::COMPUTE_DISTANCE);
        let given_rest: Vec<f64> = if self.kind == Kind::Square { Vec::new() } else { d.get(DistanceData::REST_LENGTHS).to_vec() };
        let pairs: Vec<usize> = if self.kind == Kind::Multi { d.get(Self::INDEX_PAIRS).to_vec() } else { Vec::new() };

        let topo = cx.topology().ok_or_else(|| {
            cx.error("no topology found").hint("set topology=\"@path/to/EdgeSetTopologyContainer\" (its edges are the mapped pairs)")
        })?;
        let edges =
            cx.scene.mesh_of(topo).map(|m| m.edges.clone()).ok_or_else(|| cx.error(format!("{} provides no mesh", cx.scene.entry(topo).label())))?;
        if edges.is_empty() {
            return Err(cx
                .error(format!("no edges in {}", cx.scene.entry(topo).label()))
                .hint("the mapping needs a topology with edges (e.g. an EdgeSetTopologyContainer with `edges`)"));
        }

        let mut ends = Vec::with_capacity(edges.len());
        for (k, e) in edges.iter().enumerate() {
            let mut pair = [(0, 0); 2];
            for (w, &v) in e.iter().enumerate() {
                pair[w] = if self.kind == Kind::Multi {
                    let (Some(&p), Some(&i)) = (pairs.get(2 * v), pairs.get(2 * v + 1)) else {
                        return Err(cx
                            .error(format!("edge {k} refers to pair {v} but indexPairs holds {} pairs", pairs.len() / 2))
                            .hint("indexPairs lists (parent, index) couples; the edges index into that list"));
                    };
                    (p, i)
                } else {
                    (0, v)
                };
                let (p, i) = pair[w];
                if p >= self.sizes.len() || i >= self.sizes[p] {
                    return Err(cx
                        .error(format!("edge {k} {e:?} refers to point {i} of input {p}, which does not exist"))
                        .hint("the topology's edges must index the input points"));
                }
            }
            ends.push(pair);
        }
        self.ends = ends;

        // Rest lengths: kept when given with one value per edge, else the initial lengths (or 0
        // with computeDistance).
        self.rest = if given_rest.len() == edges.len() {
            given_rest
        } else if self.kind == Kind::Square || compute_distance {
            vec![0.0; edges.len()]
        } else {
            let xs: Vec<Vec<f64>> = self.ports.inputs.iter().map(|s| cx.read_vec(*s, VecId::POSITION).to_vec()).collect();
            let refs: Vec<&[f64]> = xs.iter().map(|v| v.as_slice()).collect();
            self.ends
                .iter()
                .map(|&[a, b]| {
                    let g = sub(self.pos(&refs, a), self.pos(&refs, b));
                    norm(g)
                })
                .collect()
        };
        if self.kind != Kind::Square {
            cx.data_mut().put(DistanceData::REST_LENGTHS, self.rest.clone());
        }
        finish_init(cx, self.ends.len(), self)
    }
}

impl DistanceMapping {
    /// The matrix-free geometric stiffness product for the output force `f_out`.
    fn apply_djt_with(&self, inputs: &mut [&mut [f64]], dx_in: &[&[f64]], f_out: &[f64], k_factor: f64) -> SimResult {
        check_len("the output forces", f_out, self.ends.len(), 1)?;
        self.check_inputs("the input displacements", dx_in, self.ds)?;
        let ds = self.ds;
        for (e, &[a, b]) in self.ends.iter().enumerate() {
            let f = f_out[e];
            if !self.gs.keeps(f) {
                continue;
            }
            let dxa = v3(&dx_in[a.0][a.1 * ds..]);
            let dxb = v3(&dx_in[b.0][b.1 * ds..]);
            let df = self.djt_delta(e, f, k_factor, dxa, dxb);
            // Distance: f_a −= δ, f_b += δ. Square: δ is already (dx_a − dx_b)-based: f_a += δ, f_b −= δ.
            let sa = if self.kind == Kind::Square { 1.0 } else { -1.0 };
            for c in 0..3 {
                if sa > 0.0 {
                    inputs[a.0][a.1 * ds + c] += df[c];
                } else {
                    inputs[a.0][a.1 * ds + c] -= df[c];
                }
            }
            for c in 0..3 {
                if sa > 0.0 {
                    inputs[b.0][b.1 * ds + c] -= df[c];
                } else {
                    inputs[b.0][b.1 * ds + c] += df[c];
                }
            }
        }
        Ok(())
    }
}

impl Mapping for DistanceMapping {
    mapping_ports!();

    #[allow(clippy::needless_range_loop)] // edge i fills out[i] and its caches
    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.check_inputs("the input positions", inputs, self.cs)?;
        let n = self.ends.len();
        check_len("the output positions", out, n, 1)?;
        let ds = self.ds;
        self.directions.resize(n, [0.0; 3]);
        self.invlengths.resize(n, 0.0);
        self.jac = self.sizes.iter().map(|&s| SparseRows::new(n, s * ds)).collect();
        for i in 0..n {
            let [a, b] = self.ends[i];
            let mut g = sub(self.pos(inputs, b), self.pos(inputs, a));
            match self.kind {
                Kind::Square => {
                    out[i] = dot(g, g);
                    g = scale(g, 2.0);
                }
                _ => {
                    let l = norm(g);
                    out[i] = l - self.rest[i];
                    if l > f64::EPSILON {
                        self.invlengths[i] = 1.0 / l;
                        let inv = self.invlengths[i];
                        g = scale(g, inv);
                    } else {
                        self.invlengths[i] = 0.0;
                        let p = 1.0 / 3f64.sqrt();
                        g = [p, p, p];
                    }
                }
            }
            self.directions[i] = g;
            let neg = settee_core::math::neg(g);
            // Entries in increasing column order when both ends are in the same input, as SOFA
            // inserts them (DistanceMultiMapping inserts end 0 then end 1).
            let mut entries = [(a, neg), (b, g)];
            if self.kind != Kind::Multi && b.1 < a.1 {
                entries.swap(0, 1);
            }
            for ((p, v), val) in entries {
                for (c, &x) in val.iter().enumerate() {
                    self.jac[p].rows[i].push((v * ds + c, x));
                }
            }
        }
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        if self.jac.is_empty() {
            return Ok(());
        }
        self.check_inputs("the input velocities", inputs, self.ds)?;
        let n = self.ends.len();
        check_len("the output velocities", out, n, 1)?;
        // out = J₀·in₀ (+ J₁·in₁ …): each product is a row sum started from 0, then added.
        for (p, j) in self.jac.iter().enumerate() {
            for (i, row) in j.rows.iter().enumerate() {
                let mut t = 0.0;
                for &(c, v) in row {
                    t += v * inputs[p][c];
                }
                if p == 0 {
                    out[i] = t;
                } else {
                    out[i] += t;
                }
            }
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces || self.jac.is_empty() {
            return Ok(());
        }
        for (p, j) in self.jac.iter().enumerate() {
            check_len("the input forces", inputs[p], self.sizes[p], self.ds)?;
            j.add_mul_transpose(inputs[p], out);
        }
        Ok(())
    }

    /// SOFA's `updateK`: the stiffness for `f_out` is kept if it has an edge (Stabilized: an
    /// edge in extension, `f < 0`); `apply_djt` then uses it in place of the force it is given.
    fn update_k(&mut self, f_out: &[f64]) -> SimResult {
        self.k_force.clear();
        if self.ports.map_forces && self.gs != GeometricStiffness::None && f_out.len() == self.ends.len() && f_out.iter().any(|&f| self.gs.keeps(f)) {
            self.k_force.extend_from_slice(f_out);
        }
        Ok(())
    }

    fn apply_djt(&mut self, inputs: &mut [&mut [f64]], dx_in: &[&[f64]], f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || self.gs == GeometricStiffness::None || self.directions.len() != self.ends.len() {
            return Ok(());
        }
        let kept = std::mem::take(&mut self.k_force);
        let r = self.apply_djt_with(inputs, dx_in, if kept.is_empty() { f_out } else { &kept }, k_factor);
        self.k_force = kept;
        r
    }
    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        if !self.ports.map_forces {
            return Ok(self.sizes.iter().map(|&s| SparseRows::new(self.ends.len(), s * self.ds)).collect());
        }
        if self.jac.len() != self.sizes.len() {
            return Err(SimError::new("the Jacobian is not computed yet (the mapping was never applied)"));
        }
        Ok(self.jac.clone())
    }

    fn add_geometric_stiffness(&self, m: &mut MatrixAccumulator, f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || self.gs == GeometricStiffness::None || self.directions.len() != self.ends.len() {
            return Ok(());
        }
        check_len("the output forces", f_out, self.ends.len(), 1)?;
        let ds = self.ds;
        for (e, &[a, b]) in self.ends.iter().enumerate() {
            let f = f_out[e];
            if !self.gs.keeps(f) {
                continue;
            }
            let blk = match self.kind {
                Kind::Square => {
                    let t = 2.0 * f * k_factor;
                    [[t, 0.0, 0.0], [0.0, t, 0.0], [0.0, 0.0, t]]
                }
                _ => {
                    let mut b = self.stiffness_block(e, f * self.invlengths[e]);
                    for row in b.iter_mut() {
                        for x in row.iter_mut() {
                            *x *= k_factor;
                        }
                    }
                    b
                }
            };
            let neg = blk.map(|r| r.map(|x| -x));
            let (sa, sb) = (self.ports.inputs[a.0], self.ports.inputs[b.0]);
            let flat = |m: &[[f64; 3]; 3]| -> Vec<f64> { m.iter().flatten().copied().collect() };
            m.add_block(sa, a.1 * ds, sa, a.1 * ds, 3, 3, &flat(&blk));
            m.add_block(sa, a.1 * ds, sb, b.1 * ds, 3, 3, &flat(&neg));
            m.add_block(sb, b.1 * ds, sa, a.1 * ds, 3, 3, &flat(&neg));
            m.add_block(sb, b.1 * ds, sb, b.1 * ds, 3, 3, &flat(&blk));
        }
        Ok(())
    }
}
