//! `DistanceFromTargetMapping` (spec compliant §9): one scalar per selected input point, its
//! distance to a fixed target minus a rest length. The Compliant examples use it to hold a point
//! at a target with a compliance (`testConstrainedHardString`) or to measure a one-dimensional
//! offset (`stops.scn`).
//!
//! As DistanceMapping, `apply` caches the unit directions `u = (x − t)/|x − t|` (`(1, 0, …)` when
//! the distance is below 1e-10), the inverse lengths and the Jacobian rows `uᵀ`; the geometric
//! stiffness is `(I − uuᵀ)·f/ℓ` on the point's diagonal block (kept only for `f < 0` when
//! stabilized).

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, MatrixAccumulator, SimError, SimResult, StateId};

use crate::assembled::{self, assembled_products, orthogonal_projector};
use crate::common::{
    check_len, finish_init, mapping_ports, resolve_mechanical_ports, GeometricStiffness, MappingData, Ports, GEOMETRIC_STIFFNESS_OPTIONS,
};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec3, Layout::Vec1), (Layout::Vec1, Layout::Vec1), (Layout::Rigid3, Layout::Vec1)];

/// Drawing Data of the compliant mappings (rendering only), as SOFA's DistanceMapping and
/// DistanceFromTargetMapping declare them (scale `0`, the colour by name).
#[settee_core::data_group(data = {
    /// Scale for object display
    showObjectScale: Real = "0",
    /// Color for object display. (default=[1.0,1.0,0.0,1.0])
    showColor: Color = "yellow",
})]
pub struct YellowDrawData;

crate::common::mapping_class! {
    {
        name = "DistanceFromTargetMapping", module = "Sofa.Component.Mapping.NonLinear",
        description = "Maps input points to their distances to fixed targets, minus rest lengths.",
        templates = ["Vec3d,Vec1d", "Vec1d,Vec1d", "Rigid3d,Vec1d"],
        default_template = "Vec3d,Vec1d",
        data = {
            /// Indices of the parent points
            indices: Indices,
            /// Positions to compute the distances from (coordinates of the input's template)
            targetPositions: Reals,
            /// Rest lengths of the connections (missing ones are 0)
            restLengths: Reals,
            /// Method used to compute the geometric stiffness: None (not computed), Exact, or Stabilized (only the points in extension)
            geometricStiffness: Options(GEOMETRIC_STIFFNESS_OPTIONS) = "Stabilized",
        },
        inherit = [MappingData, Self, YellowDrawData],
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct DistanceFromTargetMapping {
        ports: Ports,
        indices: Vec<usize>,
        /// One target per index, `cs` reals each.
        targets: Vec<f64>,
        rest: Vec<f64>,
        gs: GeometricStiffness,
        n_in: usize,
        /// Coordinate, derivative and spatial sizes of the input elements.
        cs: usize,
        ds: usize,
        sp: usize,
        /// Cached by `apply`: unit directions (`ds` reals each), inverse lengths, the Jacobian.
        directions: Vec<f64>,
        invlengths: Vec<f64>,
        jac: Vec<SparseRows>,
        /// The output force of the last `update_k` when it kept at least one point.
        k_force: Vec<f64>,
    }
}

impl DistanceFromTargetMapping {
    /// A mapping built directly (for tests and programmatic use): `n_in` input elements of
    /// `layout` (Vec3d, Vec1d or Rigid3d), `targets` holding one input coordinate per index.
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        input: StateId,
        layout: Layout,
        n_in: usize,
        output: StateId,
        indices: Vec<usize>,
        targets: Vec<f64>,
        rest: Vec<f64>,
        gs: GeometricStiffness,
    ) -> DistanceFromTargetMapping {
        let mut rest = rest;
        rest.resize(indices.len(), 0.0);
        DistanceFromTargetMapping {
            ports: Ports::direct(&[input], layout, output, Layout::Vec1),
            indices,
            targets,
            rest,
            gs,
            n_in,
            cs: layout.coord_size(),
            ds: layout.deriv_size(),
            sp: layout.spatial_size(),
            ..Default::default()
        }
    }

    pub fn rest_lengths(&self) -> &[f64] {
        &self.rest
    }

    /// The `ds × ds` stiffness block of point `i` for the child force `f`: `(I − uuᵀ)·f/ℓ·k`.
    fn block(&self, i: usize, f: f64, k: f64) -> Vec<f64> {
        let ds = self.ds;
        orthogonal_projector(&self.directions[i * ds..(i + 1) * ds], f * self.invlengths[i] * k)
    }

    fn applied(&self) -> bool {
        self.invlengths.len() == self.indices.len() && self.directions.len() == self.indices.len() * self.ds
    }

    fn djt_with(&self, inputs: &mut [&mut [f64]], dx_in: &[&[f64]], f_out: &[f64], k_factor: f64) -> SimResult {
        let (n, ds) = (self.indices.len(), self.ds);
        check_len("the output forces", f_out, n, 1)?;
        check_len("the input displacements", dx_in[0], self.n_in, ds)?;
        check_len("the input forces", inputs[0], self.n_in, ds)?;
        for (i, &p) in self.indices.iter().enumerate() {
            if !self.gs.keeps(f_out[i]) {
                continue;
            }
            let b = self.block(i, f_out[i], k_factor);
            let dx = &dx_in[0][p * ds..(p + 1) * ds];
            for j in 0..ds {
                let df: f64 = (0..ds).map(|k| b[j * ds + k] * dx[k]).sum();
                inputs[0][p * ds + j] += df;
            }
        }
        Ok(())
    }
}

impl Component for DistanceFromTargetMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, false, "a Vec1d MechanicalObject", TEMPLATES)?;
        let layout = self.ports.in_layouts[0];
        (self.cs, self.ds, self.sp) = (layout.coord_size(), layout.deriv_size(), layout.spatial_size());
        self.n_in = cx.state_size(self.ports.inputs[0]);
        let d = cx.data();
        self.gs = GeometricStiffness::from_name(d.get(Self::GEOMETRIC_STIFFNESS));
        let mut indices = d.get(Self::INDICES).to_vec();
        let targets = d.get(Self::TARGET_POSITIONS).to_vec();
        let mut rest = d.get(Self::REST_LENGTHS).to_vec();

        let cs = self.cs;
        if !targets.len().is_multiple_of(cs) {
            return Err(cx
                .error(format!(
                    "targetPositions holds {} values, not a whole number of {} coordinates ({cs} values each)",
                    targets.len(),
                    layout.name()
                ))
                .hint("give one input coordinate per index"));
        }
        let n_targets = targets.len() / cs;
        // Indices not given for the last targets: the targets' own numbers (SOFA ≥ 23.06).
        indices.extend(indices.len()..n_targets);
        if indices.len() != n_targets {
            return Err(cx
                .error(format!("{} indices but {n_targets} target positions", indices.len()))
                .hint("targetPositions needs one position per index"));
        }
        if let Some((k, &i)) = indices.iter().enumerate().find(|(_, &i)| i >= self.n_in) {
            return Err(cx
                .error(format!("indices[{k}] = {i}, but the input has {} points", self.n_in))
                .hint("the indices designate points of the input state"));
        }
        // Missing rest lengths are 0 (extra ones are dropped).
        rest.resize(indices.len(), 0.0);
        cx.data_mut().put(Self::INDICES, indices.clone());
        cx.data_mut().put(Self::REST_LENGTHS, rest.clone());
        self.indices = indices;
        self.targets = targets;
        self.rest = rest;
        finish_init(cx, self.indices.len(), self)
    }
}

impl Mapping for DistanceFromTargetMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let (n, cs, ds, sp) = (self.indices.len(), self.cs, self.ds, self.sp);
        check_len("the input positions", inputs[0], self.n_in, cs)?;
        check_len("the output positions", out, n, 1)?;
        self.directions = vec![0.0; n * ds];
        self.invlengths = vec![0.0; n];
        let mut jac = SparseRows::new(n, self.n_in * ds);
        for (i, &p) in self.indices.iter().enumerate() {
            let u = &mut self.directions[i * ds..(i + 1) * ds];
            for c in 0..sp {
                u[c] = inputs[0][p * cs + c] - self.targets[i * cs + c];
            }
            let l = u.iter().map(|x| x * x).sum::<f64>().sqrt();
            out[i] = l - self.rest[i];
            if l > 1e-10 {
                self.invlengths[i] = 1.0 / l;
                u.iter_mut().for_each(|x| *x *= self.invlengths[i]);
            } else {
                u.fill(0.0);
                u[0] = 1.0;
            }
            jac.rows[i] = u.iter().enumerate().map(|(k, &v)| (p * ds + k, v)).collect();
        }
        self.jac = vec![jac];
        Ok(())
    }

    assembled_products!();

    /// SOFA's `updateK`: the stiffness for `f_out` is kept if it has a point (Stabilized: one in
    /// extension); `apply_djt` then uses it in place of the force it is given.
    fn update_k(&mut self, f_out: &[f64]) -> SimResult {
        self.k_force.clear();
        if self.ports.map_forces
            && self.gs != GeometricStiffness::None
            && f_out.len() == self.indices.len()
            && f_out.iter().any(|&f| self.gs.keeps(f))
        {
            self.k_force.extend_from_slice(f_out);
        }
        Ok(())
    }

    fn apply_djt(&mut self, inputs: &mut [&mut [f64]], dx_in: &[&[f64]], f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || self.gs == GeometricStiffness::None || !self.applied() {
            return Ok(());
        }
        let kept = std::mem::take(&mut self.k_force);
        let r = self.djt_with(inputs, dx_in, if kept.is_empty() { f_out } else { &kept }, k_factor);
        self.k_force = kept;
        r
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        if !self.ports.map_forces {
            return Ok(assembled::zeros(self.indices.len(), &[self.n_in * self.ds]));
        }
        if self.jac.len() != 1 {
            return Err(SimError::new("the Jacobian is not computed yet (the mapping was never applied)"));
        }
        Ok(self.jac.clone())
    }

    fn add_geometric_stiffness(&self, m: &mut MatrixAccumulator, f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || self.gs == GeometricStiffness::None || !self.applied() {
            return Ok(());
        }
        check_len("the output forces", f_out, self.indices.len(), 1)?;
        let (s, ds) = (self.ports.inputs[0], self.ds);
        for (i, &p) in self.indices.iter().enumerate() {
            if self.gs.keeps(f_out[i]) {
                m.add_block(s, p * ds, s, p * ds, ds, ds, &self.block(i, f_out[i], k_factor));
            }
        }
        Ok(())
    }
}
