//! SOFA's example scenes of force fields Settee added for them (issue 21), run for 10 steps in
//! process, with physical checks on the result. The examples are test data outside the
//! repository (`../shared/sofa-examples`); without them the tests skip with a note.

use std::path::PathBuf;

use settee_core::{Scene, VecId};

/// Loads and steps `rel` (under `examples/`) `steps` times; `None` when the examples are absent.
fn run_example(rel: &str, steps: usize) -> Option<Scene> {
    let root = settee_testkit::shared_dir("sofa-examples")?;
    let path = root.join("examples").join(rel);
    let dirs: Vec<PathBuf> = vec![root.join("share"), root.join("examples")];
    let mut loaded = settee::run::load(&path, &settee::factory(), &dirs).unwrap_or_else(|e| panic!("{rel}: {}", e.first_error()));
    settee::run::simulate(&mut loaded.scene, steps, &mut []).unwrap_or_else(|e| panic!("{rel}: {e}"));
    Some(loaded.scene)
}

/// Rest and current positions of the state of the MechanicalObject in node `node`.
fn positions(scene: &Scene, node: &str) -> (Vec<f64>, Vec<f64>) {
    let (id, _) = scene
        .components
        .iter()
        .find(|(_, e)| e.class.name == "MechanicalObject" && scene.node(e.node).name == node)
        .unwrap_or_else(|| panic!("no MechanicalObject in node {node}"));
    let s = scene.state_of(id).unwrap();
    let store = scene.store.get(s);
    (store.read(VecId::REST_POSITION).to_vec(), store.read(VecId::POSITION).to_vec())
}

/// Three membranes (TriangleFEMForceField, large) on RegularGridTopology planes z = const, each
/// pinned at two or three corners, fall along +z (gravity 0 0 1) for 0.5 s: the pinned corners do
/// not move, every other node moves along +z, and the in-plane motion stays small next to it (a
/// membrane carries out-of-plane loads by stretching, a second-order effect in the sag).
#[test]
fn triangle_fem_force_field_scene_sags_out_of_plane() {
    let Some(scene) = run_example("Component/SolidMechanics/FEM/TriangleFEMForceField.scn", 10) else { return };
    assert!((scene.root().context.time - 0.5).abs() < 1e-12);
    for (node, fixed) in [("M1", &[0usize, 8][..]), ("M2", &[0, 15]), ("M3", &[0, 9, 99])] {
        let (rest, x) = positions(&scene, node);
        let n = rest.len() / 3;
        let mut max_sag = 0.0f64;
        let mut max_in_plane = 0.0f64;
        for i in 0..n {
            let d: Vec<f64> = (0..3).map(|c| x[3 * i + c] - rest[3 * i + c]).collect();
            assert!(d.iter().all(|v| v.is_finite()), "{node} {i}: {d:?}");
            if fixed.contains(&i) {
                assert_eq!(d, [0.0; 3], "{node}: pinned node {i} moved");
                continue;
            }
            assert!(d[2] > 0.0, "{node} {i}: {d:?}");
            max_sag = max_sag.max(d[2]);
            max_in_plane = max_in_plane.max(d[0].hypot(d[1]));
        }
        // Backward-Euler free fall for 10 steps gives g·dt²·(1 + … + 10) = 0.1375; the membrane
        // holds the nodes back.
        assert!(max_sag > 0.01 && max_sag < 0.1375, "{node}: sag {max_sag}");
        assert!(max_in_plane < 0.1 * max_sag, "{node}: in-plane {max_in_plane} vs sag {max_sag}");
    }
}

/// The two triangular-spring examples (the same square cloth, pinned at two corners, E = 15,
/// ν = 0.9, under gravity (0, −9, 1)): after 10 steps of 5 ms every free node has fallen, on
/// average by less than the backward-Euler free fall g·dt²·(1 + … + 10) along y (the membrane
/// holds some nodes back and pulls others along); and the two models, which agree to first order
/// in the strain (both are the St Venant–Kirchhoff membrane for small strains), give the same
/// motion to 1% of it.
#[test]
fn triangular_spring_scenes_fall_alike() {
    let Some(biq) = run_example("Component/SolidMechanics/Spring/TriangularBiquadraticSpringsForceField.scn", 10) else { return };
    let Some(quad) = run_example("Component/SolidMechanics/Spring/TriangularQuadraticSpringsForceField.scn", 10) else { return };
    let (rest, xb) = positions(&biq, "SquareGravity");
    let (_, xq) = positions(&quad, "SquareGravity");
    let free_fall = 9.0 * 0.005 * 0.005 * 55.0;
    let mut largest_gap = 0.0f64;
    let mut mean_dy = 0.0;
    for i in 0..rest.len() / 3 {
        let dy = xb[3 * i + 1] - rest[3 * i + 1];
        if i < 2 {
            assert_eq!(dy, 0.0, "pinned node {i} moved");
            continue;
        }
        assert!(dy < 0.0 && dy > -1.5 * free_fall, "node {i}: dy = {dy}");
        mean_dy += dy / (rest.len() / 3 - 2) as f64;
        for c in 0..3 {
            largest_gap = largest_gap.max((xb[3 * i + c] - xq[3 * i + c]).abs());
        }
    }
    assert!(mean_dy < -0.5 * free_fall && mean_dy > -free_fall, "{mean_dy}");
    assert!(largest_gap < 1e-2 * free_fall, "{largest_gap}");
}

/// SphereForceField.scn: a cloth pinned at two corners falls (g = 2) onto a penalty sphere of
/// centre (0, 1, 3), radius 4, k = 1000. For the first 10 steps it is above the sphere's top
/// (y = 5): no contact. After 40 steps (1.6 s) it rests on it: there are contacts, and no node is
/// deeper than the weight of the whole cloth (100 · 2) could push it against k = 1000.
#[test]
fn sphere_force_field_scene_catches_the_cloth() {
    let Some(scene) = run_example("Component/MechanicalLoad/SphereForceField.scn", 10) else { return };
    let sphere = |s: &Scene| -> Vec<settee_mechanicalload::SphereContact> {
        let (id, _) = s.components.iter().find(|(_, e)| e.class.name == "SphereForceField").unwrap();
        s.get::<settee_mechanicalload::SphereForceField>(id).unwrap().contacts().to_vec()
    };
    assert!(sphere(&scene).is_empty());
    let (_, x) = positions(&scene, "SquareCloth1");
    assert!(x.chunks(3).all(|p| p[1] > 5.0), "the cloth is still above the sphere");
    let Some(scene) = run_example("Component/MechanicalLoad/SphereForceField.scn", 40) else { return };
    let contacts = sphere(&scene);
    assert!(!contacts.is_empty());
    let (_, x) = positions(&scene, "SquareCloth1");
    for c in &contacts {
        let p = &x[3 * c.index..3 * c.index + 3];
        let depth = 4.0 - (p[0].powi(2) + (p[1] - 1.0).powi(2) + (p[2] - 3.0).powi(2)).sqrt();
        // (Contacts are those of the last force evaluation, one step before these positions.)
        assert!(depth.abs() < 100.0 * 2.0 / 1000.0, "node {}: depth {depth}", c.index);
    }
}
