//! The Python API's promises that SofaPython3's own tests do not pin: Data views on the
//! engine's memory (no copy), and scripts driving the engine from `python3` as from
//! `settee run`.

use std::process::Command;

/// Runs Python code with Settee's `Sofa` modules (`settee python -c CODE`); returns stdout.
fn python(code: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_settee")).args(["python", "-c", code]).output().expect("run settee python");
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "python failed:\n{stdout}\n{stderr}");
    stdout
}

#[test]
fn state_views_alias_the_engines_memory() {
    let out = python(
        r#"
import Sofa, Sofa.Core, Sofa.Simulation
root = Sofa.Core.Node("root")
root.addObject("DefaultAnimationLoop")
root.addObject("EulerExplicitSolver")
root.addObject("RegularGridTopology", n=[100, 100, 10], min=[0, 0, 0], max=[1, 1, 1])
mo = root.addObject("MechanicalObject", name="dofs")
root.addObject("UniformMass", totalMass=1.0)
Sofa.Simulation.initRoot(root)
assert mo.position.value.shape == (100000, 3), mo.position.value.shape
with mo.position.writeableArray() as w:
    address = w.ctypes.data
    w[123, 1] = 7.5
v = mo.position.value
# The same memory: reading after the write is the engine's state itself, not a copy.
assert v.ctypes.data == address, (v.ctypes.data, address)
assert mo.position.value.ctypes.data == address
assert v[123, 1] == 7.5
# What the engine reads (its own text of the Data) has the write.
assert mo.position.getValueString().split()[3 * 123 + 1] == "7.5"
# `.value` is read-only; the writeable view is read-only again after its block.
for a in (v, w):
    try:
        a[0, 0] = 1.0
    except ValueError:
        pass
    else:
        raise AssertionError("a read-only view was written")
# A step moves the state in place: the view kept from before sees the new positions.
before = float(v[500, 1])
Sofa.Simulation.animate(root, 0.01)
Sofa.Simulation.animate(root, 0.01)
print("moved", float(v[500, 1]) < before, mo.position.value.ctypes.data == address)
"#,
    );
    assert!(out.contains("moved True"), "{out}");
}
