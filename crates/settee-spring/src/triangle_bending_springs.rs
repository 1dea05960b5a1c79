//! `TriangleBendingSprings`: a SpringForceField with one linear spring across each edge shared by
//! two triangles, between the two vertices opposite the edge (SOFA's `TriangleBendingSprings`).
//!
//! Unlike `TriangularBendingSprings` (its own force law, topology changes, per-edge data), this
//! class only builds springs for SpringForceField at init: the topology's triangles, then each
//! quad `(a b c d)` as `(a b c)` and `(a c d)` (so a quad's diagonal gets a spring too). Each
//! edge remembers the vertex opposite it in the first triangle met; every later triangle on the
//! same edge adds a spring from its own opposite vertex to that one. The springs take the first
//! value of `stiffness` and `damping` and the initial distance as rest length. As in SOFA, `init`
//! clears the springs first: the `spring` Data and index lists are replaced by the bending springs.

use std::collections::HashMap;

use settee_core::component::ForceField;
use settee_core::role::{Interaction, MechanicalState, Topology};
use settee_core::{component, Component, InitCtx, Layout, SimResult, VecId};

use crate::spring_force_field::{self as sff, LinearSpring, SpringData, SpringForceField};

/// The bending vertex pairs `(opposite vertex of the later triangle, opposite vertex of the
/// first)` of a triangle list, quads split into `(a b c)`, `(a c d)`, in creation order.
pub fn triangle_bending_pairs(triangles: &[[usize; 3]], quads: &[[usize; 4]]) -> Vec<(usize, usize)> {
    let mut opposite_of: HashMap<(usize, usize), usize> = HashMap::new();
    let mut out = Vec::new();
    let mut register = |a: usize, b: usize, c: usize| {
        for (p, q, opposite) in [(a, b, c), (b, c, a), (c, a, b)] {
            let edge = (p.min(q), p.max(q));
            match opposite_of.get(&edge) {
                None => {
                    opposite_of.insert(edge, opposite);
                }
                Some(&first) => out.push((opposite, first)),
            }
        }
    };
    for t in triangles {
        register(t[0], t[1], t[2]);
    }
    for q in quads {
        register(q[0], q[1], q[2]);
        register(q[0], q[2], q[3]);
    }
    out
}

/// Linear springs between the vertices opposite the edges shared by two triangles.
#[component(
    module = "Sofa.Component.SolidMechanics.Spring",
    roles = [ForceField],
    markers = [Interaction],
    templates = ["Vec2d", "Vec3d"],
    template_rule = FromPair,
    create = |args| TriangleBendingSprings::new(args.layout.unwrap_or(Layout::Vec3)),
    inherit = [SpringData],
    links = {
        /// first state (default: the node's mechanical state)
        object1: MechanicalState,
        /// second state (default: the node's mechanical state)
        object2: MechanicalState,
        /// triangle or quad topology (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct TriangleBendingSprings {
    inner: SpringForceField,
}

impl TriangleBendingSprings {
    pub fn new(layout: Layout) -> TriangleBendingSprings {
        TriangleBendingSprings { inner: SpringForceField::new(layout) }
    }

    pub fn springs(&self) -> &[LinearSpring] {
        self.inner.springs()
    }
}

impl Component for TriangleBendingSprings {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let layout = cx.entry().layout.unwrap_or(Layout::Vec3);
        // SOFA attaches both ends to the node's state.
        let s = cx.require_state()?;
        if cx.state_layout(s) != layout {
            return Err(cx.error(format!(
                "the mechanical state is a {} state but the force field has template {}",
                cx.state_layout(s).name(),
                layout.name()
            )));
        }
        let mesh = cx.require_mesh()?;
        let d = cx.data();
        let ks = d.get(SpringData::STIFFNESS).first().copied().unwrap_or(100.0);
        let kd = d.get(SpringData::DAMPING).first().copied().unwrap_or(5.0);
        let rayleigh = d.get(SpringData::RAYLEIGH_STIFFNESS);
        let pairs = triangle_bending_pairs(&mesh.triangles, &mesh.quads);
        let cs = layout.coord_size();
        let x = cx.read_vec(s, VecId::POSITION).to_vec();
        let n = x.len() / cs;
        if let Some(&(a, b)) = pairs.iter().find(|(a, b)| *a >= n || *b >= n) {
            return Err(cx.error(format!("the topology refers to point {} but the mechanical state has {n} DOFs", a.max(b))));
        }
        let springs: Vec<LinearSpring> = pairs
            .into_iter()
            .map(|(a, b)| {
                let mut n2 = 0.0;
                for c in 0..cs {
                    let t = x[a * cs + c] - x[b * cs + c];
                    n2 = if c == 0 { t * t } else { n2 + t * t };
                }
                LinearSpring::new(a, b, ks, kd, n2.sqrt())
            })
            .collect();
        sff::write_spring_data(cx.data_mut(), &springs);
        self.inner = SpringForceField::from_springs(layout, s, s, springs, rayleigh);
        Ok(())
    }

    fn bwd_init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.inner.bwd_init(cx)
    }
}

crate::spring_force_field::inner_springs_force_field!(TriangleBendingSprings);

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use settee_core::mechanics::MechScope;
    use settee_core::simulation::init_root;
    use settee_core::{Scene, VecId};

    use super::{triangle_bending_pairs, TriangleBendingSprings};
    use crate::test_support::*;

    #[test]
    fn opposite_vertices_of_shared_edges_are_joined() {
        // Triangles (0 1 2) and (2 1 3) share edge (1,2): spring (3, 0). A third triangle on the
        // same edge joins the first opposite vertex again.
        assert_eq!(triangle_bending_pairs(&[[0, 1, 2], [2, 1, 3]], &[]), [(3, 0)]);
        assert_eq!(triangle_bending_pairs(&[[0, 1, 2], [2, 1, 3], [1, 2, 4]], &[]), [(3, 0), (4, 0)]);
        // A quad's diagonal (0,2) joins 1 and 3; the edge (1,2) shared with the next quad
        // (1 4 5 2) (split into (1 4 5), (1 5 2)) joins 5 and 0.
        assert_eq!(triangle_bending_pairs(&[], &[[0, 1, 2, 3], [1, 4, 5, 2]]), [(3, 1), (2, 4), (5, 0)]);
    }

    #[test]
    fn springs_replace_explicit_ones_and_are_at_rest_initially() {
        let (f, mut s) = state_scene(&[("position", "0 0 0  1 0 0  0 1 0  1.5 1.2 0.3")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("triangles", "0 1 2  2 1 3")]);
        let id = add(&mut s, &f, Scene::ROOT, "TriangleBendingSprings", &[("stiffness", "100 7"), ("damping", "0.1"), ("spring", "0 1 5 0 1")]);
        init_root(&mut s, &f).unwrap();
        let sp = s.get::<TriangleBendingSprings>(id).unwrap().springs().to_vec();
        assert_eq!(sp.len(), 1);
        let len = (1.5f64 * 1.5 + 1.2 * 1.2 + 0.3 * 0.3).sqrt();
        assert_eq!((sp[0].m1, sp[0].m2, sp[0].ks, sp[0].kd), (3, 0, 100.0, 0.1));
        assert!((sp[0].initpos - len).abs() < 1e-15);
        assert_eq!(s.entry(id).data.reals("spring"), &[3.0, 0.0, 100.0, 0.1, sp[0].initpos]);
        let scope = MechScope::build(&s, Scene::ROOT);
        assert!(max_abs(&forces(&mut s, &scope)) < 1e-14);
        // Folding vertex 3 towards 0 by 0.5 along the spring: force 100·0.5 on each end.
        let mut x = Vec::new();
        settee_core::mechanics::gather(&s, &scope, VecId::POSITION, &mut x);
        let u = [1.5 / len, 1.2 / len, 0.3 / len];
        for c in 0..3 {
            x[9 + c] -= 0.5 * u[c];
        }
        settee_core::mechanics::scatter(&mut s, &scope, VecId::POSITION, &x);
        let fv = forces(&mut s, &scope);
        for c in 0..3 {
            assert!((fv[c] + 50.0 * u[c]).abs() < 1e-12, "{fv:?}");
            assert!((fv[9 + c] - 50.0 * u[c]).abs() < 1e-12, "{fv:?}");
        }
    }

    #[test]
    fn derivatives_are_consistent_on_a_folded_grid() {
        let (f, mut s) = state_scene(&[("position", "0 0 0  1 0 0  2 0 0  0 0 1  1 0 1  2 0 1  0 0 2  1 0 2  2 0 2")]);
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("quads", "0 1 4 3  1 2 5 4  3 4 7 6  4 5 8 7")]);
        let id = add(&mut s, &f, Scene::ROOT, "TriangleBendingSprings", &[("stiffness", "40"), ("damping", "0")]);
        init_root(&mut s, &f).unwrap();
        // 4 quads: 4 diagonals and 4 interior edges.
        assert_eq!(s.get::<TriangleBendingSprings>(id).unwrap().springs().len(), 8);
        let scope = MechScope::build(&s, Scene::ROOT);
        let mut x = Vec::new();
        settee_core::mechanics::gather(&s, &scope, VecId::POSITION, &mut x);
        let x: Vec<f64> = x.iter().zip(random_vec(27, 23)).map(|(a, b)| a + 0.2 * b).collect();
        settee_core::mechanics::scatter(&mut s, &scope, VecId::POSITION, &x);
        let dx = random_vec(27, 29);
        check_fd(&mut s, &dx, 1e-6, 1e-6);
        check_matrix(&mut s, &dx);
    }
}
