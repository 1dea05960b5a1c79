//! End-to-end Rigid3 beams: BeamFEMForceField solved by BTDLinearSolver (block Thomas
//! algorithm) against SparseLDLSolver, and the static deflection of a cantilever under its own
//! weight against beam theory.

mod common;

use common::{load, steps as step};
use settee_core::VecId;

/// A chain of `n + 1` Rigid3 nodes one unit apart along x, clamped at node 0.
fn chain_scene(n: usize, solver: &str, gravity: f64, dt: f64, young: f64) -> String {
    let pos: Vec<String> = (0..=n).map(|i| format!("{i} 0 0 0 0 0 1")).collect();
    let lines: Vec<String> = (0..n).map(|i| format!("{i} {}", i + 1)).collect();
    format!(
        r#"<Node name="root" dt="{dt}" gravity="0 {gravity} 0">
  <Node name="beam">
    <EulerImplicitSolver rayleighStiffness="0" rayleighMass="0.1"/>
    {solver}
    <MechanicalObject template="Rigid3" name="DOFs" position="{}"/>
    <MeshTopology name="lines" lines="{}"/>
    <FixedProjectiveConstraint indices="0"/>
    <UniformMass vertexMass="1 1 0.01 0 0 0 0.1 0 0 0 0.1"/>
    <BeamFEMForceField name="FEM" radius="0.1" radiusInner="0" youngModulus="{young}" poissonRatio="0.49"/>
    <Node name="Collision">
      <CubeTopology nx="{}" ny="2" nz="2" min="0 -0.1 -0.1" max="{n} 0.1 0.1"/>
      <MechanicalObject/>
      <BeamLinearMapping isMechanical="true"/>
    </Node>
  </Node>
</Node>"#,
        pos.join("  "),
        lines.join(" "),
        2 * n + 1
    )
}

/// The scene's beam (7 elements, E = 2e7) falling under gravity for 30 steps: the block
/// tridiagonal solver gives the sparse LDLᵀ solution to round-off.
#[test]
fn btd_solver_matches_sparse_ldl_on_a_falling_beam() {
    let mut a = load("beam_btd", &chain_scene(7, r#"<BTDLinearSolver template="BTDMatrix6d"/>"#, -9.81, 0.01, 2.0e7));
    let mut b = load("beam_ldl", &chain_scene(7, r#"<SparseLDLSolver template="CompressedRowSparseMatrixd"/>"#, -9.81, 0.01, 2.0e7));
    step(&mut a, 30);
    step(&mut b, 30);
    for id in [VecId::POSITION, VecId::VELOCITY] {
        let (xa, xb) = (a.store.nth(0).read(id), b.store.nth(0).read(id));
        assert_eq!(xa.len(), xb.len());
        for (p, q) in xa.iter().zip(xb) {
            assert!((p - q).abs() < 1e-10, "{id:?}: {p} vs {q}");
        }
    }
    // the matrix-free conjugate gradient (add_dforce instead of the assembled blocks) converged
    // far below the differences of interest
    let cg = r#"<CGLinearSolver iterations="500" tolerance="1e-30" threshold="1e-30"/>"#;
    let mut c = load("beam_cg", &chain_scene(7, cg, -9.81, 0.01, 2.0e7));
    step(&mut c, 30);
    let (xa, xc) = (a.store.nth(0).read(VecId::POSITION), c.store.nth(0).read(VecId::POSITION));
    for (p, q) in xa.iter().zip(xc) {
        assert!((p - q).abs() < 1e-9, "CG: {p} vs {q}");
    }
    // the beam has moved, and the mapped box follows the beam nodes
    let x = a.store.nth(0).read(VecId::POSITION);
    assert!(x[7 * 7 + 1] < -0.1, "tip y {}", x[7 * 7 + 1]);
    let boxes = a.store.nth(1).read(VecId::POSITION);
    assert_eq!(boxes.len(), 3 * 15 * 4);
    // point 14 of the box is (7, −0.1, −0.1) in beam coordinates: on the tip frame's offset
    let tip_q = [x[52], x[53], x[54], x[55]];
    let off = settee_core::types::quat_rotate(tip_q, [0.0, -0.1, -0.1]);
    for c in 0..3 {
        assert!((boxes[3 * 14 + c] - (x[49 + c] + off[c])).abs() < 1e-12);
    }
}

/// Under a small weight, the implicit Euler iterations with a long step settle on the static
/// equilibrium: nodal loads `P` at `x_k = k` give the tip deflection `Σ P x_k²(3L − x_k)/(6EI)`
/// (exact for beam elements) and the tip rotation `Σ P x_k²/(2EI)`.
#[test]
fn cantilever_under_its_own_weight_settles_on_beam_theory() {
    let (n, g, e) = (7usize, -0.0981, 1.0e9);
    let mut s = load("beam_static", &chain_scene(n, r#"<BTDLinearSolver template="BTDMatrix6d"/>"#, g, 1.0, e));
    step(&mut s, 60);
    let x = s.store.nth(0).read(VecId::POSITION);
    let ei = e * std::f64::consts::PI * (0.1f64 * 0.1 * 0.1 * 0.1) / 4.0;
    let l = n as f64;
    let p = -g; // downward load per node (unit masses), node 0 is clamped
    let defl: f64 = (1..=n).map(|k| p * (k * k) as f64 * (3.0 * l - k as f64) / (6.0 * ei)).sum();
    let rot: f64 = (1..=n).map(|k| p * (k * k) as f64 / (2.0 * ei)).sum();
    let tip_y = -x[7 * n + 1];
    // rotation about z of the tip frame: 2·asin(q_z)
    let tip_rot = -2.0 * x[7 * n + 5].asin();
    assert!((tip_y - defl).abs() < 1e-6 * defl, "tip deflection {tip_y} vs {defl}");
    assert!((tip_rot - rot).abs() < 1e-6 * rot, "tip rotation {tip_rot} vs {rot}");
    assert!(s.store.nth(0).read(VecId::VELOCITY).iter().all(|v| v.abs() < 1e-12));
}

/// `localCoord="false"`: world positions along a chain of beams of length 2 are converted to
/// beam coordinates at init and mapped back unchanged; the mapped points follow a rigid
/// rotation of the whole chain.
#[test]
fn beam_linear_mapping_from_world_coordinates() {
    let s = load(
        "beam_world",
        r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <MechanicalObject template="Rigid3" name="DOFs" position="0 0 0 0 0 0 1  2 0 0 0 0 0 1  4 0 0 0 0 0 1"/>
  <Node name="pts">
    <MechanicalObject name="p" position="0.5 0.1 0  2.5 -0.2 0.3  3.9 0 0.1"/>
    <BeamLinearMapping localCoord="false"/>
  </Node>
</Node>"#,
    );
    let m = s.store.nth(1).read(VecId::POSITION);
    let expected = [0.5, 0.1, 0.0, 2.5, -0.2, 0.3, 3.9, 0.0, 0.1];
    for (a, b) in m.iter().zip(expected) {
        assert!((a - b).abs() < 1e-14, "{m:?}");
    }
}
