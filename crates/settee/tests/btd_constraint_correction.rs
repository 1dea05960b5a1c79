//! BTDLinearSolver behind a LinearSolverConstraintCorrection (SOFA's
//! BilateralLagrangianConstraint_Rigid example: two chains of rigid frames held by bilateral
//! constraints): the block-tridiagonal solver gives the constraint problem the same compliance as
//! a sparse LDLᵀ factorization of the same system, so both runs agree to round-off.

use settee_core::simulation::animate;
use settee_core::VecId;

fn run(text: &str, name: &str) -> Vec<Vec<f64>> {
    let path = settee_testkit::temp_scene(name, text);
    let mut s = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|e| panic!("{:?}", e.diagnostics)).scene;
    for _ in 0..10 {
        animate(&mut s, 0.1).unwrap();
    }
    let states: Vec<_> = s.store.states.iter().map(|(id, _)| id).collect();
    states.into_iter().map(|id| s.store.get(id).read(VecId::POSITION).to_vec()).collect::<Vec<_>>()
}

#[test]
fn btd_and_sparse_ldl_give_the_same_constrained_motion() {
    let Some(examples) = settee_testkit::shared_dir("sofa-examples") else { return };
    let text = std::fs::read_to_string(examples.join("examples/Component/Constraint/Lagrangian/BilateralLagrangianConstraint_Rigid.scn")).unwrap();
    assert_eq!(text.matches("<BTDLinearSolver").count(), 2);
    let btd = run(&text, "btd-rigid");
    let ldl = run(&text.replace("<BTDLinearSolver", "<SparseLDLSolver"), "ldl-rigid");
    assert_eq!(btd.len(), ldl.len());
    let mut moved = 0.0f64;
    for (a, b) in btd.iter().zip(&ldl) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= 1e-9 * (1.0 + y.abs()), "{x} vs {y}");
        }
    }
    // The chains do move (the comparison is not between two scenes at rest).
    let rest = run(&text.replace(r#"gravity="0 -0.981 0""#, r#"gravity="0 0 0""#), "rest-rigid");
    for (a, b) in btd.iter().zip(&rest) {
        for (x, y) in a.iter().zip(b) {
            moved = moved.max((x - y).abs());
        }
    }
    assert!(moved > 1e-3, "{moved}");
}
