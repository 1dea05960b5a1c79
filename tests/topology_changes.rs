//! Topological changes while the simulation runs (issue 11): scripted removals and additions,
//! their propagation, and the errors a bad script or an impossible change gives.

use settee_core::Scene;
use settee_tests::temp_scene;

fn named(scene: &Scene, name: &str) -> settee_core::ComponentId {
    scene.components.iter().find(|(_, e)| e.name == name).map(|(id, _)| id).unwrap_or_else(|| panic!("no component {name}"))
}

/// Runs until the first error; returns it with the time of the failing step.
fn run_until_error(scene: &mut Scene, steps: usize) -> Option<(f64, settee_core::SimError)> {
    let dt = scene.root().context.dt;
    for _ in 0..steps {
        let t = scene.root().context.time;
        if let Err(e) = settee_core::simulation::animate(scene, dt) {
            return Some((t, e));
        }
    }
    None
}

/// A square of two triangles with a fixed corner, changed by `script`.
fn sheet(script: &str) -> String {
    format!(
        r#"<Node name="root" dt="0.05" gravity="0 -9.81 0">
    <DefaultAnimationLoop/>
    <Node name="sheet">
        <EulerImplicitSolver/>
        <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-12"/>
        <TriangleSetTopologyContainer name="tris" position="0 0 0  1 0 0  0 1 0  1 1 0" triangles="0 1 2  1 3 2"/>
        <TriangleSetTopologyModifier/>
        <MechanicalObject/>
        <UniformMass totalMass="1"/>
        <TopologicalChangeProcessor filename="{script}"/>
    </Node>
</Node>
"#
    )
}

#[test]
fn a_script_naming_a_missing_element_stops_at_its_line_and_column() {
    let path = temp_scene("bad_script_sheet", &sheet("bad.txt"));
    let script = path.with_file_name("bad.txt");
    std::fs::write(&script, "T= 0.1\n  REMOVE= 2\n1 7\n").unwrap();
    let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
    let (t, e) = run_until_error(&mut scene, 10).expect("the script must be refused");
    // The step starting at t = 0.1 (after two steps of 0.05), nothing before.
    assert!((t - 0.1).abs() < 1e-12, "t = {t}");
    let d = e.diagnostic();
    let pos = d.pos.as_ref().expect("positioned at the script");
    assert!(pos.to_string().contains("bad.txt:3:3"), "{e}");
    assert!(d.message.contains("triangle 7 does not exist (the topology has 2 triangles)"), "{e}");
    assert!(d.hint.is_some());
    // Nothing was removed.
    assert_eq!(scene.mesh_of(named(&scene, "tris")).unwrap().triangles.len(), 2);
}

#[test]
fn malformed_scripts_are_refused_with_their_position() {
    for (text, expected, at) in [
        ("T= 0\n  REMOVE= two\n1\n", "expected a number of elements", "bad2.txt:2:1"),
        ("T= 0\n  REMOVE= 2\n1\n", "2 triangles announced, 1 given", "bad2.txt:3:"),
        ("T= 0\n  ADD= Pentagons 1\n0 1 2\n", "`Pentagons` is not an element type", "bad2.txt:2:1"),
        ("T= 0\n  ADD= Triangles 1\n0 1 9\n", "point 9 does not exist", "bad2.txt:3:5"),
        ("T= 0\n  REMOVE= 1\n", "the element list is missing", "bad2.txt:2:1"),
    ] {
        let path = temp_scene("bad_script_sheet2", &sheet("bad2.txt"));
        std::fs::write(path.with_file_name("bad2.txt"), text).unwrap();
        let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
        let (_, e) = run_until_error(&mut scene, 3).unwrap_or_else(|| panic!("{text:?} must be refused"));
        let s = e.to_string();
        assert!(s.contains(expected) && s.contains(at), "{text:?}: {s}");
    }
}

#[test]
fn changing_a_container_filled_by_a_topological_mapping_is_refused() {
    let path = temp_scene(
        "mapped_output_change",
        r#"<Node name="root" dt="0.1">
    <DefaultAnimationLoop/>
    <Node name="volume">
        <TetrahedronSetTopologyContainer name="tetras" position="0 0 0  1 0 0  0 1 0  0 0 1  1 1 1" tetrahedra="0 1 2 3  1 2 3 4"/>
        <TetrahedronSetTopologyModifier/>
        <Node name="surface">
            <TriangleSetTopologyContainer name="tris"/>
            <TriangleSetTopologyModifier/>
            <Tetra2TriangleTopologicalMapping input="@../tetras" output="@tris"/>
            <TopologicalChangeProcessor filename="surface.txt"/>
        </Node>
    </Node>
</Node>
"#,
    );
    std::fs::write(path.with_file_name("surface.txt"), "T= 0\n  REMOVE= 1\n0\n").unwrap();
    let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
    let (_, e) = run_until_error(&mut scene, 2).expect("refused");
    let s = e.to_string();
    assert!(s.contains("is filled by Tetra2TriangleTopologicalMapping"), "{s}");
    assert!(s.contains("change the mapping's input topology instead"), "{s}");
    assert_eq!(scene.mesh_of(named(&scene, "tris")).unwrap().triangles.len(), 6);
}

/// Mean displacement along y of the points whose rest height is in `range`.
fn mean_dy(scene: &Scene, range: std::ops::Range<f64>) -> f64 {
    let st = scene.store.states.values().find(|m| m.name == "dofs").expect("the beam's state");
    let (x, x0) = (st.read(settee_core::VecId::POSITION), st.read(settee_core::VecId::REST_POSITION));
    let (mut sum, mut n) = (0.0, 0);
    for i in 0..st.size {
        if range.contains(&x0[3 * i + 1]) {
            sum += x[3 * i + 1] - x0[3 * i + 1];
            n += 1;
        }
    }
    sum / n as f64
}

/// Issue 11's example: the beam hangs while its middle layer is removed over 100 steps; once
/// the cut is through, the lower half falls and the upper half keeps hanging.
#[test]
fn the_cutting_beam_hangs_then_its_lower_half_falls() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenes/cutting/cutting_beam.scn");
    let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
    let tetras = named(&scene, "tetras");
    assert_eq!(scene.mesh_of(tetras).unwrap().tetrahedra.len(), 2592);
    let dt = scene.root().context.dt;
    for step in 0..150 {
        settee_core::simulation::animate(&mut scene, dt).unwrap_or_else(|e| panic!("step {step}: {e}"));
        if step == 49 {
            // Half cut: it still hangs in one piece (a few centimetres of sag).
            let sag_before_cut = mean_dy(&scene, 0.0..5.5);
            assert!(sag_before_cut < 0.0 && sag_before_cut > -0.5, "{sag_before_cut}");
        }
    }
    // 216 tetrahedra of the middle layer are gone, no point was isolated (the layer's points
    // belong to the neighbouring layers too).
    let m = scene.mesh_of(tetras).unwrap();
    assert_eq!(m.tetrahedra.len(), 2592 - 216);
    assert_eq!(scene.store.states.values().find(|s| s.name == "dofs").unwrap().size, 7 * 13 * 7);
    assert!(m.tetrahedra.iter().all(|t| t.iter().all(|&v| v < 7 * 13 * 7)));
    // Cut through at t = 1.0 s; 0.5 s later the lower half has fallen by well over a metre
    // (free fall: 1.2 m, less the Rayleigh damping), the upper half stays near its sag.
    let lower = mean_dy(&scene, 0.0..5.5);
    let upper = mean_dy(&scene, 7.5..12.5);
    assert!(lower < -0.5, "lower half: {lower}");
    assert!(upper > -0.5 && upper < 0.0, "upper half: {upper}");
    let st = scene.store.states.values().find(|s| s.name == "dofs").unwrap();
    assert!(st.read(settee_core::VecId::POSITION).iter().all(|v| v.is_finite()));
}

/// A component holding per-element data that does not follow changes stops the step, positioned
/// at its line, instead of computing with a stale mesh.
#[test]
fn a_component_that_cannot_follow_stops_the_step_at_its_line() {
    let path = temp_scene(
        "not_following",
        r#"<Node name="root" dt="0.1" gravity="0 -9.81 0">
    <DefaultAnimationLoop/>
    <Node name="body">
        <EulerImplicitSolver/>
        <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-12"/>
        <TetrahedronSetTopologyContainer name="tetras" position="0 0 0  1 0 0  0 1 0  0 0 1  1 1 1" tetrahedra="0 1 2 3  1 2 3 4"/>
        <TetrahedronSetTopologyModifier/>
        <MechanicalObject/>
        <UniformMass totalMass="1"/>
        <TetrahedronFEMForceField youngModulus="100" poissonRatio="0.3"/>
        <TopologicalChangeProcessor filename="remove_one.txt"/>
    </Node>
</Node>
"#,
    );
    std::fs::write(path.with_file_name("remove_one.txt"), "T= 0.1\n  REMOVE= 1\n1\n").unwrap();
    let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
    let (t, e) = run_until_error(&mut scene, 5).expect("refused");
    assert!((t - 0.1).abs() < 1e-12);
    let s = e.to_string();
    assert!(s.contains("not_following.scn:10:9"), "{s}");
    assert!(s.contains("TetrahedronFEMForceField") && s.contains("does not follow topological changes"), "{s}");
}

/// The border faces of a tetrahedron list (faces on exactly one tetrahedron), as sorted vertex
/// triples.
fn border_faces(tetrahedra: &[[usize; 4]]) -> Vec<[usize; 3]> {
    let mut count: std::collections::BTreeMap<[usize; 3], usize> = Default::default();
    for t in tetrahedra {
        for skip in 0..4 {
            let mut f = [0; 3];
            let mut k = 0;
            for (j, &v) in t.iter().enumerate() {
                if j != skip {
                    f[k] = v;
                    k += 1;
                }
            }
            f.sort_unstable();
            *count.entry(f).or_default() += 1;
        }
    }
    count.into_iter().filter(|(_, c)| *c == 1).map(|(f, _)| f).collect()
}

/// A tetrahedral beam with a surface (Tetra2Triangle) carrying its own FEM, the whole stack
/// following.
const BEAM_WITH_SURFACE: &str = r#"<Node name="root" dt="0.01" gravity="0 -9.81 0">
    <DefaultAnimationLoop/>
    <Node name="beam">
        <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
        <CGLinearSolver iterations="100" tolerance="1e-10" threshold="1e-10"/>
        <MeshGmshLoader name="loader" filename="../../scenes/cutting/beam_6x12x6.msh"/>
        <MechanicalObject name="dofs" src="@loader"/>
        <TetrahedronSetTopologyContainer name="tetras" src="@loader"/>
        <TetrahedronSetTopologyModifier/>
        <DiagonalMass name="mass" massDensity="1"/>
        <TetrahedralCorotationalFEMForceField youngModulus="20000" poissonRatio="0.3" method="large"/>
        <FixedProjectiveConstraint indices="0 1 2 3 4 5 6"/>
        <Node name="surface">
            <TriangleSetTopologyContainer name="skin"/>
            <TriangleSetTopologyModifier/>
            <Tetra2TriangleTopologicalMapping input="@../tetras" output="@skin"/>
            <TriangularFEMForceField youngModulus="100" poissonRatio="0.3" method="large"/>
        </Node>
    </Node>
</Node>
"#;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 6, ..Default::default() })]

    /// Random removals of tetrahedra while the beam steps: the run never fails or produces a
    /// NaN, every element of both containers names existing points, and the surface container
    /// holds exactly the border faces of the volume (parent and child agree through the
    /// mapping's index maps).
    #[test]
    fn random_tetrahedron_removals_keep_every_topology_consistent(
        removals in proptest::collection::vec(proptest::collection::vec(0usize..100_000, 1..12), 10..25)
    ) {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/topology-props");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("beam_with_surface.scn");
        std::fs::write(&path, BEAM_WITH_SURFACE.replace("../../scenes", &format!("{}/scenes", env!("CARGO_MANIFEST_DIR")))).unwrap();
        let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
        let (tetras, skin) = (named(&scene, "tetras"), named(&scene, "skin"));
        for raw in removals {
            let n = scene.mesh_of(tetras).unwrap().tetrahedra.len();
            if n < 20 {
                break;
            }
            let mut ids: Vec<usize> = raw.iter().map(|r| r % n).collect();
            ids.sort_unstable();
            ids.dedup();
            settee_topology::change_processor::remove_items(&mut scene, tetras, settee_core::topology_change::ElementKind::Tetrahedron, ids)
                .unwrap_or_else(|e| panic!("{e}"));
            settee_core::simulation::animate(&mut scene, 0.01).unwrap_or_else(|e| panic!("{e}"));

            let volume = scene.mesh_of(tetras).unwrap();
            let points = scene.store.states.values().find(|s| s.name == "dofs").unwrap().size;
            proptest::prop_assert!(volume.tetrahedra.iter().flatten().all(|&v| v < points));
            proptest::prop_assert!(volume.triangles.iter().flatten().chain(volume.edges.iter().flatten()).all(|&v| v < points));
            let surface = scene.mesh_of(skin).unwrap();
            let mut got: Vec<[usize; 3]> = surface.triangles.iter().map(|t| { let mut s = *t; s.sort_unstable(); s }).collect();
            got.sort_unstable();
            proptest::prop_assert_eq!(got, border_faces(&volume.tetrahedra));
            let x = scene.store.states.values().find(|s| s.name == "dofs").unwrap().read(settee_core::VecId::POSITION);
            proptest::prop_assert!(x.iter().all(|v| v.is_finite()));
        }
    }
}

/// FixedPlaneProjectiveConstraint keeps its points through a removal that renumbers them.
#[test]
fn fixed_plane_points_follow_a_point_removal() {
    let path = temp_scene(
        "fixed_plane_follow",
        r#"<Node name="root" dt="0.1" gravity="0 0 -9.81">
    <DefaultAnimationLoop/>
    <Node name="wire">
        <EulerImplicitSolver/>
        <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-12"/>
        <EdgeSetTopologyContainer name="edges" position="0 0 0  1 0 0  2 0 1  3 0 1" edges="0 1  1 2  2 3"/>
        <EdgeSetTopologyModifier/>
        <MechanicalObject name="dofs"/>
        <UniformMass totalMass="1"/>
        <FixedPlaneProjectiveConstraint name="plane" direction="0 0 1" dmin="-0.5" dmax="0.5"/>
        <TopologicalChangeProcessor filename="cut_first_edge.txt"/>
    </Node>
</Node>
"#,
    );
    std::fs::write(path.with_file_name("cut_first_edge.txt"), "T= 0.1\n  REMOVE= 1\n0\n").unwrap();
    let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
    let plane = named(&scene, "plane");
    let indices = |s: &Scene| s.get::<settee_projective::fixed_plane::FixedPlaneProjectiveConstraint>(plane).unwrap().indices().to_vec();
    assert_eq!(indices(&scene), [0, 1]);
    assert!(run_until_error(&mut scene, 4).is_none());
    // Edge (0, 1) went (edge (2, 3) took its slot), and point 0 with it (isolated): point 3
    // took its index, so (2, 3) reads (2, 0). Point 1 is
    // still held in the plane, point 3 (now 0) never was.
    assert_eq!(scene.mesh_of(named(&scene, "edges")).unwrap().edges, vec![[2, 0], [1, 2]]);
    assert_eq!(indices(&scene), [1]);
    let st = scene.store.states.values().find(|s| s.name == "dofs").unwrap();
    assert_eq!(st.size, 3);
    let x = st.read(settee_core::VecId::POSITION);
    // The held point keeps z = 0 under gravity along z; the others fall.
    assert_eq!(x[5], 0.0);
    assert!(x[3 * 2 + 2] < 1.0 && x[2] < 1.0);
}

fn beam_with_surface(tag: &str) -> Scene {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/topology-props");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("beam_with_surface_{tag}.scn"));
    std::fs::write(&path, BEAM_WITH_SURFACE.replace("../../scenes", &format!("{}/scenes", env!("CARGO_MANIFEST_DIR")))).unwrap();
    settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene
}

fn sorted_surface(scene: &Scene, skin: settee_core::ComponentId) -> Vec<[usize; 3]> {
    let mut got: Vec<[usize; 3]> = scene
        .mesh_of(skin)
        .unwrap()
        .triangles
        .iter()
        .map(|t| {
            let mut s = *t;
            s.sort_unstable();
            s
        })
        .collect();
    got.sort_unstable();
    got
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 6, ..Default::default() })]

    /// Tetrahedra removed in random batches (their points kept) and then added back, batch by
    /// batch, while the beam steps: at every stage the surface is the border of the volume, and
    /// once everything is back the surface is the initial one and DiagonalMass has its initial
    /// vertex masses and total (added elements put back exactly the share removed ones took).
    #[test]
    fn removed_tetrahedra_added_back_restore_the_surface_and_the_mass(
        batches in proptest::collection::vec(proptest::collection::vec(0usize..100_000, 1..10), 3..10)
    ) {
        use settee_topology::modifier::{modify, tetrahedron};
        let mut scene = beam_with_surface("readd");
        let (tetras, skin, mass) = (named(&scene, "tetras"), named(&scene, "skin"), named(&scene, "mass"));
        let masses = |s: &Scene| s.get::<settee_mass::DiagonalMass>(mass).unwrap().vertex_masses();
        let total = |s: &Scene| s.get::<settee_mass::DiagonalMass>(mass).unwrap().total_mass();
        let (m0, total0, surface0) = (masses(&scene), total(&scene), sorted_surface(&scene, skin));
        let mut removed: Vec<Vec<[usize; 4]>> = Vec::new();
        for raw in batches {
            let list = scene.mesh_of(tetras).unwrap().tetrahedra.clone();
            let mut ids: Vec<usize> = raw.iter().map(|r| r % list.len()).collect();
            ids.sort_unstable();
            ids.dedup();
            removed.push(ids.iter().map(|&i| list[i]).collect());
            modify(&mut scene, tetras, |t| tetrahedron::remove_tetrahedra_with(t, ids, true, false)).unwrap_or_else(|e| panic!("{e}"));
            settee_core::simulation::animate(&mut scene, 0.01).unwrap_or_else(|e| panic!("{e}"));
            proptest::prop_assert_eq!(sorted_surface(&scene, skin), border_faces(&scene.mesh_of(tetras).unwrap().tetrahedra));
        }
        for batch in removed.into_iter().rev() {
            modify(&mut scene, tetras, |t| tetrahedron::add_tetrahedra(t, &batch)).unwrap_or_else(|e| panic!("{e}"));
            settee_core::simulation::animate(&mut scene, 0.01).unwrap_or_else(|e| panic!("{e}"));
            proptest::prop_assert_eq!(sorted_surface(&scene, skin), border_faces(&scene.mesh_of(tetras).unwrap().tetrahedra));
        }
        proptest::prop_assert_eq!(sorted_surface(&scene, skin), surface0);
        proptest::prop_assert!((total(&scene) - total0).abs() <= 1e-9 * total0, "total {} vs {}", total(&scene), total0);
        let m = masses(&scene);
        proptest::prop_assert_eq!(m.len(), m0.len());
        for (a, b) in m.iter().zip(&m0) {
            proptest::prop_assert!((a - b).abs() <= 1e-12 * total0, "{} vs {}", a, b);
        }
        let x = scene.store.states.values().find(|s| s.name == "dofs").unwrap().read(settee_core::VecId::POSITION);
        proptest::prop_assert!(x.iter().all(|v| v.is_finite()));
    }
}

/// The tetrahedron modifier's `removeIsolated` decides whether a point left without a
/// tetrahedron goes (SOFA's default) or stays.
#[test]
fn remove_isolated_keeps_or_removes_the_points_left_alone() {
    for (flag, points) in [("1", 4), ("0", 5)] {
        let path = temp_scene(
            &format!("remove_isolated_{flag}"),
            &format!(
                r#"<Node name="root" dt="0.1">
    <DefaultAnimationLoop/>
    <Node name="body">
        <TetrahedronSetTopologyContainer name="tetras" position="0 0 0  1 0 0  0 1 0  0 0 1  1 1 1" tetrahedra="0 1 2 3  1 2 3 4"/>
        <TetrahedronSetTopologyModifier removeIsolated="{flag}"/>
        <MechanicalObject name="dofs"/>
        <TopologicalChangeProcessor filename="remove_second.txt"/>
    </Node>
</Node>
"#
            ),
        );
        std::fs::write(path.with_file_name("remove_second.txt"), "T= 0\n  REMOVE= 1\n1\n").unwrap();
        let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
        assert!(run_until_error(&mut scene, 2).is_none());
        let tetras = named(&scene, "tetras");
        let m = scene.mesh_of(tetras).unwrap();
        assert_eq!(m.tetrahedra, vec![[0, 1, 2, 3]]);
        // The faces and edges of the removed tetrahedron that no other uses go either way.
        assert_eq!((m.triangles.len(), m.edges.len()), (4, 6));
        assert_eq!(scene.get::<settee_topology::SetTopologyContainer>(tetras).unwrap().nb_points(), points, "removeIsolated={flag}");
        assert_eq!(scene.store.states.values().find(|s| s.name == "dofs").unwrap().size, points);
    }
}

/// `useDataInputs`: the `*ToRemove` lists go once the time passes `timeToRemove`, then every
/// `interval`.
#[test]
fn data_inputs_remove_their_lists_after_time_to_remove() {
    let path = temp_scene(
        "data_inputs",
        r#"<Node name="root" dt="0.05" gravity="0 -9.81 0">
    <DefaultAnimationLoop/>
    <Node name="sheet">
        <TriangleSetTopologyContainer name="tris" position="0 0 0  1 0 0  0 1 0  1 1 0  2 0 0  2 1 0" triangles="0 1 2  1 3 2  1 4 3  4 5 3"/>
        <TriangleSetTopologyModifier/>
        <MechanicalObject/>
        <TopologicalChangeProcessor useDataInputs="1" trianglesToRemove="0" timeToRemove="0.07" interval="0.1"/>
    </Node>
</Node>
"#,
    );
    let mut scene = settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene;
    let tris = named(&scene, "tris");
    let count = |s: &Scene| s.mesh_of(tris).unwrap().triangles.len();
    let dt = scene.root().context.dt;
    let mut seen = Vec::new();
    for _ in 0..6 {
        settee_core::simulation::animate(&mut scene, dt).unwrap();
        seen.push(count(&scene));
    }
    // Step starts at t = 0, 0.05, 0.1 (> 0.07: remove), 0.15, 0.2 (> 0.17: remove), 0.25.
    assert_eq!(seen, [4, 4, 3, 3, 2, 2]);
}
