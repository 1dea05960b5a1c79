//! Continuous detection (Tight Inclusion): times of impact against analytic answers, the
//! certified (conservative) answer on random crossings, and misses.

use proptest::prelude::*;

use super::v;
use crate::geometry::Vec3;
use crate::intersection::{CcdSettings, Impact, SweptPair};

const EXACT: CcdSettings = CcdSettings { min_separation: 0.0, tolerance: 1e-10, max_iterations: -1 };

fn vertex_face(p0: Vec3, p1: Vec3, tri: [Vec3; 3]) -> SweptPair {
    SweptPair { vertex_face: true, p0: [p0, tri[0], tri[1], tri[2]], p1: [p1, tri[0], tri[1], tri[2]] }
}

const TRI: [Vec3; 3] = [Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.0, 1.0, 0.0)];

/// A vertex falling through the middle of a triangle from z = 1 to z = −1 meets it at t = 1/2
/// (a lower bound within the tolerance); with a minimum separation of 0.1 it comes within reach
/// at t = 0.45.
#[test]
fn a_vertex_through_a_triangle_meets_it_halfway() {
    let pair = vertex_face(v(0.2, 0.2, 1.0), v(0.2, 0.2, -1.0), TRI);
    let hit = pair.impact(&EXACT).expect("collides");
    assert!(hit.toi <= 0.5 && hit.toi > 0.5 - 1e-6, "{hit:?}");
    // With a separation the roots fill a region, so the search stops at its iteration limit:
    // the precision it reports bounds the distance still to travel (the vertex moves 2 per unit
    // of time).
    let hit = pair.impact(&CcdSettings { min_separation: 0.1, max_iterations: 1000, ..EXACT }).expect("collides");
    assert!(hit.toi <= 0.45 && hit.toi >= 0.45 - hit.precision / 2.0, "{hit:?}");
    assert_eq!(hit, Impact { toi: 0.44921875, precision: 0.015625 });
}

/// The same fall beside the triangle (beyond its hypotenuse, and far away) never meets it.
#[test]
fn a_vertex_beside_a_triangle_misses_it() {
    for x in [0.6, 2.0] {
        let pair = vertex_face(v(x, x, 1.0), v(x, x, -1.0), TRI);
        assert_eq!(pair.impact(&EXACT), None, "x = {x}");
    }
}

/// A search cut short answers "collides", conservatively, with the precision it reached.
#[test]
fn a_search_cut_short_answers_conservatively() {
    let pair = vertex_face(v(0.6, 0.6, 1.0), v(0.6, 0.6, -1.0), TRI);
    let hit = pair.impact(&CcdSettings { max_iterations: 5, ..EXACT }).expect("conservative answer");
    assert!(hit.precision > EXACT.tolerance, "{hit:?}");
}

/// Two crossing edges, one moving down through the other: they meet at t = 1/4.
#[test]
fn crossing_edges_meet_when_they_cross() {
    let a = [v(-1.0, 0.0, 0.0), v(1.0, 0.0, 0.0)];
    let pair = SweptPair {
        vertex_face: false,
        p0: [a[0], a[1], v(0.3, -1.0, 1.0), v(0.3, 1.0, 1.0)],
        p1: [a[0], a[1], v(0.3, -1.0, -3.0), v(0.3, 1.0, -3.0)],
    };
    let hit = pair.impact(&EXACT).expect("collides");
    assert!(hit.toi <= 0.25 && hit.toi > 0.25 - 1e-6, "{hit:?}");
    // Shifted beyond the end of the first edge, they pass each other.
    let shift = v(1.5, 0.0, 0.0);
    let miss = SweptPair {
        p0: pair.p0.map(|p| if p[1] == 0.0 { p } else { p + shift }),
        p1: pair.p1.map(|p| if p[1] == 0.0 { p } else { p + shift }),
        ..pair
    };
    assert_eq!(miss.impact(&EXACT), None);
}

fn point() -> impl Strategy<Value = Vec3> {
    (-2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64).prop_map(|(x, y, z)| v(x, y, z))
}

proptest! {
    /// Certified: a vertex crossing a moving triangle's interior at time t* is always reported,
    /// no later than t* (and within 1e-6 of it when the search runs to the tolerance), whatever
    /// the iteration limit.
    #[test]
    fn a_crossing_is_never_missed(
        a0 in point(), b0 in point(), c0 in point(), a1 in point(), b1 in point(), c1 in point(),
        w in (0.05..0.9f64, 0.05..0.9f64), t_star in 0.05..0.95f64, lift in 0.1..1.0f64, limit in prop::sample::select(vec![-1i64, 100, 1000]),
    ) {
        let (wb, wc) = (w.0 * (1.0 - w.1), (1.0 - w.0) * (1.0 - w.1) * 0.9);
        let at = |p: Vec3, q: Vec3, t: f64| p * (1.0 - t) + q * t;
        let (a, b, c) = (at(a0, a1, t_star), at(b0, b1, t_star), at(c0, c1, t_star));
        let n = (b - a).cross(&(c - a));
        prop_assume!(n.norm() > 0.05);
        let n = n.normalize();
        // The vertex is on the triangle at t*, above its plane before and below after.
        let q = a + (b - a) * wb + (c - a) * wc;
        let p0 = q + n * (lift * t_star);
        let p1 = q - n * (lift * (1.0 - t_star));
        let pair = SweptPair { vertex_face: true, p0: [p0, a0, b0, c0], p1: [p1, a1, b1, c1] };
        let hit = pair.impact(&CcdSettings { max_iterations: limit, ..EXACT });
        prop_assert!(hit.is_some(), "missed a crossing at t* = {}", t_star);
        let hit = hit.unwrap();
        prop_assert!(hit.toi <= t_star + 1e-9, "toi {} after t* {}", hit.toi, t_star);
    }

    /// A vertex that stays on one side of a static triangle's plane, farther than the minimum
    /// separation, is never reported when the search runs to the tolerance.
    #[test]
    fn a_vertex_kept_away_is_never_reported(x0 in -1.0..2.0f64, y0 in -1.0..2.0f64, x1 in -1.0..2.0f64, y1 in -1.0..2.0f64, z0 in 0.05..1.0f64, z1 in 0.05..1.0f64) {
        let pair = vertex_face(v(x0, y0, z0), v(x1, y1, z1), TRI);
        prop_assert_eq!(pair.impact(&CcdSettings { min_separation: 0.01, ..EXACT }), None);
    }
}
