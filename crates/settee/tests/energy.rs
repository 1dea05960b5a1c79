//! Gravity's potential energy (`settee::plot::gravity_potential_energy`, plotted by the studio
//! beside the kinetic energy): SOFA's `Mass::getPotentialEnergy`, −Σ (M·g)·x.

use settee::plot::{gravity_potential_energy, kinetic_energy};
use settee::Simulation;
use settee_testkit::temp_scene;

#[test]
fn gravity_potential_of_points_and_frames() {
    // Two points of 1 kg at heights 1 and 3, a 3 kg frame at height 2, g = −10 along y:
    // −Σ m g·x = 10 + 30 + 60.
    let scene = temp_scene(
        "gravity_potential.scn",
        r#"<Node name="root" gravity="0 -10 0" dt="0.01">
    <DefaultAnimationLoop/>
    <Node name="points">
        <EulerExplicitSolver symplectic="true"/>
        <MechanicalObject template="Vec3d" position="0 1 0  5 3 0"/>
        <UniformMass totalMass="2"/>
    </Node>
    <Node name="frame">
        <EulerExplicitSolver symplectic="true"/>
        <MechanicalObject template="Rigid3d" position="7 2 1  0 0 0 1"/>
        <UniformMass totalMass="3"/>
    </Node>
</Node>"#,
    );
    let mut sim = Simulation::open(&scene).unwrap();
    assert!((gravity_potential_energy(sim.scene()) - 100.0).abs() < 1e-12, "{}", gravity_potential_energy(sim.scene()));

    // Free fall with symplectic Euler: v += g·dt, then x += v·dt. Each step the total energy
    // moves by exactly −½·m·g²·dt² per body (the scheme's own drift), 5 kg in all: −0.025 J.
    let total = |sim: &Simulation| kinetic_energy(sim.scene()) + gravity_potential_energy(sim.scene());
    let e0 = total(&sim);
    sim.step_n(10).unwrap();
    let drift = total(&sim) - e0;
    assert!((drift - 10.0 * -0.5 * 5.0 * 100.0 * 1e-4).abs() < 1e-9, "drift {drift}");
}
