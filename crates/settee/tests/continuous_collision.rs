//! Continuous collision detection in a whole scene (CCDTightInclusionIntersection): a particle
//! thrown at a thin static triangle so fast that it crosses it within one step. Proximity
//! detection, which looks at the start of the step only, lets it through; continuous detection
//! over the free motion stops it on the triangle's near side.

use settee_core::simulation::animate;
use settee_core::{Scene, VecId};

fn scene(intersection: &str) -> Scene {
    let text = format!(
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <FreeMotionAnimationLoop/>
  <BlockGaussSeidelConstraintSolver maxIterations="50" tolerance="1e-10"/>
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <CollisionResponse response="FrictionContactConstraint" responseParams="mu=0"/>
  {intersection}
  <Node name="floor">
    <MechanicalObject position="-1 -1 0  1 -1 0  0 1 0"/>
    <TriangleSetTopologyContainer triangles="0 1 2"/>
    <TriangleCollisionModel moving="0" simulated="0"/>
  </Node>
  <Node name="particle">
    <EulerImplicitSolver rayleighStiffness="0" rayleighMass="0"/>
    <CGLinearSolver iterations="25" tolerance="1e-12" threshold="1e-12"/>
    <MechanicalObject name="dofs" position="0 0 0.5" velocity="0 0 -100"/>
    <UniformMass totalMass="1"/>
    <UncoupledConstraintCorrection/>
    <PointCollisionModel/>
  </Node>
</Node>"#
    );
    let path = settee_testkit::temp_scene(&format!("ccd-{}", intersection.len()), &text);
    settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|e| panic!("{:?}", e.diagnostics)).scene
}

fn height(s: &Scene) -> f64 {
    let st = s.preorder(Scene::ROOT).into_iter().flat_map(|n| s.node(n).objects.clone()).find(|&c| s.entry(c).name == "dofs").unwrap();
    s.store.get(s.state_of(st).unwrap()).read(VecId::POSITION)[2]
}

#[test]
fn a_fast_particle_tunnels_through_proximity_detection() {
    let mut s = scene(r#"<MinProximityIntersection alarmDistance="0.1" contactDistance="0.01"/>"#);
    animate(&mut s, 0.01).unwrap();
    // 0.5 − 100·0.01: through the triangle and beyond.
    assert!((height(&s) + 0.5).abs() < 1e-12, "{}", height(&s));
}

#[test]
fn continuous_detection_stops_it_at_the_minimum_separation() {
    let mut s = scene(r#"<CCDTightInclusionIntersection continuousCollisionType="FreeMotion" alarmDistance="0" contactDistance="0.01"/>"#);
    for _ in 0..5 {
        animate(&mut s, 0.01).unwrap();
        // The contact keeps the particle at the separation (0.01) above the triangle.
        assert!((height(&s) - 0.01).abs() < 1e-9, "{}", height(&s));
    }
}
