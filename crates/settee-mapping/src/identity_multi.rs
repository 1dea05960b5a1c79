//! `IdentityMultiMapping`: the concatenation of several input states of one layout
//! (Vec1d, Vec2d, Vec3d or Rigid3d) into one output state, in the order of `input`.

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, SimResult, StateId};

use crate::common::{check_len, finish_init, mapping_ports, resolve_mechanical_ports, Ports};

const TEMPLATES: &[(Layout, Layout)] =
    &[(Layout::Vec1, Layout::Vec1), (Layout::Vec2, Layout::Vec2), (Layout::Vec3, Layout::Vec3), (Layout::Rigid3, Layout::Rigid3)];

crate::common::mapping_class! {
    multi {
        name = "IdentityMultiMapping", module = "Sofa.Component.Mapping.Linear",
        description = "Concatenates several input states into one output state.",
        templates = ["Vec1d,Vec1d", "Vec2d,Vec2d", "Vec3d,Vec3d", "Rigid3d,Rigid3d"],
        default_template = "Vec3d,Vec3d",
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct IdentityMultiMapping {
        ports: Ports,
        /// Elements of each input.
        sizes: Vec<usize>,
        cs: usize,
        ds: usize,
    }
}

impl IdentityMultiMapping {
    /// A mapping built directly (tests): the inputs with their sizes.
    pub fn build(inputs: &[(StateId, usize)], layout: Layout, output: StateId) -> Self {
        IdentityMultiMapping {
            ports: Ports::direct(&inputs.iter().map(|i| i.0).collect::<Vec<_>>(), layout, output, layout),
            sizes: inputs.iter().map(|i| i.1).collect(),
            cs: layout.coord_size(),
            ds: layout.deriv_size(),
        }
    }

    fn total(&self) -> usize {
        self.sizes.iter().sum()
    }

    /// Copies the inputs one after the other (`k` reals per element).
    fn concat(&self, out: &mut [f64], inputs: &[&[f64]], k: usize, what: &str) -> SimResult {
        check_len(&format!("the output {what}"), out, self.total(), k)?;
        let mut at = 0;
        for (x, &n) in inputs.iter().zip(&self.sizes) {
            check_len(&format!("the input {what}"), x, n, k)?;
            out[at..at + n * k].copy_from_slice(&x[..n * k]);
            at += n * k;
        }
        Ok(())
    }
}

impl Component for IdentityMultiMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, true, "a MechanicalObject", TEMPLATES)?;
        let l = self.ports.in_layouts[0];
        if let Some(other) = self.ports.in_layouts.iter().find(|&&o| o != l) {
            return Err(cx
                .error(format!("the inputs mix {} and {} states", l.name(), other.name()))
                .hint("every input must have the output's template"));
        }
        (self.cs, self.ds) = (l.coord_size(), l.deriv_size());
        self.sizes = self.ports.inputs.iter().map(|s| cx.state_size(*s)).collect();
        let n = self.total();
        finish_init(cx, n, self)
    }
}

impl Mapping for IdentityMultiMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.concat(out, inputs, self.cs, "positions")
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.concat(out, inputs, self.ds, "velocities")
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        let k = self.ds;
        check_len("the output forces", out, self.total(), k)?;
        let mut at = 0;
        for (f, &n) in inputs.iter_mut().zip(&self.sizes) {
            check_len("the input forces", f, n, k)?;
            for (a, b) in f[..n * k].iter_mut().zip(&out[at..at + n * k]) {
                *a += b;
            }
            at += n * k;
        }
        Ok(())
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let k = self.ds;
        let rows = self.total() * k;
        let mut at = 0;
        let mut js = Vec::with_capacity(self.sizes.len());
        for &n in &self.sizes {
            let mut j = SparseRows::new(rows, n * k);
            if self.ports.map_forces {
                for c in 0..n * k {
                    j.rows[at + c].push((c, 1.0));
                }
            }
            at += n * k;
            js.push(j);
        }
        Ok(js)
    }
}
