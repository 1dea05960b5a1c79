//! `SpringForceField`: linear springs between DOFs of `object1` and `object2` (both default to the
//! node's mechanical state), SOFA's `SpringForceField` (formerly `StiffSpringForceField`).
//!
//! Spring `(a, b, ks, kd, L)` (forcefields-mappings spec §2.1): with `u = x2[b] − x1[a]`, `d = |u|`,
//! `û = u/d`, the intensity `F = ks·(d − L) + kd·û·(v2[b] − v1[a])` gives `f1[a] += F·û`,
//! `f2[b] −= F·û`; the stored Jacobian `K_s = (ks − F/d)·ûûᵀ + (F/d)·I` is reused by `addDForce`
//! and the assembled stiffness. Velocity damping produces no damping matrix (the `bFactor` is
//! ignored, as in SOFA). Only the positional part (`CPos`/`DPos`) of each DOF is acted on: the
//! centre of rigid frames, every component of `Vec6d`.

use settee_core::component::ForceField;
use settee_core::role::{Interaction, MechanicalState};
use settee_core::{component, data_group, Component, DataSet, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

use crate::kernel::{SpringKernel, SPRING_MIN_LENGTH};

/// SpringForceField's Data, inherited by the classes built on it (QuadBendingSprings,
/// RegularGridSpringForceField, MeshSpringForceField), whose `init` runs this one's or writes
/// its springs.
#[data_group(data = {
    /// stiffness of the springs created from the index lists (resized to the number of springs by repeating the last value)
    stiffness: Reals = "100",
    /// damping of the springs created from the index lists (resized to the number of springs by repeating the last value)
    damping: Reals = "5",
    /// springs `m1 m2 ks kd L` (index in object1, index in object2, stiffness, damping, rest length); takes precedence over the index lists
    spring: RealTuples(5),
    /// indices of the spring ends in the first state
    #[alias("indices1")]
    springsIndices1: Indices,
    /// indices of the spring ends in the second state
    #[alias("indices2")]
    springsIndices2: Indices,
    /// rest lengths of the springs created from the index lists (empty: 0; resized by repeating the last value)
    #[alias("length")]
    lengths: Reals,
    /// per spring: only act when stretched (resized by repeating the last value)
    elongationOnly: Strings = "0",
    /// per spring: whether the spring acts (resized by repeating the last value)
    enabled: Strings = "1",
    /// file of springs (SOFA .xs3 format, not supported yet)
    fileSprings: FileName,
    /// size of the drawn springs (rendering only)
    showArrowSize: Real = "0.01",
    /// how springs are drawn: 0 line, 1 cylinder, 2 arrow (rendering only)
    drawMode: Int = "0",
    /// Rayleigh damping coefficient related to stiffness
    rayleighStiffness: Real = "0",
})]
pub struct SpringData;

/// SOFA's `LinearSpring`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearSpring {
    pub m1: usize,
    pub m2: usize,
    pub ks: f64,
    pub kd: f64,
    /// Rest length.
    pub initpos: f64,
    pub elongation_only: bool,
    pub enabled: bool,
}

impl LinearSpring {
    pub fn new(m1: usize, m2: usize, ks: f64, kd: f64, initpos: f64) -> LinearSpring {
        LinearSpring { m1, m2, ks, kd, initpos, elongation_only: false, enabled: true }
    }
}

/// Dimension of the positional part a spring acts on (SOFA's `DataTypes::spatial_dimensions`).
pub fn spring_dim(layout: Layout) -> usize {
    match layout {
        Layout::Vec1 => 1,
        Layout::Vec2 | Layout::Rigid2 => 2,
        Layout::Vec3 | Layout::Rigid3 => 3,
        Layout::Vec6 => 6,
    }
}

/// Linear springs between pairs of DOFs of one or two mechanical states.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    markers = [Interaction],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d", "Rigid3d"],
    template_rule = FromPair,
    create = |args| SpringForceField::new(args.layout.unwrap_or(Layout::Vec3)),
    inherit = [SpringData],
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
    },
)]
#[derive(Clone)]
pub struct SpringForceField {
    layout: Layout,
    /// Positional dimension N, coordinate and derivative sizes.
    kernel: SpringKernel,
    s1: Option<StateId>,
    s2: Option<StateId>,
    springs: Vec<LinearSpring>,
    /// Per spring, the N×N Jacobian `K_s` (row-major) of the last `addForce`.
    dfdx: Vec<f64>,
    rayleigh_stiffness: f64,
}

impl SpringForceField {
    pub fn new(layout: Layout) -> SpringForceField {
        SpringForceField {
            layout,
            kernel: SpringKernel::new(layout, SPRING_MIN_LENGTH),
            s1: None,
            s2: None,
            springs: Vec::new(),
            dfdx: Vec::new(),
            rayleigh_stiffness: 0.0,
        }
    }

    /// A force field on the states `s1` and `s2` (equal for springs inside one state) with the
    /// given springs, as the components built on SpringForceField create it.
    pub fn from_springs(layout: Layout, s1: StateId, s2: StateId, springs: Vec<LinearSpring>, rayleigh_stiffness: f64) -> SpringForceField {
        let mut ff = SpringForceField::new(layout);
        ff.s1 = Some(s1);
        ff.s2 = Some(s2);
        ff.dfdx = vec![0.0; springs.len() * ff.kernel.nn()];
        ff.springs = springs;
        ff.rayleigh_stiffness = rayleigh_stiffness;
        ff
    }

    pub fn springs(&self) -> &[LinearSpring] {
        &self.springs
    }

    /// The stored Jacobian `K_s` of spring `i` (N×N, row-major), as computed by the last `addForce`.
    pub fn spring_jacobian(&self, i: usize) -> &[f64] {
        let nn = self.kernel.nn();
        &self.dfdx[i * nn..(i + 1) * nn]
    }

    /// The states `(object1, object2)` once initialised.
    pub fn state_ids(&self) -> Option<(StateId, StateId)> {
        self.s1.zip(self.s2)
    }

    /// Index of the second state's entry in a [`ForceIo`] (a pair on one state is lent once).
    fn second(&self) -> usize {
        usize::from(self.s1 != self.s2)
    }

    fn state_pair(&self) -> SimResult<(StateId, StateId)> {
        match (self.s1, self.s2) {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => Err(SimError::new("SpringForceField used before init")),
        }
    }

    fn check_bounds(&self, n1: usize, n2: usize) -> SimResult {
        self.kernel.check_bounds(&self.springs, n1, n2)
    }
}

/// The states of a pair force field: the `object1` and `object2` links, each defaulting to the
/// node's mechanical state; both must have the force field's template.
pub(crate) fn resolve_pair(cx: &InitCtx, layout: Layout) -> SimResult<(StateId, StateId)> {
    let context = cx.scene.context_state(cx.node());
    let mut states = [None, None];
    for (k, name) in ["object1", "object2"].into_iter().enumerate() {
        let comp = cx.link_targets(name).first().copied().or(context);
        let Some(comp) = comp else {
            return Err(cx
                .error(format!("no mechanical state for {name}"))
                .hint("add a MechanicalObject in this node or set object1=\"@...\" and object2=\"@...\""));
        };
        let st = cx.scene.state_of(comp).ok_or_else(|| cx.error(format!("{name} is not a mechanical state")))?;
        let l = cx.state_layout(st);
        if l != layout {
            return Err(cx
                .error(format!("{name} is a {} state but the force field has template {}", l.name(), layout.name()))
                .hint("both states of a SpringForceField must have the force field's template"));
        }
        states[k] = Some(st);
    }
    Ok((states[0].expect("set above"), states[1].expect("set above")))
}

/// Writes the per-spring Data derived from a spring list (SOFA's `updateTopologyIndicesFromSprings`):
/// the index lists, rest lengths, stiffnesses, dampings and flags, plus the `spring` list itself.
pub(crate) fn write_spring_data(dm: &mut DataSet, springs: &[LinearSpring]) {
    let flag = |b: bool| if b { "1".to_string() } else { "0".to_string() };
    let v: Vec<f64> = springs.iter().flat_map(|s| [s.m1 as f64, s.m2 as f64, s.ks, s.kd, s.initpos]).collect();
    dm.put(SpringData::SPRING, v);
    dm.put(SpringData::SPRINGS_INDICES1, springs.iter().map(|s| s.m1).collect());
    dm.put(SpringData::SPRINGS_INDICES2, springs.iter().map(|s| s.m2).collect());
    dm.put(SpringData::LENGTHS, springs.iter().map(|s| s.initpos).collect());
    dm.put(SpringData::STIFFNESS, springs.iter().map(|s| s.ks).collect());
    dm.put(SpringData::DAMPING, springs.iter().map(|s| s.kd).collect());
    dm.put(SpringData::ELONGATION_ONLY, springs.iter().map(|s| flag(s.elongation_only)).collect());
    dm.put(SpringData::ENABLED, springs.iter().map(|s| flag(s.enabled)).collect());
}

/// Reads a per-spring boolean list (`0`/`1`, `true`/`false`).
fn parse_bools(words: &[String]) -> Result<Vec<bool>, String> {
    words
        .iter()
        .map(|w| match w.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            t => t.parse::<i64>().map(|v| v != 0).map_err(|_| format!("'{w}' is not a boolean")),
        })
        .collect()
}

/// SOFA's `resize(n, back())` on a per-spring list; an empty list takes `fallback`.
fn resized<T: Copy>(mut v: Vec<T>, n: usize, fallback: T) -> Vec<T> {
    let last = v.last().copied().unwrap_or(fallback);
    v.resize(n, last);
    v
}

fn spring_index(x: f64, what: &str, i: usize) -> Result<usize, String> {
    if x >= 0.0 && x.fract() == 0.0 && x.is_finite() {
        Ok(x as usize)
    } else {
        Err(format!("spring {i}: {what} index {x} is not a non-negative integer"))
    }
}

impl Component for SpringForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s1, s2) = resolve_pair(cx, self.layout)?;
        self.s1 = Some(s1);
        self.s2 = Some(s2);

        let d = cx.data();
        self.rayleigh_stiffness = d.get(SpringData::RAYLEIGH_STIFFNESS);
        if d.is_given(SpringData::FILE_SPRINGS) && !d.get(SpringData::FILE_SPRINGS).trim().is_empty() {
            return Err(SimError::unsupported(format!("spring files (fileSprings=\"{}\") are not supported yet", d.get(SpringData::FILE_SPRINGS)))
                .hint("list the springs in the `spring` Data (`m1 m2 ks kd L` per spring) or use indices1/indices2"));
        }

        let mut springs = Vec::new();
        if d.is_given(SpringData::SPRING) {
            let t = d.get(SpringData::SPRING).to_vec();
            for (i, e) in t.chunks_exact(5).enumerate() {
                let m1 = spring_index(e[0], "first", i).map_err(|m| cx.error(m))?;
                let m2 = spring_index(e[1], "second", i).map_err(|m| cx.error(m))?;
                springs.push(LinearSpring::new(m1, m2, e[2], e[3], e[4]));
            }
            // The index lists are derived from the springs (SOFA's updateTopologyIndicesFromSprings).
            write_spring_data(cx.data_mut(), &springs);
        } else {
            let i1 = d.get(SpringData::SPRINGS_INDICES1).to_vec();
            let i2 = d.get(SpringData::SPRINGS_INDICES2).to_vec();
            if i1.len() != i2.len() {
                let msg = format!("indices1 has {} entries and indices2 {}: no springs are created", i1.len(), i2.len());
                cx.warn(msg);
            } else if !i1.is_empty() {
                let n = i1.len();
                let lengths = resized(d.get(SpringData::LENGTHS).to_vec(), n, 0.0);
                let kd = resized(d.get(SpringData::DAMPING).to_vec(), n, 5.0);
                let ks = resized(d.get(SpringData::STIFFNESS).to_vec(), n, 100.0);
                let elong = parse_bools(d.get(SpringData::ELONGATION_ONLY)).map_err(|m| cx.error(format!("elongationOnly: {m}")))?;
                let enabled = parse_bools(d.get(SpringData::ENABLED)).map_err(|m| cx.error(format!("enabled: {m}")))?;
                let elong = resized(elong, n, false);
                let enabled = resized(enabled, n, true);
                for i in 0..n {
                    springs.push(LinearSpring {
                        m1: i1[i],
                        m2: i2[i],
                        ks: ks[i],
                        kd: kd[i],
                        initpos: lengths[i],
                        elongation_only: elong[i],
                        enabled: enabled[i],
                    });
                }
                let v: Vec<f64> = springs.iter().flat_map(|s| [s.m1 as f64, s.m2 as f64, s.ks, s.kd, s.initpos]).collect();
                let dm = cx.data_mut();
                dm.put(SpringData::SPRING, v);
                dm.put(SpringData::LENGTHS, lengths);
                dm.put(SpringData::STIFFNESS, ks);
                dm.put(SpringData::DAMPING, kd);
            }
        }
        self.springs = springs;
        self.dfdx = vec![0.0; self.springs.len() * self.kernel.nn()];
        Ok(())
    }

    /// The indices are checked once every state is initialised (the states of an interaction
    /// often live in child nodes, initialised after this component).
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s1, s2) = self.state_pair()?;
        let (n1, n2) = (cx.state_size(s1), cx.state_size(s2));
        self.check_bounds(n1, n2)
            .map_err(|e| cx.error(e.0.message).hint("spring indices are 0-based DOF indices of object1 (first) and object2 (second)"))
    }
}

/// `ForceField` of a component whose springs are a [`SpringForceField`] in its `inner` field:
/// every method is the inner force field's.
macro_rules! inner_springs_force_field {
    ($t:ty) => {
        impl settee_core::component::ForceField for $t {
            fn states(&self) -> settee_core::StateSet {
                self.inner.states()
            }
            fn add_force(&mut self, p: &settee_core::MechParams, io: &mut settee_core::ForceIo) -> settee_core::SimResult {
                self.inner.add_force(p, io)
            }
            fn add_dforce(
                &mut self,
                p: &settee_core::MechParams,
                io: &mut settee_core::ForceIo,
                k_factor: f64,
                b_factor: f64,
            ) -> settee_core::SimResult {
                self.inner.add_dforce(p, io, k_factor, b_factor)
            }
            fn add_k_to_matrix(&self, p: &settee_core::MechParams, m: &mut settee_core::MatrixAccumulator, k_factor: f64) -> settee_core::SimResult {
                self.inner.add_k_to_matrix(p, m, k_factor)
            }
            fn rayleigh_stiffness(&self) -> f64 {
                self.inner.rayleigh_stiffness()
            }
        }
    };
}
pub(crate) use inner_springs_force_field;

impl ForceField for SpringForceField {
    fn states(&self) -> settee_core::StateSet {
        self.s1.into_iter().chain(self.s2).collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let kernel = self.kernel;
        let j2 = self.second();
        self.check_bounds(io.x[0].len() / kernel.cs, io.x[j2].len() / kernel.cs)?;
        let nn = kernel.nn();
        self.dfdx.resize(self.springs.len() * nn, 0.0);
        for (s, m) in self.springs.iter().zip(self.dfdx.chunks_exact_mut(nn)) {
            kernel.add_force(io, j2, s, m);
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let kernel = self.kernel;
        let j2 = self.second();
        self.check_bounds(io.x[0].len() / kernel.ds, io.x[j2].len() / kernel.ds)?;
        kernel.add_dforce_all(io, j2, &self.springs, &self.dfdx, k_factor);
        Ok(())
    }

    /// `∂f1[a]/∂x1[a] = −K_s`, `∂f1[a]/∂x2[b] = +K_s`, `∂f2[b]/∂x1[a] = +K_s`,
    /// `∂f2[b]/∂x2[b] = −K_s`, times `kFactor`.
    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let (s1, s2) = self.state_pair()?;
        for (s, m) in self.springs.iter().zip(self.dfdx.chunks_exact(self.kernel.nn())) {
            self.kernel.add_stiffness(acc, s1, s2, s, m, k_factor);
        }
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}
