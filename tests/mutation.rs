//! Deterministic mutation test over SOFA's suite scenes and the Compliant examples (issue 9 §5): every scene is mutated in
//! seeded ways (an attribute deleted or duplicated, a value replaced by garbage, NaN, a huge or
//! negative number, non-ASCII text; the file truncated; two elements swapped; a component
//! renamed), then loaded (`check`) and, for the smallest scenes that still load, run a few steps.
//!
//! Asserted for every case: no panic, no abort, no case slower than the guard, and every
//! rejection carries an error diagnostic with a position (file:line:col). A failure prints the
//! scene and the mutation, which is enough to reproduce it (the generator is deterministic).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use settee::{load_with, LoadOptions};
use settee_core::Severity;

/// At least this many `check` cases and `run` cases.
const CHECK_CASES: usize = 2000;
const RUN_CASES: usize = 200;
/// Steps of a `run` case.
const RUN_STEPS: usize = 3;
/// A case taking longer than this fails the test.
const CASE_GUARD: Duration = Duration::from_secs(20);

/// SplitMix64: small, seeded, the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// Values put in place of an attribute's value.
const GARBAGE: &[&str] = &[
    "",
    "abc",
    "nan",
    "NaN 0 0",
    "inf",
    "-inf 1 2",
    "1e308",
    "-1e308",
    "99999999999",
    "99999999999 99999999999 99999999999",
    "-1",
    "-7 -7 -7",
    "0",
    "1.5",
    "éè",
    "0 90° 0",
    "\u{1F600}",
    "@/nowhere.position",
    "@",
    "0-99999999999",
    "1 2",
    "true",
    "0x10",
    "1e-320",
    "  ",
    "&amp;&lt;",
];

/// An attribute `name="value"` of the text: byte spans of the whole attribute and of the value.
struct AttrSpan {
    whole: (usize, usize),
    value: (usize, usize),
}

fn attributes(text: &str) -> Vec<AttrSpan> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'=' && (b[i + 1] == b'"' || b[i + 1] == b'\'') {
            let q = b[i + 1];
            let mut s = i;
            while s > 0 && (b[s - 1].is_ascii_alphanumeric() || b"_:.-".contains(&b[s - 1])) {
                s -= 1;
            }
            if let Some(len) = b[i + 2..].iter().position(|&c| c == q) {
                if s < i {
                    out.push(AttrSpan { whole: (s, i + 2 + len + 1), value: (i + 2, i + 2 + len) });
                }
                i += 2 + len + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Line spans of single-line self-closing elements (`<Class .../>`).
fn element_lines(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut off = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('<') && !t.starts_with("</") && !t.starts_with("<!") && !t.starts_with("<?") && t.ends_with("/>") {
            out.push((off, off + line.trim_end_matches('\n').len()));
        }
        off += line.len();
    }
    out
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One mutation of `text`, described for the failure message.
fn mutate(text: &str, rng: &mut Rng, classes: &[String]) -> (String, String) {
    let attrs = attributes(text);
    let elems = element_lines(text);
    let splice = |(a, b): (usize, usize), with: &str| format!("{}{}{}", &text[..a], with, &text[b..]);
    for _ in 0..8 {
        match rng.below(10) {
            0 if !attrs.is_empty() => {
                let a = rng.pick(&attrs);
                return (splice(a.whole, ""), format!("delete attribute `{}`", &text[a.whole.0..a.whole.1]));
            }
            1 if !attrs.is_empty() => {
                let a = rng.pick(&attrs);
                let dup = format!("{0} {0}", &text[a.whole.0..a.whole.1]);
                return (splice(a.whole, &dup), format!("duplicate attribute `{}`", &text[a.whole.0..a.whole.1]));
            }
            2..=5 if !attrs.is_empty() => {
                let a = rng.pick(&attrs);
                let g = *rng.pick(GARBAGE);
                return (splice(a.value, g), format!("value of `{}` replaced by {g:?}", &text[a.whole.0..a.whole.1]));
            }
            6 => {
                let at = floor_char_boundary(text, rng.below(text.len()));
                return (text[..at].to_string(), format!("truncated at byte {at}"));
            }
            7 if elems.len() >= 2 => {
                let (i, j) = (rng.below(elems.len()), rng.below(elems.len()));
                let (i, j) = (i.min(j), i.max(j));
                if i == j {
                    continue;
                }
                let (a, b) = (elems[i], elems[j]);
                let swapped = format!("{}{}{}{}{}", &text[..a.0], &text[b.0..b.1], &text[a.1..b.0], &text[a.0..a.1], &text[b.1..]);
                return (swapped, format!("swap `{}` and `{}`", text[a.0..a.1].trim(), text[b.0..b.1].trim()));
            }
            8 | 9 if !elems.is_empty() => {
                let (s, e) = *rng.pick(&elems);
                let line = &text[s..e];
                let lt = s + line.find('<').unwrap_or(0) + 1;
                let name_end = lt + text[lt..e].find(|c: char| c.is_whitespace() || c == '/' || c == '>').unwrap_or(0);
                if name_end == lt {
                    continue;
                }
                let new = if rng.below(3) == 0 { format!("{}Xyz", &text[lt..name_end]) } else { rng.pick(classes).clone() };
                return (splice((lt, name_end), &new), format!("rename `{}` to `{new}`", &text[lt..name_end]));
            }
            _ => {}
        }
    }
    let at = floor_char_boundary(text, text.len() / 2);
    (text[..at].to_string(), format!("truncated at byte {at}"))
}

/// Runs `f` on a worker thread with a time guard; a panic becomes `Err`.
fn guarded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(f));
            let _ = tx.send(r);
        })
        .expect("spawn a case thread");
    match rx.recv_timeout(CASE_GUARD) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(p)) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(format!("PANIC in {what}: {msg}"))
        }
        Err(_) => Err(format!("TIMEOUT ({CASE_GUARD:?}) in {what}")),
    }
}

/// What loading a mutated scene did.
enum Loaded {
    Ok { dofs: usize },
    Rejected,
}

fn check_case(path: &Path, dirs: &[PathBuf]) -> Result<Loaded, String> {
    let factory = settee::factory();
    match load_with(path, &factory, &LoadOptions::with_data_dirs(dirs)) {
        Ok(l) => Ok(Loaded::Ok { dofs: l.scene.store.states.values().map(|s| s.size).sum() }),
        Err(f) => {
            let errors: Vec<_> = f.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
            if errors.is_empty() {
                return Err("rejected without an error diagnostic".into());
            }
            if let Some(e) = errors.iter().find(|e| e.pos.is_none()) {
                return Err(format!("rejected with an error without a position: {e}"));
            }
            Ok(Loaded::Rejected)
        }
    }
}

fn run_case(path: &Path, dirs: &[PathBuf]) -> Result<(), String> {
    let factory = settee::factory();
    let Ok(mut l) = load_with(path, &factory, &LoadOptions::with_data_dirs(dirs)) else {
        return Ok(());
    };
    // A step may fail (divergence, a solver refusing the mutated problem): only panics,
    // aborts and hangs are bugs here.
    let _ = settee::run::simulate(&mut l.scene, RUN_STEPS, &mut []);
    Ok(())
}

fn scenes(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scenes(&p, out);
        } else if p.extension().is_some_and(|e| e == "scn") {
            out.push(p);
        }
    }
}

#[test]
fn mutated_suite_scenes_never_crash_and_rejections_are_positioned() {
    let Some(suite) = settee_tests::suite() else { return };
    // Sizes a mutation makes plausible (a few million DOFs) stay small and fast here.
    std::env::set_var(settee_core::budget::MEMORY_BUDGET_ENV, "512M");
    let t0 = Instant::now();
    let mut files = Vec::new();
    scenes(&suite.join("scenes"), &mut files);
    assert!(files.len() >= 50, "expected the suite's scenes under {}", suite.join("scenes").display());
    // The Compliant plugin's examples: small scenes, so many of them reach the run cases.
    let compliant = suite.join("../compliant-scenes");
    assert!(compliant.is_dir(), "expected the Compliant examples at {}", compliant.display());
    scenes(&compliant, &mut files);
    let texts: Vec<(PathBuf, String)> = files.iter().filter_map(|p| std::fs::read_to_string(p).ok().map(|t| (p.clone(), t))).collect();
    let mut classes: Vec<String> = texts
        .iter()
        .flat_map(|(_, t)| {
            element_lines(t).into_iter().map(move |(s, e)| {
                t[s..e].trim().trim_start_matches('<').split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or("").to_string()
            })
        })
        .filter(|c| !c.is_empty())
        .collect();
    classes.sort();
    classes.dedup();

    let tmp = std::env::temp_dir().join(format!("settee-mutation-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let per_scene = CHECK_CASES.div_ceil(texts.len());
    let mut rng = Rng(0x5e77_ee09);
    let mut failures = Vec::new();
    let mut loadable: Vec<(usize, PathBuf, Vec<PathBuf>, String)> = Vec::new();
    let (mut n_check, mut n_rejected) = (0, 0);
    for (k, (orig, text)) in texts.iter().enumerate() {
        let dirs = vec![suite.join("data"), orig.parent().unwrap().to_path_buf()];
        for m in 0..per_scene {
            let (mutated, what) = mutate(text, &mut rng, &classes);
            // Beside nothing: relative files resolve through the data path (suite data, then
            // the original scene's directory).
            let p = tmp.join(format!("s{k:03}_m{m:02}.scn"));
            std::fs::write(&p, &mutated).unwrap();
            let label = format!("{} [{what}] ({})", orig.strip_prefix(&suite).unwrap_or(orig).display(), p.display());
            let (p2, d2) = (p.clone(), dirs.clone());
            n_check += 1;
            match guarded(&label, move || check_case(&p2, &d2)) {
                Ok(Ok(Loaded::Ok { dofs })) => loadable.push((dofs, p, dirs.clone(), label)),
                Ok(Ok(Loaded::Rejected)) => n_rejected += 1,
                Ok(Err(e)) => failures.push(format!("check {label}: {e}")),
                Err(e) => failures.push(format!("check {label}: {e}")),
            }
        }
    }
    let t_check = t0.elapsed();

    // Short runs of the smallest loadable mutated scenes.
    loadable.sort_by_key(|(dofs, ..)| *dofs);
    let mut n_run = 0;
    for (_, p, dirs, label) in loadable.into_iter().take(RUN_CASES) {
        n_run += 1;
        match guarded(&label, move || run_case(&p, &dirs)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) | Err(e) => failures.push(format!("run {label}: {e}")),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!(
        "mutation: {n_check} check cases ({n_rejected} rejected) in {:.1} s, {n_run} run cases of {RUN_STEPS} steps, {:.1} s in all",
        t_check.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), n_check + n_run, failures.join("\n"));
    assert!(n_check >= CHECK_CASES, "only {n_check} check cases");
    assert!(n_run >= RUN_CASES, "only {n_run} run cases (too few mutated scenes loaded)");
}

/// Sizes and activation, mutated on purpose rather than at random: every Node deactivated
/// (`activated="0"`, the root included), and every size-like Data of every class the scenes use
/// (integer Data, and the resolutions `n`/`resolution`) set to a huge, a negative and the
/// largest 32-bit value. A size goes through the memory budget before anything is allocated,
/// and a deactivated node is skipped as SOFA skips it: positioned errors or clean runs, never a
/// panic, an abort or a hang.
#[test]
fn activation_and_every_size_like_data_never_crash() {
    let Some(suite) = settee_tests::suite() else { return };
    std::env::set_var(settee_core::budget::MEMORY_BUDGET_ENV, "512M");
    let t0 = Instant::now();
    let mut files = Vec::new();
    scenes(&suite.join("scenes"), &mut files);
    scenes(&suite.join("../compliant-scenes"), &mut files);
    let factory = settee::factory();
    let tmp = std::env::temp_dir().join(format!("settee-mutation-sizes-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut failures = Vec::new();
    let mut covered: Vec<(String, &'static str)> = Vec::new();
    let (mut n_check, mut n_run, mut n_activation) = (0, 0, 0);
    let serial = std::cell::Cell::new(0usize);
    let case = |mutated: String, what: String, orig: &Path, run: bool, failures: &mut Vec<String>| -> usize {
        let dirs = vec![suite.join("data"), orig.parent().unwrap().to_path_buf()];
        serial.set(serial.get() + 1);
        let p = tmp.join(format!("c{:05}.scn", serial.get()));
        std::fs::write(&p, &mutated).unwrap();
        let label = format!("{} [{what}]", orig.strip_prefix(&suite).unwrap_or(orig).display());
        let (p2, d2) = (p.clone(), dirs.clone());
        let mut ran = 0;
        match guarded(&label, move || check_case(&p2, &d2)) {
            Ok(Ok(_)) => {}
            Ok(Err(e)) | Err(e) => failures.push(format!("check {label}: {e}")),
        }
        if run {
            ran = 1;
            match guarded(&label, move || run_case(&p, &dirs)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) | Err(e) => failures.push(format!("run {label}: {e}")),
            }
        }
        ran
    };
    for orig in &files {
        let Ok(text) = std::fs::read_to_string(orig) else { continue };
        // Every node deactivated in turn (at most 4 per scene), the root first.
        let nodes: Vec<usize> = text.match_indices("<Node").map(|(i, _)| i + "<Node".len()).collect();
        for &at in nodes.iter().take(4) {
            let mutated = format!("{} activated=\"0\"{}", &text[..at], &text[at..]);
            n_check += 1;
            n_activation += 1;
            n_run += case(mutated, format!("activated=\"0\" on the node at byte {at}"), orig, true, &mut failures);
        }
        // Every size-like Data of the classes of this scene not covered by an earlier scene.
        for (s, e) in element_lines(&text) {
            let line = &text[s..e];
            let class_name = line.trim().trim_start_matches('<').split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or("");
            let Some(class) = factory.class(class_name) else { continue };
            let sizes = class.data.iter().flat_map(|t| t.iter()).filter(|d| {
                matches!(d.kind, settee_core::DataKind::Int)
                    || (matches!(d.kind, settee_core::DataKind::Fixed(_)) && ["n", "resolution"].contains(&d.name))
            });
            for d in sizes {
                if covered.iter().any(|(c, n)| c == class.name && *n == d.name) {
                    continue;
                }
                covered.push((class.name.to_string(), d.name));
                let lt = s + line.find('<').unwrap() + 1 + class_name.len();
                for value in ["182445946", "-1", "4294967295"] {
                    let v = match d.kind {
                        settee_core::DataKind::Fixed(k) => vec![value; k].join(" "),
                        _ => value.to_string(),
                    };
                    // Replace the attribute when the element has it, else add it.
                    let existing = attributes(line).into_iter().find(|a| line[a.whole.0..a.whole.1].starts_with(&format!("{}=", d.name)));
                    let mutated = match existing {
                        Some(a) => format!("{}{}{}", &text[..s + a.value.0], v, &text[s + a.value.1..]),
                        None => format!("{} {}=\"{v}\"{}", &text[..lt], d.name, &text[lt..]),
                    };
                    n_check += 1;
                    n_run += case(mutated, format!("{}.{}={v}", class.name, d.name), orig, true, &mut failures);
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!(
        "size and activation mutations: {n_check} check cases ({n_activation} deactivated nodes, {} size-like Data of {} classes), {n_run} runs, {:.1} s",
        covered.len(),
        {
            let mut c: Vec<&String> = covered.iter().map(|(c, _)| c).collect();
            c.sort();
            c.dedup();
            c.len()
        },
        t0.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{} cases failed:\n{}", failures.len(), failures.join("\n"));
    assert!(n_activation >= 100, "only {n_activation} deactivation cases");
    assert!(covered.len() >= 40, "only {} size-like Data covered", covered.len());
}
