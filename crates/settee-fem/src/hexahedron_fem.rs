//! `HexahedronFEMForceField`: corotational (`large`, `polar`) or linear (`small`) elasticity on
//! the hexahedra of the topology, with the element kernel of [`crate::hexa`].
//!
//! Element work runs in parallel, but every result is accumulated sequentially in element order
//! (corner order inside an element), exactly as SOFA's loop does, so the bits of the forces do not
//! depend on the number of threads.

use rayon::prelude::*;

use settee_core::data::Value;
use settee_core::role::Topology;
use settee_core::{
    component, data_group, Component, ForceField, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId,
};

use crate::hexa::{
    element_dforce, element_force, element_force_updating_stiffness, element_stiffness_blocks, HexaElementRest, HexaMaterial, HexaMethod, Mat3, Vec3,
};
use crate::tetra_common::parallel_loop;

/// [`parallel_loop`] threshold for hexahedra (24×24 element products).
pub(crate) const HEXA_PARALLEL_MIN: usize = 256;

/// One element of the zipped per-element loops: rest data, rotation, output slot, node indices.
type ForceItem<'a> = (((&'a HexaElementRest, &'a mut Mat3), &'a mut [Vec3; 8]), &'a [usize; 8]);
type DForceItem<'a> = (((&'a HexaElementRest, &'a Mat3), &'a mut [Vec3; 8]), &'a [usize; 8]);

/// The Data of `HexahedronFEMForceField`, which `HexahedronFEMForceFieldAndMass` has too (its
/// `init` runs this one's, which reads and writes them).
#[data_group(data = {
    /// Young's modulus, per element (element i uses entry i when present, else entry 0)
    youngModulus: Reals = "5000",
    /// Poisson's ratio in [0, 0.5), per element like youngModulus
    poissonRatio: Reals = "0.45",
    /// "large" (corotational, mean-edge frame), "polar" (polar decomposition) or "small" (linear)
    method: Options("large", "polar", "small") = "large",
    /// recompute each element stiffness from its deformed, rotated shape at every force evaluation
    updateStiffnessMatrix: Bool = "false",
    /// GPU only: number of DOFs accumulated per thread (unused)
    gatherPt: Str,
    /// GPU only: block size of the gather operation (unused)
    gatherBsize: Str,
    /// draw the force field (rendering only)
    drawing: Bool = "true",
    /// shrink factor of the drawn hexahedra (rendering only)
    drawPercentageOffset: Real = "0.15",
    /// output: the 24×24 stiffness matrix of each element (row-major)
    stiffnessMatrices: RealTuples(576),
    /// output: the rest positions used at init
    initialPoints: Coords,
    /// Rayleigh damping coefficient related to stiffness (> 0)
    rayleighStiffness: Real = "0",
})]
pub struct HexahedronFemData;

/// Linear elasticity on hexahedra, with corotational (large/polar) or small displacements.
///
/// The force field.
#[component(
    roles = [ForceField],
    templates = ["Vec3d"],
    default_template = "Vec3d",
    template_rule = FromState,
    inherit = [HexahedronFemData],
    links = {
        /// topology whose hexahedra are the elements (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Default)]
pub struct HexahedronFEMForceField {
    state: Option<StateId>,
    /// Number of DOFs of the state at init (every element index is below it).
    nb_dofs: usize,
    elements: Vec<[usize; 8]>,
    rests: Vec<HexaElementRest>,
    /// Element rotations of the last `add_force` (initial rotations before the first one).
    rotations: Vec<Mat3>,
    update_stiffness: bool,
    rayleigh_stiffness: f64,
    /// Per-element results, scattered sequentially afterwards.
    scratch: Vec<[Vec3; 8]>,
}

impl HexahedronFEMForceField {
    pub fn elements(&self) -> &[[usize; 8]] {
        &self.elements
    }

    pub fn element_rests(&self) -> &[HexaElementRest] {
        &self.rests
    }

    pub fn rotations(&self) -> &[Mat3] {
        &self.rotations
    }

    fn check_len(&self, what: &str, v: &[f64]) -> SimResult {
        if v.len() < 3 * self.nb_dofs {
            return Err(SimError::new(format!("{what} has {} values but the force field was initialised for {} DOFs", v.len(), self.nb_dofs))
                .hint("the mechanical state was resized after init, which this force field does not follow"));
        }
        Ok(())
    }
}

/// Corner positions of element `e` read from a flat Vec3 vector.
#[inline]
fn gather(x: &[f64], e: &[usize; 8]) -> [Vec3; 8] {
    e.map(|i| [x[3 * i], x[3 * i + 1], x[3 * i + 2]])
}

/// `out[3i+c] += f[w][c]` for every corner, element by element.
#[inline]
fn scatter(out: &mut [f64], elements: &[[usize; 8]], forces: &[[Vec3; 8]]) {
    for (e, fe) in elements.iter().zip(forces) {
        for (&i, fw) in e.iter().zip(fe) {
            let o = &mut out[3 * i..3 * i + 3];
            o[0] += fw[0];
            o[1] += fw[1];
            o[2] += fw[2];
        }
    }
}

/// Young's modulus or Poisson's ratio of element `i`: entry `i` if present, else entry 0.
fn per_element(v: &[f64], i: usize, default: f64) -> f64 {
    v.get(i).or(v.first()).copied().unwrap_or(default)
}

impl Component for HexahedronFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        if cx.state_layout(s) != Layout::Vec3 {
            return Err(cx
                .error(format!("the mechanical state has template {}, but this force field needs Vec3d", cx.state_layout(s).name()))
                .hint("attach the force field to a Vec3d MechanicalObject (use a mapping for rigid frames)"));
        }
        let mesh = cx.require_mesh()?;
        if mesh.hexahedra.is_empty() {
            return Err(cx
                .error("the topology has no hexahedra")
                .hint("use a topology with hexahedra (RegularGridTopology, SparseGridTopology, a MeshTopology with `hexahedra`), or a TetrahedronFEMForceField for tetrahedra"));
        }
        let n = cx.state_size(s);
        if let Some((k, h)) = mesh.hexahedra.iter().enumerate().find(|(_, h)| h.iter().any(|&i| i >= n)) {
            return Err(cx
                .error(format!("hexahedron {k} {h:?} refers to a point beyond the {n} DOFs of the mechanical state"))
                .hint("the topology and the MechanicalObject must describe the same points"));
        }
        let rest = cx.rest_or_position(s);
        if rest.len() < 3 * n {
            return Err(cx.error(format!("the mechanical state has {} rest coordinates for {n} DOFs", rest.len() / 3)));
        }

        let d = cx.data();
        let young = d.get(HexahedronFemData::YOUNG_MODULUS).to_vec();
        let poisson = d.get(HexahedronFemData::POISSON_RATIO).to_vec();
        let method = HexaMethod::from_sofa_name(d.get(HexahedronFemData::METHOD));
        self.update_stiffness = d.get(HexahedronFemData::UPDATE_STIFFNESS_MATRIX);
        self.rayleigh_stiffness = d.get(HexahedronFemData::RAYLEIGH_STIFFNESS);
        if young.is_empty() {
            cx.warn("youngModulus is empty: using 5000");
        }
        if poisson.is_empty() {
            cx.warn("poissonRatio is empty: using 0.45");
        }
        if young.iter().any(|&e| e < 0.0) {
            cx.warn("negative youngModulus replaced by 5000");
        }
        if poisson.iter().any(|&p| !(0.0..0.5).contains(&p)) {
            cx.warn("poissonRatio outside [0, 0.5) replaced by 0.45");
        }

        // A sparse grid weights each cell by the fraction of it inside the object; SOFA scales the
        // element stiffness by that coefficient (1 for any other topology).
        let coefs = sparse_grid_coefs(cx, "stiffnessCoefs", mesh.hexahedra.len())?;
        let mut rests = Vec::with_capacity(mesh.hexahedra.len());
        for (i, h) in mesh.hexahedra.iter().enumerate() {
            let material =
                HexaMaterial::new(per_element(&young, i, HexaMaterial::DEFAULT_YOUNG), per_element(&poisson, i, HexaMaterial::DEFAULT_POISSON))
                    .validated();
            let factor = coefs.as_ref().map_or(1.0, |c| c[i]);
            let r = HexaElementRest::with_stiffness_factor(method, material, &gather(&rest, h), factor).map_err(|e| {
                cx.error(format!("hexahedron {i} {h:?}: {e}"))
                    .hint("the element is flat or inverted in the rest configuration; check the corner order (bottom face counter-clockwise, then top face)")
            })?;
            rests.push(r);
        }

        self.state = Some(s);
        self.nb_dofs = n;
        self.rotations = rests.iter().map(|r| *r.initial_rotation()).collect();
        self.elements = mesh.hexahedra;
        self.rests = rests;
        self.scratch = vec![[[0.0; 3]; 8]; self.elements.len()];

        let ks: Vec<f64> = self.rests.iter().flat_map(|r| r.stiffness().iter().flatten().copied()).collect();
        let d = cx.data_mut();
        d.put(HexahedronFemData::STIFFNESS_MATRICES, ks);
        d.put(HexahedronFemData::INITIAL_POINTS, rest[..3 * n].to_vec());
        Ok(())
    }
}

/// The per-hexahedron coefficients of the topology when it is a sparse grid (its `stiffnessCoefs`
/// or `massCoefs` output: the fraction of each cell inside the object), `None` for other
/// topologies.
pub(crate) fn sparse_grid_coefs(cx: &InitCtx, name: &str, nb_hexahedra: usize) -> SimResult<Option<Vec<f64>>> {
    let Some(t) = cx.topology() else {
        return Ok(None);
    };
    let entry = cx.scene.entry(t);
    if !entry.class.name.starts_with("SparseGrid") {
        return Ok(None);
    }
    let Some(field) = entry.data.index_of(name) else {
        return Ok(None);
    };
    let coefs = match cx.scene.read_data(t, field) {
        Value::Reals { v, .. } => v,
        _ => return Ok(None),
    };
    if coefs.len() != nb_hexahedra {
        return Err(cx.error(format!("the sparse grid gives {} {name} for {nb_hexahedra} hexahedra", coefs.len())));
    }
    Ok(Some(coefs))
}

impl ForceField for HexahedronFEMForceField {
    fn states(&self) -> Vec<StateId> {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let (Some(x), Some(f)) = (io.x.first().copied(), io.f.first_mut()) else {
            return Err(SimError::new("no vectors lent to the force field"));
        };
        self.check_len("the position vector", x)?;
        self.check_len("the force vector", f)?;
        let elements = &self.elements;
        if self.update_stiffness {
            self.rests
                .par_iter_mut()
                .zip(self.rotations.par_iter_mut())
                .zip(self.scratch.par_iter_mut())
                .zip(elements.par_iter())
                .try_for_each(|(((rest, rot), out), e)| -> Result<(), crate::hexa::HexaError> {
                    *out = element_force_updating_stiffness(rest, &gather(x, e), rot)?;
                    Ok(())
                })
                .map_err(|e| {
                    SimError::new(format!("updating an element stiffness: {e}")).hint("an element is flat or inverted in the current configuration")
                })?;
        } else {
            let body = |(((rest, rot), out), e): ForceItem| *out = element_force(rest, &gather(x, e), rot);
            if parallel_loop(elements.len(), HEXA_PARALLEL_MIN) {
                self.rests.par_iter().zip(self.rotations.par_iter_mut()).zip(self.scratch.par_iter_mut()).zip(elements.par_iter()).for_each(body);
            } else {
                self.rests.iter().zip(self.rotations.iter_mut()).zip(self.scratch.iter_mut()).zip(elements.iter()).for_each(body);
            }
        }
        scatter(f, elements, &self.scratch);
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let (Some(dx), Some(df)) = (io.x.first().copied(), io.f.first_mut()) else {
            return Err(SimError::new("no vectors lent to the force field"));
        };
        self.check_len("the displacement vector", dx)?;
        self.check_len("the force-differential vector", df)?;
        let elements = &self.elements;
        let body = |(((rest, rot), out), e): DForceItem| *out = element_dforce(rest, rot, &gather(dx, e), k_factor);
        if parallel_loop(elements.len(), HEXA_PARALLEL_MIN) {
            self.rests.par_iter().zip(self.rotations.par_iter()).zip(self.scratch.par_iter_mut()).zip(elements.par_iter()).for_each(body);
        } else {
            self.rests.iter().zip(self.rotations.iter()).zip(self.scratch.iter_mut()).zip(elements.iter()).for_each(body);
        }
        scatter(df, elements, &self.scratch);
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        let block = |(rest, rot): (&HexaElementRest, &Mat3)| element_stiffness_blocks(rest, rot, k_factor);
        let blocks: Vec<[[Mat3; 8]; 8]> = if parallel_loop(self.rests.len(), HEXA_PARALLEL_MIN) {
            self.rests.par_iter().zip(self.rotations.par_iter()).map(block).collect()
        } else {
            self.rests.iter().zip(self.rotations.iter()).map(block).collect()
        };
        for (e, b) in self.elements.iter().zip(&blocks) {
            for (a, &na) in e.iter().enumerate() {
                for (c, &nc) in e.iter().enumerate() {
                    m.add_block3(s, na, s, nc, &b[a][c]);
                }
            }
        }
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use settee_core::mechanics::{assemble, MechScope};
    use settee_core::{Attr, ComponentId, Factory, Mbk, Scene, VecId};
    use settee_linalg::MatrixBuilder;

    fn attrs(pairs: &[(&str, &str)]) -> Vec<Attr> {
        pairs.iter().map(|(n, v)| Attr { name: n.to_string(), value: v.to_string(), pos: None }).collect()
    }

    fn init_scene(scene: &mut Scene) -> SimResult {
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

    struct Setup {
        scene: Scene,
        ff: ComponentId,
        rest: Vec<f64>,
    }

    fn setup(grid: &[(&str, &str)], ff_attrs: &[(&str, &str)]) -> SimResult<Setup> {
        let mut f = Factory::new();
        crate::register(&mut f);
        settee_topology::register(&mut f);
        settee_statecontainer::register(&mut f);
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        let mo = f.create(&mut scene, Scene::ROOT, "MechanicalObject", None, attrs(&[("name", "dofs")]), None, dir).unwrap();
        f.create(&mut scene, Scene::ROOT, "RegularGridTopology", None, attrs(grid), None, dir).unwrap();
        let ff = f.create(&mut scene, Scene::ROOT, "HexahedronFEMForceField", None, attrs(ff_attrs), None, dir).unwrap();
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        init_scene(&mut scene)?;
        let s = scene.state_of(mo).unwrap();
        let rest = scene.store.get(s).read(VecId::REST_POSITION).to_vec();
        Ok(Setup { scene, ff, rest })
    }

    const FEMBAR_GRID: &[(&str, &str)] =
        &[("nx", "4"), ("ny", "4"), ("nz", "20"), ("xmin", "-9"), ("xmax", "-6"), ("ymin", "0"), ("ymax", "3"), ("zmin", "0"), ("zmax", "19")];

    fn params() -> MechParams {
        MechParams { dt: 0.01, time: 0.0, gravity: [0.0, -9.81, 0.0] }
    }

    fn ff(scene: &mut Scene, id: ComponentId) -> &mut HexahedronFEMForceField {
        scene.components[id].obj.as_mut().unwrap().as_any_mut().downcast_mut().unwrap()
    }

    fn force(ffc: &mut HexahedronFEMForceField, x: &[f64]) -> Vec<f64> {
        let mut f = vec![0.0; x.len()];
        let mut io = ForceIo { f: vec![f.as_mut_slice()], x: vec![x], v: vec![x] };
        ffc.add_force(&params(), &mut io).unwrap();
        f
    }

    fn dforce(ffc: &mut HexahedronFEMForceField, dx: &[f64], k: f64) -> Vec<f64> {
        let mut df = vec![0.0; dx.len()];
        let mut io = ForceIo { f: vec![df.as_mut_slice()], x: vec![dx], v: vec![] };
        ffc.add_dforce(&params(), &mut io, k, 0.0).unwrap();
        df
    }

    /// Deterministic pseudo-random perturbation in [-a, a].
    fn perturb(x: &[f64], a: f64, seed: u64) -> Vec<f64> {
        let mut s = seed;
        x.iter()
            .map(|v| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                v + a * (((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0)
            })
            .collect()
    }

    #[test]
    fn zero_force_at_rest() {
        for method in ["large", "polar", "small"] {
            let mut st = setup(FEMBAR_GRID, &[("youngModulus", "4000"), ("poissonRatio", "0.3"), ("method", method)]).unwrap();
            let rest = st.rest.clone();
            let c = ff(&mut st.scene, st.ff);
            assert_eq!(c.elements().len(), 171);
            let f = force(c, &rest);
            assert!(f.iter().all(|&v| v == 0.0), "{method}");
        }
    }

    #[test]
    fn dforce_equals_assembled_matrix_times_dx() {
        for (method, update) in [("large", "0"), ("polar", "0"), ("small", "0"), ("large", "1")] {
            let mut st = setup(
                FEMBAR_GRID,
                &[
                    ("youngModulus", "4000"),
                    ("poissonRatio", "0.3"),
                    ("method", method),
                    ("updateStiffnessMatrix", update),
                    ("rayleighStiffness", "0.1"),
                ],
            )
            .unwrap();
            let x = perturb(&st.rest, 0.2, 7);
            let dx = perturb(&vec![0.0; x.len()], 1.0, 11);
            let k = -1.7;
            let (df, rs) = {
                let c = ff(&mut st.scene, st.ff);
                let _ = force(c, &x);
                (dforce(c, &dx, k), c.rayleigh_stiffness())
            };
            assert_eq!(rs, 0.1);
            let scope = MechScope::build(&st.scene, Scene::ROOT);
            let mut b = MatrixBuilder::new(scope.size);
            assemble(&mut st.scene, &scope, Mbk { m: 0.0, b: 0.0, k }, &mut b).unwrap();
            let mut kdx = vec![0.0; dx.len()];
            b.matrix().mul_vec(&dx, &mut kdx).unwrap();
            let scale = df.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(scale > 1.0);
            for (i, (a, b)) in df.iter().zip(&kdx).enumerate() {
                assert!((a - b).abs() <= 1e-12 * scale, "{method} row {i}: {a} vs {b}");
            }
            assert!(b.matrix().is_symmetric(1e-9 * scale));
        }
    }

    /// Uniaxial stress σxx = E·ε on a 2×1×1 block: the x-faces carry ∓E·ε·area, every other
    /// node force vanishes.
    #[test]
    fn uniaxial_stretch_gives_hooke_forces() {
        let (e, nu, eps) = (1000.0, 0.3, 1e-4);
        for method in ["large", "polar", "small"] {
            let mut st = setup(
                &[("n", "5 3 3"), ("min", "0 0 0"), ("max", "2 1 1")],
                &[("youngModulus", "1000"), ("poissonRatio", "0.3"), ("method", method)],
            )
            .unwrap();
            let x: Vec<f64> = st.rest.chunks(3).flat_map(|p| [p[0] * (1.0 + eps), p[1] * (1.0 - nu * eps), p[2] * (1.0 - nu * eps)]).collect();
            let f = force(ff(&mut st.scene, st.ff), &x);
            let mut right = [0.0; 3];
            let mut left = [0.0; 3];
            for (p, fp) in st.rest.chunks(3).zip(f.chunks(3)) {
                let side = if p[0] == 2.0 {
                    &mut right
                } else if p[0] == 0.0 {
                    &mut left
                } else {
                    &mut [0.0; 3]
                };
                for c in 0..3 {
                    side[c] += fp[c];
                }
                if p[0] > 0.0 && p[0] < 2.0 {
                    // interior x-layers are in equilibrium along x
                    assert!(fp[0].abs() < 1e-12, "{method} {p:?}: {fp:?}");
                }
                // no lateral stress: y and z forces vanish everywhere
                assert!(fp[1].abs() < 1e-12 && fp[2].abs() < 1e-12, "{method} {p:?}: {fp:?}");
            }
            assert!((right[0] + e * eps).abs() < 1e-10, "{method}: {right:?}");
            assert!((left[0] - e * eps).abs() < 1e-10, "{method}: {left:?}");
        }
    }

    /// 1 and 4 threads give the same bits for the force and its differential. The FEMBAR beam
    /// widened to 5×5 nodes has 4×4×19 = 304 hexahedra, above the 256 from which the element loops
    /// run on rayon's pool; the test checks that both loops took that branch.
    #[test]
    fn results_do_not_depend_on_thread_count() {
        let grid: &[(&str, &str)] =
            &[("nx", "5"), ("ny", "5"), ("nz", "20"), ("xmin", "-9"), ("xmax", "-6"), ("ymin", "0"), ("ymax", "3"), ("zmin", "0"), ("zmax", "19")];
        let mut st = setup(grid, &[("youngModulus", "4000"), ("poissonRatio", "0.3")]).unwrap();
        let x = perturb(&st.rest, 0.3, 3);
        let dx = perturb(&vec![0.0; x.len()], 1.0, 5);
        let c = ff(&mut st.scene, st.ff);
        assert!(c.elements.len() >= HEXA_PARALLEL_MIN, "{} hexahedra", c.elements.len());
        let run = |c: &mut HexahedronFEMForceField, threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let before = crate::element_loop_counts();
                let out = (bits(&force(c, &x)), bits(&dforce(c, &dx, 0.37)));
                let after = crate::element_loop_counts();
                (out, (after.0 - before.0, after.1 - before.1))
            })
        };
        let (one, loops1) = run(c, 1);
        let (four, loops4) = run(c, 4);
        assert_eq!(loops1, (2, 0), "one thread: (loops, parallel)");
        assert_eq!(loops4, (2, 2), "four threads: (loops, parallel)");
        assert_eq!(one, four);
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn mesh_without_hexahedra_is_an_error() {
        let mut f = Factory::new();
        crate::register(&mut f);
        settee_topology::register(&mut f);
        settee_statecontainer::register(&mut f);
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        f.create(
            &mut scene,
            Scene::ROOT,
            "MeshTopology",
            None,
            attrs(&[("position", "0 0 0 1 0 0 0 1 0 0 0 1"), ("tetrahedra", "0 1 2 3")]),
            None,
            dir,
        )
        .unwrap();
        f.create(&mut scene, Scene::ROOT, "MechanicalObject", None, attrs(&[]), None, dir).unwrap();
        f.create(&mut scene, Scene::ROOT, "HexahedronFEMForceField", None, attrs(&[]), None, dir).unwrap();
        let e = init_scene(&mut scene).unwrap_err();
        assert!(e.to_string().contains("no hexahedra") && e.diagnostic().hint.is_some(), "{e}");

        // and a flat element
        let e = setup(&[("n", "2 2 2"), ("min", "0 0 0"), ("max", "1 1 0")], &[]).err().unwrap();
        assert!(e.to_string().contains("singular"), "{e}");
    }
}
