//! RigidMapping in the plane (Rigid2d → Vec2d, SOFA's Demos/2d.scn): positions against the
//! rotation by θ, the Jacobian against central finite differences of `apply`, `applyJT` as the
//! adjoint of `applyJ`, and the assembled Jacobian against `applyJ`.

mod support;

use settee_core::math::dot_n as dot;
use settee_mapping::RigidMapping;
use support::{apply, jacobians_times, jtf, jv, S0, S1};

#[test]
fn planar_points_follow_their_frames_and_the_jacobian_is_the_derivative() {
    // Two frames; three points, the last on frame 1.
    let points = vec![[0.5, -0.5], [-0.25, 1.0], [1.0, 2.0]];
    let mut m = RigidMapping::build_2d(S0, S1, 2, points.clone(), vec![0, 0, 1]);
    let x = vec![vec![1.0, 2.0, 0.3, -1.0, 0.5, -1.2]];
    let out = apply(&mut m, 6, &x);
    for (i, (p, k)) in points.iter().zip([0usize, 0, 1]).enumerate() {
        let (s, c) = x[0][3 * k + 2].sin_cos();
        let expected = [x[0][3 * k] + c * p[0] - s * p[1], x[0][3 * k + 1] + s * p[0] + c * p[1]];
        assert!((out[2 * i] - expected[0]).abs() < 1e-15 && (out[2 * i + 1] - expected[1]).abs() < 1e-15, "point {i}");
    }

    let v = vec![vec![0.3, -0.7, 0.9, 0.2, 0.4, -0.6]];
    let h = 1e-6;
    let shifted = |sign: f64| vec![x[0].iter().zip(&v[0]).map(|(a, b)| a + sign * h * b).collect::<Vec<f64>>()];
    let (op, om) = (apply(&mut m, 6, &shifted(1.0)), apply(&mut m, 6, &shifted(-1.0)));
    apply(&mut m, 6, &x);
    let a = jv(&mut m, 6, &v);
    for i in 0..6 {
        let fd = (op[i] - om[i]) / (2.0 * h);
        assert!((a[i] - fd).abs() < 1e-8, "row {i}: J·v = {} but the finite difference is {fd}", a[i]);
    }
    let f = [0.7, -0.1, 0.2, 0.5, -0.3, 0.8];
    let b = jtf(&mut m, &[6], &f);
    let (lhs, rhs) = (dot(&a, &f), dot(&v[0], &b[0]));
    assert!((lhs - rhs).abs() < 1e-14, "⟨Jv,f⟩ = {lhs} but ⟨v,Jᵀf⟩ = {rhs}");
    // The torque on frame 1 is r × f of its one point.
    let r = [out_rel(&m, 2)[0], out_rel(&m, 2)[1]];
    assert!((b[0][5] - (r[0] * f[5] - r[1] * f[4])).abs() < 1e-15);
    let js = settee_core::component::Mapping::jacobians(&m).unwrap();
    let sum = jacobians_times(&js, &v, 6);
    for (p, q) in a.iter().zip(&sum) {
        assert!((p - q).abs() < 1e-15, "applyJ {p} vs J·v {q}");
    }
}

/// The rotated point `i` (its offset from its frame's centre) of the last `apply`.
fn out_rel(m: &RigidMapping, i: usize) -> [f64; 3] {
    m.rotated_points()[i]
}
