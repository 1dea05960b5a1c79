//! What a page draws of a scene, shared by the replay page (`settee view`) and the live studio
//! (`settee studio`): found through the scene's components, once, after init. For every node
//! with a mechanical state, the surface of its topology (the node's own, a collision model's,
//! or an ancestor's whose points are this state's): triangles, quads split in two, the
//! boundary faces of tetrahedra and hexahedra, else the edges, else the state's points (with
//! the node's `SpringForceField` springs as lines). Nodes without a state draw the collision
//! models they hold, on the state those models use.

use std::collections::HashMap;

use settee_core::role;
use settee_core::{ComponentId, MeshData, NodeId, Scene, StateId, VecId};

/// How a layer's indices are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    /// Index triples.
    Triangles,
    /// Index pairs.
    Lines,
    /// Every vertex of the track.
    Points,
}

impl LayerKind {
    pub fn name(self) -> &'static str {
        match self {
            LayerKind::Triangles => "triangles",
            LayerKind::Lines => "lines",
            LayerKind::Points => "points",
        }
    }
}

/// One drawable item: elements over the vertices of one track.
#[derive(Clone, Debug)]
pub struct Layer {
    /// Path of the node it belongs to (`/root/beam`).
    pub node: String,
    /// What it shows (`RegularGridTopology 'grid': 246 boundary quads`).
    pub label: String,
    /// Index into [`Recording::tracks`].
    pub track: usize,
    pub kind: LayerKind,
    /// Vertex indices into the track (empty for points).
    pub indices: Vec<u32>,
}

/// One drawn state: its positions are read every frame.
#[derive(Clone, Debug)]
pub struct DrawnTrack {
    /// Path of the state (`/root/beam/dofs`).
    pub name: String,
    pub state: StateId,
    /// Vertices per frame (the state's size when drawing started).
    pub vertices: usize,
}

/// Everything drawn of a scene: tracks (states) and layers (elements over a track).
#[derive(Clone, Debug, Default)]
pub struct Drawing {
    pub tracks: Vec<DrawnTrack>,
    pub layers: Vec<Layer>,
}

/// The boundary faces of a mesh's volumes, as triangles (quads of hexahedra split in two):
/// faces used by exactly one element, in element order.
pub fn boundary_triangles(mesh: &MeshData) -> (Vec<[usize; 3]>, usize) {
    // Faces of a tetrahedron (a, b, c, d) and of a hexahedron in SOFA's vertex order (bottom
    // face 0-1-2-3, top face 4-5-6-7).
    const TET: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];
    const HEX: [[usize; 4]; 6] = [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]];
    let mut faces: Vec<Vec<usize>> = Vec::new();
    for t in &mesh.tetrahedra {
        faces.extend(TET.iter().map(|f| f.iter().map(|&i| t[i]).collect()));
    }
    for h in &mesh.hexahedra {
        faces.extend(HEX.iter().map(|f| f.iter().map(|&i| h[i]).collect()));
    }
    let key = |f: &[usize]| {
        let mut k = f.to_vec();
        k.sort_unstable();
        k
    };
    let mut count: HashMap<Vec<usize>, usize> = HashMap::with_capacity(faces.len());
    for f in &faces {
        *count.entry(key(f)).or_default() += 1;
    }
    let mut tris = Vec::new();
    let mut n = 0;
    for f in faces.iter().filter(|f| count[&key(f)] == 1) {
        n += 1;
        tris.push([f[0], f[1], f[2]]);
        if f.len() == 4 {
            tris.push([f[0], f[2], f[3]]);
        }
    }
    (tris, n)
}

/// The elements of `mesh` to draw over `vertices` points, with a description; `None` when it
/// has nothing drawable. Elements with an index outside the state are left out.
pub fn mesh_layer(mesh: &MeshData, vertices: usize) -> Option<(LayerKind, Vec<u32>, String)> {
    let ok = |f: &[usize]| f.iter().all(|&i| i < vertices);
    let flat = |tris: &[[usize; 3]]| -> Vec<u32> { tris.iter().filter(|t| ok(&t[..])).flatten().map(|&i| i as u32).collect() };
    if !mesh.tetrahedra.is_empty() || !mesh.hexahedra.is_empty() {
        let (tris, faces) = boundary_triangles(mesh);
        let what = if mesh.hexahedra.is_empty() { "tetrahedra" } else { "hexahedra" };
        let idx = flat(&tris);
        if !idx.is_empty() {
            return Some((LayerKind::Triangles, idx, format!("{faces} boundary faces of {} {what}", mesh.tetrahedra.len() + mesh.hexahedra.len())));
        }
    }
    if !mesh.triangles.is_empty() || !mesh.quads.is_empty() {
        let mut tris = mesh.triangles.clone();
        for q in &mesh.quads {
            tris.push([q[0], q[1], q[2]]);
            tris.push([q[0], q[2], q[3]]);
        }
        let idx = flat(&tris);
        if !idx.is_empty() {
            return Some((LayerKind::Triangles, idx, format!("{} triangles, {} quads", mesh.triangles.len(), mesh.quads.len())));
        }
    }
    let idx: Vec<u32> = mesh.edges.iter().filter(|e| ok(&e[..])).flatten().map(|&i| i as u32).collect();
    (!idx.is_empty()).then(|| (LayerKind::Lines, idx, format!("{} edges", mesh.edges.len())))
}

/// Collision models of a node, with the state and topology they use.
fn collision_models(scene: &Scene, n: NodeId) -> Vec<(ComponentId, Option<StateId>, Option<ComponentId>)> {
    scene
        .node(n)
        .objects
        .iter()
        .copied()
        .filter(|&c| scene.entry(c).plays(role::COLLISION_MODEL))
        .filter_map(|c| {
            let cm = scene.role::<dyn settee_core::collision::CollisionModel>(c)?;
            Some((c, cm.state(), cm.topology()))
        })
        .collect()
}

impl Drawing {
    /// What to draw: tracks (states) and their layers, in pre-order of the nodes.
    pub fn select(scene: &Scene) -> Drawing {
        let (tracks, layers) = select(scene);
        Drawing { tracks, layers }
    }

    /// Writes the positions of track `track` now into `out`, as `f32` (x, y, z per vertex;
    /// missing axes are 0, rigid frames give their origin).
    pub fn read_positions(&self, scene: &Scene, track: usize, out: &mut Vec<f32>) {
        let t = &self.tracks[track];
        let st = scene.store.get(t.state);
        let x = st.read(VecId::POSITION);
        let (c, s) = (st.layout.coord_size(), st.layout.spatial_size().min(3));
        out.clear();
        out.resize(3 * t.vertices, 0.0);
        for (i, p) in x.chunks_exact(c).take(t.vertices).enumerate() {
            for a in 0..s {
                out[3 * i + a] = p[a] as f32;
            }
        }
    }
}

fn select(scene: &Scene) -> (Vec<DrawnTrack>, Vec<Layer>) {
    let mut tracks: Vec<DrawnTrack> = Vec::new();
    let mut layers: Vec<Layer> = Vec::new();
    let mut drawn: Vec<(StateId, Option<ComponentId>)> = Vec::new();
    let track_of = |tracks: &mut Vec<DrawnTrack>, s: StateId| -> usize {
        if let Some(i) = tracks.iter().position(|t| t.state == s) {
            return i;
        }
        let st = scene.store.get(s);
        let name = format!("{}/{}", scene.node_path(st.node).trim_end_matches('/'), st.name);
        tracks.push(DrawnTrack { name, state: s, vertices: st.size });
        tracks.len() - 1
    };
    let topo_label = |c: ComponentId| scene.entry(c).label();
    for n in scene.preorder(Scene::ROOT) {
        if !scene.node(n).activated {
            continue;
        }
        let node = scene.node_path(n);
        let cms = collision_models(scene, n);
        if let Some(state) = scene.slot(n, role::MECHANICAL_STATE).and_then(|ms| scene.state_of(ms)) {
            let size = scene.store.get(state).size;
            if size == 0 {
                continue;
            }
            // The node's own topology, then its collision models', then an ancestor's whose
            // points are this state's.
            let mut candidates: Vec<ComponentId> = scene.slot(n, role::TOPOLOGY).into_iter().collect();
            candidates.extend(cms.iter().filter(|(_, s, _)| *s == Some(state)).filter_map(|(_, _, t)| *t));
            if let Some(t) = scene.context_topology(n).filter(|t| !candidates.contains(t)) {
                if scene.mesh_of(t).is_some_and(|m| m.points.len() == size) {
                    candidates.push(t);
                }
            }
            let found = candidates.iter().find_map(|&t| Some((t, mesh_layer(scene.mesh_of(t)?, size)?)));
            let track = track_of(&mut tracks, state);
            match found {
                Some((t, (kind, indices, what))) => {
                    drawn.push((state, Some(t)));
                    layers.push(Layer { node: node.clone(), label: format!("{}: {what}", topo_label(t)), track, kind, indices });
                }
                None => {
                    drawn.push((state, None));
                    // Springs inside the state (a chain, a cloth without topology) as lines.
                    let springs: Vec<u32> = scene
                        .node(n)
                        .objects
                        .iter()
                        .filter_map(|&c| Some((c, scene.get::<settee_spring::SpringForceField>(c)?)))
                        .filter(|(_, ff)| ff.state_ids() == Some((state, state)))
                        .flat_map(|(_, ff)| ff.springs().iter().filter(|s| s.m1 < size && s.m2 < size).flat_map(|s| [s.m1 as u32, s.m2 as u32]))
                        .collect();
                    if !springs.is_empty() {
                        let label = format!("SpringForceField: {} springs", springs.len() / 2);
                        layers.push(Layer { node: node.clone(), label, track, kind: LayerKind::Lines, indices: springs });
                    }
                    let label = format!("{} '{}': {size} points", scene.entry(scene.store.get(state).owner).class.name, scene.store.get(state).name);
                    layers.push(Layer { node: node.clone(), label, track, kind: LayerKind::Points, indices: Vec::new() });
                }
            }
        }
        // Collision models drawing a state of another node (no state of their own here).
        for (c, s, t) in cms {
            let (Some(s), Some(t)) = (s, t) else { continue };
            if drawn.iter().any(|d| d.0 == s && (d.1 == Some(t) || scene.store.get(s).node == n)) {
                continue;
            }
            let size = scene.store.get(s).size;
            let Some((kind, indices, what)) = scene.mesh_of(t).and_then(|m| mesh_layer(m, size)) else { continue };
            drawn.push((s, Some(t)));
            let track = track_of(&mut tracks, s);
            layers.push(Layer { node: node.clone(), label: format!("{}: {what}", scene.entry(c).label()), track, kind, indices });
        }
    }
    (tracks, layers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_faces_drop_shared_faces() {
        // Two tetrahedra sharing face (1, 2, 3): 8 faces, 6 on the boundary.
        let mesh = MeshData { tetrahedra: vec![[0, 1, 2, 3], [4, 1, 2, 3]], ..Default::default() };
        let (tris, n) = boundary_triangles(&mesh);
        assert_eq!(n, 6);
        assert_eq!(tris.len(), 6);
        assert!(tris.iter().all(|t| t.contains(&0) || t.contains(&4)), "{tris:?}");
        // Two hexahedra side by side along x (a 3 × 2 × 2 grid) share one quad: 10 of their 12
        // faces are on the boundary, 20 triangles.
        let hex = |o: usize| [o, o + 1, o + 4, o + 3, o + 6, o + 7, o + 10, o + 9];
        let mesh = MeshData { hexahedra: vec![hex(0), hex(1)], ..Default::default() };
        let (tris, n) = boundary_triangles(&mesh);
        assert_eq!((n, tris.len()), (10, 20));
    }

    #[test]
    fn elements_outside_the_state_are_left_out() {
        let mesh = MeshData { triangles: vec![[0, 1, 2], [1, 2, 9]], quads: vec![[0, 1, 3, 2]], ..Default::default() };
        let (kind, idx, what) = mesh_layer(&mesh, 4).unwrap();
        assert_eq!(kind, LayerKind::Triangles);
        assert_eq!(idx, [0, 1, 2, 0, 1, 3, 0, 3, 2]);
        assert_eq!(what, "2 triangles, 1 quads");
        let edges = MeshData { edges: vec![[0, 1], [1, 5]], ..Default::default() };
        assert_eq!(mesh_layer(&edges, 2).map(|l| (l.0, l.1)), Some((LayerKind::Lines, vec![0, 1])));
        assert!(mesh_layer(&MeshData::default(), 4).is_none());
    }
}
