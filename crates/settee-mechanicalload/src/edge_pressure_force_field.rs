//! `EdgePressureForceField`: a pressure on selected edges (SOFA's `EdgePressureForceField`).
//!
//! The edges are selected, in SOFA's order (the last selection given wins), by a slab
//! (`dmin < x·normal < dmax` for both rest vertices, when `dmin ≠ dmax`), by `edgeIndices`, or by
//! `edges` (vertex pairs looked up in the topology's edge list; a pair that is not found selects
//! edge 0, as in SOFA). Each selected edge carries a force, half of which goes to each vertex:
//! * `pressure` non-zero: `pressure · |e|` with the rest length `|e|`;
//! * else, with `p_intensity` and `binormal`: `intensity · |e₍ᵢ₎| · normalize(b × t)` with the
//!   unit binormal `b`, the current unit tangent `t` of the selected edge, `intensityᵢ` (or the
//!   first) and the rest length of topology edge `i` (SOFA reads edge `i`, not the selected one),
//!   re-evaluated after each force evaluation (the force used lags one evaluation, as in SOFA);
//! * else no force.
//!
//! The intensity mode without `binormal` (normals from the triangles around each edge) is not
//! supported: a positioned error. The force has no derivative (SOFA's `addDForce` does nothing).
//!
//! Topological changes: the selection follows the edges as SOFA's `EdgeSubsetData` does (removed
//! edges leave the selection, keeping its order; the edge moved into a removed slot is renamed;
//! new edges are not selected).

use settee_core::component::ForceField;
use settee_core::role::{MechanicalState, Topology};
use settee_core::topology_change::{removal_map, validate, ElementKind, Follow, TopologyChange};
use settee_core::{component, Component, ComponentId, ForceIo, InitCtx, MechParams, SimError, SimResult, StateId, VecId};

// `normalized`: divided by its norm when the norm exceeds machine epsilon; `at`: point `i`.
use settee_core::math::{at as point, cross, norm, normalized, sub, V3};

/// Pressure forces on a set of edges.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// pressure force per unit length (a vector)
        pressure: Deriv as Vec3 = "0 0 0",
        /// indices of the edges where the pressure is applied
        edgeIndices: Indices,
        /// edges (vertex pairs) where the pressure is applied
        edges: Indices,
        /// normal of the slab selecting edges (with dmin, dmax)
        normal: Fixed(3) as Reals = "0 0 0",
        /// minimum distance from the origin along the normal
        dmin: Real = "0",
        /// maximum distance from the origin along the normal
        dmax: Real = "0",
        /// size of the drawn arrows (rendering only)
        arrowSizeCoef: Real = "0",
        /// pressure intensity on the edge normals (when pressure is zero)
        p_intensity: Reals,
        /// binormal of the 2D plane (intensity mode)
        binormal: Fixed(3) as Reals = "0 0 0",
        /// draw the edge pressures (rendering only)
        showForces: Bool = "false",
        /// internal per-edge data (not readable)
        edgePressureMap: Str,
    },
    links = {
        /// mechanical state (default: the node's context state)
        mstate: MechanicalState,
        /// edge topology (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct EdgePressureForceField {
    state: Option<StateId>,
    /// The topology's edges (kept aligned with the container by the change log).
    edges: Vec<[usize; 2]>,
    /// Selected edges (indices into `edges`) and, per entry, the force of the edge.
    selection: Vec<usize>,
    forces: Vec<V3>,
    pressure: V3,
    intensity: Vec<f64>,
    /// Unit binormal, in the intensity mode.
    binormal: Option<V3>,
    /// Rest positions (for the lengths).
    rest: Vec<f64>,
}

impl EdgePressureForceField {
    /// Selected edges (indices into the topology's edges).
    pub fn selection(&self) -> &[usize] {
        &self.selection
    }
    /// The force of each selected edge (each vertex gets half).
    pub fn edge_forces(&self) -> &[V3] {
        &self.forces
    }

    fn rest_length(&self, e: usize) -> f64 {
        let [a, b] = self.edges[e];
        norm(sub(point(&self.rest, b), point(&self.rest, a)))
    }

    /// SOFA's `initEdgeInformation` at positions `x`.
    fn update_forces(&mut self, x: &[f64]) {
        if x.is_empty() {
            return;
        }
        self.forces.resize(self.selection.len(), [0.0; 3]);
        if norm(self.pressure) > 0.0 {
            for k in 0..self.selection.len() {
                let l = self.rest_length(self.selection[k]);
                self.forces[k] = self.pressure.map(|p| p * l);
            }
        } else if let (Some(b), false) = (self.binormal, self.intensity.is_empty()) {
            for k in 0..self.selection.len() {
                let [e0, e1] = self.edges[self.selection[k]];
                let tang = normalized(sub(point(x, e1), point(x, e0)));
                let normal = normalized(cross(b, tang));
                let intensity = if self.intensity.len() > 1 && self.intensity.len() > k { self.intensity[k] } else { self.intensity[0] };
                // SOFA measures topology edge k here, not the selected edge.
                let l = if k < self.edges.len() { self.rest_length(k) } else { 0.0 };
                self.forces[k] = normal.map(|c| c * intensity * l);
            }
        }
    }
}

impl Component for EdgePressureForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        if cx.state_layout(s) != settee_core::Layout::Vec3 {
            return Err(cx.error(format!("the mechanical state is a {} state: EdgePressureForceField needs Vec3d", cx.state_layout(s).name())));
        }
        let mesh = cx.require_mesh()?;
        self.edges = mesh.edges.clone();
        self.rest = cx.rest_or_position(s);
        let n = self.rest.len() / 3;
        if let Some((k, e)) = self.edges.iter().enumerate().find(|(_, e)| e.iter().any(|&v| v >= n)) {
            return Err(cx.error(format!("edge {k} {e:?} refers to a point beyond the {n} DOFs of the mechanical state")));
        }
        let d = cx.data();
        self.pressure = d.get(Self::PRESSURE);
        self.intensity = d.get(Self::P_INTENSITY).to_vec();
        let normal = d.get(Self::NORMAL).to_vec();
        let (dmin, dmax) = (d.get(Self::DMIN), d.get(Self::DMAX));
        let indices = d.get(Self::EDGE_INDICES).to_vec();
        let pairs = d.get(Self::EDGES).to_vec();
        let binormal = d.is_given(Self::BINORMAL).then(|| d.get(Self::BINORMAL).to_vec());
        if dmin != dmax && normal.len() == 3 {
            let inside = |i: usize| {
                let p = point(&self.rest, i);
                let v = p[0] * normal[0] + p[1] * normal[1] + p[2] * normal[2];
                v > dmin && v < dmax
            };
            self.selection = (0..self.edges.len()).filter(|&k| inside(self.edges[k][0]) && inside(self.edges[k][1])).collect();
        }
        if !indices.is_empty() {
            if let Some(&bad) = indices.iter().find(|&&i| i >= self.edges.len()) {
                return Err(cx.error(format!("edgeIndices names edge {bad}, but the topology has {} edges", self.edges.len())));
            }
            self.selection = indices;
        }
        if !pairs.is_empty() {
            if !pairs.len().is_multiple_of(2) {
                return Err(cx.error(format!("edges has {} indices, not pairs", pairs.len())));
            }
            // The last topology edge with the same vertices, in the same order; 0 when none.
            self.selection = pairs.chunks_exact(2).map(|p| self.edges.iter().rposition(|e| e[0] == p[0] && e[1] == p[1]).unwrap_or(0)).collect();
            if self.edges.is_empty() {
                return Err(cx.error("edges are given but the topology has no edges"));
            }
        }
        if norm(self.pressure) == 0.0 && !self.intensity.is_empty() {
            match binormal {
                Some(b) if b.len() == 3 => self.binormal = Some(normalized([b[0], b[1], b[2]])),
                _ => {
                    let mut e = cx
                        .error("the intensity mode without binormal (normals from the triangles around each edge) is not supported")
                        .hint("give a pressure vector, or a binormal with p_intensity");
                    e.0.unsupported = true;
                    return Err(e);
                }
            }
        }
        let x = cx.read_vec(s, VecId::POSITION).to_vec();
        self.update_forces(&x);
        self.state = Some(s);
        Ok(())
    }

    /// Edge changes: the selection follows (see the module documentation); point changes:
    /// the rest positions follow through the state, the edges through the container.
    fn topology_changed(&mut self, cx: &mut InitCtx, topology: ComponentId, changes: &[TopologyChange]) -> SimResult<Follow> {
        let Some(s) = self.state else { return Ok(Follow::NotConcerned) };
        let mut len = self.edges.len();
        for c in changes.iter().filter(|c| c.kind() == ElementKind::Edge) {
            validate(c, len).map_err(|e| cx.error(format!("cannot follow the topological change: {e}")))?;
            match c {
                TopologyChange::Added { count, .. } => len += count,
                TopologyChange::Removed { indices, .. } => {
                    let map = removal_map(len, indices);
                    let (mut sel, mut forces) = (Vec::with_capacity(self.selection.len()), Vec::with_capacity(self.forces.len()));
                    for (k, &e) in self.selection.iter().enumerate() {
                        if let Some(Some(n)) = map.get(e) {
                            sel.push(*n);
                            forces.push(self.forces.get(k).copied().unwrap_or_default());
                        }
                    }
                    (self.selection, self.forces) = (sel, forces);
                    len -= indices.len();
                }
                TopologyChange::Renumbered { old_of_new, .. } => {
                    let mut new_of_old = vec![0; len];
                    for (n, &o) in old_of_new.iter().enumerate() {
                        new_of_old[o] = n;
                    }
                    for e in &mut self.selection {
                        *e = new_of_old[*e];
                    }
                }
            }
        }
        let mesh = cx.scene.mesh_of(topology).ok_or_else(|| cx.error(format!("{} provides no mesh", cx.scene.entry(topology).label())))?;
        if mesh.edges.len() != len {
            return Err(cx
                .error(format!("after the topological change the selection counts {len} edges but the topology has {}", mesh.edges.len()))
                .hint("the change log and the container's lists disagree"));
        }
        self.edges = mesh.edges.clone();
        self.rest = cx.rest_or_position(s);
        let n = self.rest.len() / 3;
        if let Some(e) = self.selection.iter().map(|&k| self.edges[k]).find(|e| e.iter().any(|&v| v >= n)) {
            return Err(cx.error(format!("selected edge {e:?} refers to a point beyond the {n} DOFs of the mechanical state")));
        }
        Ok(Follow::Followed)
    }
}

impl ForceField for EdgePressureForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let (Some(x), Some(f)) = (io.x.first().copied(), io.f.first_mut()) else {
            return Err(SimError::new("no vectors lent to the force field"));
        };
        for (k, &e) in self.selection.iter().enumerate() {
            let [a, b] = self.edges[e];
            if 3 * a.max(b) + 3 > f.len() {
                return Err(SimError::new(format!("edge {e} [{a}, {b}] refers to a point beyond the state's {} DOFs", f.len() / 3)));
            }
            let half = self.forces.get(k).copied().unwrap_or_default().map(|c| c / 2.0);
            for c in 0..3 {
                f[3 * a + c] += half[c];
                f[3 * b + c] += half[c];
            }
        }
        self.update_forces(x);
        Ok(())
    }

    fn add_dforce(&mut self, _p: &MechParams, _io: &mut ForceIo, _k: f64, _b: f64) -> SimResult {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use settee_core::simulation::init_root;
    use settee_core::Scene;
    use settee_topology::testing::attrs;

    /// A 3×2 grid of points in the plane z = 0 with the edges of an edge set container.
    fn scene(ff: &[(&str, &str)]) -> (Scene, ComponentId, ComponentId, StateId) {
        let f = settee_statecontainer::factory_with(&[crate::register, settee_topology::register]);
        let mut scene = Scene::new("root");
        let dir = std::path::Path::new(".");
        let pos = "0 0 0  1 0 0  3 0 0  0 2 0  1 2 0  3 2 0";
        let edges = "0 1  1 2  3 4  4 5  0 3  1 4  2 5";
        let topo =
            f.create(&mut scene, Scene::ROOT, "EdgeSetTopologyContainer", None, attrs(&[("position", pos), ("edges", edges)]), None, dir).unwrap();
        let mo = f.create(&mut scene, Scene::ROOT, "MechanicalObject", None, attrs(&[]), None, dir).unwrap();
        let c = f.create(&mut scene, Scene::ROOT, "EdgePressureForceField", None, attrs(ff), None, dir).unwrap();
        assert!(!scene.has_errors(), "{:?}", scene.messages);
        init_root(&mut scene, &f).unwrap();
        let s = scene.state_of(mo).unwrap();
        (scene, topo, c, s)
    }

    fn force(scene: &mut Scene, c: ComponentId, s: StateId) -> Vec<f64> {
        let x = scene.store.get(s).read(VecId::POSITION).to_vec();
        let mut f = vec![0.0; x.len()];
        let p = MechParams { dt: 0.01, time: 0.0, gravity: [0.0; 3] };
        let mut io = ForceIo { f: vec![f.as_mut_slice()].into(), x: vec![x.as_slice()].into(), v: vec![x.as_slice()].into() };
        scene.role_mut::<dyn ForceField>(c).unwrap().add_force(&p, &mut io).unwrap();
        drop(io);
        f
    }

    #[test]
    fn pressure_times_rest_length_half_on_each_vertex() {
        let (mut scene, _, c, s) = scene(&[("edges", "1 2  0 3  4 1"), ("pressure", "0 0 1")]);
        // "4 1" is not an edge of the topology (only "1 4"): SOFA selects edge 0.
        assert_eq!(scene.get::<EdgePressureForceField>(c).unwrap().selection(), &[1, 4, 0]);
        let f = force(&mut scene, c, s);
        // Edge 1 (length 2): 1 on points 1 and 2; edge 4 (length 2): 1 on 0 and 3; edge 0 (1): ½ on 0 and 1.
        let fz: Vec<f64> = (0..6).map(|i| f[3 * i + 2]).collect();
        assert_eq!(fz, vec![1.5, 1.5, 1.0, 1.0, 0.0, 0.0]);
    }

    #[test]
    fn selection_follows_edge_removals() {
        let (mut scene, topo, c, s) = scene(&[("edgeIndices", "6 1 3"), ("pressure", "0 0 2")]);
        // Remove edges 6 and 2 (SOFA's order: 6 first, the last; then 2, edge 5 moves into it).
        settee_topology::modifier::modify(&mut scene, topo, |t| {
            t.log_removed(ElementKind::Edge, &[6, 2]);
            t.mesh.edges.swap_remove(6);
            t.mesh.edges.swap_remove(2);
        })
        .unwrap();
        let ff = scene.get::<EdgePressureForceField>(c).unwrap();
        assert_eq!(ff.selection(), &[1, 3]);
        let f = force(&mut scene, c, s);
        let fz: Vec<f64> = (0..6).map(|i| f[3 * i + 2]).collect();
        // Edge 1 = (1, 2), length 2: force 4; edge 3 = (4, 5), length 2: force 4.
        assert_eq!(fz, vec![0.0, 2.0, 2.0, 0.0, 2.0, 2.0]);
    }

    #[test]
    fn intensity_with_binormal() {
        let (mut scene, _, c, s) = scene(&[("edgeIndices", "0"), ("p_intensity", "3"), ("binormal", "0 0 2")]);
        let f = force(&mut scene, c, s);
        // Tangent +x, normal z × x = +y; rest length of edge 0 = 1.
        assert_eq!(&f[0..6], &[0.0, 1.5, 0.0, 0.0, 1.5, 0.0]);
    }
}
