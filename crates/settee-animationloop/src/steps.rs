//! The steps of the animation loops, as one page each of plain stage functions (the stages live
//! in `settee_core::simulation`, `settee_core::mechanics` and `settee_core::constraint`).

use settee_core::constraint::ConstraintSolver;
use settee_core::mechanics::{self, MechScope};
use settee_core::scene::positioned;
use settee_core::simulation::{
    advance_time, animate_begin, animate_end, collision, collision_during, end_integration, solve_all, timed, update_live_data, IsolatedInteractions,
};
use settee_core::{ComponentId, Scene, SimResult, VecId};

/// The step of SOFA's DefaultAnimationLoop.
pub fn default_step(scene: &mut Scene, dt: f64) -> SimResult {
    timed(scene, "animate begin", animate_begin)?;
    scene.apply_deferred();
    timed(scene, "live data", update_live_data)?;
    timed(scene, "collision", collision)?;
    timed(scene, "solve", |s| solve_all(s, dt, VecId::POSITION, VecId::VELOCITY, IsolatedInteractions::AddToExternalForce))?;
    let scope = scene.scope(Scene::ROOT);
    timed(scene, "project & propagate", |s| -> SimResult {
        mechanics::project_position_velocity(s, &scope, VecId::POSITION, VecId::VELOCITY)?;
        mechanics::propagate_position_velocity(s, &scope, VecId::POSITION, VecId::VELOCITY)
    })?;
    end_integration(scene);
    advance_time(scene, dt);
    timed(scene, "animate end", animate_end)?;
    settee_core::divergence::check_plausible(scene)
}

/// The step of SOFA's MultiStepAnimationLoop: the begin event and live data once, then
/// `collisions` rounds of collision detection each followed by `integrations` solves of
/// `dt/(collisions·integrations)`, each solve projected and mapped down like the default step.
/// As in SOFA, the time after integration `i` of a round is `t0 + (i+1)·dt_sub`, restarting at
/// every round: the step ends at `t0 + dt/collisions`, not `t0 + dt`.
pub fn multi_step(scene: &mut Scene, dt: f64, collisions: usize, integrations: usize) -> SimResult {
    timed(scene, "animate begin", animate_begin)?;
    scene.apply_deferred();
    timed(scene, "live data", update_live_data)?;
    let start = scene.root().context.time;
    let sub_dt = dt / (collisions * integrations) as f64;
    for _ in 0..collisions {
        timed(scene, "collision", collision)?;
        for i in 0..integrations {
            timed(scene, "solve", |s| solve_all(s, sub_dt, VecId::POSITION, VecId::VELOCITY, IsolatedInteractions::AddToExternalForce))?;
            let scope = scene.scope(Scene::ROOT);
            timed(scene, "project & propagate", |s| -> SimResult {
                mechanics::project_position_velocity(s, &scope, VecId::POSITION, VecId::VELOCITY)?;
                mechanics::propagate_position_velocity(s, &scope, VecId::POSITION, VecId::VELOCITY)
            })?;
            end_integration(scene);
            scene.node_mut(Scene::ROOT).context.time = start + (i + 1) as f64 * sub_dt;
            scene.propagate_context();
        }
    }
    timed(scene, "animate end", animate_end)?;
    settee_core::divergence::check_plausible(scene)
}

/// What FreeMotionAnimationLoop's step needs to know about its configuration.
#[derive(Clone, Copy, Debug)]
pub struct FreeMotionConfig {
    /// The constraint solver (its `C` and `Λ` vectors, its solve).
    pub solver: ComponentId,
    /// `solveVelocityConstraintFirst`: pose the problem at velocity level.
    pub velocity_first: bool,
    /// `parallelCollisionDetectionAndFreeMotion`: detect collisions while the free motion runs.
    pub parallel_detection: bool,
}

/// The step of SOFA's FreeMotionAnimationLoop (lagrangian-solvers spec §1.2): the unconstrained
/// ("free") motion into `freePosition`/`freeVelocity`, collision detection on the start-of-step
/// positions, the constraint problem solved and applied by the constraint solver, then the usual
/// end of step. The context time stays `t0` until the end, as in SOFA.
pub fn free_motion_step(scene: &mut Scene, dt: f64, cfg: FreeMotionConfig) -> SimResult {
    use settee_core::constraint::{ConstraintOrder, ConstraintParams};
    let (c_vec, lambda_vec) = scene
        .with_role::<dyn ConstraintSolver, _>(cfg.solver, |solver, _| Ok(solver.dx_and_lambda()))
        .map_err(|e| positioned(scene, cfg.solver, e))?;
    let order = if cfg.velocity_first { ConstraintOrder::Vel } else { ConstraintOrder::PosAndVel };
    let cp = ConstraintParams {
        x: VecId::FREE_POSITION,
        v: VecId::FREE_VELOCITY,
        dx: c_vec,
        lambda: lambda_vec,
        order,
        dt,
        time: scene.root().context.time,
    };
    init_free_vectors(scene);
    // S3: Λ counts in every state's total forces (the non-linear mappings' geometric stiffness).
    scene.total_force_contributor = Some(lambda_vec);
    timed(scene, "animate begin", animate_begin)?;
    scene.apply_deferred();
    timed(scene, "live data", update_live_data)?;
    scale_lambda(scene, lambda_vec, dt);
    // S9: the mappings' geometric stiffness for the previous step's constraint force Λ/dt.
    {
        // Let go before the collision changes the scope: it is then compiled again in place.
        let scope = scene.scope(Scene::ROOT);
        mechanics::update_geometric_stiffness(scene, &scope, lambda_vec)?;
    }
    if cfg.parallel_detection {
        timed(scene, "free motion & collision", |s| collision_during(s, &mut |s| free_motion(s, dt, order)))?;
    } else {
        timed(scene, "free motion", |s| free_motion(s, dt, order))?;
        timed(scene, "collision", collision)?;
    }
    timed(scene, "constraints", |s| -> SimResult {
        let r = s.with_role::<dyn ConstraintSolver, _>(cfg.solver, |solver, s| match order {
            ConstraintOrder::Vel => solver.solve_constraint(s, &cp, VecId::VELOCITY, None),
            _ => solver.solve_constraint(s, &cp, VecId::POSITION, Some(VecId::VELOCITY)),
        });
        r.map_err(|e| positioned(s, cfg.solver, e))?;
        let scope = s.scope(Scene::ROOT);
        if order == ConstraintOrder::Vel {
            for &st in &scope.main_states {
                mechanics::v_op_state(s, st, VecId::POSITION, Some(VecId::POSITION), Some(VecId::VELOCITY), dt);
            }
        }
        project_response_main(s, &scope, c_vec)?;
        mechanics::propagate_dx(s, &scope, c_vec)
    })?;
    end_integration(scene);
    let scope = scene.scope(Scene::ROOT);
    timed(scene, "project & propagate", |s| -> SimResult {
        mechanics::project_position_velocity(s, &scope, VecId::POSITION, VecId::VELOCITY)?;
        mechanics::propagate_position_velocity(s, &scope, VecId::POSITION, VecId::VELOCITY)
    })?;
    advance_time(scene, dt);
    timed(scene, "animate end", animate_end)?;
    settee_core::divergence::check_plausible(scene)
}

/// S2: a state whose free position or velocity is unset or empty starts from its position or
/// velocity (the first step, or a state created since).
fn init_free_vectors(scene: &mut Scene) {
    for st in scene.store.states.values_mut() {
        for (free, from) in [(VecId::FREE_POSITION, VecId::POSITION), (VecId::FREE_VELOCITY, VecId::VELOCITY)] {
            if !st.is_set(free) || st.read(free).is_empty() {
                st.copy_vec(free, from);
            }
        }
    }
}

/// S8: `Λ := Λ/dt` on every state (the previous step's impulse becomes a force).
fn scale_lambda(scene: &mut Scene, lambda: VecId, dt: f64) {
    for st in scene.store.states.values_mut() {
        if st.is_set(lambda) && !st.read(lambda).is_empty() {
            // SOFA's `vOp(Λ, null, Λ, 1/dt)`: a product by the inverse, not a division.
            let inv = 1.0 / dt;
            for x in st.write(lambda).iter_mut() {
                *x *= inv;
            }
        }
    }
}

/// `computeFreeMotion` (spec §1.3): every ODE solver writes the free vectors (interaction force
/// fields of solver-less nodes are not computed), `v_free` is projected and mapped down, and in
/// position order every state gets `x_free = x + dt·v_free`.
fn free_motion(scene: &mut Scene, dt: f64, order: settee_core::constraint::ConstraintOrder) -> SimResult {
    solve_all(scene, dt, VecId::FREE_POSITION, VecId::FREE_VELOCITY, IsolatedInteractions::Ignore)?;
    let scope = scene.scope(Scene::ROOT);
    project_response_main(scene, &scope, VecId::FREE_VELOCITY)?;
    mechanics::propagate_dx(scene, &scope, VecId::FREE_VELOCITY)?;
    if order != settee_core::constraint::ConstraintOrder::Vel {
        for &s in &scope.states {
            mechanics::v_op_state(scene, s, VecId::FREE_POSITION, Some(VecId::POSITION), Some(VecId::FREE_VELOCITY), dt);
        }
    }
    Ok(())
}

/// Projects a derivative vector with the projective constraints of independent states only (the
/// projection visitor stops at mappings).
fn project_response_main(scene: &mut Scene, scope: &MechScope, dx: VecId) -> SimResult {
    mechanics::for_each_projective(scene, scope, |p, pc, st| {
        if st.mapped || !st.is_set(dx) {
            return;
        }
        let mut v = st.take(dx);
        pc.project_response(p, &mut v);
        st.put(dx, v);
    });
    Ok(())
}
