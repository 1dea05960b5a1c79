//! Compliance components (compliant spec §5): force fields that are either a compliance (rows of
//! the KKT system, `isCompliance = true`) or an ordinary stiffness (`f = K·x`, `K = −1/c`).
//!
//! The state's value itself is the "violation" φ (rest value 0): these components sit on the
//! output of a mapping (DistanceMapping, DifferenceMapping…) that measures it.

use settee_core::component::ForceField;
use settee_core::{component, Component, ForceIo, InitCtx, MatrixAccumulator, MechParams, SimResult, StateId};

/// Registers the compliance classes.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<UniformCompliance>();
}

/// SOFA's stiffness of a compliance `c` (compliant spec §5.1): `−1/c` inside `(ε, 1/ε)`, 0 above,
/// `−1/ε` below, with ε the machine epsilon.
pub fn stiffness_of_compliance(c: f64) -> f64 {
    let eps = f64::EPSILON;
    if c <= eps {
        -1.0 / eps
    } else if c >= 1.0 / eps {
        0.0
    } else {
        -1.0 / c
    }
}

/// A diagonal law per scalar row: compliance `c_i` and viscous damping `d_i` (`B = −d·I`).
/// Shared by the diagonal compliances.
#[derive(Clone, Debug, Default)]
pub(crate) struct DiagonalLaw {
    pub state: Option<StateId>,
    pub compliance: bool,
    pub rayleigh_stiffness: f64,
}

impl DiagonalLaw {
    fn add_force(&self, io: &mut ForceIo, c: impl Fn(usize) -> f64) {
        let (f, x) = (&mut io.f[0], io.x[0]);
        for (i, (fi, xi)) in f.iter_mut().zip(x).enumerate() {
            *fi += stiffness_of_compliance(c(i)) * xi;
        }
    }

    fn add_dforce(&self, io: &mut ForceIo, k_factor: f64, b_factor: f64, c: impl Fn(usize) -> f64, d: impl Fn(usize) -> f64) {
        let (f, dx) = (&mut io.f[0], io.x[0]);
        for (i, (fi, xi)) in f.iter_mut().zip(dx).enumerate() {
            let mut coef = 0.0;
            if k_factor != 0.0 {
                coef += k_factor * stiffness_of_compliance(c(i));
            }
            if b_factor != 0.0 {
                coef -= b_factor * d(i);
            }
            *fi += coef * xi;
        }
    }
}

// ----- UniformCompliance ---------------------------------------------------------------------------

/// Uniform compliance c on every scalar DOF of its state: a compliant constraint (KKT rows) or a stiffness −1/c.
///
/// `UniformCompliance` (compliant spec §5.1).
#[component(
    roles = [ForceField],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d"],
    default_template = "Vec1d",
    template_rule = FromState,
    data = {
        /// compliance c (1/stiffness), the same on every scalar DOF; 0 is a hard constraint
        compliance: Real = "0",
        /// viscous damping coefficient d: B = −d·I, assembled into the implicit matrix (not the note's damping ratio)
        damping: Real = "0",
        /// rebuild the matrices when the state's size changes
        resizable: Bool = "false",
        /// true: handled as a compliance (rows of the KKT system, force not evaluated); false: as a stiffness K = −1/c
        isCompliance: Bool = "true",
        /// Rayleigh damping coefficient related to stiffness (forced to 0 for a hard compliance)
        rayleighStiffness: Real = "0",
    },
)]
#[derive(Default)]
pub struct UniformCompliance {
    law: DiagonalLaw,
    compliance: f64,
    damping: f64,
}

impl UniformCompliance {
    pub fn compliance(&self) -> f64 {
        self.compliance
    }
}

impl Component for UniformCompliance {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.law.state = Some(cx.require_state()?);
        let d = cx.data();
        self.compliance = d.get(Self::COMPLIANCE);
        self.damping = d.get(Self::DAMPING);
        self.law.compliance = d.get(Self::IS_COMPLIANCE);
        self.law.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        if self.compliance < 0.0 {
            return Err(cx.error(format!("compliance = {} is negative", self.compliance)).hint("a compliance is 1/stiffness: give a value ≥ 0"));
        }
        if self.damping < 0.0 {
            return Err(cx.error(format!("damping = {} is negative", self.damping)));
        }
        if self.law.compliance && self.compliance <= f64::EPSILON && self.law.rayleigh_stiffness != 0.0 {
            cx.warn("rayleighStiffness is ignored for a hard compliance (compliance ≈ 0): set to 0");
            self.law.rayleigh_stiffness = 0.0;
        }
        Ok(())
    }
}

impl ForceField for UniformCompliance {
    fn states(&self) -> settee_core::StateSet {
        self.law.state.into_iter().collect()
    }
    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let c = self.compliance;
        self.law.add_force(io, |_| c);
        Ok(())
    }
    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, b_factor: f64) -> SimResult {
        let (c, d) = (self.compliance, self.damping);
        self.law.add_dforce(io, k_factor, b_factor, |_| c, |_| d);
        Ok(())
    }
    fn add_k_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let Some(s) = self.law.state else { return Ok(()) };
        let k = k_factor * stiffness_of_compliance(self.compliance);
        for i in 0..m.rows_of(s) {
            m.add(s, i, s, i, k);
        }
        Ok(())
    }
    fn add_b_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, b_factor: f64) -> SimResult {
        let Some(s) = self.law.state else { return Ok(()) };
        if self.damping > 0.0 {
            for i in 0..m.rows_of(s) {
                m.add(s, i, s, i, -b_factor * self.damping);
            }
        }
        Ok(())
    }
    fn rayleigh_stiffness(&self) -> f64 {
        self.law.rayleigh_stiffness
    }
    fn is_compliance(&self) -> bool {
        self.law.compliance
    }
    fn add_compliance(&self, _p: &MechParams, rows: usize, out: &mut Vec<(usize, usize, f64)>) -> SimResult {
        if self.compliance != 0.0 {
            out.extend((0..rows).map(|i| (i, i, self.compliance)));
        }
        Ok(())
    }
}
