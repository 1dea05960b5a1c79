//! Loaders on the mesh files of SOFA's regression suite (skipped when the suite is absent, failed
//! when `SETTEE_REQUIRE_SUITE` is set), plus
//! scene-level behaviour: `src=` links, transforms, errors.
//!
//! Expected values come from reading the files themselves, and for the element orders from the
//! topology references SOFA recorded (the containers fed by the loaders at T = 0).
#![allow(clippy::disallowed_methods)] // tests check output Data by name

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use settee_core::{ComponentId, Factory, Scene};
use settee_topology::testing::{attrs, init_scene};

macro_rules! suite_or_skip {
    () => {
        match settee_testkit::suite() {
            Some(s) => s,
            None => return,
        }
    };
}

fn factory() -> Factory {
    settee_statecontainer::factory_with(&[settee_loader::register, settee_topology::register])
}

/// A scene whose components resolve files against `dir`.
struct TestScene {
    f: Factory,
    scene: Scene,
    dir: PathBuf,
}

impl TestScene {
    fn new(dir: &Path) -> TestScene {
        TestScene { f: factory(), scene: Scene::new("root"), dir: dir.to_path_buf() }
    }
    fn add(&mut self, class: &str, pairs: &[(&str, &str)]) -> ComponentId {
        self.f.create(&mut self.scene, Scene::ROOT, class, None, attrs(pairs), None, &self.dir).expect("component created")
    }
    fn add_t(&mut self, class: &str, template: &str, pairs: &[(&str, &str)]) -> ComponentId {
        self.f.create(&mut self.scene, Scene::ROOT, class, Some(template), attrs(pairs), None, &self.dir).expect("component created")
    }
    fn init(&mut self) {
        assert!(!self.scene.has_errors(), "{:?}", self.scene.messages);
        init_scene(&mut self.scene).unwrap();
        assert!(!self.scene.has_errors(), "{:?}", self.scene.messages);
    }
    fn reals(&self, c: ComponentId, name: &str) -> Vec<f64> {
        self.scene.entry(c).data.reals(name).to_vec()
    }
    fn indices(&self, c: ComponentId, name: &str) -> Vec<usize> {
        self.scene.entry(c).data.indices(name).to_vec()
    }
    fn count(&self, c: ComponentId, name: &str, k: usize) -> usize {
        self.indices(c, name).len() / k
    }
}

fn data_dir(s: &Path) -> PathBuf {
    s.join("data")
}

/// The lists of the T = 0 block of a SOFA topology reference (`Edges`, `Triangles`, …).
fn reference_t0(path: &Path) -> Vec<(String, Vec<usize>)> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut text).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("T= 0"));
    while let Some(l) = lines.next() {
        if l.starts_with("T=") {
            break;
        }
        if let Some((name, n)) = l.trim().split_once("= ") {
            let n: usize = n.trim().parse().unwrap();
            let values: Vec<usize> = if n == 0 { Vec::new() } else { lines.next().unwrap().split_whitespace().map(|v| v.parse().unwrap()).collect() };
            out.push((name.to_string(), values));
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + b.abs())
}

#[test]
fn liver_msh_v1() {
    let s = suite_or_skip!();
    let mut t = TestScene::new(&data_dir(&s));
    let l = t.add("MeshGmshLoader", &[("name", "loader"), ("filename", "mesh/liver.msh")]);
    t.init();
    let x = t.reals(l, "position");
    assert_eq!(x.len() / 3, 181);
    // first and third nodes of the file
    assert_eq!(&x[..3], &[-0.979259, 2.23512, 2.61245]);
    assert_eq!(&x[6..9], &[-0.48104, 2.87797, 1.94243]);
    let tets = t.indices(l, "tetrahedra");
    assert_eq!(tets.len() / 4, 596);
    // element 1: `1 4 1 1 4 128 141 138 142`; element 596: `596 4 1 1 4 146 22 8 6`
    assert_eq!(&tets[..4], &[127, 140, 137, 141]);
    assert_eq!(&tets[tets.len() - 4..], &[145, 21, 7, 5]);
    // sub-elements on by default: every distinct tetrahedron face, every distinct edge
    let mut faces = HashSet::new();
    let mut edges = HashSet::new();
    for tt in tets.chunks(4) {
        for f in [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]] {
            let mut k = [tt[f[0]], tt[f[1]], tt[f[2]]];
            k.sort();
            faces.insert(k);
        }
        for (a, b) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
            edges.insert((tt[a].min(tt[b]), tt[a].max(tt[b])));
        }
    }
    assert_eq!(t.count(l, "triangles", 3), faces.len());
    assert_eq!(t.count(l, "edges", 2), edges.len());
    assert_eq!(&t.indices(l, "triangles")[..3], &[127, 137, 140]);
    assert_eq!(t.reals(l, "normals").len(), 181 * 3);
}

#[test]
fn truthcylinder_msh_renumbers_node_ids() {
    let s = suite_or_skip!();
    let mut t = TestScene::new(&data_dir(&s));
    let l = t.add("MeshGmshLoader", &[("filename", "mesh/truthcylinder1.msh"), ("createSubelements", "false")]);
    t.init();
    let x = t.reals(l, "position");
    assert_eq!(x.len() / 3, 642);
    // node ids 1, 2, 5, 6, … : the third node (id 5) is point 2
    assert_eq!(&x[6..9], &[3.247594644433489, -17.78000031628415, -1.874997329039697]);
    assert_eq!(t.count(l, "edges", 2), 72);
    assert_eq!(t.count(l, "triangles", 3), 706);
    assert_eq!(t.count(l, "tetrahedra", 4), 2524);
    // `1 1 1 1 2 1 2`, `2 1 1 1 2 1 5`, `3 1 1 1 2 5 7`
    assert_eq!(&t.indices(l, "edges")[..6], &[0, 1, 0, 2, 2, 4]);
    let e = t.indices(l, "edges");
    assert!(e.iter().all(|&i| i < 642));
}

#[test]
fn gmsh_v2_files() {
    let s = suite_or_skip!();
    let mut t = TestScene::new(&data_dir(&s));
    let a = t.add("MeshGmshLoader", &[("filename", "mesh/cubeDof.msh")]);
    let b = t.add("MeshGmshLoader", &[("filename", "mesh/cube_low_res.msh")]);
    t.init();
    // "$MeshFormat " with a trailing space, node ids from 0, no element
    let x = t.reals(a, "position");
    assert_eq!(x.len() / 3, 27);
    assert_eq!(&x[..3], &[0.0, 0.0, 2.0]);
    assert_eq!(&x[78..81], &[2.0, 2.0, 0.0]);
    assert!(t.indices(a, "tetrahedra").is_empty());
    assert_eq!(t.reals(b, "position").len() / 3, 26);
    let tets = t.indices(b, "tetrahedra");
    assert_eq!(tets.len() / 4, 44);
    // `1 4 2 0 1 23 3 12 26` (ids 1..26 contiguous)
    assert_eq!(&tets[..4], &[22, 2, 11, 25]);
    // groups by the last tag (1): one group of 44
    assert_eq!(t.scene.entry(b).data.str("tetrahedraGroups"), "  -1 0 44");
}

/// Compares the loader-fed container of a SOFA topology scene with its reference at T = 0.
fn check_against_reference(mesh: &str, extra: &[(&str, &str)], reference: &str) {
    let s = suite_or_skip!();
    let mut t = TestScene::new(&data_dir(&s));
    let mut pairs = vec![("filename", mesh)];
    pairs.extend_from_slice(extra);
    let l = t.add("MeshGmshLoader", &pairs);
    t.init();
    let reference = reference_t0(&s.join("references").join(reference));
    assert!(reference.iter().any(|(_, v)| !v.is_empty()), "empty reference");
    for (name, values) in reference {
        let data = match name.as_str() {
            "Edges" => "edges",
            "Triangles" => "triangles",
            "Quads" => "quads",
            "Tetrahedra" => "tetrahedra",
            "Hexahedra" => "hexahedra",
            other => panic!("unknown list {other}"),
        };
        assert_eq!(t.indices(l, data), values, "{mesh}: {name} differ from SOFA's");
    }
}

#[test]
fn square3_triangle_container_matches_sofa() {
    check_against_reference(
        "mesh/square3.msh",
        &[("createSubelements", "true")],
        "Component/Topology/Container/Dynamic/RemovingTrianglesProcess.scn.reference_0_Triangle_topo_topology.txt.gz",
    );
}

#[test]
fn nine_hexa_container_matches_sofa() {
    check_against_reference(
        "mesh/nine_hexa.msh",
        &[],
        "Component/Topology/Container/Dynamic/RemovingHexa2QuadProcess.scn.reference_0_Hexa_topo_topology.txt.gz",
    );
}

#[test]
fn nine_quads_container_matches_sofa() {
    check_against_reference(
        "mesh/nine_quads.msh",
        &[],
        "Component/Topology/Container/Dynamic/RemovingQuad2TriangleProcess.scn.reference_0_Quad_topo_topology.txt.gz",
    );
}

#[test]
fn cylinder_tetra_container_matches_sofa() {
    check_against_reference(
        "mesh/cylinder.msh",
        &[],
        "Component/Topology/Mapping/Tetra2TriangleTopologicalMapping.scn.reference_0_Container_topology.txt.gz",
    );
}

#[test]
fn obj_files() {
    let s = suite_or_skip!();
    let mut t = TestScene::new(&data_dir(&s));
    let cube = t.add("MeshOBJLoader", &[("filename", "mesh/cube.obj")]);
    let tri = t.add("MeshOBJLoader", &[("filename", "mesh/cube.obj"), ("triangulate", "1")]);
    let cyl0 = t.add("MeshOBJLoader", &[("filename", "mesh/truthcylinder1.obj"), ("handleSeams", "0")]);
    let cyl1 = t.add("MeshOBJLoader", &[("filename", "mesh/truthcylinder1.obj"), ("handleSeams", "1")]);
    t.init();
    let x = t.reals(cube, "position");
    assert_eq!(x.len() / 3, 8);
    // `v 0.999999 1.000000 1.000001` is the 6th vertex
    assert_eq!(&x[15..18], &[0.999999, 1.0, 1.000001]);
    // `f 5//1 1//1 8//1`, `f 1//1 4//1 8//1`
    assert_eq!(&t.indices(cube, "triangles")[..6], &[4, 0, 7, 0, 3, 7]);
    assert_eq!(t.count(cube, "triangles", 3), 12);
    assert_eq!(t.indices(tri, "triangles"), t.indices(cube, "triangles"));
    // one normal per vertex (the file's vn, summed per vertex and normalised)
    let n = t.reals(cube, "normals");
    assert_eq!(n.len(), 24);
    for v in n.chunks(3) {
        assert!(close(v[0] * v[0] + v[1] * v[1] + v[2] * v[2], 1.0));
    }
    // 830 v, 853 vt, 902 vn, 1656 triangles
    assert_eq!(t.reals(cyl0, "position").len() / 3, 830);
    assert_eq!(&t.reals(cyl0, "position")[..3], &[3.523846, -17.780001, -1.282572]);
    assert_eq!(t.count(cyl0, "triangles", 3), 1656);
    assert_eq!(&t.indices(cyl0, "triangles")[..6], &[0, 1, 2, 2, 1, 3]);
    assert_eq!(t.reals(cyl0, "texcoords").len() / 2, 830);
    assert_eq!(t.reals(cyl0, "texcoordsDefinition").len() / 2, 853);
    assert_eq!(t.reals(cyl0, "normalsDefinition").len() / 3, 902);
    // seams: more vertices, same triangles count, every vertex maps back to a file position
    let n1 = t.reals(cyl1, "position").len() / 3;
    assert!(n1 > 830, "{n1}");
    assert_eq!(t.count(cyl1, "triangles", 3), 1656);
    let back = t.indices(cyl1, "vertPosIdx");
    assert_eq!(back.len(), n1);
    let p0 = t.reals(cyl0, "position");
    let p1 = t.reals(cyl1, "position");
    for (j, &i) in back.iter().enumerate() {
        assert_eq!(&p1[3 * j..3 * j + 3], &p0[3 * i..3 * i + 3]);
    }
}

#[test]
fn vtk_files() {
    let s = suite_or_skip!();
    let mut t = TestScene::new(&data_dir(&s));
    let q = t.add("MeshVTKLoader", &[("filename", "mesh/test_quad.vtk")]);
    let a = t.add("MeshVTKLoader", &[("filename", "mesh/SofaScene/A.vtk")]);
    t.init();
    let x = t.reals(q, "position");
    assert_eq!(x.len() / 3, 312);
    assert_eq!(&x[6..9], &[38.63703305156273, 10.35276180410083, 0.0]);
    assert_eq!(t.count(q, "quads", 4), 288);
    assert_eq!(&t.indices(q, "quads")[..8], &[2, 0, 25, 59, 59, 25, 26, 60]);
    // `POINTS 413 float`: single precision values
    let x = t.reals(a, "position");
    assert_eq!(x.len() / 3, 413);
    let f32_of = |t: &str| t.parse::<f32>().unwrap() as f64;
    assert_eq!(&x[..3], &[f32_of("25.0303438"), f32_of("-0.192852403"), f32_of("-0.170036865")]);
    assert_ne!(x[0], "25.0303438".parse::<f64>().unwrap());
    assert_eq!(t.count(a, "edges", 2), 1942);
    assert_eq!(t.count(a, "triangles", 3), 2645);
    assert_eq!(t.count(a, "tetrahedra", 4), 1116);
    assert_eq!(&t.indices(a, "edges")[..4], &[0, 10, 0, 4]);
}

#[test]
fn sph_files() {
    let s = suite_or_skip!();
    let mut t = TestScene::new(&data_dir(&s));
    let l = t.add("SphereLoader", &[("filename", "mesh/liver.sph")]);
    let d = t.add("SphereLoader", &[("filename", "mesh/dragon.sph"), ("translation", "1 2 3")]);
    t.init();
    let text = std::fs::read_to_string(s.join("data/mesh/liver.sph")).unwrap();
    let n = text.lines().filter(|l| l.starts_with("sphe ")).count();
    assert_eq!(t.reals(l, "position").len() / 3, n);
    assert_eq!(t.reals(l, "listRadius").len(), n);
    assert_eq!(&t.reals(l, "position")[..3], &[-4.0, 1.25, 0.0]);
    assert_eq!(t.reals(l, "listRadius")[2], 0.35);
    // dragon.sph: the commented `#sphe 1 -8 …` is skipped; `sphe 1 -6 -5.2 -1.2 2.2` is first
    let x = t.reals(d, "position");
    assert_eq!(&x[..3], &[-6.0 + 1.0, -5.2 + 2.0, -1.2 + 3.0]);
    assert_eq!(t.reals(d, "listRadius")[0], 2.2);
}

#[test]
fn string_mesh_creator() {
    let mut t = TestScene::new(Path::new("."));
    let l = t.add("StringMeshCreator", &[("name", "loader"), ("resolution", "20"), ("scale3d", "1 1 1")]);
    let topo = t.add("MeshTopology", &[("position", "@loader.position"), ("edges", "@loader.edges")]);
    t.init();
    let x = t.reals(l, "position");
    assert_eq!(x.len(), 60);
    for i in 0..20 {
        assert_eq!(x[3 * i], i as f64 * 1.0 / 19.0);
        assert_eq!(x[3 * i + 1], 0.0);
    }
    let e = t.indices(l, "edges");
    assert_eq!(e.len(), 38);
    assert_eq!(&e[..4], &[0, 1, 1, 2]);
    let m = t.scene.mesh_of(topo).unwrap();
    assert_eq!(m.points.len(), 20);
    assert_eq!(m.edges[18], [18, 19]);
}

#[test]
fn grid_mesh_creator() {
    let mut t = TestScene::new(Path::new("."));
    // 3 × 2 quads: edges are the cell sides once each, in the orientation first met, sorted
    let q = t.add("GridMeshCreator", &[("name", "quads"), ("filename", "nofile"), ("resolution", "3 2"), ("trianglePattern", "0")]);
    // rotated by 90° about x (as the Compliant cloth scenes): the grid lies in the xz plane
    let r = t.add("GridMeshCreator", &[("name", "rot"), ("resolution", "3 3"), ("rotation", "90 0 0 "), ("scale", "1 1 0")]);
    let a = t.add("GridMeshCreator", &[("name", "alt"), ("resolution", "3 3"), ("trianglePattern", "1")]);
    let d = t.add("GridMeshCreator", &[("name", "down"), ("resolution", "2 2"), ("trianglePattern", "3")]);
    let topo = t.add("MeshTopology", &[("src", "@quads")]);
    t.init();
    assert_eq!(t.reals(q, "position"), vec![0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.0]);
    assert_eq!(t.indices(q, "quads"), vec![0, 1, 4, 3, 1, 2, 5, 4]);
    assert!(t.indices(q, "triangles").is_empty());
    assert_eq!(t.indices(q, "edges"), vec![0, 1, 1, 2, 1, 4, 2, 5, 3, 0, 4, 3, 5, 4]);
    let m = t.scene.mesh_of(topo).unwrap();
    assert_eq!(m.edges.len(), 7);
    assert_eq!(m.quads.len(), 2);

    let x = t.reals(r, "position");
    assert_eq!(x.len(), 27);
    // point 3 is (0, 0.5, 0) before the rotation
    assert_eq!(x[9], 0.0);
    assert!(x[10].abs() < 1e-15, "{}", x[10]);
    assert!((x[11] - 0.5).abs() < 1e-15, "{}", x[11]);
    // default pattern 2 (upward): two triangles per cell
    assert_eq!(t.indices(r, "triangles").len(), 8 * 3);
    assert_eq!(&t.indices(r, "triangles")[..6], &[0, 1, 4, 0, 4, 3]);

    // alternate: cell (1,0) is cut along the other diagonal
    let tri = t.indices(a, "triangles");
    assert_eq!(&tri[..12], &[0, 1, 4, 0, 4, 3, 1, 2, 4, 2, 5, 4]);
    assert_eq!(t.indices(a, "edges").len() / 2, 16);
    assert_eq!(t.indices(d, "triangles"), vec![0, 1, 2, 1, 3, 2]);
    assert_eq!(t.indices(d, "edges"), vec![0, 1, 1, 2, 1, 3, 2, 0, 3, 2]);
}

/// A temporary directory holding `files`.
fn temp_dir_with(tag: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("settee-loader-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, content) in files {
        std::fs::write(dir.join(name), content).unwrap();
    }
    dir
}

#[test]
fn transform_order_scale_rotate_translate() {
    let dir = temp_dir_with("transform", &[("p.obj", b"v 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\n")]);
    let mut t = TestScene::new(&dir);
    // scale (2, 3, 4), then Rx(90°) (y → z, z → −y), then Rz(90°) (x → y, y → −x), then +(10, 20, 30)
    let l = t.add(
        "MeshOBJLoader",
        &[("name", "loader"), ("filename", "p.obj"), ("scale3d", "2 3 4"), ("rotation", "90 0 90"), ("translation", "10 20 30")],
    );
    let mo = t.add("MechanicalObject", &[("src", "@loader")]);
    t.init();
    let x = t.reals(l, "position");
    // (1,0,0) → (2,0,0) → (2,0,0) → (0,2,0) → (10,22,30)
    // (0,1,0) → (0,3,0) → (0,0,3) → (0,0,3) → (10,20,33)
    // (0,0,1) → (0,0,4) → (0,−4,0) → (4,0,0) → (14,20,30)
    let expected = [10.0, 22.0, 30.0, 10.0, 20.0, 33.0, 14.0, 20.0, 30.0];
    for (a, b) in x.iter().zip(expected) {
        assert!((a - b).abs() < 1e-12, "{x:?}");
    }
    // the MechanicalObject takes the transformed positions, and not the loader's transform
    let st = t.scene.state_of(mo).unwrap();
    let p = t.scene.store.get(st).read(settee_core::VecId::POSITION).to_vec();
    assert_eq!(p, x);
    assert_eq!(t.scene.entry(mo).data.vec3("translation"), [0.0; 3]);
    assert!(t.scene.entry(mo).data.field("translation").unwrap().link.is_none());
    // `scale="s"` multiplies scale3d (in single precision), and a full matrix replaces T·R·S
    let l2 = t.add("MeshOBJLoader", &[("filename", "p.obj"), ("scale3d", "1 2 1"), ("scale", "0.3")]);
    let l3 = t.add("MeshOBJLoader", &[("filename", "p.obj"), ("translation", "5 5 5"), ("transformation", "0 -1 0 1  1 0 0 2  0 0 1 3  0 0 0 1")]);
    init_scene(&mut t.scene).unwrap();
    let s = 0.3f32 as f64;
    assert_eq!(&t.reals(l2, "position")[..6], &[s, 0.0, 0.0, 0.0, 2.0 * s, 0.0]);
    assert_eq!(&t.reals(l3, "position")[..6], &[1.0, 3.0, 3.0, 0.0, 2.0, 3.0]);
}

#[test]
fn src_links_feed_topology_and_engine_at_parse_time() {
    let s = suite_or_skip!();
    let mut t = TestScene::new(&data_dir(&s));
    let l = t.add("MeshGmshLoader", &[("name", "loader"), ("filename", "mesh/liver.msh")]);
    let topo = t.add("MeshTopology", &[("name", "topo"), ("src", "@loader")]);
    // created right after the loader: the data are already there at parse time
    assert_eq!(t.scene.mesh_of(topo).unwrap().tetrahedra.len(), 596);
    assert_eq!(t.scene.mesh_of(topo).unwrap().points.len(), 181);
    let eng = t.add("TransformEngine", &[("name", "translate"), ("input_position", "@loader.position"), ("translation", "0 0 -2")]);
    let topo2 = t.add("MeshTopology", &[("position", "@translate.output_position"), ("tetrahedra", "@loader.tetrahedra")]);
    assert_eq!(t.scene.mesh_of(topo2).unwrap().points[0], [-0.979259, 2.23512, 2.61245 - 2.0]);
    t.init();
    let m = t.scene.mesh_of(topo).unwrap();
    assert_eq!(m.triangles.len(), t.count(l, "triangles", 3));
    assert_eq!(m.edges.len(), t.count(l, "edges", 2));
    assert_eq!(t.reals(eng, "output_position").len(), 181 * 3);
    let _ = t.add_t("TransformEngine", "Rigid3d", &[("input_position", "0 0 0 0 0 0 1"), ("rotation", "0 0 90")]);
}

#[test]
fn missing_and_malformed_files_are_errors() {
    let dir = temp_dir_with(
        "errors",
        &[
            ("cut.msh", b"$NOD\n3\n1 0 0 0\n2 1 0 0\n3 0 1"),
            ("bad.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n"),
            ("bad.sph", b"sph 1.0\nsphe 1 0 0 zero 1\n"),
        ],
    );
    let mut t = TestScene::new(&dir);
    for (class, file, expected) in [
        ("MeshGmshLoader", "cut.msh", "cut.msh:5: unexpected end of file: expected the node's z coordinate"),
        ("MeshOBJLoader", "bad.obj", "bad.obj:4: face refers to vertex 9 but the file defines 3 vertices"),
        ("SphereLoader", "bad.sph", "bad.sph:2: expected the centre's z (a number), found 'zero'"),
        ("MeshVTKLoader", "nothere.vtk", "file 'nothere.vtk' not found"),
    ] {
        let n = t.scene.messages.len();
        let c = t.add(class, &[("filename", file)]);
        let msgs: Vec<String> = t.scene.messages[n..].iter().map(|m| m.to_string()).collect();
        assert!(msgs.iter().any(|m| m.contains(expected) && m.contains("error")), "{class}: {msgs:?}");
        if class != "MeshVTKLoader" {
            assert!(t.reals(c, "position").is_empty());
        }
    }
    // a loader without file keeps the Data given as attributes, and processes them at init
    let mut t = TestScene::new(&dir);
    let l = t.add("MeshGmshLoader", &[("position", "0 0 0  1 0 0  1 1 0  0 1 0"), ("triangles", "0 1 3  1 2 3"), ("translation", "1 0 0")]);
    assert!(!t.scene.has_errors());
    init_scene(&mut t.scene).unwrap();
    assert_eq!(&t.reals(l, "position")[..6], &[1.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
    assert_eq!(t.count(l, "edges", 2), 5);
    // init twice does not transform twice
    init_scene(&mut t.scene).unwrap();
    assert_eq!(&t.reals(l, "position")[..3], &[1.0, 0.0, 0.0]);
}
