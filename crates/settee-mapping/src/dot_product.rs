//! The Compliant plugin's dot-product mappings (Vec3 → Vec1, spec compliant §9):
//! `DotProductMapping` (`x_a·x_b` for index pairs of one state), `DotProductMultiMapping`
//! (`(parent, index)` pairs across states) and `DotProductFromTargetMapping` (`x_i·t_j` with
//! fixed targets). The first two have a geometric stiffness: `Jᵀf` changes with `x` as
//! `∂(Jᵀf)/∂x_a = f·∂x_b` and vice versa (always assembled, as in the plugin).

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, MatrixAccumulator, SimError, SimResult, StateId};

use crate::assembled::{assembled_products, finish_rows};
use crate::common::{check_len, dot, finish_init, mapping_ports, resolve_mechanical_ports, v3, Ports, V3};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec3, Layout::Vec1)];

/// Which of the three classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Pairs,
    Multi,
    FromTarget,
}

/// One factor of a product: input number and vector index in that input.
pub type End = (usize, usize);

crate::common::mapping_class! {
    {
        templates = ["Vec3d,Vec1d"],
        default_template = "Vec3d,Vec1d",
        class(
            name = "DotProductMapping", module = "Compliant",
            description = "Maps pairs of vectors of one state to their dot products.",
            create = |_| DotProductMapping::new(Kind::Pairs),
            data = {
                /// index pairs for computing deltas
                pairs: IndexTuples(2),
            },
        ),
        multi_class(
            name = "DotProductMultiMapping", module = "Compliant",
            description = "Maps pairs of vectors taken from several states to their dot products.",
            create = |_| DotProductMapping::new(Kind::Multi),
            data = {
                /// index pairs for computing deltas: (parent, index) (parent, index); empty: (0, i) (1, i) for every i
                pairs: IndexTuples(4),
            },
        ),
        class(
            name = "DotProductFromTargetMapping", module = "Compliant",
            description = "Maps vectors to their dot products with fixed targets.",
            create = |_| DotProductMapping::new(Kind::FromTarget),
            data = {
                /// indices of the dofs used to compute a dot product
                indices: Indices,
                /// targets to compute the dot products with (the last one is repeated)
                targets: RealTuples(3),
            },
        ),
    }
    /// The three mappings.
    #[derive(Clone)]
    pub struct DotProductMapping {
        kind: Kind,
        ports: Ports,
        sizes: Vec<usize>,
        /// The two factors of each product (FromTarget: the first one only).
        ends: Vec<[End; 2]>,
        /// FromTarget: the target of each product.
        targets: Vec<V3>,
        jac: Vec<SparseRows>,
        k_force: Vec<f64>,
    }
}

impl DotProductMapping {
    pub fn new(kind: Kind) -> DotProductMapping {
        DotProductMapping {
            kind,
            ports: Ports::default(),
            sizes: Vec::new(),
            ends: Vec::new(),
            targets: Vec::new(),
            jac: Vec::new(),
            k_force: Vec::new(),
        }
    }

    /// A mapping built directly (tests, programmatic use): `inputs` with their sizes, the output,
    /// the factors of each product and, for FromTarget, the targets (the last one repeated).
    pub fn build(kind: Kind, inputs: &[(StateId, usize)], output: StateId, ends: Vec<[End; 2]>, targets: Vec<V3>) -> SimResult<DotProductMapping> {
        let mut m = DotProductMapping::new(kind);
        m.ports = Ports::direct(&inputs.iter().map(|i| i.0).collect::<Vec<_>>(), Layout::Vec3, output, Layout::Vec1);
        m.sizes = inputs.iter().map(|i| i.1).collect();
        m.ends = ends;
        m.targets = targets;
        m.check().map_err(SimError::new)?;
        Ok(m)
    }

    /// Indices in range, targets present (then padded with the last one).
    fn check(&mut self) -> Result<(), String> {
        let ends_used = if self.kind == Kind::FromTarget { 1 } else { 2 };
        for (k, e) in self.ends.iter().enumerate() {
            for &(p, i) in &e[..ends_used] {
                match self.sizes.get(p) {
                    None => return Err(format!("product {k} refers to input {p}, but the mapping has {} inputs", self.sizes.len())),
                    Some(&n) if i >= n => {
                        let what = if self.kind == Kind::Multi { format!("vector {i} of input {p}") } else { format!("vector {i}") };
                        return Err(format!("product {k} refers to {what}, but the input has {n} vectors"));
                    }
                    _ => {}
                }
            }
        }
        if self.kind == Kind::FromTarget && !self.ends.is_empty() {
            let Some(&last) = self.targets.last() else { return Err("no targets given".into()) };
            self.targets.resize(self.ends.len(), last);
        }
        Ok(())
    }

    fn ds_ok(&self, inputs: &[&[f64]]) -> SimResult {
        if inputs.len() != self.sizes.len() {
            return Err(SimError::new(format!("{} inputs lent, {} expected", inputs.len(), self.sizes.len())));
        }
        for (x, &n) in inputs.iter().zip(&self.sizes) {
            check_len("the input vectors", x, n, 3)?;
        }
        Ok(())
    }

    fn has_gs(&self) -> bool {
        self.ports.map_forces && self.kind != Kind::FromTarget && !self.jac.is_empty()
    }
}

impl Component for DotProductMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, self.kind == Kind::Multi, "a Vec1d MechanicalObject", TEMPLATES)?;
        self.sizes = self.ports.inputs.iter().map(|s| cx.state_size(*s)).collect();
        let d = cx.data();
        let (what, hint) = match self.kind {
            Kind::Pairs => {
                self.ends = d.get(Self::PAIRS).chunks_exact(2).map(|p| [(0, p[0]), (0, p[1])]).collect();
                ("pairs", "set pairs=\"a b …\", the indices of the two vectors of each product")
            }
            Kind::Multi => {
                self.ends = d.get(Self::PAIRS).chunks_exact(4).map(|p| [(p[0], p[1]), (p[2], p[3])]).collect();
                if self.ends.is_empty() {
                    if self.sizes.len() != 2 || self.sizes[0] != self.sizes[1] {
                        return Err(cx
                            .error(format!("pairs is empty and the inputs are not two states of the same size ({:?})", self.sizes))
                            .hint("set pairs=\"p0 i0 p1 i1 …\" ((parent, index) of both factors), or map two states of the same size"));
                    }
                    self.ends = (0..self.sizes[0]).map(|i| [(0, i), (1, i)]).collect();
                    let flat: Vec<usize> = self.ends.iter().flat_map(|e| [e[0].0, e[0].1, e[1].0, e[1].1]).collect();
                    cx.data_mut().put(Self::PAIRS, flat);
                }
                ("pairs", "set pairs=\"p0 i0 p1 i1 …\", the (parent, index) of both factors of each product")
            }
            Kind::FromTarget => {
                self.ends = d.get(Self::INDICES).iter().map(|&i| [(0, i), (0, i)]).collect();
                self.targets = d.get(Self::TARGETS).chunks_exact(3).map(v3).collect();
                ("indices", "set indices=\"i …\" and targets=\"x y z …\"")
            }
        };
        if self.ends.is_empty() {
            return Err(cx.error(format!("{what} is empty: the mapping has no product to compute")).hint(hint));
        }
        self.check().map_err(|m| cx.error(m).hint(hint))?;
        if self.kind == Kind::FromTarget {
            let flat: Vec<f64> = self.targets.iter().flatten().copied().collect();
            cx.data_mut().put(Self::TARGETS, flat);
        }
        finish_init(cx, self.ends.len(), self)
    }
}

impl Mapping for DotProductMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.ds_ok(inputs)?;
        let n = self.ends.len();
        check_len("the output positions", out, n, 1)?;
        let mut jac: Vec<SparseRows> = self.sizes.iter().map(|&s| SparseRows::new(n, 3 * s)).collect();
        for (k, &[(pa, ia), (pb, ib)]) in self.ends.iter().enumerate() {
            let a = v3(&inputs[pa][3 * ia..]);
            let b = if self.kind == Kind::FromTarget { self.targets[k] } else { v3(&inputs[pb][3 * ib..]) };
            out[k] = dot(a, b);
            for c in 0..3 {
                jac[pa].rows[k].push((3 * ia + c, b[c]));
                if self.kind != Kind::FromTarget {
                    jac[pb].rows[k].push((3 * ib + c, a[c]));
                }
            }
        }
        for j in &mut jac {
            finish_rows(j);
        }
        self.jac = jac;
        Ok(())
    }

    assembled_products!(applied);

    fn update_k(&mut self, f_out: &[f64]) -> SimResult {
        self.k_force.clear();
        if self.has_gs() && f_out.len() >= self.ends.len() {
            self.k_force.extend_from_slice(&f_out[..self.ends.len()]);
        }
        Ok(())
    }

    /// `dF_a += k·f·dx_b`, `dF_b += k·f·dx_a` for each product.
    fn apply_djt(&mut self, inputs: &mut [&mut [f64]], dx_in: &[&[f64]], f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.has_gs() {
            return Ok(());
        }
        self.ds_ok(dx_in)?;
        let f = if self.k_force.is_empty() { f_out } else { &self.k_force };
        check_len("the output forces", f, self.ends.len(), 1)?;
        for (x, &n) in inputs.iter().zip(&self.sizes) {
            check_len("the input forces", x, n, 3)?;
        }
        for (k, &[(pa, ia), (pb, ib)]) in self.ends.iter().enumerate() {
            let s = k_factor * f[k];
            let (da, db) = (v3(&dx_in[pa][3 * ia..]), v3(&dx_in[pb][3 * ib..]));
            for c in 0..3 {
                inputs[pa][3 * ia + c] += s * db[c];
                inputs[pb][3 * ib + c] += s * da[c];
            }
        }
        Ok(())
    }

    fn add_geometric_stiffness(&self, m: &mut MatrixAccumulator, f_out: &[f64], k_factor: f64) -> SimResult {
        if !self.has_gs() {
            return Ok(());
        }
        check_len("the output forces", f_out, self.ends.len(), 1)?;
        for (k, &[(pa, ia), (pb, ib)]) in self.ends.iter().enumerate() {
            let s = k_factor * f_out[k];
            let (sa, sb) = (self.ports.inputs[pa], self.ports.inputs[pb]);
            for c in 0..3 {
                m.add(sa, 3 * ia + c, sb, 3 * ib + c, s);
                m.add(sb, 3 * ib + c, sa, 3 * ia + c, s);
            }
        }
        Ok(())
    }
}
