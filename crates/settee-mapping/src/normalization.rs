//! The Compliant plugin's `NormalizationMapping` (Vec3 → Vec3, spec compliant §9): `v ↦ v/|v|`
//! for the selected vectors (all when `indices` is empty), with `J = (I − uuᵀ)/|v|`. The plugin
//! gives it no geometric stiffness. A null vector maps to itself with a null Jacobian (the
//! plugin would divide by zero).

use settee_core::component::{Mapping, SparseRows};
use settee_core::role::{MechanicalMapping, MechanicalState};
use settee_core::{component, Component, InitCtx, Layout, SimError, SimResult, StateId};

use crate::assembled::{self, finish_rows};
use crate::common::{apply_at_init, check_layouts, check_len, resize_output, resolve_ports, v3, MappingData, Ports};

/// Maps vectors to their normalized (unit) vectors.
#[component(
    roles = [Mapping],
    markers = [MechanicalMapping],
    templates = ["Vec3d,Vec3d"],
    default_template = "Vec3d,Vec3d",
    template_rule = FromMapping,
    inherit = [MappingData, Self],
    data = {
        /// indices of vector to normalize (all when empty)
        indices: Indices,
    },
    links = {
        /// Input object to map (default: the state of the parent node, `@../`)
        #[node_or_state]
        input: MechanicalState,
        /// Output object to map: a mechanical state, or a visual model (default: the state of this node, `@./`)
        #[node_or_state]
        output: _,
    },
)]
#[derive(Default)]
pub struct NormalizationMapping {
    ports: Ports,
    n_in: usize,
    /// The input vector of each output vector.
    indices: Vec<usize>,
    jac: Vec<SparseRows>,
}

impl NormalizationMapping {
    /// A mapping built directly (tests, programmatic use); empty `indices` = every vector.
    pub fn build(input: StateId, output: StateId, n_in: usize, indices: Vec<usize>) -> SimResult<Self> {
        let indices = if indices.is_empty() { (0..n_in).collect() } else { indices };
        if let Some((k, i)) = indices.iter().enumerate().find(|(_, &i)| i >= n_in) {
            return Err(SimError::new(format!("indices[{k}] = {i}, but the input has {n_in} vectors")));
        }
        Ok(NormalizationMapping {
            ports: Ports {
                inputs: vec![input],
                in_layouts: vec![Layout::Vec3],
                output: Some(output),
                out_layout: Some(Layout::Vec3),
                map_forces: true,
            },
            n_in,
            indices,
            jac: Vec::new(),
        })
    }
}

impl Component for NormalizationMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_ports(cx, false)?;
        if self.ports.output.is_none() {
            return Err(cx.error("the output of this mapping must be a Vec3d MechanicalObject, not a visual model"));
        }
        check_layouts(cx, &self.ports, &[(Layout::Vec3, Layout::Vec3)])?;
        self.n_in = cx.state_size(self.ports.inputs[0]);
        let given = cx.data().get(Self::INDICES).to_vec();
        self.indices = if given.is_empty() { (0..self.n_in).collect() } else { given };
        if let Some((k, i)) = self.indices.iter().enumerate().find(|(_, &i)| i >= self.n_in) {
            return Err(cx
                .error(format!("indices[{k}] = {i}, but the input has {} vectors", self.n_in))
                .hint("indices select vectors of the input state"));
        }
        resize_output(cx.scene, &self.ports, self.indices.len());
        let rest = cx.data().get(MappingData::APPLY_REST_POSITION);
        apply_at_init(self, cx.scene, rest)
    }
}

impl Mapping for NormalizationMapping {
    fn inputs(&self) -> Vec<StateId> {
        self.ports.inputs.clone()
    }
    fn output(&self) -> Option<StateId> {
        self.ports.output
    }
    fn is_mechanical(&self) -> bool {
        self.ports.is_mechanical()
    }

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        check_len("the input positions", x, self.n_in, 3)?;
        let n = self.indices.len();
        check_len("the output positions", out, n, 3)?;
        let mut j = SparseRows::new(3 * n, 3 * self.n_in);
        for (k, &i) in self.indices.iter().enumerate() {
            let v = v3(&x[3 * i..]);
            let l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
            if l2 == 0.0 {
                out[3 * k..3 * k + 3].copy_from_slice(&v);
                continue;
            }
            let l = l2.sqrt();
            let inv = 1.0 / l;
            let u = [v[0] * inv, v[1] * inv, v[2] * inv];
            out[3 * k..3 * k + 3].copy_from_slice(&u);
            for r in 0..3 {
                for c in 0..3 {
                    let d = if r == c { 1.0 } else { 0.0 };
                    j.rows[3 * k + r].push((3 * i + c, (d - u[r] * u[c]) * inv));
                }
            }
        }
        finish_rows(&mut j);
        self.jac = vec![j];
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        assembled::mul(&self.jac, out, inputs)
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        assembled::mul_transpose(&self.jac, inputs, out)
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        if self.jac.is_empty() {
            return Err(SimError::new("the Jacobian is not computed yet (the mapping was never applied)"));
        }
        Ok(if self.ports.map_forces { self.jac.clone() } else { assembled::empty_like(&self.jac) })
    }
}
