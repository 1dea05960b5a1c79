//! `MeshTetraStuffing`: a tetrahedral mesh filling a closed surface, by SOFA's isosurface
//! stuffing (after Labelle & Shewchuk, 2007), reproduced step by step so that the tetrahedra are
//! SOFA's.
//!
//! * Two interleaved cubic grids of spacing `size` (a BCC lattice): grid G around the bounding
//!   box, grid H at its cell centres. Every point has 14 "edges": 6 to its G/H neighbours along
//!   the axes (long edges) and 8 diagonals to the other grid (short edges).
//! * Inside test: along every lattice line (axis and diagonal), the surface crossings are
//!   found by ray casting; each point of the line votes in/out from the orientation of its
//!   nearest crossing, and keeps its distance to the crossings on both sides (`eBDist`, in edge
//!   lengths). A point without a vote is outside.
//! * `snapPoints`: a point closer to the surface than `alphaLong`/`alphaShort` along an edge
//!   crossing the surface is moved onto it (outside points first, repeatedly; then inside).
//! * Every G edge with the 4 H points around it makes 4 tetrahedra; those with all points
//!   outside are dropped, and with `splitTetrahedra` those crossing the surface are cut at the
//!   crossing points. Unused points are removed and inverted tetrahedra turned over.
//!
//! SOFA traces the rays through an octree of the triangles; Settee tests every triangle, which
//! finds the same crossings (a triangle met several times counts once).

// The loops follow SOFA's, over edge numbers that index several tables at once.
#![allow(clippy::needless_range_loop)]

use std::collections::{BTreeMap, BTreeSet};

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

type P3 = [f64; 3];
const EDGESHELL: usize = 14;

fn sub(a: P3, b: P3) -> P3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn add(a: P3, b: P3) -> P3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn scale(a: P3, k: f64) -> P3 {
    [a[0] * k, a[1] * k, a[2] * k]
}
fn dot(a: P3, b: P3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: P3, b: P3) -> P3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// Parameter `t` where the ray `origin + t·direction` (t ≥ ε) crosses triangle (n0, n1, n2), as
/// SOFA's `Triangle::rayIntersection` (Möller–Trumbore with ε tolerances) computes it.
fn ray_triangle(n0: P3, n1: P3, n2: P3, origin: P3, direction: P3) -> Option<f64> {
    let eps = f64::EPSILON;
    let e0 = sub(n1, n0);
    let e1 = sub(n2, n0);
    let pvec = cross(direction, e1);
    let det = dot(e0, pvec);
    if det.abs() <= eps {
        return None;
    }
    let inv_det = 1.0 / det;
    let tvec = sub(origin, n0);
    let u = dot(tvec, pvec) * inv_det;
    if u < -eps || u > 1.0 + eps {
        return None;
    }
    let qvec = cross(tvec, e0);
    let v = dot(direction, qvec) * inv_det;
    if v < -eps || u + v > 1.0 + eps {
        return None;
    }
    let t = dot(e1, qvec) * inv_det;
    if t < eps || t.is_nan() || v.is_nan() || u.is_nan() {
        return None;
    }
    Some(t)
}

/// The options of the stuffing.
#[derive(Clone, Copy, Debug)]
pub struct StuffingOptions {
    /// Cell size; negative: number of cells along the largest side of the box.
    pub size: f64,
    /// Bounding box to fill (min, max); a box with min x ≥ max x is computed from the surface.
    pub bbox: [P3; 2],
    pub alpha_long: f64,
    pub alpha_short: f64,
    pub snap_points: bool,
    pub split_tetrahedra: bool,
}

/// The result: points, tetrahedra, the box used and the problems SOFA reports as errors.
#[derive(Clone, Debug, Default)]
pub struct Stuffed {
    pub points: Vec<P3>,
    pub tetrahedra: Vec<[usize; 4]>,
    pub bbox: [P3; 2],
    pub errors: Vec<String>,
}

struct Lattice {
    gsize: [i64; 3],
    hsize: [i64; 3],
    ph0: i64,
}

impl Lattice {
    /// The other end of edge `e` from point `p`, if it is in the lattice.
    fn edge_point(&self, p: i64, e: usize) -> Option<i64> {
        let (g, h) = (self.gsize, self.hsize);
        if p < self.ph0 {
            let mut c = [p % g[0], (p / g[0]) % g[1], p / (g[0] * g[1])];
            if e < 6 {
                let a = e >> 1;
                if e & 1 == 1 {
                    c[a] += 1;
                    if c[a] >= g[a] {
                        return None;
                    }
                } else {
                    c[a] -= 1;
                    if c[a] < 0 {
                        return None;
                    }
                }
                Some(c[0] + g[0] * (c[1] + g[1] * c[2]))
            } else {
                let k = (e - 6) as i64;
                c[0] += k & 1;
                c[1] += ((k >> 1) ^ k) & 1;
                c[2] += ((k >> 2) ^ k) & 1;
                Some(self.ph0 + c[0] + h[0] * (c[1] + h[1] * c[2]))
            }
        } else {
            let q = p - self.ph0;
            let mut c = [q % h[0], (q / h[0]) % h[1], q / (h[0] * h[1])];
            if e < 6 {
                let a = e >> 1;
                if e & 1 == 1 {
                    c[a] += 1;
                    if c[a] >= h[a] {
                        return None;
                    }
                } else {
                    c[a] -= 1;
                    if c[a] < 0 {
                        return None;
                    }
                }
                Some(self.ph0 + c[0] + h[0] * (c[1] + h[1] * c[2]))
            } else {
                let k = (e - 6) as i64;
                c[0] += (k & 1) - 1;
                c[1] += (((k >> 1) ^ k) & 1) - 1;
                c[2] += (((k >> 2) ^ k) & 1) - 1;
                if (0..3).any(|i| c[i] < 0 || c[i] >= g[i]) {
                    return None;
                }
                Some(c[0] + g[0] * (c[1] + g[1] * c[2]))
            }
        }
    }
}

/// Squared length of edge `e` in units of (size/2)²: 4 along an axis, 3 on a diagonal.
fn edge_size2(e: usize) -> f64 {
    if e < 6 {
        4.0
    } else {
        3.0
    }
}

struct Builder<'a> {
    lat: &'a Lattice,
    inside: Vec<i64>,
    split_points: BTreeMap<(usize, usize), usize>,
    split: bool,
    errors: Vec<String>,
}

fn vol6(x: &[P3], p1: usize, p2: usize, p3: usize, p4: usize) -> f64 {
    let a = sub(x[p2], x[p1]);
    let b = sub(x[p3], x[p1]);
    let c = sub(x[p4], x[p1]);
    dot(a, cross(b, c))
}

impl Builder<'_> {
    fn split_point(&mut self, from: usize, to: usize) -> usize {
        if let Some(&p) = self.split_points.get(&(from, to)).or_else(|| self.split_points.get(&(to, from))) {
            return p;
        }
        self.errors.push(format!("cut point between {from} and {to} not found"));
        from
    }

    fn add_final(out: &mut Vec<[usize; 4]>, x: &[P3], p1: usize, p2: usize, mut p3: usize, mut p4: usize, flip: bool) {
        if flip {
            std::mem::swap(&mut p3, &mut p4);
        }
        if vol6(x, p1, p2, p3, p4) < 0.0 {
            std::mem::swap(&mut p3, &mut p4);
        }
        out.push([p1, p2, p3, p4]);
    }

    /// Whether the quad (a, b, c, d) of a cut face is split along b–d (else a–c), from which
    /// grid its points are on (so that neighbouring tetrahedra agree).
    fn flip_diag(&self, x: &[P3], a: usize, b: usize, c: usize, e: usize) -> bool {
        let ph0 = self.lat.ph0 as usize;
        if e < ph0 {
            if a < ph0 {
                return true;
            } else if b < ph0 {
                return false;
            }
        } else if a >= ph0 {
            return true;
        } else if b >= ph0 {
            return false;
        }
        let nsup = (0..3).filter(|&i| x[a][i] > x[c][i]).count();
        (nsup & 1) != usize::from(a < ph0)
    }

    /// Whether a sub-tetrahedron listed from `p` must be turned over to keep the orientation of
    /// the lattice tetrahedron `q` (SOFA's parity test on the rotated vertex lists).
    fn need_flip(mut p: [usize; 4], mut q: [usize; 4]) -> bool {
        let mut flip = false;
        while p[0] > p[1] || p[0] > p[2] || p[0] > p[3] {
            p.rotate_left(1);
            flip = !flip;
        }
        while q[0] > q[1] || q[0] > q[2] || q[0] > q[3] {
            q.rotate_left(1);
            flip = !flip;
        }
        while p[1] > p[2] || p[1] > p[3] {
            p[1..].rotate_left(1);
        }
        while q[1] > q[2] || q[1] > q[3] {
            q[1..].rotate_left(1);
        }
        if p[2] == q[3] {
            flip = !flip;
        }
        flip
    }

    fn add_tetra(&mut self, out: &mut Vec<[usize; 4]>, x: &[P3], p1: usize, p2: usize, mut p3: usize, mut p4: usize) {
        if vol6(x, p1, p2, p3, p4) < 0.0 {
            std::mem::swap(&mut p3, &mut p4);
        }
        let (mut p1, mut p2) = (p1, p2);
        let ins = [self.inside[p1], self.inside[p2], self.inside[p3], self.inside[p4]];
        let (mut neg, mut pos, mut zero) = (Vec::new(), Vec::new(), Vec::new());
        for (&p, &i) in [p1, p2, p3, p4].iter().zip(&ins) {
            match i.cmp(&0) {
                std::cmp::Ordering::Less => neg.push(p),
                std::cmp::Ordering::Greater => pos.push(p),
                std::cmp::Ordering::Equal => zero.push(p),
            }
        }
        if pos.is_empty() && !neg.is_empty() {
            return;
        }
        let q = [p1, p2, p3, p4];
        if neg.is_empty() || !self.split {
            Self::add_final(out, x, p1, p2, p3, p4, false);
        } else if pos.len() == 1 {
            let p0 = pos[0];
            if ins[0] < 0 {
                p1 = self.split_point(p1, p0);
            }
            if ins[1] < 0 {
                p2 = self.split_point(p2, p0);
            }
            if ins[2] < 0 {
                p3 = self.split_point(p3, p0);
            }
            if ins[3] < 0 {
                p4 = self.split_point(p4, p0);
            }
            Self::add_final(out, x, p1, p2, p3, p4, false);
        } else if pos.len() == 2 && neg.len() == 1 {
            let p0 = zero[0];
            let cut1 = self.split_point(neg[0], pos[0]);
            let cut2 = self.split_point(neg[0], pos[1]);
            let flip_d = self.flip_diag(x, pos[0], pos[1], cut2, neg[0]);
            let flip_t = Self::need_flip([p0, pos[0], pos[1], neg[0]], q);
            if !flip_d {
                Self::add_final(out, x, p0, pos[0], pos[1], cut2, flip_t);
                Self::add_final(out, x, p0, pos[0], cut2, cut1, flip_t);
            } else {
                Self::add_final(out, x, p0, pos[0], pos[1], cut1, flip_t);
                Self::add_final(out, x, p0, pos[1], cut2, cut1, flip_t);
            }
        } else if pos.len() == 2 && neg.len() == 2 {
            let cut1 = self.split_point(neg[0], pos[0]);
            let cut2 = self.split_point(neg[0], pos[1]);
            let cut3 = self.split_point(neg[1], pos[0]);
            let cut4 = self.split_point(neg[1], pos[1]);
            let flip_a = self.flip_diag(x, pos[0], pos[1], cut2, neg[0]);
            let flip_b = self.flip_diag(x, pos[0], pos[1], cut4, neg[1]);
            let flip_t = Self::need_flip([pos[0], pos[1], neg[0], neg[1]], q);
            if !flip_a && flip_b {
                Self::add_final(out, x, pos[0], pos[1], cut2, cut3, flip_t);
                Self::add_final(out, x, pos[0], cut2, cut1, cut3, flip_t);
                Self::add_final(out, x, pos[1], cut2, cut3, cut4, flip_t);
            } else if flip_a && !flip_b {
                Self::add_final(out, x, pos[0], pos[1], cut1, cut4, flip_t);
                Self::add_final(out, x, pos[1], cut1, cut4, cut2, flip_t);
                Self::add_final(out, x, pos[0], cut1, cut3, cut4, flip_t);
            } else {
                self.errors.push(format!("invalid tetra split: flipA = {flip_a}, flipB = {flip_b}"));
            }
        } else {
            // 3 inside, 1 outside.
            let cut1 = self.split_point(neg[0], pos[0]);
            let cut2 = self.split_point(neg[0], pos[1]);
            let cut3 = self.split_point(neg[0], pos[2]);
            let flip1 = self.flip_diag(x, pos[0], pos[1], cut2, neg[0]);
            let flip2 = self.flip_diag(x, pos[1], pos[2], cut3, neg[0]);
            let mut flip3 = self.flip_diag(x, pos[2], pos[0], cut1, neg[0]);
            if flip1 == flip2 && flip2 == flip3 {
                self.errors.push("invalid tetra split".into());
                flip3 = !flip1;
            }
            let pp0 = if flip1 && !flip2 {
                pos[1]
            } else if flip2 && !flip3 {
                pos[2]
            } else {
                pos[0]
            };
            let pc0 = if !flip1 && flip2 {
                cut2
            } else if !flip2 && flip3 {
                cut3
            } else {
                cut1
            };
            let flip_t = Self::need_flip([neg[0], pos[0], pos[1], pos[2]], q);
            Self::add_final(out, x, pp0, cut1, cut3, cut2, flip_t);
            Self::add_final(out, x, pc0, pos[0], pos[1], pos[2], flip_t);
            if flip1 == flip2 {
                let f = Self::need_flip([pos[1], neg[0], pp0, if pp0 == pos[0] { pos[2] } else { pos[0] }], q);
                Self::add_final(out, x, pos[1], cut2, pp0, pc0, f);
            } else if flip2 == flip3 {
                let f = Self::need_flip([pos[2], neg[0], pp0, if pp0 == pos[0] { pos[1] } else { pos[0] }], q);
                Self::add_final(out, x, pos[2], cut3, pp0, pc0, f);
            } else {
                let f = Self::need_flip([pos[0], neg[0], pp0, if pp0 == pos[1] { pos[2] } else { pos[1] }], q);
                Self::add_final(out, x, pos[0], cut1, pp0, pc0, f);
            }
        }
    }
}

/// Fills the closed surface (points, triangles) with tetrahedra. `None` for an empty input.
pub fn stuff(points: &[P3], triangles: &[[usize; 3]], o: &StuffingOptions) -> Option<Stuffed> {
    if points.is_empty() || triangles.is_empty() {
        return None;
    }
    let mut ibb = [points[0], points[0]];
    for p in &points[1..] {
        for c in 0..3 {
            if p[c] < ibb[0][c] {
                ibb[0][c] = p[c];
            } else if p[c] > ibb[1][c] {
                ibb[1][c] = p[c];
            }
        }
    }
    let normals: Vec<P3> = triangles.iter().map(|t| cross(sub(points[t[1]], points[t[0]]), sub(points[t[2]], points[t[0]]))).collect();
    let mut bb = o.bbox;
    if bb[0][0] >= bb[1][0] {
        let ext = sub(ibb[1], ibb[0]);
        bb = [sub(ibb[0], scale(ext, 0.01)), add(ibb[1], scale(ext, 0.01))];
    }
    let mut cellsize = o.size;
    if cellsize < 0.0 {
        let b = sub(bb[1], bb[0]);
        let mut bsize = b[0];
        if b[1] > bsize {
            bsize = b[1];
        }
        if b[2] > bsize {
            bsize = b[2];
        }
        cellsize = bsize / -cellsize;
    }
    let p0 = [0, 1, 2].map(|c| (bb[0][c] + bb[1][c]) / 2.0);
    let (mut gsize, mut hsize, mut g0, mut h0) = ([0i64; 3], [0i64; 3], [0.0; 3], [0.0; 3]);
    for c in 0..3 {
        let c0 = -(((p0[c] - bb[0][c]) / cellsize) as i64 + 2);
        let c1 = ((bb[1][c] - p0[c]) / cellsize) as i64 + 2;
        gsize[c] = c1 - c0 + 1;
        g0[c] = p0[c] + c0 as f64 * cellsize;
        hsize[c] = gsize[c] + 1;
        h0[c] = g0[c] - cellsize / 2.0;
    }
    let ng = (gsize[0] * gsize[1] * gsize[2]) as usize;
    let nh = (hsize[0] * hsize[1] * hsize[2]) as usize;
    let mut x: Vec<P3> = Vec::with_capacity(ng + nh);
    for (size, origin) in [(gsize, g0), (hsize, h0)] {
        for z in 0..size[2] {
            for y in 0..size[1] {
                for xi in 0..size[0] {
                    x.push(add(origin, [xi as f64 * cellsize, y as f64 * cellsize, z as f64 * cellsize]));
                }
            }
        }
    }
    let lat = Lattice { gsize, hsize, ph0: ng as i64 };
    let nbp = x.len();
    let mut inside = vec![0i64; nbp];
    let mut dist = vec![[0.0f64; EDGESHELL]; nbp];
    let tri_boxes: Vec<[P3; 2]> = triangles
        .iter()
        .map(|t| {
            let (a, b, c) = (points[t[0]], points[t[1]], points[t[2]]);
            [[0, 1, 2].map(|k| a[k].min(b[k]).min(c[k])), [0, 1, 2].map(|k| a[k].max(b[k]).max(c[k]))]
        })
        .collect();
    let mut hits: Vec<(f64, usize)> = Vec::new();
    for p in 0..nbp {
        for e in (0..EDGESHELL).step_by(2) {
            let (Some(first), None) = (lat.edge_point(p as i64, e), lat.edge_point(p as i64, e + 1)) else { continue };
            let origin = x[p];
            let direction = sub(x[first as usize], origin);
            // Triangles whose box the ray (t ≥ 0) can reach: the others cannot be crossed.
            hits.clear();
            for (t, tri) in triangles.iter().enumerate() {
                let b = &tri_boxes[t];
                let reachable = (0..3).all(|k| match direction[k] {
                    d if d > 0.0 => b[1][k] >= origin[k],
                    d if d < 0.0 => b[0][k] <= origin[k],
                    _ => b[0][k] <= origin[k] && origin[k] <= b[1][k],
                });
                if reachable {
                    if let Some(tp) = ray_triangle(points[tri[0]], points[tri[1]], points[tri[2]], origin, direction) {
                        hits.push((tp, t));
                    }
                }
            }
            if hits.is_empty() {
                continue;
            }
            hits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let res: Vec<(f64, i64)> = hits.iter().map(|&(tp, t)| (tp, if dot(normals[t], direction) < 0.0 { -1 } else { 1 })).collect();
            let n = res.len();
            let mut d = 0i64;
            let mut i = 0usize;
            let mut q = Some(p as i64);
            while let Some(pq) = q {
                let pq = pq as usize;
                let df = d as f64;
                while i < n && res[i].0 < df {
                    i += 1;
                }
                if i >= n {
                    inside[pq] -= res[n - 1].1;
                } else if i == 0 {
                    inside[pq] += res[0].1;
                } else if (df - res[i - 1].0) < (res[i].0 - df) {
                    inside[pq] += res[i].1;
                } else {
                    inside[pq] -= res[i - 1].1;
                }
                if i < n {
                    dist[pq][e] = res[i].0 - df;
                }
                if i > 0 {
                    dist[pq][e + 1] = df - res[i - 1].0;
                }
                q = lat.edge_point(pq as i64, e);
                d += 1;
            }
        }
    }
    for v in inside.iter_mut() {
        if *v == 0 {
            *v = -1;
        }
    }
    let edge = |p: usize, e: usize| lat.edge_point(p as i64, e).map(|q| q as usize);
    let mut errors = Vec::new();
    if o.snap_points {
        let alpha = |e: usize| if e < 6 { o.alpha_long } else { o.alpha_short };
        let mut violated = vec![false; nbp];
        let mut viol_in = BTreeSet::new();
        let mut viol_out = BTreeSet::new();
        for p in 0..nbp {
            let in1 = inside[p] > 0;
            let mut v = false;
            for e in 0..EDGESHELL {
                let Some(p2) = edge(p, e) else { continue };
                if in1 == (inside[p2] > 0) {
                    continue;
                }
                if dist[p][e] != 0.0 && dist[p][e] < alpha(e) {
                    v = true;
                    break;
                }
            }
            violated[p] = v;
            if v {
                if in1 { &mut viol_in } else { &mut viol_out }.insert(p);
            }
        }
        loop {
            let mut nwraps = 0;
            for &p in &viol_out {
                if inside[p] == 0 {
                    continue;
                }
                let mut best: Option<(usize, f64)> = None;
                for e in 0..EDGESHELL {
                    let Some(p2) = edge(p, e) else { continue };
                    if inside[p2] > 0 || violated[p2] {
                        continue;
                    }
                    if dist[p][e] == 0.0 || dist[p][e] >= alpha(e) {
                        continue;
                    }
                    let dd = dist[p][e] * dist[p][e] * edge_size2(e);
                    if best.is_none_or(|(_, m)| dd < m) {
                        best = Some((e, dd));
                    }
                }
                let Some((e, _)) = best else { continue };
                let p2 = edge(p, e).unwrap_or(p);
                x[p] = add(x[p], scale(sub(x[p2], x[p]), dist[p][e]));
                nwraps += 1;
                inside[p] = 0;
                violated[p] = false;
                for e in 0..EDGESHELL {
                    dist[p][e] = 0.0;
                    let Some(p2) = edge(p, e) else { continue };
                    dist[p2][e ^ 1] = 0.0;
                    if violated[p2] && inside[p2] > 0 {
                        // SOFA takes the threshold of the edge from p here (not of e2).
                        let still = (0..EDGESHELL).any(|e2| match edge(p2, e2) {
                            Some(p3) if inside[p3] < 0 => dist[p2][e2] != 0.0 && dist[p2][e2] < alpha(e),
                            _ => false,
                        });
                        if !still {
                            violated[p2] = false;
                            viol_in.remove(&p2);
                        }
                    }
                }
            }
            if nwraps == 0 {
                break;
            }
        }
        for &p in &viol_in {
            if inside[p] == 0 {
                errors.push(format!("inside point {p} already wrapped"));
                continue;
            }
            let mut best: Option<(usize, f64)> = None;
            for e in 0..EDGESHELL {
                let Some(p2) = edge(p, e) else { continue };
                if inside[p2] >= 0 {
                    continue;
                }
                if dist[p][e] == 0.0 || dist[p][e] >= alpha(e) {
                    continue;
                }
                let dd = dist[p][e] * dist[p][e] * edge_size2(e);
                if best.is_none_or(|(_, m)| dd < m) {
                    best = Some((e, dd));
                }
            }
            let Some((e, _)) = best else {
                errors.push(format!("inside point {p} has no violated edges"));
                continue;
            };
            let p2 = edge(p, e).unwrap_or(p);
            x[p] = add(x[p], scale(sub(x[p2], x[p]), dist[p][e]));
            inside[p] = 0;
            violated[p] = false;
            for e in 0..EDGESHELL {
                dist[p][e] = 0.0;
                if let Some(p2) = edge(p, e) {
                    dist[p2][e ^ 1] = 0.0;
                }
            }
        }
    }
    let mut b = Builder { lat: &lat, inside, split_points: BTreeMap::new(), split: o.split_tetrahedra, errors };
    if o.split_tetrahedra {
        for p in 0..nbp {
            if b.inside[p] >= 0 {
                continue;
            }
            for e in 0..EDGESHELL {
                let Some(p2) = edge(p, e) else { continue };
                if b.inside[p2] <= 0 {
                    continue;
                }
                let np = x.len();
                x.push(add(x[p], scale(sub(x[p2], x[p]), dist[p][e])));
                b.split_points.insert((p, p2), np);
            }
        }
    }
    let mut tets: Vec<[usize; 4]> = Vec::new();
    let (g01, h01) = ((gsize[0] * gsize[1]) as usize, (hsize[0] * hsize[1]) as usize);
    let (gx, hx) = (gsize[0] as usize, hsize[0] as usize);
    let mut p = 0usize;
    let mut ph = ng;
    for z in 0..gsize[2] {
        for y in 0..gsize[1] {
            for xi in 0..gsize[0] {
                let shells: [(bool, usize, [usize; 4]); 3] = [
                    (xi > 0, 1, [ph, ph + hx, ph + hx + h01, ph + h01]),
                    (y > 0, gx, [ph, ph + h01, ph + 1 + h01, ph + 1]),
                    (z > 0, g01, [ph, ph + 1, ph + 1 + hx, ph + hx]),
                ];
                for (present, back, hshell) in shells {
                    if !present {
                        continue;
                    }
                    for i in 0..4 {
                        b.add_tetra(&mut tets, &x, p, p - back, hshell[(i + 1) % 4], hshell[i]);
                    }
                }
                p += 1;
                ph += 1;
            }
            ph += 1;
        }
        ph += hx;
    }
    // Keep the points the tetrahedra use, in order.
    let mut new_id = vec![usize::MAX; x.len()];
    for t in &tets {
        for &i in t {
            new_id[i] = 0;
        }
    }
    let mut kept = Vec::new();
    for (i, id) in new_id.iter_mut().enumerate() {
        if *id == 0 {
            *id = kept.len();
            kept.push(x[i]);
        }
    }
    for t in tets.iter_mut() {
        for i in t.iter_mut() {
            *i = new_id[*i];
        }
        if vol6(&kept, t[0], t[1], t[2], t[3]) < 0.0 {
            t.swap(2, 3);
        }
    }
    Some(Stuffed { points: kept, tetrahedra: tets, bbox: bb, errors: b.errors })
}

/// Create a tetrahedral volume mesh from a surface, using the algorithm from F. Labelle and
/// J.R. Shewchuk, "Isosurface Stuffing: Fast Tetrahedral Meshes with Good Dihedral Angles",
/// SIGGRAPH 2007.
#[component(
    module = "Sofa.Component.Engine.Generate",
    markers = [Engine],
    create = |_| MeshTetraStuffing,
    data = {
        /// BBox to restrict the volume to (min then max; computed from the surface, 1% larger, when min x ≥ max x)
        vbbox: Fixed(6) as Reals = "0 0 0 0 0 0",
        /// Size of the generate tetrahedra. If negative, number of grid cells in the largest bbox dimension
        size: Real = "-8",
        /// Input surface mesh points
        inputPoints: RealTuples(3),
        /// Input surface mesh triangles
        inputTriangles: IndexTuples(3),
        /// Input surface mesh quads
        inputQuads: IndexTuples(4),
        /// Output volume mesh points
        outputPoints: RealTuples(3),
        /// Output volume mesh tetrahedra
        #[alias("outputTetras")]
        outputTetrahedra: IndexTuples(4),
        /// Minimum alpha values on long edges when snapping points
        alphaLong: Real = "0.24999",
        /// Minimum alpha values on short edges when snapping points
        alphaShort: Real = "0.42978",
        /// Snap points to the surface if intersections on edges are closed to given alpha values
        snapPoints: Bool = "false",
        /// Split tetrahedra crossing the surface
        #[alias("splitTetras")]
        splitTetrahedra: Bool = "false",
        /// Activate rendering of internal datasets (rendering only)
        draw: Bool = "false",
    },
)]
#[derive(Clone)]
pub struct MeshTetraStuffing;

impl MeshTetraStuffing {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let points: Vec<P3> = d.get(Self::INPUT_POINTS).chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
        let mut triangles: Vec<[usize; 3]> = d.get(Self::INPUT_TRIANGLES).chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        for q in d.get(Self::INPUT_QUADS).chunks_exact(4) {
            triangles.push([q[0], q[1], q[2]]);
            triangles.push([q[0], q[2], q[3]]);
        }
        if let Some(&bad) = triangles.iter().flatten().find(|&&i| i >= points.len()) {
            return Err(cx.error(format!("the input surface refers to point {bad} but has {} points", points.len())));
        }
        let bb = d.get(Self::VBBOX);
        let o = StuffingOptions {
            size: d.get(Self::SIZE),
            bbox: [[bb[0], bb[1], bb[2]], [bb[3], bb[4], bb[5]]],
            alpha_long: d.get(Self::ALPHA_LONG),
            alpha_short: d.get(Self::ALPHA_SHORT),
            snap_points: d.get(Self::SNAP_POINTS),
            split_tetrahedra: d.get(Self::SPLIT_TETRAHEDRA),
        };
        if !(o.size.is_finite() && o.size != 0.0) {
            return Err(cx.error(format!("size {} gives no grid", o.size)).hint("a cell size (> 0) or minus a number of cells (< 0)"));
        }
        let Some(s) = stuff(&points, &triangles, &o) else {
            cx.warn("empty input mesh: link inputPoints and inputTriangles (or inputQuads) to a loaded topology or mesh loader");
            return Ok(());
        };
        for e in s.errors.iter().take(5) {
            cx.warn(e.clone());
        }
        let out = cx.data_mut();
        out.put(Self::VBBOX, s.bbox.iter().flatten().copied().collect());
        out.put(Self::OUTPUT_POINTS, s.points.iter().flatten().copied().collect());
        out.put(Self::OUTPUT_TETRAHEDRA, s.tetrahedra.iter().flatten().copied().collect());
        Ok(())
    }
}

impl Component for MeshTetraStuffing {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: P3 = [0.1, 0.2, 0.3];

    /// A closed UV sphere of radius 1 around `C`, triangles facing outwards, turned so that
    /// no lattice line goes through its poles or along its meridians (where a ray meets
    /// triangles exactly on their edges).
    fn sphere() -> (Vec<P3>, Vec<[usize; 3]>) {
        let (a, b) = (0.37f64, 0.61f64);
        let turn = |v: P3| {
            let v = [v[0], v[1] * a.cos() - v[2] * a.sin(), v[1] * a.sin() + v[2] * a.cos()];
            [v[0] * b.cos() + v[2] * b.sin(), v[1], -v[0] * b.sin() + v[2] * b.cos()]
        };
        let (nlat, nlon) = (12, 24);
        let mut x = vec![add(C, turn([0.0, 0.0, 1.0]))];
        for i in 1..nlat {
            let th = std::f64::consts::PI * i as f64 / nlat as f64;
            for j in 0..nlon {
                let ph = 2.0 * std::f64::consts::PI * j as f64 / nlon as f64;
                x.push(add(C, turn([th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()])));
            }
        }
        x.push(add(C, turn([0.0, 0.0, -1.0])));
        let last = x.len() - 1;
        let ring = |i: usize, j: usize| 1 + (i - 1) * nlon + j % nlon;
        let mut t = Vec::new();
        for j in 0..nlon {
            t.push([0, ring(1, j), ring(1, j + 1)]);
            t.push([last, ring(nlat - 1, j + 1), ring(nlat - 1, j)]);
            for i in 1..nlat - 1 {
                t.push([ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)]);
                t.push([ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)]);
            }
        }
        for tri in t.iter_mut() {
            let n = cross(sub(x[tri[1]], x[tri[0]]), sub(x[tri[2]], x[tri[0]]));
            if dot(n, sub(x[tri[0]], C)) < 0.0 {
                tri.swap(1, 2);
            }
        }
        (x, t)
    }

    fn volumes(s: &Stuffed) -> Vec<f64> {
        s.tetrahedra.iter().map(|t| vol6(&s.points, t[0], t[1], t[2], t[3]) / 6.0).collect()
    }

    fn opts(snap: bool, split: bool) -> StuffingOptions {
        StuffingOptions { size: 0.3, bbox: [[0.0; 3], [0.0; 3]], alpha_long: 0.3, alpha_short: 0.4, snap_points: snap, split_tetrahedra: split }
    }

    /// Without snapping or splitting: the lattice tetrahedra that have an inside point, all
    /// positively oriented, each of volume cell³/12 (the BCC tetrahedron); together they
    /// cover the sphere.
    #[test]
    fn lattice_tetrahedra_cover_the_sphere() {
        let (x, t) = sphere();
        let s = stuff(&x, &t, &opts(false, false)).unwrap();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let v = volumes(&s);
        let cell = 0.3f64.powi(3) / 12.0;
        assert!(v.iter().all(|&vi| (vi - cell).abs() < 1e-12), "every lattice tetrahedron is a BCC tetrahedron");
        let total: f64 = v.iter().sum();
        let sphere_volume: f64 = t.iter().map(|f| dot(sub(x[f[0]], C), cross(sub(x[f[1]], C), sub(x[f[2]], C))) / 6.0).sum();
        assert!(total > sphere_volume, "{total} covers {sphere_volume}");
        // The box: the surface's, widened by 1% of its extent on each side.
        let (lo, hi) = (x.iter().map(|p| p[0]).fold(f64::MAX, f64::min), x.iter().map(|p| p[0]).fold(f64::MIN, f64::max));
        assert_eq!([s.bbox[0][0], s.bbox[1][0]], [lo - (hi - lo) * 0.01, hi + (hi - lo) * 0.01]);
    }

    /// With snapping and splitting (MeshTetraStuffing.scn's options): no point is outside
    /// the surface (cut and snapped points lie on it), every tetrahedron is positive, and the
    /// mesh, inscribed in the convex surface, fills 97% to 100% of its volume.
    #[test]
    fn split_mesh_fills_the_sphere() {
        let (x, t) = sphere();
        let s = stuff(&x, &t, &opts(true, true)).unwrap();
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let v = volumes(&s);
        let bad: Vec<f64> = v.iter().copied().filter(|&vi| vi <= 0.0).collect();
        assert!(bad.is_empty(), "{} of {}: {bad:?}", bad.len(), v.len());
        let total: f64 = v.iter().sum();
        let sphere_volume: f64 = t.iter().map(|f| dot(sub(x[f[0]], C), cross(sub(x[f[1]], C), sub(x[f[2]], C))) / 6.0).sum();
        assert!(total <= sphere_volume + 1e-12 && total > 0.97 * sphere_volume, "{total} vs {sphere_volume}");
        let r = |p: &P3| dot(sub(*p, C), sub(*p, C)).sqrt();
        assert!(s.points.iter().all(|p| r(p) <= 1.0 + 1e-9));
        let used: BTreeSet<usize> = s.tetrahedra.iter().flatten().copied().collect();
        assert_eq!(used.len(), s.points.len(), "only used points are kept");
    }
}
