//! The Compliant plugin's `SafeDistanceMapping` and `SafeDistanceFromTargetMapping` (Vec3 →
//! Vec1, spec compliant §9): the distance of each pair (or of each point to its target) minus
//! its rest length, made safe where the direction is undefined. When a length is at most
//! `epsilonLength` and its rest length is 0 (and, for the target variant, no direction is
//! given), the pair maps to its 3D difference `x_b − x_a` instead (three output values), so the
//! output size depends on the configuration.
//!
//! The output layout follows the configuration at each `apply` whose output vector has the
//! matching size; the state itself is resized at the start of each step (`animate_begin`), from
//! the positions the step starts with: the plugin resizes inside `apply`, which the positions
//! at the end of the previous step decide too.

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, ComponentId, InitCtx, Layout, MatrixAccumulator, Scene, SimError, SimResult, StateId, VecId};

use crate::assembled::{self, assembled_products, orthogonal_projector3};
use crate::common::{
    apply_at_init, check_len, djt_force, dot, finish_init, mapping_ports, norm, resize_output, resolve_mechanical_ports, sub, v3, GeometricStiffness,
    MappingData, Ports, GEOMETRIC_STIFFNESS_OPTIONS, V3,
};
use crate::difference::HiddenDrawData;

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec3, Layout::Vec1)];

/// The Data both safe-distance mappings have, after their own.
#[settee_core::data_group(data = {
    /// rest lengths (default: the initial lengths; missing entries repeat the last one)
    restLengths: Reals,
    /// Threshold to consider a length too close to 0
    epsilonLength: Real = "1e-4",
    /// 0 -> no GS, 1 -> exact GS, 2 -> stabilized GS (default)
    geometricStiffness: Options(GEOMETRIC_STIFFNESS_OPTIONS) = "Stabilized",
})]
pub struct SafeDistanceData;

/// Which of the two classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Pairs,
    FromTarget,
}

/// What a pair maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    /// One value: length − rest.
    Distance,
    /// Three values: the difference (failsafe).
    Difference,
}

crate::common::mapping_class! {
    {
        templates = ["Vec3d,Vec1d"],
        default_template = "Vec3d,Vec1d",
        inherit = [MappingData, Self, SafeDistanceData, HiddenDrawData],
        class(
            name = "SafeDistanceMapping", module = "Compliant",
            description = "Maps pairs of points to their distance minus a rest length; a pair of null length and null rest length maps to its 3D difference.",
            create = |_| SafeDistanceMapping::new(Kind::Pairs),
            data = {
                /// index pairs for computing distance
                pairs: IndexTuples(2),
            },
        ),
        class(
            name = "SafeDistanceFromTargetMapping", module = "Compliant",
            description = "Maps points to their distance to targets minus a rest length; a null distance with null rest length and no given direction maps to the 3D difference.",
            create = |_| SafeDistanceMapping::new(Kind::FromTarget),
            data = {
                /// index of dof to compute the distance
                indices: Indices,
                /// positions the distances are measured from
                targets: RealTuples(3),
                /// Given directions (must be colinear with the vector formed by the points)
                directions: RealTuples(3),
            },
        ),
    }
    /// The two mappings.
    #[derive(Clone)]
    pub struct SafeDistanceMapping {
        kind: Kind,
        ports: Ports,
        n_in: usize,
        /// `(a, b)` per pair; FromTarget: `(index, index)`.
        pairs: Vec<[usize; 2]>,
        targets: Vec<V3>,
        /// FromTarget: unit directions given for the first pairs.
        directions: Vec<V3>,
        rest: Vec<f64>,
        eps: f64,
        gs: GeometricStiffness,
        /// The current output layout.
        modes: Vec<Row>,
        /// Cached by `apply`: directions (unit, or the fallback one), inverse lengths (0 when the
        /// length is at most ε), the Jacobian.
        dirs: Vec<V3>,
        invlengths: Vec<f64>,
        jac: Vec<SparseRows>,
        k_force: Vec<f64>,
    }
}

impl SafeDistanceMapping {
    pub fn new(kind: Kind) -> SafeDistanceMapping {
        SafeDistanceMapping {
            kind,
            ports: Ports::default(),
            n_in: 0,
            pairs: Vec::new(),
            targets: Vec::new(),
            directions: Vec::new(),
            rest: Vec::new(),
            eps: 1e-4,
            gs: GeometricStiffness::Stabilized,
            modes: Vec::new(),
            dirs: Vec::new(),
            invlengths: Vec::new(),
            jac: Vec::new(),
            k_force: Vec::new(),
        }
    }

    /// A mapping built directly (tests, programmatic use). `pairs` are `(a, b)` (FromTarget:
    /// `(i, i)` with one target each); `rest` must hold one length per pair; the output layout
    /// is taken from `x`.
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        kind: Kind,
        input: StateId,
        output: StateId,
        x: &[f64],
        pairs: Vec<[usize; 2]>,
        targets: Vec<V3>,
        directions: Vec<V3>,
        rest: Vec<f64>,
        gs: GeometricStiffness,
    ) -> SimResult<SafeDistanceMapping> {
        let mut m = SafeDistanceMapping::new(kind);
        m.ports = Ports::direct(&[input], Layout::Vec3, output, Layout::Vec1);
        m.n_in = x.len() / 3;
        m.pairs = pairs;
        m.targets = targets;
        m.directions = directions.into_iter().map(unit).collect();
        m.gs = gs;
        m.check().map_err(SimError::new)?;
        if rest.len() != m.pairs.len() {
            return Err(SimError::new(format!("{} rest lengths for {} pairs", rest.len(), m.pairs.len())));
        }
        m.rest = rest;
        m.modes = m.layout_for(x);
        Ok(m)
    }

    /// The output layout (one row kind per pair).
    pub fn modes(&self) -> &[Row] {
        &self.modes
    }

    /// The number of output values of a layout.
    pub fn size_of(modes: &[Row]) -> usize {
        modes.iter().map(|m| if *m == Row::Distance { 1 } else { 3 }).sum()
    }

    fn check(&self) -> Result<(), String> {
        for (k, p) in self.pairs.iter().enumerate() {
            if p[0] >= self.n_in || p[1] >= self.n_in {
                return Err(match self.kind {
                    Kind::Pairs => format!("pair {k} ({} {}) refers to point {}, but the input has {} points", p[0], p[1], p[0].max(p[1]), self.n_in),
                    Kind::FromTarget => format!("indices[{k}] = {}, but the input has {} points", p[0], self.n_in),
                });
            }
        }
        if self.kind == Kind::FromTarget && self.targets.len() < self.pairs.len() {
            return Err(format!("{} targets for {} indices: each index needs its target", self.targets.len(), self.pairs.len()));
        }
        Ok(())
    }

    /// `x_b − x_a` (FromTarget: `x_i − t_i`).
    fn gap(&self, x: &[f64], k: usize) -> V3 {
        let [a, b] = self.pairs[k];
        match self.kind {
            Kind::Pairs => sub(v3(&x[3 * b..]), v3(&x[3 * a..])),
            Kind::FromTarget => sub(v3(&x[3 * a..]), self.targets[k]),
        }
    }

    /// The layout the configuration `x` asks for.
    pub fn layout_for(&self, x: &[f64]) -> Vec<Row> {
        (0..self.pairs.len())
            .map(|k| {
                let g = self.gap(x, k);
                let given = self.kind == Kind::FromTarget && k < self.directions.len();
                if norm(g) > self.eps || self.rest[k] != 0.0 || given {
                    Row::Distance
                } else {
                    Row::Difference
                }
            })
            .collect()
    }

    fn ready(&self) -> SimResult {
        if self.jac.is_empty() || self.dirs.len() != self.pairs.len() {
            return Err(SimError::new("the mapping was never applied (its Jacobian is not computed)"));
        }
        Ok(())
    }

    /// Per kept distance row: `(pair, output row, (I − uuᵀ)·f/l)`.
    fn stiffness_blocks(&self, f_out: &[f64]) -> Vec<(usize, [[f64; 3]; 3])> {
        let mut out = Vec::new();
        let mut row = 0;
        for (k, mode) in self.modes.iter().enumerate() {
            if *mode == Row::Difference {
                row += 3;
                continue;
            }
            let f = f_out[row];
            row += 1;
            if self.invlengths[k] == 0.0 || !self.gs.keeps(f) {
                continue;
            }
            out.push((k, orthogonal_projector3(&self.dirs[k], f * self.invlengths[k])));
        }
        out
    }

    /// Resizes the output state to the layout of the current positions and maps them
    /// (positions and velocities) into it.
    fn relayout(&mut self, scene: &mut Scene) -> SimResult {
        let (Some(input), Some(output)) = (self.ports.inputs.first().copied(), self.ports.output) else { return Ok(()) };
        let x = scene.store.get(input).read(VecId::POSITION).to_vec();
        if x.len() < 3 * self.n_in {
            return Ok(());
        }
        let modes = self.layout_for(&x);
        if modes == self.modes && scene.store.get(output).size == Self::size_of(&modes) {
            return Ok(());
        }
        self.modes = modes;
        resize_output(scene, &self.ports, Self::size_of(&self.modes));
        apply_at_init(self, scene, false)
    }
}

fn unit(d: V3) -> V3 {
    let n = norm(d);
    if n == 0.0 {
        d
    } else {
        [d[0] / n, d[1] / n, d[2] / n]
    }
}

impl Component for SafeDistanceMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, false, "a Vec1d MechanicalObject", TEMPLATES)?;
        let input = self.ports.inputs[0];
        self.n_in = cx.state_size(input);
        let d = cx.data();
        self.eps = d.get(SafeDistanceData::EPSILON_LENGTH);
        self.gs = GeometricStiffness::from_name(d.get(SafeDistanceData::GEOMETRIC_STIFFNESS));
        let mut rest = d.get(SafeDistanceData::REST_LENGTHS).to_vec();
        let hint = match self.kind {
            Kind::Pairs => {
                self.pairs = d.get(Self::PAIRS).chunks_exact(2).map(|p| [p[0], p[1]]).collect();
                "set pairs=\"a b …\", indices of points of the input"
            }
            Kind::FromTarget => {
                self.pairs = d.get(Self::INDICES).iter().map(|&i| [i, i]).collect();
                self.targets = d.get(Self::TARGETS).chunks_exact(3).map(v3).collect();
                self.directions = d.get(Self::DIRECTIONS).chunks_exact(3).map(|c| unit(v3(c))).collect();
                "set indices=\"i …\" (points of the input) and targets=\"x y z …\" (one per index)"
            }
        };
        if self.pairs.is_empty() {
            return Err(cx.error("the mapping has nothing to map").hint(hint));
        }
        self.check().map_err(|m| cx.error(m).hint(hint))?;
        let x = cx.read_vec(input, VecId::POSITION).to_vec();
        if rest.is_empty() {
            rest = (0..self.pairs.len()).map(|k| norm(self.gap(&x, k))).collect();
        } else if let Some(&last) = rest.last() {
            rest.resize(self.pairs.len(), last);
        }
        self.rest = rest;
        cx.data_mut().put(SafeDistanceData::REST_LENGTHS, self.rest.clone());
        if self.kind == Kind::FromTarget {
            let flat: Vec<f64> = self.directions.iter().flatten().copied().collect();
            cx.data_mut().put(Self::DIRECTIONS, flat);
        }
        self.modes = self.layout_for(&x);
        finish_init(cx, Self::size_of(&self.modes), self)
    }

    fn animate_begin(&mut self, scene: &mut Scene, _me: ComponentId) -> SimResult {
        self.relayout(scene)
    }
}

impl Mapping for SafeDistanceMapping {
    mapping_ports!();

    #[allow(clippy::needless_range_loop)] // component c of the direction fills column 3·index + c
    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        check_len("the input positions", x, self.n_in, 3)?;
        // The layout of this configuration when the output vector has its size, else the
        // current one (the state is resized at the start of the next step).
        let wanted = self.layout_for(x);
        if Self::size_of(&wanted) == out.len() {
            self.modes = wanted;
        } else if Self::size_of(&self.modes) != out.len() {
            return Err(SimError::new(format!(
                "the output has {} values but the mapping maps {} pairs to {}",
                out.len(),
                self.pairs.len(),
                Self::size_of(&self.modes)
            )));
        }
        let n = self.pairs.len();
        let rows = Self::size_of(&self.modes);
        let mut j = SparseRows::new(rows, 3 * self.n_in);
        self.dirs.resize(n, [0.0; 3]);
        self.invlengths.resize(n, 0.0);
        let mut s = 0;
        for k in 0..n {
            let [a, b] = self.pairs[k];
            let g = self.gap(x, k);
            let l = norm(g);
            let (u, inv) = if l > self.eps {
                (g.map(|c| c / l), 1.0 / l)
            } else if self.kind == Kind::FromTarget && k < self.directions.len() {
                (self.directions[k].map(|c| -c), 0.0)
            } else {
                let p = 1.0 / 3f64.sqrt();
                ([p, p, p], 0.0)
            };
            self.dirs[k] = u;
            self.invlengths[k] = inv;
            match self.modes[k] {
                Row::Distance => {
                    out[s] = l - self.rest[k];
                    for c in 0..3 {
                        match self.kind {
                            Kind::Pairs => {
                                j.rows[s].push((3 * a + c, -u[c]));
                                j.rows[s].push((3 * b + c, u[c]));
                            }
                            Kind::FromTarget => j.rows[s].push((3 * a + c, u[c])),
                        }
                    }
                    s += 1;
                }
                Row::Difference => {
                    for c in 0..3 {
                        out[s + c] = g[c];
                        match self.kind {
                            Kind::Pairs => {
                                j.rows[s + c].push((3 * a + c, -1.0));
                                j.rows[s + c].push((3 * b + c, 1.0));
                            }
                            Kind::FromTarget => j.rows[s + c].push((3 * a + c, 1.0)),
                        }
                    }
                    s += 3;
                }
            }
        }
        assembled::store(&mut self.jac, j)
    }

    assembled_products!(ready);

    fn update_k(&mut self, f_out: &[f64]) -> SimResult {
        self.k_force.clear();
        let rows = Self::size_of(&self.modes);
        if self.ports.map_forces
            && self.gs != GeometricStiffness::None
            && f_out.len() == rows
            && self.ready().is_ok()
            && !self.stiffness_blocks(f_out).is_empty()
        {
            self.k_force.extend_from_slice(f_out);
        }
        Ok(())
    }

    fn apply_djt(&mut self, inputs: &mut [&mut [f64]], dx_in: &[&[f64]], f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || self.gs == GeometricStiffness::None {
            return Ok(());
        }
        self.ready()?;
        let f = djt_force(&self.k_force, f_out, (Self::size_of(&self.modes), 1), dx_in[0], inputs[0], (self.n_in, 3))?;
        for (k, b) in self.stiffness_blocks(f) {
            let [a, bb] = self.pairs[k];
            let dx = match self.kind {
                Kind::Pairs => sub(v3(&dx_in[0][3 * bb..]), v3(&dx_in[0][3 * a..])),
                Kind::FromTarget => v3(&dx_in[0][3 * a..]),
            };
            for (r, line) in b.iter().enumerate() {
                let d = k_factor * dot(*line, dx);
                match self.kind {
                    Kind::Pairs => {
                        inputs[0][3 * a + r] -= d;
                        inputs[0][3 * bb + r] += d;
                    }
                    Kind::FromTarget => inputs[0][3 * a + r] += d,
                }
            }
        }
        Ok(())
    }

    fn add_geometric_stiffness(&self, m: &mut MatrixAccumulator, f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || self.gs == GeometricStiffness::None {
            return Ok(());
        }
        self.ready()?;
        check_len("the output forces", f_out, Self::size_of(&self.modes), 1)?;
        let s = self.ports.inputs[0];
        for (k, b) in self.stiffness_blocks(f_out) {
            let pos: Vec<f64> = b.iter().flatten().map(|x| x * k_factor).collect();
            let neg: Vec<f64> = pos.iter().map(|x| -x).collect();
            let [a, bb] = self.pairs[k];
            m.add_block(s, 3 * a, s, 3 * a, 3, 3, &pos);
            if self.kind == Kind::Pairs {
                m.add_block(s, 3 * a, s, 3 * bb, 3, 3, &neg);
                m.add_block(s, 3 * bb, s, 3 * a, 3, 3, &neg);
                m.add_block(s, 3 * bb, s, 3 * bb, 3, 3, &pos);
            }
        }
        Ok(())
    }
}
