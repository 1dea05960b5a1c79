//! Compliance components (compliant spec §5): force fields that are either a compliance (rows of
//! the KKT system, `isCompliance = true`) or an ordinary stiffness (`f = K·x`, `K = −1/c`).
//!
//! The state's value itself is the "violation" φ (rest value 0): these components sit on the
//! output of a mapping (DistanceMapping, DifferenceMapping…) that measures it.

use settee_core::component::ForceField;
use settee_core::{component, Component, DataSet, ForceIo, InitCtx, MatrixAccumulator, MechParams, SimResult, StateId};

use crate::diagonal::row_law_force_field;

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

/// SOFA's ForceField base Data as the compliances declare them: a compliance by default.
#[settee_core::data_group(data = {
    /// true: handled as a compliance (rows of the KKT system); false: as a stiffness K = −C⁻¹ (−1/c per row)
    isCompliance: Bool = "true",
    /// Rayleigh damping coefficient related to stiffness
    rayleighStiffness: Real = "0",
})]
pub struct ComplianceFlagsData;

impl ComplianceFlagsData {
    /// `isCompliance` and `rayleighStiffness`.
    pub(crate) fn read(d: &DataSet) -> (bool, f64) {
        (d.get(Self::IS_COMPLIANCE), d.get(Self::RAYLEIGH_STIFFNESS))
    }
}

/// The same uniform compliance `c` and viscous damping `d` (`B = −d·I`) on every scalar row.
#[derive(Clone, Debug, Default)]
pub(crate) struct DiagonalLaw {
    pub state: Option<StateId>,
    pub compliance: bool,
    pub rayleigh_stiffness: f64,
    pub c: f64,
    pub d: f64,
}

impl DiagonalLaw {
    pub fn add_force(&self, io: &mut ForceIo) {
        let (f, x) = (&mut io.f[0], io.x[0]);
        for (fi, xi) in f.iter_mut().zip(x) {
            *fi += stiffness_of_compliance(self.c) * xi;
        }
    }

    pub fn add_dforce(&self, io: &mut ForceIo, k_factor: f64, b_factor: f64) {
        let (f, dx) = (&mut io.f[0], io.x[0]);
        for (fi, xi) in f.iter_mut().zip(dx) {
            let mut coef = 0.0;
            if k_factor != 0.0 {
                coef += k_factor * stiffness_of_compliance(self.c);
            }
            if b_factor != 0.0 {
                coef -= b_factor * self.d;
            }
            *fi += coef * xi;
        }
    }

    pub fn add_k(&self, m: &mut MatrixAccumulator, k_factor: f64) {
        let Some(s) = self.state else { return };
        let k = k_factor * stiffness_of_compliance(self.c);
        for i in 0..m.rows_of(s) {
            m.add(s, i, s, i, k);
        }
    }

    pub fn add_b(&self, m: &mut MatrixAccumulator, b_factor: f64) {
        let Some(s) = self.state else { return };
        if self.d > 0.0 {
            for i in 0..m.rows_of(s) {
                m.add(s, i, s, i, -b_factor * self.d);
            }
        }
    }

    pub fn add_compliance(&self, rows: usize, out: &mut Vec<(usize, usize, f64)>) {
        if self.c != 0.0 {
            out.extend((0..rows).map(|i| (i, i, self.c)));
        }
    }
}

// ----- UniformCompliance ---------------------------------------------------------------------------

/// Uniform compliance c on every scalar DOF of its state: a compliant constraint (KKT rows) or a stiffness −1/c.
///
/// `UniformCompliance` (compliant spec §5.1).
#[component(
    module = "Compliant",
    roles = [ForceField],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d"],
    default_template = "Vec1d",
    template_rule = FromState,
    inherit = [Self, ComplianceFlagsData],
    data = {
        /// compliance c (1/stiffness), the same on every scalar DOF; 0 is a hard constraint
        compliance: Real = "0",
        /// viscous damping coefficient d: B = −d·I, assembled into the implicit matrix (not the note's damping ratio)
        damping: Real = "0",
        /// rebuild the matrices when the state's size changes
        resizable: Bool = "false",
    },
)]
#[derive(Clone, Default)]
pub struct UniformCompliance {
    law: DiagonalLaw,
}

impl UniformCompliance {
    pub fn compliance(&self) -> f64 {
        self.law.c
    }

    fn before_force(&mut self, _p: &MechParams, _x: &[f64]) {}
}

impl Component for UniformCompliance {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.law.state = Some(cx.require_state()?);
        let d = cx.data();
        self.law.c = d.get(Self::COMPLIANCE);
        self.law.d = d.get(Self::DAMPING);
        (self.law.compliance, self.law.rayleigh_stiffness) = ComplianceFlagsData::read(d);
        if self.law.c < 0.0 {
            return Err(cx.error(format!("compliance = {} is negative", self.law.c)).hint("a compliance is 1/stiffness: give a value ≥ 0"));
        }
        if self.law.d < 0.0 {
            return Err(cx.error(format!("damping = {} is negative", self.law.d)));
        }
        if self.law.compliance && self.law.c <= f64::EPSILON && self.law.rayleigh_stiffness != 0.0 {
            cx.warn("rayleighStiffness is ignored for a hard compliance (compliance ≈ 0): set to 0");
            self.law.rayleigh_stiffness = 0.0;
        }
        Ok(())
    }
}

row_law_force_field!(UniformCompliance);
