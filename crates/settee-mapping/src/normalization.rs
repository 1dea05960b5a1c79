//! The Compliant plugin's `NormalizationMapping` (Vec3 → Vec3, spec compliant §9): `v ↦ v/|v|`
//! for the selected vectors (all when `indices` is empty), with `J = (I − uuᵀ)/|v|`. The plugin
//! gives it no geometric stiffness. A null vector maps to itself with a null Jacobian (the
//! plugin would divide by zero).

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, SimError, SimResult, StateId};

use crate::assembled::{self, assembled_products, orthogonal_projector3};
use crate::common::{check_len, dot, finish_init, mapping_ports, resolve_mechanical_ports, scale, v3, Ports};

crate::common::mapping_class! {
    {
        name = "NormalizationMapping", module = "Compliant",
        description = "Maps vectors to their normalized (unit) vectors.",
        templates = ["Vec3d,Vec3d"],
        default_template = "Vec3d,Vec3d",
        data = {
            /// indices of vector to normalize (all when empty)
            indices: Indices,
        },
    }
    #[derive(Clone, Default)]
    pub struct NormalizationMapping {
        ports: Ports,
        n_in: usize,
        /// The input vector of each output vector.
        indices: Vec<usize>,
        jac: Vec<SparseRows>,
    }
}

impl NormalizationMapping {
    /// A mapping built directly (tests, programmatic use); empty `indices` = every vector.
    pub fn build(input: StateId, output: StateId, n_in: usize, indices: Vec<usize>) -> SimResult<Self> {
        let indices = if indices.is_empty() { (0..n_in).collect() } else { indices };
        if let Some((k, i)) = indices.iter().enumerate().find(|(_, &i)| i >= n_in) {
            return Err(SimError::new(format!("indices[{k}] = {i}, but the input has {n_in} vectors")));
        }
        Ok(NormalizationMapping { ports: Ports::direct(&[input], Layout::Vec3, output, Layout::Vec3), n_in, indices, jac: Vec::new() })
    }
}

impl Component for NormalizationMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, false, "a Vec3d MechanicalObject", &[(Layout::Vec3, Layout::Vec3)])?;
        self.n_in = cx.state_size(self.ports.inputs[0]);
        let given = cx.data().get(Self::INDICES).to_vec();
        self.indices = if given.is_empty() { (0..self.n_in).collect() } else { given };
        if let Some((k, i)) = self.indices.iter().enumerate().find(|(_, &i)| i >= self.n_in) {
            return Err(cx
                .error(format!("indices[{k}] = {i}, but the input has {} vectors", self.n_in))
                .hint("indices select vectors of the input state"));
        }
        finish_init(cx, self.indices.len(), self)
    }
}

impl Mapping for NormalizationMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        check_len("the input positions", x, self.n_in, 3)?;
        let n = self.indices.len();
        check_len("the output positions", out, n, 3)?;
        let mut j = SparseRows::new(3 * n, 3 * self.n_in);
        for (k, &i) in self.indices.iter().enumerate() {
            let v = v3(&x[3 * i..]);
            let l2 = dot(v, v);
            if l2 == 0.0 {
                out[3 * k..3 * k + 3].copy_from_slice(&v);
                continue;
            }
            let l = l2.sqrt();
            let inv = 1.0 / l;
            let u = scale(v, inv);
            out[3 * k..3 * k + 3].copy_from_slice(&u);
            for (r, line) in orthogonal_projector3(&u, inv).iter().enumerate() {
                j.rows[3 * k + r].extend(line.iter().enumerate().map(|(c, &x)| (3 * i + c, x)));
            }
        }
        assembled::store(&mut self.jac, j)
    }

    assembled_products!(applied);
}
