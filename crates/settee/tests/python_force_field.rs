//! A force field written in Python (`Sofa.Core.ForceFieldVec3d`, spec python.md §5.3) gives
//! the trajectory of the Rust component it reimplements: a linear spring to the rest shape,
//! written with the operations of Settee's `RestShapeSpringsForceField` in the same order, is
//! bit-identical to it under an explicit solver (addForce), an implicit one with CG (addDForce)
//! and one with a direct solver (addKToMatrix). Run through `settee python`.

mod common;
use common::{field, python};

const SCRIPT: &str = r#"
import sys
import numpy as np
import Sofa.Core
import Sofa.Simulation

K = 37.5

class Spring(Sofa.Core.ForceFieldVec3d):
    """f -= (x - x0)·k, as RestShapeSpringsForceField computes it."""
    def __init__(self, *args, **kwargs):
        Sofa.Core.ForceFieldVec3d.__init__(self, *args, **kwargs)
        self.calls = {"addForce": 0, "addDForce": 0, "addKToMatrix": 0}

    def init(self):
        self.rest = self.mstate.rest_position.value.copy()

    def addForce(self, m, f, x, v):
        self.calls["addForce"] += 1
        with f.writeableArray() as wa:
            wa -= (x.value - self.rest) * K

    def addDForce(self, m, df, dx):
        self.calls["addDForce"] += 1
        with df.writeableArray() as wa:
            wa -= dx.value * K * m["kFactor"]

    def addKToMatrix(self, m, nNodes, nDofs):
        self.calls["addKToMatrix"] += 1
        return np.array([[i, i, -K * m["kFactor"]] for i in range(nNodes * nDofs)], dtype=float)


def particles(root, name, solver, python):
    n = root.addChild(name)
    if solver == "explicit":
        n.addObject("EulerExplicitSolver")
    else:
        n.addObject("EulerImplicitSolver", rayleighStiffness=0.1, rayleighMass=0.1)
        if solver == "cg":
            n.addObject("CGLinearSolver", iterations=25, tolerance=1e-12, threshold=1e-12)
        else:
            n.addObject("SparseLDLSolver", template="CompressedRowSparseMatrixd")
    n.addObject("MechanicalObject", name="dofs", position=[[1, 0, 0], [0, 2, 0.5], [-1, 0.25, 3]],
                rest_position=[[0, 0, 0], [0, 1, 0], [0, 0, 2]])
    n.addObject("UniformMass", totalMass=0.3)
    if python:
        return n, n.addObject(Spring(name="spring"))
    n.addObject("RestShapeSpringsForceField", stiffness=K)
    return n, None


for solver in ["explicit", "cg", "direct"]:
    root = Sofa.Core.Node("root")
    root.dt = 0.01
    root.gravity = [0, -9.81, 0]
    root.addObject("DefaultAnimationLoop")
    rust, _ = particles(root, "rust", solver, False)
    py, spring = particles(root, "python", solver, True)
    Sofa.Simulation.initRoot(root)
    moved = 0.0
    for _ in range(50):
        Sofa.Simulation.animate(root, root.dt.value)
    a, b = rust.dofs.position.value, py.dofs.position.value
    moved = float(np.abs(a - rust.dofs.rest_position.value).max())
    same = np.array_equal(a, b) and np.array_equal(rust.dofs.velocity.value, py.dofs.velocity.value)
    print("solver %s identical %s max_difference %.3g moved %.3g calls %s" % (
        solver, same, float(np.abs(a - b).max()), moved,
        ",".join("%s=%d" % kv for kv in sorted(spring.calls.items()))))
"#;

#[test]
fn python_spring_matches_rest_shape_springs_bit_for_bit() {
    let stdout = python(SCRIPT);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("solver ")).collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    for line in lines {
        let field = |name: &str| field(line, name);
        assert_eq!(field("identical"), "True", "{line}");
        let moved: f64 = field("moved").parse().unwrap();
        assert!(moved > 1e-3, "the particles did not move: {line}");
        // Each solver reaches the Python code through the entry point it needs.
        let calls = field("calls");
        let count =
            |what: &str| -> usize { calls.split(',').find_map(|kv| kv.strip_prefix(&format!("{what}="))).and_then(|n| n.parse().ok()).unwrap_or(0) };
        assert!(count("addForce") >= 50, "{line}");
        match field("solver").as_str() {
            "explicit" => assert_eq!((count("addDForce"), count("addKToMatrix")), (0, 0), "{line}"),
            "cg" => assert!(count("addDForce") > 0 && count("addKToMatrix") == 0, "{line}"),
            _ => assert!(count("addKToMatrix") > 0, "{line}"),
        }
    }
}
