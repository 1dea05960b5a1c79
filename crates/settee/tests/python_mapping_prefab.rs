//! Mappings and prefabs written in Python (spec python.md §5.3, §5.4), run through
//! `settee python`.
//!
//! - A `Sofa.Core.Mapping_Vec3d_Vec3d` that copies positions and velocities down and adds
//!   forces up, in the order of Settee's `IdentityMapping`, gives the same trajectory bit for
//!   bit, under an explicit solver (forces through `applyJT`) and an implicit one with CG (`dx`
//!   through `applyJ`, `df` through `applyJT`), with a stiff force field on the mapped points.
//! - A `Sofa.Prefab` subclass builds its content from its parameters, and the prefab runs as
//!   the same content written inline.

mod common;
use common::{field, python};

const MAPPING: &str = r#"
import numpy as np
import Sofa.Core
import Sofa.Simulation

class Copy(Sofa.Core.Mapping_Vec3d_Vec3d):
    """IdentityMapping's operations: copies down, sums up."""
    def __init__(self, *args, **kwargs):
        Sofa.Core.Mapping_Vec3d_Vec3d.__init__(self, *args, **kwargs)
        self.calls = {"apply": 0, "applyJ": 0, "applyJT": 0}

    def apply(self, m, out, inp):
        self.calls["apply"] += 1
        with out.writeableArray() as wa:
            wa[:] = inp.value

    def applyJ(self, m, out, inp):
        self.calls["applyJ"] += 1
        with out.writeableArray() as wa:
            wa[:] = inp.value

    def applyJT(self, m, inp, out):
        self.calls["applyJT"] += 1
        with inp.writeableArray() as wa:
            wa += out.value


def body(root, name, solver, python):
    n = root.addChild(name)
    if solver == "explicit":
        n.addObject("EulerExplicitSolver")
    else:
        n.addObject("EulerImplicitSolver", rayleighStiffness=0.1, rayleighMass=0.1)
        n.addObject("CGLinearSolver", iterations=25, tolerance=1e-12, threshold=1e-12)
    dofs = n.addObject("MechanicalObject", name="dofs", position=[[1, 0, 0], [0, 2, 0.5], [-1, 0.25, 3]])
    n.addObject("UniformMass", totalMass=0.3)
    m = n.addChild("mapped")
    out = m.addObject("MechanicalObject", name="dofs", position=[[0, 0, 0]] * 3,
                      rest_position=[[0, 0, 0], [0, 1, 0], [0, 0, 2]])
    m.addObject("RestShapeSpringsForceField", stiffness=37.5)
    if python:
        return n, m.addObject(Copy(name="map", input=dofs.linkpath, output=out.linkpath))
    m.addObject("IdentityMapping", input="@../dofs", output="@dofs")
    return n, None


for solver in ["explicit", "cg"]:
    root = Sofa.Core.Node("root")
    root.dt = 0.01
    root.gravity = [0, -9.81, 0]
    root.addObject("DefaultAnimationLoop")
    rust, _ = body(root, "rust", solver, False)
    py, mapping = body(root, "python", solver, True)
    Sofa.Simulation.initRoot(root)
    start = rust.dofs.position.value.copy()
    for _ in range(50):
        Sofa.Simulation.animate(root, root.dt.value)
    a, b = rust.dofs.position.value, py.dofs.position.value
    same = (np.array_equal(a, b) and np.array_equal(rust.dofs.velocity.value, py.dofs.velocity.value)
            and np.array_equal(rust.mapped.dofs.position.value, py.mapped.dofs.position.value))
    print("solver %s identical %s max_difference %.3g moved %.3g calls %s" % (
        solver, same, float(np.abs(a - b).max()), float(np.abs(a - start).max()),
        ",".join("%s=%d" % kv for kv in sorted(mapping.calls.items()))))
"#;

#[test]
fn python_mapping_matches_identity_mapping_bit_for_bit() {
    let stdout = python(MAPPING);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("solver ")).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for line in lines {
        assert_eq!(field(line, "identical"), "True", "{line}");
        let moved: f64 = field(line, "moved").parse().unwrap();
        assert!(moved > 1e-2, "the particles did not move: {line}");
        let calls = field(line, "calls");
        let count =
            |what: &str| -> usize { calls.split(',').find_map(|kv| kv.strip_prefix(&format!("{what}="))).and_then(|n| n.parse().ok()).unwrap_or(0) };
        // Positions are mapped at init and at every step; forces go up at every step.
        assert!(count("apply") > 50 && count("applyJT") >= 50, "{line}");
        if field(line, "solver") == "cg" {
            assert!(count("applyJ") > 100, "CG maps each direction down: {line}");
        }
    }
}

const PREFAB: &str = r#"
import numpy as np
import Sofa
import Sofa.Core
import Sofa.Simulation

class Particles(Sofa.Prefab):
    """Three particles on springs to their rest shape."""
    prefabParameters = [
        {"name": "stiffness", "type": "double", "help": "spring stiffness", "default": 10.0},
        {"name": "weight", "type": "double", "help": "total mass", "default": 1.0},
    ]
    prefabData = [{"name": "label", "type": "string", "help": "free text", "default": "none"}]

    def __init__(self, *args, **kwargs):
        Sofa.Prefab.__init__(self, *args, **kwargs)

    def init(self):
        self.addObject("EulerImplicitSolver")
        self.addObject("CGLinearSolver", iterations=25, tolerance=1e-12, threshold=1e-12)
        self.addObject("MechanicalObject", name="dofs", position=[[1, 0, 0], [0, 2, 0.5], [-1, 0.25, 3]],
                       rest_position=[[0, 0, 0], [0, 1, 0], [0, 0, 2]])
        self.addObject("UniformMass", totalMass=self.weight.value)
        self.addObject("RestShapeSpringsForceField", stiffness=self.stiffness.value)


@Sofa.PrefabBuilder
def built(self, stiffness=10.0, weight=1.0):
    self.addObject("EulerImplicitSolver")
    self.addObject("CGLinearSolver", iterations=25, tolerance=1e-12, threshold=1e-12)
    self.addObject("MechanicalObject", name="dofs", position=[[1, 0, 0], [0, 2, 0.5], [-1, 0.25, 3]],
                   rest_position=[[0, 0, 0], [0, 1, 0], [0, 0, 2]])
    self.addObject("UniformMass", totalMass=weight)
    self.addObject("RestShapeSpringsForceField", stiffness=stiffness)


root = Sofa.Core.Node("root")
root.dt = 0.01
root.gravity = [0, -9.81, 0]
root.addObject("DefaultAnimationLoop")
p = Particles(name="prefab", stiffness=37.5, weight=0.3, label="hello")
root.addChild(p)
Particles(name="attached", parent=root)
root.addChild(built(name="decorated", stiffness=37.5, weight=0.3))
inline = root.addChild("inline")
inline.addObject("EulerImplicitSolver")
inline.addObject("CGLinearSolver", iterations=25, tolerance=1e-12, threshold=1e-12)
inline.addObject("MechanicalObject", name="dofs", position=[[1, 0, 0], [0, 2, 0.5], [-1, 0.25, 3]],
                 rest_position=[[0, 0, 0], [0, 1, 0], [0, 0, 2]])
inline.addObject("UniformMass", totalMass=0.3)
inline.addObject("RestShapeSpringsForceField", stiffness=37.5)
Sofa.Simulation.initRoot(root)
for _ in range(50):
    Sofa.Simulation.animate(root, root.dt.value)

print("isnode", isinstance(p, Sofa.Core.Node), "class", type(p).__name__)
print("prefabname", p.prefabname.value, "label", p.label.value, "stiffness", p.stiffness.value)
print("path", p.getPathName(), "attached", root.attached.getPathName(), "default_stiffness", root.attached.stiffness.value)
a = inline.dofs.position.value
print("identical", np.array_equal(a, root.prefab.dofs.position.value), np.array_equal(a, root.decorated.dofs.position.value),
      "moved %.3g" % float(np.abs(a - inline.dofs.rest_position.value).max()))
"#;

#[test]
fn python_prefabs_build_their_content_from_their_parameters() {
    let stdout = python(PREFAB);
    let line = |key: &str| stdout.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no '{key}' line:\n{stdout}")).to_string();
    assert_eq!(line("isnode"), "isnode True class Particles");
    assert_eq!(line("prefabname"), "prefabname Particles label hello stiffness 37.5");
    assert_eq!(line("path"), "path /prefab attached /attached default_stiffness 10.0");
    let same = line("identical");
    assert!(same.starts_with("identical True True"), "{same}");
    let moved: f64 = field(&same, "moved").parse().unwrap();
    assert!(moved > 1e-2, "{same}");
}
