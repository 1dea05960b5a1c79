//! Scene scaffolding shared by the component tests.

use settee_core::mechanics::{assemble, MechScope};
use settee_core::{Attr, ComponentId, Factory, ForceField, ForceIo, InitCtx, Mbk, MechParams, Scene, SimResult, StateId, VecId};
use settee_linalg::MatrixBuilder;

pub fn attrs(pairs: &[(&str, &str)]) -> Vec<Attr> {
    pairs.iter().map(|(n, v)| Attr { name: n.to_string(), value: v.to_string(), pos: None }).collect()
}

pub fn params() -> MechParams {
    MechParams { dt: 0.01, time: 0.0, gravity: [0.0, -9.81, 0.0] }
}

/// A scene under construction.
pub struct Harness {
    pub factory: Factory,
    pub scene: Scene,
}

impl Harness {
    pub fn new() -> Harness {
        let mut factory = Factory::new();
        crate::register(&mut factory);
        settee_topology::register(&mut factory);
        settee_statecontainer::register(&mut factory);
        Harness { factory, scene: Scene::new("root") }
    }

    /// Creates a component in the root node.
    pub fn add(&mut self, class: &str, a: &[(&str, &str)]) -> ComponentId {
        self.add_in(Scene::ROOT, class, a)
    }

    pub fn add_in(&mut self, node: settee_core::NodeId, class: &str, a: &[(&str, &str)]) -> ComponentId {
        let dir = std::path::Path::new(".");
        let c = self.factory.create(&mut self.scene, node, class, None, attrs(a), None, dir);
        assert!(!self.scene.has_errors(), "{:?}", self.scene.messages);
        c.unwrap_or_else(|| panic!("{class} not created: {:?}", self.scene.messages))
    }

    /// Initialises every component in scene order.
    pub fn init(&mut self) -> SimResult {
        let scene = &mut self.scene;
        scene.resolve_all_links();
        for n in scene.preorder(Scene::ROOT) {
            for c in scene.node(n).objects.clone() {
                scene.pull_links(c);
                scene.with_taken(c, |obj, scene| obj.init(&mut InitCtx { scene, id: c }))?;
                scene.entry_mut(c).initialized = true;
            }
        }
        Ok(())
    }

    pub fn state(&self, mo: ComponentId) -> StateId {
        self.scene.state_of(mo).unwrap()
    }

    pub fn rest(&self, mo: ComponentId) -> Vec<f64> {
        self.scene.store.get(self.state(mo)).read(VecId::REST_POSITION).to_vec()
    }

    pub fn get_mut<T: 'static>(&mut self, id: ComponentId) -> &mut T {
        self.scene.components[id].obj.as_mut().unwrap().as_any_mut().downcast_mut().unwrap()
    }

    /// `addForce` of component `ff` at positions `x` (velocities `x` too, unused by elastic
    /// fields), into a zero vector.
    pub fn force(&mut self, ff: ComponentId, x: &[f64]) -> Vec<f64> {
        let mut f = vec![0.0; x.len()];
        let mut io = ForceIo { f: vec![f.as_mut_slice()], x: vec![x], v: vec![x] };
        let obj = self.scene.role_mut::<dyn ForceField>(ff).unwrap();
        obj.add_force(&params(), &mut io).unwrap();
        f
    }

    /// `addDForce` of component `ff` for `dx` with factor `k`, into a zero vector.
    pub fn dforce(&mut self, ff: ComponentId, dx: &[f64], k: f64) -> Vec<f64> {
        let mut df = vec![0.0; dx.len()];
        let mut io = ForceIo { f: vec![df.as_mut_slice()], x: vec![dx], v: vec![] };
        let obj = self.scene.role_mut::<dyn ForceField>(ff).unwrap();
        obj.add_dforce(&params(), &mut io, k, 0.0).unwrap();
        df
    }

    /// The assembled `m·M + k·K` of the root scope.
    pub fn assembled(&mut self, m: f64, k: f64) -> settee_linalg::CsrMatrix {
        let scope = MechScope::build(&self.scene, Scene::ROOT);
        let mut b = MatrixBuilder::new(scope.size);
        assemble(&mut self.scene, &scope, Mbk { m, b: 0.0, k }, &mut b).unwrap();
        b.into_matrix()
    }
}

pub use settee_core::testing::{max_abs, mul};

/// Deterministic pseudo-random perturbation in [-a, a].
pub fn perturb(x: &[f64], a: f64, seed: u64) -> Vec<f64> {
    let mut s = seed;
    x.iter().map(|v| v + a * settee_core::testing::lcg(&mut s)).collect()
}

/// Removes elements of `kind` from the set container `topo` by hand (SOFA's order: sorted in
/// decreasing order, logged, then swap-with-last) and propagates the change.
pub fn remove_elements(scene: &mut settee_core::Scene, topo: ComponentId, kind: settee_core::topology_change::ElementKind, ids: &[usize]) {
    use settee_core::topology_change::ElementKind as K;
    let mut ids = ids.to_vec();
    ids.sort_unstable_by(|a, b| b.cmp(a));
    settee_topology::modifier::modify(scene, topo, |t| {
        t.log_removed(kind, &ids);
        for &i in &ids {
            match kind {
                K::Edge => drop(t.mesh.edges.swap_remove(i)),
                K::Triangle => drop(t.mesh.triangles.swap_remove(i)),
                K::Quad => drop(t.mesh.quads.swap_remove(i)),
                K::Tetrahedron => drop(t.mesh.tetrahedra.swap_remove(i)),
                K::Hexahedron => drop(t.mesh.hexahedra.swap_remove(i)),
                K::Point => unreachable!("points are not removed by this helper"),
            }
        }
    })
    .unwrap();
}

/// Appends elements of `kind` to the set container `topo` by hand and propagates the change.
pub fn add_elements(scene: &mut settee_core::Scene, topo: ComponentId, kind: settee_core::topology_change::ElementKind, elems: &[Vec<usize>]) {
    use settee_core::topology_change::ElementKind as K;
    settee_topology::modifier::modify(scene, topo, |t| {
        for e in elems {
            match kind {
                K::Edge => t.mesh.edges.push([e[0], e[1]]),
                K::Triangle => t.mesh.triangles.push([e[0], e[1], e[2]]),
                K::Quad => t.mesh.quads.push([e[0], e[1], e[2], e[3]]),
                K::Tetrahedron => t.mesh.tetrahedra.push([e[0], e[1], e[2], e[3]]),
                K::Hexahedron => t.mesh.hexahedra.push(std::array::from_fn(|k| e[k])),
                K::Point => unreachable!("points are not added by this helper"),
            }
        }
        t.log_added(kind, elems.to_vec(), elems.len(), vec![], vec![]);
    })
    .unwrap();
}

/// Space-separated numbers.
pub fn join<T: std::fmt::Debug>(v: impl IntoIterator<Item = T>) -> String {
    v.into_iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(" ")
}
