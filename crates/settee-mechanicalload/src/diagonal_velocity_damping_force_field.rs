//! `DiagonalVelocityDampingForceField`: a viscous force `f_i = −c_i ⊙ v_i` with one coefficient
//! per DOF component; DOF `i` uses the coefficients of entry `min(i, n − 1)` of
//! `dampingCoefficient`. Its velocity derivative `−c` enters the damping matrix (`addDForce` with
//! `bFactor`); no stiffness.

use settee_core::component::ForceField;
use settee_core::role::MechanicalState;
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// Damping force proportional to the velocity, with one coefficient per DOF component.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Vec6d", "Rigid3d", "Rigid2d"],
    template_rule = FromState,
    create = |args| DiagonalVelocityDampingForceField::new(args.layout.unwrap_or(Layout::Vec3)),
    data = {
        /// velocity damping coefficients (by cinematic dof)
        dampingCoefficient: Derivs,
        /// Rayleigh damping coefficient related to stiffness (no effect: no stiffness)
        rayleighStiffness: Real = "0",
    },
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
    },
)]
#[derive(Clone)]
pub struct DiagonalVelocityDampingForceField {
    layout: Layout,
    state: Option<StateId>,
    /// Coefficients, `deriv_size` reals per entry.
    coefficients: Vec<f64>,
    /// Number of DOFs of the state (for the damping matrix).
    size: usize,
    rayleigh_stiffness: f64,
}

impl DiagonalVelocityDampingForceField {
    pub fn new(layout: Layout) -> DiagonalVelocityDampingForceField {
        DiagonalVelocityDampingForceField { layout, state: None, coefficients: Vec::new(), size: 0, rayleigh_stiffness: 0.0 }
    }

    /// The coefficients of DOF `i`.
    fn coefficients_of(&self, i: usize) -> &[f64] {
        let ds = self.layout.deriv_size();
        let k = i.min(self.coefficients.len() / ds - 1);
        &self.coefficients[k * ds..(k + 1) * ds]
    }
}

impl Component for DiagonalVelocityDampingForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::state_of_template(cx, self.layout)?;
        let d = cx.data();
        self.coefficients = d.get(Self::DAMPING_COEFFICIENT).to_vec();
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        if self.coefficients.is_empty() {
            cx.warn("dampingCoefficient is empty: no damping");
        }
        self.size = cx.state_size(s);
        self.state = Some(s);
        Ok(())
    }
}

impl ForceField for DiagonalVelocityDampingForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    /// `f_i −= v_i ⊙ c_i`.
    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        if self.coefficients.is_empty() {
            return Ok(());
        }
        let Some(&v) = io.v.first() else { return Ok(()) };
        let ds = self.layout.deriv_size();
        let f = &mut io.f[0];
        if v.len() > f.len() {
            return Err(SimError::new("DiagonalVelocityDampingForceField: the velocity is longer than the force vector"));
        }
        for (i, (fi, vi)) in f.chunks_exact_mut(ds).zip(v.chunks_exact(ds)).enumerate() {
            for ((a, b), c) in fi.iter_mut().zip(vi).zip(self.coefficients_of(i)) {
                *a -= b * c;
            }
        }
        Ok(())
    }

    /// `df_i −= dx_i ⊙ c_i · bFactor`.
    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, _k_factor: f64, b_factor: f64) -> SimResult {
        if self.coefficients.is_empty() || b_factor == 0.0 {
            return Ok(());
        }
        let ds = self.layout.deriv_size();
        let dx = io.x[0];
        for (i, (dfi, dxi)) in io.f[0].chunks_exact_mut(ds).zip(dx.chunks_exact(ds)).enumerate() {
            for ((a, b), c) in dfi.iter_mut().zip(dxi).zip(self.coefficients_of(i)) {
                *a -= b * c * b_factor;
            }
        }
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _k: f64) -> SimResult {
        Ok(())
    }

    /// `−c_i` on the diagonal, times `bFactor`.
    fn add_b_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, b_factor: f64) -> SimResult {
        if self.coefficients.is_empty() {
            return Ok(());
        }
        let s = self.state.ok_or_else(|| SimError::new("DiagonalVelocityDampingForceField used before init"))?;
        let ds = self.layout.deriv_size();
        for i in 0..self.size {
            for (j, c) in self.coefficients_of(i).iter().enumerate() {
                acc.add(s, i * ds + j, s, i * ds + j, -c * b_factor);
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

    use crate::test_support::*;

    #[test]
    fn each_component_has_its_coefficient_and_the_last_entry_repeats() {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 1 1  2 2 2"), ("velocity", "1 -2 3  0.5 0 -1  2 2 2")]);
        add(&mut s, &f, Scene::ROOT, "DiagonalVelocityDampingForceField", &[("dampingCoefficient", "0.5 0.2 0.2  1 2 3")]);
        init_root(&mut s, &f).unwrap();
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_close(&forces(&mut s, &scope), &[-0.5, 0.4, -0.6, -0.5, 0.0, 3.0, -2.0, -4.0, -6.0], 1e-15);
        let dx = random_vec(9, 4);
        let df = dforce_mbk(&mut s, &scope, &dx, 2.0, 3.0);
        let c = [0.5, 0.2, 0.2, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0];
        let expected: Vec<f64> = dx.iter().zip(c).map(|(d, c)| -d * c * 3.0).collect();
        assert_close(&df, &expected, 1e-15);
        let m = assembled(&mut s, &scope, 2.0, 3.0);
        assert_close(&m.diagonal(), &c.map(|c| -3.0 * c), 1e-15);
        assert_close(&mul(&m, &dx), &df, 1e-15);
    }
}
