//! The scenes of the first-scene guide (`docs/authoring.md`) do what the guide says they do.

use settee::Simulation;

fn open(name: &str) -> Simulation {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(name);
    Simulation::open(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// RegularGridTopology numbers its nodes x fastest, then y, then z.
fn node(i: usize, j: usize, k: usize) -> usize {
    i + 5 * (j + 5 * k)
}

fn max_speed(sim: &Simulation, state: &str) -> f64 {
    sim.velocities(state).unwrap().iter().map(|v| v.norm()).fold(0.0, f64::max)
}

#[test]
fn step_1_the_cube_hangs_from_its_fixed_top_face_and_comes_to_rest() {
    let mut sim = open("first_scene_1_hanging_cube.scn");
    let x0 = sim.positions("dofs").unwrap();
    sim.step_n(150).unwrap();
    let x = sim.positions("dofs").unwrap();
    assert!(max_speed(&sim, "dofs") < 1e-6, "at rest after 3 s");
    for i in 0..5 {
        for k in 0..5 {
            let top = node(i, 4, k);
            assert_eq!(x[top], x0[top], "the top face is fixed");
        }
    }
    // The bottom face sagged, the middle of it most, symmetrically about the vertical axis.
    let bottom_centre = x[node(2, 0, 2)];
    assert!(bottom_centre.y < -0.505 && bottom_centre.y > -0.6, "sag {}", bottom_centre.y + 0.5);
    for (a, b) in [(node(0, 0, 0), node(4, 0, 4)), (node(1, 0, 3), node(3, 0, 1))] {
        assert!((x[a].y - x[b].y).abs() < 1e-9 && (x[a].x + x[b].x).abs() < 1e-9, "{:?} vs {:?}", x[a], x[b]);
    }
}

#[test]
fn step_2_the_markers_follow_the_cube_by_barycentric_interpolation() {
    let mut sim = open("first_scene_2_marker_mapping.scn");
    sim.step_n(50).unwrap();
    let x = sim.positions("dofs").unwrap();
    let m = sim.positions("markers").unwrap();
    // (0, 0, 0) is a grid node; (0, ±0.4, 0) lie on the vertical grid line through the centre,
    // 0.6 and 0.4 of a cell (0.25) from its nodes.
    assert!((m[1] - x[node(2, 2, 2)]).norm() < 1e-12, "{} vs {}", m[1], x[node(2, 2, 2)]);
    let top = x[node(2, 3, 2)].coords * 0.4 + x[node(2, 4, 2)].coords * 0.6;
    let bottom = x[node(2, 0, 2)].coords * 0.6 + x[node(2, 1, 2)].coords * 0.4;
    assert!((m[0].coords - top).norm() < 1e-12, "{} vs {top}", m[0]);
    assert!((m[2].coords - bottom).norm() < 1e-12, "{} vs {bottom}", m[2]);
    assert!(m[2].y < -0.4, "the lower marker moved down with the cube: {}", m[2]);
}

#[test]
fn step_3_the_released_cube_lands_and_rests_on_the_penalty_floor() {
    let mut sim = open("first_scene_3_falling_on_floor.scn");
    sim.step_n(150).unwrap();
    let x = sim.positions("dofs").unwrap();
    assert!(max_speed(&sim, "dofs") < 1e-3, "at rest after 1.5 s: {}", max_speed(&sim, "dofs"));
    let lowest = x.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    // Penalty contact pushes back only once a node is within contactDistance (0.02) of the
    // floor, so the cube rests slightly inside that distance, above the floor itself.
    assert!(lowest > 0.0 && lowest <= 0.02, "lowest node at {lowest}");
}

#[test]
fn step_4_lagrangian_contact_rests_the_cube_exactly_at_the_contact_distance() {
    let mut sim = open("first_scene_4_contact_constraint.scn");
    sim.step_n(150).unwrap();
    let x = sim.positions("dofs").unwrap();
    assert!(max_speed(&sim, "dofs") < 1e-3, "at rest after 1.5 s: {}", max_speed(&sim, "dofs"));
    // The constraint leaves no penetration: every bottom node sits at the contact distance.
    for i in 0..5 {
        for k in 0..5 {
            let y = x[node(i, 0, k)].y;
            assert!((y - 0.02).abs() < 1e-6, "bottom node ({i}, {k}) at y = {y}");
        }
    }
}
