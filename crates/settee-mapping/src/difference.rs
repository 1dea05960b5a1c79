//! The Compliant plugin's difference mappings (spec compliant §9), all linear with a constant
//! Jacobian of ±1 entries, built at init:
//!
//! * `DifferenceMapping`: `out[j] = x[b_j] − x[a_j]` for the `pairs` `(a_j, b_j)` of one input
//!   (translation part of a rigid input); a pair `(a, a)` gives 0 and an empty Jacobian row.
//! * `DifferenceMultiMapping`: `out[j] = in1[b_j] − in0[a_j]`; with no `pairs` and inputs of
//!   equal size, the pairs are `(i, i)`.
//! * `DifferenceFromTargetMapping` (alias `OffsetMapping`): `out[j] = x[k_j] − t` (or
//!   `t − x[k_j]` when `inverted`) for the selected `indices` (empty: every element); the target
//!   is `targets[targetIndices[j]]`, or `targets[min(j, last)]` without `targetIndices`; no
//!   `targets` means the initial positions.

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, SimResult, StateId, VecId};

use crate::assembled::{self, assembled_products};
use crate::common::{check_len, finish_init, mapping_ports, resolve_mechanical_ports, DrawData, MappingData, Ports};

const DIFFERENCE_TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec3, Layout::Vec3), (Layout::Vec1, Layout::Vec1), (Layout::Rigid3, Layout::Vec3)];
const TARGET_TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec3, Layout::Vec3), (Layout::Vec1, Layout::Vec1)];

/// Which of the three classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Kind {
    /// `x[b] − x[a]`, one input.
    #[default]
    Pairs,
    /// `in1[b] − in0[a]`.
    Multi,
    /// `±(x[k] − t)`.
    FromTarget,
}

/// One output element: a signed sum of input elements, minus a target for FromTarget.
#[derive(Clone, Debug, PartialEq)]
struct Term {
    /// `(input, element, sign)`, at most two (none for a pair `(a, a)`).
    parts: Vec<(usize, usize, f64)>,
    /// Target coordinates subtracted (FromTarget; its sign follows `inverted`).
    target: Option<Vec<f64>>,
}

/// Drawing Data of the compliant mappings (rendering only), as SOFA's DifferenceMapping and
/// SafeDistanceMapping declare them: nothing drawn by default (scale `-1`).
#[settee_core::data_group(data = {
    /// Scale for object display
    showObjectScale: Real = "-1",
    /// Color for object display. (default=[1.0,1.0,0.0,1.0])
    showColor: Color = "1 1 0 1",
})]
pub struct HiddenDrawData;

crate::common::mapping_class! {
    {
        default_template = "Vec3d,Vec3d",
        class(
            name = "DifferenceMapping", module = "Compliant",
            description = "Maps pairs of input elements (a, b) to the difference of their positions x_b − x_a.",
            create = |_| DifferenceMapping::new(Kind::Pairs),
            templates = ["Vec3d,Vec3d", "Vec1d,Vec1d", "Rigid3d,Vec3d"],
            data = {
                /// index pairs for computing deltas
                pairs: IndexTuples(2),
                /// Can the Jacobian and Hessian be precomputed?
                constant: Bool = "false",
            },
            inherit = [MappingData, Self, HiddenDrawData],
        ),
        multi_class(
            name = "DifferenceMultiMapping", module = "Compliant",
            description = "Maps pairs (a, b) of elements of two inputs to the difference of their positions in1[b] − in0[a].",
            create = |_| DifferenceMapping::new(Kind::Multi),
            templates = ["Vec3d,Vec3d", "Vec1d,Vec1d", "Rigid3d,Vec3d"],
            data = {
                /// index pairs for computing deltas
                pairs: IndexTuples(2),
                /// Can the Jacobian and Hessian be precomputed?
                constant: Bool = "false",
            },
        ),
        class(
            name = "DifferenceFromTargetMapping", module = "Compliant",
            description = "Maps input elements to their difference with fixed targets, p − t (or t − p when inverted).",
            create = |_| DifferenceMapping::new(Kind::FromTarget),
            templates = ["Vec3d,Vec3d", "Vec1d,Vec1d"],
            data = {
                /// indices of the parent points
                indices: Indices,
                /// target positions which who computes deltas
                #[alias("offsets")]
                targets: Reals,
                /// target indices in target positions which who computes deltas
                targetIndices: Indices,
                /// target-p (rather than p-target)
                inverted: Bool = "false",
                /// Can the Jacobian and Hessian be precomputed?
                constant: Bool = "false",
            },
            inherit = [MappingData, Self, DrawData],
        ),
    }
    /// The three mappings: each output element is a signed sum of input elements and a target.
    ///
    /// `constant` is `ConstantAssembledMapping`'s Data: the Jacobian of these mappings never
    /// changes, so it is built at init whatever its value.
    #[derive(Clone, Default)]
    pub struct DifferenceMapping {
        kind: Kind,
        ports: Ports,
        terms: Vec<Term>,
        sizes: Vec<usize>,
        inverted: bool,
        /// Coordinate and derivative sizes of the input elements, and the output element size.
        cs: usize,
        ds: usize,
        out_size: usize,
        jac: Vec<SparseRows>,
    }
}

impl DifferenceMapping {
    pub fn new(kind: Kind) -> DifferenceMapping {
        DifferenceMapping { kind, ..Default::default() }
    }

    /// `DifferenceMapping` / `DifferenceMultiMapping` built directly (for tests): the inputs with
    /// their sizes and the pairs (for Multi, `a` in input 0 and `b` in input 1).
    pub fn with_pairs(kind: Kind, inputs: &[(StateId, usize)], layout: Layout, output: StateId, pairs: &[(usize, usize)]) -> DifferenceMapping {
        let out_layout = if layout == Layout::Rigid3 { Layout::Vec3 } else { layout };
        let mut m = Self::direct(kind, inputs, layout, output, out_layout);
        m.terms = pairs.iter().map(|&(a, b)| m.pair_term(a, b)).collect();
        m.assemble();
        m
    }

    /// `DifferenceFromTargetMapping` built directly (for tests): `targets` are already resolved,
    /// one per output element.
    pub fn with_targets(
        input: (StateId, usize),
        layout: Layout,
        output: StateId,
        indices: &[usize],
        targets: &[Vec<f64>],
        inverted: bool,
    ) -> DifferenceMapping {
        let mut m = Self::direct(Kind::FromTarget, &[input], layout, output, layout);
        m.inverted = inverted;
        let sign = if inverted { -1.0 } else { 1.0 };
        m.terms = indices.iter().zip(targets).map(|(&k, t)| Term { parts: vec![(0, k, sign)], target: Some(t.clone()) }).collect();
        m.assemble();
        m
    }

    fn direct(kind: Kind, inputs: &[(StateId, usize)], layout: Layout, output: StateId, out_layout: Layout) -> DifferenceMapping {
        DifferenceMapping {
            kind,
            ports: Ports::direct(&inputs.iter().map(|i| i.0).collect::<Vec<_>>(), layout, output, out_layout),
            sizes: inputs.iter().map(|i| i.1).collect(),
            cs: layout.coord_size(),
            ds: layout.deriv_size(),
            out_size: out_layout.deriv_size(),
            ..Default::default()
        }
    }

    /// `x[b] − x[a]` (Pairs: both in input 0; Multi: `a` in input 0, `b` in input 1).
    fn pair_term(&self, a: usize, b: usize) -> Term {
        let (pa, pb) = if self.kind == Kind::Multi { (0, 1) } else { (0, 0) };
        let parts = if self.kind == Kind::Pairs && a == b { Vec::new() } else { vec![(pa, a, -1.0), (pb, b, 1.0)] };
        Term { parts, target: None }
    }

    /// The ±1 Jacobian blocks (within a row, entries by increasing column, as SOFA inserts them).
    fn assemble(&mut self) {
        let (ds, ko) = (self.ds, self.out_size);
        let n = self.terms.len() * ko;
        self.jac = self.sizes.iter().map(|&s| SparseRows::new(n, s * ds)).collect();
        for (j, t) in self.terms.iter().enumerate() {
            let mut parts = t.parts.clone();
            parts.sort_by_key(|&(p, k, _)| (p, k));
            for c in 0..ko {
                for &(p, k, s) in &parts {
                    self.jac[p].rows[j * ko + c].push((k * ds + c, s));
                }
            }
        }
    }

    fn check_inputs(&self, inputs: &[&[f64]], k: usize, what: &str) -> SimResult {
        for (v, &n) in inputs.iter().zip(&self.sizes) {
            check_len(what, v, n, k)?;
        }
        Ok(())
    }

    /// The pairs of `pairs`, checked against the input sizes.
    fn read_pairs(&self, cx: &InitCtx, flat: &[usize]) -> SimResult<Vec<(usize, usize)>> {
        let mut pairs = Vec::with_capacity(flat.len() / 2);
        for (j, c) in flat.chunks_exact(2).enumerate() {
            for (w, &i) in c.iter().enumerate() {
                let p = if self.kind == Kind::Multi { w } else { 0 };
                if i >= self.sizes[p] {
                    let which = if self.kind == Kind::Multi { format!("input {p}") } else { "the input".to_string() };
                    return Err(cx
                        .error(format!("pairs[{j}] = ({}, {}): index {i} is out of range, {which} has {} elements", c[0], c[1], self.sizes[p]))
                        .hint("pairs lists couples of element indices of the input state(s)"));
                }
            }
            pairs.push((c[0], c[1]));
        }
        Ok(pairs)
    }

    /// `DifferenceFromTargetMapping`'s terms from `indices`, `targets` and `targetIndices`.
    fn target_terms(&mut self, cx: &mut InitCtx) -> SimResult<Vec<Term>> {
        let d = cx.data();
        let (cs, n_in) = (self.cs, self.sizes[0]);
        let given = d.get(Self::INDICES).to_vec();
        let mut targets = d.get(Self::TARGETS).to_vec();
        let target_indices = d.get(Self::TARGET_INDICES).to_vec();
        self.inverted = d.get(Self::INVERTED);
        if let Some((k, &i)) = given.iter().enumerate().find(|(_, &i)| i >= n_in) {
            return Err(cx
                .error(format!("indices[{k}] = {i}, but the input has {n_in} elements"))
                .hint("the indices designate elements of the input state (leave them out to map every element)"));
        }
        let selected: Vec<usize> = if given.is_empty() { (0..n_in).collect() } else { given };
        if !targets.len().is_multiple_of(cs) {
            return Err(cx
                .error(format!("targets holds {} values, not a whole number of {}-value coordinates", targets.len(), cs))
                .hint("give the target coordinates in the input's template"));
        }
        if targets.is_empty() {
            // No targets: the initial positions of the selected elements.
            let x = cx.read_vec(self.ports.inputs[0], VecId::POSITION);
            targets = selected.iter().flat_map(|&k| x[k * cs..(k + 1) * cs].to_vec()).collect();
            cx.data_mut().put(Self::TARGETS, targets.clone());
        }
        let n_targets = targets.len() / cs;
        if !target_indices.is_empty() && target_indices.len() < selected.len() {
            return Err(cx
                .error(format!("targetIndices has {} entries but {} elements are mapped", target_indices.len(), selected.len()))
                .hint("give one target index per mapped element, or none (then targets are taken in order, the last one repeated)"));
        }
        if let Some((j, &t)) = target_indices.iter().enumerate().find(|(_, &t)| t >= n_targets) {
            return Err(cx
                .error(format!("targetIndices[{j}] = {t}, but there are {n_targets} targets"))
                .hint("targetIndices designate entries of `targets`"));
        }
        let sign = if self.inverted { -1.0 } else { 1.0 };
        if n_targets == 0 {
            // Only possible with an empty input: nothing is mapped.
            return Ok(Vec::new());
        }
        let mut terms = Vec::with_capacity(selected.len());
        for (j, &k) in selected.iter().enumerate() {
            let t = if target_indices.is_empty() { j.min(n_targets - 1) } else { target_indices[j] };
            terms.push(Term { parts: vec![(0, k, sign)], target: Some(targets[t * cs..(t + 1) * cs].to_vec()) });
        }
        Ok(terms)
    }
}

impl Component for DifferenceMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let templates = if self.kind == Kind::FromTarget { TARGET_TEMPLATES } else { DIFFERENCE_TEMPLATES };
        self.ports = resolve_mechanical_ports(cx, self.kind == Kind::Multi, "a MechanicalObject", templates)?;
        let out_layout = self.ports.out_layout.expect("mechanical output");
        let layout = self.ports.in_layouts[0];
        (self.cs, self.ds, self.out_size) = (layout.coord_size(), layout.deriv_size(), out_layout.deriv_size());
        self.sizes = self.ports.inputs.iter().map(|s| cx.state_size(*s)).collect();
        if self.kind == Kind::Multi && self.sizes.len() != 2 {
            return Err(cx
                .error(format!("DifferenceMultiMapping maps two inputs, {} given", self.sizes.len()))
                .hint("set input=\"@first @second\": the output is second[b] − first[a]"));
        }
        self.terms = match self.kind {
            Kind::FromTarget => self.target_terms(cx)?,
            _ => {
                let flat = cx.data().get(Self::PAIRS).to_vec();
                let mut pairs = self.read_pairs(cx, &flat)?;
                if self.kind == Kind::Multi && pairs.is_empty() && self.sizes[0] == self.sizes[1] {
                    pairs = (0..self.sizes[0]).map(|i| (i, i)).collect();
                    let v = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
                    cx.data_mut().put(Self::PAIRS, v);
                }
                if pairs.is_empty() {
                    cx.warn("no pairs: the output is empty");
                }
                pairs.iter().map(|&(a, b)| self.pair_term(a, b)).collect()
            }
        };
        self.assemble();
        finish_init(cx, self.terms.len(), self)
    }
}

impl Mapping for DifferenceMapping {
    mapping_ports!();

    /// On coordinates: the translation parts (`out_size` reals) of the elements and targets.
    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let (cs, ko) = (self.cs, self.out_size);
        self.check_inputs(inputs, cs, "the input positions")?;
        check_len("the output positions", out, self.terms.len(), ko)?;
        for (j, t) in self.terms.iter().enumerate() {
            let o = &mut out[j * ko..(j + 1) * ko];
            match &t.target {
                // p − t, or t − p when inverted (SOFA's operand order).
                Some(tg) => {
                    let (_, k, s) = t.parts[0];
                    let x = &inputs[0][k * cs..];
                    for c in 0..ko {
                        o[c] = if s > 0.0 { x[c] - tg[c] } else { tg[c] - x[c] };
                    }
                }
                None if t.parts.is_empty() => o.fill(0.0),
                None => {
                    let (pa, a, _) = t.parts[0];
                    let (pb, b, _) = t.parts[1];
                    for c in 0..ko {
                        o[c] = inputs[pb][b * cs + c] - inputs[pa][a * cs + c];
                    }
                }
            }
        }
        Ok(())
    }

    assembled_products!();

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        if !self.ports.map_forces {
            let cols: Vec<usize> = self.sizes.iter().map(|&s| s * self.ds).collect();
            return Ok(assembled::zeros(self.terms.len() * self.out_size, &cols));
        }
        Ok(self.jac.clone())
    }
}
