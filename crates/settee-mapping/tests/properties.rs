//! Property tests of every mapping on random states:
//!
//! * adjointness `⟨J·v, f⟩ = ⟨v, Jᵀ·f⟩` (`apply_j` against `apply_jt`);
//! * the assembled Jacobian equals `apply_j`;
//! * `apply_j` equals the central finite difference of `apply`;
//! * `apply_djt` equals the finite difference of `Jᵀ(x)·f` (geometric stiffness, `Exact`);
//! * constraint rows carried up (`apply_jt_constraints`) satisfy `(Jᵀr)·v = r·(J·v)` row by row.

mod support;

use proptest::prelude::*;
use settee_core::component::Mapping;
use settee_core::math::dot_n as dot;
use settee_core::types::{quat_from_euler, rigid3_integrate};
use settee_core::{ConstraintRows, Layout};
use settee_mapping::barycentric::{BarycentricMapping, GridGeometry, MapperKind};
use settee_mapping::center_of_mass::CenterOfMassMapping;
use settee_mapping::common::GeometricStiffness;
use settee_mapping::deformable_on_rigid::DeformableOnRigidFrameMapping;
use settee_mapping::distance::{DistanceMapping, Kind};
use settee_mapping::distance_to_plane::DistanceToPlaneMapping;
use settee_mapping::element_measure::{ElementMeasureMapping, Measure};
use settee_mapping::identity_multi::IdentityMultiMapping;
use settee_mapping::simple_tesselated_tetra::SimpleTesselatedTetraMechanicalMapping;
use settee_mapping::skinning::{nearest_frame_weights, SkinningMapping};
use settee_mapping::square::SquareMapping;
use settee_mapping::tubular::TubularMapping;
use settee_mapping::{IdentityMapping, RigidMapping, SubsetMapping};
use support::{apply, jacobians_times, jtf, jv, S0, S1, S2};

fn norm_inf(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// Adjointness and Jacobian consistency at the current (already applied) configuration.
fn check_linear_parts(m: &mut dyn Mapping, n_out: usize, dsizes: &[usize], v: &[Vec<f64>], f: &[f64]) -> Result<(), TestCaseError> {
    let a = jv(m, n_out, v);
    let b = jtf(m, dsizes, f);
    let lhs = dot(&a, f);
    let rhs: f64 = v.iter().zip(&b).map(|(x, y)| dot(x, y)).sum();
    let scale = 1.0 + lhs.abs().max(rhs.abs());
    prop_assert!((lhs - rhs).abs() <= 1e-10 * scale, "⟨Jv,f⟩ = {lhs} but ⟨v,Jᵀf⟩ = {rhs}");
    let js = m.jacobians().unwrap();
    prop_assert_eq!(js.len(), v.len());
    for (j, vi) in js.iter().zip(v) {
        prop_assert_eq!(j.ncols, vi.len());
    }
    let jv2 = jacobians_times(&js, v, n_out);
    for (x, y) in a.iter().zip(&jv2) {
        prop_assert!((x - y).abs() <= 1e-12 * (1.0 + x.abs()), "apply_j {x} vs J·v {y}");
    }
    Ok(())
}

/// Two constraint rows on the output (one dense, one on every other DOF, both from `f`) carried up
/// to the inputs: each must satisfy `Σ_i (J_iᵀ r)·v_i = r·(J·v)`.
fn check_constraint_rows(m: &mut dyn Mapping, out_ds: usize, in_ds: &[usize], v: &[Vec<f64>], f: &[f64]) -> Result<(), TestCaseError> {
    let mut out = ConstraintRows::new(out_ds);
    let n_out = f.len() / out_ds;
    for d in 0..n_out {
        out.add(0, d, &f[d * out_ds..d * out_ds + out_ds]);
        if d % 2 == 1 {
            let rev: Vec<f64> = f[d * out_ds..d * out_ds + out_ds].iter().rev().copied().collect();
            out.add(5, d, &rev);
        }
    }
    let mut ins: Vec<ConstraintRows> = in_ds.iter().map(|&ds| ConstraintRows::new(ds)).collect();
    {
        let mut refs: Vec<&mut ConstraintRows> = ins.iter_mut().collect();
        m.apply_jt_constraints(&mut refs, &out).unwrap();
    }
    let jv_out = jv(m, f.len(), v);
    for row in [0, 5] {
        let lhs: f64 = ins.iter().zip(v).map(|(c, vi)| c.row_dot(row, vi)).sum();
        let rhs = out.row_dot(row, &jv_out);
        prop_assert!((lhs - rhs).abs() <= 1e-10 * (1.0 + lhs.abs().max(rhs.abs())), "row {row}: (Jᵀr)·v = {lhs} but r·(Jv) = {rhs}");
    }
    Ok(())
}

fn vec_strategy(n: usize, r: f64) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-r..r, n)
}

/// Rigid3 coordinates from centres and Euler angles.
fn rigid_coords(c: &[f64], a: &[f64]) -> Vec<f64> {
    let n = c.len() / 3;
    let mut x = Vec::with_capacity(7 * n);
    for i in 0..n {
        let q = quat_from_euler([a[3 * i], a[3 * i + 1], a[3 * i + 2]]);
        x.extend_from_slice(&c[3 * i..3 * i + 3]);
        x.extend_from_slice(&q);
    }
    x
}

fn rigid_step(x: &[f64], v: &[f64], h: f64) -> Vec<f64> {
    let mut y = x.to_vec();
    for i in 0..x.len() / 7 {
        let d = &v[6 * i..6 * i + 6];
        rigid3_integrate(&mut y[7 * i..7 * i + 7], [d[0] * h, d[1] * h, d[2] * h], [d[3] * h, d[4] * h, d[5] * h]);
    }
    y
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn identity_vec3(x in vec_strategy(12, 5.0), v in vec_strategy(12, 1.0), f in vec_strategy(12, 1.0)) {
        let mut m = IdentityMapping::between(S0, Layout::Vec3, S1, Layout::Vec3, 4);
        let out = apply(&mut m, 12, std::slice::from_ref(&x));
        prop_assert_eq!(&out, &x);
        check_constraint_rows(&mut m, 3, &[3], std::slice::from_ref(&v), &f)?;
        check_linear_parts(&mut m, 12, &[12], &[v], &f)?;
    }

    #[test]
    fn identity_rigid_to_vec3(c in vec_strategy(9, 5.0), a in vec_strategy(9, 3.0), v in vec_strategy(18, 1.0), f in vec_strategy(9, 1.0)) {
        let x = rigid_coords(&c, &a);
        let mut m = IdentityMapping::between(S0, Layout::Rigid3, S1, Layout::Vec3, 3);
        let out = apply(&mut m, 9, &[x]);
        prop_assert_eq!(&out, &c);
        check_constraint_rows(&mut m, 3, &[6], std::slice::from_ref(&v), &f)?;
        check_linear_parts(&mut m, 9, &[18], &[v], &f)?;
    }

    #[test]
    fn subset(x in vec_strategy(18, 5.0), v in vec_strategy(18, 1.0), f in vec_strategy(12, 1.0), idx in prop::collection::vec(0usize..6, 4)) {
        let mut m = SubsetMapping::with_indices(S0, S1, Layout::Vec3, 6, idx.clone());
        let out = apply(&mut m, 12, std::slice::from_ref(&x));
        for (i, &j) in idx.iter().enumerate() {
            prop_assert_eq!(&out[3 * i..3 * i + 3], &x[3 * j..3 * j + 3]);
        }
        check_linear_parts(&mut m, 12, &[18], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 3, &[3], std::slice::from_ref(&v), &f)?;
    }

    /// Points located in a random hexahedral grid of a mesh are reproduced by `apply` (partition
    /// of unity and linear precision), and the weights are adjoint.
    #[test]
    fn barycentric_grid_and_mesh(p0 in vec_strategy(3, 2.0), d in prop::collection::vec(0.2f64..2.0, 3), pts in prop::collection::vec(0.0f64..1.0, 15),
                                 v in vec_strategy(3 * 27, 1.0), f in vec_strategy(15, 1.0)) {
        let g = GridGeometry { n: [3, 3, 3], p0: [p0[0], p0[1], p0[2]], d: [d[0], d[1], d[2]] };
        let xin: Vec<[f64; 3]> = (0..27).map(|i| g.point(i % 3, (i / 3) % 3, i / 9)).collect();
        let xout: Vec<[f64; 3]> = pts.chunks(3).map(|c| [p0[0] + 2.0 * d[0] * c[0], p0[1] + 2.0 * d[1] * c[1], p0[2] + 2.0 * d[2] * c[2]]).collect();
        let flat_in: Vec<f64> = xin.iter().flatten().copied().collect();
        // Regular-grid mapper.
        let (_, st) = BarycentricMapping::locate_in_grid(&g, &xout);
        let mut m = BarycentricMapping::with_stencils(S0, S1, 27, st);
        let out = apply(&mut m, 15, std::slice::from_ref(&flat_in));
        for (o, p) in out.chunks(3).zip(&xout) {
            for c in 0..3 {
                prop_assert!((o[c] - p[c]).abs() < 1e-10, "grid: {o:?} vs {p:?}");
            }
        }
        check_linear_parts(&mut m, 15, &[81], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 3, &[3], std::slice::from_ref(&v), &f)?;
        // Mesh mapper over the grid's hexahedra, and over its 6-tetrahedra split (set mapper).
        let mut hexas = Vec::new();
        for z in 0..2 { for y in 0..2 { for x in 0..2 {
            let id = |a: usize, b: usize, c: usize| a + 3 * (b + 3 * c);
            hexas.push([id(x, y, z), id(x + 1, y, z), id(x + 1, y + 1, z), id(x, y + 1, z), id(x, y, z + 1), id(x + 1, y, z + 1), id(x + 1, y + 1, z + 1), id(x, y + 1, z + 1)]);
        }}}
        let mesh = settee_core::MeshData { hexahedra: hexas.clone(), ..Default::default() };
        let (_, st) = BarycentricMapping::locate_in_mesh(&mesh, &xin, &xout).unwrap();
        let mut m = BarycentricMapping::with_stencils(S0, S1, 27, st);
        let out = apply(&mut m, 15, std::slice::from_ref(&flat_in));
        for (o, p) in out.chunks(3).zip(&xout) {
            for c in 0..3 {
                prop_assert!((o[c] - p[c]).abs() < 1e-10, "mesh: {o:?} vs {p:?}");
            }
        }
        let tets: Vec<[usize; 4]> = hexas.iter().flat_map(|h| {
            [[h[0], h[1], h[2], h[6]], [h[0], h[2], h[3], h[6]], [h[0], h[3], h[7], h[6]], [h[0], h[7], h[4], h[6]], [h[0], h[4], h[5], h[6]], [h[0], h[5], h[1], h[6]]]
        }).collect();
        let tmesh = settee_core::MeshData { tetrahedra: tets, ..Default::default() };
        let (_, st) = BarycentricMapping::locate_in_set(MapperKind::TetrahedronSet, &tmesh, &xin, &xout).unwrap();
        let mut m = BarycentricMapping::with_stencils(S0, S1, 27, st);
        let out = apply(&mut m, 15, &[flat_in]);
        for (o, p) in out.chunks(3).zip(&xout) {
            for c in 0..3 {
                prop_assert!((o[c] - p[c]).abs() < 1e-10, "tetra set: {o:?} vs {p:?}");
            }
        }
        check_linear_parts(&mut m, 15, &[81], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 3, &[3], std::slice::from_ref(&v), &f)?;
    }

    #[test]
    fn rigid(c in vec_strategy(6, 3.0), a in vec_strategy(6, 3.0), pts in vec_strategy(15, 2.0), v in vec_strategy(12, 1.0),
             f in vec_strategy(15, 1.0), dx in vec_strategy(12, 1.0), frames in prop::collection::vec(0usize..2, 5)) {
        let x = rigid_coords(&c, &a);
        let points: Vec<[f64; 3]> = pts.chunks(3).map(|p| [p[0], p[1], p[2]]).collect();
        let mut m = RigidMapping::build(S0, S1, 2, points.clone(), frames.clone(), GeometricStiffness::Exact);
        let out = apply(&mut m, 15, std::slice::from_ref(&x));
        // Distances to the frame centres are the local distances.
        for (i, p) in points.iter().enumerate() {
            let k = frames[i];
            let r: f64 = (0..3).map(|j| (out[3 * i + j] - c[3 * k + j]).powi(2)).sum::<f64>().sqrt();
            prop_assert!((r - (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt()).abs() < 1e-10);
        }
        check_linear_parts(&mut m, 15, &[12], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 3, &[6], std::slice::from_ref(&v), &f)?;
        // apply_j = d/dε apply(x ⊕ εv) (world-frame rotation increments).
        let h = 1e-6;
        let jv0 = jv(&mut m, 15, std::slice::from_ref(&v));
        let xp = apply(&mut m, 15, &[rigid_step(&x, &v, h)]);
        let xm = apply(&mut m, 15, &[rigid_step(&x, &v, -h)]);
        for i in 0..15 {
            let fd = (xp[i] - xm[i]) / (2.0 * h);
            prop_assert!((fd - jv0[i]).abs() < 1e-6 * (1.0 + jv0[i].abs()), "J·v {} vs FD {}", jv0[i], fd);
        }
        // apply_djt = d/dε Jᵀ(x ⊕ ε dx)·f.
        apply(&mut m, 15, &[rigid_step(&x, &dx, h)]);
        let gp = jtf(&mut m, &[12], &f);
        apply(&mut m, 15, &[rigid_step(&x, &dx, -h)]);
        let gm = jtf(&mut m, &[12], &f);
        apply(&mut m, 15, std::slice::from_ref(&x));
        let mut djt = [vec![0.0; 12]];
        {
            let mut s: Vec<&mut [f64]> = djt.iter_mut().map(|v| v.as_mut_slice()).collect();
            m.apply_djt(&mut s, &[&dx], &f, 1.0).unwrap();
        }
        for i in 0..12 {
            let fd = (gp[0][i] - gm[0][i]) / (2.0 * h);
            prop_assert!((fd - djt[0][i]).abs() < 1e-6 * (1.0 + fd.abs()), "dof {i}: DJT {} vs FD {}", djt[0][i], fd);
        }
    }

    /// The tube's points stay at their circle's radius in the frame's yz plane; `apply_j` is the
    /// derivative of `apply` and `apply_jt` its transpose.
    #[test]
    fn tubular(c in vec_strategy(9, 3.0), a in vec_strategy(9, 3.0), v in vec_strategy(18, 1.0), f in vec_strategy(36, 1.0), peak in -2i64..3) {
        let x = rigid_coords(&c, &a);
        let mut m = TubularMapping::build(S0, S1, 3, 4, 0.7, peak);
        let out = apply(&mut m, 36, std::slice::from_ref(&x));
        for i in 0..12 {
            let k = i / 4;
            let r: Vec<f64> = (0..3).map(|j| out[3 * i + j] - c[3 * k + j]).collect();
            let rho = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
            prop_assert!((rho - m.circle_radius(k)).abs() < 1e-12);
            // orthogonal to the frame's x axis
            let q = [x[7 * k + 3], x[7 * k + 4], x[7 * k + 5], x[7 * k + 6]];
            let ax = settee_core::types::quat_rotate(q, [1.0, 0.0, 0.0]);
            prop_assert!((r[0] * ax[0] + r[1] * ax[1] + r[2] * ax[2]).abs() < 1e-12);
        }
        check_linear_parts(&mut m, 36, &[18], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 3, &[6], std::slice::from_ref(&v), &f)?;
        let h = 1e-6;
        let jv0 = jv(&mut m, 36, std::slice::from_ref(&v));
        let xp = apply(&mut m, 36, &[rigid_step(&x, &v, h)]);
        let xm = apply(&mut m, 36, &[rigid_step(&x, &v, -h)]);
        for i in 0..36 {
            let fd = (xp[i] - xm[i]) / (2.0 * h);
            prop_assert!((fd - jv0[i]).abs() < 1e-6 * (1.0 + jv0[i].abs()), "J·v {} vs FD {}", jv0[i], fd);
        }
    }

    /// Linear blend skinning on three frames: the weights found from the rest frames are the
    /// normalised inverse squared distances; at the rest frames the points are where they were;
    /// `apply_j` is the derivative of `apply` and `apply_jt` its transpose.
    #[test]
    fn skinning(c in vec_strategy(9, 3.0), a in vec_strategy(9, 3.0), pts in vec_strategy(12, 3.0), v in vec_strategy(18, 1.0),
                f in vec_strategy(12, 1.0), c1 in vec_strategy(9, 3.0), a1 in vec_strategy(9, 3.0)) {
        let x0 = rigid_coords(&c, &a);
        let points: Vec<[f64; 3]> = pts.chunks(3).map(|p| [p[0], p[1], p[2]]).collect();
        let centres: Vec<[f64; 3]> = c.chunks(3).map(|p| [p[0], p[1], p[2]]).collect();
        let (ix, w) = nearest_frame_weights(&points, &centres, 2);
        for (i, p) in points.iter().enumerate() {
            let inv: Vec<f64> = centres.iter().map(|q| 1.0 / (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>()).collect();
            let mut order: Vec<usize> = (0..3).collect();
            order.sort_by(|&x, &y| inv[y].partial_cmp(&inv[x]).unwrap());
            prop_assert_eq!(&ix[i], &order[..2].to_vec());
            let s = inv[order[0]] + inv[order[1]];
            prop_assert!((w[i][0] - inv[order[0]] / s).abs() < 1e-12 && (w[i][1] - inv[order[1]] / s).abs() < 1e-12);
        }
        let mut m = SkinningMapping::build(S0, S1, &ix, &w, &points, &x0);
        let out = apply(&mut m, 12, std::slice::from_ref(&x0));
        for (o, p) in out.iter().zip(points.iter().flatten()) {
            prop_assert!((o - p).abs() < 1e-10, "rest: {o} vs {p}");
        }
        let x = rigid_coords(&c1, &a1);
        apply(&mut m, 12, std::slice::from_ref(&x));
        check_linear_parts(&mut m, 12, &[18], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 3, &[6], std::slice::from_ref(&v), &f)?;
        let h = 1e-6;
        let jv0 = jv(&mut m, 12, std::slice::from_ref(&v));
        let xp = apply(&mut m, 12, &[rigid_step(&x, &v, h)]);
        let xm = apply(&mut m, 12, &[rigid_step(&x, &v, -h)]);
        for i in 0..12 {
            let fd = (xp[i] - xm[i]) / (2.0 * h);
            prop_assert!((fd - jv0[i]).abs() < 1e-6 * (1.0 + jv0[i].abs()), "J·v {} vs FD {}", jv0[i], fd);
        }
    }

    /// The centre of mass of three frames, and the mapping's products.
    #[test]
    fn center_of_mass(c in vec_strategy(9, 3.0), a in vec_strategy(9, 3.0), ms in prop::collection::vec(0.1f64..5.0, 3), v in vec_strategy(18, 1.0), f in vec_strategy(3, 1.0)) {
        let x = rigid_coords(&c, &a);
        let mut m = CenterOfMassMapping::build(S0, S1, ms.clone());
        let out = apply(&mut m, 3, std::slice::from_ref(&x));
        let total: f64 = ms.iter().sum();
        for k in 0..3 {
            let want = (0..3).map(|i| ms[i] * c[3 * i + k]).sum::<f64>() / total;
            prop_assert!((out[k] - want).abs() < 1e-12);
        }
        check_linear_parts(&mut m, 3, &[18], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 3, &[6], std::slice::from_ref(&v), &f)?;
    }

    /// Local points carried by frame 1 of two: `x = R·p + c` keeps the distances of the local
    /// points; `apply_j` is the derivative of `apply` in both inputs and `apply_jt` its transpose.
    #[test]
    fn deformable_on_rigid_frame(p in vec_strategy(12, 2.0), c in vec_strategy(6, 3.0), a in vec_strategy(6, 3.0), vp in vec_strategy(12, 1.0),
                                 vx in vec_strategy(12, 1.0), f in vec_strategy(12, 1.0)) {
        let x = rigid_coords(&c, &a);
        let mut m = DeformableOnRigidFrameMapping::build(S0, S1, S2, 4, 2, 1);
        let out = apply(&mut m, 12, &[p.clone(), x.clone()]);
        for (i, j) in [(0, 1), (1, 2), (0, 3)] {
            let d = |v: &[f64]| (0..3).map(|k| (v[3 * i + k] - v[3 * j + k]).powi(2)).sum::<f64>().sqrt();
            prop_assert!((d(&out) - d(&p)).abs() < 1e-10);
        }
        let v = [vp.clone(), vx.clone()];
        check_linear_parts(&mut m, 12, &[12, 12], &v, &f)?;
        check_constraint_rows(&mut m, 3, &[3, 6], &v, &f)?;
        let h = 1e-6;
        let jv0 = jv(&mut m, 12, &v);
        let shift = |s: f64| -> Vec<f64> { p.iter().zip(&vp).map(|(a, b)| a + s * b).collect() };
        let xp = apply(&mut m, 12, &[shift(h), rigid_step(&x, &vx, h)]);
        let xm = apply(&mut m, 12, &[shift(-h), rigid_step(&x, &vx, -h)]);
        for i in 0..12 {
            let fd = (xp[i] - xm[i]) / (2.0 * h);
            prop_assert!((fd - jv0[i]).abs() < 1e-6 * (1.0 + jv0[i].abs()), "J·v {} vs FD {}", jv0[i], fd);
        }
    }

    /// The input points then the edge midpoints; the transpose splits a midpoint's force half
    /// and half.
    #[test]
    fn simple_tesselated_tetra(x in vec_strategy(12, 3.0), v in vec_strategy(12, 1.0), f in vec_strategy(30, 1.0)) {
        let edges = vec![[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];
        let mut m = SimpleTesselatedTetraMechanicalMapping::build(S0, S1, 4, edges.clone());
        let out = apply(&mut m, 30, std::slice::from_ref(&x));
        prop_assert_eq!(&out[..12], &x[..]);
        for (e, [a, b]) in edges.iter().enumerate() {
            for c in 0..3 {
                prop_assert_eq!(out[12 + 3 * e + c], (x[3 * a + c] + x[3 * b + c]) * 0.5);
            }
        }
        check_linear_parts(&mut m, 30, &[12], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 3, &[3], std::slice::from_ref(&v), &f)?;
    }

    /// The concatenation of two inputs.
    #[test]
    fn identity_multi(x0 in vec_strategy(6, 3.0), x1 in vec_strategy(9, 3.0), v0 in vec_strategy(6, 1.0), v1 in vec_strategy(9, 1.0), f in vec_strategy(15, 1.0)) {
        let mut m = IdentityMultiMapping::build(&[(S0, 2), (S1, 3)], Layout::Vec3, S2);
        let out = apply(&mut m, 15, &[x0.clone(), x1.clone()]);
        prop_assert_eq!(&out[..6], &x0[..]);
        prop_assert_eq!(&out[6..], &x1[..]);
        check_linear_parts(&mut m, 15, &[6, 9], &[v0.clone(), v1.clone()], &f)?;
        check_constraint_rows(&mut m, 3, &[3, 3], &[v0, v1], &f)?;
    }

    /// The signed distance to the plane through (0 0 2) of normal (0 0 1) is z − 2, for points
    /// and for frame centres.
    #[test]
    fn distance_to_plane(x in vec_strategy(12, 3.0), c in vec_strategy(6, 3.0), a in vec_strategy(6, 3.0), v in vec_strategy(12, 1.0), f in vec_strategy(4, 1.0)) {
        let mut m = DistanceToPlaneMapping::build(S0, S1, Layout::Vec3, 4, vec![0.0, 0.0, 1.0], vec![0.0, 0.0, 2.0]);
        let out = apply(&mut m, 4, std::slice::from_ref(&x));
        for i in 0..4 {
            prop_assert!((out[i] - (x[3 * i + 2] - 2.0)).abs() < 1e-12);
        }
        check_linear_parts(&mut m, 4, &[12], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 1, &[3], std::slice::from_ref(&v), &f)?;
        // an oblique unit normal on Rigid3 frames: n·c − n·p
        let n = [0.6, 0.0, 0.8];
        let mut m = DistanceToPlaneMapping::build(S0, S1, Layout::Rigid3, 2, n.to_vec(), vec![1.0, 1.0, 1.0]);
        let out = apply(&mut m, 2, &[rigid_coords(&c, &a)]);
        for i in 0..2 {
            prop_assert!((out[i] - (0.6 * c[3 * i] + 0.8 * c[3 * i + 2] - 1.4)).abs() < 1e-12);
        }
        check_linear_parts(&mut m, 2, &[12], std::slice::from_ref(&v), &f[..2])?;
    }

    /// Areas of two triangles sharing an edge: `|N|/2`; `apply_j` and the exact geometric
    /// stiffness are the derivatives of `apply` and of `Jᵀ·f`.
    #[test]
    fn area(x in vec_strategy(12, 3.0), v in vec_strategy(12, 1.0), f in vec_strategy(2, 1.0), dx in vec_strategy(12, 1.0)) {
        let tris = vec![vec![0, 1, 2], vec![2, 1, 3]];
        let p = |i: usize| [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
        let areas: Vec<f64> = tris.iter().map(|t| {
            let (a, b) = ([0, 1, 2].map(|k| p(t[1])[k] - p(t[0])[k]), [0, 1, 2].map(|k| p(t[2])[k] - p(t[0])[k]));
            let n = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
            0.5 * (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt()
        }).collect();
        prop_assume!(areas.iter().all(|a| *a > 0.1));
        let mut m = ElementMeasureMapping::build(Measure::Area, S0, S1, 4, tris, GeometricStiffness::Exact);
        let out = apply(&mut m, 2, std::slice::from_ref(&x));
        for (o, a) in out.iter().zip(&areas) {
            prop_assert!((o - a).abs() < 1e-12 * (1.0 + a));
        }
        check_linear_parts(&mut m, 2, &[12], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 1, &[3], std::slice::from_ref(&v), &f)?;
        check_fd(&mut m, &[x], &[v], &[dx], &f, &[12], 2)?;
    }

    /// Signed volumes of two tetrahedra (the second inverted); derivatives as for the areas.
    #[test]
    fn volume(x in vec_strategy(15, 3.0), v in vec_strategy(15, 1.0), f in vec_strategy(2, 1.0), dx in vec_strategy(15, 1.0)) {
        let tets = vec![vec![0, 1, 2, 3], vec![1, 4, 2, 3]];
        let mut m = ElementMeasureMapping::build(Measure::Volume, S0, S1, 5, tets.clone(), GeometricStiffness::Exact);
        let out = apply(&mut m, 2, std::slice::from_ref(&x));
        for (o, t) in out.iter().zip(&tets) {
            let e = |k: usize| [0, 1, 2].map(|c| x[3 * t[k] + c] - x[3 * t[0] + c]);
            let (a, b, c) = (e(1), e(2), e(3));
            let vol = (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
            prop_assert!((o - vol).abs() < 1e-12 * (1.0 + vol.abs()));
        }
        check_linear_parts(&mut m, 2, &[15], std::slice::from_ref(&v), &f)?;
        check_fd(&mut m, &[x], &[v], &[dx], &f, &[15], 2)?;
    }

    /// Squares: `y = x²`, `J = 2x`, geometric stiffness `2f`.
    #[test]
    fn square(x in vec_strategy(4, 3.0), v in vec_strategy(4, 1.0), f in vec_strategy(4, 1.0), dx in vec_strategy(4, 1.0)) {
        let mut m = SquareMapping::build(S0, S1, 4, GeometricStiffness::Exact);
        let out = apply(&mut m, 4, std::slice::from_ref(&x));
        for i in 0..4 {
            prop_assert_eq!(out[i], x[i] * x[i]);
        }
        check_linear_parts(&mut m, 4, &[4], std::slice::from_ref(&v), &f)?;
        check_fd(&mut m, &[x], &[v], &[dx], &f, &[4], 4)?;
    }

    /// The stabilized area stiffness keeps exactly the triangles whose child force is negative.
    #[test]
    fn area_stabilized_keeps_negative_forces(x in vec_strategy(12, 3.0), dx in vec_strategy(12, 1.0), f in vec_strategy(2, 1.0)) {
        let tris = vec![vec![0, 1, 2], vec![2, 1, 3]];
        let run = |gs: GeometricStiffness, f: &[f64]| -> Vec<f64> {
            let mut m = ElementMeasureMapping::build(Measure::Area, S0, S1, 4, tris.clone(), gs);
            apply(&mut m, 2, std::slice::from_ref(&x));
            let mut out = vec![vec![0.0; 12]];
            let mut s: Vec<&mut [f64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
            m.apply_djt(&mut s, &[&dx], f, 0.7).unwrap();
            out.pop().unwrap()
        };
        let negative: Vec<f64> = f.iter().map(|v| if *v < 0.0 { *v } else { 0.0 }).collect();
        prop_assert_eq!(run(GeometricStiffness::Stabilized, &f), run(GeometricStiffness::Exact, &negative));
    }

    #[test]
    fn distance_and_square(x in vec_strategy(15, 3.0), v in vec_strategy(15, 1.0), f in vec_strategy(4, 1.0), dx in vec_strategy(15, 1.0), square in any::<bool>()) {
        let ends = vec![[(0, 0), (0, 1)], [(0, 1), (0, 2)], [(0, 3), (0, 2)], [(0, 4), (0, 0)]];
        // Keep edges away from zero length (the direction is then arbitrary).
        for e in &ends {
            let (a, b) = (e[0].1, e[1].1);
            let l: f64 = (0..3).map(|c| (x[3 * a + c] - x[3 * b + c]).powi(2)).sum::<f64>().sqrt();
            prop_assume!(l > 0.1);
        }
        let kind = if square { Kind::Square } else { Kind::Distance };
        let mut m = DistanceMapping::build(kind, &[(S0, 5)], Layout::Vec3, S1, ends.clone(), vec![0.3; 4], GeometricStiffness::Exact);
        let out = apply(&mut m, 4, std::slice::from_ref(&x));
        for (i, e) in ends.iter().enumerate() {
            let (a, b) = (e[0].1, e[1].1);
            let l2: f64 = (0..3).map(|c| (x[3 * a + c] - x[3 * b + c]).powi(2)).sum();
            let expected = if square { l2 } else { l2.sqrt() - 0.3 };
            prop_assert!((out[i] - expected).abs() < 1e-12 * (1.0 + expected.abs()));
        }
        check_linear_parts(&mut m, 4, &[15], std::slice::from_ref(&v), &f)?;
        check_constraint_rows(&mut m, 1, &[3], std::slice::from_ref(&v), &f)?;
        check_fd(&mut m, &[x], &[v], &[dx], &f, &[15], 4)?;
    }

    #[test]
    fn distance_multi(x0 in vec_strategy(9, 3.0), x1 in vec_strategy(12, 3.0), v0 in vec_strategy(9, 1.0), v1 in vec_strategy(12, 1.0),
                      dx0 in vec_strategy(9, 1.0), dx1 in vec_strategy(12, 1.0), f in vec_strategy(3, 1.0)) {
        // Pairs (parent, index): edges between the two parents and inside one.
        let ends = vec![[(0, 2), (1, 0)], [(1, 1), (0, 0)], [(1, 3), (1, 2)]];
        let xs = [&x0, &x1];
        for e in &ends {
            let l: f64 = (0..3).map(|c| (xs[e[0].0][3 * e[0].1 + c] - xs[e[1].0][3 * e[1].1 + c]).powi(2)).sum::<f64>().sqrt();
            prop_assume!(l > 0.1);
        }
        let mut m = DistanceMapping::build(Kind::Multi, &[(S0, 3), (S1, 4)], Layout::Vec3, S2, ends, vec![1.0, 0.0, 0.5], GeometricStiffness::Exact);
        apply(&mut m, 3, &[x0.clone(), x1.clone()]);
        check_linear_parts(&mut m, 3, &[9, 12], &[v0.clone(), v1.clone()], &f)?;
        check_fd(&mut m, &[x0, x1], &[v0, v1], &[dx0, dx1], &f, &[9, 12], 3)?;
    }

    /// The stabilized geometric stiffness keeps exactly the edges whose child force is negative.
    #[test]
    fn stabilized_keeps_tension_only(x in vec_strategy(9, 3.0), dx in vec_strategy(9, 1.0), f in vec_strategy(2, 1.0)) {
        let ends = vec![[(0, 0), (0, 1)], [(0, 1), (0, 2)]];
        for e in &ends {
            let l: f64 = (0..3).map(|c| (x[3 * e[0].1 + c] - x[3 * e[1].1 + c]).powi(2)).sum::<f64>().sqrt();
            prop_assume!(l > 0.1);
        }
        let run = |gs: GeometricStiffness, f: &[f64]| -> Vec<f64> {
            let mut m = DistanceMapping::build(Kind::Distance, &[(S0, 3)], Layout::Vec3, S1, ends.clone(), vec![0.0; 2], gs);
            apply(&mut m, 2, std::slice::from_ref(&x));
            let mut out = vec![vec![0.0; 9]];
            let mut s: Vec<&mut [f64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
            m.apply_djt(&mut s, &[&dx], f, 0.7).unwrap();
            out.pop().unwrap()
        };
        let tension: Vec<f64> = f.iter().map(|v| if *v < 0.0 { *v } else { 0.0 }).collect();
        let a = run(GeometricStiffness::Stabilized, &f);
        let b = run(GeometricStiffness::Exact, &tension);
        prop_assert_eq!(a, b);
        prop_assert!(norm_inf(&run(GeometricStiffness::None, &f)) == 0.0);
    }
}

/// `apply_j` = FD of `apply`; `apply_djt` = FD of `Jᵀ(x)·f`.
fn check_fd(
    m: &mut dyn Mapping,
    x: &[Vec<f64>],
    v: &[Vec<f64>],
    dx: &[Vec<f64>],
    f: &[f64],
    sizes: &[usize],
    n_out: usize,
) -> Result<(), TestCaseError> {
    let h = 1e-6;
    let shift = |x: &[Vec<f64>], d: &[Vec<f64>], s: f64| -> Vec<Vec<f64>> {
        x.iter().zip(d).map(|(a, b)| a.iter().zip(b).map(|(p, q)| p + s * q).collect()).collect()
    };
    apply(m, n_out, x);
    let jv0 = jv(m, n_out, v);
    let op = apply(m, n_out, &shift(x, v, h));
    let om = apply(m, n_out, &shift(x, v, -h));
    for i in 0..n_out {
        let fd = (op[i] - om[i]) / (2.0 * h);
        prop_assert!((fd - jv0[i]).abs() < 1e-6 * (1.0 + fd.abs()), "J·v {} vs FD {}", jv0[i], fd);
    }
    apply(m, n_out, &shift(x, dx, h));
    let gp = jtf(m, sizes, f);
    apply(m, n_out, &shift(x, dx, -h));
    let gm = jtf(m, sizes, f);
    apply(m, n_out, x);
    let mut djt: Vec<Vec<f64>> = sizes.iter().map(|&n| vec![0.0; n]).collect();
    {
        let mut s: Vec<&mut [f64]> = djt.iter_mut().map(|v| v.as_mut_slice()).collect();
        let d: Vec<&[f64]> = dx.iter().map(|v| v.as_slice()).collect();
        m.apply_djt(&mut s, &d, f, 1.0).unwrap();
    }
    for (p, ((a, b), c)) in gp.iter().zip(&gm).zip(&djt).enumerate() {
        for i in 0..a.len() {
            let fd = (a[i] - b[i]) / (2.0 * h);
            prop_assert!((fd - c[i]).abs() < 1e-5 * (1.0 + fd.abs()), "input {p} dof {i}: DJT {} vs FD {}", c[i], fd);
        }
    }
    Ok(())
}

/// A frame spinning about z carries its points on circles of constant radius and height.
#[test]
fn rigid_mapping_of_a_rotating_frame_moves_points_on_circles() {
    let points = vec![[1.0, 0.0, 0.5], [0.0, 2.0, -1.0], [-0.5, -0.5, 0.0]];
    let mut m = RigidMapping::build(S0, S1, 1, points.clone(), vec![0; 3], GeometricStiffness::None);
    let centre = [0.3, -0.2, 1.5];
    for step in 0..=40 {
        let theta = step as f64 * std::f64::consts::PI / 20.0;
        let (s, c) = (theta * 0.5).sin_cos();
        let x = vec![centre[0], centre[1], centre[2], 0.0, 0.0, s, c];
        let out = apply(&mut m, 9, &[x]);
        for (i, p) in points.iter().enumerate() {
            let r = [out[3 * i] - centre[0], out[3 * i + 1] - centre[1], out[3 * i + 2] - centre[2]];
            let rho = (p[0] * p[0] + p[1] * p[1]).sqrt();
            assert!(((r[0] * r[0] + r[1] * r[1]).sqrt() - rho).abs() < 1e-12, "radius");
            assert!((r[2] - p[2]).abs() < 1e-12, "height");
            // The polar angle advanced by θ.
            let expected = p[1].atan2(p[0]) + theta;
            let got = r[1].atan2(r[0]);
            let d = (got - expected).rem_euclid(2.0 * std::f64::consts::PI);
            assert!(d < 1e-9 || (2.0 * std::f64::consts::PI - d) < 1e-9, "angle {got} vs {expected}");
        }
        // The velocity of a spin ω about z is tangent: ω × r.
        let v = jv(&mut m, 9, &[vec![0.0, 0.0, 0.0, 0.0, 0.0, 2.0]]);
        for i in 0..3 {
            let r = [out[3 * i] - centre[0], out[3 * i + 1] - centre[1]];
            assert!((v[3 * i] + 2.0 * r[1]).abs() < 1e-12 && (v[3 * i + 1] - 2.0 * r[0]).abs() < 1e-12 && v[3 * i + 2].abs() < 1e-12);
        }
    }
}

/// SOFA's `updateK`: a stiffness kept for a force with an edge in tension replaces the force
/// `apply_djt` is given; a force with no kept edge (or none at all) leaves the given force in use.
#[test]
fn update_k_overrides_the_given_force_while_it_has_an_edge() {
    // Edge 0–1 along x (length 2), edge 1–2 along y (length 1).
    let x = vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 1.0, 0.0];
    let dx = [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
    let ends = vec![[(0, 0), (0, 1)], [(0, 1), (0, 2)]];
    let mut m = DistanceMapping::build(Kind::Distance, &[(S0, 3)], Layout::Vec3, S1, ends, vec![0.0; 2], GeometricStiffness::Stabilized);
    apply(&mut m, 2, std::slice::from_ref(&x));
    let djt = |m: &mut DistanceMapping, f: &[f64]| -> Vec<f64> {
        let mut out = [vec![0.0; 9]];
        let mut s: Vec<&mut [f64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
        m.apply_djt(&mut s, &[&dx], f, 1.0).unwrap();
        out[0].clone()
    };
    // Without update_k, a zero force gives nothing.
    assert!(djt(&mut m, &[0.0, 0.0]).iter().all(|v| *v == 0.0));
    // Kept: f = (−4, 3) → only edge 0–1 (tension); (I − uuᵀ)·f/l with u = x, l = 2, applied to
    // dx_1 − dx_0 = (0,1,0): δ = (0, −2, 0); f_0 −= δ, f_1 += δ.
    m.update_k(&[-4.0, 3.0]).unwrap();
    let got = djt(&mut m, &[0.0, 0.0]);
    assert_eq!(got, vec![0.0, 2.0, 0.0, 0.0, -2.0, 0.0, 0.0, 0.0, 0.0]);
    // Only compression: nothing kept, the given force (here edge 0–1 at −2) is used.
    m.update_k(&[4.0, 3.0]).unwrap();
    let got = djt(&mut m, &[-2.0, 0.0]);
    assert_eq!(got, vec![0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0]);
    // An empty force (no Λ yet) also clears the kept stiffness.
    m.update_k(&[-4.0, 3.0]).unwrap();
    m.update_k(&[]).unwrap();
    assert!(djt(&mut m, &[0.0, 0.0]).iter().all(|v| *v == 0.0));
}
