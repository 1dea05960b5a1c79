//! MatrixProjectionMethod only tells SOFA how to project mapped matrix blocks (with Jacobians it
//! may keep when they are constant): SOFA's MatrixLinearSystem example gives the same numbers
//! with and without its MatrixProjectionMethod components.

use settee_core::simulation::animate;
use settee_core::VecId;

fn run(text: &str, name: &str, data: &[std::path::PathBuf]) -> Vec<Vec<f64>> {
    let path = settee_testkit::temp_scene(name, text);
    let mut s = settee::load(&path, &settee::factory(), data).unwrap_or_else(|e| panic!("{:?}", e.diagnostics)).scene;
    for _ in 0..10 {
        animate(&mut s, 0.02).unwrap();
    }
    let ids: Vec<_> = s.store.states.iter().map(|(id, _)| id).collect();
    ids.into_iter().map(|id| s.store.get(id).read(VecId::POSITION).to_vec()).collect()
}

#[test]
fn the_projection_method_does_not_change_the_numbers() {
    let Some(examples) = settee_testkit::shared_dir("sofa-examples") else { return };
    let text = std::fs::read_to_string(examples.join("examples/Component/LinearSystem/MatrixLinearSystem.scn")).unwrap();
    let without: String = text.lines().filter(|l| !l.contains("<MatrixProjectionMethod")).collect::<Vec<_>>().join("\n");
    assert!(text.matches("<MatrixProjectionMethod").count() >= 1 && !without.contains("<MatrixProjectionMethod"));
    let data = [examples.join("share")];
    let (a, b) = (run(&text, "mpm-with", &data), run(&without, "mpm-without", &data));
    assert_eq!(a, b);
    // The scene moves: its states are not at rest after 10 steps.
    let rest = {
        let path = settee_testkit::temp_scene("mpm-rest", &text);
        let s = settee::load(&path, &settee::factory(), &data).unwrap().scene;
        let ids: Vec<_> = s.store.states.iter().map(|(id, _)| id).collect();
        ids.into_iter().map(|id| s.store.get(id).read(VecId::POSITION).to_vec()).collect::<Vec<_>>()
    };
    assert_ne!(a, rest);
}
