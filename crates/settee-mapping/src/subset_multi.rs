//! `SubsetMultiMapping`: gathers elements of several input states into one output,
//! `out[i] = in_{p_i}[k_i]` for the `(p_i, k_i)` couples of `indexPairs` (a rigid input mapped to
//! a vector output gives its centre). The Compliant tests use it to connect points of different
//! states before a DistanceMapping.

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, SimResult, StateId};

use crate::assembled::assembled_products;
use crate::common::{check_len, finish_init, mapping_ports, resolve_mechanical_ports, Ports};

const TEMPLATES: &[(Layout, Layout)] = &[
    (Layout::Vec3, Layout::Vec3),
    (Layout::Vec2, Layout::Vec2),
    (Layout::Vec1, Layout::Vec1),
    (Layout::Rigid3, Layout::Rigid3),
    (Layout::Rigid3, Layout::Vec3),
];

crate::common::mapping_class! {
    multi {
        name = "SubsetMultiMapping", module = "Sofa.Component.Mapping.Linear",
        description = "Maps elements of several input states (couples parent, index) to one output state.",
        templates = ["Vec3d,Vec3d", "Vec2d,Vec2d", "Vec1d,Vec1d", "Rigid3d,Rigid3d", "Rigid3d,Vec3d"],
        default_template = "Vec3d,Vec3d",
        data = {
            /// list of couples (parent index + index in the parent)
            indexPairs: IndexTuples(2),
        },
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct SubsetMultiMapping {
        ports: Ports,
        /// `(input, element)` of each output element.
        pairs: Vec<(usize, usize)>,
        sizes: Vec<usize>,
        /// Coordinate and derivative sizes of the input and output elements.
        cs: (usize, usize),
        ds: (usize, usize),
        /// One block per input, built at init.
        jac: Vec<SparseRows>,
    }
}

impl SubsetMultiMapping {
    /// A mapping built directly (for tests and programmatic use): the inputs with their sizes.
    pub fn build(
        inputs: &[(StateId, usize)],
        in_layout: Layout,
        output: StateId,
        out_layout: Layout,
        pairs: Vec<(usize, usize)>,
    ) -> SubsetMultiMapping {
        let mut m = SubsetMultiMapping {
            ports: Ports::direct(&inputs.iter().map(|i| i.0).collect::<Vec<_>>(), in_layout, output, out_layout),
            pairs,
            sizes: inputs.iter().map(|i| i.1).collect(),
            cs: (in_layout.coord_size(), out_layout.coord_size()),
            ds: (in_layout.deriv_size(), out_layout.deriv_size()),
            jac: Vec::new(),
        };
        m.assemble();
        m
    }

    /// Output derivative component `c` of element `i` reads component `c` of its source.
    fn assemble(&mut self) {
        let (ki, ko) = self.ds;
        let n = self.pairs.len() * ko;
        self.jac = self.sizes.iter().map(|&s| SparseRows::new(n, s * ki)).collect();
        if !self.ports.map_forces {
            return;
        }
        for (i, &(p, k)) in self.pairs.iter().enumerate() {
            for c in 0..ko {
                self.jac[p].rows[i * ko + c].push((k * ki + c, 1.0));
            }
        }
    }

    /// `out[i] = in[p_i][k_i]` on the first `ko` of the `ki` reals of each element.
    fn gather(&self, out: &mut [f64], inputs: &[&[f64]], (ki, ko): (usize, usize), what: &str) -> SimResult {
        for (v, &n) in inputs.iter().zip(&self.sizes) {
            check_len(what, v, n, ki)?;
        }
        check_len("the output", out, self.pairs.len(), ko)?;
        for (i, &(p, k)) in self.pairs.iter().enumerate() {
            out[i * ko..(i + 1) * ko].copy_from_slice(&inputs[p][k * ki..k * ki + ko]);
        }
        Ok(())
    }
}

impl Component for SubsetMultiMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, true, "a MechanicalObject", TEMPLATES)?;
        let out_layout = self.ports.out_layout.expect("mechanical output");
        let in_layout = self.ports.in_layouts[0];
        self.cs = (in_layout.coord_size(), out_layout.coord_size());
        self.ds = (in_layout.deriv_size(), out_layout.deriv_size());
        self.sizes = self.ports.inputs.iter().map(|s| cx.state_size(*s)).collect();
        let flat = cx.data().get(Self::INDEX_PAIRS).to_vec();
        let mut pairs = Vec::with_capacity(flat.len() / 2);
        for (i, c) in flat.chunks_exact(2).enumerate() {
            let (p, k) = (c[0], c[1]);
            if p >= self.sizes.len() {
                return Err(cx
                    .error(format!("indexPairs[{i}] = ({p}, {k}) names input {p}, but the mapping has {} inputs", self.sizes.len()))
                    .hint("the first number of each couple is the position of the parent state in `input`, from 0"));
            }
            if k >= self.sizes[p] {
                return Err(cx
                    .error(format!("indexPairs[{i}] = ({p}, {k}): input {p} has {} elements", self.sizes[p]))
                    .hint("the second number of each couple is an element index in that parent state"));
            }
            pairs.push((p, k));
        }
        self.pairs = pairs;
        self.assemble();
        finish_init(cx, self.pairs.len(), self)
    }
}

impl Mapping for SubsetMultiMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.gather(out, inputs, self.cs, "the input positions")
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.gather(out, inputs, self.ds, "the input velocities")
    }

    assembled_products!(apply_jt);

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        Ok(self.jac.clone())
    }
}
