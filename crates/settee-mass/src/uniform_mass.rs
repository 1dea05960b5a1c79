//! `UniformMass`: the same mass on every DOF (a Rigid3 mass with inertia for rigid frames).

use settee_core::component::Mass;
use settee_core::{
    component, data_group, Component, ForceField, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId,
};

use crate::common::{self, GravityCenterData, MassData};
use crate::geometry::mat_vec;

/// A rigid body's mass: scalar mass and inertia (per unit mass) with its mass-scaled form.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidMass {
    pub mass: f64,
    pub volume: f64,
    pub inertia: [[f64; 3]; 3],
    pub inertia_mass: [[f64; 3]; 3],
    pub inv_inertia_mass: [[f64; 3]; 3],
}

impl RigidMass {
    pub fn new(mass: f64, volume: f64, inertia: [[f64; 3]; 3]) -> RigidMass {
        let mut r = RigidMass { mass, volume, inertia, inertia_mass: [[0.0; 3]; 3], inv_inertia_mass: [[0.0; 3]; 3] };
        r.recalc();
        r
    }
    fn recalc(&mut self) {
        for i in 0..3 {
            for j in 0..3 {
                self.inertia_mass[i][j] = self.inertia[i][j] * self.mass;
            }
        }
        self.inv_inertia_mass = invert3(&self.inertia_mass).unwrap_or([[0.0; 3]; 3]);
    }

    /// `a = M⁻¹·f` on DOF `i` of Rigid3 vectors: `f/m` on the linear part, the inverse
    /// mass-scaled inertia times the torque on the angular part.
    pub(crate) fn acc_from_f(&self, a: &mut [f64], f: &[f64], i: usize) {
        let ang = mat_vec(&self.inv_inertia_mass, &f[i * 6 + 3..i * 6 + 6]);
        for c in 0..3 {
            a[i * 6 + c] = f[i * 6 + c] / self.mass;
            a[i * 6 + 3 + c] = ang[c];
        }
    }

    /// `factor·M` on the 6×6 block of DOF `i` of state `s`: the mass on the linear diagonal, the
    /// mass-scaled inertia on the angular block.
    pub(crate) fn add_to_matrix(&self, acc: &mut MatrixAccumulator, s: StateId, i: usize, factor: f64) {
        let m = self.mass * factor;
        for c in 0..3 {
            acc.add(s, i * 6 + c, s, i * 6 + c, m);
        }
        let mut block = [0.0; 9];
        for r in 0..3 {
            for c in 0..3 {
                block[r * 3 + c] = self.inertia_mass[r][c] * factor;
            }
        }
        acc.add_block(s, i * 6 + 3, s, i * 6 + 3, 3, 3, &block);
    }
}

fn invert3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let det = m[0][0] * (m[1][1] * m[2][2] - m[2][1] * m[1][2]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if det == 0.0 {
        return None;
    }
    let mut r = [[0.0; 3]; 3];
    r[0][0] = (m[1][1] * m[2][2] - m[2][1] * m[1][2]) / det;
    r[0][1] = (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det;
    r[0][2] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det;
    r[1][0] = (m[1][2] * m[2][0] - m[1][0] * m[2][2]) / det;
    r[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det;
    r[1][2] = (m[1][0] * m[0][2] - m[0][0] * m[1][2]) / det;
    r[2][0] = (m[1][0] * m[2][1] - m[2][0] * m[1][1]) / det;
    r[2][1] = (m[2][0] * m[0][1] - m[0][0] * m[2][1]) / det;
    r[2][2] = (m[0][0] * m[1][1] - m[1][0] * m[0][1]) / det;
    Some(r)
}

const IDENTITY: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// The drawing Data of `UniformMass` after those of the masses that display their center of
/// gravity ([`GravityCenterData`]).
#[data_group(data = {
    /// rendering only
    showInitialCenterOfGravity: Bool = "false",
    /// rendering only
    showX0: Bool = "false",
})]
pub struct UniformMassDrawData;

/// A rigid mass's inertia may be written as SOFA's matrix reader reads a `Mat3x3`: rows in
/// brackets, separated by commas (`15 15 [20 0 0,0 20 0,0 0 20]`). Only a rigid mass holds a
/// matrix, and SOFA's vector readers refuse brackets, so the rewrite cannot change how any other
/// text reads; a link (`@…`) is left alone.
#[allow(clippy::ptr_arg)] // the signature every preparse hook has
pub fn read_inertia_brackets(attrs: &mut Vec<(String, String)>) {
    for (name, value) in attrs.iter_mut() {
        if name == "vertexMass" && value.contains('[') && !value.trim_start().starts_with('@') {
            *value = value.replace(['[', ']', ','], " ");
        }
    }
}

/// The same mass on every degree of freedom (with a rotational inertia for rigid frames).
#[component(
    module = "Sofa.Component.Mass",
    roles = [Mass, ForceField],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d", "Rigid2d", "Rigid3d"],
    template_rule = FromState,
    create = |args| UniformMass::new(args.layout.unwrap_or(Layout::Vec3)),
    preparse = read_inertia_brackets,
    data = {
        /// mass of each DOF (Rigid3: `mass volume I00 I01 … I22`, inertia per unit mass; the inertia may be written as SOFA's matrices are, `[I00 I01 I02,I10 I11 I12,I20 I21 I22]`); no default: set vertexMass or totalMass (or a Rigid3 filename), as SOFA refuses a UniformMass with neither; after init, the mass of each DOF
        vertexMass: Reals,
        /// total mass, shared equally by the DOFs (takes precedence over vertexMass); no default (see vertexMass); after init, vertexMass × the number of DOFs
        totalMass: Real,
        /// Rigid3 only: .rigid file giving mass, volume and inertia
        filename: FileName = "unused",
        /// DOFs carrying mass (all when empty)
        indices: Indices,
        /// if valid, only the DOFs lo..hi carry mass
        localRange: Fixed(2) = "-1 -1",
        /// keep the total mass constant under topological changes
        preserveTotalMass: Bool = "false",
        /// unused
        compute_mapping_inertia: Bool = "false",
    },
    inherit = [Self, GravityCenterData, UniformMassDrawData, MassData],
)]
#[derive(Clone)]
pub struct UniformMass {
    layout: Layout,
    state: Option<StateId>,
    /// Number of DOFs of the state at init.
    size: usize,
    /// Mass per DOF (for rigids: the scalar part).
    mass: f64,
    rigid: RigidMass,
    /// DOFs carrying mass; `None` = all.
    indices: Option<Vec<usize>>,
    separate_gravity: bool,
    rayleigh_mass: f64,
    rayleigh_stiffness: f64,
    valid: bool,
    /// `totalMass` as SOFA holds it (the given value, else vertexMass × the DOFs carrying mass).
    total_mass: f64,
    /// `preserveTotalMass`: under topological changes keep the total (else the vertex mass).
    preserve_total_mass: bool,
}

impl UniformMass {
    pub fn new(layout: Layout) -> UniformMass {
        UniformMass {
            layout,
            state: None,
            size: 0,
            mass: 1.0,
            rigid: RigidMass::new(1.0, 1.0, IDENTITY),
            indices: None,
            separate_gravity: false,
            rayleigh_mass: 0.0,
            rayleigh_stiffness: 0.0,
            valid: false,
            total_mass: 0.0,
            preserve_total_mass: false,
        }
    }

    /// The mass carried by each DOF.
    pub fn vertex_mass(&self) -> f64 {
        self.mass
    }

    /// The DOFs carrying the mass: the listed ones below `n`, else all `n` (one iterator type
    /// for both, so that nothing is boxed at each call).
    fn dofs(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        let (listed, all) = match &self.indices {
            Some(ix) => (ix.as_slice(), 0..0),
            None => (&[][..], 0..n),
        };
        listed.iter().copied().filter(move |&i| i < n).chain(all)
    }

    /// Reads a `.rigid` file: `vertexMass`/`mass`, `volm`, `inrt` keywords.
    fn read_rigid_file(&mut self, path: &std::path::Path, cx: &InitCtx) -> SimResult<bool> {
        let text = settee_core::budget::read_to_string(path).map_err(|e| cx.error(format!("cannot read '{}': {e}", path.display())))?;
        let mut mass_given = false;
        for (lineno, line) in text.lines().enumerate().skip(1) {
            let mut toks = line.split_whitespace();
            let Some(kw) = toks.next() else { continue };
            let nums: Vec<f64> = toks.filter_map(|t| t.parse().ok()).collect();
            let need = |n: usize| -> SimResult<()> {
                if nums.len() < n {
                    Err(cx.error(format!("{}:{}: '{kw}' expects {n} numbers", path.display(), lineno + 1)))
                } else {
                    Ok(())
                }
            };
            match kw {
                "mass" | "vertexMass" => {
                    need(1)?;
                    self.rigid.mass = nums[0];
                    mass_given = true;
                }
                "volm" => {
                    need(1)?;
                    self.rigid.volume = nums[0];
                }
                "inrt" => {
                    need(9)?;
                    for i in 0..3 {
                        for j in 0..3 {
                            self.rigid.inertia[i][j] = nums[3 * i + j];
                        }
                    }
                }
                "cntr" | "center" | "frme" | "grav" | "visc" | "stck" | "step" | "prec" => {}
                k if k.starts_with('#') => {}
                other => {
                    return Err(cx
                        .error(format!("{}:{}: unknown keyword '{other}' in .rigid file", path.display(), lineno + 1))
                        .hint("known keywords: mass, volm, inrt, cntr, frme, grav, visc, stck, step, prec"))
                }
            }
        }
        self.rigid.recalc();
        Ok(mass_given)
    }
}

impl Component for UniformMass {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        let n = cx.state_size(s);
        self.size = n;
        let d = cx.data();
        (self.separate_gravity, self.rayleigh_mass, self.rayleigh_stiffness) = MassData::read(d);
        let range = d.get(Self::LOCAL_RANGE).to_vec();
        let indices = d.get(Self::INDICES).to_vec();
        self.indices = if range.len() == 2 && range[0] >= 0.0 && range[1] >= range[0] {
            Some((range[0] as usize..=range[1] as usize).collect())
        } else if !indices.is_empty() {
            Some(indices)
        } else {
            None
        };
        let count = self.dofs(n).count();
        let vm = d.get(Self::VERTEX_MASS).to_vec();
        let (total_set, vm_set) = (d.is_given(Self::TOTAL_MASS), d.is_given(Self::VERTEX_MASS));
        let total = d.get(Self::TOTAL_MASS);
        let filename = d.get(Self::FILENAME).to_string();

        let mut file_mass = false;
        if self.layout == Layout::Rigid3 && !filename.is_empty() && filename != "unused" {
            let path = cx.resolve_file(&filename)?;
            file_mass = self.read_rigid_file(&path, cx)?;
        }
        if self.layout == Layout::Rigid3 && vm_set && !vm.is_empty() {
            self.rigid.mass = vm[0];
            if vm.len() >= 2 {
                self.rigid.volume = vm[1];
            }
            if vm.len() >= 11 {
                for i in 0..3 {
                    for j in 0..3 {
                        self.rigid.inertia[i][j] = vm[2 + 3 * i + j];
                    }
                }
            }
        }
        if total_set {
            if total < 0.0 {
                return Err(cx.error(format!("totalMass must be positive, got {total}")));
            }
            self.mass = if count > 0 { total / count as f64 } else { total };
        } else if vm_set || file_mass {
            self.mass = if self.layout == Layout::Rigid3 { self.rigid.mass } else { vm.first().copied().unwrap_or(1.0) };
            if self.mass < 0.0 {
                return Err(cx.error(format!("vertexMass must be positive, got {}", self.mass)));
            }
        } else {
            // SOFA up to v21.06 (the Compliant plugin's scenes) took totalMass = 1; current SOFA
            // reports an error and leaves the mass invalid. Keep the scenes running, and say so.
            cx.warn("neither totalMass nor vertexMass is set: totalMass = 1 is used (SOFA v21.06's default; current SOFA refuses this)");
            self.mass = if count > 0 { 1.0 / count as f64 } else { 1.0 };
        }
        self.rigid.mass = self.mass;
        self.rigid.recalc();
        self.valid = true;
        self.total_mass = if total_set { total } else { self.mass * count as f64 };
        self.preserve_total_mass = cx.data().get(Self::PRESERVE_TOTAL_MASS);
        cx.data_mut().put(Self::VERTEX_MASS, vec![self.mass]);
        cx.data_mut().put(Self::TOTAL_MASS, self.mass * count as f64);
        Ok(())
    }

    /// SOFA's `indices` follow the points (removed points leave the list, moved ones are renamed,
    /// added ones join it), then `updateMassOnResize` at the end of the change: with
    /// `preserveTotalMass` the vertex mass becomes `totalMass / #indices`, else the total becomes
    /// `#indices × vertexMass` (0 without DOFs).
    fn topology_changed(
        &mut self,
        cx: &mut InitCtx,
        _topology: settee_core::ComponentId,
        changes: &[settee_core::topology_change::TopologyChange],
    ) -> SimResult<settee_core::topology_change::Follow> {
        use settee_core::topology_change::{ElementKind, Follow, IndexSubset, TopologyChange};
        let Some(s) = self.state else { return Ok(Follow::NotConcerned) };
        let mut len = self.size;
        for c in changes.iter().filter(|c| c.kind() == ElementKind::Point) {
            if let Some(ix) = self.indices.as_mut() {
                let mut subset = IndexSubset { indices: std::mem::take(ix) };
                let r = subset.apply(ElementKind::Point, len, std::slice::from_ref(c));
                *ix = subset.indices;
                let after = r.map_err(|e| cx.error(format!("cannot follow the topological change: {e}")))?;
                if let TopologyChange::Added { .. } = c {
                    ix.extend(len..after);
                }
                len = after;
            } else {
                settee_core::topology_change::validate(c, len).map_err(|e| cx.error(format!("cannot follow the topological change: {e}")))?;
                len = match c {
                    TopologyChange::Added { count, .. } => len + count,
                    TopologyChange::Removed { indices, .. } => len - indices.len(),
                    TopologyChange::Renumbered { .. } => len,
                };
            }
        }
        let n = settee_core::topology_change::state_size_after(changes, cx.state_size(s));
        if len != n {
            return Err(cx
                .error(format!("after the topological change the mass counts {len} DOFs but the mechanical state has {n}"))
                .hint("the mass and its mechanical state must follow the same topology"));
        }
        self.size = n;
        let count = self.dofs(n).count();
        if count == 0 {
            self.total_mass = 0.0;
        } else if self.preserve_total_mass {
            self.mass = self.total_mass / count as f64;
        } else {
            self.total_mass = count as f64 * self.mass;
        }
        self.rigid.mass = self.mass;
        self.rigid.recalc();
        cx.data_mut().put(Self::VERTEX_MASS, vec![self.mass]);
        cx.data_mut().put(Self::TOTAL_MASS, self.total_mass);
        Ok(Follow::Followed)
    }
}

common::mass_force_field!(UniformMass);

impl UniformMass {
    /// Gravity: `f_i += g·m` on the DOFs carrying mass (linear part only for rigids).
    fn weight(&mut self, p: &MechParams, io: &mut ForceIo) -> SimResult {
        let m = self.mass;
        common::add_weights(io.f[0], self.layout, p.gravity, |n| self.dofs(n).map(|i| (i, m)), |g, m| g * m);
        Ok(())
    }
}

impl Mass for UniformMass {
    common::mass_items!(is_diagonal: |_| true, separate_gravity: |m| m.separate_gravity);

    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        if !self.valid {
            return;
        }
        let ds = self.layout.deriv_size();
        let n = res.len() / ds;
        if self.layout == Layout::Rigid3 {
            let m = self.rigid.mass * factor;
            let mut im = self.rigid.inertia_mass;
            for row in im.iter_mut() {
                for v in row.iter_mut() {
                    *v *= factor;
                }
            }
            for i in self.dofs(n) {
                let d = &dx[i * 6..i * 6 + 6];
                let a = mat_vec(&im, &d[3..6]);
                let r = &mut res[i * 6..i * 6 + 6];
                for c in 0..3 {
                    r[c] += d[c] * m;
                    r[3 + c] += a[c];
                }
            }
            return;
        }
        let m = if factor != 1.0 { self.mass * factor } else { self.mass };
        for i in self.dofs(n) {
            for c in 0..ds {
                res[i * ds + c] += dx[i * ds + c] * m;
            }
        }
    }

    fn acc_from_f(&self, a: &mut [f64], f: &[f64]) -> SimResult {
        if !self.valid {
            return Ok(());
        }
        let ds = self.layout.deriv_size();
        let n = a.len() / ds;
        if self.layout == Layout::Rigid3 {
            for i in self.dofs(n) {
                self.rigid.acc_from_f(a, f, i);
            }
            return Ok(());
        }
        for i in self.dofs(n) {
            for c in 0..ds {
                a[i * ds + c] = f[i * ds + c] / self.mass;
            }
        }
        Ok(())
    }

    fn add_gravity_to_v(&self, v: &mut [f64], g: [f64; 3], dt: f64) {
        common::add_gravity_to_v(v, self.layout.deriv_size(), self.layout.spatial_size(), g, dt);
    }

    fn add_m_to_matrix(&self, acc: &mut MatrixAccumulator, factor: f64) -> SimResult {
        if !self.valid {
            return Ok(());
        }
        let s = self.state.ok_or_else(|| SimError::new("UniformMass used before init"))?;
        let ds = self.layout.deriv_size();
        for i in self.dofs(self.size) {
            if self.layout == Layout::Rigid3 {
                self.rigid.add_to_matrix(acc, s, i, factor);
            } else {
                common::add_diagonal(acc, s, i, ds, self.mass * factor);
            }
        }
        Ok(())
    }

    fn kinetic_energy(&self, v: &[f64]) -> f64 {
        let ds = self.layout.deriv_size();
        let n = v.len() / ds;
        let mut e = 0.0;
        for i in self.dofs(n) {
            let d = &v[i * ds..(i + 1) * ds];
            if self.layout == Layout::Rigid3 {
                let a = mat_vec(&self.rigid.inertia_mass, &d[3..6]);
                e += (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) * self.rigid.mass + d[3] * a[0] + d[4] * a[1] + d[5] * a[2];
            } else {
                e += d.iter().map(|x| x * x).sum::<f64>() * self.mass;
            }
        }
        0.5 * e
    }
}
