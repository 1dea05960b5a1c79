//! Diagonal and full compliances (compliant spec §5.2–§5.5): `DiagonalCompliance`,
//! `FullCompliance`, `LinearDiagonalCompliance` and `DampingCompliance`.
//!
//! The diagonal ones share [`RowLaw`]: one stiffness, one compliance and one damping coefficient
//! per scalar row of the state, precomputed when the parameters change.

use settee_core::component::ForceField;
use settee_core::{component, Component, ForceIo, InitCtx, MatrixAccumulator, MechParams, Scene, SimResult, StateId};

use crate::compliance::{stiffness_of_compliance, ComplianceFlagsData};

/// Registers the classes of this file.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<DiagonalCompliance>();
    f.add::<FullCompliance>();
    f.add::<LinearDiagonalCompliance>();
    f.add::<DampingCompliance>();
}

/// A diagonal law per scalar row: `f = k∘x` (`k ≤ 0`, SOFA's sign), `B = −d`, `C = c` (rows with
/// `c = 0` have no entry: hard rows).
#[derive(Clone, Debug, Default)]
pub(crate) struct RowLaw {
    pub state: Option<StateId>,
    pub compliance: bool,
    pub rayleigh_stiffness: f64,
    /// Diagonal of `K`, one per scalar row.
    pub k: Vec<f64>,
    /// Diagonal of `C`, one per scalar row.
    pub c: Vec<f64>,
    /// Damping coefficients, one per scalar row; empty when there is no damping.
    pub d: Vec<f64>,
}

impl RowLaw {
    /// SOFA's damping rule of the diagonal components: row `i` reads entry `min(i, len − 1)`, and
    /// the list counts only if it has more than one entry or a positive first one.
    pub fn damping_rows(damping: &[f64], rows: usize) -> Vec<f64> {
        if damping.len() > 1 || damping.first().is_some_and(|&d| d > 0.0) {
            (0..rows).map(|i| damping[i.min(damping.len() - 1)]).collect()
        } else {
            Vec::new()
        }
    }

    pub fn add_force(&self, io: &mut ForceIo) {
        let (f, x) = (&mut io.f[0], io.x[0]);
        for ((fi, xi), ki) in f.iter_mut().zip(x).zip(&self.k) {
            *fi += ki * xi;
        }
    }

    pub fn add_dforce(&self, io: &mut ForceIo, k_factor: f64, b_factor: f64) {
        let (f, dx) = (&mut io.f[0], io.x[0]);
        for (i, (fi, xi)) in f.iter_mut().zip(dx).enumerate() {
            let mut coef = k_factor * self.k.get(i).copied().unwrap_or(0.0);
            if let Some(d) = self.d.get(i) {
                coef -= b_factor * d;
            }
            *fi += coef * xi;
        }
    }

    pub fn add_k(&self, m: &mut MatrixAccumulator, k_factor: f64) {
        let Some(s) = self.state else { return };
        for i in 0..m.rows_of(s).min(self.k.len()) {
            m.add(s, i, s, i, k_factor * self.k[i]);
        }
    }

    pub fn add_b(&self, m: &mut MatrixAccumulator, b_factor: f64) {
        add_diagonal_damping(m, self.state, &self.d, b_factor);
    }

    /// The rows of a compliance `c` per scalar row: `K = −1/c`, `C = c` when the component is a
    /// compliance, and the damping rows of `damping` ([`RowLaw::damping_rows`]).
    fn set_compliances(&mut self, c: Vec<f64>, damping: &[f64]) {
        self.k = c.iter().map(|&c| stiffness_of_compliance(c)).collect();
        self.d = RowLaw::damping_rows(damping, c.len());
        self.c = if self.compliance { c } else { Vec::new() };
    }

    pub fn add_compliance(&self, rows: usize, out: &mut Vec<(usize, usize, f64)>) {
        out.extend(self.c.iter().take(rows).enumerate().filter(|(_, &c)| c != 0.0).map(|(i, &c)| (i, i, c)));
    }
}

/// Implements [`ForceField`] for a component whose `law` field is a [`RowLaw`] (or the uniform
/// [`DiagonalLaw`](crate::compliance::DiagonalLaw)).
macro_rules! row_law_force_field {
    ($t:ty) => {
        impl ForceField for $t {
            fn states(&self) -> settee_core::StateSet {
                self.law.state.into_iter().collect()
            }
            fn add_force(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
                self.before_force(p, io.x[0]);
                self.law.add_force(io);
                Ok(())
            }
            fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, b_factor: f64) -> SimResult {
                self.law.add_dforce(io, k_factor, b_factor);
                Ok(())
            }
            fn add_k_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
                self.law.add_k(m, k_factor);
                Ok(())
            }
            fn add_b_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, b_factor: f64) -> SimResult {
                self.law.add_b(m, b_factor);
                Ok(())
            }
            fn rayleigh_stiffness(&self) -> f64 {
                self.law.rayleigh_stiffness
            }
            fn is_compliance(&self) -> bool {
                self.law.compliance
            }
            fn add_compliance(&self, _p: &MechParams, rows: usize, out: &mut Vec<(usize, usize, f64)>) -> SimResult {
                self.law.add_compliance(rows, out);
                Ok(())
            }
        }
    };
}
pub(crate) use row_law_force_field;

/// `B −= b_factor·d` on the diagonal of the state's rows (`d`: one coefficient per scalar row).
fn add_diagonal_damping(m: &mut MatrixAccumulator, state: Option<StateId>, d: &[f64], b_factor: f64) {
    let Some(s) = state else { return };
    for (i, &di) in d.iter().enumerate().take(m.rows_of(s)) {
        m.add(s, i, s, i, -b_factor * di);
    }
}

/// Scalar rows of the component's state.
pub(crate) fn state_rows(cx: &InitCtx, s: StateId) -> usize {
    cx.state_size(s) * cx.state_layout(s).deriv_size()
}

/// No negative entry in a damping list.
pub(crate) fn check_damping(cx: &InitCtx, damping: &[f64]) -> SimResult {
    if let Some(d) = damping.iter().find(|d| **d < 0.0) {
        return Err(cx.error(format!("damping contains the negative value {d}")).hint("a viscous damping coefficient is ≥ 0"));
    }
    Ok(())
}

// ----- DiagonalCompliance ------------------------------------------------------------------------

/// The damping list of the diagonal and full compliances and of `DiagonalStiffness`.
#[settee_core::data_group(data = {
    /// viscous damping per scalar row (B = −d·I); row i reads entry min(i, size − 1)
    damping: Reals = "0",
})]
pub struct RowDampingData;

/// The first Data of `DiagonalCompliance`, which `LinearDiagonalCompliance` has too.
#[settee_core::data_group(data = {
    /// compliance of each DOF, one value per scalar component (0: hard constraint)
    compliance: Derivs,
})]
pub struct DiagonalComplianceData;

/// Compliance given per DOF and per component: a compliant constraint (KKT rows) or a stiffness −1/c.
///
/// `DiagonalCompliance` (compliant spec §5.2).
#[component(
    module = "Compliant",
    roles = [ForceField],
    templates = ["Vec1d", "Vec3d", "Vec6d"],
    default_template = "Vec1d",
    template_rule = FromState,
    inherit = [DiagonalComplianceData, RowDampingData, ComplianceFlagsData],
)]
#[derive(Clone, Default)]
pub struct DiagonalCompliance {
    law: RowLaw,
    damping: Vec<f64>,
}

/// Reads [`RowDampingData`] and [`ComplianceFlagsData`] (shared by DiagonalCompliance and
/// LinearDiagonalCompliance) into `law` and `damping`; returns the state and its scalar rows.
fn read_diagonal_data(cx: &InitCtx, law: &mut RowLaw, damping: &mut Vec<f64>) -> SimResult<(StateId, usize)> {
    let s = cx.require_state()?;
    law.state = Some(s);
    let d = cx.data();
    (law.compliance, law.rayleigh_stiffness) = ComplianceFlagsData::read(d);
    *damping = d.get(RowDampingData::DAMPING).to_vec();
    check_damping(cx, damping)?;
    Ok((s, state_rows(cx, s)))
}

impl DiagonalCompliance {
    fn before_force(&mut self, _p: &MechParams, _x: &[f64]) {}
}

impl Component for DiagonalCompliance {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (_, rows) = read_diagonal_data(cx, &mut self.law, &mut self.damping)?;
        let c = cx.data().get(DiagonalComplianceData::COMPLIANCE).to_vec();
        if c.len() < rows {
            return Err(cx
                .error(format!("compliance has {} values for {rows} scalar rows of the state", c.len()))
                .hint("give one compliance per DOF and per component (a Vec3 state of n points needs 3n values)"));
        }
        if let Some(v) = c.iter().find(|v| **v < 0.0) {
            return Err(cx.error(format!("compliance contains the negative value {v}")).hint("a compliance is 1/stiffness: give values ≥ 0"));
        }
        self.law.set_compliances(c[..rows].to_vec(), &self.damping);
        Ok(())
    }
}

row_law_force_field!(DiagonalCompliance);

// ----- LinearDiagonalCompliance ------------------------------------------------------------------

/// Diagonal compliance growing linearly with the error |x_i| of each DOF above errorMin, recomputed once per time step.
///
/// `LinearDiagonalCompliance` (compliant spec §5.4).
#[component(
    module = "Compliant",
    roles = [ForceField],
    templates = ["Vec1d", "Vec3d"],
    default_template = "Vec1d",
    template_rule = FromState,
    inherit = [DiagonalComplianceData, RowDampingData, ComplianceFlagsData, Self],
    data = {
        /// compliance of the DOFs whose error is below errorMin
        complianceMin: Real = "0",
        /// error |x_i| below which the compliance is complianceMin; above, it grows linearly: complianceMin·|x_i|/errorMin
        errorMin: Real = "0",
    },
)]
#[derive(Clone, Default)]
pub struct LinearDiagonalCompliance {
    law: RowLaw,
    damping: Vec<f64>,
    compliance_min: f64,
    error_min: f64,
    /// Scalar rows per DOF.
    dof_size: usize,
    /// Simulation time of the last update.
    last_time: Option<f64>,
}

impl LinearDiagonalCompliance {
    /// The compliance of each scalar row for the errors `x` (all rows of a DOF share the value of
    /// the DOF's norm).
    pub fn compliances(&self, x: &[f64]) -> Vec<f64> {
        let ds = self.dof_size.max(1);
        let mut c = Vec::with_capacity(x.len());
        for dof in x.chunks(ds) {
            let e = dof.iter().map(|v| v * v).sum::<f64>().sqrt();
            let ci = if e < self.error_min { self.compliance_min } else { self.compliance_min * e / self.error_min };
            c.extend(std::iter::repeat_n(ci, dof.len()));
        }
        c
    }

    fn update(&mut self, time: f64, x: &[f64]) {
        if self.last_time == Some(time) {
            return;
        }
        self.last_time = Some(time);
        self.law.set_compliances(self.compliances(x), &self.damping);
    }

    fn before_force(&mut self, p: &MechParams, x: &[f64]) {
        self.update(p.time, x);
    }
}

impl Component for LinearDiagonalCompliance {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s, rows) = read_diagonal_data(cx, &mut self.law, &mut self.damping)?;
        let d = cx.data();
        self.compliance_min = d.get(Self::COMPLIANCE_MIN);
        self.error_min = d.get(Self::ERROR_MIN);
        if self.compliance_min < 0.0 {
            return Err(cx
                .error(format!("complianceMin = {} is negative", self.compliance_min))
                .hint("a compliance is 1/stiffness: give a value ≥ 0"));
        }
        if self.error_min <= 0.0 {
            return Err(cx
                .error(format!("errorMin = {} is not positive", self.error_min))
                .hint("the compliance grows as complianceMin·|x|/errorMin: give errorMin > 0, e.g. errorMin=\"0.1\""));
        }
        self.dof_size = cx.state_layout(s).deriv_size();
        // Before the first step every DOF has the minimal compliance (SOFA's init).
        self.law.set_compliances(vec![self.compliance_min; rows], &self.damping);
        Ok(())
    }

    /// The step's compliances from the errors at its start (the assembly reads them next).
    fn animate_begin(&mut self, scene: &mut Scene, me: settee_core::ComponentId) -> SimResult {
        if let Some(s) = self.law.state {
            let x = scene.store.get(s).read(settee_core::VecId::POSITION).to_vec();
            let time = scene.params(scene.entry(me).node).time;
            self.update(time, &x);
        }
        Ok(())
    }
}

row_law_force_field!(LinearDiagonalCompliance);

// ----- DampingCompliance -------------------------------------------------------------------------

/// Viscous damping as a compliance C = (dt/damping)·I, to pair with a DampingValue; no force, no stiffness.
///
/// `DampingCompliance` (compliant spec §5.5).
#[component(
    module = "Compliant",
    roles = [ForceField],
    templates = ["Vec6d", "Vec2d", "Vec1d"],
    template_rule = FromState,
    data = {
        /// viscous damping coefficient d: compliance C = (dt/d)·I; 0 disables the component
        damping: Real = "0",
        /// read-only in SOFA: set from damping (false when damping = 0)
        isCompliance: Bool = "true",
        /// ignored (forced to 0)
        rayleighStiffness: Real = "0",
    },
)]
#[derive(Clone, Default)]
pub struct DampingCompliance {
    state: Option<StateId>,
    damping: f64,
}

impl Component for DampingCompliance {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.state = Some(cx.require_state()?);
        self.damping = cx.data().get(Self::DAMPING);
        if self.damping < 0.0 {
            return Err(cx.error(format!("damping = {} is negative", self.damping)).hint("a viscous damping coefficient is ≥ 0"));
        }
        Ok(())
    }
}

impl ForceField for DampingCompliance {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }
    fn add_force(&mut self, _p: &MechParams, _io: &mut ForceIo) -> SimResult {
        Ok(())
    }
    fn add_dforce(&mut self, _p: &MechParams, _io: &mut ForceIo, _k: f64, _b: f64) -> SimResult {
        Ok(())
    }
    fn add_k_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _k: f64) -> SimResult {
        Ok(())
    }
    /// A compliance only while the damping is non-zero (SOFA switches `isCompliance` off).
    fn is_compliance(&self) -> bool {
        self.damping != 0.0
    }
    fn add_compliance(&self, p: &MechParams, rows: usize, out: &mut Vec<(usize, usize, f64)>) -> SimResult {
        if self.damping != 0.0 {
            let c = p.dt / self.damping;
            out.extend((0..rows).map(|i| (i, i, c)));
        }
        Ok(())
    }
}

// ----- FullCompliance ----------------------------------------------------------------------------

/// Compliance given as a full matrix C (or a stiffness matrix K, the other one being its inverse).
///
/// `FullCompliance` (compliant spec §5.3).
#[component(
    module = "Compliant",
    roles = [ForceField],
    templates = ["Vec1d", "Vec3d", "Vec6d"],
    default_template = "Vec1d",
    template_rule = FromState,
    inherit = [Self, RowDampingData, ComplianceFlagsData],
    data = {
        /// compliance matrix (symmetric positive semi-definite), dense, row by row; computed as K⁻¹ when its size is wrong
        C: Reals,
        /// stiffness matrix (positive sign: f = −K·x), dense, row by row; computed as C⁻¹ when its size is wrong
        K: Reals,
    },
)]
#[derive(Clone, Default)]
pub struct FullCompliance {
    state: Option<StateId>,
    compliance: bool,
    rayleigh_stiffness: f64,
    n: usize,
    /// Dense row-major `n×n` compliance.
    c: Vec<f64>,
    /// Dense row-major `n×n` stiffness, positive sign.
    k: Vec<f64>,
    d: Vec<f64>,
}

impl FullCompliance {
    pub fn compliance_matrix(&self) -> &[f64] {
        &self.c
    }
    pub fn stiffness_matrix(&self) -> &[f64] {
        &self.k
    }
}

/// The inverse of the symmetric matrix `a` (row-major `n×n`) by an LDLᵀ factorization without
/// pivoting; `None` when a pivot vanishes.
pub(crate) fn invert_symmetric(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    let mut d = vec![0.0; n];
    let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for j in 0..n {
        let mut dj = a[j * n + j];
        for k in 0..j {
            dj -= l[j * n + k] * l[j * n + k] * d[k];
        }
        if dj.abs() <= f64::EPSILON * scale * n as f64 || dj == 0.0 {
            return None;
        }
        d[j] = dj;
        l[j * n + j] = 1.0;
        for i in j + 1..n {
            let mut v = a[i * n + j];
            for k in 0..j {
                v -= l[i * n + k] * l[j * n + k] * d[k];
            }
            l[i * n + j] = v / dj;
        }
    }
    let mut inv = vec![0.0; n * n];
    for col in 0..n {
        // L y = e_col, D z = y, Lᵀ x = z.
        let mut y = vec![0.0; n];
        y[col] = 1.0;
        for i in 0..n {
            for k in 0..i {
                y[i] -= l[i * n + k] * y[k];
            }
        }
        for i in 0..n {
            y[i] /= d[i];
        }
        for i in (0..n).rev() {
            for k in i + 1..n {
                y[i] -= l[k * n + i] * y[k];
            }
        }
        for i in 0..n {
            inv[i * n + col] = y[i];
        }
    }
    Some(inv)
}

fn identity(n: usize) -> Vec<f64> {
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        m[i * n + i] = 1.0;
    }
    m
}

impl Component for FullCompliance {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        let n = state_rows(cx, s);
        self.n = n;
        let d = cx.data();
        (self.compliance, self.rayleigh_stiffness) = ComplianceFlagsData::read(d);
        let damping = d.get(RowDampingData::DAMPING).to_vec();
        let (c, k) = (d.get(Self::C).to_vec(), d.get(Self::K).to_vec());
        check_damping(cx, &damping)?;
        let (c_ok, k_ok) = (c.len() == n * n, k.len() == n * n);
        for (name, m, ok) in [("C", &c, c_ok), ("K", &k, k_ok)] {
            if !m.is_empty() && !ok {
                cx.warn(format!("{name} has {} values, not {n}×{n} (the state's scalar rows): it is recomputed", m.len()));
            }
        }
        self.c = c;
        self.k = k;
        if self.compliance && !c_ok {
            self.c = if k_ok { invert_symmetric(&self.k, n).unwrap_or_else(|| vec![0.0; n * n]) } else { vec![0.0; n * n] };
        }
        if !k_ok {
            self.k = if c_ok { invert_symmetric(&self.c, n).unwrap_or_else(|| identity(n)) } else { identity(n) };
        }
        if !self.compliance {
            self.c.clear();
        }
        self.d = RowLaw::damping_rows(&damping, n);
        Ok(())
    }
}

impl ForceField for FullCompliance {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }
    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let n = self.n;
        let (f, x) = (&mut io.f[0], io.x[0]);
        for i in 0..n.min(f.len()) {
            f[i] -= (0..n.min(x.len())).map(|j| self.k[i * n + j] * x[j]).sum::<f64>();
        }
        Ok(())
    }
    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, b_factor: f64) -> SimResult {
        let n = self.n;
        let (f, dx) = (&mut io.f[0], io.x[0]);
        for i in 0..n.min(f.len()) {
            let mut v = 0.0;
            if k_factor != 0.0 {
                v -= k_factor * (0..n.min(dx.len())).map(|j| self.k[i * n + j] * dx[j]).sum::<f64>();
            }
            if let Some(d) = self.d.get(i) {
                v -= b_factor * d * dx[i];
            }
            f[i] += v;
        }
        Ok(())
    }
    fn add_k_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        let n = self.n.min(m.rows_of(s));
        for i in 0..n {
            for j in 0..n {
                let v = self.k[i * self.n + j];
                if v != 0.0 {
                    m.add(s, i, s, j, -k_factor * v);
                }
            }
        }
        Ok(())
    }
    fn add_b_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, b_factor: f64) -> SimResult {
        add_diagonal_damping(m, self.state, &self.d, b_factor);
        Ok(())
    }
    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
    fn is_compliance(&self) -> bool {
        self.compliance
    }
    fn add_compliance(&self, _p: &MechParams, rows: usize, out: &mut Vec<(usize, usize, f64)>) -> SimResult {
        let n = self.n.min(rows);
        if self.c.len() == self.n * self.n {
            for i in 0..n {
                for j in 0..n {
                    let v = self.c[i * self.n + j];
                    if v != 0.0 {
                        out.push((i, j, v));
                    }
                }
            }
        }
        Ok(())
    }
}
