//! Stiffness-only helpers of the Compliant plugin (compliant spec §5.6): `UniformStiffness`,
//! `DiagonalStiffness` and `CompliantPenaltyForceField`. Like the compliances, they act on the
//! state's value itself (rest value 0): `f = −k·x`.

use settee_core::component::ForceField;
use settee_core::{component, Component, DataSet, ForceIo, InitCtx, MatrixAccumulator, MechParams, SimResult, StateId};

use crate::diagonal::{check_damping, row_law_force_field, state_rows, RowDampingData, RowLaw};

/// Registers the classes of this file.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<UniformStiffness>();
    f.add::<DiagonalStiffness>();
    f.add::<CompliantPenaltyForceField>();
}

/// SOFA's ForceField base Data as the stiffnesses declare them: a stiffness by default.
#[settee_core::data_group(data = {
    /// true: handled as a compliance C = 1/k (rows of the KKT system)
    isCompliance: Bool = "false",
    /// Rayleigh damping coefficient related to stiffness
    rayleighStiffness: Real = "0",
})]
pub struct StiffnessFlagsData;

impl StiffnessFlagsData {
    /// `isCompliance` and `rayleighStiffness`.
    fn read(d: &DataSet) -> (bool, f64) {
        (d.get(Self::IS_COMPLIANCE), d.get(Self::RAYLEIGH_STIFFNESS))
    }
}

/// The compliance of a stiffness `k` when the component is set as a compliance (`1e100` for
/// `k = 0`, SOFA's "infinitely soft").
fn compliance_of_stiffness(k: f64) -> f64 {
    if k != 0.0 {
        1.0 / k
    } else {
        1e100
    }
}

// ----- UniformStiffness --------------------------------------------------------------------------

/// Uniform stiffness k on every scalar DOF of its state (f = −k·x, rest value 0).
///
/// `UniformStiffness`.
#[component(
    module = "Compliant",
    roles = [ForceField],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d"],
    default_template = "Vec1d",
    template_rule = FromState,
    inherit = [Self, StiffnessFlagsData],
    data = {
        /// stiffness k, the same on every scalar DOF: f = −k·x
        stiffness: Real = "0",
        /// viscous damping coefficient d: B = −d·I (used when d > 0)
        damping: Real = "0",
        /// rebuild the matrices when the state's size changes
        resizable: Bool = "false",
    },
)]
#[derive(Clone, Default)]
pub struct UniformStiffness {
    law: RowLaw,
    stiffness: f64,
    damping: f64,
}

impl UniformStiffness {
    /// The rows for a state of `rows` scalar rows.
    fn resize(&mut self, rows: usize) {
        let k = self.stiffness;
        self.law.k = vec![-k; rows];
        self.law.c = if self.law.compliance { vec![compliance_of_stiffness(k); rows] } else { Vec::new() };
        self.law.d = if self.damping > 0.0 { vec![self.damping; rows] } else { Vec::new() };
    }

    /// The size of the state may change at run time (`resizable`): the rows follow it.
    fn before_force(&mut self, _p: &MechParams, x: &[f64]) {
        if x.len() != self.law.k.len() {
            self.resize(x.len());
        }
    }
}

impl Component for UniformStiffness {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.law.state = Some(s);
        let d = cx.data();
        self.stiffness = d.get(Self::STIFFNESS);
        self.damping = d.get(Self::DAMPING);
        (self.law.compliance, self.law.rayleigh_stiffness) = StiffnessFlagsData::read(d);
        if self.damping < 0.0 {
            return Err(cx.error(format!("damping = {} is negative", self.damping)).hint("a viscous damping coefficient is ≥ 0"));
        }
        self.resize(state_rows(cx, s));
        Ok(())
    }
}

row_law_force_field!(UniformStiffness);

// ----- DiagonalStiffness -------------------------------------------------------------------------

/// Stiffness given per DOF and per component (f = −k∘x, rest value 0).
///
/// `DiagonalStiffness`.
#[component(
    module = "Compliant",
    roles = [ForceField],
    templates = ["Vec1d", "Vec3d", "Vec6d"],
    default_template = "Vec1d",
    template_rule = FromState,
    inherit = [Self, RowDampingData, StiffnessFlagsData],
    data = {
        /// stiffness of each DOF, one value per scalar component: f = −k·x
        stiffness: Derivs,
    },
)]
#[derive(Clone, Default)]
pub struct DiagonalStiffness {
    law: RowLaw,
}

impl DiagonalStiffness {
    fn before_force(&mut self, _p: &MechParams, _x: &[f64]) {}
}

impl Component for DiagonalStiffness {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.law.state = Some(s);
        let rows = state_rows(cx, s);
        let d = cx.data();
        let k = d.get(Self::STIFFNESS).to_vec();
        let damping = d.get(RowDampingData::DAMPING).to_vec();
        (self.law.compliance, self.law.rayleigh_stiffness) = StiffnessFlagsData::read(d);
        if k.len() < rows {
            return Err(cx
                .error(format!("stiffness has {} values for {rows} scalar rows of the state", k.len()))
                .hint("give one stiffness per DOF and per component (a Vec3 state of n points needs 3n values)"));
        }
        check_damping(cx, &damping)?;
        let k = &k[..rows];
        self.law.k = k.iter().map(|k| -k).collect();
        self.law.c = if self.law.compliance { k.iter().map(|&k| compliance_of_stiffness(k)).collect() } else { Vec::new() };
        self.law.d = RowLaw::damping_rows(&damping, rows);
        Ok(())
    }
}

row_law_force_field!(DiagonalStiffness);

// ----- CompliantPenaltyForceField ----------------------------------------------------------------

/// Penalty on the negative entries of a Vec1 state (f = −k·x where x < 0): a unilateral spring.
///
/// `CompliantPenaltyForceField`: the violated set is decided by `add_force` and used by the
/// derivatives until the next `add_force`.
#[component(
    module = "Compliant",
    roles = [ForceField],
    templates = ["Vec1d"],
    template_rule = FromState,
    data = {
        /// stiffness k applied to the violated (negative) entries: f = −k·x
        stiffness: Real = "0",
        /// viscous damping d of the violated entries: B = −d
        damping: Real = "0",
        /// accepted; the component is always a stiffness
        isCompliance: Bool = "false",
        /// Rayleigh damping coefficient related to stiffness
        rayleighStiffness: Real = "0",
    },
)]
#[derive(Clone, Default)]
pub struct CompliantPenaltyForceField {
    state: Option<StateId>,
    stiffness: f64,
    damping: f64,
    rayleigh_stiffness: f64,
    violated: Vec<bool>,
}

impl CompliantPenaltyForceField {
    pub fn violated(&self) -> &[bool] {
        &self.violated
    }
}

impl Component for CompliantPenaltyForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        let d = cx.data();
        self.stiffness = d.get(Self::STIFFNESS);
        self.damping = d.get(Self::DAMPING);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        self.violated = cx.read_vec(s, settee_core::VecId::POSITION).iter().map(|&x| x < 0.0).collect();
        Ok(())
    }
}

impl ForceField for CompliantPenaltyForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }
    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let (f, x) = (&mut io.f[0], io.x[0]);
        self.violated.clear();
        for (fi, &xi) in f.iter_mut().zip(x) {
            let v = xi < 0.0;
            if v {
                *fi -= self.stiffness * xi;
            }
            self.violated.push(v);
        }
        Ok(())
    }
    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, b_factor: f64) -> SimResult {
        let (f, dx) = (&mut io.f[0], io.x[0]);
        let coef = -self.stiffness * k_factor - self.damping * b_factor;
        for ((fi, xi), _) in f.iter_mut().zip(dx).zip(&self.violated).filter(|(_, &v)| v) {
            *fi += coef * xi;
        }
        Ok(())
    }
    fn add_k_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        for i in (0..m.rows_of(s).min(self.violated.len())).filter(|&i| self.violated[i]) {
            m.add(s, i, s, i, -self.stiffness * k_factor);
        }
        Ok(())
    }
    fn add_b_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, b_factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        for i in (0..m.rows_of(s).min(self.violated.len())).filter(|&i| self.violated[i]) {
            m.add(s, i, s, i, -self.damping * b_factor);
        }
        Ok(())
    }
    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}
