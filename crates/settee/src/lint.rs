//! Warnings about scenes that load and run but cannot do what their author meant: a state with
//! a mass or force field but no ODE solver to move it, a state an ODE solver integrates without
//! any mass. They are scene diagnostics at the state's position, so `check` and `run` show them.

use settee_core::mechanics::MechScope;
use settee_core::role;
use settee_core::{Diagnostic, NodeId, Scene, StateId};

/// Adds the warnings of this module to `scene.messages`.
pub fn warn_unsolved_and_massless(scene: &mut Scene) {
    let mut found = Vec::new();
    let states: Vec<(StateId, NodeId, bool)> = scene.store.states.iter().map(|(id, s)| (id, s.node, s.mapped)).collect();
    for (st, node, mapped) in states {
        if mapped || !active(scene, node) {
            continue;
        }
        let Some(owner) = scene.contains(scene.store.get(st).owner).then(|| scene.store.get(st).owner) else { continue };
        let (has_mass, has_force) = loads_on(scene, st, node);
        let solved = solver_above(scene, node);
        let entry = scene.entry(owner);
        let d = if !solved && (has_mass || has_force) {
            Diagnostic::warning(format!(
                "this state has {} but no ODE solver in its node or above it: it will not move",
                if has_mass { "a mass" } else { "force fields" }
            ))
            .hint("add an ODE solver (e.g. EulerImplicitSolver with CGLinearSolver) to this node or a parent node")
        } else if solved && has_force && !has_mass {
            Diagnostic::warning("an ODE solver integrates this state but it has no mass: its motion is undefined or instantaneous")
                .hint("add a mass (e.g. UniformMass totalMass=\"1\") in the state's node")
        } else {
            continue;
        };
        found.push(d.at(entry.pos.clone()).subject(entry.label()));
    }
    for d in found {
        scene.report(d);
    }
}

fn active(scene: &Scene, node: NodeId) -> bool {
    scene.node_active(node)
}

/// True when `node` or one of its ancestors holds an ODE solver.
fn solver_above(scene: &Scene, node: NodeId) -> bool {
    scene.find_up(node, role::ODE_SOLVER).is_some()
}

/// Whether a mass, and whether a force field other than a mass, act on `st` or on a state
/// mapped below it (in its node's subtree): a mass on mapped points gives the state its inertia
/// through the mapping.
fn loads_on(scene: &Scene, st: StateId, node: NodeId) -> (bool, bool) {
    let scope = MechScope::build(scene, node);
    let ours = |s: StateId| s == st || scope.mapped_states.contains(&s);
    let mut has_mass = false;
    let mut has_force = false;
    for &c in scope.masses.iter().chain(&scope.force_fields) {
        let e = scene.entry(c);
        if let Some(m) = e.role::<dyn settee_core::Mass>() {
            has_mass |= ours(m.state());
        } else if let Some(ff) = e.role::<dyn settee_core::ForceField>() {
            has_force |= ff.states().into_iter().any(ours);
        }
    }
    (has_mass, has_force)
}
