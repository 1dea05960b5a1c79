//! The examples ratchet (issue 21): every scene of SOFA's examples (`../shared/sofa-examples`)
//! is run for 10 steps as a new user would (`settee run SCENE --steps 10 --data-dir share
//! --data-dir examples`, from the scene's directory). The scenes that run are listed in
//! `conformance/examples-passing.txt`: none of them may fall back. `docs/examples.md`, generated
//! here, lists every scene with its status and, for the others, the reason.
//!
//! When a change makes more scenes run, or changes why one does not, regenerate both files:
//! `SETTEE_BLESS=1 cargo test --release -p settee --test examples_ratchet`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longer than any example takes (the slowest runs its 10 steps in a few seconds): a scene
/// still running then is reported as such, which makes the generated page differ and the
/// test fail, rather than hanging the test command.
const TIMEOUT: Duration = Duration::from_secs(300);

struct Outcome {
    scene: String,
    passed: bool,
    reason: String,
}

fn scenes(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scenes(&p, out);
        } else if p.extension().is_some_and(|e| e == "scn") {
            out.push(p);
        }
    }
}

/// The first error line of a failed run, with the data directories' prefixes removed so the
/// page is the same on every machine.
fn first_error(stderr: &str, examples: &Path, share: &Path) -> String {
    let line = stderr
        .lines()
        .find(|l| l.contains("error") || l.contains("panicked"))
        .or_else(|| stderr.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("no message")
        .trim();
    let mut line = line.replace(&format!("{}/", examples.display()), "").replace(&format!("{}/", share.display()), "share/");
    if let Some(i) = line.find("error: ") {
        // Keep the scene-relative position, drop nothing else.
        line = format!("{}{}", &line[..i], &line[i + "error: ".len()..]);
    }
    line.replace('|', "\\|")
}

/// What kind of obstacle an error is, for the page's reader (judged on the message, not on
/// the scene's name at its start).
fn category(scene: &str, reason: &str) -> &'static str {
    let reason = reason.strip_prefix(scene).unwrap_or(reason);
    if reason.contains("panicked") {
        "panic"
    } else if reason.contains("Cuda") || reason.contains("GPU") {
        "GPU-only"
    } else if reason.contains("external") {
        "external plugin or library"
    } else if reason.contains("not found") && reason.contains("file") {
        "absent data file"
    } else if reason.contains("unknown component") || reason.contains("not implemented yet") {
        "component not implemented yet"
    } else {
        "refused"
    }
}

fn run(bin: &Path, scene: &Path, examples: &Path, share: &Path, output: &Path) -> Outcome {
    let rel = scene.strip_prefix(examples).unwrap().to_string_lossy().replace('\\', "/");
    let mut child = Command::new(bin)
        .arg("run")
        .arg(scene)
        .args(["--steps", "10", "--data-dir"])
        .arg(share)
        .arg("--data-dir")
        .arg(examples)
        // The scenes' exporters write here, never next to the scenes (read-only test data).
        .arg("--output-dir")
        .arg(output)
        .current_dir(scene.parent().unwrap())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start settee run");
    // The stream is read on its own thread, so a chatty scene cannot block on a full pipe.
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stderr = reader.join().unwrap();
    match status {
        Some(s) if s.success() => Outcome { scene: rel, passed: true, reason: String::new() },
        Some(_) => Outcome { scene: rel, passed: false, reason: first_error(&stderr, examples, share) },
        None => Outcome { scene: rel, passed: false, reason: format!("still running after {} s", TIMEOUT.as_secs()) },
    }
}

fn page(outcomes: &[Outcome]) -> String {
    let passed = outcomes.iter().filter(|o| o.passed).count();
    let mut s = String::new();
    s.push_str("# SOFA's example scenes on Settee\n\n");
    s.push_str("<!-- Generated by crates/settee/tests/examples_ratchet.rs: do not edit by hand. -->\n\n");
    s.push_str(&format!(
        "**{passed} of {}** example scenes of SOFA (`../shared/sofa-examples/examples`) load and run 10 steps, each run as\n\
         `settee run SCENE --steps 10 --data-dir ../shared/sofa-examples/share --data-dir ../shared/sofa-examples/examples`\n\
         from the scene's directory. The test command keeps them running (`conformance/examples-passing.txt`).\n\n",
        outcomes.len()
    ));
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for o in outcomes.iter().filter(|o| !o.passed) {
        let k = category(&o.scene, &o.reason);
        match kinds.iter_mut().find(|(n, _)| *n == k) {
            Some(e) => e.1 += 1,
            None => kinds.push((k, 1)),
        }
    }
    kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    s.push_str("| why the others do not run | scenes |\n|---|---|\n");
    for (k, n) in kinds {
        s.push_str(&format!("| {k} | {n} |\n"));
    }
    s.push_str("\n| scene | runs | reason (the first error) |\n|---|---|---|\n");
    for o in outcomes {
        if o.passed {
            s.push_str(&format!("| {} | yes | |\n", o.scene));
        } else {
            s.push_str(&format!("| {} | no: {} | {} |\n", o.scene, category(&o.scene, &o.reason), o.reason));
        }
    }
    s
}

/// The files under `dir` modified since `t`.
fn written_since(dir: &Path, t: std::time::SystemTime, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            written_since(&p, t, out);
        } else if e.metadata().and_then(|m| m.modified()).is_ok_and(|m| m >= t) {
            out.push(p.display().to_string());
        }
    }
}

#[test]
fn sofa_s_example_scenes_that_ran_still_run() {
    let Some(root) = settee_testkit::shared_dir("sofa-examples") else {
        return;
    };
    let (examples, share) = (root.join("examples"), root.join("share"));
    let mut list = Vec::new();
    scenes(&examples, &mut list);
    assert!(list.len() > 400, "only {} scenes under {}", list.len(), examples.display());

    let bin = PathBuf::from(env!("CARGO_BIN_EXE_settee"));
    let started = std::time::SystemTime::now() - Duration::from_secs(1);
    // The scenes' exporters write here, never next to the scenes (read-only test data).
    let output = std::env::temp_dir().join(format!("settee-examples-output-{}", std::process::id()));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new((0..list.len()).map(|_| None).collect());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(scene) = list.get(i) else { break };
                let o = run(&bin, scene, &examples, &share, &output);
                results.lock().unwrap()[i] = Some(o);
            });
        }
    });
    let _ = std::fs::remove_dir_all(&output);
    let mut written = Vec::new();
    written_since(&root, started, &mut written);
    assert!(written.is_empty(), "the runs wrote into the shared test data (they must write into --output-dir):\n{}", written.join("\n"));
    let outcomes: Vec<Outcome> = results.into_inner().unwrap().into_iter().map(Option::unwrap).collect();

    let repo = settee_testkit::repository();
    let (list_path, page_path) = (repo.join("conformance/examples-passing.txt"), repo.join("docs/examples.md"));
    let passing: BTreeSet<&str> = outcomes.iter().filter(|o| o.passed).map(|o| o.scene.as_str()).collect();
    let generated = page(&outcomes);
    if std::env::var_os("SETTEE_BLESS").is_some() {
        let mut text = String::from("# SOFA example scenes (../shared/sofa-examples/examples) that run 10 steps: none may fall back.\n");
        text.push_str("# Regenerate with SETTEE_BLESS=1 cargo test --release -p settee --test examples_ratchet\n");
        for p in &passing {
            text.push_str(p);
            text.push('\n');
        }
        std::fs::write(&list_path, text).unwrap();
        std::fs::write(&page_path, &generated).unwrap();
        return;
    }

    let listed_text = std::fs::read_to_string(&list_path).unwrap_or_default();
    let listed: BTreeSet<&str> = listed_text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    let fell_back: Vec<String> = listed
        .iter()
        .filter(|s| !passing.contains(*s))
        .map(|s| {
            let reason = outcomes.iter().find(|o| o.scene == *s).map_or("no longer in the examples", |o| o.reason.as_str());
            format!("  {s}: {reason}")
        })
        .collect();
    assert!(fell_back.is_empty(), "{} example scenes no longer run:\n{}", fell_back.len(), fell_back.join("\n"));
    let new: Vec<&&str> = passing.iter().filter(|s| !listed.contains(*s)).collect();
    assert!(
        new.is_empty(),
        "{} example scenes now run but are not in conformance/examples-passing.txt ({:?}…): regenerate it with SETTEE_BLESS=1",
        new.len(),
        new.iter().take(5).collect::<Vec<_>>()
    );
    let current = std::fs::read_to_string(&page_path).unwrap_or_default();
    if current != generated {
        let old: BTreeSet<&str> = current.lines().collect();
        let changed: Vec<&str> = generated.lines().filter(|l| !old.contains(l)).take(10).collect();
        panic!("docs/examples.md is out of date (regenerate it with SETTEE_BLESS=1); new or changed lines:\n{}", changed.join("\n"));
    }
}
