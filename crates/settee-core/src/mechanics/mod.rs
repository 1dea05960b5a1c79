//! The mechanical stages, as plain functions over a scene and a [`MechScope`]: vector operations,
//! force computation, `(mM + bB + kK)·dx` products, projections, propagation through mappings and
//! assembly of the global matrix. ODE and linear solvers are written in terms of these.

use settee_linalg::MatrixBuilder;

pub mod dense;
pub mod plan;
pub mod roles;

pub use dense::{ConstraintJacobian, DenseMatrix};
pub use plan::{SolveItem, SolvePlan};
pub use roles::*;

use crate::diag::{SimError, SimResult};
use crate::graph::component::MechParams;
use crate::graph::role;
use crate::graph::scene::{Reach, Visit};
use crate::scene::{ComponentId, NodeId, Scene};
use crate::scratch::{SmallVec, StateSet};
use crate::state::{MState, StateId, VecId, VecKind};
use crate::types::Layout;

/// The mechanical components reachable from a solver's node, in SOFA's processing order.
#[derive(Clone, Debug)]
pub struct MechScope {
    pub node: NodeId,
    /// Every state of the subtree, in scene pre-order.
    pub states: Vec<StateId>,
    /// States that are not outputs of a mechanical mapping (the unknowns of the solvers).
    pub main_states: Vec<StateId>,
    pub mapped_states: Vec<StateId>,
    /// Mechanical mappings, top-down.
    pub mappings: Vec<ComponentId>,
    /// Force fields (masses included) grouped by the states they act on, groups in order of first
    /// appearance, scene order inside a group.
    pub force_fields: Vec<ComponentId>,
    pub masses: Vec<ComponentId>,
    pub projective: Vec<ComponentId>,
    /// Global row offset of each main state, and the total size.
    pub offsets: Vec<(StateId, usize)>,
    pub size: usize,
    /// Per state slot, the generation of the scope's state in that slot (0: none), for
    /// [`MechScope::contains_state`].
    member: Vec<u32>,
    /// Per state slot, the scalar size (DOFs × derivative size) when the scope was built.
    scalar_size: Vec<usize>,
    /// Working lists of [`MechScope::rebuild`]: the force fields found (their states, id, and
    /// (group, position) once grouped) and the first force field of each group.
    found: Vec<(StateSet, ComponentId, (usize, usize))>,
    leaders: Vec<usize>,
}

impl Default for MechScope {
    fn default() -> MechScope {
        MechScope {
            node: Scene::ROOT,
            states: Vec::new(),
            main_states: Vec::new(),
            mapped_states: Vec::new(),
            mappings: Vec::new(),
            force_fields: Vec::new(),
            masses: Vec::new(),
            projective: Vec::new(),
            offsets: Vec::new(),
            size: 0,
            member: Vec::new(),
            scalar_size: Vec::new(),
            found: Vec::new(),
            leaders: Vec::new(),
        }
    }
}

impl MechScope {
    /// Collects the mechanical components of `node`'s subtree, in SOFA's visiting order, with
    /// the contact objects spliced in where the contact nodes would sit: a contact mapping (and
    /// its state) at the end of its model's node subtree, a contact force field after the
    /// objects of the node it acts in ([`crate::plan::ContactStore`]).
    pub fn build(scene: &Scene, node: NodeId) -> MechScope {
        let mut s = MechScope::default();
        s.rebuild(scene, node);
        s
    }

    /// [`MechScope::build`] again, into the memory this scope has (no allocation once its lists
    /// are large enough: contacts that come and go change the scope every few steps).
    pub fn rebuild(&mut self, scene: &Scene, node: NodeId) {
        self.node = node;
        for list in [&mut self.states, &mut self.main_states, &mut self.mapped_states] {
            list.clear();
        }
        for list in [&mut self.mappings, &mut self.force_fields, &mut self.masses, &mut self.projective] {
            list.clear();
        }
        self.offsets.clear();
        self.member.clear();
        self.scalar_size.clear();
        self.found.clear();
        self.leaders.clear();
        self.visit(scene, node);
        // Force fields grouped by their state set, groups in order of first appearance, scene
        // order inside a group.
        for k in 0..self.found.len() {
            let group = match self.leaders.iter().position(|&l| self.found[l].0 == self.found[k].0) {
                Some(g) => g,
                None => {
                    self.leaders.push(k);
                    self.leaders.len() - 1
                }
            };
            self.found[k].2 = (group, k);
        }
        self.found.sort_unstable_by_key(|f| f.2);
        self.force_fields.extend(self.found.iter().map(|f| f.1));
        let mut off = 0;
        for &st in &self.main_states {
            self.offsets.push((st, off));
            let m = scene.store.get(st);
            off += m.size * m.layout.deriv_size();
        }
        self.size = off;
        for &st in &self.states {
            if self.member.len() <= st.index() {
                self.member.resize(st.index() + 1, 0);
            }
            self.member[st.index()] = st.generation();
            if self.scalar_size.len() <= st.index() {
                self.scalar_size.resize(st.index() + 1, 0);
            }
            let m = scene.store.get(st);
            self.scalar_size[st.index()] = m.size * m.layout.deriv_size();
        }
    }

    /// Collects node `start` and its subtree in the graph's walk: each node's state and
    /// objects, the contact objects acting after them, the children, then the contact mappings
    /// anchored at the end of the node's subtree.
    fn visit(&mut self, scene: &Scene, start: NodeId) {
        let contacts = &scene.contacts;
        scene.walk(start, &mut |n, reach| {
            match reach {
                Reach::Enter => {
                    if let Some(st) = scene.slot(n, role::MECHANICAL_STATE).and_then(|ms| scene.state_of(ms)) {
                        self.add_state(scene, st);
                    }
                    for &c in &scene.node(n).objects {
                        self.add_component(scene, c);
                    }
                    if !contacts.is_empty() {
                        for c in contacts.attached_at(n) {
                            self.add_component(scene, c);
                        }
                    }
                }
                Reach::Leave if !contacts.is_empty() => {
                    for m in contacts.mappers_at(n) {
                        if let Some(st) = scene.entry(m).state {
                            self.add_state(scene, st);
                        }
                        self.add_component(scene, m);
                    }
                }
                Reach::Leave => {}
            }
            Visit::Descend
        });
    }

    fn add_state(&mut self, scene: &Scene, st: StateId) {
        self.states.push(st);
        if scene.store.get(st).mapped {
            self.mapped_states.push(st);
        } else {
            self.main_states.push(st);
        }
    }

    fn add_component(&mut self, scene: &Scene, c: ComponentId) {
        let e = scene.entry(c);
        // Only components that are ready: taken out ones are running, uninitialised ones are not
        // part of the simulation.
        if e.obj.is_none() || !e.initialized {
            return;
        }
        if e.plays(role::MECHANICAL_MAPPING) && e.role::<dyn Mapping>().is_some_and(|m| m.is_mechanical() && m.output().is_some()) {
            self.mappings.push(c);
        }
        if let Some(ff) = e.role::<dyn ForceField>() {
            self.found.push((ff.states(), c, (0, 0)));
        }
        if e.plays(crate::mechanics::MASS) {
            self.masses.push(c);
        }
        if e.plays(crate::mechanics::PROJECTIVE_CONSTRAINT) {
            self.projective.push(c);
        }
    }

    /// Whether the states of the scope still have the sizes it was built with (a topological
    /// change or a contact's new points change them between structural changes).
    pub fn sizes_match(&self, scene: &Scene) -> bool {
        self.states.iter().all(|st| scene.store.states.get(*st).is_some_and(|m| m.size * m.layout.deriv_size() == self.scalar_size[st.index()]))
    }

    /// Scalar size (DOFs × derivative size) of a state of the scope; 0 for other states.
    pub fn scalar_size(&self, s: StateId) -> usize {
        if self.contains_state(s) {
            self.scalar_size[s.index()]
        } else {
            0
        }
    }

    /// True when `s` is one of the scope's states (main or mapped).
    pub fn contains_state(&self, s: StateId) -> bool {
        self.member.get(s.index()).is_some_and(|g| *g == s.generation())
    }

    /// Global offset of a main state.
    pub fn offset(&self, s: StateId) -> Option<usize> {
        self.offsets.iter().find(|(st, _)| *st == s).map(|(_, o)| *o)
    }
}

// ----- vector operations -------------------------------------------------------------------------

/// SOFA's `vOp(r, a, b, k)` on every main state of the scope (see the mechanics spec §1.5).
pub fn v_op(scene: &mut Scene, scope: &MechScope, r: VecId, a: Option<VecId>, b: Option<VecId>, k: f64) {
    for &s in &scope.main_states {
        v_op_state(scene, s, r, a, b, k);
    }
}

/// `vOp` on one state.
pub fn v_op_state(scene: &mut Scene, s: StateId, r: VecId, a: Option<VecId>, b: Option<VecId>, k: f64) {
    let st = scene.store.get_mut(s);
    let layout = st.layout;
    let n = st.size;
    let mut rv = st.take(r);
    let rs = st.elem_size(r.kind);
    rv.resize(n * rs, 0.0);
    match (a, b) {
        (None, None) => rv.fill(0.0),
        (None, Some(b)) if b == r => scale(&mut rv, layout, r.kind, k),
        (None, Some(b)) => {
            rv.copy_from_slice(&st.read(b)[..n * rs]);
            scale(&mut rv, layout, r.kind, k);
        }
        (Some(a), None) if a == r => {}
        (Some(a), None) => copy_vec(&mut rv, st.read(a), n * rs),
        (Some(a), Some(b)) if a == r && b == r => {
            let copy = rv.clone();
            add_scaled(&mut rv, r.kind, &copy, b.kind, layout, n, k);
        }
        (Some(a), Some(b)) if a == r => add_scaled(&mut rv, r.kind, st.read(b), b.kind, layout, n, k),
        (Some(a), Some(b)) if b == r => {
            if k != 1.0 {
                scale(&mut rv, layout, r.kind, k);
            }
            add_scaled(&mut rv, r.kind, st.read(a), a.kind, layout, n, 1.0);
        }
        (Some(a), Some(b)) => {
            if k == -1.0 && r.kind == VecKind::Deriv && a.kind == VecKind::Coord && b.kind == VecKind::Coord {
                coord_difference(&mut rv, st.read(a), st.read(b), layout, n);
            } else {
                copy_vec(&mut rv, st.read(a), n * rs);
                add_scaled(&mut rv, r.kind, st.read(b), b.kind, layout, n, k);
            }
        }
    }
    st.put(r, rv);
}

fn copy_vec(dst: &mut [f64], src: &[f64], len: usize) {
    let m = len.min(src.len());
    dst[..m].copy_from_slice(&src[..m]);
    dst[m..].fill(0.0);
}

fn scale(v: &mut [f64], layout: Layout, kind: VecKind, k: f64) {
    if kind == VecKind::Coord && layout.is_rigid() {
        // Coordinates of rigid bodies scale their center only.
        let cs = layout.coord_size();
        let sp = layout.spatial_size();
        for e in v.chunks_exact_mut(cs) {
            for c in &mut e[..sp] {
                *c *= k;
            }
        }
    } else {
        for x in v.iter_mut() {
            *x *= k;
        }
    }
}

/// `r += b·k` (the product is not formed when k = 1, as SOFA).
fn add_scaled(r: &mut [f64], rkind: VecKind, b: &[f64], bkind: VecKind, layout: Layout, n: usize, k: f64) {
    if rkind == VecKind::Coord && bkind == VecKind::Deriv && layout.is_rigid() {
        let (cs, ds) = (layout.coord_size(), layout.deriv_size());
        for i in 0..n {
            let d = &b[i * ds..(i + 1) * ds];
            let x = &mut r[i * cs..(i + 1) * cs];
            if k == 1.0 {
                layout.coord_add(x, d)
            } else {
                layout.coord_add_scaled(x, d, k)
            }
        }
        return;
    }
    let m = r.len().min(b.len());
    if k == 1.0 {
        for (x, y) in r[..m].iter_mut().zip(&b[..m]) {
            *x += *y;
        }
    } else {
        for (x, y) in r[..m].iter_mut().zip(&b[..m]) {
            *x += *y * k;
        }
    }
}

fn coord_difference(r: &mut [f64], a: &[f64], b: &[f64], layout: Layout, n: usize) {
    if layout != Layout::Rigid3 {
        for i in 0..r.len().min(a.len()).min(b.len()) {
            r[i] = a[i] - b[i];
        }
        return;
    }
    for i in 0..n {
        let (pa, pb) = (&a[i * 7..i * 7 + 7], &b[i * 7..i * 7 + 7]);
        let out = &mut r[i * 6..i * 6 + 6];
        for c in 0..3 {
            out[c] = pa[c] - pb[c];
        }
        let qa = [pa[3], pa[4], pa[5], pa[6]];
        let qb_inv = [-pb[3], -pb[4], -pb[5], pb[6]];
        let mut q = crate::types::quat_mul(qa, qb_inv);
        crate::types::quat_normalize(&mut q);
        // axis·angle of q
        let s = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
        let angle = 2.0 * s.atan2(q[3]);
        let f = if s > 1e-30 { angle / s } else { 2.0 };
        out[3] = q[0] * f;
        out[4] = q[1] * f;
        out[5] = q[2] * f;
    }
}

/// Dot product over the scope's main states, in SOFA's summation order.
pub fn v_dot(scene: &Scene, scope: &MechScope, a: VecId, b: VecId) -> f64 {
    let mut total = 0.0;
    for &s in &scope.main_states {
        let st = scene.store.get(s);
        let k = st.elem_size(a.kind);
        let (va, vb) = (st.read(a), st.read(b));
        let mut r = 0.0;
        for (ea, eb) in va.chunks_exact(k).zip(vb.chunks_exact(k)) {
            let mut d = ea[0] * eb[0];
            for c in 1..k {
                d += ea[c] * eb[c];
            }
            r += d;
        }
        total += r;
    }
    total
}

pub fn v_norm(scene: &Scene, scope: &MechScope, a: VecId) -> f64 {
    v_dot(scene, scope, a, a).sqrt()
}

/// Allocates a zero-filled temporary derivative vector on every state of the scope.
pub fn alloc_deriv(scene: &mut Scene, scope: &MechScope) -> VecId {
    scene.store.alloc(&scope.states, VecKind::Deriv)
}

pub fn free_vec(scene: &mut Scene, scope: &MechScope, id: VecId) {
    scene.store.free(&scope.states, id);
}

/// SOFA's `vRealloc`: makes sure the vector exists (keeping its content) on every state.
pub fn realloc(scene: &mut Scene, scope: &MechScope, id: VecId) {
    for &s in &scope.states {
        scene.store.get_mut(s).write(id);
    }
}

// ----- forces -------------------------------------------------------------------------------------

fn unique(states: &[StateId]) -> StateSet {
    let mut u = StateSet::new();
    for s in states {
        if !u.contains(s) {
            u.push(*s);
        }
    }
    u
}

/// Calls `f` with the force-field object `c` and its vectors: `out` (taken out, written) and the
/// read vectors `r1`, `r2` of its states.
///
/// With a `scope`, a state outside of it (the other side of an interaction force field, e.g. a
/// static obstacle's contact points) is treated as fixed, as SOFA's solvers see it: its static
/// vectors (positions, velocities) are read as they are, its temporaries (`dx` of a linear
/// solve) read as zeros, and what the force field writes into it is discarded.
/// What [`with_io`] asks of a force field.
#[derive(Clone, Copy)]
enum IoCall {
    Force,
    DForce { k: f64, b: f64 },
}

impl IoCall {
    fn run(self, ff: &mut dyn ForceField, p: &MechParams, io: &mut ForceIo) -> SimResult {
        match self {
            IoCall::Force => ff.add_force(p, io),
            IoCall::DForce { k, b } => ff.add_dforce(p, io, k, b),
        }
    }
}

fn with_io(scene: &mut Scene, scope: Option<&MechScope>, c: ComponentId, out: VecId, r1: VecId, r2: Option<VecId>, call: IoCall) -> SimResult {
    let node = scene.components[c].node;
    let params = scene.params(node);
    let (states, needs_scene) = {
        let ff = scene.components[c].role::<dyn ForceField>();
        (unique(&ff.map(|f| f.states()).unwrap_or_default()), ff.is_some_and(|f| f.needs_scene()))
    };
    if needs_scene {
        return with_io_in_scene(scene, c, &states, out, r1, r2, &params, call);
    }
    if scope.is_none_or(|sc| states.iter().all(|s| sc.contains_state(*s))) {
        // Every state is solved here (the usual case): lend the vectors themselves.
        let mut outs: SmallVec<[Vec<f64>; 4]> = states.iter().map(|s| scene.store.get_mut(*s).take(out)).collect();
        let result = {
            let Scene { components, store, .. } = scene;
            let obj = components[c].role_mut::<dyn ForceField>().expect("force field role");
            let mut io = ForceIo {
                f: outs.iter_mut().map(|v| v.as_mut_slice()).collect(),
                x: states.iter().map(|s| store.get(*s).read(r1)).collect(),
                v: match r2 {
                    Some(r2) => states.iter().map(|s| store.get(*s).read(r2)).collect(),
                    None => SmallVec::new(),
                },
            };
            call.run(obj, &params, &mut io)
        };
        for (s, v) in states.iter().zip(outs) {
            scene.store.get_mut(*s).put(out, v);
        }
        return result.map_err(|e| label_error(scene, c, e));
    }
    let inside: SmallVec<[bool; 4]> = states.iter().map(|s| scope.is_none_or(|sc| sc.contains_state(*s))).collect();
    // Zero vectors for the states outside the scope, from the scene's spares.
    let mut spares = std::mem::take(&mut scene.spare_vectors);
    let mut zeroed = |n: usize| {
        let mut v = spares.pop().unwrap_or_default();
        v.clear();
        v.resize(n, 0.0);
        v
    };
    let mut outs: SmallVec<[Vec<f64>; 4]> = states
        .iter()
        .zip(&inside)
        .map(|(s, &inside)| {
            let st = scene.store.get_mut(*s);
            if inside {
                st.take(out)
            } else {
                zeroed(st.size * st.elem_size(out.kind))
            }
        })
        .collect();
    // Zero vectors lent for temporaries of states outside the scope.
    let zeros: SmallVec<[Vec<f64>; 4]> = states
        .iter()
        .zip(&inside)
        .map(|(s, &inside)| {
            let st = scene.store.get(*s);
            if inside {
                Vec::new()
            } else {
                zeroed(st.size * st.elem_size(r1.kind).max(r2.map_or(0, |r| st.elem_size(r.kind))))
            }
        })
        .collect();
    let result = {
        let Scene { components, store, .. } = scene;
        let obj = components[c].role_mut::<dyn ForceField>().expect("force field role");
        let read = |k: usize, id: VecId| -> &[f64] {
            let st = store.get(states[k]);
            if inside[k] || id.is_static() {
                st.read(id)
            } else {
                &zeros[k][..st.size * st.elem_size(id.kind)]
            }
        };
        let mut io = ForceIo {
            f: outs.iter_mut().map(|v| v.as_mut_slice()).collect(),
            x: (0..states.len()).map(|k| read(k, r1)).collect(),
            v: match r2 {
                Some(r2) => (0..states.len()).map(|k| read(k, r2)).collect(),
                None => SmallVec::new(),
            },
        };
        call.run(obj, &params, &mut io)
    };
    for ((s, v), inside) in states.iter().zip(outs).zip(&inside) {
        if *inside {
            scene.store.get_mut(*s).put(out, v);
        } else {
            spares.push(v);
        }
    }
    spares.extend(zeros.into_iter().zip(&inside).filter(|(_, inside)| !**inside).map(|(z, _)| z));
    scene.spare_vectors = spares;
    result.map_err(|e| label_error(scene, c, e))
}

/// [`with_io`] for a force field that needs the scene while it works (a script's): the object
/// is taken out of its slot, the written vector out of the store, and the read vectors are
/// lent as copies, so that the scene stays whole (the script may read any of its Data).
#[allow(clippy::too_many_arguments)]
fn with_io_in_scene(
    scene: &mut Scene,
    c: ComponentId,
    states: &[StateId],
    out: VecId,
    r1: VecId,
    r2: Option<VecId>,
    params: &MechParams,
    call: IoCall,
) -> SimResult {
    let mut outs: SmallVec<[Vec<f64>; 4]> = states.iter().map(|s| scene.store.get_mut(*s).take(out)).collect();
    let xs: SmallVec<[Vec<f64>; 4]> = states.iter().map(|s| scene.store.get(*s).read(r1).to_vec()).collect();
    let vs: SmallVec<[Vec<f64>; 4]> = match r2 {
        Some(r2) => states.iter().map(|s| scene.store.get(*s).read(r2).to_vec()).collect(),
        None => SmallVec::new(),
    };
    let result = scene.with_role::<dyn ForceField, _>(c, |ff, scene| {
        let mut io = ForceIo {
            f: outs.iter_mut().map(|v| v.as_mut_slice()).collect(),
            x: xs.iter().map(|v| v.as_slice()).collect(),
            v: vs.iter().map(|v| v.as_slice()).collect(),
        };
        match call {
            IoCall::Force => ff.add_force_in_scene(scene, c, params, &mut io),
            IoCall::DForce { k, b } => ff.add_dforce_in_scene(scene, c, params, &mut io, k, b),
        }
    });
    for (s, v) in states.iter().zip(outs) {
        scene.store.get_mut(*s).put(out, v);
    }
    result.map_err(|e| label_error(scene, c, e))
}

/// `out += force(x, v)` of force field `c` on all its states, with no solver scope (every
/// state is written): SOFA's addForce of an interaction force field found in a node without
/// solver (see [`crate::simulation::IsolatedInteractions`]).
pub fn add_force_unscoped(scene: &mut Scene, c: ComponentId, out: VecId, x: VecId, v: VecId) -> SimResult {
    with_io(scene, None, c, out, x, Some(v), IoCall::Force)
}

pub(crate) fn label_error(scene: &Scene, c: ComponentId, mut e: SimError) -> SimError {
    if e.0.subject.is_none() {
        e.0.subject = Some(scene.entry(c).label());
    }
    if e.0.pos.is_none() {
        e.0.pos = scene.entry(c).pos.clone();
    }
    e
}

/// `f = Σ forces(x, v)` on every state of the scope, accumulated into main states through the
/// mappings (SOFA's `computeForce` with clear and accumulate).
pub fn compute_force(scene: &mut Scene, scope: &MechScope, f: VecId, x: VecId, v: VecId) -> SimResult {
    for &s in &scope.states {
        let st = scene.store.get_mut(s);
        let mut fv = st.take(f);
        fv.fill(0.0);
        let ext = st.read(VecId::EXTERNAL_FORCE);
        if !ext.is_empty() {
            for (a, b) in fv.iter_mut().zip(ext) {
                *a += *b;
            }
        }
        st.put(f, fv);
    }
    for &c in &scope.force_fields {
        // Compliances are not evaluated: their forces are the KKT system's multipliers
        // (SOFA's computeForce with `neglectingCompliance`, compliant spec §3.3).
        if scene.role::<dyn ForceField>(c).is_some_and(|ff| ff.is_compliance()) {
            continue;
        }
        with_io(scene, Some(scope), c, f, x, Some(v), IoCall::Force)?;
    }
    accumulate_through_mappings(scene, scope, f, None, 0.0)
}

/// `df += (m·M + b·B + k·K)·dx`, SOFA's `addMBKdx`; with `clear_mapped` the mapped states' `df`
/// is reset first (main states are never cleared here).
pub fn add_mbkdx(scene: &mut Scene, scope: &MechScope, df: VecId, dx: VecId, f: Mbk, clear_mapped: bool) -> SimResult {
    if clear_mapped {
        for &s in &scope.mapped_states {
            scene.store.get_mut(s).write(df).fill(0.0);
        }
    }
    for &c in &scope.force_fields {
        // A component may be both: e.g. HexahedronFEMForceFieldAndMass adds its stiffness part,
        // then its mass part, as SOFA's Mass::addMBKdx does.
        let (rs, pure_mass, has_mass, rm, compliance) = {
            let ff = scene.role::<dyn ForceField>(c).expect("force field role");
            let mass = scene.role::<dyn Mass>(c);
            let rm = mass.map(|m| m.rayleigh_mass()).unwrap_or(0.0);
            (ff.rayleigh_stiffness(), ff.is_mass(), mass.is_some(), rm, ff.is_compliance())
        };
        // A compliance adds only its damping (and Rayleigh) part: SOFA's MBK·v pass calls it
        // with stiffness factor 0 (compliant spec §3.4).
        let k_eff = if compliance { f.b * rs } else { f.k + f.b * rs };
        if !pure_mass && (k_eff != 0.0 || f.b != 0.0) {
            with_io(scene, Some(scope), c, df, dx, None, IoCall::DForce { k: k_eff, b: f.b })?;
        }
        if has_mass {
            let m_eff = f.m - f.b * rm;
            if m_eff != 0.0 {
                let s = scene.role::<dyn Mass>(c).expect("mass role").state();
                let st = scene.store.get_mut(s);
                let mut dfv = st.take(df);
                scene.role::<dyn Mass>(c).expect("mass role").add_mdx(&mut dfv, scene.store.get(s).read(dx), m_eff);
                scene.store.get_mut(s).put(df, dfv);
            }
        }
    }
    accumulate_through_mappings(scene, scope, df, Some(dx), f.k)
}

/// SOFA's `readTotalForces`: the `force` vector of state `s`, plus the scene's registered
/// contributor ([`Scene::total_force_contributor`], `Λ` under FreeMotionAnimationLoop) when the
/// state holds it at its size. Summed as SOFA's `AccumulationVecId` does, `(0 + force) + Λ`
/// element by element (`0 + f` is `f`).
pub fn total_force(scene: &Scene, s: StateId) -> std::borrow::Cow<'_, [f64]> {
    let st = scene.store.get(s);
    let f = st.read(VecId::FORCE);
    match scene.total_force_contributor {
        Some(extra) if extra != VecId::FORCE && st.is_set(extra) && st.read(extra).len() == f.len() && !f.is_empty() => {
            std::borrow::Cow::Owned(f.iter().zip(st.read(extra)).map(|(a, b)| a + b).collect())
        }
        _ => std::borrow::Cow::Borrowed(f),
    }
}

/// SOFA's `MechanicalComputeGeometricStiffness(f)`: every mechanical mapping of the scope,
/// top-down, computes and keeps its geometric stiffness for its output's vector `f`
/// ([`crate::mechanics::Mapping::update_k`]). A state without `f` gives an empty vector.
pub fn update_geometric_stiffness(scene: &mut Scene, scope: &MechScope, f: VecId) -> SimResult {
    for &m in &scope.mappings {
        let (_, output) = mapping_io(scene, m);
        let Some(output) = output else { continue };
        let Scene { components, store, .. } = &mut *scene;
        let map = components[m].role_mut::<dyn Mapping>().expect("mapping role");
        map.update_k(store.get(output).read(f)).map_err(|e| label_error(scene, m, e))?;
    }
    Ok(())
}

/// `in += Jᵀ·out` through every mechanical mapping of the scope, bottom-up (a force-like vector
/// carried from mapped states to the independent ones).
pub fn accumulate_up(scene: &mut Scene, scope: &MechScope, f: VecId) -> SimResult {
    accumulate_through_mappings(scene, scope, f, None, 0.0)
}

/// Mappings bottom-up: `in += Jᵀ out` (and the geometric stiffness when `k ≠ 0` and `dx` given).
fn accumulate_through_mappings(scene: &mut Scene, scope: &MechScope, f: VecId, dx: Option<VecId>, k: f64) -> SimResult {
    for &m in scope.mappings.iter().rev() {
        let (inputs, output) = mapping_io(scene, m);
        let Some(output) = output else { continue };
        // The inputs' vectors are taken out and the output's read in place (a mapping's output
        // is none of its inputs); lists of up to four inputs are kept inline.
        let mut fins: SmallVec<[Vec<f64>; 4]> = inputs.iter().map(|s| scene.store.get_mut(*s).take(f)).collect();
        if scene.role::<dyn Mapping>(m).is_some_and(|map| map.needs_scene()) {
            // A scripted mapping reads the scene while it works: it gets a copy of the output's
            // vector (it has no geometric stiffness).
            let fout = scene.store.get(output).read(f).to_vec();
            let r = scene.with_role::<dyn Mapping, _>(m, |map, scene| {
                let mut slices: SmallVec<[&mut [f64]; 4]> = fins.iter_mut().map(|v| v.as_mut_slice()).collect();
                map.apply_jt_in_scene(scene, m, &mut slices, &fout)
            });
            for (s, v) in inputs.iter().zip(fins) {
                scene.store.get_mut(*s).put(f, v);
            }
            r.map_err(|e| label_error(scene, m, e))?;
            continue;
        }
        let r = {
            let Scene { components, store, .. } = &mut *scene;
            let map = components[m].role_mut::<dyn Mapping>().expect("mapping role");
            let fout = store.get(output).read(f);
            let mut slices: SmallVec<[&mut [f64]; 4]> = fins.iter_mut().map(|v| v.as_mut_slice()).collect();
            let mut r = map.apply_jt(&mut slices, fout);
            if r.is_ok() && k != 0.0 {
                if let Some(dx) = dx {
                    let dxs: SmallVec<[&[f64]; 4]> = inputs.iter().map(|s| store.get(*s).read(dx)).collect();
                    // SOFA's matrix-free `applyDJT` reads the output's `force` (`mparams->readF`), not
                    // the total forces; a stiffness kept by `update_k` takes precedence.
                    r = map.apply_djt(&mut slices, &dxs, store.get(output).read(VecId::FORCE), k);
                }
            }
            r
        };
        for (s, v) in inputs.iter().zip(fins) {
            scene.store.get_mut(*s).put(f, v);
        }
        r.map_err(|e| label_error(scene, m, e))?;
    }
    Ok(())
}

fn mapping_io(scene: &Scene, m: ComponentId) -> (StateSet, Option<StateId>) {
    let map = scene.role::<dyn Mapping>(m).expect("mapping role");
    (StateSet::from_slice(map.inputs()), map.output())
}

/// Calls `f` with every projective constraint of the scope, its node's parameters and its state.
/// A constraint between two states that are both in the scope is instead called, in its turn,
/// with both states through `pair` (first state, second state).
pub fn for_each_projective_or_pair(
    scene: &mut Scene,
    scope: &MechScope,
    mut f: impl FnMut(&MechParams, &mut dyn ProjectiveConstraint, &mut MState),
    mut pair: impl FnMut(&MechParams, &mut dyn ProjectiveConstraint, &mut MState, &mut MState),
) {
    for &c in &scope.projective {
        let node = scene.entry(c).node;
        let p = scene.params(node);
        let Scene { components, store, .. } = &mut *scene;
        let pc = components[c].role_mut::<dyn ProjectiveConstraint>().expect("projective role");
        let s = pc.state();
        match pc.first_state() {
            Some(s1) if s1 != s && scope.contains_state(s1) && scope.contains_state(s) => {
                let [a, b] = store.get_two_mut(s1, s);
                pair(&p, pc, a, b);
            }
            _ => f(&p, pc, store.get_mut(s)),
        }
    }
}

/// Calls `f` with every projective constraint of the scope, its node's parameters and its state
/// (the second state of a constraint between two states).
pub fn for_each_projective(scene: &mut Scene, scope: &MechScope, f: impl FnMut(&MechParams, &mut dyn ProjectiveConstraint, &mut MState)) {
    for_each_projective_or_pair(scene, scope, f, |_, _, _, _| {});
}

/// `dx = P·dx` for every projective constraint of the scope.
pub fn project_response(scene: &mut Scene, scope: &MechScope, dx: VecId) -> SimResult {
    for_each_projective_or_pair(
        scene,
        scope,
        |p, pc, st| {
            let mut v = st.take(dx);
            pc.project_response(p, &mut v);
            st.put(dx, v);
        },
        |p, pc, a, b| {
            let (mut v1, mut v2) = (a.take(dx), b.take(dx));
            pc.project_response_pair(p, &mut v1, &mut v2);
            a.put(dx, v1);
            b.put(dx, v2);
        },
    );
    Ok(())
}

/// Projects positions then velocities (constraints read the context time).
pub fn project_position_velocity(scene: &mut Scene, scope: &MechScope, x: VecId, v: VecId) -> SimResult {
    for_each_projective_or_pair(
        scene,
        scope,
        |p, pc, st| {
            if st.mapped {
                return;
            }
            let mut xv = st.take(x);
            pc.project_position(p, &mut xv);
            st.put(x, xv);
            let mut vv = st.take(v);
            pc.project_velocity(p, &mut vv);
            st.put(v, vv);
        },
        |p, pc, a, b| {
            if a.mapped || b.mapped {
                return;
            }
            let (mut x1, mut x2) = (a.take(x), b.take(x));
            pc.project_position_pair(p, &mut x1, &mut x2);
            a.put(x, x1);
            b.put(x, x2);
            let (mut v1, mut v2) = (a.take(v), b.take(v));
            pc.project_velocity_pair(p, &mut v1, &mut v2);
            a.put(v, v1);
            b.put(v, v2);
        },
    );
    Ok(())
}

/// Maps positions and velocities down through every mechanical mapping, top-down.
pub fn propagate_position_velocity(scene: &mut Scene, scope: &MechScope, x: VecId, v: VecId) -> SimResult {
    for &m in &scope.mappings {
        propagate_one(scene, m, x, true)?;
        propagate_one(scene, m, v, false)?;
    }
    Ok(())
}

/// Maps positions down through every mechanical mapping, top-down (SOFA's `propagateX`:
/// velocities are left as they are).
pub fn propagate_position(scene: &mut Scene, scope: &MechScope, x: VecId) -> SimResult {
    for &m in &scope.mappings {
        propagate_one(scene, m, x, true)?;
    }
    Ok(())
}

/// Maps a displacement down (`applyJ`), top-down.
pub fn propagate_dx(scene: &mut Scene, scope: &MechScope, dx: VecId) -> SimResult {
    for &m in &scope.mappings {
        propagate_one(scene, m, dx, false)?;
    }
    Ok(())
}

/// Applies one mapping to positions (`apply`) and velocities (`applyJ`): what a mapping created
/// or changed while the scene runs needs before its output is used.
pub fn apply_mapping(scene: &mut Scene, m: ComponentId, x: VecId, v: VecId) -> SimResult {
    propagate_one(scene, m, x, true)?;
    propagate_one(scene, m, v, false)
}

fn propagate_one(scene: &mut Scene, m: ComponentId, id: VecId, positions: bool) -> SimResult {
    let (inputs, output) = mapping_io(scene, m);
    let Some(output) = output else { return Ok(()) };
    let mut out = scene.store.get_mut(output).take(id);
    if scene.role::<dyn Mapping>(m).is_some_and(|map| map.needs_scene()) {
        // A scripted mapping reads the scene while it works: it gets copies of its inputs.
        let ins: SmallVec<[Vec<f64>; 4]> = inputs.iter().map(|s| scene.store.get(*s).read(id).to_vec()).collect();
        let r = scene.with_role::<dyn Mapping, _>(m, |map, scene| {
            let refs: SmallVec<[&[f64]; 4]> = ins.iter().map(|v| v.as_slice()).collect();
            map.apply_in_scene(scene, m, &mut out, &refs, positions)
        });
        scene.store.get_mut(output).put(id, out);
        return r.map_err(|e| label_error(scene, m, e));
    }
    let r = {
        let Scene { components, store, .. } = &mut *scene;
        let map = components[m].role_mut::<dyn Mapping>().expect("mapping role");
        let ins: SmallVec<[&[f64]; 4]> = inputs.iter().map(|s| store.get(*s).read(id)).collect();
        if positions {
            map.apply(&mut out, &ins)
        } else {
            map.apply_j(&mut out, &ins)
        }
    };
    scene.store.get_mut(output).put(id, out);
    r.map_err(|e| label_error(scene, m, e))
}

/// Carries the constraint rows of mapped states up to the independent states (`Jᵀ` on each row),
/// bottom-up: SOFA's accumulation of the constraint Jacobian through mechanical mappings.
pub fn propagate_constraint_rows_up(scene: &mut Scene, scope: &MechScope) -> SimResult {
    for &m in scope.mappings.iter().rev() {
        let (inputs, output) = mapping_io(scene, m);
        let Some(output) = output else { continue };
        if scene.store.get(output).constraint.is_empty() {
            continue;
        }
        let out = std::mem::take(&mut scene.store.get_mut(output).constraint);
        let mut ins: SmallVec<[crate::ConstraintRows; 4]> = inputs.iter().map(|s| std::mem::take(&mut scene.store.get_mut(*s).constraint)).collect();
        let r = {
            let map = scene.components[m].role_mut::<dyn Mapping>().expect("mapping role");
            let mut refs: SmallVec<[&mut crate::ConstraintRows; 4]> = ins.iter_mut().collect();
            map.apply_jt_constraints(&mut refs, &out)
        };
        for (s, c) in inputs.iter().zip(ins) {
            scene.store.get_mut(*s).constraint = c;
        }
        scene.store.get_mut(output).constraint = out;
        r.map_err(|e| label_error(scene, m, e))?;
    }
    Ok(())
}

/// `a = M⁻¹ f` for every mass (DOFs without mass are left untouched).
pub fn acc_from_f(scene: &mut Scene, scope: &MechScope, a: VecId, f: VecId) -> SimResult {
    for &c in &scope.masses {
        let Scene { components, store, .. } = &mut *scene;
        let mass = components[c].role::<dyn Mass>().expect("mass role");
        let s = mass.state();
        let mut av = store.get_mut(s).take(a);
        let r = mass.acc_from_f(&mut av, store.get(s).read(f));
        store.get_mut(s).put(a, av);
        r.map_err(|e| label_error(scene, c, e))?;
    }
    Ok(())
}

/// `v += g·dt` for every mass that integrates gravity separately.
pub fn add_separate_gravity(scene: &mut Scene, scope: &MechScope, dt: f64, v: VecId) {
    for &c in &scope.masses {
        let node = scene.entry(c).node;
        let g = scene.params(node).gravity;
        let Scene { components, store, .. } = &mut *scene;
        let mass = components[c].role::<dyn Mass>().expect("mass role");
        if mass.separate_gravity() {
            let s = mass.state();
            let mut vv = store.get_mut(s).take(v);
            mass.add_gravity_to_v(&mut vv, g, dt);
            store.get_mut(s).put(v, vv);
        }
    }
}

/// True when every mass of the scope is diagonal and none sits on a mapped state.
pub fn masses_are_diagonal(scene: &Scene, scope: &MechScope) -> bool {
    scope.masses.iter().all(|&c| {
        let m = scene.role::<dyn Mass>(c).expect("mass role");
        m.is_diagonal() && !scene.store.get(m.state()).mapped
    })
}

/// Matrix-free product `q = P·(m·M + b·B + k·K)·p` (SOFA's GraphScattered product).
pub fn mbk_product(scene: &mut Scene, scope: &MechScope, f: Mbk, p: VecId, q: VecId) -> SimResult {
    for &s in &scope.states {
        scene.store.get_mut(s).write(q).fill(0.0);
    }
    propagate_dx(scene, scope, p)?;
    add_mbkdx(scene, scope, q, p, f, false)?;
    project_response(scene, scope, q)
}

// ----- assembly -----------------------------------------------------------------------------------

/// Writes into the global matrix at the rows of the scope's main states. Contributions to mapped
/// states are kept aside and projected onto the main states with the mappings' Jacobians
/// (`Jᵀ·K·J`) when the assembly ends.
pub struct MatrixAccumulator<'a> {
    builder: &'a mut MatrixBuilder,
    scope: &'a MechScope,
    /// Contributions whose row or column belongs to a mapped state: (state, row, state, col, value).
    mapped: Vec<(StateId, usize, StateId, usize, f64)>,
    /// Block projections of projective constraints (see [`BlockProjection`]); empty for most
    /// scenes, then every contribution goes straight into the builder.
    projection: BlockProjection,
    error: Option<String>,
}

/// The block-diagonal projection `P̃` of the projective constraints that give blocks
/// ([`crate::mechanics::ProjectiveConstraint::projection_blocks`]): contributions are added as
/// `P̃·A·P̃` and `I − P̃` is added at the end of the assembly.
#[derive(Default)]
struct BlockProjection {
    /// Global scalar row → index of its block in `blocks`.
    row_block: std::collections::HashMap<usize, usize>,
    /// `(first global row, size, row-major block)`.
    blocks: Vec<(usize, usize, Vec<f64>)>,
}

impl BlockProjection {
    /// Composes `p` (applied after the blocks already recorded for that DOF) at global row `start`.
    fn push(&mut self, start: usize, ds: usize, p: Vec<f64>) {
        match self.row_block.get(&start) {
            Some(&b) if self.blocks[b].1 == ds => {
                let q = &self.blocks[b].2;
                let mut r = vec![0.0; ds * ds];
                for i in 0..ds {
                    for j in 0..ds {
                        let mut t = 0.0;
                        for k in 0..ds {
                            t += p[i * ds + k] * q[k * ds + j];
                        }
                        r[i * ds + j] = t;
                    }
                }
                self.blocks[b].2 = r;
            }
            _ => {
                let b = self.blocks.len();
                for k in 0..ds {
                    self.row_block.insert(start + k, b);
                }
                self.blocks.push((start, ds, p));
            }
        }
    }
}

impl MatrixAccumulator<'_> {
    /// Scalar rows of state `s` in the scope being assembled (0 outside of it).
    pub fn rows_of(&self, s: StateId) -> usize {
        self.scope.scalar_size(s)
    }

    /// Adds `v` at global `(gi, gj)`, through the block projections when there are some.
    fn put(&mut self, gi: usize, gj: usize, v: f64) {
        let r = if self.projection.blocks.is_empty() {
            self.builder.add(gi, gj, v)
        } else {
            let (bi, bj) = (self.projection.row_block.get(&gi).copied(), self.projection.row_block.get(&gj).copied());
            if bi.is_none() && bj.is_none() {
                self.builder.add(gi, gj, v)
            } else {
                // (P̃·A·P̃)_kl gets P̃_k,gi · v · P̃_gj,l for k in the block of gi, l in the block of gj.
                let side = |b: Option<usize>, g: usize, row: bool| -> Vec<(usize, f64)> {
                    match b {
                        None => vec![(g, 1.0)],
                        Some(b) => {
                            let (start, ds, ref p) = self.projection.blocks[b];
                            let c = g - start;
                            (0..ds).map(|k| (start + k, if row { p[k * ds + c] } else { p[c * ds + k] })).filter(|&(_, w)| w != 0.0).collect()
                        }
                    }
                };
                let (rows, cols) = (side(bi, gi, true), side(bj, gj, false));
                let mut r = Ok(());
                for &(k, wk) in &rows {
                    for &(l, wl) in &cols {
                        if let Err(e) = self.builder.add(k, l, wk * v * wl) {
                            r = Err(e);
                        }
                    }
                }
                r
            }
        };
        if let Err(e) = r {
            self.error.get_or_insert(e.to_string());
        }
    }

    /// True when a block projection touches global rows `[a, a + n)` or `[b, b + m)`.
    fn projected(&self, a: usize, n: usize, b: usize, m: usize) -> bool {
        !self.projection.blocks.is_empty()
            && ((a..a + n).any(|r| self.projection.row_block.contains_key(&r)) || (b..b + m).any(|r| self.projection.row_block.contains_key(&r)))
    }

    /// Where a contribution on `(si, sj)` goes: straight into the matrix (both main states of
    /// the scope), nowhere (both states outside the scope), or to [`project_mapped`] (a mapped
    /// state of the scope, or one state outside the scope: the other side of an interaction
    /// force field, which SOFA's `MatrixLinearSystem` takes for a mapped state).
    fn target(&self, si: StateId, sj: StateId) -> Target {
        let (ini, inj) = (self.scope.contains_state(si), self.scope.contains_state(sj));
        if !ini && !inj {
            return Target::Outside;
        }
        match (self.scope.offset(si), self.scope.offset(sj)) {
            (Some(oi), Some(oj)) => Target::Main(oi, oj),
            _ => Target::Mapped,
        }
    }

    /// Adds `v` at (row `i` of state `si`, column `j` of state `sj`), scalar indices.
    pub fn add(&mut self, si: StateId, i: usize, sj: StateId, j: usize, v: f64) {
        match self.target(si, sj) {
            Target::Main(oi, oj) => self.put(oi + i, oj + j, v),
            Target::Mapped => self.mapped.push((si, i, sj, j, v)),
            Target::Outside => {}
        }
    }

    /// Adds a 3×3 block at DOF rows `di`, `dj` of 3-component states.
    pub fn add_block3(&mut self, si: StateId, di: usize, sj: StateId, dj: usize, b: &[[f64; 3]; 3]) {
        match self.target(si, sj) {
            Target::Outside => {}
            Target::Main(oi, oj) if self.projected(oi + 3 * di, 3, oj + 3 * dj, 3) => {
                for (r, row) in b.iter().enumerate() {
                    for (c, &v) in row.iter().enumerate() {
                        self.put(oi + 3 * di + r, oj + 3 * dj + c, v);
                    }
                }
            }
            Target::Main(oi, oj) => {
                if let Err(e) = self.builder.add_block3(oi + 3 * di, oj + 3 * dj, b) {
                    self.error.get_or_insert(e.to_string());
                }
            }
            Target::Mapped => {
                for (r, row) in b.iter().enumerate() {
                    for (c, &v) in row.iter().enumerate() {
                        self.mapped.push((si, 3 * di + r, sj, 3 * dj + c, v));
                    }
                }
            }
        }
    }

    /// Adds a dense row-major block at scalar rows `i0`, columns `j0`.
    #[allow(clippy::too_many_arguments)] // two (state, offset) pairs plus the block's shape and data
    pub fn add_block(&mut self, si: StateId, i0: usize, sj: StateId, j0: usize, rows: usize, cols: usize, data: &[f64]) {
        match self.target(si, sj) {
            Target::Outside => {}
            Target::Main(oi, oj) if self.projected(oi + i0, rows, oj + j0, cols) && data.len() == rows * cols => {
                for r in 0..rows {
                    for c in 0..cols {
                        self.put(oi + i0 + r, oj + j0 + c, data[r * cols + c]);
                    }
                }
            }
            Target::Main(oi, oj) => {
                if let Err(e) = self.builder.add_block(oi + i0, oj + j0, rows, cols, data) {
                    self.error.get_or_insert(e.to_string());
                }
            }
            Target::Mapped => {
                if data.len() != rows * cols {
                    self.error.get_or_insert_with(|| format!("block data has {} values for a {rows}×{cols} block", data.len()));
                    return;
                }
                for r in 0..rows {
                    for c in 0..cols {
                        self.mapped.push((si, i0 + r, sj, j0 + c, data[r * cols + c]));
                    }
                }
            }
        }
    }
}

/// Where a matrix contribution goes (see `MatrixAccumulator::target`).
#[derive(Clone, Copy)]
enum Target {
    Main(usize, usize),
    Mapped,
    Outside,
}

/// Per state, the rows of its global Jacobian: `(global column, value)` lists.
pub(crate) type GlobalJacobians = IndexMap<StateId, Vec<Vec<(usize, f64)>>>;

/// Rows of the global Jacobian `G_s = ∂x_s/∂x_main` of every state of the scope: identity rows for
/// main states, `G_out = Σ_i J_i·G_in_i` for mapped states (top-down through the mappings).
///
/// With `ignore_outside`, an input outside the scope contributes nothing (the Compliant
/// assembly's "out of scope" parents: a fixed external object); otherwise it is an error.
pub(crate) fn global_jacobians(scene: &Scene, scope: &MechScope, ignore_outside: bool) -> SimResult<GlobalJacobians> {
    use std::collections::BTreeMap;
    let mut g = GlobalJacobians::default();
    for &(s, off) in &scope.offsets {
        let st = scene.store.get(s);
        let n = st.size * st.layout.deriv_size();
        g.insert(s, (0..n).map(|r| vec![(off + r, 1.0)]).collect());
    }
    for &m in &scope.mappings {
        let map = scene.role::<dyn Mapping>(m).expect("mapping role");
        let Some(out) = map.output() else { continue };
        let inputs = map.inputs();
        let js = map.jacobians().map_err(|e| label_error(scene, m, e))?;
        let st = scene.store.get(out);
        let n = st.size * st.layout.deriv_size();
        let mut rows: Vec<BTreeMap<usize, f64>> = vec![BTreeMap::new(); n];
        for (input, j) in inputs.iter().zip(&js) {
            let Some(gin) = g.get(input) else {
                if ignore_outside && !scope.contains_state(*input) {
                    continue;
                }
                return Err(label_error(scene, m, SimError::new("the input state of this mapping is outside of the solver's sub-tree")));
            };
            for (r, row) in j.rows.iter().enumerate().take(n) {
                for &(c, v) in row {
                    let Some(gr) = gin.get(c) else {
                        return Err(label_error(scene, m, SimError::new(format!("Jacobian column {c} is beyond the input state's size"))));
                    };
                    for &(col, w) in gr {
                        *rows[r].entry(col).or_insert(0.0) += v * w;
                    }
                }
            }
        }
        g.insert(out, rows.into_iter().map(|r| r.into_iter().collect()).collect());
    }
    Ok(g)
}

/// A multiplicative hasher for small integer keys (the global `(row, column)` pairs of
/// [`project_mapped`]); std's SipHash costs more than the arithmetic it indexes.
#[derive(Default, Clone, Copy)]
pub(crate) struct IndexHasher(u64);

impl std::hash::Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
}

pub(crate) type IndexMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IndexHasher>>;

/// Projects the contributions kept for mapped states onto the main states: `Gᵀ·K·G`.
///
/// Each global entry receives its terms `ga·v·gb` in the order of the contributions, starting
/// from 0.0; the entries are then put into the matrix in (row, column) order.
fn project_mapped(scene: &Scene, scope: &MechScope, acc: &mut MatrixAccumulator, ignore_outside: bool) -> SimResult {
    if acc.mapped.is_empty() {
        return Ok(());
    }
    let g = global_jacobians(scene, scope, ignore_outside)?;
    let crossed = split_crossed(scene, scope, acc);
    // Jacobian rows per state index (a hash lookup per contribution costs as much as the product).
    let mut by_index: Vec<&[Vec<(usize, f64)>]> = Vec::new();
    for (s, rows) in &g {
        if by_index.len() <= s.index() {
            by_index.resize(s.index() + 1, &[]);
        }
        by_index[s.index()] = rows;
    }
    let row_of = |s: StateId, i: usize| -> SimResult<&[(usize, f64)]> {
        by_index.get(s.index()).and_then(|r| r.get(i)).map(|r| r.as_slice()).ok_or_else(|| {
            SimError::new(format!(
                "a matrix contribution on a mapped state ('{}' row {i}) has no mapping to carry it to the solver's states",
                scene.store.get(s).name
            ))
        })
    };
    // Compact numbering of the global rows the contributions can reach.
    let mut states: Vec<StateId> = Vec::new();
    let mut last_pair = None;
    for &(si, _, sj, _, _) in &acc.mapped {
        if last_pair != Some((si, sj)) {
            for s in [si, sj] {
                if !states.contains(&s) {
                    states.push(s);
                }
            }
            last_pair = Some((si, sj));
        }
    }
    let mut compact = vec![u32::MAX; scope.size];
    let mut globals: Vec<usize> = Vec::new();
    for s in &states {
        for row in g.get(s).map(|r| r.as_slice()).unwrap_or(&[]) {
            for &(a, _) in row {
                if compact[a] == u32::MAX {
                    compact[a] = globals.len() as u32;
                    globals.push(a);
                }
            }
        }
    }
    let m = globals.len();
    // Sums of the terms per global (row, column), each entry starting from 0.0 and taking its
    // terms in the order of the contributions; `touched` lists the entries in first-touch order.
    let mut touched: Vec<(usize, usize, f64)> = Vec::new();
    if m * m <= 1 << 22 {
        let mut dense = vec![0.0f64; m * m];
        let mut seen = vec![false; m * m];
        let mut order: Vec<u32> = Vec::new();
        for &(si, i, sj, j, v) in &acc.mapped {
            let (gi, gj) = (row_of(si, i)?, row_of(sj, j)?);
            for &(a, ga) in gi {
                let t = ga * v;
                let base = compact[a] as usize * m;
                for &(b, gb) in gj {
                    let k = base + compact[b] as usize;
                    if !seen[k] {
                        seen[k] = true;
                        order.push(k as u32);
                    }
                    dense[k] += t * gb;
                }
            }
        }
        touched.extend(order.into_iter().map(|k| {
            let k = k as usize;
            (globals[k / m], globals[k % m], dense[k])
        }));
    } else {
        let mut slot: IndexMap<(usize, usize), u32> = IndexMap::default();
        for &(si, i, sj, j, v) in &acc.mapped {
            let (gi, gj) = (row_of(si, i)?, row_of(sj, j)?);
            for &(a, ga) in gi {
                let t = ga * v;
                for &(b, gb) in gj {
                    let next = touched.len() as u32;
                    let k = *slot.entry((a, b)).or_insert(next);
                    if k == next {
                        touched.push((a, b, 0.0));
                    }
                    touched[k as usize].2 += t * gb;
                }
            }
        }
    }
    acc.mapped.clear();
    touched.sort_unstable_by_key(|&(a, b, _)| (a, b));
    for (a, b, v) in touched {
        acc.put(a, b, v);
        if let Some(e) = acc.error.take() {
            return Err(SimError::new(e));
        }
    }
    project_crossed(scope, &g, crossed, acc)
}

/// Contributions on a pair of states whose top-most main states differ (see [`project_crossed`]).
struct Crossed {
    /// `(si, i, sj, j, v)` as in `MatrixAccumulator::mapped`.
    entries: Vec<(StateId, usize, StateId, usize, f64)>,
    /// Top-most main states of every state named in `entries` (none for a state outside the
    /// scope).
    top: IndexMap<StateId, Vec<StateId>>,
}

/// The top-most main states each state of the scope is mapped from (itself for a main state),
/// in the order the mappings name their inputs.
fn top_most_states(scene: &Scene, scope: &MechScope) -> IndexMap<StateId, Vec<StateId>> {
    let mut top: IndexMap<StateId, Vec<StateId>> = IndexMap::default();
    for &(s, _) in &scope.offsets {
        top.insert(s, vec![s]);
    }
    for &m in &scope.mappings {
        let map = scene.role::<dyn Mapping>(m).expect("mapping role");
        let Some(out) = map.output() else { continue };
        let mut t: Vec<StateId> = Vec::new();
        for input in map.inputs() {
            for &p in top.get(input).map(|v| v.as_slice()).unwrap_or(&[]) {
                if !t.contains(&p) {
                    t.push(p);
                }
            }
        }
        top.insert(out, t);
    }
    top
}

/// Takes out of `acc.mapped` the contributions whose two states do not have the same top-most
/// main states (a state outside the scope has none).
fn split_crossed(scene: &Scene, scope: &MechScope, acc: &mut MatrixAccumulator) -> Crossed {
    let mut crossed = Crossed { entries: Vec::new(), top: IndexMap::default() };
    let needs = |si: StateId, sj: StateId| si != sj || !scope.contains_state(si);
    if !acc.mapped.iter().any(|&(si, _, sj, _, _)| needs(si, sj)) {
        return crossed;
    }
    // SOFA projects mapped matrices only when the solver's sub-tree holds a mapping of any kind
    // (`MappingGraph::hasAnyMapping`, visual mappings included); without one, the blocks an
    // interaction force field has on a state outside the sub-tree are dropped.
    let any_mapping =
        scene.preorder(scope.node).into_iter().any(|n| scene.node(n).objects.iter().any(|&c| scene.entry(c).plays(crate::mechanics::MAPPING)));
    let top = top_most_states(scene, scope);
    let none: &[StateId] = &[];
    let differ = |si: StateId, sj: StateId| {
        let (a, b) = (top.get(&si).map_or(none, |v| v.as_slice()), top.get(&sj).map_or(none, |v| v.as_slice()));
        a.is_empty() || b.is_empty() || a.len() != b.len() || a.iter().any(|p| !b.contains(p))
    };
    let mut kept = Vec::with_capacity(acc.mapped.len());
    for e in acc.mapped.drain(..) {
        if needs(e.0, e.2) && differ(e.0, e.2) {
            if !any_mapping {
                continue;
            }
            for s in [e.0, e.2] {
                crossed.top.entry(s).or_insert_with(|| top.get(&s).cloned().unwrap_or_default());
            }
            crossed.entries.push(e);
        } else {
            kept.push(e);
        }
    }
    acc.mapped = kept;
    crossed
}

/// SOFA's `MatrixProjectionMethod` for a pair of states `(a, b)` whose top-most main states
/// differ: it projects the local matrix `K_ab` once for every pair `(p, q)` of main states in
/// `top(a) ∪ top(b)`, as `J_{a←p}ᵀ·K_ab·J_{b←q}` at the position of `(p, q)`, and where `a` is not
/// mapped from `p` (no Jacobian) it uses `K_ab` unprojected: row `i` of `a` lands on row `i` of
/// `p`. A state outside the solver's sub-tree, which SOFA's mapping graph takes for a mapped
/// state without inputs, thus puts the rows (columns) of its side of an interaction force field
/// on the first rows (columns) of the main state on the other side (`MatrixProjectionMethod.inl`,
/// `addMappedMatrixToGlobalMatrixEigen`; `MappingGraph::hasAnyMappingInput` is true for a state
/// the graph does not know). Entries beyond the matrix are dropped (SOFA writes out of bounds).
fn project_crossed(scope: &MechScope, g: &GlobalJacobians, crossed: Crossed, acc: &mut MatrixAccumulator) -> SimResult {
    if crossed.entries.is_empty() {
        return Ok(());
    }
    let range = |p: StateId| -> (usize, usize) {
        let off = scope.offset(p).unwrap_or(0);
        let next = scope.offsets.iter().map(|&(_, o)| o).filter(|&o| o > off).min().unwrap_or(scope.size);
        (off, next)
    };
    // The entries of row `i` of state `s` carried to main state `p`.
    let side = |s: StateId, i: usize, p: StateId, out: &mut Vec<(usize, f64)>| {
        let (lo, hi) = range(p);
        if crossed.top.get(&s).is_some_and(|t| t.contains(&p)) {
            if let Some(row) = g.get(&s).and_then(|r| r.get(i)) {
                out.extend(row.iter().copied().filter(|&(c, _)| c >= lo && c < hi));
            }
        } else if lo + i < scope.size {
            out.push((lo + i, 1.0));
        }
    };
    let mut slot: IndexMap<(usize, usize), usize> = IndexMap::default();
    let mut touched: Vec<(usize, usize, f64)> = Vec::new();
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for &(si, i, sj, j, v) in &crossed.entries {
        let mut inputs: Vec<StateId> = crossed.top[&si].clone();
        for &q in &crossed.top[&sj] {
            if !inputs.contains(&q) {
                inputs.push(q);
            }
        }
        rows.clear();
        cols.clear();
        for &p in &inputs {
            side(si, i, p, &mut rows);
            side(sj, j, p, &mut cols);
        }
        for &(a, ga) in &rows {
            let t = ga * v;
            for &(b, gb) in &cols {
                let next = touched.len();
                let k = *slot.entry((a, b)).or_insert(next);
                if k == next {
                    touched.push((a, b, 0.0));
                }
                touched[k].2 += t * gb;
            }
        }
    }
    touched.sort_unstable_by_key(|&(a, b, _)| (a, b));
    for (a, b, v) in touched {
        acc.put(a, b, v);
        if let Some(e) = acc.error.take() {
            return Err(SimError::new(e));
        }
    }
    Ok(())
}

/// What [`assemble_with`] puts into the matrix (SOFA's `MatrixLinearSystem` Data
/// `assembleStiffness`, `assembleMass`, `assembleDamping`, `assembleGeometricStiffness`,
/// `applyProjectiveConstraints`, `applyMappedComponents`). The default assembles everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AssemblyOptions {
    pub stiffness: bool,
    pub mass: bool,
    pub damping: bool,
    pub geometric_stiffness: bool,
    pub projective_constraints: bool,
    pub mapped_components: bool,
    /// Mapping inputs outside the scope carry nothing (instead of being an error): the Compliant
    /// assembly ignores such "out of scope" parents (compliant spec §4.2).
    pub ignore_outside_inputs: bool,
}

impl Default for AssemblyOptions {
    fn default() -> Self {
        AssemblyOptions {
            stiffness: true,
            mass: true,
            damping: true,
            geometric_stiffness: true,
            projective_constraints: true,
            mapped_components: true,
            ignore_outside_inputs: false,
        }
    }
}

/// Assembles `P (m·M + b·B + k·K) P` over the scope's main states into `builder`: stiffness,
/// then mass, then damping contributions of each force field in scope order, then the geometric
/// stiffness of the mappings (scaled by `k`); contributions on mapped states are projected with
/// `Jᵀ·K·J`; constrained rows and columns are cleared with a unit diagonal.
pub fn assemble(scene: &mut Scene, scope: &MechScope, f: Mbk, builder: &mut MatrixBuilder) -> SimResult {
    assemble_with(scene, scope, f, &AssemblyOptions::default(), builder)
}

/// [`assemble`] restricted to the contributions `opts` selects. Block projections
/// ([`crate::mechanics::ProjectiveConstraint::projection_blocks`]) turn the matrix into
/// `P̃·A·P̃ + (I − P̃)`; they are applied to every contribution as it is added.
pub fn assemble_with(scene: &mut Scene, scope: &MechScope, f: Mbk, opts: &AssemblyOptions, builder: &mut MatrixBuilder) -> SimResult {
    if builder.nrows() != scope.size {
        *builder = MatrixBuilder::new(scope.size);
    }
    builder.clear_values();
    let projection = if opts.projective_constraints { block_projection(scene, scope) } else { BlockProjection::default() };
    let mut acc = MatrixAccumulator { builder, scope, mapped: Vec::new(), projection, error: None };
    for &c in &scope.force_fields {
        let node = scene.entry(c).node;
        let p = scene.params(node);
        let ff = scene.role::<dyn ForceField>(c).expect("force field role");
        // A compliance's stiffness is not in the matrix: it enters the KKT system as C.
        let k_eff = if ff.is_compliance() { f.b * ff.rayleigh_stiffness() } else { f.k + f.b * ff.rayleigh_stiffness() };
        if opts.stiffness && !ff.is_mass() && k_eff != 0.0 {
            if ff.needs_scene() {
                scene.with_role::<dyn ForceField, _>(c, |ff, scene| ff.add_k_to_matrix_in_scene(scene, c, &p, &mut acc, k_eff))
            } else {
                ff.add_k_to_matrix(&p, &mut acc, k_eff)
            }
            .map_err(|e| label_error(scene, c, e))?;
        }
        let ff = scene.role::<dyn ForceField>(c).expect("force field role");
        if let (Some(m), true) = (scene.role::<dyn Mass>(c), opts.mass) {
            let m_eff = f.m - f.b * m.rayleigh_mass();
            if m_eff != 0.0 {
                m.add_m_to_matrix(&mut acc, m_eff).map_err(|e| label_error(scene, c, e))?;
            }
        }
        if opts.damping && f.b != 0.0 && !ff.is_mass() {
            ff.add_b_to_matrix(&p, &mut acc, f.b).map_err(|e| label_error(scene, c, e))?;
        }
        if let Some(e) = acc.error.take() {
            return Err(label_error(scene, c, SimError::unsupported(e)));
        }
    }
    if opts.geometric_stiffness && f.k != 0.0 {
        for &m in &scope.mappings {
            let map = scene.role::<dyn Mapping>(m).expect("mapping role");
            let Some(out) = map.output() else { continue };
            // SOFA's `buildGeometricStiffnessMatrix` reads the output's total forces.
            let f_out = total_force(scene, out);
            map.add_geometric_stiffness(&mut acc, &f_out, f.k).map_err(|e| label_error(scene, m, e))?;
            if let Some(e) = acc.error.take() {
                return Err(label_error(scene, m, SimError::unsupported(e)));
            }
        }
    }
    if opts.mapped_components {
        project_mapped(scene, scope, &mut acc, opts.ignore_outside_inputs)?;
    }
    // I − P̃ on the projected blocks.
    for (start, ds, p) in std::mem::take(&mut acc.projection.blocks) {
        for k in 0..ds {
            for l in 0..ds {
                let v = if k == l { 1.0 - p[k * ds + l] } else { -p[k * ds + l] };
                if v != 0.0 {
                    acc.builder.add(start + k, start + l, v).map_err(|e| SimError::new(e.to_string()))?;
                }
            }
        }
    }
    acc.builder.finish();
    if !opts.projective_constraints {
        return Ok(());
    }
    let rows = projected_rows(scene, scope);
    builder.apply_dirichlet(&rows).map_err(|e| SimError::new(format!("applying projective constraints to the matrix: {e}")))?;
    Ok(())
}

/// True when a projective constraint of the scope projects blocks of its DOFs
/// ([`crate::mechanics::ProjectiveConstraint::projection_blocks`]) rather than only fixing rows.
pub fn has_block_projections(scene: &mut Scene, scope: &MechScope) -> bool {
    !block_projection(scene, scope).blocks.is_empty()
}

/// The global rows (and columns) the scope's projective constraints clear, with a unit diagonal,
/// in constraint order.
pub fn projected_rows(scene: &mut Scene, scope: &MechScope) -> Vec<usize> {
    let mut rows = Vec::new();
    for &c in &scope.projective {
        let node = scene.entry(c).node;
        let p = scene.params(node);
        let pc_state = scene.role::<dyn ProjectiveConstraint>(c).expect("projective role").state();
        let Some(off) = scope.offset(pc_state) else {
            continue;
        };
        let ds = scene.store.get(pc_state).layout.deriv_size();
        let mut local = Vec::new();
        scene.components[c].role_mut::<dyn ProjectiveConstraint>().expect("projective role").projected_rows(&p, ds, &mut local);
        rows.extend(local.into_iter().map(|r| r + off));
    }
    rows
}

/// The block projections of the scope's projective constraints on main states, composed in
/// scope order when several act on the same DOF.
fn block_projection(scene: &mut Scene, scope: &MechScope) -> BlockProjection {
    let mut proj = BlockProjection::default();
    for &c in &scope.projective {
        let node = scene.entry(c).node;
        let p = scene.params(node);
        let pc = scene.components[c].role_mut::<dyn ProjectiveConstraint>().expect("projective role");
        let st = pc.state();
        let Some(off) = scope.offset(st) else {
            continue;
        };
        let ds = scene.store.get(st).layout.deriv_size();
        let mut blocks = Vec::new();
        pc.projection_blocks(&p, ds, &mut blocks);
        for (dof, b) in blocks {
            if b.len() == ds * ds {
                proj.push(off + dof * ds, ds, b);
            }
        }
    }
    proj
}

/// Copies a vector of the scope's main states into a global vector.
pub fn gather(scene: &Scene, scope: &MechScope, id: VecId, out: &mut Vec<f64>) {
    out.clear();
    out.resize(scope.size, 0.0);
    for &(s, off) in &scope.offsets {
        let v = scene.store.get(s).read(id);
        let n = v.len().min(scope.size - off);
        out[off..off + n].copy_from_slice(&v[..n]);
    }
}

/// Copies a global vector back into the scope's main states.
pub fn scatter(scene: &mut Scene, scope: &MechScope, id: VecId, g: &[f64]) {
    for &(s, off) in &scope.offsets {
        let st = scene.store.get_mut(s);
        let w = st.write(id);
        let n = w.len();
        w.copy_from_slice(&g[off..off + n]);
    }
}
