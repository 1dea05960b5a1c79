//! Scene scaffolding shared by the component tests.

use settee_core::mechanics::{assemble, MechScope};
use settee_core::{ComponentId, Factory, ForceField, ForceIo, Mbk, MechParams, Scene, SimResult, StateId, VecId};
use settee_linalg::MatrixBuilder;

use crate::hexa::{Mat3, Vec3, CORNER_SIGNS};

pub use settee_topology::testing::attrs;

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
        let factory = settee_statecontainer::factory_with(&[crate::register, settee_topology::register]);
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
        settee_topology::testing::init_scene(&mut self.scene)
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
        let mut io = ForceIo { f: vec![f.as_mut_slice()].into(), x: vec![x].into(), v: vec![x].into() };
        let obj = self.scene.role_mut::<dyn ForceField>(ff).unwrap();
        obj.add_force(&params(), &mut io).unwrap();
        drop(io);
        f
    }

    /// `addDForce` of component `ff` for `dx` with factor `k`, into a zero vector.
    pub fn dforce(&mut self, ff: ComponentId, dx: &[f64], k: f64) -> Vec<f64> {
        let mut df = vec![0.0; dx.len()];
        let mut io = ForceIo { f: vec![df.as_mut_slice()].into(), x: vec![dx].into(), v: vec![].into() };
        let obj = self.scene.role_mut::<dyn ForceField>(ff).unwrap();
        obj.add_dforce(&params(), &mut io, k, 0.0).unwrap();
        drop(io);
        df
    }

    /// The assembled `m·M + k·K` of the root scope.
    pub fn assembled(&mut self, m: f64, k: f64) -> settee_linalg::CsrMatrix {
        let scope = MechScope::build(&self.scene, Scene::ROOT);
        let mut b = MatrixBuilder::new(scope.size);
        assemble(&mut self.scene, &scope, Mbk { m, b: 0.0, k }, &mut b).unwrap();
        b.into_matrix()
    }

    /// After a force evaluation at `x`: `add_dforce(dx)` with kFactor `k`, then the assembled
    /// `k·K` and its product with `dx`.
    pub fn dforce_and_assembled(&mut self, ff: ComponentId, x: &[f64], dx: &[f64], k: f64) -> (Vec<f64>, settee_linalg::CsrMatrix, Vec<f64>) {
        let _ = self.force(ff, x);
        let df = self.dforce(ff, dx, k);
        let m = self.assembled(0.0, k);
        let kdx = mul(&m, dx);
        (df, m, kdx)
    }

    /// Central differences `(f(x + ε·dx) − f(x − ε·dx)) / 2ε` of the force of `ff` at `x` along
    /// `dx`, and `add_dforce(dx)` (kFactor 1) after a force evaluation at `x`.
    pub fn central_differences(&mut self, ff: ComponentId, x: &[f64], dx: &[f64], eps: f64) -> (Vec<f64>, Vec<f64>) {
        let xp: Vec<f64> = x.iter().zip(dx).map(|(x, d)| x + eps * d).collect();
        let xm: Vec<f64> = x.iter().zip(dx).map(|(x, d)| x - eps * d).collect();
        let (fp, fm) = (self.force(ff, &xp), self.force(ff, &xm));
        self.force(ff, x);
        let df = self.dforce(ff, dx, 1.0);
        let fd = fp.iter().zip(&fm).map(|(p, m)| (p - m) / (2.0 * eps)).collect();
        (fd, df)
    }

    /// The bits of the force of `ff` at `x`, of its differential along `dx` (kFactor `k`) and of
    /// the assembled `−0.5·K`, computed on a pool of `threads` threads; with the element loops
    /// that ran and how many of them took the parallel branch.
    pub fn bits_on_threads(&mut self, ff: ComponentId, x: &[f64], dx: &[f64], k: f64, threads: usize) -> (Bits, (usize, usize)) {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let before = crate::element_loop_counts();
            let f = self.force(ff, x);
            let df = self.dforce(ff, dx, k);
            let m = self.assembled(0.0, -0.5);
            let after = crate::element_loop_counts();
            ((bits(&f), bits(&df), bits(m.values()), m.col_idx().to_vec()), (after.0 - before.0, after.1 - before.1))
        })
    }
}

/// The bits of a force, of a force differential and of a matrix (values and columns).
pub type Bits = (Vec<u64>, Vec<u64>, Vec<u64>, Vec<usize>);

/// The bits of every number.
pub fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A state (attributes `state`), a topology of class `topology` (attributes `topo`) and the force
/// field `class` (attributes `ff`) in the root node, initialised: the harness, the force field
/// and the rest positions.
pub fn scene_with(
    state: &[(&str, &str)],
    topology: &str,
    topo: &[(&str, &str)],
    class: &str,
    ff: &[(&str, &str)],
) -> SimResult<(Harness, ComponentId, Vec<f64>)> {
    let mut h = Harness::new();
    let mo = h.add("MechanicalObject", state);
    h.add(topology, topo);
    let c = h.add(class, ff);
    h.init()?;
    let rest = h.rest(mo);
    Ok((h, c, rest))
}

/// The force field `class` on a `MeshTopology` of the elements `kind` (`"triangles"`,
/// `"quads"`…) `elements` of the state's points `points`.
pub fn on_mesh(points: &str, kind: &str, elements: &str, class: &str, ff: &[(&str, &str)]) -> (Harness, ComponentId, Vec<f64>) {
    scene_with(&[("position", points)], "MeshTopology", &[(kind, elements)], class, ff).unwrap()
}

/// The force field `class` on a `RegularGridTopology` (attributes `grid`), with a state named
/// `dofs`.
pub fn on_grid(grid: &[(&str, &str)], class: &str, ff: &[(&str, &str)]) -> SimResult<(Harness, ComponentId, Vec<f64>)> {
    scene_with(&[("name", "dofs")], "RegularGridTopology", grid, class, ff)
}

/// At a state `x` deformed by the force of `ff`, `add_dforce` is the product with the assembled
/// stiffness, which is symmetric and annihilates rigid translations.
pub fn check_dforce_is_symmetric_assembled_stiffness(h: &mut Harness, ff: ComponentId, rest: &[f64]) {
    let x = perturb(rest, 0.15, 7);
    h.force(ff, &x);
    let k = 2.5;
    let a = h.assembled(0.0, k);
    let n = rest.len();
    for seed in 1..4 {
        let dx = perturb(&vec![0.0; n], 1.0, seed);
        let df = h.dforce(ff, &dx, k);
        let kdx = mul(&a, &dx);
        let scale = max_abs(&df);
        assert!(scale > 1.0);
        for (p, q) in df.iter().zip(&kdx) {
            assert!((p - q).abs() < 1e-12 * scale, "{p} vs {q}");
        }
    }
    let d = a.to_dense();
    for i in 0..n {
        for j in 0..n {
            assert!((d[i * n + j] - d[j * n + i]).abs() < 1e-12 * max_abs(&d), "({i}, {j})");
        }
    }
    let t: Vec<f64> = (0..n).map(|i| [0.3, -1.2, 0.7][i % 3]).collect();
    assert!(max_abs(&h.dforce(ff, &t, 1.0)) < 1e-11);
}

/// A topology container of class `container` holding the points `pts` and the elements `kind`
/// (`"triangles"`, `"tetrahedra"`…) `elements` (flat), its state, and the force field `class`
/// (attributes `ff`), initialised: the harness, the container and the force field.
pub fn container_scene<T: std::fmt::Debug>(
    container: &str,
    pts: &[f64],
    kind: &str,
    elements: impl IntoIterator<Item = T>,
    class: &str,
    ff: &[(&str, &str)],
) -> (Harness, ComponentId, ComponentId) {
    let mut h = Harness::new();
    let topo = h.add(container, &[("position", &join(pts.iter())), (kind, &join(elements))]);
    h.add("MechanicalObject", &[]);
    let ff = h.add(class, ff);
    h.init().unwrap();
    (h, topo, ff)
}

/// The points of a grid of `cells` boxes of size `size` (x fastest, then y, then z), flat.
pub fn grid_points(cells: [usize; 3], size: [f64; 3]) -> Vec<f64> {
    let mut pts = Vec::new();
    for z in 0..=cells[2] {
        for y in 0..=cells[1] {
            for x in 0..=cells[0] {
                pts.extend([x as f64 * size[0], y as f64 * size[1], z as f64 * size[2]]);
            }
        }
    }
    pts
}

/// The hexahedra of the grid of [`grid_points`], x fastest: the corner of sign `s` along an axis
/// (SOFA's corner order, [`CORNER_SIGNS`]) is the cell's first point along it when `s < 0`, the
/// next one when `s > 0`.
pub fn grid_hexahedra(cells: [usize; 3]) -> Vec<[usize; 8]> {
    let mut hexa = Vec::new();
    for z in 0..cells[2] {
        for y in 0..cells[1] {
            for x in 0..cells[0] {
                hexa.push(CORNER_SIGNS.map(|s| {
                    let at = |k: usize, base: usize| base + usize::from(s[k] > 0.0);
                    at(0, x) + (cells[0] + 1) * (at(1, y) + (cells[1] + 1) * at(2, z))
                }));
            }
        }
    }
    hexa
}

/// A bent strip of four triangles (not planar).
pub const STRIP: &str = "0 0 0  1 0 0  2 0.1 0.3  0 1 0.2  1 1.1 0  2 1 -0.2";
pub const STRIP_TRIS: &str = "0 1 3  1 4 3  1 2 4  2 5 4";

/// Rotation by angle `t` about the unit axis `u`, applied to every point of `x`, plus a
/// translation `shift`.
pub fn rigid(x: &[f64], u: [f64; 3], t: f64, shift: [f64; 3]) -> Vec<f64> {
    let (c, s) = (t.cos(), t.sin());
    x.chunks(3)
        .flat_map(|p| {
            let d = u[0] * p[0] + u[1] * p[1] + u[2] * p[2];
            let cr = [u[1] * p[2] - u[2] * p[1], u[2] * p[0] - u[0] * p[2], u[0] * p[1] - u[1] * p[0]];
            (0..3).map(move |k| p[k] * c + cr[k] * s + u[k] * d * (1.0 - c) + shift[k])
        })
        .collect()
}

/// The numbers written exactly (17 significant digits), space-separated.
pub fn text(v: &[f64]) -> String {
    v.iter().map(|x| format!("{x:.17e}")).collect::<Vec<_>>().join(" ")
}

/// The rotation matrix of the quaternion `(w, x, y, z)` (normalised first).
pub fn quat_to_mat(q: [f64; 4]) -> Mat3 {
    let l = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let [w, x, y, z] = [q[0] / l, q[1] / l, q[2] / l, q[3] / l];
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
        [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
        [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
    ]
}

/// Quaternions for property tests: components in `[-1, 1)`, not too close to zero.
pub fn arb_quat() -> impl proptest::strategy::Strategy<Value = [f64; 4]> {
    use proptest::prelude::*;
    prop::array::uniform4(-1.0f64..1.0).prop_filter("non-degenerate", |q| q.iter().map(|v| v * v).sum::<f64>() > 0.05)
}

/// Perturbations of the `N` nodes of an element for property tests: every coordinate in
/// `[-0.15, 0.15)`.
pub fn arb_perturbation<const N: usize>() -> impl proptest::strategy::Strategy<Value = [Vec3; N]> {
    proptest::array::uniform(proptest::array::uniform3(-0.15f64..0.15))
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
