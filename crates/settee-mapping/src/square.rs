//! `SquareMapping` (Vec1d → Vec1d): `y_i = x_i²`, `J = diag(2x_i)`; geometric stiffness
//! `2·f_i` on the diagonal (`Exact`, the default; `None` leaves it out).

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, MatrixAccumulator, SimError, SimResult, StateId};

use crate::common::{check_len, finish_init, mapping_ports, resolve_mechanical_ports, GeometricStiffness, Ports};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec1, Layout::Vec1)];

/// The options of a mapping without a stabilized geometric stiffness.
const OPTIONS: &[&str] = &["None", "Exact"];

crate::common::mapping_class! {
    {
        name = "SquareMapping", module = "Sofa.Component.Mapping.NonLinear",
        description = "Maps scalars to their squares.",
        templates = ["Vec1d,Vec1d"],
        default_template = "Vec1d,Vec1d",
        data = {
            /// Method used to compute the geometric stiffness: None (not computed) or Exact
            geometricStiffness: Options(OPTIONS) = "Exact",
        },
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct SquareMapping {
        ports: Ports,
        n: usize,
        exact: bool,
        /// Cached by `apply`: the inputs.
        x: Vec<f64>,
    }
}

impl SquareMapping {
    /// A mapping built directly (tests).
    pub fn build(input: StateId, output: StateId, n: usize, gs: GeometricStiffness) -> Self {
        SquareMapping { ports: Ports::direct(&[input], Layout::Vec1, output, Layout::Vec1), n, exact: gs != GeometricStiffness::None, x: Vec::new() }
    }

    fn ready(&self) -> SimResult {
        if self.x.len() != self.n {
            return Err(SimError::new("the mapping was never applied"));
        }
        Ok(())
    }
}

impl Component for SquareMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, false, "a Vec1d MechanicalObject", TEMPLATES)?;
        self.exact = cx.data().get(Self::GEOMETRIC_STIFFNESS) == "Exact";
        self.n = cx.state_size(self.ports.inputs[0]);
        let n = self.n;
        finish_init(cx, n, self)
    }
}

impl Mapping for SquareMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        check_len("the input positions", x, self.n, 1)?;
        check_len("the output positions", out, self.n, 1)?;
        for i in 0..self.n {
            out[i] = x[i] * x[i];
        }
        self.x = x[..self.n].to_vec();
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.ready()?;
        check_len("the input velocities", inputs[0], self.n, 1)?;
        check_len("the output velocities", out, self.n, 1)?;
        for i in 0..self.n {
            out[i] = 2.0 * self.x[i] * inputs[0][i];
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        self.ready()?;
        check_len("the input forces", inputs[0], self.n, 1)?;
        check_len("the output forces", out, self.n, 1)?;
        for i in 0..self.n {
            inputs[0][i] += 2.0 * self.x[i] * out[i];
        }
        Ok(())
    }

    fn apply_djt(&mut self, inputs: &mut [&mut [f64]], dx_in: &[&[f64]], f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || !self.exact {
            return Ok(());
        }
        check_len("the input displacements", dx_in[0], self.n, 1)?;
        check_len("the output forces", f_out, self.n, 1)?;
        let k = k_factor * 2.0;
        for i in 0..self.n {
            inputs[0][i] += dx_in[0][i] * f_out[i] * k;
        }
        Ok(())
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let mut j = SparseRows::new(self.n, self.n);
        if self.ports.map_forces {
            self.ready()?;
            for (i, row) in j.rows.iter_mut().enumerate() {
                row.push((i, 2.0 * self.x[i]));
            }
        }
        Ok(vec![j])
    }

    fn add_geometric_stiffness(&self, m: &mut MatrixAccumulator, f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.ports.map_forces || !self.exact {
            return Ok(());
        }
        check_len("the output forces", f_out, self.n, 1)?;
        let s = self.ports.inputs[0];
        for (i, f) in f_out.iter().enumerate().take(self.n) {
            m.add_block(s, i, s, i, 1, 1, &[2.0 * f * k_factor]);
        }
        Ok(())
    }
}
