//! `TetrahedronFEMForceField`: linear elasticity on tetrahedra, `small`, corotational `large`,
//! `polar` or `svd`, with optional plasticity and SOFA's "assembled" code path
//! (`computeGlobalMatrix`), on the element kernel of [`crate::tetra`].
//!
//! Elements are the tetrahedra of the topology; a topology with hexahedra and no tetrahedra is
//! split on the fly into 6 tetrahedra per hexahedron ([`crate::tetra::split_hexahedra`]).
//! Element work runs in parallel; results are accumulated sequentially in element order, as
//! SOFA's loop does, so the bits of the forces do not depend on the number of threads.

use settee_core::role::Topology;
use settee_core::{Component, ComponentId, InitCtx, Scene, SimResult};

use crate::common::{check_elements, force_field_on_one_state, rest_positions, vec3_state};
use crate::decompose::mat_t_mul;
use crate::hexa::{polar_decomposition, Mat3};
use crate::tetra::{split_hexahedra, LargeStiffnessUpdate, Plasticity, TetraMethod, TetraOptions};
use crate::tetra_common::{grid_cells, material_lists, ElasticData, TetraEngine};

crate::common::force_field_class! {
    {
    module = "Sofa.Component.SolidMechanics.FEM.Elastic",
        data = {
            /// "small", "large" (frame of the first three nodes), "polar" or "svd" displacements (anything else: large)
            method: Str = "large",
            /// output: the rest positions used at init (always the state's rest positions, as SOFA)
            initialPoints: Coords,
            /// per-element factor on Young's modulus: with N elements and M values, element i uses entry i*M/N
            localStiffnessFactor: Reals,
            /// large/polar/svd: rebuild the strain-displacement matrix from the deformed element at every force evaluation
            updateStiffnessMatrix: Bool = "false",
            /// SOFA's assembled code path (small/large; polar and svd then add no force)
            #[alias("assembling")]
            computeGlobalMatrix: Bool = "false",
            /// plasticity: maximum norm of the plastic strain (plasticity disabled when <= 0)
            plasticMaxThreshold: Real = "0",
            /// plasticity: yield threshold on the norm of the (unnormalised) elastic strain (SOFA's default 0.0001f)
            plasticYieldThreshold: Real = "9.99999974737875e-05",
            /// plasticity: creep factor in [0, 1] (SOFA's default 0.9f; depends on dt)
            plasticCreep: Real = "0.8999999761581421",
            /// GPU only: number of DOFs accumulated per thread (unused)
            gatherPt: Str,
            /// GPU only: block size of the gather operation (unused)
            gatherBsize: Str,
            /// draw heterogeneous tetrahedra in different colours (rendering only)
            drawHeterogeneousTetra: Bool = "false",
            /// von Mises stress diagnostics: 0 none, 1 corotational strain, 2 Green strain (no effect on the dynamics; not computed here)
            computeVonMisesStress: Int = "0",
            /// output: von Mises stress per element (not computed)
            vonMisesPerElement: Reals,
            /// output: von Mises stress per node (not computed)
            vonMisesPerNode: Reals,
            /// output: colours of the von Mises stress (rendering only)
            vonMisesStressColors: RealTuples(4),
            /// colour map of the stress display (rendering only)
            showStressColorMap: Str = "Blue to Red",
            /// alpha of the stress display (rendering only)
            showStressAlpha: Real = "1",
            /// draw von Mises stress per node (rendering only)
            showVonMisesStressPerNode: Bool = "false",
            /// draw elements coloured by nodal von Mises stress (rendering only)
            showVonMisesStressPerNodeColorMap: Bool = "false",
            /// draw elements coloured by their von Mises stress (rendering only)
            showVonMisesStressPerElement: Bool = "false",
            /// gap between drawn elements in [0, 1] (rendering only)
            showElementGapScale: Real = "0.333",
            /// recompute the material matrices from youngModulus/poissonRatio at the beginning of every step
            updateStiffness: Bool = "false",
            /// Rayleigh damping coefficient related to stiffness (> 0)
            rayleighStiffness: Real = "0",
        },
        links = {
            /// topology whose tetrahedra (or hexahedra, split in 6) are the elements (default: the context topology)
            topology: Topology,
        },
        inherit = [ElasticData, Self],
    }
    /// Linear elasticity on tetrahedra, with small displacements or corotational (large/polar/svd) methods and optional plasticity.
    ///
    /// The force field.
    #[derive(Clone, Default)]
    pub struct TetrahedronFEMForceField {
        engine: TetraEngine,
        rayleigh_stiffness: f64,
        /// `updateStiffness`: material matrices recomputed at each step.
        update_materials: bool,
        /// Elements around each node (ascending element index) when the elements are the
        /// topology's tetrahedra (SOFA's `getTetrahedraAroundVertex`); empty for split hexahedra.
        around_node: Vec<Vec<usize>>,
        /// Last element index touching each node at init (SOFA's `_rotationIdx`).
        rotation_idx: Vec<usize>,
    }
}

impl TetrahedronFEMForceField {
    /// The element list (topology tetrahedra, or the split hexahedra).
    pub fn tetrahedra(&self) -> &[[usize; 4]] {
        &self.engine.tetrahedra
    }

    pub fn method(&self) -> TetraMethod {
        self.engine.opts.method
    }

    pub fn options(&self) -> &TetraOptions {
        &self.engine.opts
    }

    /// Rest data of element `i`.
    pub fn element_rest(&self, i: usize) -> &crate::tetra::TetraElementRest {
        &self.engine.elements[i].rest
    }

    /// Current rotation (world → element frame) of element `i`: the one computed by the last
    /// `add_force` (`R0` before the first one; identity for `small`).
    pub fn element_rotation(&self, i: usize) -> &Mat3 {
        &self.engine.elements[i].rotation
    }

    /// The plastic strain of element `i` (unnormalised Voigt vector).
    pub fn plastic_strain(&self, i: usize) -> &[f64; 6] {
        &self.engine.elements[i].plastic
    }

    /// SOFA's `getRotation(node)`: the mean over the elements around the node of
    /// `Rtᵢ·R0ᵢ` (current rotation composed with the inverse initial one, SOFA's storage
    /// convention), re-orthogonalised by polar decomposition; identity for `small`. Nodes
    /// without element in the topology use the last element that touched them at init.
    pub fn node_rotation(&self, node: usize) -> Mat3 {
        const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        if self.engine.opts.method == TetraMethod::Small {
            return IDENTITY;
        }
        // SOFA's rotations[i] is Rᵢᵀ and _initialRotations[i] is R0ᵢᵀ: the product is Rᵢᵀ·R0ᵢ.
        let term = |i: usize| {
            let el = &self.engine.elements[i];
            mat_t_mul(&el.rotation, el.rest.initial_rotation())
        };
        let around = self.around_node.get(node).map(|v| v.as_slice()).unwrap_or(&[]);
        if around.is_empty() {
            return match self.rotation_idx.get(node) {
                Some(&i) if i < self.engine.elements.len() => term(i),
                _ => IDENTITY,
            };
        }
        let mut r = [[0.0; 3]; 3];
        for &t in around {
            let m = term(t);
            for i in 0..3 {
                for j in 0..3 {
                    r[i][j] += m[i][j];
                }
            }
        }
        let n = around.len() as f64;
        for row in r.iter_mut() {
            for v in row.iter_mut() {
                *v /= n;
            }
        }
        polar_decomposition(&r)
    }

    fn read_options(cx: &mut InitCtx) -> TetraOptions {
        let d = cx.data();
        let name = d.get(Self::METHOD).to_string();
        let assembling = d.get(Self::COMPUTE_GLOBAL_MATRIX);
        let update_stiffness = d.get(Self::UPDATE_STIFFNESS_MATRIX);
        let plasticity = Plasticity {
            max_threshold: d.get(Self::PLASTIC_MAX_THRESHOLD),
            yield_threshold: d.get(Self::PLASTIC_YIELD_THRESHOLD),
            creep: d.get(Self::PLASTIC_CREEP),
        };
        let method = TetraMethod::from_sofa_name(&name).unwrap_or_else(|| {
            cx.warn(format!("unknown method \"{name}\": using \"large\" (choices: small, large, polar, svd)"));
            TetraMethod::Large
        });
        let opts = TetraOptions { method, assembling, update_stiffness, large_update: LargeStiffnessUpdate::FirstEntryOnly, plasticity };
        if assembling && matches!(method, TetraMethod::Polar | TetraMethod::Svd) {
            cx.warn(format!("computeGlobalMatrix is not supported with method \"{name}\": like SOFA, this force field adds no force"));
        } else if assembling && plasticity.enabled() {
            cx.warn("computeGlobalMatrix is not supported with plasticity: like SOFA, this force field adds no force");
        }
        opts
    }
}

impl Component for TetrahedronFEMForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = vec3_state(cx, "attach the force field to a Vec3d MechanicalObject (use a mapping for rigid frames)")?;
        let mesh = cx.require_mesh()?;
        let from_topology = !mesh.tetrahedra.is_empty();
        let tetrahedra = if from_topology {
            mesh.tetrahedra.clone()
        } else if !mesh.hexahedra.is_empty() {
            split_hexahedra(&mesh.hexahedra, grid_cells(cx.scene, cx.topology()))
        } else {
            return Err(cx
                .error("the topology has neither tetrahedra nor hexahedra")
                .hint("use a topology with tetrahedra (MeshTopology, TetrahedronSetTopologyContainer, a Hexa2TetraTopologicalMapping output) or hexahedra (grids)"));
        };
        let n = cx.state_size(s);
        check_elements(cx, "tetrahedron", &tetrahedra, n)?;
        let rest = rest_positions(cx, s, n)?;
        let (young, poisson) = material_lists(cx, ElasticData::YOUNG_MODULUS, ElasticData::POISSON_RATIO);
        let opts = Self::read_options(cx);
        let d = cx.data();
        let lsf = d.get(Self::LOCAL_STIFFNESS_FACTOR).to_vec();
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        self.update_materials = d.get(Self::UPDATE_STIFFNESS);
        if d.get(Self::COMPUTE_VON_MISES_STRESS) == 1 && opts.method == TetraMethod::Small {
            cx.warn("computeVonMisesStress=1 (corotational strain) is not available with method \"small\" (SOFA marks the component invalid but keeps computing forces)");
        }
        self.engine.build(s, n, tetrahedra, &rest, &young, &poisson, &lsf, opts).map_err(|(i, e)| {
            cx.error(format!("tetrahedron {i}: {e}"))
                .hint("the element is flat in the rest configuration; the svd method needs invertible rest elements")
        })?;

        // node → elements (getTetrahedraAroundVertex) and SOFA's _rotationIdx
        self.around_node = vec![Vec::new(); if from_topology { n } else { 0 }];
        self.rotation_idx = vec![0; if opts.method == TetraMethod::Small { 0 } else { n }];
        for (i, t) in self.engine.tetrahedra.iter().enumerate() {
            for &p in t {
                if from_topology {
                    self.around_node[p].push(i);
                }
                if let Some(r) = self.rotation_idx.get_mut(p) {
                    *r = i;
                }
            }
        }
        cx.data_mut().put(Self::INITIAL_POINTS, rest[..3 * n].to_vec());
        Ok(())
    }

    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        if !self.update_materials || self.engine.elements.is_empty() {
            return Ok(());
        }
        scene.pull_links(me);
        let d = &scene.entry(me).data;
        let young: Vec<f64> = d.get(ElasticData::YOUNG_MODULUS).iter().map(|&y| if y < 0.0 { crate::tetra::DEFAULT_YOUNG } else { y }).collect();
        let poisson: Vec<f64> =
            d.get(ElasticData::POISSON_RATIO).iter().map(|&p| if (0.0..0.5).contains(&p) { p } else { crate::tetra::DEFAULT_POISSON }).collect();
        let lsf = d.get(Self::LOCAL_STIFFNESS_FACTOR).to_vec();
        self.engine.update_materials(&young, &poisson, &lsf);
        Ok(())
    }
}

force_field_on_one_state!(TetrahedronFEMForceField, via engine);

#[cfg(test)]
mod tests;
