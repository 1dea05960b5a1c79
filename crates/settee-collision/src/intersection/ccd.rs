//! Continuous collision detection: `CCDTightInclusionIntersection`.
//!
//! A vertex–face or edge–edge pair collides during a step when, for some time `t ∈ [0, 1]` of
//! the step and some parameters `(u, v)` on the two primitives, the vector between the two
//! moving points is within the minimum separation of zero. The test follows the inclusion-based
//! root finder of Wang, Ferguson, Schneider, Jiang, Attene and Panozzo ("A Large-Scale Benchmark
//! and an Inclusion-Based Algorithm for Continuous Collision Detection", ACM TOG 2021), as SOFA
//! uses it through the Tight-Inclusion library (version 1.0.6, breadth-first search, double
//! precision):
//!
//! * the box `[0, 1]³` of `(t, u, v)` is split in halves, breadth first (level by level, earlier
//!   times first within a level); a box is kept while, in every coordinate, the values of the
//!   function at its eight corners span an interval meeting `[−err − ms, err + ms]` — the
//!   function is multilinear in `(u, v)` for each `t` and linear in `t`, so the corners bound
//!   it, and `err` bounds the rounding of its evaluation (a conservative, certified test);
//! * a box whose corner values all lie within the tolerance of the co-domain, or that is thin
//!   enough in every parameter, answers "collides" with the start of its time interval as the
//!   time of impact;
//! * past `max_itr` boxes, the answer is "collides" at the earliest time of the last level.
//!
//! SOFA's numbers depend on when the search stops, so the search is reproduced exactly: the
//! interval ends are dyadic rationals (exact bisection), the corners are evaluated with the same
//! operations in the same order, and the queue is a binary heap with libstdc++'s sifting (boxes
//! with the same level and start time leave the queue in the same order as in SOFA).

use super::common::{bigger_model_id, discrete_table, lookup, Entry};
use super::kernels::{cross, div, dot, normalized};
use super::{DiscreteIntersection, IntersectionMethod, PairSupport};
use crate::geometry::{Aabb, ModelGeometry, PrimitiveKind, Sweep, Vec3};
use crate::output::DetectionOutput;

/// `n / 2^p` in lowest terms (odd `n`, or `0/1`): an end of a parameter interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Dyadic {
    num: u64,
    pow: u8,
}

impl Dyadic {
    const ZERO: Dyadic = Dyadic { num: 0, pow: 0 };
    const ONE: Dyadic = Dyadic { num: 1, pow: 0 };
    /// Deeper halvings would overflow the 64-bit numerator.
    const MAX_POW: u8 = 63;

    fn den(self) -> f64 {
        (1u64 << self.pow) as f64
    }

    fn value(self) -> f64 {
        self.num as f64 / self.den()
    }

    /// Both numerators over the common denominator `2^max(p1, p2)`.
    fn common(self, o: Dyadic) -> (u128, u128, u8) {
        let p = self.pow.max(o.pow);
        ((self.num as u128) << (p - self.pow), (o.num as u128) << (p - o.pow), p)
    }

    fn lt(self, o: Dyadic) -> bool {
        let (a, b, _) = self.common(o);
        a < b
    }

    /// `(a + b) / 2`, exact, in lowest terms; `None` past [`Dyadic::MAX_POW`].
    fn midpoint(a: Dyadic, b: Dyadic) -> Option<Dyadic> {
        let (x, y, p) = a.common(b);
        let mut num = x + y;
        let mut pow = p as u32 + 1;
        while num != 0 && num & 1 == 0 {
            num >>= 1;
            pow -= 1;
        }
        if num == 0 {
            pow = 0;
        }
        (pow < Dyadic::MAX_POW as u32).then_some(Dyadic { num: num as u64, pow: pow as u8 })
    }

    /// `a + b ≤ 1`, exact.
    fn sum_at_most_one(a: Dyadic, b: Dyadic) -> bool {
        let (x, y, p) = a.common(b);
        x + y <= 1u128 << p
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Interval {
    lo: Dyadic,
    hi: Dyadic,
}

impl Interval {
    const UNIT: Interval = Interval { lo: Dyadic::ZERO, hi: Dyadic::ONE };

    fn width(&self) -> f64 {
        self.hi.value() - self.lo.value()
    }
}

/// A box of `(t, u, v)` and its level in the breadth-first search.
#[derive(Clone, Copy, Debug)]
struct SearchBox {
    tuv: [Interval; 3],
    level: i32,
}

/// Which of two boxes leaves the queue later: the deeper one, else the later one in time.
fn leaves_later(a: &SearchBox, b: &SearchBox) -> bool {
    if a.level != b.level {
        a.level >= b.level
    } else {
        b.tuv[0].lo.lt(a.tuv[0].lo)
    }
}

/// A max-heap ordered by [`leaves_later`] (the top leaves first), sifting as libstdc++'s
/// `push_heap`/`pop_heap` do, so that ties leave in SOFA's order.
#[derive(Default)]
struct BoxQueue {
    heap: Vec<SearchBox>,
}

impl BoxQueue {
    fn push(&mut self, b: SearchBox) {
        self.heap.push(b);
        let hole = self.heap.len() - 1;
        self.sift_up(hole, 0, b);
    }

    /// Moves `value` up from `hole` towards `top` while its parent leaves later than it.
    fn sift_up(&mut self, mut hole: usize, top: usize, value: SearchBox) {
        while hole > top {
            let parent = (hole - 1) / 2;
            if !leaves_later(&self.heap[parent], &value) {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = value;
    }

    fn pop(&mut self) -> Option<SearchBox> {
        let n = self.heap.len();
        if n <= 1 {
            return self.heap.pop();
        }
        let top = self.heap[0];
        let value = self.heap[n - 1];
        self.heap[n - 1] = top;
        // Adjust the heap of the first n − 1 boxes: the hole at the root goes down along the
        // child that leaves first, then `value` goes up from there.
        let len = n - 1;
        let mut hole = 0;
        let mut child = 0;
        while child < (len - 1) / 2 {
            child = 2 * (child + 1);
            if leaves_later(&self.heap[child], &self.heap[child - 1]) {
                child -= 1;
            }
            self.heap[hole] = self.heap[child];
            hole = child;
        }
        if len & 1 == 0 && child == (len - 2) / 2 {
            child = 2 * (child + 1);
            self.heap[hole] = self.heap[child - 1];
            hole = child - 1;
        }
        self.sift_up(hole, 0, value);
        self.heap.pop()
    }
}

/// A vertex–face pair (`a` the vertex, `b c d` the face) or an edge–edge pair (`a b` and
/// `c d`) at the start (`p0`) and the end (`p1`) of the step.
#[derive(Clone, Copy, Debug)]
pub struct SweptPair {
    pub vertex_face: bool,
    pub p0: [Vec3; 4],
    pub p1: [Vec3; 4],
}

/// The parameters of a continuous test (Tight-Inclusion's `ms`, `tolerance`, `max_itr`).
#[derive(Clone, Copy, Debug)]
pub struct CcdSettings {
    /// Minimum separation: distances below it count as contact.
    pub min_separation: f64,
    /// Tolerance on the co-domain (distance); the parameter tolerances derive from it.
    pub tolerance: f64,
    /// Boxes examined before answering conservatively; ≤ 0 means no limit.
    pub max_iterations: i64,
}

/// What a continuous test found: the time of impact in `[0, 1]` (a lower bound) and the
/// precision reached (larger than the requested tolerance when the search was cut short).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Impact {
    pub toi: f64,
    pub precision: f64,
}

impl SweptPair {
    /// The difference between the two moving points at the eight corners of a box, in one
    /// coordinate: corner `i` takes `t` from bit 2, `u` from bit 1, `v` from bit 0.
    fn corners(&self, tuv: &[Interval; 3], dim: usize) -> [f64; 8] {
        let ends = |iv: &Interval| [(iv.lo.num as f64, iv.lo.den()), (iv.hi.num as f64, iv.hi.den())];
        let (ts, us, vs) = (ends(&tuv[0]), ends(&tuv[1]), ends(&tuv[2]));
        let [a0, b0, c0, d0] = self.p0.map(|p| p[dim]);
        let [a1, b1, c1, d1] = self.p1.map(|p| p[dim]);
        let mut out = [0.0; 8];
        for (i, o) in out.iter_mut().enumerate() {
            let (tn, td) = ts[i >> 2];
            let (un, ud) = us[(i >> 1) & 1];
            let (vn, vd) = vs[i & 1];
            let a = (a1 - a0) * tn / td + a0;
            let b = (b1 - b0) * tn / td + b0;
            let c = (c1 - c0) * tn / td + c0;
            let d = (d1 - d0) * tn / td + d0;
            *o = if self.vertex_face { a - ((c - b) * un / ud + (d - b) * vn / vd + b) } else { ((b - a) * un / ud + a) - ((d - c) * vn / vd + c) };
        }
        out
    }

    /// Whether the box may hold a root: per coordinate, the corners' range meets
    /// `[−err − ms, err + ms]`. Also tells whether that range lies inside it in every
    /// coordinate, and the ranges' widths (of the coordinates examined).
    fn inclusion(&self, tuv: &[Interval; 3], err: &[f64; 3], ms: f64, widths: &mut [f64; 3]) -> Option<bool> {
        let mut inside = true;
        for dim in 0..3 {
            let vs = self.corners(tuv, dim);
            let (mut lo, mut hi) = (vs[0], vs[0]);
            for &v in &vs[1..] {
                if lo > v {
                    lo = v;
                }
                if hi < v {
                    hi = v;
                }
            }
            widths[dim] = hi - lo;
            let e = err[dim] + ms;
            if lo > e || hi < -e {
                return None;
            }
            inside &= lo >= -e && hi <= e;
        }
        Some(inside)
    }

    /// The parameter tolerances (t, u, v) giving a co-domain tolerance `tolerance`: `tolerance`
    /// over three times the largest motion along each parameter's edges of the box.
    fn parameter_tolerances(&self, tolerance: f64) -> [f64; 3] {
        let [a0, b0, c0, d0] = self.p0;
        let [a1, b1, c1, d1] = self.p1;
        // The function at the corners (t, u, v) ∈ {0, 1}³, named pTUV.
        let (p000, p001, p010, p011, p100, p101, p110, p111) = if self.vertex_face {
            (a0 - b0, a0 - d0, a0 - c0, a0 - (c0 + d0 - b0), a1 - b1, a1 - d1, a1 - c1, a1 - (c1 + d1 - b1))
        } else {
            (a0 - c0, a0 - d0, b0 - c0, b0 - d0, a1 - c1, a1 - d1, b1 - c1, b1 - d1)
        };
        let linf = |v: Vec3| v[0].abs().max(v[1].abs()).max(v[2].abs());
        let largest = |pairs: [(Vec3, Vec3); 4]| pairs.iter().map(|(x, y)| linf(y - x)).fold(f64::NEG_INFINITY, f64::max);
        let along_t = 3.0 * largest([(p000, p100), (p001, p101), (p011, p111), (p010, p110)]);
        let along_u = 3.0 * largest([(p000, p010), (p100, p110), (p101, p111), (p001, p011)]);
        let along_v = 3.0 * largest([(p000, p001), (p100, p101), (p110, p111), (p010, p011)]);
        let ratio = |l: f64| if l == 0.0 { f64::INFINITY } else { tolerance / l };
        [ratio(along_t), ratio(along_u), ratio(along_v)]
    }

    /// The bound of the rounding error of the corner evaluation (Tight-Inclusion's filters for
    /// double precision, scaled by the cube of the coordinates' magnitude up to 1).
    fn rounding_bound(&self, with_separation: bool) -> [f64; 3] {
        let filter = match (self.vertex_face, with_separation) {
            (true, false) => 6.661338147750939e-15,
            (true, true) => 7.549516567451064e-15,
            (false, false) => 6.217248937900877e-15,
            (false, true) => 7.105427357601002e-15,
        };
        let mut m = [0.0f64; 3];
        for p in self.p0.iter().chain(self.p1.iter()) {
            for c in 0..3 {
                m[c] = m[c].max(p[c].abs());
            }
        }
        m.map(|x| filter * x.min(1.0).powf(3.0))
    }

    /// Whether the pair collides during the step, and when: Tight-Inclusion's breadth-first
    /// search over `[0, 1]³`.
    pub fn impact(&self, s: &CcdSettings) -> Option<Impact> {
        let tol = self.parameter_tolerances(s.tolerance);
        let err = self.rounding_bound(s.min_separation > 0.0);
        let mut queue = BoxQueue::default();
        queue.push(SearchBox { tuv: [Interval::UNIT; 3], level: -1 });
        let mut examined: i64 = 0;
        // Where a thin enough box (or one inside the tolerance box) was met: later boxes are
        // not looked at.
        let mut skip_from: Option<Dyadic> = None;
        let (mut this_level, mut level_all_thin) = (-2, true);
        let (mut root_level, mut level_root): (i32, Option<Impact>) = (-2, None);
        let mut range_widths = [0.0; 3];
        while let Some(b) = queue.pop() {
            let t0 = b.tuv[0].lo;
            if skip_from.is_some_and(|s| !t0.lt(s)) {
                continue;
            }
            if this_level != b.level {
                this_level = b.level;
                level_all_thin = true;
            }
            examined += 1;
            let Some(inside) = self.inclusion(&b.tuv, &err, s.min_separation, &mut range_widths) else { continue };
            let widths = [b.tuv[0].width(), b.tuv[1].width(), b.tuv[2].width()];
            let thin_range = range_widths.iter().all(|&w| w <= s.tolerance);
            let thin_box = widths.iter().zip(&tol).all(|(w, t)| w <= t);
            let inside_first = inside && level_all_thin;
            if !thin_range {
                level_all_thin = false;
            }
            if thin_box || inside_first || level_all_thin {
                return Some(Impact { toi: t0.value(), precision: s.tolerance });
            }
            if s.max_iterations > 0 {
                if root_level != b.level {
                    root_level = b.level;
                    level_root = None;
                }
                let first = *level_root.get_or_insert(Impact { toi: t0.value(), precision: range_widths.iter().fold(s.tolerance, |m, &w| m.max(w)) });
                if examined > s.max_iterations {
                    return Some(first);
                }
            }
            if thin_range || inside {
                if skip_from.is_none_or(|s| t0.lt(s)) {
                    skip_from = Some(t0);
                }
                continue;
            }
            let split = next_split(&widths, &tol);
            let Some(mid) = Dyadic::midpoint(b.tuv[split].lo, b.tuv[split].hi) else {
                // The box cannot be halved any more: answer conservatively.
                return Some(Impact { toi: t0.value(), precision: s.tolerance });
            };
            let halves = [Interval { lo: mid, hi: b.tuv[split].hi }, Interval { lo: b.tuv[split].lo, hi: mid }];
            for h in halves {
                let mut tuv = b.tuv;
                tuv[split] = h;
                // The face's parameters keep u + v ≤ 1 (by their lower ends).
                let keep = !self.vertex_face || split == 0 || Dyadic::sum_at_most_one(tuv[1].lo, tuv[2].lo);
                if keep {
                    queue.push(SearchBox { tuv, level: b.level + 1 });
                }
            }
        }
        skip_from.map(|t| Impact { toi: t.value(), precision: s.tolerance })
    }
}

/// The parameter to halve: the widest relative to its tolerance, among those wider than it
/// (the first on ties; `t` when none is).
fn next_split(widths: &[f64; 3], tol: &[f64; 3]) -> usize {
    let score = |i: usize| if widths[i] > tol[i] { widths[i] / tol[i] } else { f64::NEG_INFINITY };
    let mut best = 0;
    for i in 1..3 {
        if score(i) > score(best) {
            best = i;
        }
    }
    best
}

/// SOFA's `CCDTightInclusionIntersection`: Triangle–Point and Line–Line pairs tested over the
/// step's motion (from the positions to the free-motion positions, or along the velocities),
/// the other pairs as `DiscreteIntersection` does, or ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct CcdIntersection {
    pub alarm_distance: f64,
    pub contact_distance: f64,
    /// What the primitives sweep (SOFA's `continuousCollisionType`): with `None` the method
    /// tests the pairs at rest (no motion).
    pub sweep_kind: SweepKind,
    /// `tolerance`.
    pub tolerance: f64,
    /// `maxIterations`.
    pub max_iterations: i64,
}

/// SOFA's `continuousCollisionType` options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepKind {
    None,
    Inertia,
    FreeMotion,
}

impl Default for CcdIntersection {
    fn default() -> Self {
        CcdIntersection { alarm_distance: 1.0, contact_distance: 0.5, sweep_kind: SweepKind::None, tolerance: 1e-10, max_iterations: 1000 }
    }
}

impl CcdIntersection {
    fn table(k1: PrimitiveKind, k2: PrimitiveKind) -> Option<Entry> {
        use PrimitiveKind::*;
        match (k1, k2) {
            (Cube, Cube) | (Line, Line) | (Triangle, Point) => Some(Entry::Run),
            (Sphere | RigidSphere, Sphere | RigidSphere) | (Sphere | RigidSphere, Point) | (Point, Point) | (Line, Point) => Some(Entry::Ignore),
            (Line, Sphere | RigidSphere) | (Triangle, Line) | (Triangle, Triangle) | (Triangle, Sphere | RigidSphere) => Some(Entry::Ignore),
            _ => discrete_table(k1, k2),
        }
    }

    fn settings(&self, min_separation: f64) -> CcdSettings {
        CcdSettings { min_separation, tolerance: self.tolerance, max_iterations: self.max_iterations }
    }

    /// Triangle `e1` of `g1` against point `e2` of `g2`.
    fn triangle_point(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let [ia, ib, ic] = g1.triangles[e1];
        let (x1, e1x) = (&g1.x, ends(g1));
        let (x2, e2x) = (&g2.x, ends(g2));
        let [a, b, c, p] = [x1[ia], x1[ib], x1[ic], x2[e2]];
        let [af, bf, cf, pf] = [e1x[ia], e1x[ib], e1x[ic], e2x[e2]];
        // The intersection's, the triangle's and the point's skins, in SOFA's order.
        let ms = self.contact_distance + g1.contact_distance + g2.contact_distance;
        let pair = SweptPair { vertex_face: true, p0: [p, a, b, c], p1: [pf, af, bf, cf] };
        let Some(hit) = pair.impact(&self.settings(ms)) else { return 0 };
        let t = hit.toi;
        let at = |x: Vec3, xf: Vec3| x * (1.0 - t) + xf * t;
        let (at_, bt, ct, pt) = (at(a, af), at(b, bf), at(c, cf), at(p, pf));
        let centre = div(&(at_ + bt + ct), 3.0);
        let normal = normalized(cross(&(bt - at_), &(ct - at_)));
        let rel = pt - centre;
        let projected = (centre + rel) - normal * dot(&rel, &normal);
        let w = barycentric(&projected, &at_, &bt, &ct);
        // The contact point on the triangle at the start of the step.
        let q = a * w[0] + b * w[1] + c * w[2];
        out.push(DetectionOutput {
            elem: (e1, e2),
            id: if g1.len() > g2.len() { e1 as i64 } else { e2 as i64 },
            point: [q, p],
            normal,
            value: dot(&(p - q), &normal) - ms,
        });
        1
    }

    /// Line `e1` of `g1` against line `e2` of `g2`.
    fn line_line(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        let [i1, j1] = g1.edges[e1];
        let [i2, j2] = g2.edges[e2];
        let (e1x, e2x) = (ends(g1), ends(g2));
        let [a, b, c, d] = [g1.x[i1], g1.x[j1], g2.x[i2], g2.x[j2]];
        let [af, bf, cf, df] = [e1x[i1], e1x[j1], e2x[i2], e2x[j2]];
        let ms = self.contact_distance + g1.contact_distance + g2.contact_distance;
        // SOFA hands the library the edges (first ends of both lines) and (second ends of both
        // lines), not the two lines: reproduced, as it decides which pairs collide.
        let pair = SweptPair { vertex_face: false, p0: [a, c, b, d], p1: [af, cf, bf, df] };
        let Some(hit) = pair.impact(&self.settings(ms)) else { return 0 };
        let t = hit.toi;
        let at = |x: Vec3, xf: Vec3| x * (1.0 - t) + xf * t;
        let (at_, bt, ct, dt) = (at(a, af), at(b, bf), at(c, cf), at(d, df));
        let [alpha, beta] = closest_on_lines(&at_, &bt, &ct, &dt);
        let on1 = at_ * (1.0 - alpha) + bt * alpha;
        let on2 = ct * (1.0 - beta) + dt * beta;
        let gap = on2 - on1;
        let len = dot(&gap, &gap).sqrt();
        out.push(DetectionOutput {
            elem: (e1, e2),
            id: bigger_model_id(g1, e1, g2, e2),
            point: [a * (1.0 - alpha) + b * alpha, c * (1.0 - beta) + d * beta],
            normal: div(&gap, len),
            value: len - ms,
        });
        1
    }
}

/// The ends of the sweep of a model's DOFs (its positions when it does not sweep).
fn ends(g: &ModelGeometry) -> &[Vec3] {
    if g.x_end.len() == g.x.len() {
        &g.x_end
    } else {
        &g.x
    }
}

/// Barycentric coordinates of `p` in the triangle `(a, b, c)` by signed areas
/// (`sofa::geometry::Triangle::getBarycentricCoordinates`): `(−1, −1, −1)` for a flat triangle,
/// the third coordinate snapped to 0 within machine epsilon.
fn barycentric(p: &Vec3, a: &Vec3, b: &Vec3, c: &Vec3) -> [f64; 3] {
    let n = cross(&(b - a), &(c - a));
    let nn = dot(&n, &n);
    if nn < f64::EPSILON * f64::EPSILON {
        return [-1.0; 3];
    }
    let w0 = dot(&n, &cross(&(c - b), &(p - b))) / nn;
    let w1 = dot(&n, &cross(&(a - c), &(p - c))) / nn;
    let mut w2 = 1.0 - w0 - w1;
    if w2.abs() <= f64::EPSILON {
        w2 = 0.0;
    }
    [w0, w1, w2]
}

/// The parameters `(α, β)` of the closest points of the lines `a + α(b − a)` and
/// `c + β(d − c)` (`sofa::geometry::Edge::closestPointWithEdge`): `(0, 0)` for parallel
/// lines, each snapped to 0 or 1 within 1e-6.
fn closest_on_lines(a: &Vec3, b: &Vec3, c: &Vec3, d: &Vec3) -> [f64; 2] {
    const SNAP: f64 = 1e-6;
    let (ab, cd, ca) = (b - a, d - c, a - c);
    let (ca_cd, ab_cd, cd_cd, ca_ab, ab_ab) = (dot(&ca, &cd), dot(&ab, &cd), dot(&cd, &cd), dot(&ca, &ab), dot(&ab, &ab));
    let den = ab_ab * cd_cd - ab_cd * ab_cd;
    if den < f64::EPSILON {
        return [0.0, 0.0];
    }
    let alpha = (ca_cd * ab_cd - ca_ab * cd_cd) / den;
    let beta = (ca_cd + alpha * ab_cd) / cd_cd;
    let snap = |x: f64| {
        if x.abs() < SNAP {
            0.0
        } else if (1.0 - x).abs() < SNAP {
            1.0
        } else {
            x
        }
    };
    [snap(alpha), snap(beta)]
}

impl IntersectionMethod for CcdIntersection {
    fn name(&self) -> &'static str {
        "CCDTightInclusionIntersection"
    }
    fn alarm_distance(&self) -> f64 {
        self.alarm_distance
    }
    fn contact_distance(&self) -> f64 {
        self.contact_distance
    }
    fn boxes_overlap(&self, a: &Aabb, ga: &ModelGeometry, b: &Aabb, gb: &ModelGeometry, _same_box: bool) -> bool {
        super::common::proximity_boxes_overlap(self.alarm_distance, a, ga, b, gb)
    }
    fn support(&self, k1: PrimitiveKind, k2: PrimitiveKind) -> PairSupport {
        lookup(Self::table, k1, k2)
    }
    fn intersect(&self, g1: &ModelGeometry, e1: usize, g2: &ModelGeometry, e2: usize, out: &mut Vec<DetectionOutput>) -> usize {
        if !super::common::in_range(g1, e1, g2, e2) || Self::table(g1.kind, g2.kind) != Some(Entry::Run) {
            return 0;
        }
        match (g1.kind, g2.kind) {
            (PrimitiveKind::Triangle, PrimitiveKind::Point) => self.triangle_point(g1, e1, g2, e2, out),
            (PrimitiveKind::Line, PrimitiveKind::Line) => self.line_line(g1, e1, g2, e2, out),
            // The pairs inherited from DiscreteIntersection's table.
            _ => DiscreteIntersection.intersect(g1, e1, g2, e2, out),
        }
    }
    fn sweep(&self, dt: f64) -> Sweep {
        match self.sweep_kind {
            SweepKind::None => Sweep::None,
            SweepKind::Inertia => Sweep::Inertia { dt },
            SweepKind::FreeMotion => Sweep::FreeMotion,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn d(num: u64, pow: u8) -> Dyadic {
        Dyadic { num, pow }
    }

    #[test]
    fn midpoints_are_exact_and_in_lowest_terms() {
        assert_eq!(Dyadic::midpoint(Dyadic::ZERO, Dyadic::ONE), Some(d(1, 1)));
        assert_eq!(Dyadic::midpoint(d(1, 2), d(1, 1)), Some(d(3, 3)));
        assert_eq!(Dyadic::midpoint(d(1, 2), d(3, 2)), Some(d(1, 1)));
        assert_eq!(Dyadic::midpoint(Dyadic::ZERO, d(1, 3)), Some(d(1, 4)));
        assert_eq!(d(3, 3).value(), 0.375);
        assert!(Dyadic::sum_at_most_one(d(1, 1), d(1, 1)));
        assert!(!Dyadic::sum_at_most_one(d(3, 2), d(1, 1)));
        assert!(Dyadic::sum_at_most_one(d(5, 3), d(3, 3)));
        assert!(d(3, 3).lt(d(1, 1)) && !d(1, 1).lt(d(3, 3)) && !d(1, 1).lt(d(1, 1)));
        // Halving stops before the numerator overflows.
        assert_eq!(Dyadic::midpoint(Dyadic::ZERO, d(1, 62)), None);
    }

    proptest! {
        /// The queue hands out boxes level by level, earlier times first within a level.
        #[test]
        fn the_queue_leaves_by_level_then_time(keys in prop::collection::vec((0i32..4, 0u64..16), 1..60)) {
            let mut q = BoxQueue::default();
            for &(level, t) in &keys {
                let lo = Dyadic::midpoint(d(t, 4), d(t, 4)).unwrap();
                let tuv = [Interval { lo, hi: Dyadic::ONE }, Interval::UNIT, Interval::UNIT];
                q.push(SearchBox { tuv, level });
            }
            let mut out = Vec::new();
            while let Some(b) = q.pop() {
                out.push((b.level, b.tuv[0].lo.value()));
            }
            let mut sorted = out.clone();
            sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
            prop_assert_eq!(out.len(), keys.len());
            prop_assert_eq!(out, sorted);
        }
    }
}
