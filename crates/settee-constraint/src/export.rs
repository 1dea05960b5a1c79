//! Exported constraint problems: `W`, `δfree`, the block structure, the solver's `λ` and error
//! history of one step, in a file that other tools (benchmarks, the solver report, Python)
//! read back without a scene. Format (docs/constraint-solvers.md):
//!
//! - one line of JSON (the header), terminated by `\n`;
//! - then the arrays the header's `arrays` lists, in that order, each as `len` little-endian
//!   IEEE-754 f64 values, nothing between them: `W` (`n·n`, row-major), `dfree` (`n`),
//!   `lambda` (`n`), `error_history` (one value per iteration).
//!
//! Header fields: `format` (`"settee-constraint-problem"`), `version` (1), `n`, `scene`,
//! `solver` (class name), `step` (1-based), `time`, `iterations`, `error`, `converged`,
//! `tolerance`, `max_iterations`, `scale_tolerance`, `all_verified`, `sor`, `blocks` (each
//! `{"start", "size", "kind", "mu", "tolerance"}`, kind one of `unilateral`, `friction`,
//! `bilateral`, `other`) and `arrays` (each `{"name", "len"}`). Non-finite scalars of the header
//! are written as `null` and read back as NaN; the arrays keep every bit.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

use serde_json::{json, Value};
use settee_core::constraint::{ConstraintProblem, ConstraintResolution, DenseMatrix, ResolutionKind};

use crate::metrics::{describe_blocks, BlockDesc};
use crate::resolution::{
    Bilateral3DofResolution, BilateralNDofResolution, BilateralResolution, UnilateralResolution, UnilateralWithFrictionResolution,
};

/// The header's `format` value.
pub const FORMAT: &str = "settee-constraint-problem";
/// The version this code writes and reads.
pub const VERSION: u64 = 1;

/// One exported constraint problem.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExportedProblem {
    pub scene: String,
    pub solver: String,
    /// 1-based step the problem was solved at.
    pub step: usize,
    /// Simulation time at the start of that step.
    pub time: f64,
    pub w: DenseMatrix,
    pub dfree: Vec<f64>,
    /// The solver's multipliers.
    pub lambda: Vec<f64>,
    /// The solver's error after each iteration.
    pub error_history: Vec<f64>,
    pub blocks: Vec<BlockDesc>,
    /// The solver's iteration count (SOFA's `currentIterations`).
    pub iterations: usize,
    pub error: f64,
    pub converged: bool,
    pub tolerance: f64,
    pub max_iterations: usize,
    pub scale_tolerance: bool,
    pub all_verified: bool,
    pub sor: f64,
}

impl ExportedProblem {
    pub fn n(&self) -> usize {
        self.w.n
    }

    /// A copy of a solver's problem; `converged` is `error < effective tolerance`.
    pub fn from_problem(p: &ConstraintProblem) -> ExportedProblem {
        ExportedProblem {
            w: p.w.clone(),
            dfree: p.dfree.clone(),
            lambda: p.lambda.clone(),
            error_history: p.error_history.clone(),
            blocks: describe_blocks(p),
            iterations: p.current_iterations,
            error: p.current_error,
            converged: p.current_error < p.effective_tolerance(),
            tolerance: p.tolerance,
            max_iterations: p.max_iterations,
            scale_tolerance: p.scale_tolerance,
            all_verified: p.all_verified,
            sor: p.sor,
            ..Default::default()
        }
    }

    /// A fresh problem to solve again: `W`, `δfree`, the settings, one resolution per block
    /// (cold: no warm start, `λ = 0`). Fails on a block of kind `other`, whose law the file
    /// does not carry.
    pub fn to_problem(&self) -> Result<ConstraintProblem, String> {
        let n = self.n();
        let mut p = ConstraintProblem::default();
        p.clear(n);
        p.w = self.w.clone();
        p.dfree.copy_from_slice(&self.dfree);
        p.tolerance = self.tolerance;
        p.max_iterations = self.max_iterations;
        p.scale_tolerance = self.scale_tolerance;
        p.all_verified = self.all_verified;
        p.sor = self.sor;
        for b in &self.blocks {
            let r: Box<dyn ConstraintResolution> = match (b.kind, b.size) {
                (ResolutionKind::Unilateral, 1) => Box::new(UnilateralResolution::new()),
                (ResolutionKind::Friction { mu }, 3) => Box::new(UnilateralWithFrictionResolution::new(mu).with_tolerance(b.tolerance)),
                (ResolutionKind::Bilateral, 1) => Box::new(BilateralResolution::new(None)),
                (ResolutionKind::Bilateral, 3) => Box::new(Bilateral3DofResolution::new(None)),
                (ResolutionKind::Bilateral, m) => Box::new(BilateralNDofResolution::new(m)),
                (k, m) => return Err(format!("block at row {} ({} rows, kind {}) cannot be rebuilt", b.start, m, k.name())),
            };
            p.resolutions[b.start] = Some(r);
        }
        Ok(p)
    }
}

fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map(Value::Number).unwrap_or(Value::Null)
}

/// Writes `e` to `out` in the format above.
pub fn write_to(out: &mut impl Write, e: &ExportedProblem) -> std::io::Result<()> {
    let n = e.n();
    let blocks: Vec<Value> = e
        .blocks
        .iter()
        .map(|b| json!({"start": b.start, "size": b.size, "kind": b.kind.name(), "mu": num(b.kind.mu()), "tolerance": num(b.tolerance)}))
        .collect();
    let header = json!({
        "format": FORMAT,
        "version": VERSION,
        "n": n,
        "scene": e.scene,
        "solver": e.solver,
        "step": e.step,
        "time": num(e.time),
        "iterations": e.iterations,
        "error": num(e.error),
        "converged": e.converged,
        "tolerance": num(e.tolerance),
        "max_iterations": e.max_iterations,
        "scale_tolerance": e.scale_tolerance,
        "all_verified": e.all_verified,
        "sor": num(e.sor),
        "blocks": blocks,
        "arrays": [
            {"name": "W", "len": n * n},
            {"name": "dfree", "len": n},
            {"name": "lambda", "len": n},
            {"name": "error_history", "len": e.error_history.len()},
        ],
    });
    writeln!(out, "{header}")?;
    let mut buf = Vec::with_capacity(8 * (n * n + 2 * n + e.error_history.len()));
    for a in [&e.w.data, &e.dfree, &e.lambda, &e.error_history] {
        for x in a.iter() {
            buf.extend_from_slice(&x.to_le_bytes());
        }
    }
    out.write_all(&buf)
}

/// Writes `e` into the file `path`.
pub fn write(path: &Path, e: &ExportedProblem) -> Result<(), String> {
    let f = std::fs::File::create(path).map_err(|err| format!("cannot create {}: {err}", path.display()))?;
    let mut w = std::io::BufWriter::new(f);
    write_to(&mut w, e).and_then(|_| w.flush()).map_err(|err| format!("cannot write {}: {err}", path.display()))
}

fn field<'a>(h: &'a Value, k: &str) -> Result<&'a Value, String> {
    h.get(k).ok_or_else(|| format!("header has no `{k}`"))
}
fn uint(h: &Value, k: &str) -> Result<usize, String> {
    field(h, k)?.as_u64().map(|x| x as usize).ok_or_else(|| format!("header `{k}` is not a non-negative integer"))
}
fn real(h: &Value, k: &str) -> Result<f64, String> {
    match field(h, k)? {
        Value::Null => Ok(f64::NAN),
        v => v.as_f64().ok_or_else(|| format!("header `{k}` is not a number")),
    }
}
fn boolean(h: &Value, k: &str) -> Result<bool, String> {
    field(h, k)?.as_bool().ok_or_else(|| format!("header `{k}` is not a boolean"))
}
fn text(h: &Value, k: &str) -> Result<String, String> {
    field(h, k)?.as_str().map(str::to_string).ok_or_else(|| format!("header `{k}` is not a string"))
}

/// Reads a problem written by [`write_to`].
pub fn read_from(input: impl Read) -> Result<ExportedProblem, String> {
    let mut r = BufReader::new(input);
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line).map_err(|e| format!("cannot read the header: {e}"))?;
    let h: Value = serde_json::from_slice(&line).map_err(|e| format!("the header is not JSON: {e}"))?;
    if h.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(format!("not a {FORMAT} file"));
    }
    let version = uint(&h, "version")? as u64;
    if version != VERSION {
        return Err(format!("version {version} is not supported (this reader reads version {VERSION})"));
    }
    let n = uint(&h, "n")?;
    let mut blocks = Vec::new();
    for b in field(&h, "blocks")?.as_array().ok_or("header `blocks` is not an array")? {
        let (start, size) = (uint(b, "start")?, uint(b, "size")?);
        let kind = match text(b, "kind")?.as_str() {
            "unilateral" => ResolutionKind::Unilateral,
            "friction" => ResolutionKind::Friction { mu: real(b, "mu")? },
            "bilateral" => ResolutionKind::Bilateral,
            "other" => ResolutionKind::Other,
            k => return Err(format!("unknown block kind `{k}`")),
        };
        if size == 0 || start + size > n {
            return Err(format!("block at row {start} with {size} rows does not fit {n} rows"));
        }
        blocks.push(BlockDesc { start, size, kind, tolerance: real(b, "tolerance")? });
    }
    let mut arrays: Vec<(String, Vec<f64>)> = Vec::new();
    for a in field(&h, "arrays")?.as_array().ok_or("header `arrays` is not an array")? {
        let (name, len) = (text(a, "name")?, uint(a, "len")?);
        let bytes = len.checked_mul(8).ok_or("array too long")?;
        let mut raw = Vec::new();
        (&mut r).take(bytes as u64).read_to_end(&mut raw).map_err(|e| format!("cannot read array `{name}`: {e}"))?;
        if raw.len() != bytes {
            return Err(format!("array `{name}`: file ends after {} of {len} values", raw.len() / 8));
        }
        let v = raw.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
        arrays.push((name, v));
    }
    let mut take = |name: &str, len: usize| -> Result<Vec<f64>, String> {
        let i = arrays.iter().position(|(k, _)| k == name).ok_or_else(|| format!("no array `{name}`"))?;
        let v = arrays.swap_remove(i).1;
        if len != usize::MAX && v.len() != len {
            return Err(format!("array `{name}` has {} values, expected {len}", v.len()));
        }
        Ok(v)
    };
    let w = DenseMatrix { n, data: take("W", n * n)? };
    let dfree = take("dfree", n)?;
    let lambda = take("lambda", n)?;
    let error_history = take("error_history", usize::MAX)?;
    Ok(ExportedProblem {
        scene: text(&h, "scene")?,
        solver: text(&h, "solver")?,
        step: uint(&h, "step")?,
        time: real(&h, "time")?,
        w,
        dfree,
        lambda,
        error_history,
        blocks,
        iterations: uint(&h, "iterations")?,
        error: real(&h, "error")?,
        converged: boolean(&h, "converged")?,
        tolerance: real(&h, "tolerance")?,
        max_iterations: uint(&h, "max_iterations")?,
        scale_tolerance: boolean(&h, "scale_tolerance")?,
        all_verified: boolean(&h, "all_verified")?,
        sor: real(&h, "sor")?,
    })
}

/// Reads the file `path`.
pub fn read(path: &Path) -> Result<ExportedProblem, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    read_from(f).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses a step list: `7`, `3,9,12`, `10-20`, or a mix (`1,5-8`); steps are 1-based. Returns
/// the steps sorted, without duplicates.
pub fn parse_steps(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let parse = |x: &str| -> Result<usize, String> {
            let k: usize = x.trim().parse().map_err(|_| format!("`{x}` is not a step number"))?;
            if k == 0 {
                return Err("steps are numbered from 1".to_string());
            }
            Ok(k)
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (parse(a)?, parse(b)?);
                if b < a {
                    return Err(format!("empty step range `{part}`"));
                }
                out.extend(a..=b);
            }
            None => out.push(parse(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ExportedProblem {
        let n = 4;
        // Values whose bits a decimal round trip would lose or that are special.
        let data: Vec<f64> = (0..n * n).map(|i| (i as f64 + 0.1).sqrt() * if i % 3 == 0 { -1.0 } else { 1e-300 }).collect();
        ExportedProblem {
            scene: "a \"quoted\" scene.scn".into(),
            solver: "BlockGaussSeidelConstraintSolver".into(),
            step: 12,
            time: 0.11000000000000001,
            w: DenseMatrix { n, data },
            dfree: vec![-0.0, f64::MIN_POSITIVE / 2.0, 1.0 / 3.0, -7.25],
            lambda: vec![0.1, 0.2, f64::INFINITY, f64::NAN],
            error_history: vec![1.5, 0.25, 1e-17],
            blocks: vec![
                BlockDesc { start: 0, size: 3, kind: ResolutionKind::Friction { mu: 0.6 }, tolerance: 1e-9 },
                BlockDesc { start: 3, size: 1, kind: ResolutionKind::Bilateral, tolerance: 0.0 },
            ],
            iterations: 4,
            error: 1e-17,
            converged: true,
            tolerance: 0.001,
            max_iterations: 1000,
            scale_tolerance: true,
            all_verified: false,
            sor: 1.0,
        }
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn round_trip_keeps_every_bit() {
        let e = sample();
        let mut buf = Vec::new();
        write_to(&mut buf, &e).unwrap();
        // Header line + 16 + 4 + 4 + 3 values.
        let header_len = buf.iter().position(|&b| b == b'\n').unwrap() + 1;
        assert_eq!(buf.len() - header_len, 8 * (16 + 4 + 4 + 3));
        let r = read_from(buf.as_slice()).unwrap();
        assert_eq!(bits(&r.w.data), bits(&e.w.data));
        assert_eq!(bits(&r.dfree), bits(&e.dfree));
        assert_eq!(bits(&r.lambda), bits(&e.lambda));
        assert_eq!(bits(&r.error_history), bits(&e.error_history));
        assert_eq!(r.blocks, e.blocks);
        assert_eq!((r.scene.as_str(), r.solver.as_str(), r.step, r.iterations), (e.scene.as_str(), e.solver.as_str(), 12, 4));
        assert_eq!((r.time.to_bits(), r.error.to_bits(), r.tolerance, r.sor), (e.time.to_bits(), e.error.to_bits(), 0.001, 1.0));
        assert_eq!((r.converged, r.max_iterations, r.scale_tolerance, r.all_verified), (true, 1000, true, false));
        // Writing what was read gives the same bytes.
        let mut again = Vec::new();
        write_to(&mut again, &r).unwrap();
        assert_eq!(again, buf);
    }

    #[test]
    fn truncated_or_foreign_files_are_errors() {
        let mut buf = Vec::new();
        write_to(&mut buf, &sample()).unwrap();
        let err = read_from(&buf[..buf.len() - 5]).unwrap_err();
        assert!(err.contains("error_history"), "{err}");
        assert!(read_from(&b"{\"format\":\"other\"}\n"[..]).unwrap_err().contains("not a settee-constraint-problem"));
        assert!(read_from(&b"garbage"[..]).unwrap_err().contains("not JSON"));
    }

    #[test]
    fn to_problem_rebuilds_the_resolutions() {
        let e = sample();
        let p = e.to_problem().unwrap();
        assert_eq!(p.blocks(), vec![(0, 3), (3, 1)]);
        assert_eq!(describe_blocks(&p), e.blocks);
        assert_eq!(p.lambda, vec![0.0; 4]);
        assert_eq!(p.w, e.w);
        let mut bad = e.clone();
        bad.blocks[1].kind = ResolutionKind::Other;
        assert!(bad.to_problem().err().expect("kind other is refused").contains("row 3"));
    }

    #[test]
    fn step_lists() {
        assert_eq!(parse_steps("7").unwrap(), vec![7]);
        assert_eq!(parse_steps("9,3, 5-7,6").unwrap(), vec![3, 5, 6, 7, 9]);
        assert!(parse_steps("0").is_err());
        assert!(parse_steps("5-3").is_err());
        assert!(parse_steps("x").is_err());
    }
}
