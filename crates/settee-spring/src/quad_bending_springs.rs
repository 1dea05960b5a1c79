//! `QuadBendingSprings`: a SpringForceField with bending springs across the edges shared by two
//! quads (SOFA's `QuadBendingSprings`).
//!
//! Each quad `(q0 q1 q2 q3)` registers its edges with the opposite edge of the same quad:
//! `(q0,q1)↔(q3,q2)`, `(q1,q2)↔(q0,q3)`, `(q2,q3)↔(q1,q0)`, `(q3,q0)↔(q2,q1)`, both pairs reversed
//! when the edge's first vertex is the larger. When an edge is met again, two springs join the
//! opposite edges of the two quads end to end (`(cd.0, ef.0)`, `(cd.1, ef.1)`), each vertex pair
//! once. The springs take the first value of `stiffness` and `damping` and the current distance
//! as rest length, and are appended to the explicit springs of the `spring` Data. Force,
//! Jacobian and matrix are SpringForceField's.

use std::collections::{HashMap, HashSet};

use settee_core::component::ForceField;
use settee_core::role::{Interaction, MechanicalState, Topology};
use settee_core::{component, Component, InitCtx, Layout, SimResult, VecId};

use crate::spring_force_field::{self as sff, LinearSpring, SpringData, SpringForceField};

/// The bending vertex pairs of a quad list, in creation order (`local_range` as SOFA's
/// `localRange`, `None` for an unbounded side).
pub fn quad_bending_pairs(quads: &[[usize; 4]], local_range: [Option<usize>; 2]) -> Vec<(usize, usize)> {
    let mut edge_map: HashMap<(usize, usize), (usize, usize)> = HashMap::new();
    let mut set: HashSet<(usize, usize)> = HashSet::new();
    let mut out = Vec::new();
    let mut add = |a: usize, b: usize| {
        if let Some(lo) = local_range[0] {
            if a < lo && b < lo {
                return;
            }
        }
        if let Some(hi) = local_range[1] {
            if a > hi && b > hi {
                return;
            }
        }
        if set.insert((a.min(b), a.max(b))) {
            out.push((a, b));
        }
    };
    for q in quads {
        let reg = [((q[0], q[1]), (q[3], q[2])), ((q[1], q[2]), (q[0], q[3])), ((q[2], q[3]), (q[1], q[0])), ((q[3], q[0]), (q[2], q[1]))];
        for (mut ab, mut cd) in reg {
            if ab.0 > ab.1 {
                ab = (ab.1, ab.0);
                cd = (cd.1, cd.0);
            }
            match edge_map.get(&ab) {
                None => {
                    edge_map.insert(ab, cd);
                }
                Some(&ef) => {
                    add(cd.0, ef.0);
                    add(cd.1, ef.1);
                }
            }
        }
    }
    out
}

fn bound(x: f64) -> Option<usize> {
    (x >= 0.0).then_some(x as usize)
}

/// Bending springs joining the opposite edges of adjacent quads.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    markers = [Interaction],
    templates = ["Vec2d", "Vec3d"],
    template_rule = FromPair,
    create = |args| QuadBendingSprings::new(args.layout.unwrap_or(Layout::Vec3)),
    inherit = [SpringData, Self],
    data = {
        /// optional DOF range [min max]: springs with both ends below min, or both ends above max, are not created (negative: no bound)
        localRange: Fixed(2) = "-1 -1",
    },
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
        /// quad topology (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct QuadBendingSprings {
    inner: SpringForceField,
}

impl QuadBendingSprings {
    pub fn new(layout: Layout) -> QuadBendingSprings {
        QuadBendingSprings { inner: SpringForceField::new(layout) }
    }

    /// All springs (explicit ones first, then the bending springs).
    pub fn springs(&self) -> &[LinearSpring] {
        self.inner.springs()
    }
}

impl Component for QuadBendingSprings {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let layout = cx.entry().layout.unwrap_or(Layout::Vec3);
        let (s1, s2) = sff::resolve_pair(cx, layout)?;
        let mesh = cx.require_mesh()?;
        let d = cx.data();
        let range = d.get(Self::LOCAL_RANGE);
        let local_range = [bound(range.first().copied().unwrap_or(-1.0)), bound(range.get(1).copied().unwrap_or(-1.0))];
        let ks = d.get(SpringData::STIFFNESS).first().copied().unwrap_or(100.0);
        let kd = d.get(SpringData::DAMPING).first().copied().unwrap_or(5.0);
        let explicit = d.is_given(SpringData::SPRING);
        let pairs = quad_bending_pairs(&mesh.quads, local_range);
        // The base SpringForceField: the explicit springs (or those of the index lists).
        self.inner.init(cx)?;
        if pairs.is_empty() {
            return Ok(());
        }
        // Rest lengths: the current distance in object1.
        let cs = layout.coord_size();
        let x = cx.read_vec(s1, VecId::POSITION).to_vec();
        let n = x.len() / cs;
        if let Some(&(a, b)) = pairs.iter().find(|(a, b)| *a >= n || *b >= n) {
            return Err(cx.error(format!("the quads refer to point {} but the mechanical state has {n} DOFs", a.max(b))));
        }
        let mut springs: Vec<LinearSpring> = if explicit { self.inner.springs().to_vec() } else { Vec::new() };
        for (a, b) in pairs {
            let mut n2 = 0.0;
            for c in 0..cs {
                let t = x[a * cs + c] - x[b * cs + c];
                n2 = if c == 0 { t * t } else { n2 + t * t };
            }
            springs.push(LinearSpring::new(a, b, ks, kd, n2.sqrt()));
        }
        sff::write_spring_data(cx.data_mut(), &springs);
        let rayleigh = cx.data().get(SpringData::RAYLEIGH_STIFFNESS);
        self.inner = SpringForceField::from_springs(layout, s1, s2, springs, rayleigh);
        Ok(())
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.inner.bwd_init(cx)
    }
}

crate::spring_force_field::inner_springs_force_field!(QuadBendingSprings);

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::{Scene, VecId};

    use super::{quad_bending_pairs, QuadBendingSprings};
    use crate::test_support::*;

    #[test]
    fn opposite_edges_of_adjacent_quads_are_joined() {
        // Quad (0 1 2 3) registers (1,2)↔(0,3); quad (1 4 5 2) meets (2,1) with its opposite
        // edge (5,4) reversed to (4,5): springs (4, 0) and (5, 3).
        assert_eq!(quad_bending_pairs(&[[0, 1, 2, 3], [1, 4, 5, 2]], [None, None]), [(4, 0), (5, 3)]);
        // localRange: both ends below min, or both above max, drop the spring.
        assert_eq!(quad_bending_pairs(&[[0, 1, 2, 3], [1, 4, 5, 2]], [Some(5), None]), [(5, 3)]);
        assert_eq!(quad_bending_pairs(&[[0, 1, 2, 3], [1, 4, 5, 2]], [None, Some(3)]), [(4, 0), (5, 3)]);
        let (f, mut s) = state_scene(&[("position", "0 0 0  1 0 0  1 1 0  0 1 0  2.5 0 0  2 1 0.5")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("quads", "0 1 2 3  1 4 5 2")]);
        let id = add(&mut s, &f, Scene::ROOT, "QuadBendingSprings", &[("stiffness", "20 7"), ("damping", "1")]);
        init_root(&mut s, &f).unwrap();
        let sp = s.get::<QuadBendingSprings>(id).unwrap().springs().to_vec();
        assert_eq!(sp.len(), 2);
        // First values of stiffness/damping; rest lengths from the initial positions.
        assert_eq!((sp[0].m1, sp[0].m2, sp[0].ks, sp[0].kd, sp[0].initpos), (4, 0, 20.0, 1.0, 2.5));
        assert_eq!((sp[1].m1, sp[1].m2), (5, 3));
        assert!((sp[1].initpos - 4.25f64.sqrt()).abs() < 1e-15);
        assert_eq!(s.entry(id).data.reals("spring"), &[4.0, 0.0, 20.0, 1.0, 2.5, 5.0, 3.0, 20.0, 1.0, sp[1].initpos]);
        // At the initial positions: no force.
        let scope = MechScope::build(&s, Scene::ROOT);
        assert!(max_abs(&forces(&mut s, &scope)) < 1e-14);
    }

    #[test]
    fn explicit_springs_come_first_and_derivatives_are_consistent() {
        let (f, mut s) = state_scene(&[]);
        add(&mut s, &f, Scene::ROOT, "RegularGridTopology", &[("n", "3 1 3"), ("min", "0 0 0"), ("max", "2 0 2")]);
        let id = add(&mut s, &f, Scene::ROOT, "QuadBendingSprings", &[("stiffness", "40"), ("damping", "0"), ("spring", "0 8 5 0 1")]);
        init_root(&mut s, &f).unwrap();
        let sp = s.get::<QuadBendingSprings>(id).unwrap().springs().to_vec();
        assert_eq!((sp[0].m1, sp[0].m2, sp[0].ks), (0, 8, 5.0));
        // 4 interior edges, 2 springs each, but the crossing pairs (1, 7) and (3, 5) come twice.
        assert_eq!(sp.len(), 1 + 6);
        let scope = MechScope::build(&s, Scene::ROOT);
        let mut x = Vec::new();
        settee_core::mechanics::gather(&s, &scope, VecId::POSITION, &mut x);
        let x: Vec<f64> = x.iter().zip(random_vec(27, 17)).map(|(a, b)| a + 0.2 * b).collect();
        settee_core::mechanics::scatter(&mut s, &scope, VecId::POSITION, &x);
        let dx = random_vec(27, 19);
        check_fd(&mut s, &dx, 1e-6, 1e-6);
        check_matrix(&mut s, &dx);
    }
}
