//! `settee run --dump-topology` against SOFA's topology references, by file name (issue 21 §3):
//! for each of the suite's topology scenes, every container Settee writes has SOFA's reference
//! of the same name (index and container name) with the same records, and every reference it
//! does not write is a byte-for-byte copy of one it does (SOFA wrote the visual child nodes'
//! inherited container a second time; conformance/NOTES.md has the evidence).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use settee_regress::metric::topology_errors;
use settee_regress::reference::{read_topology_reference, TopologyRecord};

/// The scenes and step counts of `RegressionTopologyScenes.regression-tests`.
fn topology_scenes(suite: &Path) -> Vec<(String, usize)> {
    let list = std::fs::read_to_string(suite.join("RegressionTopologyScenes.regression-tests")).unwrap();
    list.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && l.contains(".scn"))
        .map(|l| {
            let mut w = l.split_whitespace();
            (w.next().unwrap().to_string(), w.next().unwrap().parse().unwrap())
        })
        .collect()
}

/// The `*_topology.txt.gz` files of `dir` whose name starts with `prefix`, by name.
fn topology_files(dir: &Path, prefix: &str) -> BTreeMap<String, PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let n = p.file_name()?.to_str()?.to_string();
            (n.starts_with(prefix) && n.ends_with("_topology.txt.gz")).then_some((n, p))
        })
        .collect()
}

/// Total of SOFA's topology metric over the reference's records (the reference may be a
/// truncated stream: its complete records are compared).
fn mismatch(reference: &[TopologyRecord], dumped: &[TopologyRecord]) -> u64 {
    assert!(dumped.len() >= reference.len(), "{} records dumped, {} in the reference", dumped.len(), reference.len());
    reference.iter().zip(dumped).map(|(r, d)| topology_errors(r, d).iter().sum::<u64>() + u64::from((r.time - d.time).abs() > 1e-8)).sum()
}

fn dump(suite: &Path, scene: &str, steps: usize, out: &Path, mapped: bool) {
    let path = suite.join("scenes").join(scene);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_settee"));
    cmd.current_dir(path.parent().unwrap()).arg("run").arg(path.file_name().unwrap());
    cmd.args(["--steps", &steps.to_string(), "--data-dir"]).arg(suite.join("data")).arg("--dump-topology").arg(out);
    if mapped {
        cmd.arg("--dump-mapped");
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{scene}: {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn every_dump_matches_sofas_reference_of_the_same_name() {
    let Some(suite) = settee_testkit::suite() else { return };
    let scenes = topology_scenes(&suite);
    assert_eq!(scenes.len(), 14);
    let root = std::env::temp_dir().join(format!("settee-topology-dumps-{}", std::process::id()));
    let (mut compared, mut duplicates) = (0, 0);
    for (scene, steps) in &scenes {
        let name = Path::new(scene).file_name().unwrap().to_str().unwrap().to_string();
        let out = root.join(&name);
        dump(&suite, scene, *steps, &out, false);
        let dumped = topology_files(&out, &format!("{name}.reference_"));
        let refdir = suite.join("references").join(Path::new(scene).parent().unwrap());
        let references = topology_files(&refdir, &format!("{name}.reference_"));
        assert!(!dumped.is_empty(), "{scene}: nothing dumped");
        let mut used = Vec::new();
        for (file, path) in &dumped {
            let reference = references.get(file).unwrap_or_else(|| panic!("{scene}: {file} has no SOFA reference of that name"));
            let r = read_topology_reference(reference).unwrap();
            assert_eq!(mismatch(&r, &read_topology_reference(path).unwrap()), 0, "{scene}: {file}");
            used.push(r);
            compared += 1;
        }
        // A reference Settee does not write repeats one it does: the same records, byte for byte.
        for (file, path) in references.iter().filter(|(f, _)| !dumped.contains_key(*f)) {
            let r = read_topology_reference(path).unwrap();
            assert!(used.contains(&r), "{scene}: SOFA's {file} is not written and repeats no written container");
            duplicates += 1;
        }
    }
    std::fs::remove_dir_all(&root).ok();
    assert_eq!((compared, duplicates), (27, 7), "containers compared, unused duplicate references");
}

#[test]
fn dump_mapped_adds_the_visual_nodes_inherited_containers() {
    let Some(suite) = settee_testkit::suite() else { return };
    let scene = "Component/Topology/Container/Dynamic/RemovingTetra2TriangleProcess.scn";
    let root = std::env::temp_dir().join(format!("settee-topology-dumps-mapped-{}", std::process::id()));
    let name = "RemovingTetra2TriangleProcess.scn";
    let (plain, mapped) = (root.join("plain"), root.join("mapped"));
    dump(&suite, scene, 30, &plain, false);
    dump(&suite, scene, 30, &mapped, true);
    let names = |d: &Path| topology_files(d, name).into_keys().map(|n| n[name.len() + ".reference_".len()..].to_string()).collect::<Vec<_>>();
    assert_eq!(
        names(&plain),
        ["0_Tetra_topo_topology.txt.gz", "1_Triangle_topo_topology.txt.gz", "2_Tetra_topo_topology.txt.gz", "3_Triangle_topo_topology.txt.gz"]
    );
    // Each tetrahedral body's Visu node writes its parent's triangles once more.
    let m = names(&mapped);
    assert_eq!(m.len(), 6, "{m:?}");
    let read = |d: &Path, f: &str| read_topology_reference(&d.join(format!("{name}.reference_{f}"))).unwrap();
    assert_eq!(read(&mapped, "1_Triangle_topo_topology.txt.gz"), read(&mapped, "2_Triangle_topo_topology.txt.gz"));
    assert_eq!(read(&plain, "2_Tetra_topo_topology.txt.gz"), read(&mapped, "3_Tetra_topo_topology.txt.gz"));
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn dump_mapped_alone_is_an_error() {
    let o = Command::new(env!("CARGO_BIN_EXE_settee")).args(["run", "scene.scn", "--dump-mapped"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--dump-mapped needs --dump DIR or --dump-topology DIR"));
}
