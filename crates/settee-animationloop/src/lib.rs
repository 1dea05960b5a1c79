//! Animation loops. `DefaultAnimationLoop` runs SOFA's plain step: begin event, ODE solvers,
//! projection, propagation through mappings, end of integration, time advance.
//! `FreeMotionAnimationLoop` runs the free motion, collision detection and the Lagrangian
//! constraint problem ([`free_motion_step`]). The steps themselves are in [`steps`].

use settee_core::component::AnimationLoop;
use settee_core::role;
mod controller;
pub mod steps;

pub use controller::MechanicalStateController;

use settee_core::{component, Component, ComponentId, InitCtx, Scene, SimError, SimResult};
pub use steps::{default_step, free_motion_step, multi_step, FreeMotionConfig};

/// Simulation loop: begin event, ODE solvers of every solver node, projection, mapping propagation, time advance.
#[component(
    module = "Sofa.Simulation.Core",
    roles = [AnimationLoop],
    data = {
        /// solve independent ODE systems in parallel (same result as sequential)
        parallelODESolving: Bool = "false",
        /// compute bounding boxes after the step (rendering only)
        computeBoundingBox: Bool = "true",
    },
)]
#[derive(Clone, Default)]
pub struct DefaultAnimationLoop;

impl Component for DefaultAnimationLoop {
    /// Lagrangian constraints and constraint solvers take no part in this loop's step (as in
    /// SOFA); a scene that has them almost certainly wants FreeMotionAnimationLoop.
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let scene = &*cx.scene;
        let ignored = scene
            .preorder(Scene::ROOT)
            .into_iter()
            .flat_map(|n| scene.node(n).objects.clone())
            .find(|c| scene.entry(*c).plays(role::CONSTRAINT_SOLVER) || scene.entry(*c).plays(role::CONSTRAINT_LAW));
        if let Some(c) = ignored {
            let (label, pos) = (scene.entry(c).label(), scene.entry(c).pos.clone());
            cx.scene.report(
                settee_core::Diagnostic::warning(format!("{label} is ignored: DefaultAnimationLoop does not solve Lagrangian constraints"))
                    .at(pos)
                    .hint("use <FreeMotionAnimationLoop/> in the root node"),
            );
        }
        Ok(())
    }
}

impl AnimationLoop for DefaultAnimationLoop {
    fn step(&mut self, scene: &mut Scene, dt: f64) -> SimResult {
        default_step(scene, dt)
    }
}

/// Animation loop for Lagrangian constraints: free motion, collision detection, constraint problem solved and applied as a correction of the free motion.
#[component(
    module = "Sofa.Component.AnimationLoop",
    roles = [AnimationLoop],
    data = {
        /// pose the constraint problem at velocity level (order VEL); no position-level pass follows
        solveVelocityConstraintFirst: Bool = "false",
        /// how dx and dforce are allocated (no numerical effect)
        threadSafeVisitor: Bool = "false",
        /// run collision detection concurrently with the free motion (same results)
        parallelCollisionDetectionAndFreeMotion: Bool = "false",
        /// solve independent ODE systems in parallel (same results as sequential)
        parallelODESolving: Bool = "false",
        /// compute bounding boxes after the step (rendering only)
        computeBoundingBox: Bool = "true",
    },
    links = {
        /// constraint solver used by the loop
        constraintSolver: settee_core::constraint::ConstraintSolver,
    },
)]
#[derive(Clone, Default)]
pub struct FreeMotionAnimationLoop {
    solver: Option<ComponentId>,
    velocity_first: bool,
    parallel_detection: bool,
}

impl Component for FreeMotionAnimationLoop {
    /// The `constraintSolver` link, else the first constraint solver below the loop's node, else
    /// (as SOFA) a BlockGaussSeidelConstraintSolver with default Data, created with a warning.
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.velocity_first = cx.data().get(Self::SOLVE_VELOCITY_CONSTRAINT_FIRST);
        self.parallel_detection = cx.data().get(Self::PARALLEL_COLLISION_DETECTION_AND_FREE_MOTION);
        let node = cx.node();
        self.solver = cx.link_targets("constraintSolver").first().copied().or_else(|| cx.scene.find_down(node, role::CONSTRAINT_SOLVER));
        if self.solver.is_none() {
            let id = cx.scene.create_component(node, "BlockGaussSeidelConstraintSolver", None, &[])?;
            settee_core::simulation::init_components(cx.scene, &[id])?;
            cx.warn("no constraint solver found below the FreeMotionAnimationLoop: a BlockGaussSeidelConstraintSolver with default Data was added");
            self.solver = Some(id);
        }
        Ok(())
    }

    /// After every component is initialised: a constrained object that no constraint correction
    /// handles would never move; say so (SOFA says nothing).
    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let mut reported = Vec::new();
        for (law, state) in settee_core::constraint::uncorrected_laws(cx.scene) {
            if reported.contains(&state) {
                continue;
            }
            reported.push(state);
            let (law_label, state_name) = (cx.scene.entry(law).label(), cx.scene.store.get(state).name.clone());
            let pos = cx.scene.entry(law).pos.clone();
            cx.scene.report(
                settee_core::Diagnostic::warning(format!(
                    "the constraint {law_label} acts on '{state_name}', which has no constraint correction: under FreeMotionAnimationLoop it will not move"
                ))
                .at(pos)
                .hint("add an UncoupledConstraintCorrection, LinearSolverConstraintCorrection or GenericConstraintCorrection next to its ODE solver"),
            );
        }
        // Bodies whose contacts are Lagrangian: the warning goes at the body's state.
        for (model, state, response) in settee_core::simulation::uncorrected_contact_states(cx.scene) {
            if reported.contains(&state) {
                continue;
            }
            reported.push(state);
            let owner = cx.scene.store.get(state).owner;
            let model_label = cx.scene.entry(model).label();
            let (pos, subject) = match cx.scene.contains(owner) {
                true => (cx.scene.entry(owner).pos.clone(), cx.scene.entry(owner).label()),
                false => (cx.scene.entry(model).pos.clone(), model_label.clone()),
            };
            cx.scene.report(
                settee_core::Diagnostic::warning(format!(
                    "this state gets {response} contacts through {model_label} but has no constraint correction: under FreeMotionAnimationLoop it will not move"
                ))
                .at(pos)
                .subject(subject)
                .hint("add an UncoupledConstraintCorrection, LinearSolverConstraintCorrection or GenericConstraintCorrection next to its ODE solver"),
            );
        }
        Ok(())
    }
}

impl AnimationLoop for FreeMotionAnimationLoop {
    fn step(&mut self, scene: &mut Scene, dt: f64) -> SimResult {
        let solver = self
            .solver
            .filter(|s| scene.contains(*s))
            .ok_or_else(|| SimError::new("FreeMotionAnimationLoop has no constraint solver (was it removed?)"))?;
        free_motion_step(scene, dt, FreeMotionConfig { solver, velocity_first: self.velocity_first, parallel_detection: self.parallel_detection })
    }
}

/// Simulation loop splitting each step into collision rounds and integration sub-steps.
#[component(
    module = "Sofa.Component.AnimationLoop",
    roles = [AnimationLoop],
    data = {
        /// number of collision steps between each frame rendering
        collisionSteps: Int = "1",
        /// number of integration steps between each collision detection
        integrationSteps: Int = "1",
        /// compute bounding boxes after the step (rendering only)
        computeBoundingBox: Bool = "true",
    },
)]
#[derive(Clone, Default)]
pub struct MultiStepAnimationLoop {
    collisions: usize,
    integrations: usize,
}

impl Component for MultiStepAnimationLoop {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let (c, i) = (d.get(Self::COLLISION_STEPS), d.get(Self::INTEGRATION_STEPS));
        if c < 1 || i < 1 {
            return Err(cx
                .error(format!("collisionSteps ({c}) and integrationSteps ({i}) must be at least 1"))
                .hint("SOFA divides the time step by their product"));
        }
        self.collisions = c as usize;
        self.integrations = i as usize;
        Ok(())
    }
}

impl AnimationLoop for MultiStepAnimationLoop {
    fn step(&mut self, scene: &mut Scene, dt: f64) -> SimResult {
        multi_step(scene, dt, self.collisions, self.integrations)
    }
}

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<DefaultAnimationLoop>();
    f.add::<FreeMotionAnimationLoop>();
    f.add::<MechanicalStateController>();
    f.add::<MultiStepAnimationLoop>();
}

#[cfg(test)]
mod tests {
    use settee_core::simulation::{animate, init_root};
    use settee_core::testing::add;
    use settee_core::{Scene, VecId};

    /// A particle of mass 1 falling under g = −10 with symplectic Euler, dt 0.6 split into
    /// 2 collision rounds × 3 integrations (h = 0.1): six sub-steps give v = 6·g·h = −6 and
    /// x = g·h²·(1 + … + 6) = −2.1. The time ends at 0.3 = dt/2 (SOFA's time restarts every
    /// round), and a second step starts from there.
    #[test]
    fn sub_steps_integrate_with_the_divided_step() {
        let f = settee_statecontainer::factory_with(&[settee_odesolver::register, settee_mass::register, crate::register]);
        let mut s = Scene::new("root");
        s.node_mut(Scene::ROOT).context.gravity = [0.0, -10.0, 0.0];
        s.node_mut(Scene::ROOT).context.dt = 0.6;
        add(&mut s, &f, Scene::ROOT, "MultiStepAnimationLoop", &[("collisionSteps", "2"), ("integrationSteps", "3")]);
        add(&mut s, &f, Scene::ROOT, "EulerExplicitSolver", &[]);
        let ms = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0")]);
        add(&mut s, &f, Scene::ROOT, "UniformMass", &[("totalMass", "1")]);
        init_root(&mut s, &f).unwrap();
        animate(&mut s, 0.6).unwrap();
        let st = s.state_of(ms).unwrap();
        let (x, v) = (s.store.get(st).read(VecId::POSITION)[1], s.store.get(st).read(VecId::VELOCITY)[1]);
        assert!((v + 6.0).abs() < 1e-12, "{v}");
        assert!((x + 2.1).abs() < 1e-12, "{x}");
        assert!((s.root().context.time - 0.3).abs() < 1e-15, "{}", s.root().context.time);
        animate(&mut s, 0.6).unwrap();
        let v = s.store.get(st).read(VecId::VELOCITY)[1];
        assert!((v + 12.0).abs() < 1e-12, "{v}");
        assert!((s.root().context.time - 0.6).abs() < 1e-15);
    }

    /// Zero sub-steps is an error.
    #[test]
    fn zero_steps_is_an_error() {
        let f = settee_statecontainer::factory_with(&[crate::register]);
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MultiStepAnimationLoop", &[("integrationSteps", "0")]);
        let e = init_root(&mut s, &f).unwrap_err();
        assert!(e.diagnostic().message.contains("integrationSteps (0)"), "{e:?}");
    }
}
