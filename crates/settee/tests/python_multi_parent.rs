//! Multi-parent nodes from Python (python spec §3.4, pitfall 26): `addChild(<existing node>)`
//! gives the node a second parent; it is initialised and stepped once, and moves exactly as it
//! does under its last parent alone.

use std::process::Command;

/// Runs Python code with Settee's `Sofa` modules (`settee python -c CODE`); returns stdout.
fn python(code: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_settee")).args(["python", "-c", code]).output().expect("run settee python");
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "python failed:\n{stdout}\n{stderr}");
    stdout
}

#[test]
fn add_child_of_an_existing_node_gives_it_a_second_parent_and_steps_it_once() {
    let out = python(
        r#"
import Sofa, Sofa.Core, Sofa.Simulation

class Counter(Sofa.Core.Controller):
    def __init__(self, *a, **kw):
        Sofa.Core.Controller.__init__(self, *a, **kw)
        self.inits = 0
        self.steps = 0
    def init(self):
        self.inits += 1
    def onAnimateBeginEvent(self, event):
        self.steps += 1

def body(node, x0):
    node.addObject("MechanicalObject", name="dofs", position=[[x0, 0, 0], [x0 + 1, 0, 0], [x0, 1, 0]],
                   velocity=[[0, 0, 1], [0, 0.5, 0], [1, 0, 0]])
    node.addObject("UniformMass", totalMass=0.3)
    node.addObject("RestShapeSpringsForceField", stiffness=50)

def build(two_parents):
    root = Sofa.Core.Node("root")
    root.addObject("DefaultAnimationLoop")
    root.addObject("EulerImplicitSolver", rayleighStiffness=0.1, rayleighMass=0.1)
    root.addObject("CGLinearSolver", iterations=25, tolerance=1e-12, threshold=1e-12)
    a = root.addChild("A")
    body(a, 0)
    b = root.addChild("B")
    body(b, 3)
    if two_parents:
        c = a.addChild("C")
        assert b.addChild(c) is c
    else:
        c = b.addChild("C")
    body(c, 6)
    c.addObject("SpringForceField", object1="@/A/dofs", object2="@dofs", spring=[1, 0, 20, 0.5, 5])
    c.addObject("SpringForceField", object1="@/B/dofs", object2="@dofs", spring=[0, 2, 30, 0.5, 3])
    counter = c.addObject(Counter(name="counter"))
    Sofa.Simulation.initRoot(root)
    return root, a, b, c, counter

root, a, b, c, counter = build(True)
print("parents", [p.name.value for p in c.parents], len(a.children), len(b.children))
print("path", c.getPathName(), c.getLinkPath(), c.dofs.getLinkPath())
print("inits", counter.inits)

ref_root, _, _, ref_c, _ = build(False)
steps = 40
same = True
for i in range(steps):
    Sofa.Simulation.animate(root, 0.01)
    Sofa.Simulation.animate(ref_root, 0.01)
    same = same and c.dofs.position.value.tolist() == ref_c.dofs.position.value.tolist() \
        and c.dofs.velocity.value.tolist() == ref_c.dofs.velocity.value.tolist() \
        and root.A.dofs.position.value.tolist() == ref_root.A.dofs.position.value.tolist()
moved = abs(c.dofs.position.value[0][1]) > 1e-2
print("steps", counter.steps, "same", same, "moved", moved)

# Removing one parent link keeps the node under the other.
a.removeChild(c)
print("after", [p.name.value for p in c.parents], c.getPathName(), len(a.children))
Sofa.Simulation.animate(root, 0.01)
print("steps", counter.steps)
# A link making a cycle is refused.
try:
    c.addChild(b)
    print("cycle accepted")
except Exception as e:
    print("cycle refused", "cycle" in str(e))
"#,
    );
    assert!(out.contains("parents ['A', 'B'] 1 1"), "{out}");
    assert!(out.contains("path /A/C @/A/C @/A/C/dofs"), "{out}");
    assert!(out.contains("inits 1\n"), "{out}");
    assert!(out.contains("steps 40 same True moved True"), "{out}");
    assert!(out.contains("after ['B'] /B/C 0"), "{out}");
    assert!(out.contains("steps 41\n"), "{out}");
    assert!(out.contains("cycle refused True"), "{out}");
}
