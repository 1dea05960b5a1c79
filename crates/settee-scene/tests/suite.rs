//! Tests on SOFA's real regression scenes. They read the suite (`$SETTEE_SUITE` or
//! `../shared/sofa-suite`) at test time and are skipped when it is absent, failed when
//! `SETTEE_REQUIRE_SUITE` is set.

use std::path::{Path, PathBuf};

use settee_scene::{parse_scene_file, DataPath, Element, ElementKind, SceneDescription, Severity};

mod support;

use support::suite as suite_dir;

/// Everything is registered except the two prefab-only names.
fn permissive(class: &str) -> bool {
    class != "BoxConstraint" && class != "PlaneConstraint"
}

fn load(suite: &Path, rel: &str) -> SceneDescription {
    let dp = DataPath::new([suite.join("data")]);
    let path = suite.join("scenes").join(rel);
    match parse_scene_file(&path, &dp, &permissive) {
        Ok(s) => s,
        Err(e) => panic!("{rel}: {e}"),
    }
}

fn find_scenes(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            find_scenes(&p, out);
        } else if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("scn")) {
            out.push(p);
        }
    }
}

fn label(e: &Element) -> String {
    match &e.kind {
        ElementKind::Node => format!("Node:{}", e.name_or_empty()),
        ElementKind::Object { class } => class.clone(),
    }
}

fn child<'a>(e: &'a Element, name: &str) -> &'a Element {
    e.children.iter().find(|c| c.name.as_deref() == Some(name)).unwrap_or_else(|| panic!("no child named {name} in {}", e.describe()))
}

#[test]
fn every_suite_scene_parses_without_errors() {
    let Some(suite) = suite_dir() else { return };
    let mut scenes = Vec::new();
    find_scenes(&suite.join("scenes"), &mut scenes);
    assert!(scenes.len() >= 90, "only {} scenes found", scenes.len());
    let dp = DataPath::new([suite.join("data")]);
    let mut failures = Vec::new();
    let mut elements = 0usize;
    for path in &scenes {
        match parse_scene_file(path, &dp, &permissive) {
            Ok(scene) => {
                assert!(scene.root.is_node());
                scene.root.visit(&mut |e| {
                    elements += 1;
                    if e.is_object() {
                        assert!(e.children.is_empty(), "{}: object with children", e.pos);
                    }
                    assert!(e.class() != Some("BoxConstraint"), "{}: prefab not expanded", e.pos);
                });
                for d in &scene.diagnostics {
                    if d.severity >= Severity::Warning {
                        failures.push(format!("{}: {d}", path.display()));
                    }
                }
            }
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
    eprintln!("parsed {} scenes, {} elements", scenes.len(), elements);
}

#[test]
fn fembar_group_include_is_spliced_in_order() {
    let Some(suite) = suite_dir() else { return };
    let scene = load(&suite, "Component/LinearSolver/Direct/FEMBAR_SparseLDLSolver.scn");
    assert!(scene.diagnostics.is_empty(), "{:?}", scene.diagnostics);
    let root = &scene.root;
    assert_eq!(root.name.as_deref(), Some("root"));
    assert_eq!(root.attr("dt"), Some("0.02"));
    assert_eq!(root.attr("gravity"), Some("0 -10 0"));
    let labels: Vec<String> = root.children.iter().map(label).collect();
    assert_eq!(
        labels,
        [
            "Node:plugins",
            "VisualStyle",
            "DefaultAnimationLoop",
            "DefaultVisualManagerLoop",
            "EulerImplicitSolver",
            "MechanicalObject",
            "UniformMass",
            "RegularGridTopology",
            "BoxROI",
            "FixedProjectiveConstraint",
            "NaturalOrderingMethod",
            "SparseLDLSolver",
            "HexahedronFEMForceField",
        ]
    );
    let plugins = &root.children[0];
    assert_eq!(plugins.children.len(), 13);
    assert!(plugins.children.iter().all(|c| c.class() == Some("RequiredPlugin")));
    assert_eq!(plugins.children[0].attr("pluginName"), Some("Sofa.Component.Constraint.Projective"));

    // Spliced Group content keeps its source file in positions, but resolves
    // files relative to the including scene's directory (SOFA only changes
    // directory for Node roots of files; the Group root is discarded).
    let common = suite.join("scenes/Component/LinearSolver/Direct/../FEMBAR-common.xml");
    let grid = &root.children[7];
    assert_eq!(grid.name.as_deref(), Some("grid"));
    assert_eq!(grid.pos.file.as_path(), common.as_path());
    assert_eq!((grid.pos.line, grid.pos.column), (27, 5));
    let scene_dir = suite.join("scenes/Component/LinearSolver/Direct");
    assert_eq!(grid.dir.as_path(), scene_dir.as_path());
    assert_eq!(plugins.dir.as_path(), scene_dir.as_path());
    assert_eq!(root.dir.as_path(), scene_dir.as_path());

    let box_roi = &root.children[8];
    assert_eq!(box_roi.attr("box"), Some("-10 -1 -0.0001  -5 4 0.0001"));
    let fem = &root.children[12];
    assert_eq!(fem.name.as_deref(), Some("FEM"));
    assert_eq!(fem.attr("method"), Some("large"));
    assert_eq!(fem.pos.file.as_path(), suite.join("scenes/Component/LinearSolver/Direct/FEMBAR_SparseLDLSolver.scn"));
    assert_eq!((fem.pos.line, fem.pos.column), (7, 5));
    let ldl = &root.children[11];
    let t = ldl.attribute("template").unwrap();
    assert_eq!(t.value, "CompressedRowSparseMatrixMat3x3");
    assert_eq!((t.pos.line, t.pos.column), (6, 22));
}

#[test]
fn box_constraint_prefab_expands_to_boxroi_and_fixed_constraint() {
    let Some(suite) = suite_dir() else { return };
    let scene = load(&suite, "Component/Topology/Container/Grid/RegularGridTopology.scn");
    assert!(scene.diagnostics.iter().all(|d| d.severity == Severity::Info), "{:?}", scene.diagnostics);
    assert_eq!(scene.diagnostics.len(), 2, "one info per prefab expansion");
    let prefab_file = suite.join("data/Objects/BoxConstraint.xml");
    let scene_file = suite.join("scenes/Component/Topology/Container/Grid/RegularGridTopology.scn");
    for (node, boxv, line) in [("LiverFFD-lowres", "-8.5 0 -2.5 -5 3 2", 33), ("LiverFFD-hires", "2.5 0 -2.5 5 3 2", 53)] {
        let n = child(&scene.root, node);
        let labels: Vec<String> = n.children.iter().map(label).collect();
        assert_eq!(
            labels,
            [
                "EulerImplicitSolver",
                "CGLinearSolver",
                "MechanicalObject",
                "UniformMass",
                "RegularGridTopology",
                "BoxROI",
                "FixedProjectiveConstraint",
                "RegularGridSpringForceField",
                "Node:Visu",
                "Node:Collision Surface",
            ],
            "{node}"
        );
        let roi = &n.children[5];
        assert_eq!(roi.name.as_deref(), Some("box_roi"));
        let b = roi.attribute("box").unwrap();
        assert_eq!(b.value, boxv);
        // the overridden value points at the BoxConstraint attribute in the scene
        assert_eq!(b.pos.file.as_path(), scene_file.as_path());
        assert_eq!((b.pos.line, b.pos.column), (line, 24));
        assert_eq!(roi.attr("drawBoxes"), Some("0"));
        assert_eq!(roi.pos.file.as_path(), prefab_file.as_path());
        assert_eq!((roi.pos.line, roi.pos.column), (2, 2));
        let fixed = &n.children[6];
        assert_eq!(fixed.name, None);
        assert_eq!(fixed.attr("indices"), Some("@[-1].indices"));
        assert_eq!(fixed.attributes.len(), 1);
        // spliced Group content resolves files like the including node
        assert_eq!(roi.dir.as_path(), scene_file.parent().unwrap());
    }
    // source position of a known element
    let hires = child(&scene.root, "LiverFFD-hires");
    let surf = child(hires, "Collision Surface");
    assert_eq!((surf.pos.line, surf.pos.column), (60, 9));
    let loader = &surf.children[0];
    assert_eq!(loader.class(), Some("SphereLoader"));
    assert_eq!((loader.pos.line, loader.pos.column), (61, 6)); // line indented with a tab
    assert_eq!(loader.attr("filename"), Some("mesh/liver.sph"));
}

#[test]
fn attribute_values_decode_character_references() {
    let Some(suite) = suite_dir() else { return };
    let scene = load(&suite, "Component/ODESolver/Backward/EulerImplicitSolver.scn");
    let mut found = None;
    scene.root.visit(&mut |e| {
        if e.class() == Some("FixedProjectiveConstraint") {
            found = e.attr("indices").map(str::to_string);
        }
    });
    let v = found.expect("FixedProjectiveConstraint");
    assert!(v.starts_with("0 1 2 3 4 5 6 7 8 9 10 \n\t\t\t\t\t\t\t11 12"), "{v:?}");
    assert_eq!(v.split_whitespace().count(), 54);
}

#[test]
fn named_include_becomes_child_node_with_overrides() {
    let Some(suite) = suite_dir() else { return };
    let scene = load(&suite, "Demos/chainHybrid.scn");
    assert!(scene.diagnostics.is_empty(), "{:?}", scene.diagnostics);
    let mut fem = None;
    scene.root.visit(&mut |e| {
        if e.is_node() && e.name.as_deref() == Some("FEM") {
            fem = Some(e.clone());
        }
    });
    let fem = fem.expect("included TorusFEM renamed FEM");
    let torus = suite.join("data/Objects/TorusFEM.xml");
    assert_eq!(fem.pos.file.as_path(), torus.as_path());
    // non-Group include root: files resolve from the included file's directory
    assert_eq!(fem.dir.as_path(), torus.parent().unwrap());
    let mo = fem.children.iter().find(|c| c.class() == Some("MechanicalObject")).unwrap();
    assert_eq!(mo.attr("dx"), Some("2.5"));
    assert_eq!(mo.attr("dy"), Some("0"));
    let visu = fem.children.iter().find(|c| c.name.as_deref() == Some("Visu")).unwrap();
    let ogl = visu.children.iter().find(|c| c.class() == Some("OglModel")).unwrap();
    assert_eq!(ogl.attr("dx"), Some("2.5"));
    assert_eq!(ogl.dir.as_path(), torus.parent().unwrap());
    // elements without a dx attribute do not get one
    let mass = fem.children.iter().find(|c| c.class() == Some("UniformMass")).unwrap();
    assert_eq!(mass.attr("dx"), None);
}

#[test]
fn include_overrides_only_replace_existing_attributes() {
    let Some(suite) = suite_dir() else { return };
    let scene = load(&suite, "Component/Topology/Mapping/Tetra2TriangleTopologicalMapping.scn");
    assert!(scene.diagnostics.is_empty(), "{:?}", scene.diagnostics);
    let mut seen = Vec::new();
    scene.root.visit(&mut |e| match e.name.as_deref() {
        Some("Container") if e.class() == Some("TetrahedronSetTopologyContainer") => {
            seen.push("Container");
            assert_eq!(e.attr("src"), Some("@loader"));
            assert_eq!(e.attr("tags"), Some(" "));
        }
        Some("Modifier") if e.class() == Some("TetrahedronSetTopologyModifier") => {
            seen.push("Modifier");
            assert!(e.attributes.is_empty(), "{:?}", e.attributes);
        }
        Some("GeomAlgo") if e.class() == Some("TetrahedronSetGeometryAlgorithms") => {
            seen.push("GeomAlgo");
            assert_eq!(e.attr("template"), Some("Vec3"));
            assert_eq!(e.attr("src"), None);
        }
        _ => {}
    });
    assert_eq!(seen, ["Container", "Modifier", "GeomAlgo"]);
}
