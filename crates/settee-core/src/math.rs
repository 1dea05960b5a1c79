//! Small vector kernels on `[f64; 3]`, in SOFA's operation order (`sofa::type::Vec`), shared by
//! every crate instead of private copies.
//!
//! The order is part of the result: SOFA's numbers are reproduced to the bit, so each function
//! evaluates exactly the expression written in its comment (`(a0·b0 + a1·b1) + a2·b2`, a division
//! of each component rather than a product by an inverse). nalgebra is the vocabulary for
//! matrices and larger systems; these stay plain functions because a different association
//! order would change the last bit.

/// A point or vector of 3-D space.
pub type V3 = [f64; 3];

/// `a + b`.
#[inline]
pub fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `a − b`.
#[inline]
pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a · s`.
#[inline]
pub fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// `−a`.
#[inline]
pub fn neg(a: V3) -> V3 {
    [-a[0], -a[1], -a[2]]
}

/// `(a0·b0 + a1·b1) + a2·b2`.
#[inline]
pub fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `a × b` as `sofa::type::cross`: `(a1·b2 − a2·b1, a2·b0 − a0·b2, a0·b1 − a1·b0)`.
#[inline]
pub fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// `|a|²` (`dot(a, a)`).
#[inline]
pub fn norm2(a: V3) -> f64 {
    dot(a, a)
}

/// `|a|` (the square root of [`norm2`]).
#[inline]
pub fn norm(a: V3) -> f64 {
    norm2(a).sqrt()
}

/// SOFA's `normalized()`: `a` divided (component by component) by its norm when the norm exceeds
/// the machine epsilon, else `a` unchanged (a zero vector stays zero, no NaN).
#[inline]
pub fn normalized(a: V3) -> V3 {
    let n = norm(a);
    if n > f64::EPSILON {
        [a[0] / n, a[1] / n, a[2] / n]
    } else {
        a
    }
}

/// The three reals of `x` starting at `3·i` (a point of a flat Vec3 vector).
#[inline]
pub fn at(x: &[f64], i: usize) -> V3 {
    [x[3 * i], x[3 * i + 1], x[3 * i + 2]]
}

/// `Σ aᵢ·bᵢ` over two slices, left to right from 0.
#[inline]
pub fn dot_n(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities() {
        let (a, b) = ([1.0, -2.0, 0.5], [0.25, 3.0, -1.5]);
        let c = cross(a, b);
        assert_eq!(dot(c, a), 0.0);
        assert_eq!(dot(c, b), 0.0);
        assert_eq!(cross(a, a), [0.0; 3]);
        assert_eq!(sub(add(a, b), b), a);
        assert_eq!(norm([3.0, 4.0, 0.0]), 5.0);
        assert_eq!(normalized([0.0; 3]), [0.0; 3]);
        assert_eq!(normalized([0.0, 0.0, 2.0]), [0.0, 0.0, 1.0]);
        assert_eq!(at(&[9.0, 9.0, 9.0, 1.0, 2.0, 3.0], 1), [1.0, 2.0, 3.0]);
        assert_eq!(dot_n(&[1.0, 2.0], &[3.0, 4.0]), 11.0);
    }
}
