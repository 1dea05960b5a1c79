//! What Python scenes cost beyond the engine (criterion), the figures of docs/performance.md
//! "Python scenes":
//!
//! * a Python controller's event: one step of an empty scene with 100 controllers handling
//!   `onAnimateBeginEvent`, against the same scene without them (the difference is 100 calls);
//! * building a scene of 10,000 objects from Python (`addObject` in a loop, as scripts do);
//! * `.value` of a 100,000-point state (a view on the engine's memory, no copy);
//! * Python force fields and mappings: one explicit step of 100 nodes of 10 particles, each with
//!   a Python force field (one `addForce` per step), or a Python mapping to 10 mapped particles
//!   (`apply` and `applyJ` down, `applyJT` up), against the same nodes without them.
//!
//! `cargo bench -p settee --bench python`

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use pyo3::prelude::*;

const SCRIPT: &std::ffi::CStr = c"
import Sofa, Sofa.Core, Sofa.Simulation

class Nothing(Sofa.Core.Controller):
    def __init__(self, *args, **kwargs):
        Sofa.Core.Controller.__init__(self, *args, **kwargs)
    def onAnimateBeginEvent(self, event):
        pass

def empty_scene(controllers):
    root = Sofa.Core.Node('root')
    root.addObject('DefaultAnimationLoop')
    for i in range(controllers):
        root.addObject(Nothing(name='c%d' % i))
    Sofa.Simulation.initRoot(root)
    return root

def build(objects):
    root = Sofa.Core.Node('root')
    per_node = 100
    for i in range(objects // per_node):
        node = root.addChild('n%d' % i)
        for j in range(per_node):
            node.addObject('MechanicalObject', name='m%d' % j, position=[0.0, 0.0, 0.0])
    return root

class Pull(Sofa.Core.ForceFieldVec3d):
    def __init__(self, *args, **kwargs):
        Sofa.Core.ForceFieldVec3d.__init__(self, *args, **kwargs)
    def addForce(self, m, f, x, v):
        with f.writeableArray() as wa:
            wa[:, 0] += 1.0
    def addDForce(self, m, df, dx):
        pass

class Copy(Sofa.Core.Mapping_Vec3d_Vec3d):
    def __init__(self, *args, **kwargs):
        Sofa.Core.Mapping_Vec3d_Vec3d.__init__(self, *args, **kwargs)
    def apply(self, m, out, inp):
        with out.writeableArray() as wa:
            wa[:] = inp.value
    def applyJ(self, m, out, inp):
        with out.writeableArray() as wa:
            wa[:] = inp.value
    def applyJT(self, m, inp, out):
        with inp.writeableArray() as wa:
            wa += out.value

def particles(kind):
    # 100 nodes of 10 particles under an explicit solver; kind: 'none', 'forcefield' (a Python
    # force field on each) or 'mapping' (a Python mapping to 10 mapped particles under each).
    root = Sofa.Core.Node('root')
    root.addObject('DefaultAnimationLoop')
    root.dt = 0.001
    for i in range(100):
        node = root.addChild('n%d' % i)
        node.addObject('EulerExplicitSolver')
        dofs = node.addObject('MechanicalObject', name='dofs', position=[[j, 0.0, 0.0] for j in range(10)])
        node.addObject('UniformMass', totalMass=1.0)
        if kind == 'forcefield':
            node.addObject(Pull(name='pull'))
        elif kind == 'mapping':
            child = node.addChild('mapped')
            out = child.addObject('MechanicalObject', name='dofs', position=[[0.0, 0.0, 0.0]] * 10)
            child.addObject(Copy(name='copy', input=dofs.linkpath, output=out.linkpath))
    Sofa.Simulation.initRoot(root)
    return root

def big_state():
    root = Sofa.Core.Node('root')
    root.addObject('DefaultAnimationLoop')
    root.addObject('RegularGridTopology', n=[100, 100, 10], min=[0, 0, 0], max=[1, 1, 1])
    mo = root.addObject('MechanicalObject', name='dofs')
    Sofa.Simulation.initRoot(root)
    return mo
";

fn python(c: &mut Criterion) {
    settee_python::with_python(Arc::new(settee::factory()), |py| {
        let m = PyModule::from_code(py, SCRIPT, c"settee_bench_python.py", c"settee_bench_python").expect("the benchmark's script");
        let animate = py.import("Sofa.Simulation").unwrap().getattr("animate").unwrap();

        let mut g = c.benchmark_group("python controller");
        for controllers in [0usize, 100] {
            let root = m.getattr("empty_scene").unwrap().call1((controllers,)).unwrap();
            g.bench_function(format!("step, {controllers} controllers"), |b| b.iter(|| animate.call1((&root, 0.0)).unwrap()));
        }
        g.finish();

        let mut g = c.benchmark_group("python components");
        for kind in ["none", "forcefield", "mapping"] {
            let root = m.getattr("particles").unwrap().call1((kind,)).unwrap();
            g.bench_function(format!("step, 100 nodes, {kind}"), |b| b.iter(|| animate.call1((&root, 0.001)).unwrap()));
        }
        g.finish();

        let mut g = c.benchmark_group("python scene building");
        g.sample_size(10).measurement_time(Duration::from_secs(20));
        let build = m.getattr("build").unwrap();
        g.bench_function("10000 objects", |b| b.iter(|| build.call1((10_000,)).unwrap()));
        g.finish();

        let mut g = c.benchmark_group("python data");
        let position = m.getattr("big_state").unwrap().call0().unwrap().getattr("position").unwrap();
        g.bench_function(".value of 100000 points", |b| b.iter(|| position.getattr("value").unwrap()));
        g.finish();
    });
}

criterion_group!(benches, python);
criterion_main!(benches);
