//! `GenerateRigidMass`: the rigid mass (mass, volume, inertia per unit mass, mass center) of a
//! closed surface mesh of uniform density (SOFA's Engine/Generate).
//!
//! The volume integrals of 1, x, y, z, x², y², z², xy, yz, zx are summed over the triangles
//! (quads split along their 0–2 diagonal) with the divergence theorem, in SOFA's order of
//! operations (Eberly's polyhedral mass properties). The inertia is taken about the mass center
//! and divided by the volume; the mass is volume × density. A null volume leaves the outputs as
//! they are, with a warning. `rigidMass` is the Rigid3 mass as `UniformMass` reads it: mass,
//! volume, then the 9 inertia terms. SOFA's `polygons` input (a nested list, not readable from
//! text) is not offered.

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

type V3 = [f64; 3];

/// The ten volume integrals (1, x, y, z, x², y², z², xy, yz, zx) of the closed surface made of
/// `triangles`, already divided by their constants.
pub fn integrals(triangles: &[[V3; 3]]) -> [f64; 10] {
    let mut a = [0.0; 10];
    for t in triangles {
        let [v0, v1, v2] = *t;
        let e1 = [v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]];
        let e2 = [v2[0] - v0[0], v2[1] - v0[1], v2[2] - v0[2]];
        let n = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
        // Per axis: f1, f2, f3 and g0, g1, g2 of the three vertices.
        let sub = |k: usize| {
            let t0 = v0[k] + v1[k];
            let f1 = t0 + v2[k];
            let t1 = v0[k] * v0[k];
            let t2 = t1 + v1[k] * t0;
            let f2 = t2 + v2[k] * f1;
            let f3 = v0[k] * t1 + v1[k] * t2 + v2[k] * f2;
            let g0 = f2 + v0[k] * (f1 + v0[k]);
            let g1 = f2 + v1[k] * (f1 + v1[k]);
            let g2 = f2 + v2[k] * (f1 + v2[k]);
            (f1, f2, f3, g0, g1, g2)
        };
        let (f1x, f2x, f3x, g0x, g1x, g2x) = sub(0);
        let (_, f2y, f3y, g0y, g1y, g2y) = sub(1);
        let (_, f2z, f3z, g0z, g1z, g2z) = sub(2);
        a[0] += n[0] * f1x;
        a[1] += n[0] * f2x;
        a[2] += n[1] * f2y;
        a[3] += n[2] * f2z;
        a[4] += n[0] * f3x;
        a[5] += n[1] * f3y;
        a[6] += n[2] * f3z;
        a[7] += n[0] * (v0[1] * g0x + v1[1] * g1x + v2[1] * g2x);
        a[8] += n[1] * (v0[2] * g0y + v1[2] * g1y + v2[2] * g2y);
        a[9] += n[2] * (v0[0] * g0z + v1[0] * g1z + v2[0] * g2z);
    }
    for (ai, d) in a.iter_mut().zip([6.0, 24.0, 24.0, 24.0, 60.0, 60.0, 60.0, 120.0, 120.0, 120.0]) {
        *ai /= d;
    }
    a
}

/// Volume, mass center and inertia per unit mass about the center (row-major), from the
/// integrals; `None` for a null volume.
pub fn rigid_properties(a: &[f64; 10]) -> Option<(f64, V3, [f64; 9])> {
    let v = a[0];
    if v == 0.0 {
        return None;
    }
    let c = [a[1] / a[0], a[2] / a[0], a[3] / a[0]];
    let mut i = [0.0; 9];
    i[0] = a[5] + a[6];
    i[1] = -a[7];
    i[2] = -a[9];
    i[4] = a[4] + a[6];
    i[5] = -a[8];
    i[8] = a[4] + a[5];
    i[0] -= v * (c[1] * c[1] + c[2] * c[2]);
    i[1] += v * c[0] * c[1];
    i[2] += v * c[2] * c[0];
    i[4] -= v * (c[2] * c[2] + c[0] * c[0]);
    i[5] += v * c[1] * c[2];
    i[8] -= v * (c[0] * c[0] + c[1] * c[1]);
    i[3] = i[1];
    i[6] = i[2];
    i[7] = i[5];
    for x in &mut i {
        *x /= v;
    }
    Some((v, c, i))
}

/// Generate a Rigid mass from a closed surface mesh.
#[component(
    module = "Sofa.Component.Engine.Generate",
    markers = [Engine],
    templates = ["Rigid3d"],
    create = |_| GenerateRigidMass,
    data = {
        /// input: Density of the object
        density: Real = "1000",
        /// input: positions of the vertices
        position: RealTuples(3),
        /// input: triangles of the mesh
        triangles: IndexTuples(3),
        /// input: quads of the mesh
        quads: IndexTuples(4),
        /// output: rigid mass computed (mass, volume, then the inertia matrix per unit mass)
        rigidMass: Reals,
        /// output: mass of the mesh
        mass: Real = "0",
        /// output: volume of the mesh
        volume: Real = "0",
        /// output: the inertia matrix of the mesh
        inertiaMatrix: Fixed(9) = "0 0 0 0 0 0 0 0 0",
        /// output: the gravity center of the mesh
        massCenter: Fixed(3) as Vec3 = "0 0 0",
        /// output: vector going from the mass center to the space origin
        centerToOrigin: Fixed(3) as Vec3 = "0 0 0",
    },
)]
#[derive(Clone)]
pub struct GenerateRigidMass;

impl GenerateRigidMass {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let p = d.get(Self::POSITION);
        let n = p.len() / 3;
        let point = |i: usize| -> Option<V3> { (i < n).then(|| [p[i * 3], p[i * 3 + 1], p[i * 3 + 2]]) };
        let mut faces = Vec::new();
        let corners = |ids: &[usize]| -> Option<Vec<V3>> { ids.iter().map(|&i| point(i)).collect() };
        for t in d.get(Self::TRIANGLES).chunks_exact(3) {
            let v = corners(t).ok_or_else(|| cx.error(format!("triangle {t:?} refers to a point beyond the {n} positions")))?;
            faces.push([v[0], v[1], v[2]]);
        }
        for q in d.get(Self::QUADS).chunks_exact(4) {
            let v = corners(q).ok_or_else(|| cx.error(format!("quad {q:?} refers to a point beyond the {n} positions")))?;
            faces.push([v[0], v[1], v[2]]);
            faces.push([v[0], v[2], v[3]]);
        }
        let density = d.get(Self::DENSITY);
        let Some((volume, center, inertia)) = rigid_properties(&integrals(&faces)) else {
            cx.warn("the mesh volume is null: no rigid mass is computed");
            return Ok(());
        };
        if volume < 0.0 {
            cx.warn("the mesh volume is negative (are the triangles oriented inwards?)");
        }
        let mass = volume * density;
        let mut rigid = vec![mass, volume];
        rigid.extend_from_slice(&inertia);
        let d = cx.data_mut();
        d.put(Self::RIGID_MASS, rigid);
        d.put(Self::MASS, mass);
        d.put(Self::VOLUME, volume);
        d.put(Self::INERTIA_MATRIX, inertia.to_vec());
        d.put(Self::MASS_CENTER, center);
        d.put(Self::CENTER_TO_ORIGIN, [-center[0], -center[1], -center[2]]);
        Ok(())
    }
}

impl Component for GenerateRigidMass {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    /// A box [1,3]×[0,1]×[0,4] made of 6 outward quads: volume 8, center (2, 0.5, 2), inertia
    /// per unit mass about the center diag((b² + c²)/12, (a² + c²)/12, (a² + b²)/12) with sides
    /// a = 2, b = 1, c = 4: (17/12, 20/12, 5/12), no products; mass 8 × density 1000.
    #[test]
    fn box_mass_properties() {
        let f = factory();
        let mut s = Scene::new("root");
        let pos = "1 0 0  3 0 0  3 1 0  1 1 0  1 0 4  3 0 4  3 1 4  1 1 4";
        let quads = "0 3 2 1  4 5 6 7  0 1 5 4  2 3 7 6  1 2 6 5  0 4 7 3";
        let e = add(&mut s, &f, Scene::ROOT, "GenerateRigidMass", &[("template", "Rigid3"), ("position", pos), ("quads", quads)]);
        init_scene(&mut s).unwrap();
        let d = &s.entry(e).data;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(d.real("volume"), 8.0), "{}", d.real("volume"));
        assert!(close(d.real("mass"), 8000.0));
        let c = d.reals("massCenter");
        assert!(close(c[0], 2.0) && close(c[1], 0.5) && close(c[2], 2.0), "{c:?}");
        assert!(d.reals("centerToOrigin").iter().zip(c).all(|(a, b)| *a == -b));
        let i = d.reals("inertiaMatrix");
        let expected = [17.0 / 12.0, 0.0, 0.0, 0.0, 20.0 / 12.0, 0.0, 0.0, 0.0, 5.0 / 12.0];
        for k in 0..9 {
            assert!(close(i[k], expected[k]), "{k}: {} vs {}", i[k], expected[k]);
        }
        let r = d.reals("rigidMass");
        assert_eq!(r.len(), 11);
        assert!(close(r[0], 8000.0) && close(r[1], 8.0) && close(r[2], 17.0 / 12.0));
    }
}
