//! `RegularGridSpringForceField`: SpringForceField's explicit springs plus springs along the lines,
//! face diagonals and cell diagonals of a `RegularGridTopology` (forcefields-mappings spec §2.3).
//!
//! The grid is the first topology object of the state's node (else of its ancestors) and must be a
//! `RegularGridTopology`; otherwise only the explicit springs act. With `p(x,y,z) = x + nx(y + ny·z)`
//! and the cell vectors `dx, dy, dz`, the grid springs come after the explicit ones in this order:
//! lines along x, y, z; face diagonals of the xy, xz and yz faces (two per face); the four body
//! diagonals of each cell. Each spring has rest length `L` from the cell vectors and stiffness and
//! damping divided by `L`; the second yz diagonal divides by the first yz diagonal's length
//! (a SOFA quirk, harmless on axis-aligned grids). SOFA regenerates the grid springs in every
//! `addForce`; they never change, so they are built once here.
//!
//! As in SOFA, the assembled stiffness contains the **explicit springs only**: SOFA's matrix
//! assembly is SpringForceField's, which iterates over the stored springs, while the grid springs
//! only take part in `addForce`/`addDForce`. Assembled solvers therefore see no grid stiffness.

use settee_core::component::ForceField;
use settee_core::role::{self, Interaction, MechanicalState};
use settee_core::{component, data_group, Component, ComponentId, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimResult, StateId};

use crate::kernel::{SpringKernel, SPRING_MIN_LENGTH};
use crate::spring_force_field::{LinearSpring, SpringData, SpringForceField};

/// The Data of the `RegularGridTopology` read here, as settee-topology declares them (this crate
/// does not depend on it; the tests check these references against that class). Included in no
/// class of this crate.
#[data_group(data = {
    /// grid resolution: number of points per axis (attributes nx ny nz set it when all three are given)
    n: Fixed(3) as Reals = "2 2 2",
    /// min end of the diagonal (attributes xmin ymin zmin xmax ymax zmax set min and max when all six are given)
    min: Fixed(3) = "0 0 0",
    /// max end of the diagonal
    max: Fixed(3) = "1 1 1",
    /// if non-zero: size of the cells; the resolution becomes ceil((max-min)/cellWidth)+1 at init
    cellWidth: Real = "0",
})]
struct RegularGridTopologyData;

/// Resolution and cell vectors of a regular grid (`d[a]` is the step along axis `a`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridCells {
    pub n: [usize; 3],
    pub d: [f64; 3],
}

/// Stiffness and damping of the three spring families.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridSpringCoefficients {
    pub lines: (f64, f64),
    pub quads: (f64, f64),
    pub cubes: (f64, f64),
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn add3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// The grid springs in SOFA's order.
pub fn grid_springs(g: &GridCells, c: &GridSpringCoefficients) -> Vec<LinearSpring> {
    let [nx, ny, nz] = g.n;
    let p = |x: usize, y: usize, z: usize| x + nx * (y + ny * z);
    let dx = [g.d[0], 0.0, 0.0];
    let dy = [0.0, g.d[1], 0.0];
    let dz = [0.0, 0.0, g.d[2]];
    let active = |k: (f64, f64)| k.0 != 0.0 || k.1 != 0.0;
    let spring = |m1, m2, (ks, kd): (f64, f64), l: f64, div: f64| LinearSpring::new(m1, m2, ks / div, kd / div, l);
    let mut out = Vec::new();
    let (cx, cy, cz) = (nx.saturating_sub(1), ny.saturating_sub(1), nz.saturating_sub(1));
    if active(c.lines) {
        let l = norm(dx);
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..cx {
                    out.push(spring(p(x, y, z), p(x + 1, y, z), c.lines, l, l));
                }
            }
        }
        let l = norm(dy);
        for z in 0..nz {
            for y in 0..cy {
                for x in 0..nx {
                    out.push(spring(p(x, y, z), p(x, y + 1, z), c.lines, l, l));
                }
            }
        }
        let l = norm(dz);
        for z in 0..cz {
            for y in 0..ny {
                for x in 0..nx {
                    out.push(spring(p(x, y, z), p(x, y, z + 1), c.lines, l, l));
                }
            }
        }
    }
    if active(c.quads) {
        let (l1, l2) = (norm(add3(dx, dy)), norm(sub3(dx, dy)));
        for z in 0..nz {
            for y in 0..cy {
                for x in 0..cx {
                    out.push(spring(p(x, y, z), p(x + 1, y + 1, z), c.quads, l1, l1));
                    out.push(spring(p(x + 1, y, z), p(x, y + 1, z), c.quads, l2, l2));
                }
            }
        }
        let (l1, l2) = (norm(add3(dx, dz)), norm(sub3(dx, dz)));
        for z in 0..cz {
            for y in 0..ny {
                for x in 0..cx {
                    out.push(spring(p(x, y, z), p(x + 1, y, z + 1), c.quads, l1, l1));
                    out.push(spring(p(x + 1, y, z), p(x, y, z + 1), c.quads, l2, l2));
                }
            }
        }
        let (l1, l2) = (norm(add3(dy, dz)), norm(sub3(dy, dz)));
        for z in 0..cz {
            for y in 0..cy {
                for x in 0..nx {
                    out.push(spring(p(x, y, z), p(x, y + 1, z + 1), c.quads, l1, l1));
                    // SOFA divides this one by the first diagonal's length.
                    out.push(spring(p(x, y + 1, z), p(x, y, z + 1), c.quads, l2, l1));
                }
            }
        }
    }
    if active(c.cubes) {
        let neg = |v: [f64; 3]| [-v[0], -v[1], -v[2]];
        let l1 = norm(add3(add3(dx, dy), dz));
        let l2 = norm(add3(add3(neg(dx), dy), dz));
        let l3 = norm(add3(sub3(dx, dy), dz));
        let l4 = norm(sub3(add3(dx, dy), dz));
        for z in 0..cz {
            for y in 0..cy {
                for x in 0..cx {
                    out.push(spring(p(x, y, z), p(x + 1, y + 1, z + 1), c.cubes, l1, l1));
                    out.push(spring(p(x + 1, y, z), p(x, y + 1, z + 1), c.cubes, l2, l2));
                    out.push(spring(p(x, y + 1, z), p(x + 1, y, z + 1), c.cubes, l3, l3));
                    out.push(spring(p(x, y, z + 1), p(x + 1, y + 1, z), c.cubes, l4, l4));
                }
            }
        }
    }
    out
}

/// The cells of a `RegularGridTopology` component, from its Data as they stand after its init
/// (`n`, `min`, `max`): `d[a] = (max − min)[a]/(n[a] − 1)`, or `(max − min)[a]` when `n[a] = 1`.
/// A grid sized by `cellWidth` keeps the step of its parse-time resolution, which its Data no
/// longer show: such grids are refused.
fn grid_cells(cx: &InitCtx, topo: ComponentId) -> SimResult<GridCells> {
    let d = &cx.scene.entry(topo).data;
    if d.get(RegularGridTopologyData::CELL_WIDTH) != 0.0 {
        return Err(cx
            .error("RegularGridSpringForceField on a RegularGridTopology sized by `cellWidth` is not supported yet")
            .hint("give the grid's resolution with `n` (or nx ny nz) instead of cellWidth"));
    }
    let nr = d.get(RegularGridTopologyData::N);
    let n = [0, 1, 2].map(|a| nr.get(a).copied().unwrap_or(2.0).max(1.0) as usize);
    let (min, max) = (d.get(RegularGridTopologyData::MIN), d.get(RegularGridTopologyData::MAX));
    let mut step = [0.0; 3];
    for a in 0..3 {
        let cells = n[a] as i64 - 1;
        step[a] = if cells > 0 { (max[a] - min[a]) / cells as f64 } else { max[a] - min[a] };
    }
    Ok(GridCells { n, d: step })
}

/// Springs along the lines, face diagonals and cell diagonals of a regular grid, plus explicit springs.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    markers = [Interaction],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d"],
    template_rule = FromPair,
    create = |args| RegularGridSpringForceField::new(args.layout.unwrap_or(Layout::Vec3)),
    inherit = [SpringData, Self],
    data = {
        /// stiffness of the springs along the grid lines (divided by their length)
        #[alias("stiffness")]
        linesStiffness: Real = "100",
        /// damping of the springs along the grid lines (divided by their length)
        #[alias("damping")]
        linesDamping: Real = "5",
        /// stiffness of the face-diagonal springs (divided by their length)
        #[alias("stiffness")]
        quadsStiffness: Real = "100",
        /// damping of the face-diagonal springs (divided by their length)
        #[alias("damping")]
        quadsDamping: Real = "5",
        /// stiffness of the cell-diagonal springs (divided by their length)
        #[alias("stiffness")]
        cubesStiffness: Real = "100",
        /// damping of the cell-diagonal springs (divided by their length)
        #[alias("damping")]
        cubesDamping: Real = "5",
    },
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
    },
)]
#[derive(Clone)]
pub struct RegularGridSpringForceField {
    /// The explicit springs (SpringForceField's Data).
    inner: SpringForceField,
    kernel: SpringKernel,
    grid: Vec<LinearSpring>,
    /// Jacobians of the grid springs, as of the last `addForce`.
    dfdx: Vec<f64>,
    cells: Option<GridCells>,
}

impl RegularGridSpringForceField {
    pub fn new(layout: Layout) -> RegularGridSpringForceField {
        RegularGridSpringForceField {
            inner: SpringForceField::new(layout),
            kernel: SpringKernel::new(layout, SPRING_MIN_LENGTH),
            grid: Vec::new(),
            dfdx: Vec::new(),
            cells: None,
        }
    }

    /// The explicit springs.
    pub fn explicit_springs(&self) -> &[LinearSpring] {
        self.inner.springs()
    }

    /// The grid springs, in SOFA's order (after the explicit springs).
    pub fn grid_springs(&self) -> &[LinearSpring] {
        &self.grid
    }

    /// The grid found at init.
    pub fn cells(&self) -> Option<GridCells> {
        self.cells
    }

    fn single_state(&self) -> Option<StateId> {
        match self.inner.state_ids() {
            Some((a, b)) if a == b => Some(a),
            _ => None,
        }
    }
}

impl Component for RegularGridSpringForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.inner.init(cx)?;
        self.grid.clear();
        self.cells = None;
        let Some(s) = self.single_state() else { return Ok(()) };
        // SOFA's `mstate->getContext()->getMeshTopology()`: the first topology object of the
        // state's node, else of its ancestors.
        let state_comp = cx.link_targets("object1").first().copied().or_else(|| cx.scene.context_state(cx.node()));
        let Some(state_node) = state_comp.map(|c| cx.scene.entry(c).node) else { return Ok(()) };
        let Some(topo) = cx.scene.find_up(state_node, role::TOPOLOGY) else {
            cx.warn("no topology found: only the explicit springs act");
            return Ok(());
        };
        if cx.scene.entry(topo).class.name != "RegularGridTopology" {
            let msg =
                format!("the state's topology is a {}, not a RegularGridTopology: only the explicit springs act", cx.scene.entry(topo).class.name);
            cx.warn(msg);
            return Ok(());
        }
        let cells = grid_cells(cx, topo)?;
        let npoints = cells.n[0] * cells.n[1] * cells.n[2];
        if npoints > cx.state_size(s) {
            return Err(cx
                .error(format!("the grid has {npoints} points but the mechanical state has {} DOFs", cx.state_size(s)))
                .hint("the MechanicalObject must take its positions from the RegularGridTopology"));
        }
        let d = cx.data();
        let coeffs = GridSpringCoefficients {
            lines: (d.get(Self::LINES_STIFFNESS), d.get(Self::LINES_DAMPING)),
            quads: (d.get(Self::QUADS_STIFFNESS), d.get(Self::QUADS_DAMPING)),
            cubes: (d.get(Self::CUBES_STIFFNESS), d.get(Self::CUBES_DAMPING)),
        };
        self.grid = grid_springs(&cells, &coeffs);
        self.dfdx = vec![0.0; self.grid.len() * self.kernel.nn()];
        self.cells = Some(cells);
        Ok(())
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.inner.bwd_init(cx)
    }
}

impl ForceField for RegularGridSpringForceField {
    fn states(&self) -> settee_core::StateSet {
        self.inner.states()
    }

    /// The explicit springs, then the grid springs.
    fn add_force(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
        self.inner.add_force(p, io)?;
        if self.grid.is_empty() {
            return Ok(());
        }
        let kernel = self.kernel;
        kernel.check_bounds(&self.grid, io.x[0].len() / kernel.cs, io.x[0].len() / kernel.cs)?;
        for (s, m) in self.grid.iter().zip(self.dfdx.chunks_exact_mut(kernel.nn())) {
            kernel.add_force(io, 0, s, m);
        }
        Ok(())
    }

    fn add_dforce(&mut self, p: &MechParams, io: &mut ForceIo, k_factor: f64, b_factor: f64) -> SimResult {
        self.inner.add_dforce(p, io, k_factor, b_factor)?;
        let kernel = self.kernel;
        kernel.add_dforce_all(io, 0, &self.grid, &self.dfdx, k_factor);
        Ok(())
    }

    /// The explicit springs only (see the module documentation).
    fn add_k_to_matrix(&self, p: &MechParams, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        self.inner.add_k_to_matrix(p, m, k_factor)
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.inner.rayleigh_stiffness()
    }
}

#[cfg(test)]
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    use super::RegularGridSpringForceField;

    /// The grid's Data read here are declared by RegularGridTopology, with these kinds and
    /// defaults, and read with these types.
    #[test]
    fn grid_references_match_the_regular_grid_class() {
        use super::RegularGridTopologyData as G;
        use settee_core::data::{DataSet, TemplateArity};
        use settee_core::{DataGroup, Declared};
        let class = settee_topology::GridTopology::CLASSES.iter().find(|c| c.name == "RegularGridTopology").expect("RegularGridTopology");
        let decls: Vec<_> = class.data.iter().flat_map(|t| t.iter()).collect();
        for r in <G as DataGroup>::TABLE {
            let d = decls.iter().find(|d| d.name == r.name).unwrap_or_else(|| panic!("RegularGridTopology has no Data '{}'", r.name));
            assert_eq!((d.kind, d.default), (r.kind, r.default), "{}", r.name);
        }
        // The typed references accept the class's Data (a reference of the wrong type panics).
        let d = DataSet::from_decls(class.data, TemplateArity::SCALAR);
        assert_eq!(d.get(G::CELL_WIDTH), 0.0);
        assert_eq!(d.get(G::N), &[2.0, 2.0, 2.0]);
        assert_eq!((d.get(G::MIN), d.get(G::MAX)), ([0.0; 3], [1.0; 3]));
    }
    use crate::test_support::*;

    const PERTURBED: &str = "0.1 0 0  2.1 0.1 -0.1  -0.1 1.2 0  2 0.9 0.1  0 0.1 1.1  1.9 0 0.9  0.2 1 1.2  2.2 1.1 0.8";

    fn scene(position: Option<&str>, ff: &[(&str, &str)]) -> (Scene, settee_core::ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        let mo: Vec<(&str, &str)> = position.map(|p| vec![("position", p)]).unwrap_or_default();
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &mo);
        add(&mut s, &f, Scene::ROOT, "RegularGridTopology", &[("n", "2 2 2"), ("min", "0 0 0"), ("max", "2 1 1")]);
        let c = add(&mut s, &f, Scene::ROOT, "RegularGridSpringForceField", ff);
        init_root(&mut s, &f).unwrap();
        (s, c)
    }

    #[test]
    fn grid_springs_in_sofa_order() {
        let (s, c) = scene(None, &[("linesStiffness", "100"), ("quadsStiffness", "50"), ("cubesStiffness", "30"), ("damping", "4")]);
        let ff = s.get::<RegularGridSpringForceField>(c).unwrap();
        let cells = ff.cells().unwrap();
        assert_eq!((cells.n, cells.d), ([2, 2, 2], [2.0, 1.0, 1.0]));
        let pairs: Vec<(usize, usize)> = ff.grid_springs().iter().map(|p| (p.m1, p.m2)).collect();
        let expected = [
            // lines along x, y, z
            (0, 1),
            (2, 3),
            (4, 5),
            (6, 7),
            (0, 2),
            (1, 3),
            (4, 6),
            (5, 7),
            (0, 4),
            (1, 5),
            (2, 6),
            (3, 7),
            // xy faces (z = 0, 1), xz faces (y = 0, 1), yz faces (x = 0, 1): two diagonals each
            (0, 3),
            (1, 2),
            (4, 7),
            (5, 6),
            (0, 5),
            (1, 4),
            (2, 7),
            (3, 6),
            (0, 6),
            (2, 4),
            (1, 7),
            (3, 5),
            // the four cell diagonals
            (0, 7),
            (1, 6),
            (2, 5),
            (4, 3),
        ];
        assert_eq!(pairs, expected);
        let (r5, r2, r6) = (5f64.sqrt(), 2f64.sqrt(), 6f64.sqrt());
        let lengths = [2.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, r5, r5, r5, r5, r5, r5, r5, r5, r2, r2, r2, r2, r6, r6, r6, r6];
        let k = |i: usize| {
            if i < 12 {
                100.0
            } else if i < 24 {
                50.0
            } else {
                30.0
            }
        };
        for (i, sp) in ff.grid_springs().iter().enumerate() {
            assert!((sp.initpos - lengths[i]).abs() < 1e-15, "spring {i}: {sp:?}");
            assert_eq!((sp.ks, sp.kd), (k(i) / sp.initpos, 4.0 / sp.initpos), "spring {i}");
        }
        // At rest: no force.
        let mut s = s;
        let scope = MechScope::build(&s, Scene::ROOT);
        assert!(max_abs(&forces(&mut s, &scope)) < 1e-12);
    }

    #[test]
    fn a_zero_family_is_skipped_and_explicit_springs_come_first() {
        let (s, c) =
            scene(None, &[("linesStiffness", "0"), ("linesDamping", "0"), ("cubesStiffness", "0"), ("cubesDamping", "0"), ("spring", "0 7 10 0 1")]);
        let ff = s.get::<RegularGridSpringForceField>(c).unwrap();
        assert_eq!(ff.grid_springs().len(), 12);
        assert_eq!((ff.grid_springs()[0].m1, ff.grid_springs()[0].m2), (0, 3));
        assert_eq!(ff.explicit_springs().len(), 1);
    }

    #[test]
    fn derivatives_and_the_explicit_only_matrix() {
        let (mut s, _) = scene(Some(PERTURBED), &[("stiffness", "100"), ("damping", "0")]);
        let dx = random_vec(24, 5);
        let df = check_fd(&mut s, &dx, 1e-6, 1e-6);
        // SOFA assembles the explicit springs only: none here.
        let scope = MechScope::build(&s, Scene::ROOT);
        let k = assembled(&mut s, &scope, 1.0, 0.0);
        assert!(k.values().iter().all(|v| *v == 0.0));
        assert!(max_abs(&df) > 1.0);

        // With an explicit spring, the matrix is that spring's: compare with a SpringForceField.
        let (mut a, _) = scene(Some(PERTURBED), &[("stiffness", "100"), ("damping", "0"), ("spring", "0 7 10 0 1")]);
        check_fd(&mut a, &dx, 1e-6, 1e-6);
        let scope = MechScope::build(&a, Scene::ROOT);
        let kdx = mul(&assembled(&mut a, &scope, 1.0, 0.0), &dx);
        let f = factory();
        let mut b = Scene::new("root");
        add(&mut b, &f, Scene::ROOT, "MechanicalObject", &[("position", PERTURBED)]);
        add(&mut b, &f, Scene::ROOT, "SpringForceField", &[("spring", "0 7 10 0 1")]);
        init_root(&mut b, &f).unwrap();
        let scope_b = MechScope::build(&b, Scene::ROOT);
        forces(&mut b, &scope_b);
        let expected = dforce(&mut b, &scope_b, &dx, 1.0);
        assert!(max_abs(&expected) > 1.0);
        assert_close(&kdx, &expected, 1e-12);
    }

    #[test]
    fn other_topologies_give_explicit_springs_only() {
        let (f, mut s) = state_scene(&[("position", "0 0 0  1 0 0  0 1 0")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 2")]);
        let c = add(&mut s, &f, Scene::ROOT, "RegularGridSpringForceField", &[("spring", "0 1 10 0 2")]);
        init_root(&mut s, &f).unwrap();
        let ff = s.get::<RegularGridSpringForceField>(c).unwrap();
        assert!(ff.grid_springs().is_empty() && ff.cells().is_none());
        let scope = MechScope::build(&s, Scene::ROOT);
        let fv = forces(&mut s, &scope);
        assert_close(&fv, &[-10.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-14);
    }
}
