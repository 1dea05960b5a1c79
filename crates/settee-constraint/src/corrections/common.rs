//! Pieces the constraint corrections share: the templates, the ODE-solver lookup and factors,
//! and the per-state application of a correction (`x = x_free ⊕ p·c`, `v = v_free + q·c`).

use settee_core::constraint::{ConstraintJacobian, ConstraintParams, DenseMatrix, IntegrationFactors};
use settee_core::mechanics::MechScope;
use settee_core::role;
use settee_core::{ComponentId, Diagnostic, LinearSolver, NodeId, OdeSolver, Scene, SimError, SimResult, StateId, VecId};

/// An error about component `me` raised during a step, positioned at its element.
pub(crate) fn step_error(scene: &Scene, me: ComponentId, message: impl Into<String>) -> SimError {
    let e = scene.entry(me);
    SimError(Box::new(Diagnostic::error(message).subject(e.label()).at(e.pos.clone())))
}

/// SOFA's `ODESolver` link default of the linear-solver corrections: the first ODE solver of
/// the node, else the first found searching down from the root.
pub(crate) fn ode_solver_local_or_root(scene: &Scene, node: NodeId) -> Option<ComponentId> {
    scene.find_local(node, role::ODE_SOLVER).or_else(|| scene.find_down(Scene::ROOT, role::ODE_SOLVER))
}

/// Runs `f` with the linear solver `ls` taken out of the scene (so that it may use the rest of
/// it); an error when `ls` is not a linear solver.
pub(crate) fn with_linear_solver<T>(
    scene: &mut Scene,
    ls: ComponentId,
    f: impl FnOnce(&mut (dyn LinearSolver + 'static), &mut Scene) -> SimResult<T>,
) -> SimResult<T> {
    if !scene.entry(ls).plays(role::LINEAR_SOLVER) {
        return Err(SimError::new("the linearSolver link does not point to a linear solver"));
    }
    scene.with_role::<dyn LinearSolver, _>(ls, f)
}

/// `W += factor·J·A⁻¹·Jᵀ` through the linear solver `ls` over `scope`, after checking that the
/// rows of `J` are inside `W` (an error about `me` otherwise); `false` when `J` has no row (then
/// nothing is added).
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_jminvjt(
    scene: &mut Scene,
    me: ComponentId,
    ls: ComponentId,
    scope: &MechScope,
    j: &ConstraintJacobian,
    factor: f64,
    w: &mut DenseMatrix,
) -> SimResult<bool> {
    if let Some((r, _)) = j.rows.last() {
        if *r >= w.n {
            return Err(step_error(scene, me, format!("constraint row {r} is beyond the {} rows of the compliance matrix", w.n)));
        }
    }
    if j.rows.is_empty() {
        return Ok(false);
    }
    with_linear_solver(scene, ls, |solver, scene| solver.add_jminvjt(scene, scope, j, factor, w))?;
    Ok(true)
}

/// SOFA's `regularizationTerm`: `term` added on the diagonal of `W` at `rows` when it exceeds ε.
pub(crate) fn regularize(w: &mut DenseMatrix, rows: impl IntoIterator<Item = usize>, term: f64) {
    if term > f64::EPSILON {
        for r in rows {
            w.add(r, r, term);
        }
    }
}

/// SOFA's `resetContactForce`: the vector `v` of state `s` (where the correction accumulates the
/// contact forces) zeroed.
pub(crate) fn reset_contact_force(scene: &mut Scene, s: StateId, v: VecId) -> SimResult {
    scene.store.get_mut(s).write(v).fill(0.0);
    Ok(())
}

/// The ODE solver's integration factors at `dt`.
pub(crate) fn ode_factors(scene: &mut Scene, ode: ComponentId, dt: f64) -> IntegrationFactors {
    match scene.role::<dyn OdeSolver>(ode) {
        Some(s) => s.integration_factors(dt),
        // The ODE solver is the one running (taken out of the scene): SOFA's "no ODE solver".
        None => IntegrationFactors { position: 1.0, velocity: 1.0 },
    }
}

/// Which of position and velocity a correction writes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Apply {
    /// `x := x_free ⊕ p·c`, `v := v_free + q·c`, `dx := p·c`.
    Motion,
    /// `x := x_free ⊕ p·c`, `dx := p·c`.
    Position,
    /// `v := v_free + q·c`, `dv := q·c`.
    Velocity,
}

/// Applies `correction` of state `s` with factors `p` (position) and `q` (velocity): for every
/// DOF `dxᵢ = cᵢ·p`, `dvᵢ = cᵢ·q`, `xᵢ = x_freeᵢ ⊕ dxᵢ`, `vᵢ = v_freeᵢ + dvᵢ`, and the
/// increment vector receives `dxᵢ` (`dvᵢ` for [`Apply::Velocity`]). `correction` may be the
/// increment vector itself (it is read before being overwritten).
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply_correction(
    scene: &mut Scene,
    s: StateId,
    cp: &ConstraintParams,
    what: Apply,
    x: VecId,
    v: VecId,
    dx: VecId,
    correction: VecId,
    p: f64,
    q: f64,
) -> SimResult {
    let st = scene.store.get_mut(s);
    let layout = st.layout;
    let (cs, ds) = (layout.coord_size(), layout.deriv_size());
    let n = st.size;
    if st.read(correction).len() < n * ds {
        return Err(SimError::new("the constraint correction vector is not allocated on the corrected state"));
    }
    if what != Apply::Velocity && st.read(cp.x).len() < n * cs {
        return Err(SimError::new("the free positions are not allocated on the corrected state"));
    }
    if what != Apply::Position && st.read(cp.v).len() < n * ds {
        return Err(SimError::new("the free velocities are not allocated on the corrected state"));
    }
    let scale = if what == Apply::Velocity { q } else { p };
    // The correction is taken out of the state and the targets written in place, so that
    // nothing is copied (a copy only when a velocity vector is the correction itself); every
    // value is the same product and sum as `x_free ⊕ c·p`, `v_free + c·q`, `dx = c·p`.
    let aliased = what != Apply::Position && (v == correction || cp.v == correction);
    let mut corr = if aliased { st.read(correction)[..n * ds].to_vec() } else { st.take(correction) };
    if what != Apply::Velocity {
        let mut xs = st.take(x);
        if cp.x != x {
            xs.copy_from_slice(&st.read(cp.x)[..n * cs]);
        }
        for (xi, ci) in xs.chunks_exact_mut(cs).zip(corr.chunks_exact(ds)) {
            layout.coord_add_scaled(xi, ci, scale);
        }
        st.put(x, xs);
    }
    if what != Apply::Position {
        let mut vs = st.take(v);
        if cp.v != v {
            vs.copy_from_slice(&st.read(cp.v)[..n * ds]);
        }
        for (o, c) in vs.iter_mut().zip(&corr) {
            *o += c * q;
        }
        st.put(v, vs);
    }
    if dx == correction && !aliased {
        for c in &mut corr {
            *c *= scale;
        }
        st.put(dx, corr);
    } else {
        let out = st.write(dx);
        for (o, c) in out.iter_mut().zip(&corr) {
            *o = c * scale;
        }
        if !aliased {
            st.put(correction, corr);
        }
    }
    Ok(())
}

/// The non-empty Jacobian rows of a state, as `(row, [(dof, block)])`.
pub(crate) type Rows = Vec<(usize, Vec<(usize, Vec<f64>)>)>;

/// The non-empty rows of state `s`'s Jacobian, copied out of the scene.
pub(crate) fn rows_of(scene: &Scene, s: StateId) -> Rows {
    scene
        .store
        .get(s)
        .constraint
        .rows()
        .map(|(r, e)| (r, e.map(|(d, b)| (d, b.to_vec())).collect()))
        .filter(|(_, e): &(usize, Vec<_>)| !e.is_empty())
        .collect()
}
