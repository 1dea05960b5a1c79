//! `GenericConstraintCorrection` (lagrangian-constraints spec §3): one correction per linear
//! solver, covering every independent state that solver solves for. The compliance is
//! `W += factor·J·A⁻¹·Jᵀ` with `J` assembled from the rows of all those states (in the solver's
//! global columns) and `factor = correctionFactor(ODE, order)·complianceFactor`; the motion of
//! the multipliers is a new solve `A⁻¹·Jᵀλ` with the `J` of the last compliance.
//!
//! It has no unbuilt support (SOFA's base `hasConstraintNumber` answers yes and the block
//! diagonal compliance is empty), so under UnbuiltGaussSeidelConstraintSolver it contributes
//! nothing to the diagonal blocks.

use settee_core::constraint::{ConstraintCorrection, ConstraintJacobian, ConstraintOrder, ConstraintParams, DenseMatrix};
use settee_core::mechanics::MechScope;
use settee_core::{Component, ComponentId, InitCtx, LinearSolver, OdeSolver, Scene, SimError, SimResult, StateId, VecId};

use super::common::{add_jminvjt, ode_factors, regularize, step_error, with_linear_solver};
use super::linear_solver::{linear_solver_correction, RegularizationData, SolverLinks};

linear_solver_correction! {
    /// Component computing constraint forces within a simulated body using the compliance method.
    #[component(
    module = "Sofa.Component.Constraint.Lagrangian.Correction",
        data = {
            /// Factor applied to the position factor and velocity factor used to calculate compliance
            /// matrix
            complianceFactor: Real = "1",
        },
    )]
    #[derive(Clone, Default)]
    pub struct GenericConstraintCorrection {
        solver: SolverLinks,
        compliance_factor: f64,
        /// The independent states of the linear solver's scope (refreshed at every compliance).
        states: Vec<StateId>,
        /// `J` of the last compliance, in the linear solver's global columns (SOFA's `J_local`).
        jacobian: ConstraintJacobian,
    }
}

impl GenericConstraintCorrection {
    fn ids(&self) -> SimResult<(ComponentId, ComponentId, ComponentId)> {
        match (self.solver.me, self.solver.linear_solver, self.solver.ode) {
            (Some(me), Some(ls), Some(ode)) => Ok((me, ls, ode)),
            _ => Err(SimError::new("GenericConstraintCorrection used before init")),
        }
    }

    /// The system the linear solver solves: the subtree of its node.
    fn scope(&mut self, scene: &mut Scene) -> SimResult<std::sync::Arc<MechScope>> {
        let (_, ls, _) = self.ids()?;
        let scope = scene.scope(scene.entry(ls).node);
        self.states.clone_from(&scope.main_states);
        Ok(scope)
    }

    /// SOFA's `MechanicalIntegrateConstraintsVisitor` over the linear solver's subtree: on every
    /// independent state, `x := x_free ⊕ corr·p` when `p ≠ 0`, `v := v_free + corr·q` when
    /// `q ≠ 0`, and `dx := corr·(VEL ? q : p)`. `correction` may be `dx` itself.
    #[allow(clippy::too_many_arguments)]
    fn integrate(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, v: VecId, dx: VecId, correction: VecId, p: f64, q: f64) -> SimResult {
        let (me, _, _) = self.ids()?;
        let scope = self.scope(scene)?;
        let k = if cp.order == ConstraintOrder::Vel { q } else { p };
        for &s in &scope.main_states {
            let st = scene.store.get_mut(s);
            let layout = st.layout;
            let (cs, ds, n) = (layout.coord_size(), layout.deriv_size(), st.size);
            let corr = st.read(correction).to_vec();
            if corr.len() < n * ds {
                return Err(step_error(scene, me, "the constraint correction vector is not allocated on a corrected state"));
            }
            if p != 0.0 {
                let mut xs = st.read(cp.x).to_vec();
                if xs.len() < n * cs {
                    return Err(step_error(scene, me, "the free positions are not allocated on a corrected state"));
                }
                for i in 0..n {
                    layout.coord_add_scaled(&mut xs[i * cs..(i + 1) * cs], &corr[i * ds..(i + 1) * ds], p);
                }
                st.write(x).copy_from_slice(&xs[..n * cs]);
            }
            if q != 0.0 {
                let vf = st.read(cp.v);
                if vf.len() < n * ds {
                    return Err(step_error(scene, me, "the free velocities are not allocated on a corrected state"));
                }
                let vs: Vec<f64> = vf.iter().zip(&corr).map(|(a, c)| a + c * q).collect();
                st.write(v).copy_from_slice(&vs[..n * ds]);
            }
            let out = st.write(dx);
            for (o, c) in out.iter_mut().zip(&corr) {
                *o = c * k;
            }
        }
        Ok(())
    }

    fn solve_again(&self, scene: &mut Scene, scope: &MechScope, rhs: VecId, solution: VecId) -> SimResult {
        let (_, ls, _) = self.ids()?;
        with_linear_solver(scene, ls, |solver, scene| solver.solve_again(scene, scope, rhs, solution))
    }
}

impl Component for GenericConstraintCorrection {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.solver.init(cx)?;
        self.compliance_factor = cx.data().get(Self::COMPLIANCE_FACTOR);
        let scope = self.scope(cx.scene)?;
        if scope.main_states.is_empty() {
            cx.warn("the linear solver's node has no independent mechanical state: this correction corrects nothing");
        }
        Ok(())
    }
}

impl ConstraintCorrection for GenericConstraintCorrection {
    fn states(&self) -> settee_core::StateSet {
        self.states.iter().copied().collect()
    }

    /// SOFA's `buildComplianceMatrix`: `J` of every state of the system, `W += factor·J·A⁻¹·Jᵀ`,
    /// then `regularizationTerm` on the diagonal of every non-empty row of `J`.
    fn add_compliance_in_constraint_space(&mut self, scene: &mut Scene, cp: &ConstraintParams, w: &mut DenseMatrix) -> SimResult {
        let (me, ls, ode) = self.ids()?;
        let factor = ode_factors(scene, ode, cp.dt).for_order(cp.order) * self.compliance_factor;
        let scope = self.scope(scene)?;
        self.jacobian.reset(scope.size);
        if w.n == 0 {
            return Ok(());
        }
        for &(s, off) in &scope.offsets {
            self.jacobian.add_state_rows(&scene.store.get(s).constraint, off);
        }
        if add_jminvjt(scene, me, ls, &scope, &self.jacobian, factor, w)? {
            let rows = self.jacobian.rows.iter().filter(|(_, line)| !line.is_empty()).map(|(r, _)| *r);
            regularize(w, rows, self.solver.regularization);
        }
        Ok(())
    }

    /// SOFA's `applyConstraintForce`: the system's right-hand side `Jᵀλ` (with the `J` of the last
    /// compliance) is dispatched into `Λ` (overwritten on the system's states), and the solution
    /// `A⁻¹·Jᵀλ` into `dx`.
    fn compute_motion_correction_from_lambda(&mut self, scene: &mut Scene, cp: &ConstraintParams, lambda: &[f64]) -> SimResult {
        let scope = self.scope(scene)?;
        let mut rhs = vec![0.0; scope.size];
        for (r, line) in &self.jacobian.rows {
            let l = lambda.get(*r).copied().unwrap_or(0.0);
            for &(c, v) in line {
                if c < rhs.len() {
                    rhs[c] += v * l;
                }
            }
        }
        for &(s, off) in &scope.offsets {
            let st = scene.store.get_mut(s);
            let n = st.size * st.layout.deriv_size();
            let out = st.write(cp.lambda);
            out.copy_from_slice(&rhs[off..off + n]);
        }
        self.solve_again(scene, &scope, cp.lambda, cp.dx)
    }

    fn compute_motion_correction(&mut self, scene: &mut Scene, _cp: &ConstraintParams, dx: VecId, f: VecId) -> SimResult {
        let scope = self.scope(scene)?;
        self.solve_again(scene, &scope, f, dx)
    }

    fn apply_motion_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, v: VecId, dx: VecId, correction: VecId) -> SimResult {
        let (_, _, ode) = self.ids()?;
        let f = ode_factors(scene, ode, cp.dt);
        let (p, q) = (f.position * self.compliance_factor, f.velocity * self.compliance_factor);
        self.integrate(scene, cp, x, v, dx, correction, p, q)
    }

    fn apply_position_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, dx: VecId, correction: VecId) -> SimResult {
        let (_, _, ode) = self.ids()?;
        let p = ode_factors(scene, ode, cp.dt).position * self.compliance_factor;
        self.integrate(scene, cp, x, VecId::VELOCITY, dx, correction, p, 0.0)
    }

    /// The velocity factor here is the ODE solver's alone: SOFA does not apply `complianceFactor`.
    fn apply_velocity_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, v: VecId, dv: VecId, correction: VecId) -> SimResult {
        let (_, _, ode) = self.ids()?;
        let q = ode_factors(scene, ode, cp.dt).velocity;
        self.integrate(scene, cp, VecId::POSITION, v, dv, correction, 0.0, q)
    }

    /// SOFA's `resetContactForce` does nothing here.
    fn reset_contact_force(&mut self, _scene: &mut Scene) -> SimResult {
        Ok(())
    }

    /// SOFA's `applyContactForce` with default constraint parameters (`x = position`,
    /// `v = velocity`, `dx = dx`, `Λ = externalForce`): `dx := A⁻¹·Jᵀλ` with `Jᵀλ` dispatched into
    /// `externalForce`, then the motion correction is applied with **that** vector as the
    /// correction (`x += p·Jᵀλ`, `v += q·Jᵀλ`, `dx := p·Jᵀλ`), as GenericConstraintCorrection.cpp
    /// does (it passes `cparams.lambda()`, not `dx`).
    fn apply_contact_force(&mut self, scene: &mut Scene, cp: &ConstraintParams, lambda: &[f64]) -> SimResult {
        let dcp = ConstraintParams {
            x: VecId::POSITION,
            v: VecId::VELOCITY,
            dx: VecId::DX,
            lambda: VecId::EXTERNAL_FORCE,
            order: ConstraintOrder::PosAndVel,
            ..*cp
        };
        self.compute_motion_correction_from_lambda(scene, &dcp, lambda)?;
        self.apply_motion_correction(scene, &dcp, VecId::POSITION, VecId::VELOCITY, VecId::DX, VecId::EXTERNAL_FORCE)
    }
}
