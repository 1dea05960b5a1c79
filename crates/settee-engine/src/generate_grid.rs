//! `GenerateGrid`: a regular grid of points with its hexahedra and tetrahedra (or, flat, its quads
//! and triangles).
//!
//! Follows SOFA's `GenerateGrid` (Vec3d, Vec2d): `resolution` = cubes along x, y, z (0 along x or
//! y counts as 1, with a warning; 0 along z makes a flat grid); points x fastest, then y, then
//! z, at `min + (i·lx, j·ly, k·lz)`; cells in the order i, then j, then k innermost, each hexahedron
//! cut into SOFA's six tetrahedra, each quad into the triangles (0 1 3) and (3 1 2). A flat grid
//! leaves the hexahedra and tetrahedra as they were, a solid one the quads and triangles.
//! Computed as soon as parsed, at init and when an input changes.

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, Layout, SimResult};

/// The grid: `(points, quads, triangles, hexahedra, tetrahedra)`, flat; `dims` coordinates per
/// point. `None` lists are not produced (flat grid: no solids; solid grid: no faces).
#[allow(clippy::type_complexity)]
pub fn grid(
    min: [f64; 3],
    max: [f64; 3],
    res: [usize; 3],
    dims: usize,
) -> (Vec<f64>, Option<(Vec<usize>, Vec<usize>)>, Option<(Vec<usize>, Vec<usize>)>) {
    let size = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
    let (nl, nw, nh) = (res[0].max(1), res[1].max(1), res[2]);
    let (length, width) = (size[0] / nl as f64, size[1] / nw as f64);
    let height = if nh == 0 { 0.0 } else { size[2] / nh as f64 };
    let mut points = Vec::with_capacity((nl + 1) * (nw + 1) * (nh + 1) * dims);
    for k in 0..=nh {
        for j in 0..=nw {
            for i in 0..=nl {
                let t = [i as f64 * length, j as f64 * width, k as f64 * height];
                points.extend((0..dims).map(|c| t[c] + min[c]));
            }
        }
    }
    let row = nl + 1;
    let layer = (nl + 1) * (nw + 1);
    if nh == 0 {
        let (mut quads, mut triangles) = (Vec::new(), Vec::new());
        for i in 0..nl {
            for j in 0..nw {
                let q = [i + j * row, i + 1 + j * row, i + 1 + (j + 1) * row, i + (j + 1) * row];
                quads.extend(q);
                triangles.extend([q[0], q[1], q[3], q[3], q[1], q[2]]);
            }
        }
        (points, Some((quads, triangles)), None)
    } else {
        let (mut hexas, mut tetras) = (Vec::new(), Vec::new());
        for i in 0..nl {
            for j in 0..nw {
                for k in 0..nh {
                    let base = i + j * row + k * layer;
                    let h = [base, base + 1, base + 1 + row, base + row, base + layer, base + 1 + layer, base + 1 + row + layer, base + row + layer];
                    hexas.extend(h);
                    tetras.extend([h[0], h[5], h[1], h[6], h[0], h[1], h[3], h[6], h[1], h[3], h[6], h[2]]);
                    tetras.extend([h[6], h[3], h[0], h[7], h[6], h[7], h[0], h[5], h[7], h[5], h[4], h[0]]);
                }
            }
        }
        (points, None, Some((hexas, tetras)))
    }
}

/// Engine generating a grid tetrahedral or hexahedral mesh.
///
/// The GenerateGrid engine.
#[component(
    module = "Sofa.Component.Engine.Generate",
    markers = [Engine],
    templates = ["Vec3d", "Vec2d"],
    create = |args| GenerateGrid { layout: args.layout.unwrap_or(Layout::Vec3) },
    data = {
        /// output: output array of 3d points
        #[alias("position")]
        output_position: Coords,
        /// output: output mesh tetrahedra
        tetrahedra: IndexTuples(4),
        /// output: output mesh quads
        quads: IndexTuples(4),
        /// output: output mesh triangles
        triangles: IndexTuples(3),
        /// output: output mesh hexahedra
        hexahedra: IndexTuples(8),
        /// the 3 coordinates of the minimum corner
        min: Fixed(3) as Vec3 = "0 0 0",
        /// the 3 coordinates of the maximum corner
        max: Fixed(3) as Vec3 = "0 0 0",
        /// the number of cubes in the x,y,z directions. If resolution in the z direction is  0 then a 2D grid is generated
        resolution: Fixed(3) as Reals = "3 3 3",
    },
)]
#[derive(Clone)]
pub struct GenerateGrid {
    layout: Layout,
}

impl GenerateGrid {
    fn update(&mut self, cx: &mut InitCtx, report: bool) -> SimResult {
        let d = cx.data();
        let r = d.get(Self::RESOLUTION);
        if r.iter().any(|&v| v < 0.0 || v.fract() != 0.0) {
            return Err(cx.error(format!("resolution {} {} {} must be three whole numbers ≥ 0", r[0], r[1], r[2])));
        }
        let res = [r[0] as usize, r[1] as usize, r[2] as usize];
        let (min, max) = (d.get(Self::MIN), d.get(Self::MAX));
        if report && (res[0] == 0 || res[1] == 0) {
            cx.warn("a resolution of 0 along x or y is taken as 1");
        }
        let (points, faces, solids) = grid(min, max, res, self.layout.coord_size());
        let out = cx.data_mut();
        out.put(Self::OUTPUT_POSITION, points);
        if let Some((quads, triangles)) = faces {
            out.put(Self::QUADS, quads);
            out.put(Self::TRIANGLES, triangles);
        }
        if let Some((hexas, tetras)) = solids {
            out.put(Self::HEXAHEDRA, hexas);
            out.put(Self::TETRAHEDRA, tetras);
        }
        Ok(())
    }
}

impl Component for GenerateGrid {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        let _ = self.update(cx, false);
        Ok(())
    }
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx, true)
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx, false)
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::{factory, init_scene};
    use settee_core::testing::add;
    use settee_core::Scene;

    /// One cube [0,2]×[0,1]×[0,1]: 8 corners x fastest, SOFA's hexahedron numbering and six
    /// tetrahedra filling it (their volumes sum to 2).
    #[test]
    fn one_cube() {
        let (p, faces, solids) = grid([0.0; 3], [2.0, 1.0, 1.0], [1, 1, 1], 3);
        assert!(faces.is_none());
        assert_eq!(p, [0., 0., 0., 2., 0., 0., 0., 1., 0., 2., 1., 0., 0., 0., 1., 2., 0., 1., 0., 1., 1., 2., 1., 1.]);
        let (h, t) = solids.unwrap();
        assert_eq!(h, [0, 1, 3, 2, 4, 5, 7, 6]);
        assert_eq!(&t[..8], &[0, 5, 1, 7, 0, 1, 2, 7]);
        assert!((crate::volume::solid_volume(&p, 3, &t, &[]) - 2.0).abs() < 1e-12);
    }

    /// GenerateGrid.scn's slab (5 × 3 × 4 cubes) and a flat 2 × 1 grid.
    #[test]
    fn slab_and_flat_grid() {
        let f = factory();
        let mut s = Scene::new("root");
        let e = add(&mut s, &f, Scene::ROOT, "GenerateGrid", &[("template", "Vec3"), ("max", "0.5 1.5 1"), ("resolution", "5 3 4")]);
        let g = add(&mut s, &f, Scene::ROOT, "GenerateGrid", &[("template", "Vec2"), ("min", "1 1 0"), ("max", "3 2 0"), ("resolution", "2 1 0")]);
        init_scene(&mut s).unwrap();
        let d = &s.entry(e).data;
        assert_eq!(d.reals("output_position").len(), 6 * 4 * 5 * 3);
        assert_eq!(d.indices("hexahedra").len(), 60 * 8);
        assert_eq!(d.indices("tetrahedra").len(), 360 * 4);
        // the last point is the max corner (0.1·5, 0.5·3, 0.25·4)
        assert_eq!(&d.reals("output_position")[357..], &[0.5, 1.5, 1.0]);
        let d = &s.entry(g).data;
        assert_eq!(d.reals("output_position"), [1., 1., 2., 1., 3., 1., 1., 2., 2., 2., 3., 2.]);
        assert_eq!(d.indices("quads"), [0, 1, 4, 3, 1, 2, 5, 4]);
        assert_eq!(d.indices("triangles"), [0, 1, 3, 3, 1, 4, 1, 2, 4, 4, 2, 5]);
        assert!(d.indices("tetrahedra").is_empty());
    }
}
