//! What the pages draw of a scene (`settee::drawing`): topological changes followed, every
//! topology of a node, constraint-space states left out, visual models moved by their
//! mappings in the visual update only.

use std::path::{Path, PathBuf};

use settee::drawing::{Category, Drawing, LayerKind, LayerSource, TrackSource};
use settee::run::{simulate, RunObserver};
use settee_core::visual::VisualGeometry;
use settee_core::{Scene, VecId};

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)
}

fn load(path: &Path, data_dirs: &[PathBuf]) -> Scene {
    let factory = settee::factory();
    settee::load(path, &factory, data_dirs).unwrap_or_else(|f| panic!("{}", f.first_error())).scene
}

/// Calls a closure after every step.
struct After<F: FnMut(&mut Scene, usize)>(F);

impl<F: FnMut(&mut Scene, usize)> RunObserver for After<F> {
    fn after_step(&mut self, scene: &mut Scene, k: usize, _t: f64) -> Result<(), String> {
        (self.0)(scene, k + 1);
        Ok(())
    }
}

fn run(scene: &mut Scene, steps: usize, f: impl FnMut(&mut Scene, usize) + 'static) {
    let mut observers: Vec<Box<dyn RunObserver>> = vec![Box::new(After(f))];
    simulate(scene, steps, &mut observers).unwrap();
}

/// The cut beam: `refresh` reports the layer when the cutting removes tetrahedra, with the
/// indices and the tetrahedron count of the container now; it reports nothing when nothing
/// changed.
#[test]
fn refresh_follows_the_cut() {
    let mut scene = load(&repo_file("scenes/cutting/cutting_beam.scn"), &[]);
    let drawing = std::rc::Rc::new(std::cell::RefCell::new(Drawing::select(&scene)));
    {
        let d = drawing.borrow();
        assert_eq!(d.layers.len(), 1);
        assert!(d.layers[0].label.ends_with("of 2592 tetrahedra"), "{}", d.layers[0].label);
    }
    let changes = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let (d2, c2) = (drawing.clone(), changes.clone());
    run(&mut scene, 150, move |scene, step| {
        let changed = d2.borrow_mut().refresh(scene);
        // A second call at once finds nothing new.
        assert!(d2.borrow_mut().refresh(scene).is_empty());
        if !changed.is_empty() {
            c2.borrow_mut().push(step);
        }
    });
    let d = drawing.borrow();
    let LayerSource::Mesh { topology, .. } = &d.layers[0].source else { panic!("a mesh layer") };
    let mesh = scene.mesh_of(*topology).unwrap();
    let tets = mesh.tetrahedra.len();
    assert!(tets < 2592, "the cut removed tetrahedra: {tets}");
    assert!(d.layers[0].label.ends_with(&format!("of {tets} tetrahedra")), "{}", d.layers[0].label);
    let n = d.tracks[0].vertices;
    assert_eq!(n, scene.store.get(d.tracks[0].state().unwrap()).size);
    let (_, want, _) = settee::drawing::mesh_layer(mesh, n).unwrap();
    assert_eq!(d.layers[0].indices, want);
    // The cut advances over steps 1..=100: changes were seen at many steps, none after it.
    let steps = changes.borrow();
    assert!(steps.len() > 10, "{steps:?}");
    assert!(steps.iter().all(|&s| s <= 101), "{steps:?}");
}

/// A node with two edge topologies over the same points (a rope and a hanger) gives two
/// layers, each with its own edges.
#[test]
fn every_topology_of_a_node_is_drawn() {
    let path = settee_testkit::temp_scene(
        "two_topologies",
        r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
    <Node name="rope">
        <MechanicalObject name="dofs" position="0 0 0  1 0 0  2 0 0  2 -1 0"/>
        <EdgeSetTopologyContainer name="rope" edges="0 1  1 2"/>
        <EdgeSetTopologyContainer name="hanger" edges="2 3"/>
    </Node>
</Node>"#,
    );
    let scene = load(&path, &[]);
    let d = Drawing::select(&scene);
    let labels: Vec<&str> = d.layers.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["EdgeSetTopologyContainer 'rope': 2 edges", "EdgeSetTopologyContainer 'hanger': 1 edges"]);
    assert_eq!(d.layers[0].indices, [0, 1, 1, 2]);
    assert_eq!(d.layers[1].indices, [2, 3]);
    assert!(d.layers.iter().all(|l| l.kind == LayerKind::Lines && l.track == 0 && l.visible));
}

/// The Compliant chain: the lengths of its links (a Vec1 state mapped from the Vec3 chain) are
/// not drawn; the chain is, as its edges. A Vec1 state of its own (a 1-D body) still is.
#[test]
fn constraint_space_states_are_not_drawn() {
    let scene = load(&repo_file("scenes/compliant/chain_compliant.scn"), &[]);
    let d = Drawing::select(&scene);
    assert_eq!(d.tracks.len(), 1, "{:?}", d.tracks);
    assert_eq!(d.tracks[0].name, "/root/chain/compliant");
    assert_eq!(d.layers.len(), 1);
    assert_eq!((d.layers[0].kind, d.layers[0].indices.len()), (LayerKind::Lines, 40));
    assert!(d.layers.iter().all(|l| !l.node.contains("links")));

    let path = settee_testkit::temp_scene(
        "line_body",
        r#"<Node name="root" gravity="0 0 0" dt="0.01">
    <MechanicalObject name="x" template="Vec1d" position="0 1 2"/>
</Node>"#,
    );
    let scene = load(&path, &[]);
    let d = Drawing::select(&scene);
    assert_eq!(d.layers.len(), 1);
    assert_eq!((d.layers[0].kind, d.layers[0].label.as_str()), (LayerKind::Points, "MechanicalObject 'x': 3 points"));
}

/// A falling tetrahedron with two visual models: one barycentric-mapped (points inside the
/// tetrahedron), one identity-mapped.
const FALLING_TET: &str = r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
    <Node name="body">
        <EulerImplicitSolver rayleighStiffness="0.1" rayleighMass="0.1"/>
        <CGLinearSolver iterations="100" tolerance="1e-12" threshold="1e-12"/>
        <MechanicalObject name="dofs" position="0 0 0  1 0 0  0 1 0  0 0 1" velocity="0 0 0  0 0 0  0 0 0  0 0 0.5"/>
        <TetrahedronSetTopologyContainer name="tets" tetrahedra="0 1 2 3"/>
        <UniformMass totalMass="1"/>
        <TetrahedronFEMForceField youngModulus="100" poissonRatio="0.3" method="large"/>
        <FixedProjectiveConstraint indices="0"/>
        <Node name="inside" tags="Visual">
            <OglModel name="visual" position="0.25 0.25 0.25  0.1 0.2 0.3  0.5 0.1 0.1" triangles="0 1 2" color="0 0.5 1 0.5"/>
            <BarycentricMapping input="@.." output="@visual"/>
        </Node>
        <Node name="same" tags="Visual">
            <OglModel name="copy" position="0 0 0  1 0 0  0 1 0  0 0 1" triangles="0 1 2  0 1 3"/>
            <IdentityMapping input="@.." output="@copy"/>
        </Node>
    </Node>
</Node>"#;

/// The barycentric coordinates of `p` in the tetrahedron `x` (4 points).
fn barycentric(x: &[[f64; 3]; 4], p: [f64; 3]) -> [f64; 4] {
    let d = |i: usize| [x[i][0] - x[0][0], x[i][1] - x[0][1], x[i][2] - x[0][2]];
    let (a, b, c) = (d(1), d(2), d(3));
    let r = [p[0] - x[0][0], p[1] - x[0][1], p[2] - x[0][2]];
    let det = |u: [f64; 3], v: [f64; 3], w: [f64; 3]| {
        u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0])
    };
    let m = det(a, b, c);
    let (l1, l2, l3) = (det(r, b, c) / m, det(a, r, c) / m, det(a, b, r) / m);
    [1.0 - l1 - l2 - l3, l1, l2, l3]
}

#[test]
fn visual_models_move_with_the_body_in_the_visual_update() {
    let path = settee_testkit::temp_scene("falling_tet", FALLING_TET);
    let mut scene = load(&path, &[]);
    let d = Drawing::select(&scene);
    let visual: Vec<_> = d.layers.iter().filter(|l| l.category == Category::Visual).collect();
    assert_eq!(visual.len(), 2);
    assert_eq!(visual[0].color, Some([0.0, 0.5, 1.0, 0.5]));
    // With visual models, the body itself is hidden by default (SOFA's default display flags).
    assert!(d.layers.iter().all(|l| l.visible == (l.category == Category::Visual)));
    let vid = |name: &str| {
        d.tracks.iter().find(|t| t.name.ends_with(name)).and_then(|t| match t.source {
            TrackSource::Visual(c) => Some(c),
            _ => None,
        })
    };
    let (inside, copy) = (vid("/visual").unwrap(), vid("/copy").unwrap());
    let state = d.tracks.iter().find_map(|t| t.state()).unwrap();
    let rest: Vec<f64> = scene.role::<dyn VisualGeometry>(inside).unwrap().rest_positions().to_vec();
    let x0: Vec<f64> = scene.store.get(state).read(VecId::POSITION).to_vec();
    let corners = |x: &[f64]| -> [[f64; 3]; 4] { std::array::from_fn(|i| [x[3 * i], x[3 * i + 1], x[3 * i + 2]]) };
    let coords: Vec<[f64; 4]> = rest.chunks_exact(3).map(|p| barycentric(&corners(&x0), [p[0], p[1], p[2]])).collect();

    run(&mut scene, 40, |_, _| {});
    let x = scene.store.get(state).read(VecId::POSITION).to_vec();
    assert!((x[10] - x0[10]).abs() > 0.01, "the body moved: {x:?}");
    // The steps alone do not move the visual models: SOFA moves them in its visual update.
    assert_eq!(scene.role::<dyn VisualGeometry>(inside).unwrap().positions(), &rest[..]);
    d.update_visuals(&mut scene).unwrap();
    let g = scene.role::<dyn VisualGeometry>(inside).unwrap();
    let c = corners(&x);
    for (v, l) in g.positions().chunks_exact(3).zip(&coords) {
        for a in 0..3 {
            let want: f64 = (0..4).map(|k| l[k] * c[k][a]).sum();
            assert!((v[a] - want).abs() < 1e-12, "{v:?} vs barycentric {l:?} of {c:?}");
        }
    }
    assert_eq!(scene.role::<dyn VisualGeometry>(copy).unwrap().positions(), &x[..]);
    let mut drawn = Vec::new();
    let ti = d.tracks.iter().position(|t| t.source == TrackSource::Visual(copy)).unwrap();
    d.read_positions(&scene, ti, &mut drawn);
    assert_eq!(drawn, x.iter().map(|&v| v as f32).collect::<Vec<_>>());
}

/// Every state after `steps` steps, with or without a visual update after each.
fn states_after(path: &Path, data_dirs: &[PathBuf], steps: usize, visual: bool) -> Vec<Vec<u64>> {
    let mut scene = load(path, data_dirs);
    let d = Drawing::select(&scene);
    assert!(d.layers.iter().any(|l| l.category == Category::Visual), "{} has visual models", path.display());
    run(&mut scene, steps, move |scene, _| {
        if visual {
            d.update_visuals(scene).unwrap();
        }
    });
    let mut out = Vec::new();
    for st in scene.store.states.values() {
        for id in [VecId::POSITION, VecId::VELOCITY] {
            out.push(st.read(id).iter().map(|v| v.to_bits()).collect());
        }
    }
    out
}

#[test]
fn visual_updates_change_no_simulated_number() {
    let path = settee_testkit::temp_scene("falling_tet_bits", FALLING_TET);
    assert_eq!(states_after(&path, &[], 30, true), states_after(&path, &[], 30, false));
    let Some(examples) = settee_testkit::shared_dir("sofa-examples") else { return };
    let dirs = [examples.join("share"), examples.join("examples")];
    let liver = examples.join("examples/Demos/liver.scn");
    assert_eq!(states_after(&liver, &dirs, 20, true), states_after(&liver, &dirs, 20, false));
}

/// A spinning, falling rigid body with a visual model under a RigidMapping (its vertices in the
/// frame's coordinates, `globalToLocalCoords` false as by default): after the steps and the
/// visual update, every vertex is the frame's origin plus its rest offset rotated by the frame's
/// orientation.
#[test]
fn rigid_mapping_moves_a_visual_model_with_its_frame() {
    let path = settee_testkit::temp_scene(
        "rigid_visual",
        r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
    <Node name="body">
        <EulerImplicitSolver/>
        <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-12"/>
        <MechanicalObject name="frame" template="Rigid3d" position="1 2 3  0 0 0 1" velocity="0 0 0  0.5 1 2"/>
        <UniformMass totalMass="1"/>
        <Node name="visu">
            <OglModel name="shape" position="0 0 0  1 0 0  0 1 0  0 0 1" triangles="0 1 2  0 1 3"/>
            <RigidMapping input="@.." output="@shape"/>
        </Node>
    </Node>
</Node>"#,
    );
    let mut scene = load(&path, &[]);
    let d = Drawing::select(&scene);
    let shape = d.tracks.iter().find_map(|t| match t.source {
        TrackSource::Visual(c) => Some(c),
        _ => None,
    });
    let shape = shape.expect("the visual model is drawn");
    let state = d.tracks.iter().find_map(|t| t.state()).unwrap();
    run(&mut scene, 30, |_, _| {});
    d.update_visuals(&mut scene).unwrap();
    let x = scene.store.get(state).read(VecId::POSITION).to_vec();
    let (c, q) = ([x[0], x[1], x[2]], [x[3], x[4], x[5], x[6]]);
    assert!((c[1] - 2.0).abs() > 0.01 && q[3] < 0.999, "the frame moved and turned: {x:?}");
    let offsets = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let g = scene.role::<dyn VisualGeometry>(shape).unwrap();
    for (v, o) in g.positions().chunks_exact(3).zip(offsets) {
        let r = settee_core::types::quat_rotate(q, o);
        for a in 0..3 {
            assert!((v[a] - (c[a] + r[a])).abs() < 1e-12, "{v:?} vs {c:?} + R·{o:?}");
        }
    }
}
