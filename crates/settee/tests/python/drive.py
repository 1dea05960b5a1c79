"""Runs a SOFA Python scene as spec python.md §9 asks: createScene on Node("root"), initRoot,
N × animate(root, root.dt.value); prints each mechanical state's displacement."""
import importlib.util
import os
import sys

scene = os.path.abspath(sys.argv[1])
steps = int(sys.argv[2])
entry = sys.argv[3] if len(sys.argv) > 3 else "createScene"
os.chdir(os.path.dirname(scene))
sys.path.insert(0, os.path.dirname(scene))

import Sofa
import Sofa.Core
import Sofa.Simulation

name = os.path.splitext(os.path.basename(scene))[0]
spec = importlib.util.spec_from_file_location(name, scene)
module = importlib.util.module_from_spec(spec)
sys.modules[name] = module
spec.loader.exec_module(module)


def states(node, out):
    for o in node.objects:
        # A node with several parents is reached once per parent: its states count once.
        if o.getClassName() == "MechanicalObject" and all(p != o.getPathName() for p, _ in out):
            out.append((o.getPathName(), o.position.value.copy()))
    for c in node.children:
        states(c, out)
    return out


if entry == "main":
    module.main()
else:
    root = Sofa.Core.Node("root")
    module.createScene(root)
    Sofa.Simulation.initRoot(root)
    before = states(root, [])
    for _ in range(steps):
        Sofa.Simulation.animate(root, root.dt.value)
    after = states(root, [])
    for (path, x0), (_, x1) in zip(before, after):
        d = x1 - x0
        print("state %s dofs %d max_displacement %.17g mean_dy %.17g" % (path, len(x0), abs(d).max() if d.size else 0.0,
                                                                         d[:, 1].mean() if d.size else 0.0))
    print("time %.17g" % root.time.value)
print("driver done")
