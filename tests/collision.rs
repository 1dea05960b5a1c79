//! Collision and penalty contact, end to end: analytic equilibria, conservation, contacts made
//! and broken for thousands of steps without growth, and models that lack what they need.

mod common;

use common::{load, state, steps};
use settee_core::{Scene, Severity, VecId};
use settee_tests::temp_scene;

const PIPELINE: &str = r#"
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <NewProximityIntersection alarmDistance="1" contactDistance="0.5"/>
  <CollisionResponse response="PenalityContactForceField"/>"#;

/// A 4×4 static square in the plane y = 0, as two triangles.
const PLANE: &str = r#"
  <Node name="plane">
    <MechanicalObject name="plane" position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0" contactStiffness="300"/>
  </Node>"#;

#[test]
fn a_ball_resting_on_a_plane_settles_at_the_penalty_equilibrium() {
    // Sphere radius r = 1 (contactStiffness 10) on a plane (300), NewProximity contact distance
    // 0.5: the penalty acts below dist = 0.5 + r = 1.5 with ks = 10·300/1.5 = 2000, so the
    // centre rests at y = dist − m·g/ks = 1.5 − 2·10/2000 = 1.49 (penetration m·g/k = 0.01).
    let text = format!(
        r#"<Node name="root" dt="0.01" gravity="0 -10 0">{PIPELINE}
  <Node name="ball">
    <EulerImplicitSolver rayleighMass="20" rayleighStiffness="0"/>
    <CGLinearSolver iterations="50" tolerance="1e-20" threshold="1e-30"/>
    <MechanicalObject name="ball" position="1 1.9 -2"/>
    <UniformMass totalMass="2"/>
    <SphereCollisionModel radius="1" contactStiffness="10"/>
  </Node>{PLANE}
</Node>"#
    );
    let mut s = load("ball-on-plane", &text);
    steps(&mut s, 3000);
    let x = state(&s, "ball").read(VecId::POSITION);
    assert!((x[1] - 1.49).abs() < 1e-9, "rests at y = {}", x[1]);
    assert!((x[0] - 1.0).abs() < 1e-12 && (x[2] + 2.0).abs() < 1e-12, "{x:?}");
    assert!(state(&s, "ball").read(VecId::VELOCITY)[1].abs() < 1e-9);
    // One penalty force field, acting after the objects of the ball's node (an obstacle contact
    // is implicit): contacts are data of the response, in no node's object list.
    let ffs: Vec<_> = s.components.iter().filter(|(_, e)| e.class.name == "PenalityContactForceField").map(|(id, _)| id).collect();
    assert_eq!(ffs.len(), 1);
    let ball = s.entry(ffs[0]).node;
    assert_eq!(s.node(ball).name, "ball");
    assert_eq!(s.contacts.attached_at(ball).collect::<Vec<_>>(), ffs);
    assert!(s.nodes.values().all(|n| !n.objects.contains(&ffs[0])));
}

#[test]
fn a_rigid_ball_rests_with_its_radius_counted_twice_as_in_sofa() {
    // A Rigid3d sphere's contact point is on its surface (c − r·n) and the rigid contact mapper
    // adds r to the contact distance again (spec §9.5, AS IMPLEMENTED): pen = (0.5 + r) −
    // (c_y − r), so with ks = 10·300/1.5 = 2000 the centre rests at 0.5 + 2r − m·g/ks = 2.49.
    // The alarm distance (3) must reach that far.
    let text = format!(
        r#"<Node name="root" dt="0.01" gravity="0 -10 0">{}
  <Node name="ball">
    <EulerImplicitSolver rayleighMass="20" rayleighStiffness="0"/>
    <CGLinearSolver iterations="50" tolerance="1e-20" threshold="1e-30"/>
    <MechanicalObject name="ball" template="Rigid3d" position="1 3.2 -2 0 0 0 1"/>
    <UniformMass totalMass="2"/>
    <SphereCollisionModel template="Rigid3d" radius="1" contactStiffness="10"/>
  </Node>{PLANE}
</Node>"#,
        PIPELINE.replace("alarmDistance=\"1\"", "alarmDistance=\"3\"")
    );
    let mut s = load("rigid-ball", &text);
    steps(&mut s, 3000);
    let x = state(&s, "ball").read(VecId::POSITION);
    assert!((x[1] - 2.49).abs() < 1e-9, "rests at y = {}", x[1]);
    // No torque: the force acts along the normal through the centre.
    assert_eq!(&x[3..7], &[0.0, 0.0, 0.0, 1.0]);
    // The contact points are mapped rigidly from the ball's frame, by a mapping placed at the end
    // of the ball's node (where SOFA's contact node would be), in no node's object list.
    let (map, e) = s.components.iter().find(|(_, e)| e.class.name == "RigidMapping").expect("the rigid contact mapper");
    assert_eq!(s.node(e.node).name, "ball");
    assert_eq!(s.contacts.mappers_at(e.node).collect::<Vec<_>>(), [map]);
    assert!(s.nodes.values().all(|n| !n.objects.contains(&map)));
}

#[test]
fn two_spheres_colliding_head_on_conserve_momentum() {
    // Both simulated: the contact is a root-level interaction, an explicit external force equal
    // and opposite on the two bodies; total momentum stays 1·3 + 3·(−1) = 0.
    let text = format!(
        r#"<Node name="root" dt="0.005" gravity="0 0 0">{PIPELINE}
  <Node name="A">
    <EulerImplicitSolver rayleighMass="0" rayleighStiffness="0"/>
    <CGLinearSolver iterations="20" tolerance="1e-25" threshold="1e-30"/>
    <MechanicalObject name="a" position="-2 0 0" velocity="3 0 0"/>
    <UniformMass totalMass="1"/>
    <SphereCollisionModel radius="1" contactStiffness="100"/>
  </Node>
  <Node name="B">
    <EulerImplicitSolver rayleighMass="0" rayleighStiffness="0"/>
    <CGLinearSolver iterations="20" tolerance="1e-25" threshold="1e-30"/>
    <MechanicalObject name="b" position="2 0.2 0" velocity="-1 0 0"/>
    <UniformMass totalMass="3"/>
    <SphereCollisionModel radius="1" contactStiffness="100"/>
  </Node>
</Node>"#
    );
    let mut s = load("head-on", &text);
    let momentum = |s: &Scene| -> [f64; 3] {
        let (va, vb) = (state(s, "a").read(VecId::VELOCITY), state(s, "b").read(VecId::VELOCITY));
        [va[0] + 3.0 * vb[0], va[1] + 3.0 * vb[1], va[2] + 3.0 * vb[2]]
    };
    let mut touched = false;
    for _ in 0..400 {
        steps(&mut s, 1);
        touched |= s.contacts.acting() > 0;
        let p = momentum(&s);
        assert!(p.iter().all(|c| c.abs() < 1e-10), "momentum {p:?}");
    }
    assert!(touched, "the spheres met");
    // They bounced apart: A moves back, B forward, and they no longer touch.
    let (va, vb) = (state(&s, "a").read(VecId::VELOCITY)[0], state(&s, "b").read(VecId::VELOCITY)[0]);
    assert!(va < 0.0 && vb > 0.0, "va {va}, vb {vb}");
    assert_eq!(s.contacts.acting(), 0, "the contact is gone");
}

#[test]
fn contacts_made_and_broken_for_ten_thousand_steps_leave_no_trace() {
    // A ball on a spring (rest at y = 2.6) swinging through the plane's alarm zone (centre below
    // y = 2) with amplitude ≈ 8/√40 ≈ 1.3, integrated symplectically (no numerical damping): a
    // contact, with a contact mapping on the plane's side, is made and broken every period
    // (about 1 s, 100 steps).
    let text = format!(
        r#"<Node name="root" dt="0.01" gravity="0 0 0">{PIPELINE}
  <Node name="ball">
    <EulerExplicitSolver symplectic="true"/>
    <MechanicalObject name="ball" position="1 2.6 -2" velocity="0 -8 0"/>
    <UniformMass totalMass="1"/>
    <RestShapeSpringsForceField stiffness="40"/>
    <SphereCollisionModel radius="1" contactStiffness="10"/>
  </Node>{PLANE}
</Node>"#
    );
    let mut s = load("churn", &text);
    let baseline = s.live_counts();
    let window = |s: &mut Scene, from: usize, to: usize, step: &mut usize| {
        let (mut lo, mut hi) = (usize::MAX, 0);
        let mut made = 0;
        let mut had = false;
        while *step < to {
            steps(s, 1);
            *step += 1;
            if *step >= from {
                let n = s.live_counts().components;
                lo = lo.min(n);
                hi = hi.max(n);
                let has = s.contacts.acting() > 0;
                if has && !had {
                    made += 1;
                }
                had = has;
            }
        }
        (lo, hi, made, s.live_counts())
    };
    let mut step = 0;
    let early = window(&mut s, 500, 1000, &mut step);
    let late = window(&mut s, 9500, 10_000, &mut step);
    assert!(early.2 >= 3 && late.2 >= 3, "contacts made {} and {} times in the windows", early.2, late.2);
    // Same range of live objects early and late: nothing accumulates.
    assert_eq!((early.0, early.1), (late.0, late.1));
    // Once the pair has touched, its two objects (the plane side's contact mapping, owning the
    // contact points' state, and the force field) stay, acting or kept for the next contact;
    // nothing else is made, and no node.
    assert_eq!(early.0, baseline.components + 2);
    assert_eq!(early.1, baseline.components + 2);
    assert!(s.nodes.len() == baseline.nodes && s.store.states.len() <= baseline.states + 1);
}

#[test]
fn points_inside_a_tetrahedron_are_pushed_out_along_their_normals() {
    // DiscreteIntersection's Tetrahedron–Point: a point P inside the tetrahedron, with vertex
    // normal n = +z, gets X = P − n·l on the face z = 0 (l = 0.5), normal −n, value −l. The penalty
    // contact (contact distance 0, ks = 10·20 = 200) maps its first point barycentrically into the
    // tetrahedron at X and pushes P along −n with ks·l = 100.
    let text = r#"<Node name="root" dt="0.001" gravity="0 0 0">
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <DiscreteIntersection/>
  <CollisionResponse response="PenalityContactForceField"/>
  <Node name="block">
    <MechanicalObject name="block" position="0 0 0  4 0 0  0 4 0  0 0 4"/>
    <MeshTopology tetrahedra="0 1 2 3"/>
    <TetrahedronCollisionModel simulated="0" moving="0" contactStiffness="20"/>
  </Node>
  <Node name="sheet">
    <EulerExplicitSolver symplectic="true"/>
    <MechanicalObject name="sheet" position="0.5 0.5 0.5  1 0.5 0.5  0.5 1 0.5"/>
    <MeshTopology triangles="0 1 2"/>
    <UniformMass vertexMass="1"/>
    <PointCollisionModel computeNormals="true" contactStiffness="10"/>
  </Node>
</Node>"#;
    let mut s = load("tetra-point", text);
    steps(&mut s, 1);
    let ff = s.components.values().find(|e| e.class.name == "PenalityContactForceField").expect("a contact");
    let pen = ff.obj.as_ref().unwrap().as_any().downcast_ref::<settee_collision::components::penalty::PenalityContactForceField>().unwrap();
    let contacts = pen.contacts();
    assert_eq!(contacts.len(), 3);
    let tetra_points = state(&s, "contactPoints").read(VecId::POSITION).to_vec();
    let expected = [[0.5, 0.5], [1.0, 0.5], [0.5, 1.0]];
    for (k, c) in contacts.iter().enumerate() {
        assert_eq!((c.m1, c.m2, c.dist, c.ks), (k, k, 0.0, 200.0));
        assert_eq!([c.normal[0], c.normal[1], c.normal[2]], [0.0, 0.0, -1.0]);
        assert!((c.pen - 0.5).abs() < 1e-15, "{c:?}");
        let x = &tetra_points[3 * k..3 * k + 3];
        assert!((x[0] - expected[k][0]).abs() < 1e-15 && (x[1] - expected[k][1]).abs() < 1e-15 && x[2].abs() < 1e-15, "{x:?}");
    }
    // Symplectic Euler: v = h·F/m = 0.001·100 = 0.1 along −z.
    let v = state(&s, "sheet").read(VecId::VELOCITY);
    assert!((v[2] + 0.1).abs() < 1e-12, "{v:?}");
}

/// Everything the penalty contacts of a scene hold, as bits: per force field (by name), each
/// contact's point indices, elements, normal, distance, stiffness and age, in list order.
type ContactBits = Vec<(String, Vec<(usize, usize, usize, usize, [u64; 3], u64, u64, u32)>)>;

fn contact_bits(s: &Scene) -> ContactBits {
    use settee_collision::components::penalty::PenalityContactForceField;
    let mut all: ContactBits = s
        .components
        .values()
        .filter(|e| e.class.name == "PenalityContactForceField")
        .map(|e| {
            let ff = e.obj.as_ref().and_then(|o| o.as_any().downcast_ref::<PenalityContactForceField>()).expect("a penalty force field");
            let list = ff
                .contacts()
                .iter()
                .map(|c| (c.m1, c.m2, c.index1, c.index2, c.normal.map(f64::to_bits).into(), c.dist.to_bits(), c.ks.to_bits(), c.age))
                .collect();
            (e.name.clone(), list)
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

#[test]
fn parallel_detection_gives_the_same_contacts_and_motion_on_any_thread_count() {
    // scenes/spheres_on_sheet.scn: 1,024 spheres falling onto 10,082 static triangles, with
    // ParallelBruteForceBroadPhase and ParallelBVHNarrowPhase. Its narrow phase is large enough
    // to be split into chunks run on rayon's threads; the chunks' outputs are concatenated in
    // SOFA's order, so every thread count must give the same contacts, bit for bit, in the same
    // order, and therefore the same motion.
    use settee_collision::components::pipeline::PipelineComponent;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/spheres_on_sheet.scn");
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
        pool.install(|| {
            let mut s = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
            let pipeline = s.find_down(Scene::ROOT, settee_core::role::COLLISION_PIPELINE).expect("a pipeline");
            let mut contacts = Vec::new();
            let mut chunks = Vec::new();
            // The spheres land after about 25 steps; ten steps of resting contact follow.
            for step in 0..36 {
                steps(&mut s, 1);
                let stats = s.obj(pipeline).as_any().downcast_ref::<PipelineComponent>().expect("the pipeline").detection_stats();
                assert_eq!(stats.len(), 1);
                chunks.push(stats[0].narrow.parallel_chunks);
                if step >= 26 {
                    contacts.push(contact_bits(&s));
                }
            }
            let bits = |v: VecId| -> Vec<u64> { state(&s, "spheres").read(v).iter().map(|x| x.to_bits()).collect() };
            (contacts, bits(VecId::POSITION), bits(VecId::VELOCITY), chunks)
        })
    };
    let one = run(1);
    let (contacts, _, _, chunks) = &one;
    // Resting contact: one contact per sphere against the sheet, every step checked.
    assert!(
        contacts.iter().all(|c| c.len() == 1 && c[0].1.len() == 1024),
        "{:?}",
        contacts.iter().map(|c| c.iter().map(|f| f.1.len()).collect::<Vec<_>>()).collect::<Vec<_>>()
    );
    // The parallel path was taken, in several chunks, once the spheres were near the sheet.
    assert!(chunks[26..].iter().all(|&n| n >= 4), "parallel chunks per step: {chunks:?}");
    for threads in [2, 3] {
        let other = run(threads);
        assert!(other.3[26..].iter().all(|&n| n >= 4), "{threads} threads: chunks {:?}", other.3);
        assert!(other.0 == one.0, "{threads} threads: different contacts");
        assert!(other.1 == one.1 && other.2 == one.2, "{threads} threads: different positions or velocities");
    }
}

fn load_errors(name: &str, text: &str) -> String {
    let path = temp_scene(name, text);
    match settee::load(&path, &settee::factory(), &[]) {
        Ok(l) => panic!("{name} loaded: {:?}", l.scene.messages),
        Err(f) => f.diagnostics.iter().filter(|m| m.severity == Severity::Error).map(|m| m.to_string()).collect::<Vec<_>>().join("\n"),
    }
}

#[test]
fn collision_models_lacking_what_they_need_are_refused_at_load_with_positions() {
    let m = load_errors("no-state", &format!("<Node name=\"root\">{PIPELINE}\n  <SphereCollisionModel radius=\"1\"/>\n</Node>\n"));
    assert!(m.contains("no-state.scn:7:3") && m.contains("needs a mechanical state"), "{m}");

    let m = load_errors(
        "no-topology",
        &format!("<Node name=\"root\">{PIPELINE}\n  <MechanicalObject position=\"0 0 0  1 0 0\"/>\n  <TriangleCollisionModel/>\n</Node>\n"),
    );
    assert!(m.contains("no-topology.scn:8:3") && m.contains("needs a topology"), "{m}");

    // A listRadius shorter than the state is read as SOFA reads it (the default radius beyond
    // it), with a warning: crates/settee/tests/sofa_readings.rs.

    let m = load_errors(
        "rigid-points",
        &format!("<Node name=\"root\">{PIPELINE}\n  <MechanicalObject template=\"Rigid3\" position=\"0 0 0 0 0 0 1\"/>\n  <PointCollisionModel/>\n</Node>\n"),
    );
    assert!(m.contains("rigid-points.scn:8:3") && m.contains("needs a Vec3d mechanical state"), "{m}");

    let m = load_errors(
        "lines-without-edges",
        &format!(
            "<Node name=\"root\">{PIPELINE}\n  <MechanicalObject position=\"0 0 0  1 0 0  0 1 0\"/>\n  <MeshTopology tetrahedra=\"\"/>\n  <LineCollisionModel/>\n</Node>\n"
        ),
    );
    assert!(m.contains("lines-without-edges.scn:9:3") && m.contains("needs a topology with edges"), "{m}");
}

#[test]
fn lagrangian_responses_settee_lacks_are_refused_as_unsupported() {
    let text = format!("<Node name=\"root\">{}\n</Node>\n", PIPELINE.replace("PenalityContactForceField", "AugmentedLagrangianResponseConstraint"));
    let m = load_errors("augmented", &text);
    assert!(m.contains("augmented.scn:6:3") && m.contains("AugmentedLagrangianResponseConstraint response is not supported yet"), "{m}");
    // FrictionContactConstraint and StickContactConstraint are supported: the same pipeline loads.
    for response in ["FrictionContactConstraint", "StickContactConstraint"] {
        let text =
            format!("<Node name=\"root\">\n  <FreeMotionAnimationLoop/>{}\n</Node>\n", PIPELINE.replace("PenalityContactForceField", response));
        load(response, &text);
    }
}
