//! `QuadPressureForceField`: a constant pressure on selected quads (SOFA's
//! `QuadPressureForceField`).
//!
//! The quads are `quadList` (indices into the topology's quads, e.g. a BoxROI's `quadIndices`),
//! else, when `dmin ≠ dmax`, every quad whose four rest points satisfy
//! `dmin < normal·x < dmax`. Each quad's force is `pressure·area` with the area of its rest
//! position (the two triangles `(0,1,2)` and `(0,2,3)`), a quarter of it on each vertex. The force
//! does not depend on the positions: no derivative, no stiffness.

use settee_core::component::ForceField;
use settee_core::math::{at, cross, dot, norm, sub};
use settee_core::role::{MechanicalState, Topology};
use settee_core::{component, Component, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, SimError, SimResult, StateId};

/// Pressure forces on a set of quads.
#[component(
    module = "Sofa.Component.MechanicalLoad",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// Pressure force per unit area
        pressure: Deriv as Vec3 = "0 0 0",
        /// Indices of quads separated with commas where a pressure is applied
        quadList: Indices,
        /// Normal direction for the plane selection of quads
        normal: Fixed(3) as Reals = "0 0 0",
        /// Minimum distance from the origin along the normal direction
        dmin: Real = "0",
        /// Maximum distance from the origin along the normal direction
        dmax: Real = "0",
        /// draw quads which have a given pressure (rendering only)
        showForces: Bool = "false",
        /// Rayleigh damping coefficient related to stiffness (no effect: no stiffness)
        rayleighStiffness: Real = "0",
    },
    links = {
        /// mechanical state (default: the node's context state)
        mstate: MechanicalState,
        /// link to the topology container
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct QuadPressureForceField {
    state: Option<StateId>,
    /// The loaded quads (vertex indices).
    quads: Vec<[usize; 4]>,
    /// Per quad, `pressure·area` of the rest quad.
    forces: Vec<[f64; 3]>,
}

impl QuadPressureForceField {
    /// The force of each loaded quad (the whole quad's; each vertex gets a quarter).
    pub fn quad_forces(&self) -> &[[f64; 3]] {
        &self.forces
    }
}

impl Component for QuadPressureForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = crate::state_of_template(cx, Layout::Vec3)?;
        self.state = Some(s);
        let d = cx.data();
        let pressure = d.get(Self::PRESSURE);
        let list = d.get(Self::QUAD_LIST).to_vec();
        let normal = d.get(Self::NORMAL).to_vec();
        let (dmin, dmax) = (d.get(Self::DMIN), d.get(Self::DMAX));
        let mesh = cx.require_mesh()?;
        let rest = cx.rest_or_position(s);
        let n = rest.len() / 3;
        let selected: Vec<usize> = if !list.is_empty() {
            list
        } else if dmin != dmax {
            let normal = [normal[0], normal[1], normal[2]];
            let inside = |p: usize| {
                p < n && {
                    let dist = dot(at(&rest, p), normal);
                    dist > dmin && dist < dmax
                }
            };
            (0..mesh.quads.len()).filter(|&q| mesh.quads[q].iter().all(|&p| inside(p))).collect()
        } else {
            Vec::new()
        };
        self.quads.clear();
        self.forces.clear();
        for q in selected {
            let quad = *mesh.quads.get(q).ok_or_else(|| {
                cx.error(format!("quadList refers to quad {q} but the topology has {} quads", mesh.quads.len()))
                    .hint("quadList holds indices into the topology's quads (e.g. a BoxROI's quadIndices)")
            })?;
            if let Some(&p) = quad.iter().find(|&&p| p >= n) {
                return Err(cx.error(format!("quad {q} refers to point {p} but the mechanical state has {n} DOFs")));
            }
            let p = quad.map(|v| at(&rest, v));
            let area = 0.5 * norm(cross(sub(p[1], p[0]), sub(p[2], p[0]))) + 0.5 * norm(cross(sub(p[2], p[0]), sub(p[3], p[0])));
            self.quads.push(quad);
            self.forces.push(pressure.map(|c| c * area));
        }
        Ok(())
    }
}

impl ForceField for QuadPressureForceField {
    fn states(&self) -> settee_core::StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let f = &mut io.f[0];
        let n = f.len() / 3;
        if let Some(&p) = self.quads.iter().flatten().find(|&&p| p >= n) {
            return Err(SimError::new(format!("QuadPressureForceField: point {p} is beyond the state's {n} DOFs")));
        }
        for (quad, qf) in self.quads.iter().zip(&self.forces) {
            let force = qf.map(|c| c / 4.0);
            for &v in quad {
                for c in 0..3 {
                    f[3 * v + c] += force[c];
                }
            }
        }
        Ok(())
    }

    /// The force does not depend on the positions.
    fn add_dforce(&mut self, _p: &MechParams, _io: &mut ForceIo, _k: f64, _b: f64) -> SimResult {
        Ok(())
    }

    fn add_k_to_matrix(&self, _p: &MechParams, _m: &mut MatrixAccumulator, _k: f64) -> SimResult {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::Scene;

    use super::QuadPressureForceField;
    use crate::test_support::*;

    /// Two quads: a 2×1 rectangle at z = 0 and a 1×1 square at z = 1 (sharing no point). The
    /// rectangle gets pressure·2, a quarter on each corner.
    #[test]
    fn pressure_times_rest_area_shared_by_the_corners() {
        for by_plane in [false, true] {
            let f = factory();
            let mut s = Scene::new("root");
            add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 0  2 0 0  2 1 0  0 1 0  0 0 1  1 0 1  1 1 1  0 1 1")]);
            add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("quads", "0 1 2 3  4 5 6 7")]);
            let selection: Vec<(&str, &str)> =
                if by_plane { vec![("normal", "0 0 1"), ("dmin", "-0.5"), ("dmax", "0.5")] } else { vec![("quadList", "0")] };
            let mut attrs = vec![("pressure", "0 0.4 -2")];
            attrs.extend(selection);
            let c = add(&mut s, &f, Scene::ROOT, "QuadPressureForceField", &attrs);
            init_root(&mut s, &f).unwrap();
            assert_eq!(s.get::<QuadPressureForceField>(c).unwrap().quad_forces(), &[[0.0, 0.8, -4.0]]);
            let scope = MechScope::build(&s, Scene::ROOT);
            let fv = forces(&mut s, &scope);
            let mut expected = vec![0.0; 24];
            for v in 0..4 {
                expected[3 * v + 1] = 0.2;
                expected[3 * v + 2] = -1.0;
            }
            assert_close(&fv, &expected, 1e-15);
            assert!(dforce(&mut s, &scope, &random_vec(24, 2), 1.0).iter().all(|v| *v == 0.0));
        }
    }
}
