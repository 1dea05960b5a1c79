//! What the force fields of this crate share: the `ForceField` side of a force field on one
//! state, the checks of their state, elements and vectors, and the gather / scatter of element
//! vectors.

use std::fmt::Debug;

use settee_core::{ForceIo, InitCtx, Layout, MatrixAccumulator, SimError, SimResult, StateId};

use crate::hexa::{Mat3, Vec3};

/// Declares a force-field class of this crate: `#[component(...)]` with what they share (the
/// `ForceField` role, the `Vec3d` template deduced from the state), followed by the class's own
/// keys (a key given again replaces the shared one) and the struct:
///
/// ```text
/// force_field_class! { { keys } struct }
/// ```
macro_rules! force_field_class {
    ({ $($keys:tt)* } $($item:tt)*) => {
        #[settee_core::component(
            roles = [settee_core::ForceField],
            templates = ["Vec3d"],
            default_template = "Vec3d",
            template_rule = FromState,
            $($keys)*
        )]
        $($item)*
    };
}
pub(crate) use force_field_class;

/// A kernel compiled twice, for the CPU the binary targets and with AVX2, the AVX2 one chosen at
/// run time when the CPU has it (the release build targets plain x86-64: two lanes). AVX2 only
/// widens the lanes: each operation is the same IEEE operation (Rust never fuses a multiply and
/// an add by itself), so both give the same bits.
///
/// ```text
/// avx2_twin! { /// doc
///     pub fn name(a: &[f64], b: &mut [f64]) -> T { body } }
/// ```
macro_rules! avx2_twin {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        #[inline]
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn generic($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                fn avx2($($arg: $ty),*) $(-> $ret)? {
                    generic($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2 (checked just above).
                    return unsafe { avx2($($arg),*) };
                }
            }
            generic($($arg),*)
        }
    };
}
pub(crate) use avx2_twin;

/// `impl ForceField` for a force field of this crate acting on one state. The vectors lent to it
/// go to the inherent methods of the type (or of its field `via`, when given):
/// `fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult`,
/// `fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, b_factor: f64) -> SimResult` and
/// `fn k_matrix(&self, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult`; the state is the
/// field `state: Option<StateId>` (of `via` too), the Rayleigh stiffness coefficient the type's
/// field `rayleigh_stiffness`.
macro_rules! force_field_on_one_state {
    ($t:ty $(, via $field:ident)?) => {
        impl settee_core::ForceField for $t {
            fn states(&self) -> settee_core::StateSet {
                self$(.$field)?.state.into_iter().collect()
            }

            fn add_force(&mut self, _p: &settee_core::MechParams, io: &mut settee_core::ForceIo) -> settee_core::SimResult {
                let (x, f) = $crate::common::lent(io)?;
                self$(.$field)?.force(x, f)
            }

            fn add_dforce(&mut self, _p: &settee_core::MechParams, io: &mut settee_core::ForceIo, k_factor: f64, b_factor: f64) -> settee_core::SimResult {
                let (dx, df) = $crate::common::lent(io)?;
                self$(.$field)?.dforce(dx, df, k_factor, b_factor)
            }

            fn add_k_to_matrix(&self, _p: &settee_core::MechParams, m: &mut settee_core::MatrixAccumulator, k_factor: f64) -> settee_core::SimResult {
                self$(.$field)?.k_matrix(m, k_factor)
            }

            fn rayleigh_stiffness(&self) -> f64 {
                self.rayleigh_stiffness
            }
        }
    };
}
pub(crate) use force_field_on_one_state;

/// The two vectors lent to a force field on one state: the positions (the displacement for
/// `add_dforce`) and the force (its differential).
pub(crate) fn lent<'a, 'b>(io: &'b mut ForceIo<'a>) -> SimResult<(&'a [f64], &'b mut [f64])> {
    match (io.x.first().copied(), io.f.first_mut()) {
        (Some(x), Some(f)) => Ok((x, f)),
        _ => Err(SimError::new("no vectors lent to the force field")),
    }
}

/// The mechanical state of the component, which must be Vec3d (else an error with `hint`).
pub(crate) fn vec3_state(cx: &InitCtx, hint: &str) -> SimResult<StateId> {
    let s = cx.require_state()?;
    if cx.state_layout(s) != Layout::Vec3 {
        return Err(cx
            .error(format!("the mechanical state has template {}, but this force field needs Vec3d", cx.state_layout(s).name()))
            .hint(hint));
    }
    Ok(s)
}

/// At init: an error naming the first element (a `what`, e.g. "tetrahedron") with a point
/// beyond the `n` DOFs of the mechanical state.
pub(crate) fn check_elements<E: AsRef<[usize]> + Debug>(cx: &InitCtx, what: &str, elements: impl IntoIterator<Item = E>, n: usize) -> SimResult {
    if let Some((k, e)) = elements.into_iter().enumerate().find(|(_, e)| e.as_ref().iter().any(|&i| i >= n)) {
        return Err(cx
            .error(format!("{what} {k} {e:?} refers to a point beyond the {n} DOFs of the mechanical state"))
            .hint("the topology and the MechanicalObject must describe the same points"));
    }
    Ok(())
}

/// The rest positions of state `s` (its positions when it has none), which must hold its `n`
/// Vec3 DOFs.
pub(crate) fn rest_positions(cx: &InitCtx, s: StateId, n: usize) -> SimResult<Vec<f64>> {
    let rest = cx.rest_or_position(s);
    if rest.len() < 3 * n {
        return Err(cx.error(format!("the mechanical state has {} rest coordinates for {n} DOFs", rest.len() / 3)));
    }
    Ok(rest)
}

/// At each evaluation: an error when a vertex of `elements` (each a `what`) is not one of the `n`
/// DOFs of the vectors.
pub(crate) fn check_indices<E: AsRef<[usize]>>(elements: &[E], what: &str, n: usize) -> SimResult {
    match elements.iter().flat_map(|e| e.as_ref()).find(|&&v| v >= n) {
        Some(v) => Err(SimError::new(format!("a {what} refers to point {v} beyond the state's {n} DOFs"))),
        None => Ok(()),
    }
}

/// An error unless `v` (named `what`) holds the `nb_dofs` Vec3 DOFs the force field was
/// initialised for.
pub(crate) fn check_len(what: &str, v: &[f64], nb_dofs: usize) -> SimResult {
    if v.len() < 3 * nb_dofs {
        return Err(SimError::new(format!("{what} has {} values but the force field was initialised for {nb_dofs} DOFs", v.len()))
            .hint("the mechanical state was resized after init, which this force field does not follow"));
    }
    Ok(())
}

/// The node positions of element `e` read from a flat Vec3 vector. (A plain loop: `array::map`
/// is not inlined here, and this runs for every element at every CG iteration.)
#[inline(always)]
pub(crate) fn gather<const N: usize>(x: &[f64], e: &[usize; N]) -> [Vec3; N] {
    let mut out = [[0.0; 3]; N];
    for (o, &i) in out.iter_mut().zip(e) {
        *o = [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
    }
    out
}

/// `out[3i+c] += v[c]` for every node `i` of every element, element by element in the order
/// given (SOFA's sequential accumulation).
#[inline]
pub(crate) fn scatter<'a, const N: usize>(out: &mut [f64], elements: impl IntoIterator<Item = (&'a [usize; N], &'a [Vec3; N])>) {
    for (e, fe) in elements {
        for (&i, v) in e.iter().zip(fe) {
            let o = &mut out[3 * i..3 * i + 3];
            o[0] += v[0];
            o[1] += v[1];
            o[2] += v[2];
        }
    }
}

/// Adds the 3×3 blocks `block(a, c)` of an element with nodes `nodes` at `(nodes[a], nodes[c])`,
/// row by row.
#[inline]
pub(crate) fn add_element_blocks<'a>(m: &mut MatrixAccumulator, s: StateId, nodes: &[usize], block: impl Fn(usize, usize) -> &'a Mat3) {
    for (a, &na) in nodes.iter().enumerate() {
        for (c, &nc) in nodes.iter().enumerate() {
            m.add_block3(s, na, s, nc, block(a, c));
        }
    }
}
