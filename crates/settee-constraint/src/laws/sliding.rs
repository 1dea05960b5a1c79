//! `SlidingLagrangianConstraint` (lagrangian-constraints spec §5.4,
//! `MODEL/SlidingLagrangianConstraint.inl`): point `P = x₁[sliding_point]` slides on the
//! segment `[A, B]` of object 2 (`A = x₂[axis_1]`, `B = x₂[axis_2]`).
//!
//! Directions are built from the current positions: for a degenerate axis (`|B − A| < ε`) the
//! three world axes, all bilateral (P tied to A); otherwise two bilateral directions orthogonal
//! to the axis (object 2's entries split between A and B by the clamped barycentric coordinate
//! of P's projection) and two unilateral end stops along `±u`. Object 1 gets `+dir`, object 2
//! `−dir` (the opposite of the contact convention). The law keeps `Jᵀλ` out of the states'
//! `Λ` and publishes `force = Σ dir·λ` instead (SOFA overrides `storeLambda`).

use settee_core::constraint::{ConstraintBuildIo, ConstraintLaw, ConstraintParams, ConstraintResolution, ViolationIo};
use settee_core::role::MechanicalState;
use settee_core::{component, Component, ComponentId, InitCtx, Layout, Scene, SimError, SimResult, StateId};

use super::{coord, cross, dot, neg, norm, normalized, pair_states_of, scale, second, sub, v3, vec3_or_rigid3, LawData, RowWriter, V3};
use crate::resolution::{BilateralResolution, UnilateralResolution};

/// Lagrangian-based partial fixation of DOFs of the model: a point slides on a segment.
#[component(
    module = "Sofa.Component.Constraint.Lagrangian.Model",
    roles = [ConstraintLaw],
    templates = ["Vec3d", "Rigid3d"],
    template_rule = FromPair,
    create = |args| SlidingLagrangianConstraint::empty(vec3_or_rigid3(args.layout)),
    inherit = [LawData],
    data = {
        /// index of the spliding point on the first model
        sliding_point: Int = "0",
        /// index of one end of the sliding axis
        axis_1: Int = "0",
        /// index of the other end of the sliding axis
        axis_2: Int = "0",
        /// force (impulse) used to solve the constraint
        force: Deriv,
    },
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
    },
)]
#[derive(Clone)]
pub struct SlidingLagrangianConstraint {
    /// The Jacobian entries of a build, kept for the next one.
    writer: RowWriter,
    layout: Layout,
    s1: Option<StateId>,
    s2: Option<StateId>,
    m1: usize,
    m2a: usize,
    m2b: usize,
    /// Directions of the last build (3: degenerate axis; 4: proj, ortho, u, −u).
    directions: Vec<V3>,
    /// Barycentric coordinate of P's projection towards B, clamped to [0, 1].
    bary: f64,
    /// `Σ directionᵢ·λᵢ` of the last solve (translation part; the rotation part is zero).
    force: V3,
}

impl SlidingLagrangianConstraint {
    fn empty(layout: Layout) -> SlidingLagrangianConstraint {
        SlidingLagrangianConstraint {
            writer: RowWriter::default(),
            layout,
            s1: None,
            s2: None,
            m1: 0,
            m2a: 0,
            m2b: 0,
            directions: Vec::new(),
            bary: 0.0,
            force: [0.0; 3],
        }
    }

    /// A law between `s1` and `s2` (for code and tests), Vec3 or Rigid3.
    pub fn new(
        layout: Layout,
        s1: StateId,
        s2: StateId,
        sliding_point: usize,
        axis_1: usize,
        axis_2: usize,
    ) -> SimResult<SlidingLagrangianConstraint> {
        if !matches!(layout, Layout::Vec3 | Layout::Rigid3) {
            return Err(SimError::new(format!("SlidingLagrangianConstraint has no {} template", layout.name())));
        }
        Ok(SlidingLagrangianConstraint {
            s1: Some(s1),
            s2: Some(s2),
            m1: sliding_point,
            m2a: axis_1,
            m2b: axis_2,
            ..SlidingLagrangianConstraint::empty(layout)
        })
    }

    /// The constraint force (impulse) of the last solve, `Σ directionᵢ·λᵢ` (SOFA's `force`).
    pub fn force(&self) -> V3 {
        self.force
    }

    /// The directions of the last build.
    pub fn directions(&self) -> &[V3] {
        &self.directions
    }

    fn degenerate(&self) -> bool {
        self.directions.len() == 3
    }

    /// A derivative block of the state's layout with linear part `d`.
    fn block(&self, d: V3) -> Vec<f64> {
        let mut b = vec![0.0; self.layout.deriv_size()];
        b[..3].copy_from_slice(&d);
        b
    }

    fn points(&self, x1: &[f64], x2: &[f64]) -> SimResult<(V3, V3, V3)> {
        let cs = self.layout.coord_size();
        Ok((v3(coord(x1, self.m1, cs)?), v3(coord(x2, self.m2a, cs)?), v3(coord(x2, self.m2b, cs)?)))
    }

    fn io_states(&self) -> SimResult<(usize, usize)> {
        let (s1, s2) = self.s1.zip(self.s2).ok_or_else(|| SimError::new("the sliding constraint has no states"))?;
        Ok((0, second(s1, s2)))
    }
}

fn index(cx: &InitCtx, name: &str, v: i64) -> SimResult<usize> {
    usize::try_from(v).map_err(|_| cx.error(format!("{name} must be a DOF index, not {v}")))
}

impl Component for SlidingLagrangianConstraint {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (s1, s2) = pair_states_of(cx, self.layout)?;
        self.s1 = Some(s1);
        self.s2 = Some(s2);
        let d = cx.data();
        let (a, b, c) = (d.get(Self::SLIDING_POINT), d.get(Self::AXIS_1), d.get(Self::AXIS_2));
        self.m1 = index(cx, "sliding_point", a)?;
        self.m2a = index(cx, "axis_1", b)?;
        self.m2b = index(cx, "axis_2", c)?;
        Ok(())
    }

    /// Publishes the last solve's force in the `force` Data.
    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let v = self.block(self.force);
        scene.components[me].data.put(Self::FORCE, v);
        Ok(())
    }
}

impl ConstraintLaw for SlidingLagrangianConstraint {
    fn states(&self) -> settee_core::scratch::StateSet {
        self.s1.into_iter().chain(self.s2).collect()
    }

    fn build_constraint_matrix(&mut self, _cp: &ConstraintParams, io: &mut ConstraintBuildIo, first_row: usize) -> SimResult<usize> {
        let (k1, k2) = self.io_states()?;
        let (p, a, b) = self.points(io.x[k1], io.x[k2])?;
        let axis = sub(b, a);
        let ab = norm(axis);
        self.directions.clear();
        self.bary = 0.0;
        if ab < f64::EPSILON {
            self.directions.extend([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
        } else {
            let u = normalized(axis);
            let r = dot(sub(p, a), u);
            let r2 = r / ab;
            let bary = if r2 < 0.0 { 0.0 } else { r2 };
            self.bary = if bary > 1.0 { 1.0 } else { bary };
            let proj = [a[0] + u[0] * r, a[1] + u[1] * r, a[2] + u[2] * r];
            let mut dir_proj = sub(p, proj);
            if norm(dir_proj) < f64::EPSILON {
                // P on the axis: any direction orthogonal to it.
                let mut xv = [1.0, 0.0, 0.0];
                if norm(cross(xv, u)) < f64::EPSILON {
                    xv[1] = 1.0;
                }
                dir_proj = cross(xv, u);
            }
            let dir_proj = normalized(dir_proj);
            let dir_ortho = normalized(cross(dir_proj, u));
            self.directions.extend([dir_proj, dir_ortho, u, neg(u)]);
        }

        let mut w = std::mem::take(&mut self.writer);
        let dirs = self.directions.clone();
        if self.degenerate() {
            for (i, d) in dirs.iter().enumerate() {
                w.set(k1, first_row + i, self.m1, &self.block(*d));
                w.add(k2, first_row + i, self.m2a, &self.block(neg(*d)));
            }
        } else {
            let bary = self.bary;
            for (i, d) in dirs[..2].iter().enumerate() {
                let row = first_row + i;
                w.add(k1, row, self.m1, &self.block(*d));
                w.add(k2, row, self.m2a, &self.block(scale(neg(*d), 1.0 - bary)));
                w.add(k2, row, self.m2b, &self.block(scale(neg(*d), bary)));
            }
            let row = first_row + 2;
            w.set(k1, row, self.m1, &self.block(dirs[2]));
            w.set(k1, row + 1, self.m1, &self.block(dirs[3]));
            w.add(k2, row, self.m2a, &self.block(neg(dirs[2])));
            w.add(k2, row + 1, self.m2b, &self.block(neg(dirs[3])));
        }
        let flushed = w.flush(&mut io.rows);
        self.writer = w;
        flushed?;
        Ok(self.directions.len())
    }

    fn constraint_violation(&mut self, _cp: &ConstraintParams, io: &ViolationIo, dfree: &mut [f64]) -> SimResult {
        if self.directions.is_empty() {
            return Ok(());
        }
        let (k1, k2) = self.io_states()?;
        let (p, a, b) = self.points(io.x[k1], io.x[k2])?;
        if self.degenerate() {
            dfree[..3].copy_from_slice(&sub(p, a));
            return Ok(());
        }
        let bary = self.bary;
        let new_proj = [b[0] * bary + a[0] * (1.0 - bary), b[1] * bary + a[1] * (1.0 - bary), b[2] * bary + a[2] * (1.0 - bary)];
        let p_to_proj = sub(p, new_proj);
        dfree[0] = dot(p_to_proj, self.directions[0]);
        dfree[1] = dot(p_to_proj, self.directions[1]);
        dfree[2] = dot(sub(p, a), self.directions[2]);
        dfree[3] = dot(sub(p, b), self.directions[3]);
        Ok(())
    }

    fn resolutions(&mut self, _cp: &ConstraintParams, out: &mut Vec<Box<dyn ConstraintResolution>>) {
        if self.degenerate() {
            for _ in 0..3 {
                out.push(Box::new(BilateralResolution::new(None)));
            }
        } else if !self.directions.is_empty() {
            out.push(Box::new(BilateralResolution::new(None)));
            out.push(Box::new(BilateralResolution::new(None)));
            out.push(Box::new(UnilateralResolution::new()));
            out.push(Box::new(UnilateralResolution::new()));
        }
    }

    fn store_lambda(&mut self, _cp: &ConstraintParams, lambda: &[f64], _converged: bool) {
        let mut f = [0.0; 3];
        for (d, l) in self.directions.iter().zip(lambda) {
            f = [f[0] + d[0] * l, f[1] + d[1] * l, f[2] + d[2] * l];
        }
        self.force = f;
    }

    fn stores_lambda_in_states(&self) -> bool {
        false
    }
}
