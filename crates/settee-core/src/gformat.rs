//! C `printf("%.*g")` / C++ default `ostream << double` formatting.
//!
//! SOFA writes every number of a dump (times and state values) with the default C++ stream
//! formatting, which is `%g` with 6 significant digits, and the regression metric re-parses the
//! *printed* current values (spec §5.4, §5.6). Reproducing that text exactly is therefore part of
//! the metric, not cosmetics.
//!
//! Rounding: glibc rounds the exact binary value of the double to the requested number of digits
//! (ties to even, which only matters for values exactly representable with a 5 in the next digit).
//! Rust's `{:.*e}` formatting does the same exact, correctly rounded conversion, so we let it
//! produce the digits and the decimal exponent and only do the `%g` layout here.

/// Formats `x` like C's `printf("%.{precision}g", x)` (glibc).
///
/// * precision 0 is treated as 1 (C rule);
/// * scientific notation iff the decimal exponent `X` (after rounding) satisfies
///   `X < -4 || X >= precision`, otherwise fixed notation;
/// * trailing zeros of the fraction and a trailing decimal point are removed;
/// * the exponent has a sign and at least two digits (`1e-05`, `1e+06`, `1e+100`);
/// * the sign of negative zero is kept (`-0`);
/// * infinities print as `inf` / `-inf`, NaN as `nan`, or `-nan` when its sign bit is set
///   (glibc prints the sign of NaNs; note that `0.0/0.0` on x86-64 yields a negative NaN).
pub fn format_g(x: f64, precision: usize) -> String {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_nan() {
        return format!("{sign}nan");
    }
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    let p = precision.max(1);

    // Exact, correctly rounded conversion to `d.ddddde<exp>` with p significant digits.
    let sci = format!("{:.*e}", p - 1, x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("Rust `{:e}` output always contains an exponent");
    let exp: i32 = exp.parse().expect("Rust `{:e}` exponent is an integer");
    // All p significant digits, without the decimal point.
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    debug_assert_eq!(digits.len(), p);

    let mut out = String::with_capacity(p + 8);
    out.push_str(sign);
    if exp < -4 || exp >= p as i32 {
        // Scientific: d[.ddd]e±XX
        out.push_str(&digits[..1]);
        let frac = digits[1..].trim_end_matches('0');
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    } else if exp >= 0 {
        // Fixed, |x| >= 1: the first exp+1 digits are the integer part. Since exp < p there
        // is always at least one digit left for (possibly empty after trimming) fraction.
        let split = exp as usize + 1;
        out.push_str(&digits[..split]);
        let frac = digits[split..].trim_end_matches('0');
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
    } else {
        // Fixed, |x| < 1 (exp in -4..=-1): 0.000ddd
        let frac = digits.trim_end_matches('0');
        if frac.is_empty() {
            // Only reachable for zero, whose exponent Rust reports as 0; kept for safety.
            out.push('0');
        } else {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(frac);
        }
    }
    out
}

/// Formats `x` like C++ `std::ostream << x` with default flags (`%.6g`), as SOFA dumps do.
pub fn format_g6(x: f64) -> String {
    format_g(x, 6)
}

/// Appends the `%.6g` forms of `values` to `out`, separated by single spaces (no leading or
/// trailing space), as `MechanicalObject::writeVec` lays out a state vector.
pub fn write_g6_list(out: &mut String, values: &[f64]) {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&format_g6(*v));
    }
}

/// Rounds `x` to what a C++ program reading back `format_g6(x)` would get.
///
/// Non-finite values are returned unchanged (C++ streams cannot read them back at all; the
/// metric handles that case separately).
pub fn round_g6(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format_g6(x).parse().expect("a %g rendering of a finite double is a valid float literal")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_values() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (1.0, "1"),
            (-1.0, "-1"),
            (0.5, "0.5"),
            (0.1 + 0.2, "0.3"),
            (2.97, "2.97"),
            (19.998, "19.998"),
            (0.02999, "0.02999"),
            (3.299_674_2, "3.29967"),
            (0.99, "0.99"),
            (-13.206_14, "-13.2061"),
            (-0.000_787_169, "-0.000787169"),
            (-0.000_787_168_9, "-0.000787169"),
            (1.98, "1.98"),
            (100.0, "100"),
            (123_456.0, "123456"),
            (999_999.0, "999999"),
            (1e6, "1e+06"),
            (1_234_567.0, "1.23457e+06"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (0.000_012_34, "1.234e-05"),
            (0.000_123_4, "0.0001234"),
            (2.775_557_561_562_891_4e-17, "2.77556e-17"),
            (1e100, "1e+100"),
            (1e-100, "1e-100"),
            (-1.5e-300, "-1.5e-300"),
            (f64::MAX, "1.79769e+308"),
            (f64::MIN_POSITIVE, "2.22507e-308"),
            (5e-324, "4.94066e-324"),
            (10.0, "10"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.333333"),
            (2.0 / 3.0, "0.666667"),
            (-9.173_49, "-9.17349"),
        ];
        for &(x, want) in cases {
            assert_eq!(format_g6(x), want, "format_g6({x:e})");
        }
    }

    #[test]
    fn rounding_carries_into_exponent() {
        // 999999.5 is exactly representable: ties-to-even rounds the 6th digit 9 up -> carry.
        assert_eq!(format_g6(999_999.5), "1e+06");
        assert_eq!(format_g6(0.000_099_999_99), "0.0001");
        assert_eq!(format_g6(9.999_999), "10");
        assert_eq!(format_g6(99_999.95), "99999.9"); // binary value is slightly below .95
        assert_eq!(format_g6(-0.000_099_999_96), "-0.0001");
    }

    #[test]
    fn exact_ties_round_half_even() {
        // These decimal values are exactly representable in binary, so they are real ties.
        assert_eq!(format_g6(123_456.5), "123456"); // 6 is even: stays
        assert_eq!(format_g6(123_457.5), "123458"); // 7 is odd: up
        assert_eq!(format_g6(0.5), "0.5");
        assert_eq!(format_g(2.5, 1), "2");
        assert_eq!(format_g(3.5, 1), "4");
        assert_eq!(format_g(0.125, 2), "0.12");
        assert_eq!(format_g(0.375, 2), "0.38");
        // Not a tie: 2.675 is stored as 2.67499999999999982236431605997495353221893310546875.
        assert_eq!(format_g(2.675, 3), "2.67");
        // 1.0000005 is stored slightly above the tie (glibc: "1.000001"), while
        // 99999.95 is stored below it.
        assert_eq!(format_g(1.000_000_5, 7), "1.000001");
        assert_eq!(format_g(99_999.95, 7), "99999.95");
    }

    #[test]
    fn specials() {
        assert_eq!(format_g6(-0.0), "-0");
        assert_eq!(format_g6(f64::INFINITY), "inf");
        assert_eq!(format_g6(f64::NEG_INFINITY), "-inf");
        assert_eq!(format_g6(f64::NAN), "nan");
        assert_eq!(format_g6(-f64::NAN), "-nan");
        assert_eq!(format_g6(-1e-300 * 1e-300), "-0");
    }

    #[test]
    fn other_precisions() {
        assert_eq!(format_g(1234.5678, 0), "1e+03");
        assert_eq!(format_g(1234.5678, 1), "1e+03");
        assert_eq!(format_g(1234.5678, 4), "1235");
        assert_eq!(format_g(1234.5678, 3), "1.23e+03");
        assert_eq!(format_g(0.1, 17), "0.10000000000000001");
        assert_eq!(format_g(1e15, 17), "1000000000000000");
        assert_eq!(format_g(1e-5, 17), "1.0000000000000001e-05");
        assert_eq!(format_g(0.0, 17), "0");
    }

    #[test]
    fn list_layout_and_round_trip() {
        let mut s = String::new();
        write_g6_list(&mut s, &[-9.0, 0.0, 1e-7, 19.9984]);
        assert_eq!(s, "-9 0 1e-07 19.9984");
        let mut empty = String::new();
        write_g6_list(&mut empty, &[]);
        assert_eq!(empty, "");
        assert_eq!(round_g6(19.998_449), 19.9984);
        assert_eq!(round_g6(-0.000_787_168_9), -0.000787169);
        assert!(round_g6(f64::NAN).is_nan());
    }

    proptest::proptest! {
        /// The printed text always re-parses to the value rounded to 6 significant digits,
        /// and uses the same notation choice as Rust's own exponent.
        #[test]
        fn parses_back_close(x in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL
                                 | proptest::num::f64::ZERO) {
            let s = format_g6(x);
            let back: f64 = s.parse().unwrap();
            let want: f64 = format!("{:.5e}", x).parse().unwrap();
            proptest::prop_assert_eq!(back, want);
            proptest::prop_assert!(!s.contains('.') || !s.split('e').next().unwrap().ends_with('0'));
        }
    }
}
