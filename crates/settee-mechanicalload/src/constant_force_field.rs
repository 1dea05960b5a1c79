//! `ConstantForceField`: a constant force on selected DOFs (mechanics spec §7.1).
//!
//! The forces come from, in order of precedence: `forces` (one per index), `force` (the same force
//! on every index), `totalForce` (shared equally by the indices). With none of them set the force
//! is zero (SOFA warns). `indices` defaults to every DOF; `indexFromEnd` counts them from the end.

use settee_core::component::ForceField;
use settee_core::role::Topology;
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// Constant forces applied to a set of DOFs.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d", "Rigid2d", "Rigid3d"],
    template_rule = FromState,
    create = |args| ConstantForceField::new(args.layout.unwrap_or(Layout::Vec3)),
    data = {
        /// indices of the DOFs the forces are applied to (all DOFs when empty)
        indices: Indices,
        /// indices count from the end of the state: index k is DOF n−1−k
        indexFromEnd: Bool = "false",
        /// one force per index
        forces: Derivs,
        /// force applied to every index when `forces` is not given
        force: Deriv,
        /// total force, shared equally by the indices (used when neither `forces` nor `force` is given)
        totalForce: Deriv,
        /// size of the drawn arrows (rendering only)
        showArrowSize: Real = "0",
        /// color of the drawn arrows (rendering only)
        showColor: Fixed(4) = "0.2 0.9 0.3 1",
        /// Rayleigh damping coefficient related to stiffness (no effect: this force field has no stiffness)
        rayleighStiffness: Real = "0",
    },
    links = {
        /// topology giving the number of points (default: the context topology, else the state size)
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct ConstantForceField {
    layout: Layout,
    state: Option<StateId>,
    indices: Vec<usize>,
    index_from_end: bool,
    /// One force per index (`deriv_size` reals each).
    forces: Vec<f64>,
    rayleigh_stiffness: f64,
}

impl ConstantForceField {
    pub fn new(layout: Layout) -> ConstantForceField {
        ConstantForceField { layout, state: None, indices: Vec::new(), index_from_end: false, forces: Vec::new(), rayleigh_stiffness: 0.0 }
    }

    /// The DOF indices loaded (as given: see `indexFromEnd`).
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// The force applied at each index (flat, `deriv_size` reals per index).
    pub fn forces(&self) -> &[f64] {
        &self.forces
    }
}

impl Component for ConstantForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        let ds = self.layout.deriv_size();
        // System size: the topology's points when there is one, else the state's size.
        let system_size =
            cx.topology().and_then(|t| cx.scene.mesh_of(t)).map(|m| m.nb_points()).filter(|&n| n > 0).unwrap_or_else(|| cx.state_size(s));

        let d = cx.data();
        self.index_from_end = d.get(Self::INDEX_FROM_END);
        self.rayleigh_stiffness = d.get(Self::RAYLEIGH_STIFFNESS);
        let given = d.get(Self::INDICES).to_vec();
        let indices: Vec<usize> = if d.is_given(Self::INDICES) && !given.is_empty() {
            if given.len() > system_size {
                return Err(cx.error(format!("{} indices given for {system_size} DOFs", given.len())));
            }
            if let Some((k, &i)) = given.iter().enumerate().find(|(_, &i)| i >= system_size) {
                return Err(cx.error(format!("indices[{k}] = {i} is beyond the {system_size} DOFs of the state")).hint("indices are 0-based"));
            }
            given
        } else {
            (0..system_size).collect()
        };
        let n = indices.len();

        let nan = |v: &[f64]| v.iter().any(|x| x.is_nan());
        let forces: Vec<f64>;
        let total: Vec<f64>;
        let mut single: Option<Vec<f64>> = None;
        // One force in `forces` is replicated on every index (SOFA's computeForceFromSingleForce).
        let one_in_forces = d.is_given(Self::FORCES) && d.get(Self::FORCES).len() == ds && n != 1;
        if d.is_given(Self::FORCES) && !one_in_forces {
            let f = d.get(Self::FORCES).to_vec();
            if nan(&f) {
                return Err(cx.error("invalid vector `forces`: it contains NaN"));
            }
            if f.len() != n * ds {
                return Err(cx
                    .error(format!("`forces` has {} forces but there are {n} indices", f.len() / ds))
                    .hint("give one force per index, or use force=\"…\" to apply the same force to every index"));
            }
            let mut t = vec![0.0; ds];
            for e in f.chunks_exact(ds) {
                for (a, b) in t.iter_mut().zip(e) {
                    *a += *b;
                }
            }
            forces = f;
            total = t;
        } else {
            let one = if one_in_forces {
                let f = d.get(Self::FORCES).to_vec();
                if nan(&f) {
                    return Err(cx.error("invalid vector `forces`: it contains NaN"));
                }
                f
            } else if d.is_given(Self::FORCE) {
                let f = d.get(Self::FORCE).to_vec();
                if nan(&f) {
                    return Err(cx.error("invalid `force`: it contains NaN"));
                }
                f
            } else if d.is_given(Self::TOTAL_FORCE) {
                let t = d.get(Self::TOTAL_FORCE).to_vec();
                if nan(&t) {
                    return Err(cx.error("invalid `totalForce`: it contains NaN"));
                }
                if n == 0 {
                    return Err(cx.error("cannot distribute totalForce: there are no indices"));
                }
                t.iter().map(|x| x / n as f64).collect()
            } else {
                let zero = d.get(Self::FORCE).to_vec();
                cx.warn("no force given (set one of forces, force or totalForce): the force is zero");
                zero
            };
            let mut one = one;
            one.resize(ds, 0.0);
            forces = one.iter().copied().cycle().take(n * ds).collect();
            total = one.iter().map(|x| x * n as f64).collect();
            single = Some(one);
        }

        self.indices = indices;
        self.forces = forces;
        let dm = cx.data_mut();
        dm.put(Self::INDICES, self.indices.clone());
        dm.put(Self::FORCES, self.forces.clone());
        dm.put(Self::TOTAL_FORCE, total);
        if let Some(one) = single {
            dm.put(Self::FORCE, one);
        }
        Ok(())
    }
}

impl ForceField for ConstantForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    /// `f[indices[k]] += forces[k]` (`f[n−1−indices[k]]` with `indexFromEnd`).
    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let ds = self.layout.deriv_size();
        let f = &mut io.f[0];
        let n = f.len() / ds;
        for (k, &i) in self.indices.iter().enumerate() {
            if i >= n {
                return Err(SimError::new(format!("ConstantForceField: index {i} is beyond the {n} DOFs of the state")));
            }
            let dof = if self.index_from_end { n - i - 1 } else { i };
            let src = &self.forces[k * ds..(k + 1) * ds];
            for (a, b) in f[dof * ds..(dof + 1) * ds].iter_mut().zip(src) {
                *a += *b;
            }
        }
        Ok(())
    }

    /// The derivative of a constant force is zero.
    fn add_dforce(&mut self, _p: &MechParams, _io: &mut ForceIo, _k: f64, _b: f64) -> SimResult {
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _k: f64) -> SimResult {
        Ok(())
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh_stiffness
    }
}

#[cfg(test)]
mod tests {
    use settee_core::simulation::init_root;
    use settee_core::{MechScope, Scene};

    use crate::test_support::*;

    fn forces_of(ff: &[(&str, &str)]) -> (Vec<f64>, Scene, settee_core::ComponentId) {
        let f = factory();
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  1 0 0  2 0 0")]);
        let c = add(&mut s, &f, Scene::ROOT, "ConstantForceField", ff);
        init_root(&mut s, &f).unwrap();
        let scope = MechScope::build(&s, Scene::ROOT);
        (forces(&mut s, &scope), s, c)
    }

    /// One force in `forces` for several indices is applied to each of them, as SOFA's
    /// `computeForceFromSingleForce` does (SOFA's Demos/skybox.scn); the total is n times it.
    #[test]
    fn a_single_force_in_forces_is_applied_to_every_index() {
        let (f, s, c) = forces_of(&[("forces", "0 0 1.1")]);
        assert_eq!(f, [0.0, 0.0, 1.1, 0.0, 0.0, 1.1, 0.0, 0.0, 1.1]);
        assert_eq!(s.entry(c).data.get(super::ConstantForceField::TOTAL_FORCE), &[0.0, 0.0, 1.1 * 3.0]);
        // One force per index is used as given.
        let (f, _, _) = forces_of(&[("indices", "0 2"), ("forces", "1 0 0  0 2 0")]);
        assert_eq!(f, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0]);
    }
}
