//! MultiStepAnimationLoop drives the ODE solvers with sub-steps.

use settee_core::simulation::{animate, init_root};
use settee_core::testing::add;
use settee_core::{Scene, VecId};

/// A falling particle with symplectic Euler under a MultiStepAnimationLoop of 2 collision steps of
/// 3 integrations: each step is 6 sub-steps of dt/6, and the context time advances by dt/2 only
/// (SOFA sets it to t0 + (i+1)·dt/6 inside each collision step).
#[test]
fn sub_steps_and_sofa_s_time() {
    let f = settee_statecontainer::factory_with(&[settee_mass::register, settee_animationloop::register, settee_odesolver::register]);
    let mut s = Scene::new("root");
    let h = 0.06;
    s.node_mut(Scene::ROOT).context.dt = h;
    add(&mut s, &f, Scene::ROOT, "MultiStepAnimationLoop", &[("collisionSteps", "2"), ("integrationSteps", "3")]);
    add(&mut s, &f, Scene::ROOT, "EulerExplicitSolver", &[]);
    let mo = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 1 0"), ("velocity", "1 0 0")]);
    add(&mut s, &f, Scene::ROOT, "UniformMass", &[("vertexMass", "2")]);
    init_root(&mut s, &f).unwrap();
    let st = s.state_of(mo).unwrap();
    let g = -9.81;
    let sub = h / 6.0;
    let (mut x, mut v) = ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0]);
    for step in 1..=5 {
        animate(&mut s, h).unwrap();
        for _ in 0..6 {
            v[1] += (g * 2.0) / 2.0 * sub;
            for c in 0..3 {
                x[c] += v[c] * sub;
            }
        }
        assert_eq!(s.vec(st, VecId::POSITION), &x, "step {step}");
        assert_eq!(s.vec(st, VecId::VELOCITY), &v, "step {step}");
        let t = s.node(Scene::ROOT).context.time;
        assert!((t - step as f64 * h / 2.0).abs() < 1e-15, "step {step}: time {t}");
    }
}

#[test]
fn zero_steps_are_refused() {
    let f = settee_statecontainer::factory_with(&[settee_animationloop::register]);
    let mut s = Scene::new("root");
    add(&mut s, &f, Scene::ROOT, "MultiStepAnimationLoop", &[("integrationSteps", "0")]);
    let e = init_root(&mut s, &f).unwrap_err();
    assert!(e.to_string().contains("at least 1"), "{e}");
}
