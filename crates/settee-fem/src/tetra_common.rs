//! What `TetrahedronFEMForceField` and `TetrahedralCorotationalFEMForceField` share: the
//! per-element state, element-parallel force / differential / matrix loops with sequential
//! accumulation in element order, and the checks of their inputs.

use rayon::prelude::*;

use settee_core::data_ref::{DataRef, Reals};
use settee_core::{data_group, ComponentId, InitCtx, MatrixAccumulator, Scene, SimResult, StateId};

use crate::common::{add_element_blocks, check_len, gather, scatter};
use crate::hexa::{Mat3, Vec3};
use crate::tetra::{
    element_dforce4, element_force, element_stiffness_blocks, PackedDforce4, TetraElementRest, TetraError, TetraMethod, TetraOptions, Voigt,
    DEFAULT_POISSON, DEFAULT_YOUNG, DFORCE_LANES,
};

/// Smallest element count for which the per-step element loops of the FEM force fields run on
/// rayon's pool. Below it, handing the loop to the pool (wake the workers, wait for them) costs
/// more than the loop itself, so it runs on the calling thread. Either way every element writes
/// its own slot and the slots are accumulated sequentially in element order: the same bits.
pub(crate) fn parallel_loop(elements: usize, min_elements: usize) -> bool {
    let parallel = elements >= min_elements && rayon::current_num_threads() > 1;
    LOOP_COUNTS.with(|c| {
        let (decided, taken) = c.get();
        c.set((decided + 1, taken + usize::from(parallel)));
    });
    parallel
}

thread_local! {
    /// Per thread: element loops that went through [`parallel_loop`], and how many of them took
    /// the parallel branch.
    static LOOP_COUNTS: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// Test instrumentation: `(loops, parallel)` — how many element loops of the FEM force fields
/// decided between the sequential and the parallel branch on the calling thread since it started,
/// and how many took the parallel one. Thread-count tests read it before and after their run (inside
/// `ThreadPool::install`, where the loops are started) to prove the parallel path was exercised.
#[doc(hidden)]
pub fn element_loop_counts() -> (usize, usize) {
    LOOP_COUNTS.with(|c| c.get())
}

/// [`parallel_loop`] threshold for tetrahedra (a cheap element: 12×12 products).
pub(crate) const TETRA_PARALLEL_MIN: usize = 2048;

/// Per-element state.
#[derive(Clone, Debug)]
pub(crate) struct Element {
    pub rest: TetraElementRest,
    /// Rotation of the last `add_force` (world → element), initially `R0`.
    pub rotation: Mat3,
    pub plastic: Voigt,
    /// Absolute rest volume (for material updates).
    pub volume: f64,
}

/// The element loops of a tetrahedral force field.
#[derive(Clone, Default)]
pub(crate) struct TetraEngine {
    pub state: Option<StateId>,
    pub nb_dofs: usize,
    pub tetrahedra: Vec<[usize; 4]>,
    pub elements: Vec<Element>,
    pub opts: TetraOptions,
    /// Per-element results of the last loop, scattered sequentially afterwards.
    forces: Vec<Option<[Vec3; 4]>>,
    dforces: Vec<[Vec3; 4]>,
    /// What `dforce` reads of the elements, packed by groups of [`DFORCE_LANES`] (the last
    /// group padded with empty lanes).
    packed: Vec<PackedDforce4>,
    /// The elements changed since `packed` was written (a force computation, a rebuild, a
    /// topology change, new materials).
    packed_stale: bool,
    /// The element stiffness blocks of the last parallel assembly, kept for their memory
    /// (assembly takes `&self`).
    blocks: settee_core::scratch::CopiedMutex<Vec<[[Mat3; 4]; 4]>>,
}

/// Young's modulus or Poisson's ratio of element `i`: entry `i` if present, else entry 0.
pub(crate) fn per_element(v: &[f64], i: usize, default: f64) -> f64 {
    v.get(i).or(v.first()).copied().unwrap_or(default)
}

/// SOFA's `localStiffnessFactor[i*M/N]` (1 when the list is empty).
pub(crate) fn local_factor(lsf: &[f64], i: usize, n: usize) -> f64 {
    if lsf.is_empty() || n == 0 {
        1.0
    } else {
        lsf[i * lsf.len() / n]
    }
}

/// Young's modulus and Poisson's ratio per element: the first Data of the elastic force fields of
/// this crate (SOFA's `BaseLinearElasticityFEMForceField`), read by [`material_lists`].
#[data_group(data = {
    /// Young's modulus, per element (element i uses entry i when present, else entry 0)
    youngModulus: Reals = "5000",
    /// Poisson's ratio in [0, 0.5), per element like youngModulus
    poissonRatio: Reals = "0.45",
})]
pub struct ElasticData;

/// Reads `youngModulus` / `poissonRatio` with SOFA's validation (empty → default, negative
/// Young's modulus → 5000, Poisson's ratio outside `[0, 0.5)` → 0.45), warning as SOFA does.
pub(crate) fn material_lists(cx: &mut InitCtx, young_modulus: DataRef<Reals>, poisson_ratio: DataRef<Reals>) -> (Vec<f64>, Vec<f64>) {
    let d = cx.data();
    let mut young = d.get(young_modulus).to_vec();
    let mut poisson = d.get(poisson_ratio).to_vec();
    if young.is_empty() {
        cx.warn("youngModulus is empty: using 5000");
        young.push(DEFAULT_YOUNG);
    }
    if poisson.is_empty() {
        cx.warn("poissonRatio is empty: using 0.45");
        poisson.push(DEFAULT_POISSON);
    }
    if young.iter().any(|&y| y < 0.0) {
        cx.warn("Young's modulus must be positive: negative values replaced by 5000");
        for y in young.iter_mut().filter(|y| **y < 0.0) {
            *y = DEFAULT_YOUNG;
        }
    }
    if poisson.iter().any(|&p| !(0.0..0.5).contains(&p)) {
        cx.warn("Poisson's ratio must be in [0, 0.5): out-of-range values replaced by 0.45");
        for p in poisson.iter_mut().filter(|p| !(0.0..0.5).contains(*p)) {
            *p = DEFAULT_POISSON;
        }
    }
    (young, poisson)
}

/// The Data this crate reads from a grid topology: its points per axis. The grid classes of
/// settee-topology (which this crate's library does not depend on) declare it; this is the same
/// declaration, giving the typed reference `GridData::N`, and the crate's tests check it against
/// the grid classes.
#[data_group(data = {
    /// grid resolution: number of points per axis (attributes nx ny nz set it when all three are given)
    n: Fixed(3) as Reals = "2 2 2",
})]
pub(crate) struct GridData;

/// The number of cells along x and y of a grid topology (`GridTopology` and its subclasses), or
/// SOFA's fallback `(2, 1)` for other topologies.
pub(crate) fn grid_cells(scene: &Scene, topology: Option<ComponentId>) -> (usize, usize) {
    let Some(t) = topology else { return (2, 1) };
    let e = scene.entry(t);
    if !matches!(e.class.name, "GridTopology" | "RegularGridTopology" | "CylinderGridTopology" | "SphereGridTopology") {
        return (2, 1);
    }
    let n = e.data.get(GridData::N);
    let nx = n.first().copied().unwrap_or(2.0) as usize;
    let ny = n.get(1).copied().unwrap_or(2.0) as usize;
    (nx.saturating_sub(1), ny.saturating_sub(1))
}

impl TetraEngine {
    /// Builds the elements from the rest positions `rest` (flat Vec3).
    #[allow(clippy::too_many_arguments)] // the inputs of SOFA's reinit, all needed
    pub fn build(
        &mut self,
        state: StateId,
        nb_dofs: usize,
        tetrahedra: Vec<[usize; 4]>,
        rest: &[f64],
        young: &[f64],
        poisson: &[f64],
        lsf: &[f64],
        opts: TetraOptions,
    ) -> Result<(), (usize, TetraError)> {
        let n = tetrahedra.len();
        let elements: Result<Vec<Element>, (usize, TetraError)> = tetrahedra
            .par_iter()
            .enumerate()
            .map(|(i, t)| {
                let x0 = gather(rest, t);
                let e = local_factor(lsf, i, n) * per_element(young, i, DEFAULT_YOUNG);
                let nu = per_element(poisson, i, DEFAULT_POISSON);
                let r = TetraElementRest::new(opts.method, e, nu, &x0).map_err(|err| (i, err))?;
                let volume = crate::tetra::tetra_volume(x0[0], x0[1], x0[2], x0[3]);
                Ok(Element { rotation: *r.initial_rotation(), rest: r, plastic: [0.0; 6], volume })
            })
            .collect();
        self.elements = elements?;
        self.state = Some(state);
        self.nb_dofs = nb_dofs;
        self.tetrahedra = tetrahedra;
        self.opts = opts;
        self.forces = vec![None; n];
        self.dforces = vec![[[0.0; 3]; 4]; n];
        self.packed_stale = true;
        Ok(())
    }

    /// Follows a container's change log (SOFA's `TetrahedronData` with the force field's
    /// `createTetrahedronInformation`): removed elements leave by swap-with-last, created ones are
    /// computed as at init from the rest positions `rest`, with the material of their (final)
    /// index and `localStiffnessFactor[i·M/N]` for the final count `N`. `tetrahedra` is the
    /// container's list after the changes and `nb_dofs` the state's size. Returns the index and
    /// cause of a failure; the engine is then left aligned with the container but unusable.
    #[allow(clippy::too_many_arguments)] // the inputs of SOFA's creation callback, all needed
    pub fn follow(
        &mut self,
        changes: &[settee_core::topology_change::TopologyChange],
        tetrahedra: &[[usize; 4]],
        nb_dofs: usize,
        rest: impl FnOnce() -> Vec<f64>,
        young: &[f64],
        poisson: &[f64],
        lsf: &[f64],
    ) -> Result<(), String> {
        use settee_core::topology_change::{ElementData, ElementKind, TopologyChange};
        let opts = self.opts;
        // A well-shaped element stands for the created ones until they are computed.
        let unit = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let r = TetraElementRest::new(opts.method, 1.0, 0.3, &unit).map_err(|e| format!("{e}"))?;
        let placeholder = Element { rotation: *r.initial_rotation(), rest: r, plastic: [0.0; 6], volume: 0.0 };
        let mut data = ElementData::new(ElementKind::Tetrahedron, std::mem::take(&mut self.elements));
        let created = crate::follow::apply_deferred(&mut data, changes, placeholder);
        self.elements = std::mem::take(data.values_mut());
        let created = created.map_err(|e| e.0)?;
        // The vertex lists follow the tetrahedron events from their payloads, so a removal costs
        // what it removes; renamed points are only known from the container's final lists.
        if changes.iter().any(|c| c.kind() == ElementKind::Point) {
            self.tetrahedra = tetrahedra.to_vec();
        } else {
            let mut own = ElementData::new(ElementKind::Tetrahedron, std::mem::take(&mut self.tetrahedra));
            for c in changes.iter().filter(|c| c.kind() == ElementKind::Tetrahedron) {
                let vertices = match c {
                    TopologyChange::Added { elements, .. } => elements.clone(),
                    _ => Vec::new(),
                };
                own.apply(std::slice::from_ref(c), |e| {
                    let k = e.index - e.values.len();
                    vertices.get(k).and_then(|v| <[usize; 4]>::try_from(v.as_slice()).ok()).unwrap_or([usize::MAX; 4])
                })
                .map_err(|e| e.0)?;
            }
            self.tetrahedra = std::mem::take(own.values_mut());
        }
        if self.elements.len() != tetrahedra.len() || self.tetrahedra.len() != tetrahedra.len() {
            return Err(format!("{} tetrahedron data for {} tetrahedra in the topology", self.elements.len(), tetrahedra.len()));
        }
        let n = tetrahedra.len();
        if !created.is_empty() {
            let rest = rest();
            for i in created {
                let t = &tetrahedra[i];
                if self.tetrahedra[i] != *t {
                    self.tetrahedra[i] = *t;
                }
                if let Some(&bad) = t.iter().find(|&&v| 3 * v + 3 > rest.len()) {
                    return Err(format!("created tetrahedron {i} {t:?} refers to point {bad} beyond the {} rest positions", rest.len() / 3));
                }
                let x0 = gather(&rest, t);
                let e = local_factor(lsf, i, n) * per_element(young, i, DEFAULT_YOUNG);
                let nu = per_element(poisson, i, DEFAULT_POISSON);
                let r = TetraElementRest::new(opts.method, e, nu, &x0).map_err(|err| format!("created tetrahedron {i} {t:?}: {err}"))?;
                let volume = crate::tetra::tetra_volume(x0[0], x0[1], x0[2], x0[3]);
                self.elements[i] = Element { rotation: *r.initial_rotation(), rest: r, plastic: [0.0; 6], volume };
            }
        }
        debug_assert_eq!(self.tetrahedra, tetrahedra, "the payloads lead to the container's lists");
        self.nb_dofs = nb_dofs;
        // Per-element scratch, fully written by every force computation.
        self.forces.resize(n, None);
        self.dforces.resize(n, [[0.0; 3]; 4]);
        self.packed_stale = true;
        Ok(())
    }

    /// Recomputes the material matrices from new `young` / `poisson` lists (SOFA's
    /// `updateStiffness`).
    pub fn update_materials(&mut self, young: &[f64], poisson: &[f64], lsf: &[f64]) {
        let n = self.elements.len();
        self.elements.par_iter_mut().enumerate().for_each(|(i, el)| {
            let e = local_factor(lsf, i, n) * per_element(young, i, DEFAULT_YOUNG);
            let nu = per_element(poisson, i, DEFAULT_POISSON);
            el.rest.set_material(crate::tetra::material_stiffness(e, nu, el.volume));
        });
        self.packed_stale = true;
    }

    pub fn force(&mut self, x: &[f64], f: &mut [f64]) -> SimResult {
        check_len("the position vector", x, self.nb_dofs)?;
        check_len("the force vector", f, self.nb_dofs)?;
        let opts = self.opts;
        let body = |((el, out), t): ((&mut Element, &mut Option<[Vec3; 4]>), &[usize; 4])| {
            *out = element_force(&mut el.rest, &opts, &gather(x, t), &mut el.plastic, &mut el.rotation);
        };
        if parallel_loop(self.elements.len(), TETRA_PARALLEL_MIN) {
            self.elements.par_iter_mut().zip(self.forces.par_iter_mut()).zip(self.tetrahedra.par_iter()).for_each(body);
        } else {
            self.elements.iter_mut().zip(self.forces.iter_mut()).zip(self.tetrahedra.iter()).for_each(body);
        }
        self.packed_stale = true;
        scatter(f, self.tetrahedra.iter().zip(&self.forces).filter_map(|(t, fe)| fe.as_ref().map(|fe| (t, fe))));
        Ok(())
    }

    /// Rewrites the packed groups when the elements changed since they were written.
    fn refresh_packed(&mut self) {
        let groups = self.elements.len().div_ceil(DFORCE_LANES);
        if !self.packed_stale && self.packed.len() == groups {
            return;
        }
        self.packed.resize(groups, PackedDforce4::default());
        let pack = |(group, els): (&mut PackedDforce4, &[Element])| {
            *group = PackedDforce4::default();
            for (l, el) in els.iter().enumerate() {
                group.set_lane(l, &el.rest, &el.rotation);
            }
        };
        if parallel_loop(self.elements.len(), TETRA_PARALLEL_MIN) {
            self.packed.par_iter_mut().zip(self.elements.par_chunks(DFORCE_LANES)).for_each(pack);
        } else {
            self.packed.iter_mut().zip(self.elements.chunks(DFORCE_LANES)).for_each(pack);
        }
        self.packed_stale = false;
    }

    pub fn dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64, _b_factor: f64) -> SimResult {
        check_len("the displacement vector", dx, self.nb_dofs)?;
        check_len("the force-differential vector", df, self.nb_dofs)?;
        self.refresh_packed();
        let small = self.opts.method == TetraMethod::Small;
        // The four elements of a group, their displacements lane by lane.
        let group_dforce = |p: &PackedDforce4, tets: &[[usize; 4]]| {
            let mut d = [[[0.0; DFORCE_LANES]; 3]; 4];
            for (l, t) in tets.iter().enumerate() {
                for (n, &v) in t.iter().enumerate() {
                    for c in 0..3 {
                        d[n][c][l] = dx[3 * v + c];
                    }
                }
            }
            element_dforce4(p, &d, k_factor, small)
        };
        let lane = |g: &[[[f64; DFORCE_LANES]; 3]; 4], l: usize| -> [Vec3; 4] { std::array::from_fn(|n| [g[n][0][l], g[n][1][l], g[n][2][l]]) };
        if parallel_loop(self.elements.len(), TETRA_PARALLEL_MIN) {
            self.packed.par_iter().zip(self.dforces.par_chunks_mut(DFORCE_LANES)).zip(self.tetrahedra.par_chunks(DFORCE_LANES)).for_each(
                |((p, out), tets)| {
                    let g = group_dforce(p, tets);
                    for (l, o) in out.iter_mut().enumerate() {
                        *o = lane(&g, l);
                    }
                },
            );
            scatter(df, self.tetrahedra.iter().zip(&self.dforces));
        } else {
            // Group by group, each element's result added at once: the additions into `df` come
            // in element order, as through the per-element buffer.
            for (p, tets) in self.packed.iter().zip(self.tetrahedra.chunks(DFORCE_LANES)) {
                let g = group_dforce(p, tets);
                for (l, t) in tets.iter().enumerate() {
                    scatter(df, [(t, &lane(&g, l))]);
                }
            }
        }
        Ok(())
    }

    pub fn k_matrix(&self, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        let block = |el: &Element| element_stiffness_blocks(&el.rest, &el.rotation, k_factor);
        if parallel_loop(self.elements.len(), TETRA_PARALLEL_MIN) {
            // The blocks are computed in parallel, then added in element order; their buffer
            // is kept (about 1 kB per element, every step).
            let mut blocks = self.blocks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            self.elements.par_iter().map(block).collect_into_vec(&mut blocks);
            for (t, b) in self.tetrahedra.iter().zip(blocks.iter()) {
                add_element_blocks(m, s, t, |a, c| &b[a][c]);
            }
        } else {
            for (t, el) in self.tetrahedra.iter().zip(&self.elements) {
                let b = block(el);
                add_element_blocks(m, s, t, |a, c| &b[a][c]);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grid's Data this crate reads are declared by the grid classes, with the same kind
    /// (so the typed reference reads them), and read through the reference on a grid.
    #[test]
    fn grid_reference_matches_the_grid_classes() {
        use settee_core::data::DataGroup;
        let mut f = settee_core::Factory::new();
        settee_topology::register(&mut f);
        let ours = GridData::TABLE.iter().find(|d| d.name == GridData::N.name()).expect("declared here");
        for name in ["GridTopology", "RegularGridTopology"] {
            let class = f.class(name).unwrap_or_else(|| panic!("{name} is not registered"));
            let theirs = class.data.iter().flat_map(|t| t.iter()).find(|d| d.name == ours.name).unwrap_or_else(|| panic!("{name} has no Data 'n'"));
            assert_eq!(theirs.kind, ours.kind, "{name}");
            assert_eq!(theirs.default, ours.default, "{name}");
        }
        let mut scene = Scene::new("root");
        let grid = settee_core::testing::add(&mut scene, &f, Scene::ROOT, "RegularGridTopology", &[("n", "3 4 5")]);
        assert_eq!(scene.entry(grid).data.get(GridData::N), &[3.0, 4.0, 5.0]);
        assert_eq!(grid_cells(&scene, Some(grid)), (2, 3));
    }
}
