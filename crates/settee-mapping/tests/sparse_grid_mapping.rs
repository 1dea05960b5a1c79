//! BarycentricMapping over sparse grids (SOFA's SparseGrid mapper): the lookup tables published
//! by the topologies agree with the topologies' own cell search, grid nodes are reproduced
//! exactly, the weights are adjoint, ramified grids send each part to its own hexahedron, and
//! a scene wires everything through the `cellLocator` Data.

mod support;

use proptest::prelude::*;
use settee_core::component::Mapping;
use settee_core::math::dot_n as dot;
use settee_core::{MeshData, StateId, VecId};
use settee_mapping::barycentric::{BarycentricMapping, MapperKind, SparseLocator};
use settee_topology::sparse_grid::{FinestParams, SparseGrid, Surface};
use settee_topology::sparse_grid_ramification::RamifiedGrid;

const S0: StateId = StateId::first_in_slot(0);
const S1: StateId = StateId::first_in_slot(1);

/// A closed box surface `[lo, hi]` (6 quads, outward normals), its vertices from `first`.
fn add_box(s: &mut Surface, lo: [f64; 3], hi: [f64; 3]) {
    let first = s.vertices.len();
    for z in [lo[2], hi[2]] {
        for y in [lo[1], hi[1]] {
            for x in [lo[0], hi[0]] {
                s.vertices.push([x, y, z]);
            }
        }
    }
    let quads = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
    s.facets.extend(quads.iter().map(|q| q.iter().map(|&i| first + i).collect::<Vec<_>>()));
}

fn params(n: [usize; 3], min: [f64; 3], max: [f64; 3]) -> FinestParams {
    FinestParams { n, min, max, cell_width: 0.0, fill_weighted: true, only_inside_cells: false }
}

/// A box `[-0.8, 0.8]³` in the grid `[-1, 1]³` with 5 points per axis (steps 0.5: every
/// coordinate computation is exact).
fn box_grid() -> SparseGrid {
    let mut s = Surface::default();
    add_box(&mut s, [-0.8; 3], [0.8; 3]);
    SparseGrid::from_surface(&params([5, 5, 5], [-1.0; 3], [1.0; 3]), &s).unwrap()
}

fn locator(g: &SparseGrid) -> SparseLocator {
    SparseLocator::parse(&g.locator().to_reals()).unwrap()
}

fn mesh(g: &SparseGrid) -> MeshData {
    MeshData { points: g.points.clone(), hexahedra: g.hexahedra.clone(), ..Default::default() }
}

#[test]
fn the_locator_matches_the_sparse_grid_search() {
    let g = box_grid();
    let loc = locator(&g);
    let mut k = 0u64;
    let mut next = || {
        // a small deterministic generator over [-1.5, 1.5]
        k = k.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((k >> 11) as f64 / (1u64 << 53) as f64) * 3.0 - 1.5
    };
    let (mut found, mut nearest) = (0, 0);
    for _ in 0..2000 {
        let p = [next(), next(), next()];
        match g.find_cube(p) {
            Some(hit) => {
                assert_eq!(loc.find(p), Some(hit), "find at {p:?}");
                found += 1;
            }
            None => {
                assert_eq!(loc.find(p), None, "find at {p:?}");
                assert_eq!(loc.find_nearest(p), g.find_nearest_cube(p), "nearest at {p:?}");
                nearest += 1;
            }
        }
    }
    assert!(found > 100 && nearest > 100, "{found} found, {nearest} by nearest cell");
}

#[test]
fn grid_nodes_are_reproduced_exactly() {
    let g = box_grid();
    let loc = locator(&g);
    let m = mesh(&g);
    let (locs, stencils) = BarycentricMapping::locate_in_sparse_grid(&loc, &m, &g.points).unwrap();
    assert_eq!(locs.len(), g.points.len());
    let n = g.points.len();
    let mut map = BarycentricMapping::with_stencils(S0, S1, n, stencils);
    // at rest, and for an arbitrary configuration of the grid: each node follows its own DOF
    let rest: Vec<f64> = g.points.iter().flatten().copied().collect();
    let moved: Vec<f64> = rest.iter().enumerate().map(|(i, x)| x * 1.7 + (i as f64 * 0.37).sin()).collect();
    for x in [rest, moved] {
        let mut out = vec![0.0; 3 * n];
        map.apply(&mut out, &[&x]).unwrap();
        assert_eq!(out, x);
    }
    // the nodes on the grid's max faces are outside every cell (floor gives n-1): located by
    // the nearest boundary cell, with coordinates 1
    let far = g.points.iter().position(|p| *p == [1.0, 1.0, 1.0]).unwrap();
    assert_eq!(loc.find(g.points[far]), None);
    assert_eq!(locs[far].coords, [1.0, 1.0, 1.0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random points inside and around the grid: `apply` reproduces points inside kept cells,
    /// the weights are adjoint, and the Jacobian rows equal `apply_j`.
    #[test]
    fn sparse_grid_weights(pts in prop::collection::vec(-1.3f64..1.3, 30), v in prop::collection::vec(-1.0f64..1.0, 3 * 125),
                           f in prop::collection::vec(-1.0f64..1.0, 30)) {
        let g = box_grid();
        let loc = locator(&g);
        let n = g.points.len();
        let xout: Vec<[f64; 3]> = pts.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
        let (_, st) = BarycentricMapping::locate_in_sparse_grid(&loc, &mesh(&g), &xout).unwrap();
        let mut m = BarycentricMapping::with_stencils(S0, S1, n, st);
        let x: Vec<f64> = g.points.iter().flatten().copied().collect();
        let mut out = vec![0.0; 30];
        m.apply(&mut out, &[&x]).unwrap();
        for (o, p) in out.chunks(3).zip(&xout) {
            if g.find_cube(*p).is_some() {
                for c in 0..3 {
                    prop_assert!((o[c] - p[c]).abs() < 1e-12, "{o:?} vs {p:?}");
                }
            }
        }
        let v = &v[..3 * n];
        let mut jv = vec![0.0; 30];
        m.apply_j(&mut jv, &[v]).unwrap();
        let mut jtf = vec![0.0; 3 * n];
        m.apply_jt(&mut [&mut jtf], &f).unwrap();
        let (lhs, rhs) = (dot(&jv, &f), dot(v, &jtf));
        prop_assert!((lhs - rhs).abs() <= 1e-12 * (1.0 + lhs.abs()), "⟨Jv,f⟩ = {lhs}, ⟨v,Jᵀf⟩ = {rhs}");
        let j = &m.jacobians().unwrap()[0];
        let mut jv2 = vec![0.0; 30];
        j.mul(&mut jv2, v);
        for (a, b) in jv.iter().zip(&jv2) {
            prop_assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs()));
        }
    }
}

/// Two boxes in one cell of a ramified grid (two virtual levels, an empty finest cell between
/// them): each box maps to its own hexahedron, the coordinates are those of the coarse cell.
#[test]
fn ramified_parts_map_to_their_own_hexahedra() {
    let mut s = Surface::default();
    add_box(&mut s, [0.1, 0.1, 0.1], [0.9, 0.9, 0.9]);
    add_box(&mut s, [2.1, 0.1, 0.1], [2.9, 0.9, 0.9]);
    let p = params([2, 2, 2], [0.0; 3], [4.0, 1.0, 1.0]);
    let fine = FinestParams { n: [5, 5, 5], ..p };
    let g = RamifiedGrid::build(&p, &fine, 2, &s, false).unwrap();
    let top = g.top();
    assert_eq!(top.hexahedra.len(), 2);
    let loc = SparseLocator::parse(&g.locator().to_reals()).unwrap();
    assert_eq!(loc.find([0.5, 0.5, 0.5]), Some((0, [0.125, 0.5, 0.5])));
    assert_eq!(loc.find([2.5, 0.25, 0.75]), Some((1, [0.625, 0.25, 0.75])));
    // in the empty finest cell between them: the nearest finest boundary cells of both boxes are
    // at the same distance, the first (box A) wins; coordinates from the clamped coarse cell
    assert_eq!(loc.find([1.5, 0.5, 0.5]), None);
    assert_eq!(loc.find_nearest([1.5, 0.5, 0.5]), Some((0, [0.375, 0.5, 0.5])));
    let m = MeshData { points: top.points.clone(), hexahedra: top.hexahedra.clone(), ..Default::default() };
    let xout = [[0.5, 0.5, 0.5], [2.5, 0.5, 0.5]];
    let (_, st) = BarycentricMapping::locate_in_sparse_grid(&loc, &m, &xout).unwrap();
    assert!(st[0].iter().all(|(k, _)| *k < 8) && st[1].iter().all(|(k, _)| *k >= 8));
    // moving the second hexahedron's nodes moves only the second point
    let mut x: Vec<f64> = top.points.iter().flatten().copied().collect();
    for v in &mut x[24..] {
        *v += 1.0;
    }
    let mut mapping = BarycentricMapping::with_stencils(S0, S1, top.points.len(), st);
    let mut out = vec![0.0; 6];
    mapping.apply(&mut out, &[&x]).unwrap();
    assert_eq!(out, vec![0.5, 0.5, 0.5, 3.5, 1.5, 1.5]);
}

/// A scene: SparseGridTopology from inline surface Data, a mapped child state. The mapping
/// selects the SparseGrid mapper and maps the grid nodes onto themselves.
#[test]
fn scene_with_a_sparse_grid_mapper() {
    let f = support::factory();
    for (class, extra) in [("SparseGridTopology", ""), ("SparseGridRamificationTopology", "finestConnectivity=\"1\"")] {
        let text = format!(
            r#"<Node name="root" dt="0.01" gravity="0 0 0">
  <Node name="grid">
    <{class} name="topo" n="5 5 5" min="-1 -1 -1" max="1 1 1" {extra}
        position="-0.8 -0.8 -0.8  0.8 -0.8 -0.8  -0.8 0.8 -0.8  0.8 0.8 -0.8  -0.8 -0.8 0.8  0.8 -0.8 0.8  -0.8 0.8 0.8  0.8 0.8 0.8"
        quads="0 2 3 1  4 5 7 6  0 1 5 4  2 6 7 3  0 4 6 2  1 3 7 5" />
    <MechanicalObject name="dofs" />
    <Node name="mapped">
      <MechanicalObject name="pts" position="0 0 0  0.5 -0.5 0.25  0.3 0.2 0.1  1 1 1  1.2 0 0" />
      <BarycentricMapping name="map" />
    </Node>
  </Node>
</Node>"#
        );
        let scene = support::load_text(&format!("sparse-{class}"), &text, &f);
        let map = scene.components.keys().find(|c| scene.entry(*c).class.name == "BarycentricMapping").unwrap();
        let b = scene.get::<BarycentricMapping>(map).unwrap();
        assert_eq!(b.mapper(), MapperKind::SparseGrid, "{class}");
        let locs = b.locations().to_vec();
        assert_eq!(locs.len(), 5);
        // the last point is outside the grid: nearest boundary cell, coordinates beyond 1
        assert!(locs[4].coords[0] > 1.0, "{class}: {:?}", locs[4]);
        let dofs = scene.state_of(scene.slot(scene.entry(map).node, settee_core::role::MECHANICAL_STATE).unwrap()).unwrap();
        let input = b.inputs()[0];
        let x = scene.vec(input, VecId::POSITION).to_vec();
        let mut out = vec![0.0; 15];
        let mut copy = BarycentricMapping::with_stencils(S0, S1, x.len() / 3, b.stencils().to_vec());
        copy.apply(&mut out, &[&x]).unwrap();
        let expected: [f64; 15] = [0.0, 0.0, 0.0, 0.5, -0.5, 0.25, 0.3, 0.2, 0.1, 1.0, 1.0, 1.0, 1.2, 0.0, 0.0];
        for (a, e) in out.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{class}: {out:?}");
        }
        assert_eq!(scene.vec(dofs, VecId::POSITION).len(), 15);
    }
}
