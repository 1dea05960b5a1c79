//! The Compliant plugin's `WinchMultiMapping` (two Vec1 states → Vec1, spec compliant §9):
//! `out_j = factor·in1_j − in0_j`, one output per value of the first input (the second must
//! have at least as many). Linear: `J₀ = −I`, `J₁ = factor·I`.

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, SimError, SimResult, StateId};

use crate::assembled::{self, assembled_products};
use crate::common::{check_len, finish_init, mapping_ports, resolve_mechanical_ports, Ports};

crate::common::mapping_class! {
    multi {
        name = "WinchMultiMapping", module = "Compliant",
        description = "Maps a length and a rotation (two Vec1 states) to the winch error factor·rotation − length.",
        templates = ["Vec1d,Vec1d"],
        default_template = "Vec1d,Vec1d",
        data = {
            /// factor representing the ratio between a rotation and an elongation
            factor: Real = "1",
        },
    }
    #[derive(Clone, Default)]
    pub struct WinchMultiMapping {
        ports: Ports,
        sizes: Vec<usize>,
        factor: f64,
        jac: Vec<SparseRows>,
    }
}

fn check_sizes(sizes: &[usize]) -> Result<(), String> {
    if sizes.len() != 2 {
        return Err(format!("the mapping needs two input states (the length, then the rotation), it has {}", sizes.len()));
    }
    if sizes[1] < sizes[0] {
        return Err(format!("the second input has {} values but the first has {}: one rotation is needed per length", sizes[1], sizes[0]));
    }
    Ok(())
}

impl WinchMultiMapping {
    /// A mapping built directly (tests, programmatic use): inputs `(state, size)`.
    pub fn build(inputs: [(StateId, usize); 2], output: StateId, factor: f64) -> SimResult<Self> {
        let sizes = vec![inputs[0].1, inputs[1].1];
        check_sizes(&sizes).map_err(SimError::new)?;
        let mut m = WinchMultiMapping {
            ports: Ports::direct(&[inputs[0].0, inputs[1].0], Layout::Vec1, output, Layout::Vec1),
            sizes,
            factor,
            jac: Vec::new(),
        };
        m.assemble();
        Ok(m)
    }

    fn assemble(&mut self) {
        let n = self.sizes[0];
        self.jac = self
            .sizes
            .iter()
            .enumerate()
            .map(|(p, &s)| {
                let mut j = SparseRows::new(n, s);
                let v = if p == 0 { -1.0 } else { self.factor };
                if v != 0.0 {
                    for (k, row) in j.rows.iter_mut().enumerate() {
                        row.push((k, v));
                    }
                }
                j
            })
            .collect();
    }
}

impl Component for WinchMultiMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, true, "a Vec1d MechanicalObject", &[(Layout::Vec1, Layout::Vec1)])?;
        self.sizes = self.ports.inputs.iter().map(|s| cx.state_size(*s)).collect();
        check_sizes(&self.sizes)
            .map_err(|m| cx.error(m).hint("input=\"@length @rotation\": two Vec1d states, the second at least as large as the first"))?;
        self.factor = cx.data().get(Self::FACTOR);
        self.assemble();
        finish_init(cx, self.sizes[0], self)
    }
}

impl Mapping for WinchMultiMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        if inputs.len() != 2 {
            return Err(SimError::new(format!("{} inputs lent, 2 expected", inputs.len())));
        }
        let n = self.sizes[0];
        check_len("the first input's positions", inputs[0], n, 1)?;
        check_len("the second input's positions", inputs[1], n, 1)?;
        check_len("the output positions", out, n, 1)?;
        for (j, o) in out.iter_mut().take(n).enumerate() {
            *o = self.factor * inputs[1][j] - inputs[0][j];
        }
        Ok(())
    }

    assembled_products!();

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        if self.jac.is_empty() {
            return Err(SimError::new("the mapping is not initialised"));
        }
        Ok(if self.ports.map_forces { self.jac.clone() } else { assembled::empty_like(&self.jac) })
    }
}
