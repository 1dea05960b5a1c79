//! Settee's own reference trajectories of the Compliant plugin's example scenes.
//!
//! SOFA never recorded references for these scenes (compliant spec §0), so the project keeps its
//! own: `conformance/compliant/compliant.regression-tests` lists the scenes in SOFA's list format
//! (`scene steps epsilon mapped last_only period`, scenes relative to `../shared/compliant-scenes`)
//! and the references sit beside it, in SOFA's reference format with every digit printed. This
//! test runs each scene and compares every selected state at every recorded step start; a change
//! that moves a trajectory fails here until the references are regenerated on purpose with
//! `scripts/bless-compliant` (which runs this test with `SETTEE_BLESS=1`).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use settee::dump::select_states;
use settee_core::VecId;
use settee_regress::list::RegressionList;
use settee_regress::reference::{read_state_reference, state_reference_path};

fn conformance_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("conformance/compliant")
}

/// One record with every digit (Rust's shortest round-trip form), in SOFA's layout.
fn record(t: f64, x: &[f64], v: &[f64]) -> String {
    let mut s = format!("T= {t}\n  X=");
    for a in x {
        let _ = write!(s, " {a}");
    }
    s.push_str("\n  V=");
    for a in v {
        let _ = write!(s, " {a}");
    }
    s.push('\n');
    s
}

fn write_gz(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("reference directory");
    let f = std::fs::File::create(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut z = flate2::write::GzEncoder::new(f, flate2::Compression::best());
    z.write_all(text.as_bytes()).expect("write");
    z.finish().expect("finish");
}

#[test]
fn compliant_example_scenes_keep_their_trajectories() {
    let Some(suite) = settee_tests::suite() else { return };
    let scenes = suite.join("../compliant-scenes");
    assert!(scenes.is_dir(), "{} is missing", scenes.display());
    let bless = std::env::var("SETTEE_BLESS").is_ok_and(|v| v == "1");
    let list = RegressionList::from_file(&conformance_dir().join("compliant.regression-tests")).expect("the list");
    assert!(list.problems.is_empty(), "{:?}", list.problems);
    let factory = settee::factory();
    let mut failures = Vec::new();
    for entry in &list.entries {
        let path = scenes.join(&entry.scene);
        let mut scene = settee::load(&path, &factory, &[suite.join("data")]).unwrap_or_else(|f| panic!("{}: {}", entry.scene, f.first_error())).scene;
        let selected = select_states(&scene, entry.mapped);
        let base = conformance_dir().join(format!("{}.reference", entry.scene));
        let period = entry.period.max(1);
        let mut texts = vec![String::new(); selected.len()];
        let mut references = Vec::new();
        if !bless {
            for s in &selected {
                let p = state_reference_path(&base, s.index, &s.name);
                let r = read_state_reference(&p).unwrap_or_else(|e| panic!("{}: {e} (bless with scripts/bless-compliant)", p.display()));
                references.push(r);
            }
        }
        let dt = scene.root().context.dt;
        let mut worst = (0.0f64, String::new());
        for k in 0..entry.steps {
            if k % period == 0 {
                let t = scene.root().context.time;
                for (i, s) in selected.iter().enumerate() {
                    let st = scene.store.get(s.state);
                    let (x, v) = (st.read(VecId::POSITION), st.read(VecId::VELOCITY));
                    if bless {
                        texts[i].push_str(&record(t, x, v));
                        continue;
                    }
                    let Some(r) = references[i].get(k / period) else {
                        failures.push(format!("{}: state {} has no record for step {k}", entry.scene, s.name));
                        continue;
                    };
                    let rv = r.v.as_deref().unwrap_or(&[]);
                    assert_eq!((r.x.len(), rv.len()), (x.len(), v.len()), "{}: state {} changed size", entry.scene, s.name);
                    for (a, b) in r.x.iter().zip(x).chain(rv.iter().zip(v)) {
                        let d = (a - b).abs();
                        if d > worst.0 {
                            worst = (d, format!("state {} at t = {t}", s.name));
                        }
                    }
                }
            }
            settee_core::simulation::animate(&mut scene, dt).unwrap_or_else(|e| panic!("{}: {e}", entry.scene));
        }
        if bless {
            for (s, text) in selected.iter().zip(&texts) {
                write_gz(&state_reference_path(&base, s.index, &s.name), text);
            }
        } else if worst.0 > entry.epsilon {
            failures.push(format!("{}: max difference {:e} > {:e} ({})", entry.scene, worst.0, entry.epsilon, worst.1));
        }
    }
    assert!(failures.is_empty(), "trajectories moved (regenerate on purpose with scripts/bless-compliant):\n{}", failures.join("\n"));
}
