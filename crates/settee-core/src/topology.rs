//! Mesh data shared by topology containers and the components that read them.

/// The elements of a mesh topology, in the container's order (iterative solvers and element
/// loops depend on SOFA's exact orderings).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    pub points: Vec<[f64; 3]>,
    pub edges: Vec<[usize; 2]>,
    pub triangles: Vec<[usize; 3]>,
    pub quads: Vec<[usize; 4]>,
    pub tetrahedra: Vec<[usize; 4]>,
    pub hexahedra: Vec<[usize; 8]>,
}

impl MeshData {
    pub fn nb_points(&self) -> usize {
        self.points.len()
    }
}

/// Groups a flat index list into fixed-size tuples (a trailing partial tuple is dropped).
pub fn group<const K: usize>(flat: &[usize]) -> Vec<[usize; K]> {
    flat.chunks_exact(K).map(|c| {
        let mut a = [0; K];
        a.copy_from_slice(c);
        a
    }).collect()
}

/// Groups flat reals into 3D points; 1D and 2D inputs are padded with zeros.
pub fn points_from_flat(flat: &[f64], arity: usize) -> Vec<[f64; 3]> {
    let k = arity.max(1);
    flat.chunks_exact(k)
        .map(|c| [c[0], c.get(1).copied().unwrap_or(0.0), c.get(2).copied().unwrap_or(0.0)])
        .collect()
}
