//! `ValuesFromPositions`: per point, edge, triangle and tetrahedron, a value interpolated along
//! `direction` from `inputValues` (`fieldType="Scalar"`), or the `direction` vector itself
//! (`fieldType="Vector"`).
//!
//! `position` defaults to the rest positions of the context state, and the element lists to
//! those of the context topology, as SOFA links them. Scalar values need no position when
//! `inputValues` holds none (0) or one value (that value); with more, SOFA interpolates over
//! the scene's bounding box, which Settee does not compute: that case is refused.

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult, VecId};

const FIELD_TYPES: &[&str] = &["Scalar", "Vector"];

/// Interpolates values along a direction.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d", "Rigid3d"],
    create = |_| ValuesFromPositions,
    data = {
        /// Input values
        inputValues: Reals,
        /// Direction along which the values are interpolated
        direction: Fixed(3) as Vec3 = "0 1 0",
        /// Rest position coordinates of the degrees of freedom
        #[alias("rest_position")]
        position: Coords,
        /// Edge Topology
        edges: IndexTuples(2),
        /// Triangle Topology
        triangles: IndexTuples(3),
        /// Tetrahedron Topology
        tetrahedra: IndexTuples(4),
        /// Values of the points contained in the ROI
        values: Reals,
        /// Values of the edges contained in the ROI
        edgeValues: Reals,
        /// Values of the triangles contained in the ROI
        triangleValues: Reals,
        /// Values of the tetrahedra contained in the ROI
        tetrahedronValues: Reals,
        /// Vectors of the points contained in the ROI
        pointVectors: RealTuples(3),
        /// Vectors of the edges contained in the ROI
        edgeVectors: RealTuples(3),
        /// Vectors of the triangles contained in the ROI
        triangleVectors: RealTuples(3),
        /// Vectors of the tetrahedra contained in the ROI
        tetrahedronVectors: RealTuples(3),
        /// field type of output elements
        fieldType: Options(FIELD_TYPES) = "Scalar",
        /// draw vectors line (rendering only)
        drawVectors: Bool = "false",
        /// vector length visualisation (rendering only)
        drawVectorLength: Real = "10",
    },
)]
#[derive(Clone)]
pub struct ValuesFromPositions;

impl ValuesFromPositions {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let k = d.arity().coord.max(1);
        let n = d.get(Self::POSITION).len() / k;
        let counts = [n, d.get(Self::EDGES).len() / 2, d.get(Self::TRIANGLES).len() / 3, d.get(Self::TETRAHEDRA).len() / 4];
        let dir = d.get(Self::DIRECTION);
        let dir = [dir[0], dir[1], dir[2]];
        if d.get(Self::FIELD_TYPE) == "Vector" {
            let outs = [Self::POINT_VECTORS, Self::EDGE_VECTORS, Self::TRIANGLE_VECTORS, Self::TETRAHEDRON_VECTORS];
            for (r, c) in outs.into_iter().zip(counts) {
                cx.data_mut().put(r, dir.repeat(c));
            }
            return Ok(());
        }
        let input = d.get(Self::INPUT_VALUES).to_vec();
        let value = match input.len() {
            0 => 0.0,
            1 => input[0],
            _ => {
                return Err(cx
                    .error("interpolating several inputValues needs the scene's bounding box, which Settee does not compute")
                    .hint("give one input value, or use fieldType=\"Vector\""))
            }
        };
        let outs = [Self::VALUES, Self::EDGE_VALUES, Self::TRIANGLE_VALUES, Self::TETRAHEDRON_VALUES];
        for (r, c) in outs.into_iter().zip(counts) {
            cx.data_mut().put(r, vec![value; c]);
        }
        Ok(())
    }
}

impl Component for ValuesFromPositions {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        // SOFA links the unset inputs to the context state's rest positions and the context
        // topology's element lists.
        if !cx.data().is_given(Self::POSITION) {
            if let Ok(s) = cx.require_state() {
                let x0 = cx.read_vec(s, VecId::REST_POSITION).to_vec();
                cx.data_mut().put(Self::POSITION, x0);
            }
        }
        if let Ok(mesh) = cx.require_mesh() {
            if !cx.data().is_given(Self::EDGES) {
                cx.data_mut().put(Self::EDGES, mesh.edges.iter().flatten().copied().collect());
            }
            if !cx.data().is_given(Self::TRIANGLES) {
                cx.data_mut().put(Self::TRIANGLES, mesh.triangles.iter().flatten().copied().collect());
            }
            if !cx.data().is_given(Self::TETRAHEDRA) {
                cx.data_mut().put(Self::TETRAHEDRA, mesh.tetrahedra.iter().flatten().copied().collect());
            }
        }
        self.update(cx)
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::factory;
    use settee_core::simulation::init_root;
    use settee_core::testing::add;
    use settee_core::Scene;

    /// Vector field as in ValuesFromPositions_vectorField.scn: every point (3), edge (2),
    /// triangle (1) gets the direction (1, 1, 0); a single scalar input value is given to every
    /// element; several values are refused.
    #[test]
    fn vector_field_and_constant_values() {
        let f = factory();
        let mut s = Scene::new("root");
        let base = [("position", "0 0 0  1 0 0  0 1 0"), ("edges", "0 1  1 2"), ("triangles", "0 1 2")];
        let mut attrs = base.to_vec();
        attrs.extend([("direction", "1 1 0"), ("fieldType", "Vector")]);
        let v = add(&mut s, &f, Scene::ROOT, "ValuesFromPositions", &attrs);
        let mut attrs = base.to_vec();
        attrs.push(("inputValues", "2.5"));
        let c = add(&mut s, &f, Scene::ROOT, "ValuesFromPositions", &attrs);
        init_root(&mut s, &f).unwrap();
        let d = &s.entry(v).data;
        assert_eq!(d.get(ValuesFromPositions::POINT_VECTORS), [1.0, 1.0, 0.0].repeat(3));
        assert_eq!(d.get(ValuesFromPositions::EDGE_VECTORS), [1.0, 1.0, 0.0].repeat(2));
        assert_eq!(d.get(ValuesFromPositions::TRIANGLE_VECTORS), [1.0, 1.0, 0.0]);
        assert!(d.get(ValuesFromPositions::TETRAHEDRON_VECTORS).is_empty());
        let d = &s.entry(c).data;
        assert_eq!(d.get(ValuesFromPositions::VALUES), [2.5; 3]);
        assert_eq!(d.get(ValuesFromPositions::EDGE_VALUES), [2.5; 2]);
        assert_eq!(d.get(ValuesFromPositions::TRIANGLE_VALUES), [2.5]);

        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "ValuesFromPositions", &[("position", "0 0 0"), ("inputValues", "1 2")]);
        let e = init_root(&mut s, &f).unwrap_err();
        assert!(e.diagnostic().message.contains("bounding box"), "{e:?}");
    }
}
