//! `VoxelGridLoader`: hexahedra (or points) from the voxels of a raw 8-bit image, as SOFA's
//! `VoxelGridLoader` builds them.
//!
//! The file (`.raw`) holds `header` bytes, then one byte per voxel, x fastest, for the
//! `resolution`. A voxel is active when its value is one of `dataValue` (if given), else when
//! it is not one of `bgValue` (if given), else always. Within the region of interest `ROI`
//! (clamped to the image), each active voxel (i, j, k) gives a hexahedron of corners
//! (i + a, j + b, k + c)·voxelSize, the corners numbered in z-, then y-, then x-order among the
//! corners used; `idxInRegularGrid` lists the voxel of each hexahedron. With
//! `generateHexa="false"` each active voxel gives only its corner (i, j, k) as a point.

use std::collections::{BTreeMap, BTreeSet};

use settee_core::role::Loader;
use settee_core::{component, Component, InitCtx, SimResult};

use crate::mesh::FileData;

/// The voxel selection and geometry.
#[derive(Clone, Debug, PartialEq)]
pub struct VoxelParams {
    pub resolution: [usize; 3],
    pub voxel_size: [f64; 3],
    /// xmin ymin zmin xmax ymax zmax, inclusive, already clamped to the image.
    pub roi: [usize; 6],
    pub active: Vec<i64>,
    pub background: Vec<i64>,
    pub hexahedra: bool,
}

/// Whether a voxel of `value` is active.
fn is_active(p: &VoxelParams, value: u8) -> bool {
    let v = value as i64;
    if !p.active.is_empty() {
        return p.active.contains(&v);
    }
    if !p.background.is_empty() {
        return !p.background.contains(&v);
    }
    true
}

/// Points, hexahedra and the voxel index of each hexahedron (or point).
pub fn voxel_mesh(p: &VoxelParams, voxels: &[u8]) -> (Vec<[f64; 3]>, Vec<[usize; 8]>, Vec<usize>) {
    let [nx, ny, _] = p.resolution;
    let r = p.roi;
    let voxel = |i: usize, j: usize, k: usize| i + j * nx + k * nx * ny;
    let at = |i: usize, j: usize, k: usize| [i as f64 * p.voxel_size[0], j as f64 * p.voxel_size[1], k as f64 * p.voxel_size[2]];
    let active: Vec<(usize, usize, usize)> = (r[2]..=r[5])
        .flat_map(|k| (r[1]..=r[4]).flat_map(move |j| (r[0]..=r[3]).map(move |i| (i, j, k))))
        .filter(|&(i, j, k)| is_active(p, voxels[voxel(i, j, k)]))
        .collect();
    let ids = active.iter().map(|&(i, j, k)| voxel(i, j, k)).collect();
    if !p.hexahedra {
        return (active.iter().map(|&(i, j, k)| at(i, j, k)).collect(), Vec::new(), ids);
    }
    let (px, py) = (nx + 1, ny + 1);
    let corner = |i: usize, j: usize, k: usize, q: usize| (i + q % 2) + (j + ((q & 2) >> 1)) * px + (k + q / 4) * px * py;
    let kept: BTreeSet<usize> = active.iter().flat_map(|&(i, j, k)| (0..8).map(move |q| corner(i, j, k, q))).collect();
    let mut number = BTreeMap::new();
    let mut points = Vec::with_capacity(kept.len());
    for k in r[2]..=r[5] + 1 {
        for j in r[1]..=r[4] + 1 {
            for i in r[0]..=r[3] + 1 {
                let id = i + j * px + k * px * py;
                if kept.contains(&id) {
                    number.insert(id, points.len());
                    points.push(at(i, j, k));
                }
            }
        }
    }
    let hexa = active
        .iter()
        .map(|&(i, j, k)| {
            let c = |q: usize| number[&corner(i, j, k, q)];
            [c(0), c(1), c(3), c(2), c(4), c(5), c(7), c(6)]
        })
        .collect();
    (points, hexa, ids)
}

/// Loader of voxel grids (raw 8-bit images) as hexahedra or points.
#[component(
    module = "Sofa.Component.IO.Mesh",
    markers = [Loader],
    inherit = [FileData, Self],
    data = {
        /// Dimension of one voxel
        voxelSize: Fixed(3) = "1 1 1",
        /// Resolution of the voxel file
        resolution: Fixed(3) = "0 0 0",
        /// Region of interest (xmin, ymin, zmin, xmax, ymax, zmax)
        ROI: Fixed(6) as Reals = "0 0 0 65535 65535 65535",
        /// Header size in bytes
        header: Int = "0",
        /// Header size in bytes of the segmentation file (not used: no segmentation file is read)
        segmentationHeader: Int = "0",
        /// indices of the hexa in the grid.
        idxInRegularGrid: Indices,
        /// Background values (to be ignored)
        bgValue: Reals,
        /// Active data values
        dataValue: Reals,
        /// Interpret voxel as either hexa or points
        generateHexa: Bool = "true",
        /// Coordinates of the nodes loaded
        position: RealTuples(3),
        /// Hexahedra loaded
        hexahedra: IndexTuples(8),
    },
)]
#[derive(Clone, Default)]
pub struct VoxelGridLoader;

impl VoxelGridLoader {
    fn load(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let res = d.get(Self::RESOLUTION).map(|r| r.max(0.0) as usize);
        let name = d.get(FileData::FILENAME).trim().to_string();
        if !name.ends_with(".raw") || res.contains(&0) {
            return Err(cx
                .error(format!("cannot load '{name}' as a voxel grid"))
                .hint("give a .raw file and its resolution (three positive numbers)"));
        }
        let path = cx.resolve_file(&name)?;
        let bytes = settee_core::budget::read_file(&path).map_err(|e| cx.error(format!("{}: cannot read the file: {e}", path.display())))?;
        let header = d.get(Self::HEADER).max(0) as usize;
        let n = res[0] * res[1] * res[2];
        let Some(voxels) = bytes.get(header..header + n) else {
            return Err(cx.error(format!("{}: {} bytes, but the header ({header}) and {n} voxels need {}", path.display(), bytes.len(), header + n)));
        };
        let roi = d.get(Self::ROI);
        let lo = |a: usize| roi.get(a).copied().unwrap_or(0.0).max(0.0) as usize;
        let mut r = [lo(0), lo(1), lo(2), lo(3), lo(4), lo(5)];
        for a in 0..3 {
            r[3 + a] = r[3 + a].min(res[a] - 1).max(r[a]);
            r[a] = r[a].min(res[a] - 1);
        }
        let ints = |v: &[f64]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
        let p = VoxelParams {
            resolution: res,
            voxel_size: d.get(Self::VOXEL_SIZE),
            roi: r,
            active: ints(d.get(Self::DATA_VALUE)),
            background: ints(d.get(Self::BG_VALUE)),
            hexahedra: d.get(Self::GENERATE_HEXA),
        };
        let (points, hexa, ids) = voxel_mesh(&p, voxels);
        let out = cx.data_mut();
        out.put(Self::ROI, r.iter().map(|&x| x as f64).collect());
        out.put(Self::POSITION, points.iter().flatten().copied().collect());
        out.put(Self::HEXAHEDRA, hexa.iter().flatten().copied().collect());
        out.put(Self::IDX_IN_REGULAR_GRID, ids);
        Ok(())
    }
}

impl Component for VoxelGridLoader {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.load(cx)
    }

    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.load(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2 × 2 × 1 image with voxels 0 and 3 active (diagonal): 2 hexahedra sharing 2
    /// corners → 14 points; corners in z, y, x order; SOFA's hexahedron vertex order.
    #[test]
    fn diagonal_voxels_share_an_edge() {
        let p = VoxelParams {
            resolution: [2, 2, 1],
            voxel_size: [0.5, 1.0, 2.0],
            roi: [0, 0, 0, 1, 1, 0],
            active: vec![],
            background: vec![0],
            hexahedra: true,
        };
        let (x, h, ids) = voxel_mesh(&p, &[7, 0, 0, 9]);
        assert_eq!(ids, vec![0, 3]);
        assert_eq!(x.len(), 14);
        assert_eq!(x[0], [0.0, 0.0, 0.0]);
        assert_eq!(h[0], [0, 1, 3, 2, 7, 8, 10, 9]);
        assert_eq!(x[h[1][6]], [1.0, 2.0, 2.0]);
        let pts = VoxelParams { hexahedra: false, active: vec![9], ..p };
        let (x, h, ids) = voxel_mesh(&pts, &[7, 0, 0, 9]);
        assert_eq!((x, h.len(), ids), (vec![[0.5, 1.0, 0.0]], 0, vec![3]));
    }
}
