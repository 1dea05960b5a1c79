//! `PolynomialRestShapeSpringsForceField`: springs from points of the state to their rest
//! positions, whose force is a polynomial of the strain (SOFA's class of that name).
//!
//! Spring `i` acts on point `p = points[i]` (every point when `points` is empty): `d = x[p] − x0[p]`,
//! the strain `s = |d| / L0` (`L0` = `initialLength[i]`, else its first entry, else 1) and the
//! force magnitude `F = Σ_{k=1..n} c_k·s^k` with the `n = polynomialDegree[i]` coefficients of
//! `polynomialStiffness` that follow those of the previous springs (every spring uses the first
//! polynomial when `polynomialDegree` does not have one entry per spring). The direction uses a
//! smoothed length `ℓ = √(|d|² + exp(smoothShift − smoothScale·|d|²))`: `f[p] −= F·d/ℓ`.
//!
//! The stiffness is diagonal (SOFA keeps the diagonal of the Jacobian only): with `w = d/ℓ` and
//! `e = 1 − smoothScale·exp(smoothShift − smoothScale·|d|²)`,
//! `J_c = (P'(s)/L0 − F/ℓ)·e·w_c² + F/ℓ`, and `df[p]_c −= kFactor·J_c·dx[p]_c`.

use crate::RayleighStiffnessData;
use settee_core::component::ForceField;
use settee_core::math::{at, dot};
use settee_core::role::MechanicalState;
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// Springs to the rest positions with a polynomial force-strain law.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// points controlled by the rest shape springs (empty: all)
        points: Indices,
        /// points from the external Mechanical State that define the rest shape springs
        external_points: Indices,
        /// coefficients for all spring polynomials (empty: 100)
        polynomialStiffness: Reals,
        /// vector of values that show polynomials degrees (empty: 1)
        polynomialDegree: Indices,
        /// Recompute indices (should be false for BBOX)
        recompute_indices: Bool = "false",
        /// draw Spring (rendering only)
        drawSpring: Bool = "false",
        /// spring color (rendering only)
        springColor: Color = "0 1 0 1",
        /// Scaling factor for indices display size (rendering only)
        showIndicesScale: Real = "1",
        /// initial virtual length of the spring (empty: 1)
        initialLength: Reals,
        /// denominator correction adding shift value
        smoothShift: Real = "0",
        /// denominator correction adding scale
        smoothScale: Real = "1",
    },
    inherit = [Self, RayleighStiffnessData],
    links = {
        /// rest_shape can be defined by the position of an external Mechanical State (not supported yet)
        external_rest_shape: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct PolynomialRestShapeSpringsForceField {
    state: Option<StateId>,
    indices: Vec<usize>,
    /// Rest positions of the state.
    rest: Vec<f64>,
    coefficients: Vec<f64>,
    /// Indices into `coefficients` of each polynomial.
    polynomials: Vec<Vec<usize>>,
    zero_length: Vec<f64>,
    smooth_shift: f64,
    smooth_scale: f64,
    /// Diagonal of each spring's Jacobian, from the last `addForce`.
    jacobians: Vec<[f64; 3]>,
    rayleigh_stiffness: f64,
}

impl PolynomialRestShapeSpringsForceField {
    /// The diagonal Jacobian of each spring, from the last `addForce`.
    pub fn jacobians(&self) -> &[[f64; 3]] {
        &self.jacobians
    }

    fn polynomial(&self, p: usize, s: f64) -> f64 {
        let mut power = 1.0;
        let mut result = 0.0;
        for &c in &self.polynomials[p] {
            power *= s;
            result += self.coefficients[c] * power;
        }
        result
    }

    fn polynomial_derivative(&self, p: usize, s: f64) -> f64 {
        let mut power = 1.0;
        let mut result = 0.0;
        for (k, &c) in self.polynomials[p].iter().enumerate() {
            result += (k + 1) as f64 * self.coefficients[c] * power;
            power *= s;
        }
        result
    }
}

impl Component for PolynomialRestShapeSpringsForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::topo::state_with_layout(cx, Layout::Vec3)?;
        if !cx.link_targets("external_rest_shape").is_empty() {
            return Err(SimError::unsupported("PolynomialRestShapeSpringsForceField's external_rest_shape is not supported yet")
                .hint("remove the link: the springs then pull towards the state's rest positions"));
        }
        if cx.data().get(Self::RECOMPUTE_INDICES) {
            cx.warn("recompute_indices: the indices are read at init only");
        }
        let d = cx.data();
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        self.coefficients = d.get(Self::POLYNOMIAL_STIFFNESS).to_vec();
        if self.coefficients.is_empty() {
            self.coefficients.push(100.0);
        }
        self.zero_length = d.get(Self::INITIAL_LENGTH).to_vec();
        if self.zero_length.is_empty() {
            self.zero_length.push(1.0);
        }
        self.smooth_shift = d.get(Self::SMOOTH_SHIFT);
        self.smooth_scale = d.get(Self::SMOOTH_SCALE);
        let mut degrees = d.get(Self::POLYNOMIAL_DEGREE).to_vec();
        if degrees.is_empty() {
            degrees.push(1);
        }
        let mut next = 0;
        self.polynomials = degrees
            .iter()
            .map(|&n| {
                let p: Vec<usize> = (next..next + n).collect();
                next += n;
                p
            })
            .collect();
        if next > self.coefficients.len() {
            return Err(cx.error(format!("polynomialDegree asks for {next} coefficients but polynomialStiffness has {}", self.coefficients.len())));
        }
        let n = cx.state_size(s);
        self.indices = d.get(Self::POINTS).to_vec();
        if self.indices.is_empty() {
            self.indices = (0..n).collect();
        }
        if let Some(&p) = self.indices.iter().find(|&&p| p >= n) {
            return Err(cx.error(format!("point {p} is beyond the {n} DOFs of the mechanical state")));
        }
        self.rest = cx.rest_or_position(s);
        self.jacobians = vec![[0.0; 3]; self.indices.len()];
        self.state = Some(s);
        Ok(())
    }
}

impl ForceField for PolynomialRestShapeSpringsForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        if let Some(&p) = self.indices.iter().find(|&&p| 3 * p + 3 > x.len()) {
            return Err(SimError::new(format!("PolynomialRestShapeSpringsForceField: point {p} is beyond the state's size")));
        }
        let per_spring = self.polynomials.len() == self.indices.len();
        let f = &mut io.f[0];
        for (i, &p) in self.indices.iter().enumerate() {
            let xp = at(x, p);
            let x0 = at(&self.rest, p);
            let d = [xp[0] - x0[0], xp[1] - x0[1], xp[2] - x0[2]];
            let sq = dot(d, d);
            let l0 = self.zero_length.get(i).copied().unwrap_or(self.zero_length[0]);
            let strain = sq.sqrt() / l0;
            let poly = if per_spring { i } else { 0 };
            let force = self.polynomial(poly, strain);
            let smooth = (self.smooth_shift - self.smooth_scale * sq).exp();
            let length = (sq + smooth).sqrt();
            let w = [d[0] / length, d[1] / length, d[2] / length];
            for c in 0..3 {
                f[3 * p + c] -= force * w[c];
            }
            let force_per_length = force / length;
            let derivative = self.polynomial_derivative(poly, strain) / l0;
            let e = 1.0 - self.smooth_scale * smooth;
            self.jacobians[i] = w.map(|wc| (derivative - force_per_length) * e * wc * wc + force_per_length);
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let dx = io.x[0];
        let df = &mut io.f[0];
        for (&p, j) in self.indices.iter().zip(&self.jacobians) {
            if 3 * p + 3 > dx.len() {
                return Err(SimError::new(format!("PolynomialRestShapeSpringsForceField: point {p} is beyond the state's size")));
            }
            for c in 0..3 {
                df[3 * p + c] -= j[c] * dx[3 * p + c] * k_factor;
            }
        }
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.ok_or_else(|| SimError::new("PolynomialRestShapeSpringsForceField used before init"))?;
        for (&p, j) in self.indices.iter().zip(&self.jacobians) {
            for (c, jc) in j.iter().enumerate() {
                acc.add(s, 3 * p + c, s, 3 * p + c, -k_factor * jc);
            }
        }
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

#[cfg(test)]
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    use super::PolynomialRestShapeSpringsForceField;
    use crate::test_support::*;

    /// SOFA's scene: a particle 1.1 from its rest position, F = 10·s + 10·s² with s = 1.1, the
    /// smoothing negligible (exp(1e-4 − 1e7·1.21) = 0).
    #[test]
    fn force_is_the_polynomial_of_the_strain() {
        let (f, mut s) = state_scene(&[("rest_position", "0 0 0  5 5 5"), ("position", "1.1 0 0  5 5 5")]);
        let c = add(
            &mut s,
            &f,
            Scene::ROOT,
            "PolynomialRestShapeSpringsForceField",
            &[("polynomialStiffness", "10 10"), ("polynomialDegree", "2"), ("points", "0"), ("smoothShift", "0.0001"), ("smoothScale", "10000000")],
        );
        init_root(&mut s, &f).unwrap();
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        assert_close(&fv, &[-(11.0 + 12.1), 0.0, 0.0, 0.0, 0.0, 0.0], 1e-12);
        // along the spring, the Jacobian is P'(s) = 10 + 20 s; across it F/|d| = 23.1/1.1
        let j = s.get::<PolynomialRestShapeSpringsForceField>(c).unwrap().jacobians()[0];
        assert_close(&j, &[32.0, 21.0, 21.0], 1e-12);
        // the derivative along x is exact: finite differences agree
        check_fd(&mut s, &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-6, 1e-8);
        check_matrix(&mut s, &random_vec(6, 3));
    }

    /// Two springs with their own polynomials and rest lengths, and the smoothing active
    /// near the rest position (the force vanishes smoothly there instead of jumping).
    #[test]
    fn per_spring_polynomials_and_smoothing() {
        let (f, mut s) = state_scene(&[("rest_position", "0 0 0  1 1 1"), ("position", "0 0.3 0  1 1 1.001")]);
        add(
            &mut s,
            &f,
            Scene::ROOT,
            "PolynomialRestShapeSpringsForceField",
            &[("polynomialStiffness", "5  2 4"), ("polynomialDegree", "1 2"), ("initialLength", "2 0.5"), ("smoothShift", "0"), ("smoothScale", "1")],
        );
        init_root(&mut s, &f).unwrap();
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        // spring 0: s = 0.15, F = 0.75, ℓ = √(0.09 + e^−0.09)
        let l0 = (0.09f64 + (-0.09f64).exp()).sqrt();
        // spring 1: s = 0.002, F = 2·0.002 + 4·0.002², ℓ = √(1e-6 + e^−1e-6)
        let (s1, d1): (f64, f64) = (0.002, 0.001);
        let l1 = (d1 * d1 + (-(d1 * d1)).exp()).sqrt();
        let f1 = 2.0 * s1 + 4.0 * s1 * s1;
        assert_close(&fv, &[0.0, -0.75 * 0.3 / l0, 0.0, 0.0, 0.0, -f1 * d1 / l1], 1e-14);
    }
}
