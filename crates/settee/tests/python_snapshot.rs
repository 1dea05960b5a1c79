//! `settee.snapshot` / `settee.restore` / `settee.clone` and `Sofa.Simulation.reset` from
//! Python scripts (issue 20), run by `settee python` on the repository's scenes.

mod common;
use common::python;

/// Loads the frictional-contact scene and initialises it; `record(n)` steps and returns the
/// bytes of the cube's positions and velocities after each step.
const CONTACT: &str = r#"
import Sofa, Sofa.Core, Sofa.Simulation, settee
root = Sofa.Simulation.load(SCENES + "/first_scene_4_contact_constraint.scn")
Sofa.Simulation.initRoot(root)
def record(root, n):
    dofs = root.cube.dofs
    out = []
    for _ in range(n):
        Sofa.Simulation.animate(root, root.dt.value)
        out.append(dofs.position.value.tobytes() + dofs.velocity.value.tobytes())
    return out
"#;

#[test]
fn a_script_restores_a_snapshot_and_repeats_the_steps_bit_for_bit() {
    let out = python(&format!(
        "{CONTACT}{}",
        r#"
record(root, 40)
snap = settee.snapshot(root)
assert isinstance(snap, settee.Snapshot)
first = record(root, 30)
settee.restore(root, snap)
print("time", abs(root.time.value - snap.time) < 1e-12, abs(snap.time - 0.4) < 1e-9)
again = record(root, 30)
print("same", first == again, len(first))
# Only the root takes a snapshot: it is the whole scene's.
try:
    settee.snapshot(root.cube)
except ValueError as e:
    print("child refused:", "root node" in str(e))
"#
    ));
    assert!(out.contains("time True True"), "{out}");
    assert!(out.contains("same True 30"), "{out}");
    assert!(out.contains("child refused: True"), "{out}");
}

#[test]
fn a_clone_runs_on_its_own_as_the_original_would() {
    let out = python(&format!(
        "{CONTACT}{}",
        r#"
record(root, 20)
copy = settee.clone(root)
print("distinct", copy is not root, copy.cube.dofs is not root.cube.dofs, copy.getPathName(), copy.time.value == root.time.value)
a = record(copy, 30)
print("original still", abs(root.time.value - 0.2) < 1e-9)
b = record(root, 30)
print("same", a == b)
# Data of the copy are its own.
copy.gravity.value = [0.0, 0.0, 0.0]
print("gravity", [float(g) for g in root.gravity.value])
"#
    ));
    assert!(out.contains("distinct True True / True"), "{out}");
    assert!(out.contains("original still True"), "{out}");
    assert!(out.contains("same True"), "{out}");
    assert!(out.contains("gravity [0.0, -9.81, 0.0]"), "{out}");
}

#[test]
fn reset_goes_back_to_the_state_after_init() {
    let out = python(&format!(
        "{CONTACT}{}",
        r#"
at_init = root.cube.dofs.position.value.tobytes()
first = record(root, 25)
Sofa.Simulation.reset(root)
print("time", root.time.value, root.cube.dofs.position.value.tobytes() == at_init)
print("same", record(root, 25) == first)
fresh = Sofa.Core.Node("fresh")
try:
    Sofa.Simulation.reset(fresh)
except RuntimeError as e:
    print("not initialised:", "not initialised" in str(e))
"#
    ));
    assert!(out.contains("time 0.0 True"), "{out}");
    assert!(out.contains("same True"), "{out}");
    assert!(out.contains("not initialised: True"), "{out}");
}

#[test]
fn python_controllers_are_kept_by_a_restore_and_stop_a_clone() {
    let out = python(
        r#"
import Sofa, Sofa.Core, Sofa.Simulation, settee

class Counter(Sofa.Core.Controller):
    def __init__(self, *args, **kwargs):
        Sofa.Core.Controller.__init__(self, *args, **kwargs)
        self.steps = 0
    def onAnimateBeginEvent(self, event):
        self.steps += 1
        if self.steps == 3:
            try:
                settee.snapshot(self.getContext())
            except RuntimeError as e:
                print("inside a step:", "between steps" in str(e))

root = Sofa.Core.Node("root")
root.addObject("DefaultAnimationLoop")
root.addObject("EulerImplicitSolver")
root.addObject("CGLinearSolver", iterations=25, tolerance=1e-9, threshold=1e-9)
dofs = root.addObject("MechanicalObject", name="dofs", position=[[0, 0, 0], [1, 0, 0]])
root.addObject("UniformMass", totalMass=1.0)
ctl = root.addObject(Counter(name="counter"))
Sofa.Simulation.initRoot(root)
for _ in range(5):
    Sofa.Simulation.animate(root, 0.01)
snap = settee.snapshot(root)
y = dofs.position.value[0][1]
for _ in range(5):
    Sofa.Simulation.animate(root, 0.01)
settee.restore(root, snap)
# The controller is the same Python object, its Python state is not rolled back; the scene is.
print("kept", root.counter is ctl, ctl.steps, dofs.position.value[0][1] == y)
Sofa.Simulation.animate(root, 0.01)
print("still called", ctl.steps)
try:
    settee.clone(root)
except RuntimeError as e:
    print("clone refused:", str(e).splitlines()[0])
"#,
    );
    assert!(out.contains("inside a step: True"), "{out}");
    assert!(out.contains("kept True 10 True"), "{out}");
    assert!(out.contains("still called 11"), "{out}");
    assert!(out.contains("clone refused:") && out.contains("'counter'") && out.contains("cannot be copied"), "{out}");
}
