//! `UniformVelocityDampingForceField`: a viscous force `f = −c·v` on every DOF component (SOFA's
//! `UniformVelocityDampingForceField`).
//!
//! With `implicit`, the force's velocity derivative `−c·I` enters the damping matrix: `addDForce`
//! adds `−bFactor·c·dx` and the assembled damping is `−c` on the diagonal (times `bFactor`).
//! Without it the force is explicit: no derivative at all. There is no stiffness.

use settee_core::component::ForceField;
use settee_core::role::MechanicalState;
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// Uniform viscous damping force −c·v on every DOF.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d", "Rigid2d", "Rigid3d"],
    template_rule = FromState,
    create = |args| UniformVelocityDampingForceField::new(args.layout.unwrap_or(Layout::Vec3)),
    data = {
        /// velocity damping coefficient
        #[alias("damping")]
        dampingCoefficient: Real = "0.1",
        /// contribute the damping matrix df/dv (else the force is explicit only)
        implicit: Bool = "false",
        /// Rayleigh damping coefficient related to stiffness (no effect: no stiffness)
        rayleighStiffness: Real = "0",
    },
    links = {
        /// mechanical state (default: the node's)
        mstate: MechanicalState,
    },
)]
#[derive(Clone)]
pub struct UniformVelocityDampingForceField {
    layout: Layout,
    state: Option<StateId>,
    coefficient: f64,
    implicit: bool,
    /// Scalar size of the state (DOFs × derivative size), for the damping matrix.
    size: usize,
    rayleigh_stiffness: f64,
}

impl UniformVelocityDampingForceField {
    pub fn new(layout: Layout) -> UniformVelocityDampingForceField {
        UniformVelocityDampingForceField { layout, state: None, coefficient: 0.1, implicit: false, size: 0, rayleigh_stiffness: 0.0 }
    }
}

impl Component for UniformVelocityDampingForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::state_of_template(cx, self.layout)?;
        self.state = Some(s);
        self.size = cx.state_size(s) * self.layout.deriv_size();
        let d = cx.data();
        self.coefficient = d.get(Self::DAMPING_COEFFICIENT);
        self.implicit = d.get(Self::IMPLICIT);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        Ok(())
    }
}

impl ForceField for UniformVelocityDampingForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    /// `f −= v·c`.
    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let Some(&v) = io.v.first() else { return Ok(()) };
        let f = &mut io.f[0];
        if v.len() > f.len() {
            return Err(SimError::new("UniformVelocityDampingForceField: the velocity is longer than the force vector"));
        }
        for (fi, vi) in f.iter_mut().zip(v) {
            *fi -= vi * self.coefficient;
        }
        Ok(())
    }

    /// `df −= dx·(bFactor·c)` when implicit.
    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, _k_factor: f64, b_factor: f64) -> SimResult {
        if !self.implicit || b_factor == 0.0 {
            return Ok(());
        }
        let b = b_factor * self.coefficient;
        let dx = io.x[0];
        for (dfi, dxi) in io.f[0].iter_mut().zip(dx) {
            *dfi -= dxi * b;
        }
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _k: f64) -> SimResult {
        Ok(())
    }

    /// `−c` on the diagonal, times `bFactor` (SOFA's `buildDampingMatrix`).
    fn add_b_to_matrix(&self, _p: &MechParams, acc: &mut MatrixAccumulator, b_factor: f64) -> SimResult {
        if !self.implicit {
            return Ok(());
        }
        let s = self.state.ok_or_else(|| SimError::new("UniformVelocityDampingForceField used before init"))?;
        for i in 0..self.size {
            acc.add(s, i, s, i, -self.coefficient * b_factor);
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

    fn scene(ff: &[(&str, &str)]) -> Scene {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 1 1"), ("velocity", "1 -2 3  0.5 0 -1")]);
        add(&mut s, &f, Scene::ROOT, "UniformVelocityDampingForceField", ff);
        init_root(&mut s, &f).unwrap();
        s
    }

    #[test]
    fn explicit_damping_is_a_force_only() {
        let mut s = scene(&[("damping", "0.5")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        assert_close(&forces(&mut s, &scope), &[-0.5, 1.0, -1.5, -0.25, 0.0, 0.5], 1e-15);
        let df = dforce_mbk(&mut s, &scope, &[1.0; 6], 1.0, 3.0);
        assert!(df.iter().all(|v| *v == 0.0));
        assert!(assembled(&mut s, &scope, 1.0, 3.0).values().iter().all(|v| *v == 0.0));
    }

    #[test]
    fn implicit_damping_fills_the_damping_matrix() {
        let mut s = scene(&[("dampingCoefficient", "0.5"), ("implicit", "1"), ("rayleighStiffness", "0.2")]);
        let scope = MechScope::build(&s, Scene::ROOT);
        forces(&mut s, &scope);
        let dx = random_vec(6, 4);
        // b·B·dx with B = −c·I; the stiffness part (and its Rayleigh term) is zero.
        let df = dforce_mbk(&mut s, &scope, &dx, 2.0, 3.0);
        let expected: Vec<f64> = dx.iter().map(|d| -1.5 * d).collect();
        assert_close(&df, &expected, 1e-15);
        assert!(dforce_mbk(&mut s, &scope, &dx, 2.0, 0.0).iter().all(|v| *v == 0.0));
        let m = assembled(&mut s, &scope, 2.0, 3.0);
        assert_close(&m.diagonal(), &[-1.5; 6], 1e-15);
        assert_close(&mul(&m, &dx), &df, 1e-15);
    }
}
