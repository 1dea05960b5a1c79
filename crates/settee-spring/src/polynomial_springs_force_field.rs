//! `PolynomialSpringsForceField`: springs whose force is a polynomial of the strain (SOFA's class
//! of that name), between `firstObjectPoints` of `object1` and `secondObjectPoints` of `object2`
//! (each empty list: every point of its state).
//!
//! Spring `i` joins `a = first[i]` and `b = second[i]`: `d = x2[b] − x1[a]`, `L = |d|`, `u = d/L`,
//! the strain `s = |L − L0|/L0` and the force `F = Σ_{k=1..n} c_k·s^k` with the `n =
//! polynomialDegree[i]` coefficients of `polynomialStiffness` that follow those of the previous
//! springs. When `polynomialDegree` does not have one entry per spring, every spring uses the
//! first polynomial. `f1[a] += σ·F·u`, `f2[b] −= σ·F·u` with `σ = 1` when stretched, else `−1`
//! (`compressible`) or 0. `L0` is the length at the first evaluation (`computeZeroLength`), or
//! `zeroLength`.
//!
//! The Jacobian, as SOFA's, ignores `σ`: `J = (P'(s)/L0 − F/L)·uuᵀ + (F/L)·I`, applied as
//! `df1[a] += kFactor·J·(dx2[b] − dx1[a])` and the opposite on `b`.

use crate::spring_force_field::resolve_pair;
use crate::RayleighStiffnessData;
use settee_core::component::ForceField;
use settee_core::role::{Interaction, MechanicalState};
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// Springs with a polynomial force-strain law.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    markers = [Interaction],
    templates = ["Vec3d"],
    template_rule = FromPair,
    create = |_args| PolynomialSpringsForceField::default(),
    data = {
        /// points of the first state (empty: all)
        firstObjectPoints: Indices,
        /// points of the second state (empty: all)
        secondObjectPoints: Indices,
        /// coefficients of all the polynomials, one after the other (empty: 100)
        polynomialStiffness: Reals,
        /// degree of each spring's polynomial (empty: 1)
        polynomialDegree: Indices,
        /// 1: the rest lengths are the lengths at the first evaluation
        computeZeroLength: Int = "1",
        /// rest lengths when computeZeroLength is 0 (one value: for all springs)
        zeroLength: Reals,
        /// recompute the index lists at each evaluation
        recompute_indices: Bool = "false",
        /// compressed springs push (else they do nothing)
        compressible: Bool = "false",
        /// how springs are drawn: 0 line, 1 cylinder, 2 arrow (rendering only)
        drawMode: Int = "0",
        /// size of the drawn arrows (rendering only)
        showArrowSize: Real = "0.01",
        /// colour of the drawn springs (rendering only)
        springColor: Color = "0 1 0 1",
        /// scale of the drawn indices (rendering only)
        showIndicesScale: Real = "0.02",
    },
    inherit = [Self, RayleighStiffnessData],
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
    },
)]
#[derive(Clone, Default)]
pub struct PolynomialSpringsForceField {
    s1: Option<StateId>,
    s2: Option<StateId>,
    first: Vec<usize>,
    second: Vec<usize>,
    coefficients: Vec<f64>,
    /// Per polynomial, the coefficients' indices in `coefficients`.
    polynomials: Vec<Vec<usize>>,
    compute_zero_length: Vec<bool>,
    rest_length: Vec<f64>,
    compressible: bool,
    /// Per spring, the 3×3 Jacobian of the last evaluation (row-major).
    jacobians: Vec<[f64; 9]>,
    rayleigh_stiffness: f64,
}

impl PolynomialSpringsForceField {
    /// `(P(s), P'(s))` of polynomial `p`.
    pub fn polynomial(&self, p: usize, s: f64) -> (f64, f64) {
        let (mut value, mut derivative) = (0.0, 0.0);
        let mut power = 1.0;
        for (k, &c) in self.polynomials[p].iter().enumerate() {
            derivative += (k + 1) as f64 * self.coefficients[c] * power;
            power *= s;
            value += self.coefficients[c] * power;
        }
        (value, derivative)
    }

    pub fn rest_lengths(&self) -> &[f64] {
        &self.rest_length
    }

    fn second_entry(&self) -> usize {
        usize::from(self.s1 != self.s2)
    }
}

impl Component for PolynomialSpringsForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s1, s2) = resolve_pair(cx, Layout::Vec3)?;
        self.s1 = Some(s1);
        self.s2 = Some(s2);
        let d = cx.data();
        self.rayleigh_stiffness = d.get(RayleighStiffnessData::RAYLEIGH_STIFFNESS);
        self.compressible = d.get(Self::COMPRESSIBLE);
        self.coefficients = d.get(Self::POLYNOMIAL_STIFFNESS).to_vec();
        if self.coefficients.is_empty() {
            self.coefficients.push(100.0);
        }
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
        Ok(())
    }

    /// SOFA builds the springs in `bwdInit`, once every state has its size.
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (Some(s1), Some(s2)) = (self.s1, self.s2) else {
            return Err(SimError::new("PolynomialSpringsForceField used before init"));
        };
        let d = cx.data();
        let compute = d.get(Self::COMPUTE_ZERO_LENGTH) == 1;
        let zero = d.get(Self::ZERO_LENGTH).to_vec();
        let first = d.get(Self::FIRST_OBJECT_POINTS).to_vec();
        let second = d.get(Self::SECOND_OBJECT_POINTS).to_vec();
        let all = |s: StateId| (0..cx.state_size(s)).collect::<Vec<usize>>();
        self.first = if first.is_empty() { all(s1) } else { first };
        self.second = if second.is_empty() { all(s2) } else { second };
        if self.first.len() > self.second.len() {
            return Err(cx.error(format!("{} points in the first state but {} in the second", self.first.len(), self.second.len())));
        }
        let n = self.first.len();
        let (n1, n2) = (cx.state_size(s1), cx.state_size(s2));
        if let Some(i) = (0..n).find(|&i| self.first[i] >= n1 || self.second[i] >= n2) {
            return Err(cx.error(format!("spring {i} ({} {}) reaches beyond the states ({n1} and {n2} points)", self.first[i], self.second[i])));
        }
        self.compute_zero_length = vec![compute; n];
        self.rest_length = vec![0.0; n];
        if !compute {
            if zero.is_empty() {
                return Err(cx.error("computeZeroLength is 0 but zeroLength is empty"));
            }
            for (i, l) in self.rest_length.iter_mut().enumerate() {
                *l = if zero.len() > 1 { *zero.get(i).ok_or_else(|| cx.error(format!("zeroLength has no value for spring {i}")))? } else { zero[0] };
            }
        }
        self.jacobians = vec![[0.0; 9]; n];
        Ok(())
    }
}

impl ForceField for PolynomialSpringsForceField {
    fn states(&self) -> settee_core::StateSet {
        self.s1.into_iter().chain(self.s2).collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let j2 = self.second_entry();
        let compression = if self.compressible { -1.0 } else { 0.0 };
        let per_spring = self.polynomials.len() == self.first.len();
        for i in 0..self.first.len() {
            let (a, b) = (self.first[i], self.second[i]);
            if 3 * a + 3 > io.x[0].len() || 3 * b + 3 > io.x[j2].len() {
                return Err(SimError::new(format!("PolynomialSpringsForceField: spring {i} ({a} {b}) reaches beyond the states")));
            }
            let d: [f64; 3] = std::array::from_fn(|c| io.x[j2][3 * b + c] - io.x[0][3 * a + c]);
            let length = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            if self.compute_zero_length[i] {
                self.rest_length[i] = length;
                self.compute_zero_length[i] = false;
            }
            let l0 = self.rest_length[i];
            let u = d.map(|c| c / length);
            let strain = (length - l0).abs() / l0;
            let p = if per_spring { i } else { 0 };
            let (force, slope) = self.polynomial(p, strain);
            let sign = if length - l0 >= 0.0 { 1.0 } else { compression };
            for (o, uc) in io.f[0][3 * a..3 * a + 3].iter_mut().zip(u) {
                *o += force * sign * uc;
            }
            for (o, uc) in io.f[j2][3 * b..3 * b + 3].iter_mut().zip(u) {
                *o -= force * sign * uc;
            }
            let (tangent, normal) = (slope / l0, force / length);
            let m = &mut self.jacobians[i];
            for r in 0..3 {
                for c in 0..3 {
                    m[3 * r + c] = (tangent - normal) * u[r] * u[c];
                }
                m[4 * r] += normal;
            }
        }
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let j2 = self.second_entry();
        for (i, m) in self.jacobians.iter().enumerate() {
            let (a, b) = (self.first[i], self.second[i]);
            let delta: [f64; 3] = std::array::from_fn(|c| io.x[j2][3 * b + c] - io.x[0][3 * a + c]);
            let df: [f64; 3] = std::array::from_fn(|r| m[3 * r] * delta[0] + m[3 * r + 1] * delta[1] + m[3 * r + 2] * delta[2]);
            for (o, dc) in io.f[0][3 * a..3 * a + 3].iter_mut().zip(df) {
                *o += dc * k_factor;
            }
            for (o, dc) in io.f[j2][3 * b..3 * b + 3].iter_mut().zip(df) {
                *o -= dc * k_factor;
            }
        }
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let (Some(s1), Some(s2)) = (self.s1, self.s2) else {
            return Err(SimError::new("PolynomialSpringsForceField used before init"));
        };
        for (i, m) in self.jacobians.iter().enumerate() {
            let (a, b) = (3 * self.first[i], 3 * self.second[i]);
            for r in 0..3 {
                for c in 0..3 {
                    let k = m[3 * r + c] * k_factor;
                    acc.add(s1, a + r, s1, a + c, -k);
                    acc.add(s1, a + r, s2, b + c, k);
                    acc.add(s2, b + r, s1, a + c, k);
                    acc.add(s2, b + r, s2, b + c, -k);
                }
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
    use crate::test_support::*;
    use settee_core::mechanics::{self as mech, MechScope};
    use settee_core::simulation::init_root;
    use settee_core::{Mbk, Scene, VecId};

    /// Point 0 of state A tied to point 1 of state B, rest length 2 (zeroLength).
    fn pair(x1: &str, x2: &str, extra: &[(&str, &str)]) -> Scene {
        let f = factory();
        let mut s = Scene::new("root");
        let a = s.add_node(Scene::ROOT, "A");
        let b = s.add_node(Scene::ROOT, "B");
        add(&mut s, &f, a, "MechanicalObject", &[("name", "m1"), ("position", x1)]);
        add(&mut s, &f, b, "MechanicalObject", &[("name", "m2"), ("position", x2)]);
        let mut attrs = vec![
            ("object1", "@A/m1"),
            ("object2", "@B/m2"),
            ("firstObjectPoints", "0"),
            ("secondObjectPoints", "1"),
            ("polynomialDegree", "3"),
            ("polynomialStiffness", "20 10 50"),
            ("computeZeroLength", "0"),
            ("zeroLength", "2"),
        ];
        attrs.extend_from_slice(extra);
        add(&mut s, &f, Scene::ROOT, "PolynomialSpringsForceField", &attrs);
        init_root(&mut s, &f).unwrap();
        s
    }

    #[test]
    fn force_is_the_polynomial_of_the_strain() {
        // Stretched to 3 along x: s = 0.5, F = 20·0.5 + 10·0.25 + 50·0.125 = 18.75.
        let mut s = pair("0 0 0", "9 9 9  3 0 0", &[]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        assert_eq!(fv, [18.75, 0.0, 0.0, 0.0, 0.0, 0.0, -18.75, 0.0, 0.0]);
        // Compressed to 1: nothing, unless compressible (then pushes with F(0.5)).
        let mut s = pair("0 0 0", "9 9 9  1 0 0", &[]);
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_eq!(max_abs(&forces(&mut s, &scope)), 0.0);
        let mut s = pair("0 0 0", "9 9 9  1 0 0", &[("compressible", "true")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_eq!(forces(&mut s, &scope)[0], -18.75);
    }

    #[test]
    fn first_length_is_the_rest_length_by_default() {
        let mut s = pair("0 0 0", "9 9 9  0 3 4", &[("computeZeroLength", "1")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_eq!(max_abs(&forces(&mut s, &scope)), 0.0);
    }

    #[test]
    fn stiffness_is_the_force_derivative_when_stretched() {
        let mut s = pair("0.1 -0.2 0.3", "9 9 9  2.1 1.4 -0.6", &[]);
        let scope = MechScope::build(&s, Scene::ROOT);
        let states = scope.states.clone();
        let x0: Vec<Vec<f64>> = states.iter().map(|&st| s.store.get(st).read(VecId::POSITION).to_vec()).collect();
        let mut seed = 31;
        let dx: Vec<f64> = (0..9).map(|_| lcg(&mut seed)).collect();
        let eps = 1e-6;
        let set = |s: &mut Scene, h: f64| {
            let mut k = 0;
            for (st, x) in states.iter().zip(&x0) {
                let moved: Vec<f64> = x
                    .iter()
                    .map(|v| {
                        k += 1;
                        v + h * dx[k - 1]
                    })
                    .collect();
                s.store.get_mut(*st).write(VecId::POSITION).copy_from_slice(&moved);
            }
        };
        set(&mut s, eps);
        let fp = forces(&mut s, &scope);
        set(&mut s, -eps);
        let fm = forces(&mut s, &scope);
        set(&mut s, 0.0);
        forces(&mut s, &scope);
        let df = dforce(&mut s, &scope, &dx, 1.0);
        let scale = max_abs(&df);
        assert!(scale > 1.0, "{df:?}");
        for i in 0..9 {
            let fd = (fp[i] - fm[i]) / (2.0 * eps);
            assert!((fd - df[i]).abs() < 1e-7 * scale, "row {i}: finite difference {fd} vs addDForce {}", df[i]);
        }
        let mut b = settee_linalg::MatrixBuilder::new(0);
        mech::assemble(&mut s, &scope, Mbk { m: 0.0, b: 0.0, k: 1.0 }, &mut b).unwrap();
        let mut kdx = vec![0.0; 9];
        b.matrix().mul_vec(&dx, &mut kdx).unwrap();
        for i in 0..9 {
            assert!((kdx[i] - df[i]).abs() < 1e-12 * scale);
        }
    }
}
