//! The parser must never panic: truncated scenes, garbage, and random
//! mutations of real scenes (deterministic PRNG, fixed seeds).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use settee_scene::{parse_scene_str, DataPath, SceneError};

mod support;

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const FALLBACK_SCENE: &str = r#"<?xml version="1.0"?>
<!-- fallback scene used when the SOFA suite is absent -->
<Node name="root" dt="0.02" gravity="0 -10 0">
    <include href="../FEMBAR-common.xml"/>
    <Node name="child">
        <MechanicalObject name="mo" position="0 0 0&#x0A;&#x09;1 1 1" />
        <BoxConstraint box="-1 -1 -1 1 1 1"/>
        <Object type="UniformMass" totalMass="1"/>
        <CGLinearSolver><Attribute type="iterations"><Data value="25"/></Attribute></CGLinearSolver>
    </Node>
</Node>
"#;

const SNIPPETS: &[&str] = &[
    "<",
    ">",
    "/>",
    "</Node>",
    "<Node>",
    "<Node name=\"Group\">",
    "<include href=\"../FEMBAR-common.xml\"/>",
    "<include href=\"Objects/BoxConstraint.xml\" box=\"1\" name=\"_Merge_\"/>",
    "<include href=\"Objects/TorusFEM.xml\" name=\"_Group_\" dx=\"1\" FEM__method=\"small\"/>",
    "<include/>",
    "<BoxConstraint box=\"1 2 3\" name=\"x\"/>",
    "<Attribute type=\"name\"><Data value=\"v\"/></Attribute>",
    "<Data/>",
    "<X type=\"y\">",
    "&#x0A;",
    "&#xFFFFFFFF;",
    "&amp;",
    "&",
    "\"",
    "'",
    "=",
    "<!--",
    "-->",
    "<![CDATA[",
    "]]>",
    "<?",
    "?>",
    "<!DOCTYPE x>",
    "\r\n",
    "\u{feff}",
    "é",
];

/// A few suite scenes (when the suite is there, see [`support::suite`]) and a built-in one.
fn scenes() -> Vec<(PathBuf, String)> {
    let base = support::suite().map(|s| s.join("scenes")).unwrap_or_else(|| PathBuf::from("sofa-suite/scenes"));
    let rels = [
        "Component/LinearSolver/Direct/FEMBAR_SparseLDLSolver.scn",
        "Component/Topology/Container/Grid/RegularGridTopology.scn",
        "Demos/chainHybrid.scn",
        "Component/ODESolver/Backward/EulerImplicitSolver.scn",
    ];
    let mut v: Vec<(PathBuf, String)> = rels
        .iter()
        .filter_map(|r| {
            let p = base.join(r);
            std::fs::read_to_string(&p).ok().map(|t| (p, t))
        })
        .collect();
    v.push((base.join("Component/LinearSolver/Direct/fallback.scn"), FALLBACK_SCENE.into()));
    v
}

/// The suite's `data/` directory as data path (whether it exists or not: the garbage tests do not
/// need it).
fn data_path() -> DataPath {
    DataPath::new([support::suite_dir().join("data")])
}

fn no_panic(text: &str, path: &Path, what: &str) -> Result<(), SceneError> {
    let dp = data_path();
    let reg = |c: &str| c != "BoxConstraint";
    match catch_unwind(AssertUnwindSafe(|| parse_scene_str(text, path, &dp, &reg))) {
        Ok(r) => r.map(|_| ()),
        Err(_) => panic!("parser panicked on {what}; input:\n{text:?}"),
    }
}

#[test]
fn truncated_scenes_do_not_panic() {
    let mut errors = 0;
    let mut total = 0;
    for (path, text) in scenes() {
        for cut in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
            total += 1;
            let r = no_panic(&text[..cut], &path, &format!("{} truncated at {cut}", path.display()));
            if let Err(e) = r {
                errors += 1;
                // every error must carry a readable message
                assert!(!e.to_string().is_empty());
            }
        }
    }
    // almost every strict prefix is malformed
    assert!(errors * 10 >= total * 9, "{errors}/{total}");
}

#[test]
fn garbage_does_not_panic() {
    let mut rng = Rng(0x5EED_0001);
    let alphabet = b"<>/=\"'&;#x!?-[] \n\tabcNodeObjectincludehref0123456789";
    let path = Path::new("/nonexistent/garbage.scn");
    for i in 0..3000 {
        let len = rng.below(300);
        let bytes: Vec<u8> =
            if i % 2 == 0 { (0..len).map(|_| rng.next() as u8).collect() } else { (0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect() };
        let text = String::from_utf8_lossy(&bytes);
        let _ = no_panic(&text, path, &format!("garbage #{i}"));
    }
}

#[test]
fn random_mutations_of_real_scenes_do_not_panic() {
    let scenes = scenes();
    let mut rng = Rng(0xC0FF_EE00);
    let mut ok = 0;
    let iterations = 20000;
    for i in 0..iterations {
        let (path, text) = &scenes[rng.below(scenes.len())];
        let mut bytes = text.as_bytes().to_vec();
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(bytes.len() + 1);
            match rng.below(5) {
                0 => {
                    if at < bytes.len() {
                        bytes[at] = rng.next() as u8;
                    }
                }
                1 => {
                    let end = (at + rng.below(64)).min(bytes.len());
                    bytes.drain(at..end);
                }
                2 => {
                    let end = (at + rng.below(256)).min(bytes.len());
                    let chunk: Vec<u8> = bytes[at..end].to_vec();
                    let to = rng.below(bytes.len() + 1);
                    bytes.splice(to..to, chunk);
                }
                _ => {
                    let s = SNIPPETS[rng.below(SNIPPETS.len())].as_bytes();
                    bytes.splice(at..at, s.iter().copied());
                }
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if no_panic(&text, path, &format!("mutation #{i} of {}", path.display())).is_ok() {
            ok += 1;
        }
    }
    eprintln!("{ok}/{iterations} mutated scenes still parsed");
}

#[test]
fn deep_nesting_is_bounded() {
    let path = Path::new("/nonexistent/deep.scn");
    // just inside the limit: parses
    let n = 250;
    let text = format!("{}{}", "<Node>".repeat(n), "</Node>".repeat(n));
    no_panic(&text, path, "deep nesting").unwrap();
    // far beyond: a clean error, no stack overflow
    let n = 100_000;
    let text = format!("{}{}", "<Node>".repeat(n), "</Node>".repeat(n));
    let e = no_panic(&text, path, "very deep nesting").unwrap_err();
    assert!(e.to_string().contains("nested deeper"), "{e}");
}
