//! The same scene gives bit-identical states, whatever the number of threads.

use settee_core::VecId;

fn run_with_threads(threads: usize) -> Option<Vec<f64>> {
    let suite = settee_tests::suite()?;
    let scene = suite.join("scenes/Component/LinearSolver/Iterative/FEMBAR_CGLinearSolver.scn");
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().ok()?;
    pool.install(|| {
        let mut l = settee::load(&scene, &settee::factory(), &[suite.join("data")]).ok()?;
        let dt = l.scene.root().context.dt;
        for _ in 0..30 {
            settee_core::simulation::animate(&mut l.scene, dt).ok()?;
        }
        Some(l.scene.store.nth(0).read(VecId::POSITION).to_vec())
    })
}

#[test]
fn thread_count_does_not_change_a_single_bit() {
    let (Some(a), Some(b)) = (run_with_threads(1), run_with_threads(3)) else { return };
    assert_eq!(a.len(), 960);
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
}
