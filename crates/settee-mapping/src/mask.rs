//! Two Compliant mappings to scalars (spec compliant §9), linear with a constant Jacobian:
//!
//! * `MaskMapping`: keeps the components of the input elements whose mask entry is not zero, in
//!   element then component order (`dofs` holds one mask per element, the last one repeated);
//! * `ProjectionMapping`: `out[i] = x[k_i]·v_i − offset_i` for the `set` of `(k_i, v_i)` couples
//!   (`offset`: none means 0, the last one repeated).

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, SimResult, StateId};

use crate::assembled::{self, assembled_products};
use crate::common::{check_len, finish_init, mapping_ports, resolve_mechanical_ports, Ports};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec6, Layout::Vec1), (Layout::Vec3, Layout::Vec1)];

/// Which of the two classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Kind {
    #[default]
    Mask,
    Projection,
}

crate::common::mapping_class! {
    {
        templates = ["Vec6d,Vec1d", "Vec3d,Vec1d"],
        default_template = "Vec6d,Vec1d",
        class(
            name = "MaskMapping", module = "Compliant",
            description = "Maps the components of the input elements whose mask entry is not zero to scalars.",
            create = |_| ScalarMapping::new(Kind::Mask),
            data = {
                /// mask for each input dof (one coordinate per element, the last one repeated)
                dofs: Reals,
                /// Can the Jacobian and Hessian be precomputed?
                constant: Bool = "false",
            },
        ),
        class(
            name = "ProjectionMapping", module = "Compliant",
            description = "Maps input elements to their dot products with given vectors, minus offsets.",
            create = |_| ScalarMapping::new(Kind::Projection),
            data = {
                /// (index, coord) vector describing projection space
                set: Reals,
                /// scalar offset for each projection (if empty: 0, otherwise last value is repeated as needed)
                offset: Reals,
            },
        ),
    }
    /// Both mappings: output `i` is `Σ_c w_ic·x[k_i][c] − offset_i`, stored as Jacobian rows.
    #[derive(Clone, Default)]
    pub struct ScalarMapping {
        kind: Kind,
        ports: Ports,
        n_in: usize,
        /// Element size of the input (coordinates and derivatives are the same for vectors).
        k: usize,
        offsets: Vec<f64>,
        jac: Vec<SparseRows>,
    }
}

impl ScalarMapping {
    pub fn new(kind: Kind) -> ScalarMapping {
        ScalarMapping { kind, ..Default::default() }
    }

    /// A `MaskMapping` built directly (for tests): `masks` holds one `k`-real mask per element
    /// (at least one, the last repeated).
    pub fn mask(input: (StateId, usize), layout: Layout, output: StateId, masks: &[f64]) -> ScalarMapping {
        let mut m = Self::direct(Kind::Mask, input, layout, output);
        m.jac = vec![mask_rows(input.1, layout.deriv_size(), masks)];
        m.offsets = vec![0.0; m.jac[0].nrows()];
        m
    }

    /// A `ProjectionMapping` built directly (for tests).
    pub fn projection(input: (StateId, usize), layout: Layout, output: StateId, set: &[(usize, Vec<f64>)], offset: &[f64]) -> ScalarMapping {
        let mut m = Self::direct(Kind::Projection, input, layout, output);
        m.jac = vec![projection_rows(input.1, m.k, set)];
        m.offsets = repeat_last(offset, set.len());
        m
    }

    fn direct(kind: Kind, (input, n_in): (StateId, usize), layout: Layout, output: StateId) -> ScalarMapping {
        ScalarMapping { kind, ports: Ports::direct(&[input], layout, output, Layout::Vec1), n_in, k: layout.deriv_size(), ..Default::default() }
    }

    fn n_out(&self) -> usize {
        self.jac.first().map_or(0, |j| j.nrows())
    }
}

/// Rows `(i, c)` for every element `i` and component `c` whose mask is not zero.
fn mask_rows(n_in: usize, k: usize, masks: &[f64]) -> SparseRows {
    let n_masks = masks.len() / k;
    let mut rows = Vec::new();
    for i in (0..n_in).take_while(|_| n_masks > 0) {
        let m = i.min(n_masks - 1);
        for c in 0..k {
            if masks[m * k + c] != 0.0 {
                rows.push(vec![(i * k + c, 1.0)]);
            }
        }
    }
    SparseRows { ncols: n_in * k, rows }
}

/// One row `v_i` at the columns of element `k_i` per couple.
fn projection_rows(n_in: usize, k: usize, set: &[(usize, Vec<f64>)]) -> SparseRows {
    let rows = set.iter().map(|(e, v)| v.iter().enumerate().map(|(c, &w)| (e * k + c, w)).collect()).collect();
    SparseRows { ncols: n_in * k, rows }
}

/// `n` values, the last given one repeated (0 when none is given).
fn repeat_last(v: &[f64], n: usize) -> Vec<f64> {
    (0..n).map(|i| if v.is_empty() { 0.0 } else { v[i.min(v.len() - 1)] }).collect()
}

impl Component for ScalarMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, false, "a Vec1d MechanicalObject", TEMPLATES)?;
        let layout = self.ports.in_layouts[0];
        self.k = layout.deriv_size();
        self.n_in = cx.state_size(self.ports.inputs[0]);
        let k = self.k;
        let jac = match self.kind {
            Kind::Mask => {
                let masks = cx.data().get(Self::DOFS).to_vec();
                if masks.len() < k || !masks.len().is_multiple_of(k) {
                    return Err(cx
                        .error(format!(
                            "dofs holds {} values: the mask needs {k} values per element ({}), at least one element",
                            masks.len(),
                            layout.name()
                        ))
                        .hint(format!("e.g. dofs=\"{}\" keeps the first component of every element", {
                            let mut v = vec!["0"; k];
                            v[0] = "1";
                            v.join(" ")
                        })));
                }
                let j = mask_rows(self.n_in, k, &masks);
                self.offsets = vec![0.0; j.nrows()];
                j
            }
            Kind::Projection => {
                let flat = cx.data().get(Self::SET).to_vec();
                if !flat.len().is_multiple_of(k + 1) {
                    return Err(cx
                        .error(format!("set holds {} values, not a whole number of (index, {}-vector) couples", flat.len(), k))
                        .hint(format!("write each couple as an element index followed by {k} reals")));
                }
                let mut set = Vec::with_capacity(flat.len() / (k + 1));
                for (i, c) in flat.chunks_exact(k + 1).enumerate() {
                    let e = c[0];
                    if e < 0.0 || e.fract() != 0.0 || e as usize >= self.n_in {
                        return Err(cx
                            .error(format!("set[{i}] designates element {e}, but the input has {} elements", self.n_in))
                            .hint("the first number of each couple is an element index of the input state"));
                    }
                    set.push((e as usize, c[1..].to_vec()));
                }
                self.offsets = repeat_last(cx.data().get(Self::OFFSET), set.len());
                projection_rows(self.n_in, k, &set)
            }
        };
        self.jac = vec![jac];
        finish_init(cx, self.n_out(), self)
    }
}

impl Mapping for ScalarMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        check_len("the input positions", inputs[0], self.n_in, self.k)?;
        check_len("the output positions", out, self.n_out(), 1)?;
        for (i, row) in self.jac[0].rows.iter().enumerate() {
            out[i] = row.iter().map(|&(c, w)| inputs[0][c] * w).sum::<f64>() - self.offsets[i];
        }
        Ok(())
    }

    assembled_products!();

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        if !self.ports.map_forces {
            return Ok(assembled::zeros(self.n_out(), &[self.n_in * self.k]));
        }
        Ok(self.jac.clone())
    }
}
