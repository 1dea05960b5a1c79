//! `settee run --export-constraint-problem`: a small version of scenes/spheres_on_sheet_lagrangian.scn
//! (16 spheres) is run by the binary, and what it writes is read back with
//! `settee_constraint::export::read` and solved again.

use std::path::PathBuf;
use std::process::Command;

use settee_constraint::export;
use settee_constraint::metrics::{describe_blocks, solution_metrics};
use settee_constraint::solvers::block_gauss_seidel;
use settee_core::constraint::ResolutionKind;

fn scene(spheres_per_side: usize) -> String {
    include_str!("../../../scenes/spheres_on_sheet_lagrangian.scn").replace(
        r#"n="23 1 23" min="-5.43 0.42 -5.57" max="5.57 0.42 5.43""#,
        &format!(r#"n="{s} 1 {s}" min="-1.43 0.42 -1.57" max="1.57 0.42 1.43""#, s = spheres_per_side),
    )
}

#[test]
fn exported_problems_read_back_and_solve_to_the_same_bits() {
    let dir = std::env::temp_dir().join(format!("settee-cp-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scn = dir.join("small.scn");
    let text = scene(4);
    assert!(text.contains(r#"n="4 1 4""#), "the test's scene edit no longer matches the scene file");
    std::fs::write(&scn, text).unwrap();
    let out_dir = dir.join("cp");
    let out = Command::new(env!("CARGO_BIN_EXE_settee"))
        .arg("run")
        .arg(&scn)
        .args(["--steps", "20", "--timing", "--export-constraint-problem", "19-20"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for step in [19usize, 20] {
        let path: PathBuf = out_dir.join(format!("step-{step}.scp"));
        assert!(stdout.contains(&format!("wrote {}", path.display())), "{stdout}");
        let e = export::read(&path).unwrap();
        assert_eq!((e.step, e.solver.as_str()), (step, "BlockGaussSeidelConstraintSolver"));
        assert!((e.time - (step - 1) as f64 * 0.01).abs() < 1e-12, "time {}", e.time);
        // Every sphere touches the sheet: at least 16 frictional contacts of 3 rows, μ = 0.5.
        let n = e.n();
        assert!(e.blocks.len() >= 16, "{} contacts", e.blocks.len());
        assert_eq!(n, 3 * e.blocks.len());
        for (k, b) in e.blocks.iter().enumerate() {
            assert_eq!((b.start, b.size, b.kind), (3 * k, 3, ResolutionKind::Friction { mu: 0.5 }));
        }
        assert_eq!((e.tolerance, e.max_iterations, e.scale_tolerance), (1e-6, 1000, true));
        assert_eq!(e.error_history.len() + 1, e.iterations);
        assert_eq!(e.error_history.last().copied(), Some(e.error));
        // W is a compliance: positive diagonal, symmetric up to rounding.
        for i in 0..n {
            assert!(e.w.get(i, i) > 0.0);
            for j in 0..i {
                let (a, b) = (e.w.get(i, j), e.w.get(j, i));
                assert!((a - b).abs() <= 1e-9 * e.w.get(i, i).max(e.w.get(j, j)), "W[{i}][{j}] = {a}, W[{j}][{i}] = {b}");
            }
        }
        // The contacts hold the sheet: positive normal forces, inside the cone.
        assert!(e.lambda.iter().step_by(3).any(|l| *l > 0.0));
        let m = solution_metrics(&e.w, &e.dfree, &e.lambda, &e.blocks);
        assert!(m.cone <= 1e-12, "cone violation {}", m.cone);
        // The timing line of that step reports the same measures.
        let line = stdout.lines().find(|l| l.starts_with(&format!("step {step:>5} "))).unwrap();
        assert!(line.contains(&format!("{n} rows, {} iterations", e.iterations)), "{line}");
        assert!(line.contains(&format!("complementarity {:.3e}", m.complementarity)), "{line}");
        // Contacts made by the collision response carry no warm start: solving the problem again
        // from λ = 0 with the same settings gives the solver's λ bit for bit.
        let mut p = e.to_problem().unwrap();
        assert_eq!(describe_blocks(&p), e.blocks);
        let o = block_gauss_seidel(&mut p);
        assert_eq!(o.converged, e.converged);
        assert_eq!(p.current_iterations, e.iterations);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&p.lambda), bits(&e.lambda));
        assert_eq!(bits(&p.error_history), bits(&e.error_history));
    }
    // A step past the end is refused before running.
    let out = Command::new(env!("CARGO_BIN_EXE_settee"))
        .arg("run")
        .arg(&scn)
        .args(["--steps", "2", "--export-constraint-problem", "5"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("only 2 steps"));
    let _ = std::fs::remove_dir_all(&dir);
}
