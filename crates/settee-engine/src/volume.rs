//! `VolumeFromTriangles` and `VolumeFromVolumetricElements`: the volume enclosed by a surface, or
//! filled by tetrahedra and hexahedra.
//!
//! Both follow SOFA's engines of the same names:
//! * `position` defaults to the `position` of the `mechanical` link's state (default: the
//!   context state), a live link; the element lists, when not given, are copied at init from the
//!   `topology` link (default: the context topology);
//! * the volume is computed at init, and again when the positions change only with `update`;
//! * surface: the divergence theorem over the triangles (quads split along their 0–2 diagonal),
//!   `Σ ((p1−p0)×(p2−p0))ₓ (x0+x1+x2)/6` in SOFA's operation order, made positive (only meaningful
//!   for a closed surface); volume: `Σ |((p1−p0)×(p2−p0))·(p3−p0)|/6` over the tetrahedra, and
//!   over SOFA's six tetrahedra of each hexahedron.

use settee_core::math::{cross, dot, sub};
use settee_core::role::{Engine, MechanicalState, Topology};
use settee_core::{component, Component, ComponentId, InitCtx, Layout, SimResult};

fn point(x: &[f64], cs: usize, i: usize) -> [f64; 3] {
    [x[i * cs], x[i * cs + 1], x[i * cs + 2]]
}

/// The volume enclosed by `triangles` and `quads` (flat lists) of points `x` (`cs` reals each).
pub fn surface_volume(x: &[f64], cs: usize, triangles: &[usize], quads: &[usize]) -> f64 {
    let term = |a: usize, b: usize, c: usize| {
        let (p0, p1, p2) = (point(x, cs, a), point(x, cs, b), point(x, cs, c));
        ((p1[1] - p0[1]) * (p2[2] - p0[2]) - (p2[1] - p0[1]) * (p1[2] - p0[2])) * (p0[0] + p1[0] + p2[0]) / 6.0
    };
    let mut volume = 0.0;
    for t in triangles.chunks_exact(3) {
        volume += term(t[0], t[1], t[2]);
    }
    for q in quads.chunks_exact(4) {
        volume += term(q[0], q[1], q[2]);
        volume += term(q[0], q[2], q[3]);
    }
    volume.abs()
}

/// SOFA's `Tetrahedron::volume`.
fn tetra_volume(p0: [f64; 3], p1: [f64; 3], p2: [f64; 3], p3: [f64; 3]) -> f64 {
    (dot(cross(sub(p1, p0), sub(p2, p0)), sub(p3, p0)) / 6.0).abs()
}

/// The volume of `tetras` and `hexas` (flat lists) of points `x` (`cs` reals each).
pub fn solid_volume(x: &[f64], cs: usize, tetras: &[usize], hexas: &[usize]) -> f64 {
    let p = |i: usize| point(x, cs, i);
    let mut volume = 0.0;
    for t in tetras.chunks_exact(4) {
        volume += tetra_volume(p(t[0]), p(t[1]), p(t[2]), p(t[3]));
    }
    for h in hexas.chunks_exact(8) {
        let n: Vec<[f64; 3]> = h.iter().map(|&i| p(i)).collect();
        volume += tetra_volume(n[0], n[5], n[1], n[6])
            + tetra_volume(n[0], n[1], n[3], n[6])
            + tetra_volume(n[1], n[3], n[6], n[2])
            + tetra_volume(n[6], n[3], n[0], n[7])
            + tetra_volume(n[6], n[7], n[0], n[5])
            + tetra_volume(n[7], n[5], n[4], n[0]);
    }
    volume.abs()
}

/// Links `position` to the state's positions when not given; `Err` when there is no state.
fn link_positions(cx: &mut InitCtx, given: bool) -> SimResult {
    if given {
        return Ok(());
    }
    let state = cx.scene.link_targets(cx.id, "mechanical").first().copied().or_else(|| cx.scene.context_state(cx.node()));
    let Some(ms) = state else {
        return Err(cx.error("no positions given and no mechanical state in the context").hint("set `position` or add a MechanicalObject"));
    };
    cx.scene.link_data(cx.id, "position", ms, "position")
}

/// The topology the element lists default to: the `topology` link, else the context topology.
fn topology(cx: &InitCtx) -> Option<ComponentId> {
    cx.scene.link_targets(cx.id, "topology").first().copied().or_else(|| cx.scene.context_topology(cx.node()))
}

/// Checks that the elements (`k` indices each) refer to points of `x`.
fn check(cx: &InitCtx, what: &str, elements: &[usize], k: usize, n: usize) -> SimResult {
    match elements.chunks_exact(k).position(|e| e.iter().any(|&v| v >= n)) {
        Some(i) => Err(cx.error(format!("{what} {i} refers to a point beyond the {n} positions"))),
        None => Ok(()),
    }
}

/// This class computes the volume of a given closed surfacic mesh.
///
/// The VolumeFromTriangles engine.
#[component(
    module = "Sofa.Component.Engine.Generate",
    markers = [Engine],
    templates = ["Vec3d", "Rigid3d"],
    create = |args| VolumeFromTriangles { layout: args.layout.unwrap_or(Layout::Vec3) },
    data = {
        /// If not set by user, find the context mechanical.
        position: Coords,
        /// If not set by user, find the context topology.
        triangles: IndexTuples(3),
        /// If not set by user, find the context topology.
        quads: IndexTuples(4),
        /// output: The volume is only relevant if the surface is closed.
        volume: Real = "0",
        /// If true, will update the volume at each time step of the simulation.
        "update" as UPDATE: Bool = "false",
    },
    links = {
        /// link to the topology
        topology: Topology,
        /// link to the mechanical
        mechanical: MechanicalState,
    },
)]
#[derive(Clone)]
pub struct VolumeFromTriangles {
    layout: Layout,
}

impl Component for VolumeFromTriangles {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        link_positions(cx, cx.data().is_given(Self::POSITION))?;
        let (has_triangles, has_quads) = (cx.data().is_given(Self::TRIANGLES), cx.data().is_given(Self::QUADS));
        match topology(cx).and_then(|t| cx.scene.mesh_of(t)).map(|m| (m.triangles.concat(), m.quads.concat())) {
            Some((triangles, quads)) => {
                if !has_triangles {
                    cx.data_mut().put(Self::TRIANGLES, triangles);
                }
                if !has_quads {
                    cx.data_mut().put(Self::QUADS, quads);
                }
            }
            None if !has_triangles && !has_quads => {
                return Err(cx.error("no triangles or quads given and no topology in the context"));
            }
            None => {}
        }
        let n = cx.data().get(Self::POSITION).len() / self.layout.coord_size();
        check(cx, "triangle", cx.data().get(Self::TRIANGLES), 3, n)?;
        check(cx, "quad", cx.data().get(Self::QUADS), 4, n)?;
        self.update(cx);
        Ok(())
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        if cx.data().get(Self::UPDATE) {
            self.update(cx);
        }
        Ok(())
    }
}

impl VolumeFromTriangles {
    fn update(&mut self, cx: &mut InitCtx) {
        let d = cx.data();
        let v = surface_volume(d.get(Self::POSITION), self.layout.coord_size(), d.get(Self::TRIANGLES), d.get(Self::QUADS));
        cx.data_mut().put(Self::VOLUME, v);
    }
}

/// This class computes the volume of a given volumetric mesh.
///
/// The VolumeFromVolumetricElements engine.
#[component(
    module = "Sofa.Component.Engine.Generate",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| VolumeFromVolumetricElements,
    data = {
        /// If not set by user, find the context mechanical.
        position: Coords,
        /// If not set by user, find the context topology.
        tetras: IndexTuples(4),
        /// If not set by user, find the context topology.
        hexas: IndexTuples(8),
        /// output: The computed volume.
        volume: Real = "0",
        /// If true, will update the volume at each time step of the simulation.
        "update" as UPDATE: Bool = "false",
    },
    links = {
        /// link to the topology
        topology: Topology,
        /// link to the mechanical
        mechanical: MechanicalState,
    },
)]
#[derive(Clone)]
pub struct VolumeFromVolumetricElements;

impl Component for VolumeFromVolumetricElements {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        link_positions(cx, cx.data().is_given(Self::POSITION))?;
        let (has_tetras, has_hexas) = (cx.data().is_given(Self::TETRAS), cx.data().is_given(Self::HEXAS));
        match topology(cx).and_then(|t| cx.scene.mesh_of(t)).map(|m| (m.tetrahedra.concat(), m.hexahedra.concat())) {
            Some((tetras, hexas)) => {
                if !has_tetras {
                    cx.data_mut().put(Self::TETRAS, tetras);
                }
                if !has_hexas {
                    cx.data_mut().put(Self::HEXAS, hexas);
                }
            }
            None if !has_tetras && !has_hexas => {
                return Err(cx.error("no tetrahedra or hexahedra given and no topology in the context"));
            }
            None => {}
        }
        let n = cx.data().get(Self::POSITION).len() / 3;
        check(cx, "tetrahedron", cx.data().get(Self::TETRAS), 4, n)?;
        check(cx, "hexahedron", cx.data().get(Self::HEXAS), 8, n)?;
        if cx.data().get(Self::TETRAS).is_empty() && cx.data().get(Self::HEXAS).is_empty() {
            cx.warn("no tetrahedra and no hexahedra: the volume stays 0");
            return Ok(());
        }
        self.update(cx);
        Ok(())
    }

    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        if cx.data().get(Self::UPDATE) {
            self.update(cx);
        }
        Ok(())
    }
}

impl VolumeFromVolumetricElements {
    fn update(&mut self, cx: &mut InitCtx) {
        let d = cx.data();
        let v = solid_volume(d.get(Self::POSITION), 3, d.get(Self::TETRAS), d.get(Self::HEXAS));
        cx.data_mut().put(Self::VOLUME, v);
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    /// The box [0, 2] × [0, 3] × [0, 4]: corners 0..3 at z = 0, 4..7 at z = 4 (SOFA's hexahedron
    /// numbering).
    const BOX: [f64; 24] = [0., 0., 0., 2., 0., 0., 2., 3., 0., 0., 3., 0., 0., 0., 4., 2., 0., 4., 2., 3., 4., 0., 3., 4.];

    /// Its surface as 6 quads, then as 12 triangles, either orientation: volume 24.
    #[test]
    fn closed_surface_volume() {
        let quads = [0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7];
        assert!((surface_volume(&BOX, 3, &[], &quads) - 24.0).abs() < 1e-12);
        let triangles: Vec<usize> = quads.chunks(4).flat_map(|q| [q[0], q[1], q[2], q[0], q[2], q[3]]).collect();
        assert!((surface_volume(&BOX, 3, &triangles, &[]) - 24.0).abs() < 1e-12);
        let reversed: Vec<usize> = triangles.chunks(3).flat_map(|t| [t[0], t[2], t[1]]).collect();
        assert!((surface_volume(&BOX, 3, &reversed, &[]) - 24.0).abs() < 1e-12);
        // the unit corner tetrahedron's surface: 1/6
        let tet = [0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.];
        assert!((surface_volume(&tet, 3, &[0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3], &[]) - 1.0 / 6.0).abs() < 1e-15);
    }

    /// The box as one hexahedron (6 tetrahedra) and as the corner tetrahedron: 24 and 1/6.
    #[test]
    fn solid_volumes() {
        assert!((solid_volume(&BOX, 3, &[], &[0, 1, 2, 3, 4, 5, 6, 7]) - 24.0).abs() < 1e-12);
        let tet = [0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.];
        assert_eq!(solid_volume(&tet, 3, &[0, 1, 2, 3], &[]), 1.0 / 6.0);
    }

    /// In scenes: positions of the context state, elements of the context topology.
    #[test]
    fn scene_defaults() {
        let f = factory();
        let x = BOX.map(|v| v.to_string()).join(" ");
        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("position", &x), ("quads", "0 3 2 1  4 5 6 7  0 1 5 4  1 2 6 5  2 3 7 6  3 0 4 7")]);
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", &x)]);
        let e = add(&mut s, &f, Scene::ROOT, "VolumeFromTriangles", &[]);
        init_scene(&mut s).unwrap();
        assert!((s.entry(e).data.real("volume") - 24.0).abs() < 1e-12);

        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "MeshTopology", &[("position", &x), ("hexahedra", "0 1 2 3 4 5 6 7")]);
        add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", &x)]);
        let e = add(&mut s, &f, Scene::ROOT, "VolumeFromTetrahedrons", &[]);
        init_scene(&mut s).unwrap();
        assert!((s.entry(e).data.real("volume") - 24.0).abs() < 1e-12);
    }
}
