//! Comparison with SOFA's topology references (the suite is read at test time, see
//! [`settee_testkit::suite`]; the tests skip without it unless `SETTEE_REQUIRE_SUITE` is set).

use std::path::Path;

use settee_core::{Attr, ComponentId, Factory, NodeId, Scene};
use settee_regress::reference::read_topology_reference;

use crate::test_util::init_scene;
use settee_testkit::suite;

fn factory() -> Factory {
    settee_statecontainer::factory_with(&[crate::register, settee_loader::register])
}

fn add(f: &Factory, scene: &mut Scene, node: NodeId, dir: &Path, class: &str, a: &[(&str, &str)]) -> ComponentId {
    let attrs = a.iter().map(|(n, v)| Attr { name: n.to_string(), value: v.to_string(), pos: None }).collect();
    let id = f.create(scene, node, class, None, attrs, None, dir).unwrap();
    assert!(!scene.has_errors(), "{:?}", scene.messages);
    id
}

fn flat<const K: usize>(v: &[[usize; K]]) -> Vec<u32> {
    v.iter().flatten().map(|&i| i as u32).collect()
}

/// `Component/Topology/Mapping/Tetra2TriangleTopologicalMapping.scn`, topology part: the
/// volume container fed by the Gmsh loader (`src`, lists from the loader's sub-elements) and
/// the surface container filled by the mapping, compared with SOFA's dumps at T = 0.
#[test]
fn tetra2triangle_scene_matches_sofa_at_t0() {
    let Some(root) = suite() else { return };
    let data = root.join("data");
    let f = factory();
    let mut scene = Scene::new("root");
    let tt = scene.add_node(Scene::ROOT, "TT");
    add(&f, &mut scene, tt, &data, "MeshGmshLoader", &[("name", "loader"), ("filename", "mesh/cylinder.msh")]);
    add(&f, &mut scene, tt, &data, "MechanicalObject", &[("src", "@loader"), ("name", "Volume")]);
    let volume = add(&f, &mut scene, tt, &data, "TetrahedronSetTopologyContainer", &[("name", "Container"), ("src", "@loader"), ("tags", " ")]);
    add(&f, &mut scene, tt, &data, "TetrahedronSetTopologyModifier", &[("name", "Modifier")]);
    add(&f, &mut scene, tt, &data, "TetrahedronSetGeometryAlgorithms", &[("name", "GeomAlgo"), ("template", "Vec3")]);
    let t = scene.add_node(tt, "T");
    let surface = add(&f, &mut scene, t, &data, "TriangleSetTopologyContainer", &[("name", "Container")]);
    add(&f, &mut scene, t, &data, "TriangleSetTopologyModifier", &[]);
    add(&f, &mut scene, t, &data, "Tetra2TriangleTopologicalMapping", &[("input", "@../Container"), ("output", "@Container")]);
    init_scene(&mut scene).unwrap();
    assert!(!scene.has_errors(), "{:?}", scene.messages);

    let refs = root.join("references/Component/Topology/Mapping");
    for (i, id) in [(0, volume), (1, surface), (2, surface)] {
        let file = refs.join(format!("Tetra2TriangleTopologicalMapping.scn.reference_{i}_Container_topology.txt.gz"));
        let records = read_topology_reference(&file).unwrap();
        let r = &records[0];
        assert_eq!(r.time, 0.0);
        let m = scene.mesh_of(id).unwrap();
        assert_eq!(flat(&m.edges), r.edges, "edges of reference {i}");
        assert_eq!(flat(&m.triangles), r.triangles, "triangles of reference {i}");
        assert_eq!(flat(&m.quads), r.quads, "quads of reference {i}");
        assert_eq!(flat(&m.tetrahedra), r.tetrahedra, "tetrahedra of reference {i}");
        assert_eq!(flat(&m.hexahedra), r.hexahedra, "hexahedra of reference {i}");
    }
    let m = scene.mesh_of(surface).unwrap();
    assert_eq!((m.edges.len(), m.triangles.len()), (540, 360));
    assert_eq!(scene.mesh_of(volume).unwrap().tetrahedra.len(), 2430);
}

/// The topology regression scenes (`RegressionTopologyScenes.regression-tests`), loaded from
/// their XML with only this crate's, the loaders' and the state container's classes (the other
/// components are not created), compared at T = 0 — before any topological change. Containers
/// are selected as the regression comparison does: nodes with a local topology, in pre-order.
#[test]
fn topology_scenes_match_sofa_at_t0() {
    let Some(root) = suite() else { return };
    let f = factory();
    let scenes = [
        "Component/Topology/Mapping/Tetra2TriangleTopologicalMapping.scn",
        "Component/Topology/Container/Dynamic/RemovingTrianglesProcess.scn",
        "Component/Topology/Container/Dynamic/RemovingTriangle2EdgeProcess.scn",
        "Component/Topology/Container/Dynamic/AddingTrianglesProcess.scn",
        "Component/Topology/Container/Dynamic/AddingTriangle2EdgeProcess.scn",
        "Component/Topology/Container/Dynamic/RemovingTetraProcess.scn",
        "Component/Topology/Container/Dynamic/RemovingTetra2TriangleProcess.scn",
        "Component/Topology/Container/Dynamic/RemovingTetra2Triangle_options2.scn",
        "Component/Topology/Container/Dynamic/AddingTetraProcess.scn",
        "Component/Topology/Container/Dynamic/AddingTetra2TriangleProcess.scn",
        "Component/Topology/Container/Dynamic/RemovingHexa2QuadProcess.scn",
        "Component/Topology/Container/Dynamic/RemovingQuad2TriangleProcess.scn",
        "Component/Topology/Container/Dynamic/AddingHexa2QuadProcess.scn",
        "Component/Topology/Container/Dynamic/AddingQuad2TriangleProcess.scn",
    ];
    let data_path = settee_scene::DataPath::new([root.join("data")]);
    let mut report = Vec::new();
    let mut compared = 0;
    for s in scenes {
        let path = root.join("scenes").join(s);
        let mut scene = settee_scene::load_scene(&path, &f, &data_path).unwrap();
        if std::env::var("TOPO_DEBUG").is_ok() {
            for m in &scene.messages {
                eprintln!("{s}: {m}");
            }
        }
        if let Err(e) = init_scene(&mut scene) {
            report.push(format!("{s}: init failed: {e}"));
            continue;
        }
        let mut i = 0;
        for n in scene.preorder(Scene::ROOT) {
            let Some(topo) = scene.slot(n, settee_core::role::TOPOLOGY) else {
                continue;
            };
            let name = &scene.entry(topo).name;
            let file = root.join("references").join(format!("{s}.reference_{i}_{name}_topology.txt.gz"));
            let index = i;
            i += 1;
            let i = index;
            if !file.exists() {
                report.push(format!("{s}: no reference {}", file.display()));
                continue;
            }
            let Ok(records) = read_topology_reference(&file) else {
                report.push(format!("{s}: unreadable reference {}", file.display()));
                continue;
            };
            let Some(r) = records.first().filter(|r| r.time == 0.0) else {
                continue;
            };
            let m = scene.mesh_of(topo).unwrap();
            // SOFA compares only the element types whose reference count is not zero.
            let lists = [
                ("edges", flat(&m.edges), &r.edges),
                ("triangles", flat(&m.triangles), &r.triangles),
                ("quads", flat(&m.quads), &r.quads),
                ("tetrahedra", flat(&m.tetrahedra), &r.tetrahedra),
                ("hexahedra", flat(&m.hexahedra), &r.hexahedra),
            ];
            for (what, mine, reference) in lists {
                if reference.is_empty() {
                    continue;
                }
                compared += 1;
                if &mine != reference {
                    let first = mine.iter().zip(reference.iter()).position(|(a, b)| a != b);
                    report.push(format!(
                        "{s} [{i}] {name}: {what} differ (mine {} values, SOFA {}; first difference at value {:?})",
                        mine.len(),
                        reference.len(),
                        first
                    ));
                }
            }
        }
    }
    eprintln!("{compared} element lists compared with SOFA's references at T = 0");
    assert!(report.is_empty(), "{compared} lists compared; problems:\n{}", report.join("\n"));
    assert!(compared >= 40, "only {compared} lists compared");
}

/// `Component/Topology/Container/Grid/SparseGridTopology.scn`: the three dragon sparse grids
/// (`n` = 6 5 4, 12 9 6, 25 20 9) give the mechanical objects of their nodes the point counts
/// and positions of SOFA's state references at T = 0 (6 significant digits).
#[test]
fn sparse_grid_scene_matches_sofa_at_t0() {
    let Some(root) = suite() else { return };
    let f = factory();
    let s = "Component/Topology/Container/Grid/SparseGridTopology.scn";
    let data_path = settee_scene::DataPath::new([root.join("data")]);
    let mut scene = settee_scene::load_scene(&root.join("scenes").join(s), &f, &data_path).unwrap();
    init_scene(&mut scene).unwrap();
    let grids: Vec<ComponentId> = scene.components.keys().filter(|c| scene.entry(*c).class.name == "SparseGridTopology").collect();
    assert_eq!(grids.len(), 3);
    for (i, g) in grids.into_iter().enumerate() {
        let node = scene.entry(g).node;
        let mo = scene.slot(node, settee_core::role::MECHANICAL_STATE).unwrap();
        let x = scene.vec(scene.state_of(mo).unwrap(), settee_core::VecId::POSITION).to_vec();
        let file = root.join("references").join(format!("{s}.reference_{i}_MechanicalObject1_mstate.txt.gz"));
        let r = &settee_regress::reference::read_state_reference(&file).unwrap()[0];
        assert_eq!(r.time, 0.0);
        assert_eq!(x.len(), r.x.len(), "grid {i}: point count");
        for (k, (a, b)) in x.iter().zip(r.x.iter()).enumerate() {
            assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "grid {i}, value {k}: {a} vs SOFA {b}");
        }
        let sg = scene.get::<crate::SparseGridTopology>(g).unwrap().grid().unwrap();
        eprintln!(
            "grid {i}: n {:?}, {} points, {} hexahedra ({} boundary)",
            sg.n,
            sg.points.len(),
            sg.hexahedra.len(),
            sg.types.iter().filter(|t| **t == crate::sparse_grid::CellType::Boundary).count()
        );
    }
}
