//! `PrecomputedConstraintCorrection` (lagrangian-constraints spec §4): a dense compliance
//! `C ≈ dt·A⁻¹` of one state, computed once at `bwd_init` by driving the node's
//! EulerImplicitSolver with unit forces (or loaded from a `.comp` file), then used as is.
//!
//! Cache: SOFA shares the matrices process-wide by file name. A global static would make parallel
//! runs in one process (tests, `settee regress`) share matrices across scenes, so the cache here
//! is per scene: an instance reuses the matrix of another PrecomputedConstraintCorrection of the
//! same scene with the same file name.

use std::sync::Arc;

use settee_core::constraint::{ConstraintCorrection, ConstraintOrder, ConstraintParams, DenseMatrix};
use settee_core::mechanics::MechScope;
use settee_core::{component, Component, ComponentId, InitCtx, NodeId, OdeSolver, Scene, SimError, SimResult, StateId, VecId};

use super::common::{apply_correction, reset_contact_force, rows_of, Apply, Rows};

/// SOFA's default `ostream` formatting of a double (`%g`, 6 significant digits).
fn format_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let exp = x.abs().log10().floor() as i32;
    let trim = |s: String| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if !(-5..6).contains(&exp) {
        let s = format!("{:.5e}", x);
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        format!("{}e{}{:02}", trim(m.to_string()), if e < 0 { '-' } else { '+' }, e.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(format!("{:.*}", decimals, x))
    }
}

/// Reads a raw row-major `n × n` f64 file.
fn load_matrix(path: &std::path::Path, n: usize) -> Result<Vec<f64>, String> {
    let bytes = settee_core::budget::read_file(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() != n * n * 8 {
        return Err(format!("{} holds {} bytes, a {n}×{n} matrix of doubles needs {}", path.display(), bytes.len(), n * n * 8));
    }
    Ok(bytes.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap())).collect())
}

fn save_matrix(path: &std::path::Path, data: &[f64]) -> std::io::Result<()> {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).collect();
    std::fs::write(path, bytes)
}

/// SOFA's `Deriv · Deriv`: sequential for VecN, linear part + angular part for rigid derivs.
#[inline]
fn deriv_dot(a: &[f64], b: &[f64]) -> f64 {
    if a.len() == 6 {
        let l = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        let r = a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
        l + r
    } else {
        let mut s = 0.0;
        for (x, y) in a.iter().zip(b) {
            s += x * y;
        }
        s
    }
}

/// Constraint correction using a precomputed dense compliance dt·A⁻¹ of the object
#[component(
    module = "Sofa.Component.Constraint.Lagrangian.Correction",
    roles = [ConstraintCorrection],
    templates = ["Vec3d", "Vec1d", "Rigid3d"],
    template_rule = FromState,
    data = {
        /// rotate the constraints and the response with the nodes' rotations; inert with
        /// FreeMotionAnimationLoop (SOFA rotates a discarded copy of J), accepted and ignored
        rotations: Bool = "false",
        /// Rigid3: rotations relative to the rest orientation (only with rotations)
        restDeformations: Bool = "false",
        /// if true, always recompute the compliance (no file loading)
        recompute: Bool = "false",
        /// Add regularization factor times the identity matrix to the compliance W when solving
        /// constraints
        regularizationTerm: Real = "0",
        /// Scale on computed node's frame (drawing only)
        debugViewFrameScale: Real = "1",
        /// Precomputed compliance matrix data file
        #[alias("filePrefix")]
        fileCompliance: FileName,
        /// If not empty, the compliance will be saved in this repertory
        fileDir: Str,
    },
)]
#[derive(Clone, Default)]
pub struct PrecomputedConstraintCorrection {
    me: Option<ComponentId>,
    state: Option<StateId>,
    node: Option<NodeId>,
    ds: usize,
    nb_rows: usize,
    regularization: f64,
    /// The file name the matrix is known by (cache key).
    file_name: String,
    /// `C`, `nb_rows × nb_rows`, row-major: `C[v·ds + j][f·ds + i]` is the motion of DOF `v`,
    /// component `j` under a unit force on DOF `f`, component `i`.
    compliance: Option<Arc<Vec<f64>>>,
    /// DOFs appearing in J at the last built compliance, sorted, unique.
    active_dofs: Vec<usize>,
    // Unbuilt path (§4.5).
    local_of_row: std::collections::BTreeMap<usize, usize>,
    local_rows: Vec<usize>,
    local_w: Vec<f64>,
    local_f: Vec<f64>,
    active_local: Vec<usize>,
}

impl PrecomputedConstraintCorrection {
    fn state(&self) -> SimResult<StateId> {
        self.state.ok_or_else(|| SimError::new("PrecomputedConstraintCorrection used before init"))
    }

    fn matrix(&self) -> SimResult<&[f64]> {
        self.compliance.as_deref().map(|v| v.as_slice()).ok_or_else(|| SimError::new("PrecomputedConstraintCorrection has no compliance matrix"))
    }

    /// The precomputed compliance (row-major, `nb_rows²`), once computed or loaded.
    pub fn compliance_matrix(&self) -> Option<&[f64]> {
        self.compliance.as_deref().map(|v| v.as_slice())
    }

    /// The file name the matrix is saved as / looked up by.
    pub fn file_name(&self) -> &str {
        &self.file_name
    }

    /// `C[k1 block]·n2` summed over a row's entries (SOFA's `_sparseCompliance` of node `k1`).
    fn c_times_row(&self, c: &[f64], k1: usize, row: &[(usize, Vec<f64>)]) -> Vec<f64> {
        let (ds, n) = (self.ds, self.nb_rows);
        let mut vbuf = vec![0.0; ds];
        for (k2, n2) in row {
            for (ii, vb) in vbuf.iter_mut().enumerate() {
                let off = (k1 * ds + ii) * n + k2 * ds;
                for jj in 0..ds {
                    *vb += c[off + jj] * n2[jj];
                }
            }
        }
        vbuf
    }

    /// `J C Jᵀ` on a list of rows, summed as SOFA's built path (entry by entry of row a, for
    /// b ≥ a), times `factor`, mirrored, with `reg` once per Jacobian entry on the diagonal.
    fn jcjt(&self, c: &[f64], rows: &Rows, factor: f64, reg: f64, mut add: impl FnMut(usize, usize, f64)) {
        for (a, (_, row_a)) in rows.iter().enumerate() {
            for (k1, n1) in row_a {
                let sparse: Vec<Vec<f64>> = rows[a..].iter().map(|(_, rb)| self.c_times_row(c, *k1, rb)).collect();
                for (off, vb) in sparse.iter().enumerate() {
                    let b = a + off;
                    let w = deriv_dot(vb, n1) * factor;
                    add(a, b, w);
                    if a != b {
                        add(b, a, w);
                    } else {
                        add(a, a, reg);
                    }
                }
            }
        }
    }

    /// `dx := Σ_{f ∈ dofs} C[·][f]·force[f]` (SOFA's `computeDx`).
    fn compute_dx(&self, c: &[f64], force: &[f64], dofs: &[usize], nb_nodes: usize) -> Vec<f64> {
        let (ds, n) = (self.ds, self.nb_rows);
        let mut dx = vec![0.0; nb_nodes * ds];
        for &f in dofs {
            let fbuf = &force[f * ds..f * ds + ds];
            for v in 0..nb_nodes {
                for j in 0..ds {
                    let off = (v * ds + j) * n + f * ds;
                    let mut acc = 0.0;
                    for i in 0..ds {
                        acc += c[off + i] * fbuf[i];
                    }
                    dx[v * ds + j] += acc;
                }
            }
        }
        dx
    }

    /// The other instance of this scene already holding the matrix named `name`.
    fn cached(scene: &Scene, me: ComponentId, name: &str, n: usize) -> Option<Arc<Vec<f64>>> {
        scene.components.iter().filter(|(id, _)| *id != me).find_map(|(_, e)| {
            let other = e.obj.as_ref()?.as_any().downcast_ref::<PrecomputedConstraintCorrection>()?;
            (other.file_name == name && other.nb_rows == n).then(|| other.compliance.clone()).flatten()
        })
    }

    /// §4.1 step 4: one warm-up Euler step, then one step per unit force.
    fn precompute(&self, cx: &mut InitCtx, s: StateId, node: NodeId, dt: f64) -> SimResult<Vec<f64>> {
        let scene = &mut *cx.scene;
        let mut n = Some(node);
        let mut ode = None;
        while let Some(nd) = n {
            if let Some(o) = scene.node(nd).objects.iter().copied().find(|&o| scene.entry(o).class.name == "EulerImplicitSolver") {
                ode = Some(o);
                break;
            }
            n = scene.node(nd).parent();
        }
        let ode = ode.ok_or_else(|| {
            cx.error("no EulerImplicitSolver found in the context: the compliance cannot be precomputed")
                .hint("add an EulerImplicitSolver to the object's node, or give a precomputed file in fileCompliance")
        })?;
        let scene = &mut *cx.scene;
        if let Some(cg) = scene
            .node(node)
            .objects
            .iter()
            .copied()
            .find(|&o| scene.entry(o).class.name == "CGLinearSolver" && scene.entry(o).template == "GraphScattered")
        {
            let label = scene.entry(cg).label();
            scene.report(settee_core::Diagnostic::warning(format!(
                "{label}: SOFA tightens this CG (tolerance 1e-20, threshold 1e-35, 5000 iterations) while precomputing; here its own parameters are used"
            )));
        }
        let ode_node = scene.entry(ode).node;
        let scope = MechScope::build(scene, ode_node);
        let ds = self.ds;
        let nb_nodes = scene.store.get(s).size;
        let nb = self.nb_rows;
        let gravity = scene.node(node).context.gravity;
        scene.node_mut(node).context.gravity = [0.0; 3];
        let (x0, v0) = {
            let st = scene.store.get(s);
            (st.read(VecId::POSITION).to_vec(), st.read(VecId::VELOCITY).to_vec())
        };
        let step = |scene: &mut Scene| -> SimResult {
            if !scene.entry(ode).plays(settee_core::role::ODE_SOLVER) {
                return Err(SimError::new("the EulerImplicitSolver is not an ODE solver"));
            }
            scene.with_role::<dyn OdeSolver, _>(ode, |o, scene| o.solve(scene, &scope, dt, VecId::POSITION, VecId::VELOCITY))
        };
        let mut result = (|| -> SimResult<Vec<f64>> {
            scene.store.get_mut(s).write(VecId::EXTERNAL_FORCE).fill(0.0);
            step(scene)?;
            // SOFA: fact = (1/dt)·positionIntegrationFactor (= 1 for EulerImplicit).
            let fact = 1.0 / dt;
            let fact = scene.role::<dyn OdeSolver>(ode).map(|o| fact * o.integration_factors(dt).position).unwrap_or(fact);
            let mut c = vec![0.0; nb * nb];
            for f in 0..nb_nodes {
                for i in 0..ds {
                    {
                        let st = scene.store.get_mut(s);
                        let ext = st.write(VecId::EXTERNAL_FORCE);
                        ext.fill(0.0);
                        ext[f * ds + i] = 1.0;
                        st.write(VecId::VELOCITY).fill(0.0);
                        st.write(VecId::POSITION).copy_from_slice(&x0);
                    }
                    step(scene)?;
                    let vel = scene.store.get(s).read(VecId::VELOCITY);
                    for (row, v) in vel.iter().enumerate().take(nb) {
                        c[row * nb + f * ds + i] = fact * v;
                    }
                }
            }
            Ok(c)
        })();
        scene.node_mut(node).context.gravity = gravity;
        let st = scene.store.get_mut(s);
        st.write(VecId::EXTERNAL_FORCE).fill(0.0);
        st.write(VecId::VELOCITY).copy_from_slice(&v0);
        st.write(VecId::POSITION).copy_from_slice(&x0);
        if let Ok(c) = &mut result {
            if c.iter().any(|v| !v.is_finite()) {
                return Err(cx.error("the precomputed compliance is not finite (singular system?)"));
            }
        }
        result
    }
}

impl Component for PrecomputedConstraintCorrection {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.me = Some(cx.id);
        self.state = Some(cx.require_state()?);
        self.node = Some(cx.node());
        let d = cx.data();
        self.regularization = d.get(Self::REGULARIZATION_TERM);
        if d.get(Self::ROTATIONS) {
            cx.warn("rotations has no effect with FreeMotionAnimationLoop (as in SOFA, the rotated constraints are discarded)");
        }
        Ok(())
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = self.state()?;
        let node = cx.node();
        let (size, layout) = {
            let st = cx.scene.store.get(s);
            (st.size, st.layout)
        };
        self.ds = layout.deriv_size();
        self.nb_rows = size * self.ds;
        let nb = self.nb_rows;
        let dt = cx.scene.node(node).context.dt;
        let (file, dir, recompute) = {
            let d = cx.data();
            (d.get(Self::FILE_COMPLIANCE).to_string(), d.get(Self::FILE_DIR).to_string(), d.get(Self::RECOMPUTE))
        };
        let default_name = format!("{}-{}-{}.comp", cx.scene.node(node).name, nb, format_g(dt));
        self.file_name = default_name.clone();
        if !file.is_empty() {
            match load_matrix(std::path::Path::new(&file), nb) {
                Ok(c) => {
                    self.file_name = file;
                    self.compliance = Some(Arc::new(c));
                    return Ok(());
                }
                Err(e) => cx.warn(format!("fileCompliance: {e}; the compliance is recomputed as {default_name}")),
            }
        }
        if let Some(c) = Self::cached(cx.scene, cx.id, &self.file_name, nb) {
            self.compliance = Some(c);
            return Ok(());
        }
        let dir_path = (!dir.is_empty()).then(|| std::path::Path::new(&dir).join(&self.file_name));
        if let Some(p) = &dir_path {
            if p.exists() {
                match load_matrix(p, nb) {
                    Ok(c) => {
                        self.compliance = Some(Arc::new(c));
                        return Ok(());
                    }
                    Err(e) => cx.warn(format!("{e}; recomputing")),
                }
            }
        }
        if !recompute && dir_path.is_none() {
            let p = std::path::Path::new(&self.file_name);
            if p.exists() {
                if let Ok(c) = load_matrix(p, nb) {
                    self.compliance = Some(Arc::new(c));
                    return Ok(());
                }
            }
        }
        let c = self.precompute(cx, s, node, dt)?;
        if let Some(p) = &dir_path {
            if let Err(e) = save_matrix(p, &c) {
                cx.warn(format!("cannot save the compliance to {}: {e}", p.display()));
            }
        }
        self.compliance = Some(Arc::new(c));
        Ok(())
    }
}

impl ConstraintCorrection for PrecomputedConstraintCorrection {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_compliance_in_constraint_space(&mut self, scene: &mut Scene, cp: &ConstraintParams, w: &mut DenseMatrix) -> SimResult {
        let s = self.state()?;
        let factor = match cp.order {
            ConstraintOrder::Pos | ConstraintOrder::PosAndVel => 1.0,
            ConstraintOrder::Vel => 1.0 / cp.dt,
        };
        let rows = rows_of(scene, s);
        let mut dofs: Vec<usize> = rows.iter().flat_map(|(_, e)| e.iter().map(|(d, _)| *d)).collect();
        dofs.sort_unstable();
        dofs.dedup();
        self.active_dofs = dofs;
        if let Some((r, _)) = rows.iter().find(|(r, _)| *r >= w.n) {
            return Err(SimError::new(format!("constraint row {r} is beyond the {} rows of the compliance matrix", w.n)));
        }
        let c = Arc::clone(self.compliance.as_ref().ok_or_else(|| SimError::new("PrecomputedConstraintCorrection has no compliance matrix"))?);
        let ids: Vec<usize> = rows.iter().map(|(r, _)| *r).collect();
        self.jcjt(&c, &rows, factor, self.regularization, |a, b, v| w.add(ids[a], ids[b], v));
        Ok(())
    }

    fn compute_motion_correction(&mut self, scene: &mut Scene, _cp: &ConstraintParams, dx: VecId, f: VecId) -> SimResult {
        let s = self.state()?;
        let nb_nodes = scene.store.get(s).size;
        let force = scene.store.get(s).read(f).to_vec();
        let out = self.compute_dx(self.matrix()?, &force, &self.active_dofs, nb_nodes);
        scene.store.get_mut(s).write(dx).copy_from_slice(&out);
        Ok(())
    }

    fn apply_motion_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, v: VecId, dx: VecId, correction: VecId) -> SimResult {
        apply_correction(scene, self.state()?, cp, Apply::Motion, x, v, dx, correction, 1.0, 1.0 / cp.dt)
    }

    fn apply_position_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, x: VecId, dx: VecId, correction: VecId) -> SimResult {
        apply_correction(scene, self.state()?, cp, Apply::Position, x, VecId::VELOCITY, dx, correction, 1.0, 1.0 / cp.dt)
    }

    fn apply_velocity_correction(&mut self, scene: &mut Scene, cp: &ConstraintParams, v: VecId, dv: VecId, correction: VecId) -> SimResult {
        apply_correction(scene, self.state()?, cp, Apply::Velocity, VecId::POSITION, v, dv, correction, 1.0, 1.0 / cp.dt)
    }

    fn reset_for_unbuilt_resolution(&mut self, scene: &mut Scene, _cp: &ConstraintParams, f: &[f64], _sequence: &mut Vec<usize>) -> SimResult {
        let rows = rows_of(scene, self.state()?);
        self.local_of_row = rows.iter().enumerate().map(|(l, (r, _))| (*r, l)).collect();
        self.local_rows = rows.iter().map(|(r, _)| *r).collect();
        self.local_f = self.local_rows.iter().map(|&r| f.get(r).copied().unwrap_or(0.0)).collect();
        self.active_local = (0..rows.len()).filter(|&l| self.local_f[l].abs() > f64::EPSILON).collect();
        let m = rows.len();
        let mut lw = vec![0.0; m * m];
        let c = Arc::clone(self.compliance.as_ref().ok_or_else(|| SimError::new("PrecomputedConstraintCorrection has no compliance matrix"))?);
        self.jcjt(&c, &rows, 1.0, 0.0, |a, b, v| lw[a * m + b] += v);
        self.local_w = lw;
        Ok(())
    }

    fn has_constraint_number(&self, _scene: &Scene, row: usize) -> bool {
        self.local_of_row.contains_key(&row)
    }

    fn add_block_diagonal_compliance(
        &mut self,
        _scene: &mut Scene,
        _cp: &ConstraintParams,
        w: &mut DenseMatrix,
        begin: usize,
        end: usize,
    ) -> SimResult {
        let m = self.local_rows.len();
        for i in begin..=end {
            let Some(&li) = self.local_of_row.get(&i) else { continue };
            for j in begin..=end {
                let Some(&lj) = self.local_of_row.get(&j) else { continue };
                if i < w.n && j < w.n {
                    w.add(i, j, self.local_w[li * m + lj]);
                }
            }
            if i < w.n {
                w.add(i, i, self.regularization);
            }
        }
        Ok(())
    }

    fn add_constraint_displacement(&mut self, _scene: &mut Scene, d: &mut [f64], begin: usize, end: usize) -> SimResult {
        let m = self.local_rows.len();
        for (i, di) in d.iter_mut().enumerate().take(end.saturating_add(1)).skip(begin) {
            let Some(&li) = self.local_of_row.get(&i) else { continue };
            for &k in &self.active_local {
                *di += self.local_w[li * m + k] * self.local_f[k];
            }
        }
        Ok(())
    }

    /// SOFA reads the solver's live force array; here the increments are applied to a copy.
    fn set_constraint_dforce(&mut self, _scene: &mut Scene, df: &[f64], begin: usize, end: usize, update: bool) -> SimResult {
        for (i, dfi) in df.iter().enumerate().take(end.saturating_add(1)).skip(begin) {
            let Some(&li) = self.local_of_row.get(&i) else { continue };
            self.local_f[li] += dfi;
            if update && !self.active_local.contains(&li) {
                self.active_local.push(li);
            }
        }
        Ok(())
    }

    fn reset_contact_force(&mut self, scene: &mut Scene) -> SimResult {
        reset_contact_force(scene, self.state()?, VecId::FORCE)
    }

    /// SOFA's `applyContactForce`: `force = Jᵀλ`, `dx = C·force` over the DOFs `force` acts on,
    /// `x = x_free + dx`, `v = v_free + dx·(1/dt)`.
    fn apply_contact_force(&mut self, scene: &mut Scene, cp: &ConstraintParams, lambda: &[f64]) -> SimResult {
        let s = self.state()?;
        let rows = rows_of(scene, s);
        let nb_nodes = scene.store.get(s).size;
        let mut force = vec![0.0; nb_nodes * self.ds];
        let mut dofs = Vec::new();
        for (r, entries) in &rows {
            let l = lambda.get(*r).copied().unwrap_or(0.0);
            for (dof, b) in entries {
                dofs.push(*dof);
                for (k, x) in b.iter().enumerate() {
                    force[dof * self.ds + k] += x * l;
                }
            }
        }
        dofs.sort_unstable();
        dofs.dedup();
        let dx = self.compute_dx(self.matrix()?, &force, &dofs, nb_nodes);
        scene.store.get_mut(s).write(VecId::DX).copy_from_slice(&dx);
        scene.store.get_mut(s).write(VecId::FORCE).fill(0.0);
        let lcp = ConstraintParams { x: VecId::FREE_POSITION, v: VecId::FREE_VELOCITY, ..*cp };
        apply_correction(scene, s, &lcp, Apply::Motion, VecId::POSITION, VecId::VELOCITY, VecId::DX, VecId::DX, 1.0, 1.0 / cp.dt)
    }
}
