//! `MeshSpringForceField`: a SpringForceField whose springs are generated at init from the
//! elements of a topology (forcefields-mappings spec §2.2).
//!
//! Springs are created in this order, each vertex pair once (the first occurrence wins and keeps
//! its orientation and its element kind's coefficients): the edges (`linesStiffness/Damping`),
//! the 3 pairs of each triangle, the 6 pairs of each quad, the 6 pairs of each tetrahedron, and
//! the 28 corner pairs of each hexahedron (`cubes…`); an element kind whose stiffness and damping
//! are both zero is skipped. The rest length `L` is the distance of the rest positions; stiffness
//! and damping are divided by `L` (when `L > ε`). `stiffness`/`damping` set every kind at once.
//! Springs only exist when `object1` and `object2` are the same state. The force, Jacobian and
//! matrix are SpringForceField's.

use std::collections::HashSet;

use settee_core::component::ForceField;
use settee_core::role::{Interaction, MechanicalState, Topology};
use settee_core::{component, Component, InitCtx, Layout, MeshData, SimResult};

use crate::spring_force_field::{self as sff, LinearSpring, SpringData, SpringForceField};

/// Stiffness and damping of one element kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KindCoefficients {
    pub stiffness: f64,
    pub damping: f64,
}

impl KindCoefficients {
    fn active(&self) -> bool {
        self.stiffness != 0.0 || self.damping != 0.0
    }
}

/// What the generation needs besides the mesh.
#[derive(Clone, Debug)]
pub struct MeshSpringParams {
    pub lines: KindCoefficients,
    pub triangles: KindCoefficients,
    pub quads: KindCoefficients,
    pub tetrahedra: KindCoefficients,
    pub cubes: KindCoefficients,
    pub no_compression: bool,
    /// `[min, max]`, `None` for an unbounded side.
    pub local_range: [Option<usize>; 2],
}

/// Generates the springs of a mesh in SOFA's order; `rest(i)` is rest coordinate `i` (its full
/// coordinate: the rest length is the norm of the coordinate difference).
pub fn mesh_springs(mesh: &MeshData, p: &MeshSpringParams, rest: &dyn Fn(usize) -> Vec<f64>) -> Vec<LinearSpring> {
    let mut set: HashSet<(usize, usize)> = HashSet::new();
    let mut springs = Vec::new();
    let mut add = |m1: usize, m2: usize, c: KindCoefficients| {
        if let Some(lo) = p.local_range[0] {
            if m1 < lo || m2 < lo {
                return;
            }
        }
        if let Some(hi) = p.local_range[1] {
            if m1 > hi && m2 > hi {
                return;
            }
        }
        let key = if m1 < m2 { (m1, m2) } else { (m2, m1) };
        if !set.insert(key) {
            return;
        }
        let (x1, x2) = (rest(m1), rest(m2));
        let mut n2 = 0.0;
        for (k, (a, b)) in x2.iter().zip(&x1).enumerate() {
            let d = a - b;
            if k == 0 {
                n2 = d * d;
            } else {
                n2 += d * d;
            }
        }
        let l = n2.sqrt();
        let (ks, kd) = if l > f64::EPSILON { (c.stiffness / l, c.damping / l) } else { (c.stiffness, c.damping) };
        springs.push(LinearSpring { m1, m2, ks, kd, initpos: l, elongation_only: p.no_compression, enabled: true });
    };
    const PAIRS4: [(usize, usize); 6] = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
    if p.lines.active() {
        for e in &mesh.edges {
            add(e[0], e[1], p.lines);
        }
    }
    if p.triangles.active() {
        for t in &mesh.triangles {
            add(t[0], t[1], p.triangles);
            add(t[0], t[2], p.triangles);
            add(t[1], t[2], p.triangles);
        }
    }
    if p.quads.active() {
        for q in &mesh.quads {
            for (i, j) in PAIRS4 {
                add(q[i], q[j], p.quads);
            }
        }
    }
    if p.tetrahedra.active() {
        for t in &mesh.tetrahedra {
            for (i, j) in PAIRS4 {
                add(t[i], t[j], p.tetrahedra);
            }
        }
    }
    if p.cubes.active() {
        for h in &mesh.hexahedra {
            for k in 0..8 {
                for j in k + 1..8 {
                    add(h[k], h[j], p.cubes);
                }
            }
        }
    }
    springs
}

/// Springs on the edges, faces and cells of a topology, with per-element-kind stiffness and damping.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    markers = [Interaction],
    templates = ["Vec1d", "Vec2d", "Vec3d"],
    template_rule = FromPair,
    create = |args| MeshSpringForceField::new(args.layout.unwrap_or(Layout::Vec3)),
    inherit = [SpringData, Self],
    data = {
        /// stiffness of the springs on the edges
        #[alias("stiffness")]
        linesStiffness: Real = "0",
        /// damping of the springs on the edges
        #[alias("damping")]
        linesDamping: Real = "0",
        /// stiffness of the springs on the triangles' vertex pairs
        #[alias("stiffness")]
        trianglesStiffness: Real = "0",
        /// damping of the springs on the triangles' vertex pairs
        #[alias("damping")]
        trianglesDamping: Real = "0",
        /// stiffness of the springs on the quads' vertex pairs (sides and diagonals)
        #[alias("stiffness")]
        quadsStiffness: Real = "0",
        /// damping of the springs on the quads' vertex pairs
        #[alias("damping")]
        quadsDamping: Real = "0",
        /// stiffness of the springs on the tetrahedra's vertex pairs
        #[alias("stiffness", "tetrasStiffness")]
        tetrahedraStiffness: Real = "0",
        /// damping of the springs on the tetrahedra's vertex pairs
        #[alias("damping", "tetrasDamping")]
        tetrahedraDamping: Real = "0",
        /// stiffness of the springs on the hexahedra's 28 corner pairs
        #[alias("stiffness")]
        cubesStiffness: Real = "0",
        /// damping of the springs on the hexahedra's 28 corner pairs
        #[alias("damping")]
        cubesDamping: Real = "0",
        /// the generated springs only act when stretched
        noCompression: Bool = "false",
        /// optional DOF range [min max]: springs with an end below min, or both ends above max, are not created (negative: no bound)
        localRange: Fixed(2) = "-1 -1",
        /// min elongation of the colour range (rendering only)
        drawMinElongationRange: Real = "8",
        /// max elongation of the colour range (rendering only)
        drawMaxElongationRange: Real = "15",
        /// size of the drawn springs (rendering only)
        drawSpringSize: Real = "8",
    },
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
        /// topology whose elements become springs (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct MeshSpringForceField {
    inner: SpringForceField,
}

impl MeshSpringForceField {
    pub fn new(layout: Layout) -> MeshSpringForceField {
        MeshSpringForceField { inner: SpringForceField::new(layout) }
    }

    /// The generated springs, in creation order.
    pub fn springs(&self) -> &[LinearSpring] {
        self.inner.springs()
    }

    /// The springs' force field (Jacobians of the last `addForce`).
    pub fn spring_force_field(&self) -> &SpringForceField {
        &self.inner
    }
}

fn bound(x: f64) -> Option<usize> {
    (x >= 0.0).then_some(x as usize)
}

impl Component for MeshSpringForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let layout = cx.entry().layout.unwrap_or(Layout::Vec3);
        let d = cx.data();
        if !d.get(SpringData::SPRINGS_INDICES1).is_empty() || !d.get(SpringData::SPRINGS_INDICES2).is_empty() {
            cx.warn("springs given through indices1/indices2 are ignored (disabled in SOFA since v24.12): the springs come from the mesh");
        }
        let (s1, s2) = sff::resolve_pair(cx, layout)?;
        let d = cx.data();
        let rayleigh = d.get(SpringData::RAYLEIGH_STIFFNESS);
        let coeffs = |k, c| KindCoefficients { stiffness: d.get(k), damping: d.get(c) };
        let range = d.get(Self::LOCAL_RANGE);
        let params = MeshSpringParams {
            lines: coeffs(Self::LINES_STIFFNESS, Self::LINES_DAMPING),
            triangles: coeffs(Self::TRIANGLES_STIFFNESS, Self::TRIANGLES_DAMPING),
            quads: coeffs(Self::QUADS_STIFFNESS, Self::QUADS_DAMPING),
            tetrahedra: coeffs(Self::TETRAHEDRA_STIFFNESS, Self::TETRAHEDRA_DAMPING),
            cubes: coeffs(Self::CUBES_STIFFNESS, Self::CUBES_DAMPING),
            no_compression: d.get(Self::NO_COMPRESSION),
            local_range: [bound(range.first().copied().unwrap_or(-1.0)), bound(range.get(1).copied().unwrap_or(-1.0))],
        };
        let springs = if s1 == s2 {
            let mesh = cx.require_mesh()?;
            let rest = cx.rest_or_position(s1);
            let cs = layout.coord_size();
            let n = rest.len() / cs;
            let all = mesh.edges.iter().flatten().chain(mesh.triangles.iter().flatten()).chain(mesh.quads.iter().flatten());
            let all = all.chain(mesh.tetrahedra.iter().flatten()).chain(mesh.hexahedra.iter().flatten());
            if let Some(&p) = all.into_iter().find(|&&p| p >= n) {
                return Err(cx
                    .error(format!("the topology refers to point {p} but the mechanical state has {n} DOFs"))
                    .hint("the topology and the mechanical state must describe the same points"));
            }
            mesh_springs(&mesh, &params, &|i| rest[i * cs..(i + 1) * cs].to_vec())
        } else {
            cx.warn("object1 and object2 are different states: no springs are generated");
            Vec::new()
        };
        sff::write_spring_data(cx.data_mut(), &springs);
        self.inner = SpringForceField::from_springs(layout, s1, s2, springs, rayleigh);
        Ok(())
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.inner.bwd_init(cx)
    }
}

crate::spring_force_field::inner_springs_force_field!(MeshSpringForceField);

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    use super::MeshSpringForceField;
    use crate::test_support::*;

    fn grid_scene(ff: &[(&str, &str)]) -> (Scene, settee_core::ComponentId) {
        let (f, mut s) = state_scene(&[]);
        add(&mut s, &f, Scene::ROOT, "RegularGridTopology", &[("n", "2 2 2"), ("min", "0 0 0"), ("max", "1 1 1")]);
        let c = add(&mut s, &f, Scene::ROOT, "MeshSpringForceField", ff);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    /// On a 2×2×2 grid (8 points `x + 2y + 4z`, 6 quads, 12 triangles, 18 edges including one
    /// diagonal per face), `stiffness` sets every element kind: the 18 edges first (in the
    /// topology's edge order and orientation), then the other diagonal of each quad, then the 4
    /// body diagonals of the hexahedron; the triangles bring nothing new.
    #[test]
    fn springs_of_a_2x2x2_grid_in_sofa_order() {
        let (s, c) = grid_scene(&[("stiffness", "300"), ("damping", "2")]);
        let ff = s.get::<MeshSpringForceField>(c).unwrap();
        let pairs: Vec<(usize, usize)> = ff.springs().iter().map(|p| (p.m1, p.m2)).collect();
        let expected = [
            // edges, from the triangles (t1,t2), (t2,t0), (t0,t1) of each quad in turn
            (1, 3),
            (3, 0),
            (0, 1),
            (3, 2),
            (2, 0),
            (5, 7),
            (7, 4),
            (4, 5),
            (7, 6),
            (6, 4),
            (1, 5),
            (5, 0),
            (4, 0),
            (3, 7),
            (7, 2),
            (6, 2),
            (6, 0),
            (7, 1),
            // quads (0 1 3 2) (4 5 7 6) (0 1 5 4) (2 3 7 6) (0 2 6 4) (1 3 7 5): their (q1, q2) diagonal
            (1, 2),
            (5, 6),
            (1, 4),
            (3, 6),
            (2, 4),
            (3, 5),
            // hexahedron (0 1 3 2 4 5 7 6): the body diagonals, in (k, j > k) order
            (0, 7),
            (1, 6),
            (3, 4),
            (2, 5),
        ];
        assert_eq!(pairs, expected);
        let (r2, r3) = (2f64.sqrt(), 3f64.sqrt());
        for (i, sp) in ff.springs().iter().enumerate() {
            let l = match i {
                1 | 6 | 11 | 14 | 16 | 17 | 18..=23 => r2,
                24..=27 => r3,
                _ => 1.0,
            };
            assert!((sp.initpos - l).abs() < 1e-15, "spring {i}: {sp:?}");
            assert_eq!(sp.ks, 300.0 / sp.initpos);
            assert_eq!(sp.kd, 2.0 / sp.initpos);
            assert!(!sp.elongation_only && sp.enabled);
        }
        // The SpringForceField outputs describe the generated springs.
        assert_eq!(s.entry(c).data.reals("spring").len(), 28 * 5);
        assert_eq!(&s.entry(c).data.indices("springsIndices1")[..3], &[1, 3, 0]);
    }

    #[test]
    fn kinds_are_selected_by_their_coefficients() {
        // Cubes only: the 28 corner pairs of the hexahedron in (k, j > k) order.
        let (s, c) = grid_scene(&[("cubesStiffness", "10"), ("noCompression", "1")]);
        let ff = s.get::<MeshSpringForceField>(c).unwrap();
        let h = [0, 1, 3, 2, 4, 5, 7, 6];
        let mut expected = Vec::new();
        for k in 0..8 {
            for j in k + 1..8 {
                expected.push((h[k], h[j]));
            }
        }
        let pairs: Vec<(usize, usize)> = ff.springs().iter().map(|p| (p.m1, p.m2)).collect();
        assert_eq!(pairs, expected);
        assert!(ff.springs().iter().all(|p| p.elongation_only && p.kd == 0.0));
        // A damping alone activates a kind; the lines then come first.
        let (s, c) = grid_scene(&[("linesDamping", "1"), ("quadsStiffness", "5")]);
        let ff = s.get::<MeshSpringForceField>(c).unwrap();
        assert_eq!(ff.springs().len(), 24);
        assert_eq!((ff.springs()[0].ks, ff.springs()[0].kd), (0.0, 1.0));
        assert_eq!((ff.springs()[18].m1, ff.springs()[18].m2, ff.springs()[18].kd), (1, 2, 0.0));
        // localRange: an end below min, or both ends above max, drop the spring.
        let (s, c) = grid_scene(&[("stiffness", "1"), ("localRange", "1 5")]);
        let ff = s.get::<MeshSpringForceField>(c).unwrap();
        assert!(ff.springs().iter().all(|p| p.m1 >= 1 && p.m2 >= 1 && (p.m1 <= 5 || p.m2 <= 5)));
        assert!(ff.springs().iter().any(|p| p.m1 > 5 || p.m2 > 5));
        assert_eq!(ff.springs().len(), 28 - 7 - 1);
    }

    #[test]
    fn tetrahedra_springs_have_consistent_derivatives() {
        // Rest: a cube corner split in tetrahedra; positions: perturbed.
        let (f, mut s) = state_scene(&[
            ("rest_position", "0 0 0  1 0 0  0 1 0  0 0 1  1 1 1"),
            ("position", "0.1 0 -0.05  1.2 0.1 0  -0.1 0.9 0.2  0.05 0.1 1.3  1.1 0.8 1.2"),
        ]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("tetrahedra", "0 1 2 3  1 2 3 4")]);
        let c = add(&mut s, &f, Scene::ROOT, "MeshSpringForceField", &[("tetrahedraStiffness", "50"), ("linesStiffness", "0")]);
        init_root(&mut s, &f).unwrap();
        let ff = s.get::<MeshSpringForceField>(c).unwrap();
        let pairs: Vec<(usize, usize)> = ff.springs().iter().map(|p| (p.m1, p.m2)).collect();
        assert_eq!(pairs, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (1, 4), (2, 4), (3, 4)]);
        assert!((ff.springs()[8].initpos - 2f64.sqrt()).abs() < 1e-15);
        let dx = random_vec(15, 11);
        check_fd(&mut s, &dx, 1e-6, 1e-6);
        check_matrix(&mut s, &dx);
        // One hand-checked force: spring 0 between 0 and 1 alone would give F = ks·(d − L)·û.
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        assert!(max_abs(&fv) > 1.0);
        let total: [f64; 3] = [0, 1, 2].map(|c| (0..5).map(|i| fv[3 * i + c]).sum());
        assert!(max_abs(&total) < 1e-12, "internal forces sum to zero: {total:?}");
    }
}
