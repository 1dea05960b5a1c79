//! What a page draws of a scene, shared by the replay page (`settee view`) and the live studio
//! (`settee studio`): found through the scene's components after init, and followed as the
//! scene changes ([`Drawing::refresh`]).
//!
//! * **Visual models** (OglModel, VisualModelImpl): their mesh with their colour, moved by the
//!   mappings that output into them in the visual update ([`Drawing::update_visuals`]).
//! * **Behaviour models**: for every node with a mechanical state, every topology of the node
//!   whose points are the state's (triangles, quads split in two, the boundary faces of
//!   tetrahedra and hexahedra, else the edges), else an ancestor's whose points are this
//!   state's, else the state's points (with the node's `SpringForceField` springs as lines).
//!   States of a constraint space (a 1-D state mapped from a state of another dimension: the
//!   distances of a `DistanceMapping`, …) are not geometry and are not drawn.
//! * **Collision models**: the topologies the collision models of a node use.
//!
//! As SOFA's viewer does by default, a scene with visual models shows them and hides its
//! behaviour and collision models; the `displayFlags` of the scene's `VisualStyle`
//! (`showBehaviorModels`, `hideVisual`, …) say otherwise. A scene without visual models shows
//! its behaviour and collision models.

use std::collections::HashMap;

use settee_core::role;
use settee_core::visual::VisualGeometry;
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

/// What a layer shows, as SOFA's display flags group it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// A visual model (`showVisualModels`).
    Visual,
    /// A mechanical state and its topology (`showBehaviorModels`).
    Behavior,
    /// A collision model's elements (`showCollisionModels`).
    Collision,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Visual => "visual",
            Category::Behavior => "behavior",
            Category::Collision => "collision",
        }
    }
}

/// Where a layer's elements come from (what [`Drawing::refresh`] reads again).
#[derive(Clone, Debug, PartialEq)]
pub enum LayerSource {
    /// The elements of a topology container; the label starts with `prefix`.
    Mesh { topology: ComponentId, prefix: String },
    /// The faces of a visual model.
    Visual(ComponentId),
    /// Springs of a `SpringForceField` (fixed).
    Springs,
    /// Every point of the track.
    Points { prefix: String },
}

/// One drawable item: elements over the vertices of one track.
#[derive(Clone, Debug)]
pub struct Layer {
    /// Path of the node it belongs to (`/root/beam`).
    pub node: String,
    /// What it shows, with its counts now (`TetrahedronSetTopologyContainer 'tetras': 864
    /// boundary faces of 2592 tetrahedra`).
    pub label: String,
    /// Index into [`Drawing::tracks`].
    pub track: usize,
    pub kind: LayerKind,
    /// Vertex indices into the track (empty for points).
    pub indices: Vec<u32>,
    pub category: Category,
    /// Its own colour (r, g, b, a), else the page's palette.
    pub color: Option<[f32; 4]>,
    /// Shown when the page opens (SOFA's display flags).
    pub visible: bool,
    pub source: LayerSource,
}

/// What a track's positions are read from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TrackSource {
    State(StateId),
    Visual(ComponentId),
}

/// One drawn set of vertices: its positions are read every frame.
#[derive(Clone, Debug)]
pub struct DrawnTrack {
    /// Path of the state or visual model (`/root/beam/dofs`).
    pub name: String,
    pub source: TrackSource,
    /// Vertices now (follows the state's size: [`Drawing::refresh`]).
    pub vertices: usize,
}

impl DrawnTrack {
    /// The mechanical state drawn, when it is one.
    pub fn state(&self) -> Option<StateId> {
        match self.source {
            TrackSource::State(s) => Some(s),
            TrackSource::Visual(_) => None,
        }
    }
}

/// Everything drawn of a scene: tracks (states, visual models) and layers (elements over a
/// track).
#[derive(Clone, Debug, Default)]
pub struct Drawing {
    pub tracks: Vec<DrawnTrack>,
    pub layers: Vec<Layer>,
    /// The scene's topology revision when the layers were last read.
    topology_revision: u64,
    /// Per layer, the element counts of its topology when last read.
    shapes: Vec<[usize; 6]>,
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

/// The element counts of a mesh (what [`Drawing::refresh`] compares cheaply).
fn shape(mesh: &MeshData) -> [usize; 6] {
    [mesh.points.len(), mesh.edges.len(), mesh.triangles.len(), mesh.quads.len(), mesh.tetrahedra.len(), mesh.hexahedra.len()]
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

/// A state of a constraint space: a 1-D state that a mapping computes from a state of another
/// dimension (lengths of a `DistanceMapping`, projections, …). Its coordinates are not points.
pub fn is_constraint_space(scene: &Scene, s: StateId) -> bool {
    let st = scene.store.get(s);
    if st.layout.spatial_size() != 1 || !st.mapped {
        return false;
    }
    scene
        .components
        .iter()
        .filter(|(_, e)| e.plays(role::MAPPING))
        .filter_map(|(_, e)| e.role::<dyn settee_core::component::Mapping>())
        .any(|m| m.output() == Some(s) && m.inputs().iter().any(|&i| scene.store.get(i).layout.spatial_size() != 1))
}

/// SOFA's display flags that decide what is shown by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DisplayFlags {
    pub visual: bool,
    pub behavior: bool,
    pub collision: bool,
}

impl DisplayFlags {
    /// Applies a `displayFlags` text (`"showVisual hideBehaviorModels showCollision"`) over
    /// `self`: each word is `show` or `hide` followed by what it concerns; `All` is everything.
    pub fn apply(mut self, text: &str) -> DisplayFlags {
        for w in text.split_whitespace() {
            let (on, what) = if let Some(r) = w.strip_prefix("show") {
                (true, r)
            } else if let Some(r) = w.strip_prefix("hide") {
                (false, r)
            } else {
                continue;
            };
            match what {
                "Visual" | "VisualModels" => self.visual = on,
                "Behavior" | "BehaviorModels" => self.behavior = on,
                "Collision" | "CollisionModels" => self.collision = on,
                "All" => {
                    self.visual = on;
                    self.behavior = on;
                    self.collision = on;
                }
                _ => {}
            }
        }
        self
    }

    pub fn shows(&self, c: Category) -> bool {
        match c {
            Category::Visual => self.visual,
            Category::Behavior => self.behavior,
            Category::Collision => self.collision,
        }
    }
}

/// The display flags of a scene: SOFA's defaults (visual models only), every kind shown when
/// the scene has no visual model to show, then the `displayFlags` of its first `VisualStyle`.
pub fn display_flags(scene: &Scene, has_visual: bool) -> DisplayFlags {
    let mut f = DisplayFlags { visual: true, behavior: !has_visual, collision: !has_visual };
    let style = scene
        .preorder(Scene::ROOT)
        .into_iter()
        .flat_map(|n| scene.node(n).objects.clone())
        .find(|&c| scene.get::<settee_visual::VisualStyle>(c).is_some());
    if let Some(c) = style {
        f = f.apply(scene.entry(c).data.get(settee_visual::VisualStyle::DISPLAY_FLAGS));
    }
    f
}

fn color_f32(c: [f64; 4]) -> [f32; 4] {
    c.map(|v| v as f32)
}

impl Drawing {
    /// What to draw: tracks and their layers, in pre-order of the nodes.
    pub fn select(scene: &Scene) -> Drawing {
        let (tracks, mut layers) = select(scene);
        let has_visual = layers.iter().any(|l| l.category == Category::Visual);
        let flags = display_flags(scene, has_visual);
        for l in &mut layers {
            l.visible = flags.shows(l.category);
        }
        hide_coincident_surfaces(&mut layers);
        let shapes = layers.iter().map(|l| layer_shape(scene, l)).collect();
        Drawing { tracks, layers, topology_revision: scene.topology_revision, shapes }
    }

    /// SOFA's visual update: moves the visual models with the bodies they are mapped from.
    /// Call it after a step, before reading the positions; it changes no simulated number.
    pub fn update_visuals(&self, scene: &mut Scene) -> settee_core::SimResult {
        if self.tracks.iter().any(|t| matches!(t.source, TrackSource::Visual(_))) {
            settee_core::visual::update_visual_models(scene)?;
        }
        Ok(())
    }

    /// Follows the scene's topological changes: the layers whose indices (or counts) changed
    /// since the last call, with their new indices and labels in [`Drawing::layers`]; tracks
    /// whose vertex count changed are updated in [`Drawing::tracks`]. Cheap when nothing
    /// changed (the topology revision and a few counts are compared).
    pub fn refresh(&mut self, scene: &Scene) -> Vec<usize> {
        let mut resized = vec![false; self.tracks.len()];
        for (i, t) in self.tracks.iter_mut().enumerate() {
            let n = track_size(scene, t);
            if n != t.vertices {
                t.vertices = n;
                resized[i] = true;
            }
        }
        let moved = scene.topology_revision != self.topology_revision;
        self.topology_revision = scene.topology_revision;
        let mut changed = Vec::new();
        for (i, l) in self.layers.iter_mut().enumerate() {
            let now = layer_shape(scene, l);
            if !moved && !resized[l.track] && now == self.shapes[i] {
                continue;
            }
            self.shapes[i] = now;
            let n = self.tracks[l.track].vertices;
            let (indices, label) = match &l.source {
                LayerSource::Mesh { topology, prefix } => {
                    let mesh = scene.components.get(*topology).and_then(|e| e.role::<dyn role::Topology>()).map(|t| t.mesh());
                    match mesh.and_then(|m| mesh_layer(m, n)).filter(|(k, _, _)| *k == l.kind) {
                        Some((_, idx, what)) => (idx, format!("{prefix}: {what}")),
                        None => (Vec::new(), format!("{prefix}: no {} left", l.kind.name())),
                    }
                }
                LayerSource::Points { prefix } => (Vec::new(), format!("{prefix}: {n} points")),
                LayerSource::Springs | LayerSource::Visual(_) => continue,
            };
            if indices != l.indices || label != l.label {
                l.indices = indices;
                l.label = label;
                changed.push(i);
            }
        }
        changed
    }

    /// Writes the positions of track `track` now into `out`, as `f32` (x, y, z per vertex;
    /// missing axes are 0, rigid frames give their origin).
    pub fn read_positions(&self, scene: &Scene, track: usize, out: &mut Vec<f32>) {
        let t = &self.tracks[track];
        out.clear();
        out.resize(3 * t.vertices, 0.0);
        match t.source {
            TrackSource::State(s) => {
                let st = scene.store.get(s);
                let x = st.read(VecId::POSITION);
                let (c, sp) = (st.layout.coord_size(), st.layout.spatial_size().min(3));
                for (i, p) in x.chunks_exact(c).take(t.vertices).enumerate() {
                    for a in 0..sp {
                        out[3 * i + a] = p[a] as f32;
                    }
                }
            }
            TrackSource::Visual(v) => {
                if let Some(g) = scene.components.get(v).and_then(|e| e.role::<dyn VisualGeometry>()) {
                    for (o, &x) in out.iter_mut().zip(g.positions()) {
                        *o = x as f32;
                    }
                }
            }
        }
    }
}

/// Two topologies of one state often describe one surface (a grid and the tetrahedra made of
/// it): drawn together they fight for the same pixels. A surface whose vertices are exactly
/// those of an earlier visible surface of the same track starts hidden (its checkbox stays).
fn hide_coincident_surfaces(layers: &mut [Layer]) {
    let vertex_set = |l: &Layer| {
        let mut v = l.indices.clone();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut shown: Vec<(usize, Vec<u32>)> = Vec::new();
    for l in layers.iter_mut().filter(|l| l.visible && l.kind == LayerKind::Triangles) {
        let set = vertex_set(l);
        if shown.iter().any(|(t, s)| *t == l.track && *s == set) {
            l.visible = false;
        } else {
            shown.push((l.track, set));
        }
    }
}

fn track_size(scene: &Scene, t: &DrawnTrack) -> usize {
    match t.source {
        TrackSource::State(s) => scene.store.states.get(s).map_or(0, |st| st.size),
        TrackSource::Visual(v) => scene.components.get(v).and_then(|e| e.role::<dyn VisualGeometry>()).map_or(0, |g| g.positions().len() / 3),
    }
}

fn layer_shape(scene: &Scene, l: &Layer) -> [usize; 6] {
    match &l.source {
        LayerSource::Mesh { topology, .. } => {
            scene.components.get(*topology).and_then(|e| e.role::<dyn role::Topology>()).map_or([0; 6], |t| shape(t.mesh()))
        }
        _ => [0; 6],
    }
}

fn select(scene: &Scene) -> (Vec<DrawnTrack>, Vec<Layer>) {
    let mut tracks: Vec<DrawnTrack> = Vec::new();
    let mut layers: Vec<Layer> = Vec::new();
    let mut drawn: Vec<(StateId, Option<ComponentId>)> = Vec::new();
    let track_of = |tracks: &mut Vec<DrawnTrack>, s: StateId| -> usize {
        if let Some(i) = tracks.iter().position(|t| t.source == TrackSource::State(s)) {
            return i;
        }
        let st = scene.store.get(s);
        let name = format!("{}/{}", scene.node_path(st.node).trim_end_matches('/'), st.name);
        tracks.push(DrawnTrack { name, source: TrackSource::State(s), vertices: st.size });
        tracks.len() - 1
    };
    let layer = |node: &str, label: String, track: usize, kind: LayerKind, indices: Vec<u32>, category: Category, source: LayerSource| Layer {
        node: node.to_string(),
        label,
        track,
        kind,
        indices,
        category,
        color: None,
        visible: true,
        source,
    };
    let topo_label = |c: ComponentId| scene.entry(c).label();
    for n in scene.preorder(Scene::ROOT) {
        if !scene.node(n).activated {
            continue;
        }
        let node = scene.node_path(n);
        let cms = collision_models(scene, n);
        let state = scene.slot(n, role::MECHANICAL_STATE).and_then(|ms| scene.state_of(ms));
        if let Some(state) = state.filter(|&s| scene.store.get(s).size > 0 && !is_constraint_space(scene, s)) {
            let size = scene.store.get(state).size;
            // The node's topologies whose points are this state's (the first one in any case),
            // then its collision models', then an ancestor's whose points are this state's.
            let fits = |t: ComponentId| scene.mesh_of(t).is_some_and(|m| m.points.is_empty() || m.points.len() == size);
            let own: Vec<ComponentId> = scene.node(n).objects.iter().copied().filter(|&c| scene.entry(c).plays(role::TOPOLOGY)).collect();
            let mut candidates: Vec<(ComponentId, Category)> = Vec::new();
            for (k, &t) in own.iter().enumerate() {
                if k == 0 || fits(t) {
                    candidates.push((t, Category::Behavior));
                }
            }
            for t in cms.iter().filter(|(_, s, _)| *s == Some(state)).filter_map(|(_, _, t)| *t) {
                if !candidates.iter().any(|c| c.0 == t) {
                    candidates.push((t, Category::Collision));
                }
            }
            if candidates.is_empty() {
                if let Some(t) = scene.context_topology(n) {
                    if scene.mesh_of(t).is_some_and(|m| m.points.len() == size) {
                        candidates.push((t, Category::Behavior));
                    }
                }
            }
            // A node holding collision models draws its own topology as the collision model.
            let collides = cms.iter().any(|(_, s, _)| *s == Some(state));
            let track = track_of(&mut tracks, state);
            let mut any = false;
            for (t, mut category) in candidates {
                let Some((kind, indices, what)) = scene.mesh_of(t).and_then(|m| mesh_layer(m, size)) else { continue };
                if collides {
                    category = Category::Collision;
                }
                any = true;
                drawn.push((state, Some(t)));
                let prefix = topo_label(t);
                layers.push(layer(&node, format!("{prefix}: {what}"), track, kind, indices, category, LayerSource::Mesh { topology: t, prefix }));
            }
            if !any {
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
                    layers.push(layer(&node, label, track, LayerKind::Lines, springs, Category::Behavior, LayerSource::Springs));
                }
                let prefix = format!("{} '{}'", scene.entry(scene.store.get(state).owner).class.name, scene.store.get(state).name);
                let label = format!("{prefix}: {size} points");
                layers.push(layer(&node, label, track, LayerKind::Points, Vec::new(), Category::Behavior, LayerSource::Points { prefix }));
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
            let prefix = scene.entry(c).label();
            layers.push(layer(
                &node,
                format!("{prefix}: {what}"),
                track,
                kind,
                indices,
                Category::Collision,
                LayerSource::Mesh { topology: t, prefix },
            ));
        }
        // Visual models: their own vertices and faces.
        for &c in &scene.node(n).objects {
            let Some(g) = scene.role::<dyn VisualGeometry>(c) else { continue };
            let nv = g.positions().len() / 3;
            let Some((kind, indices, what)) = mesh_layer(g.elements(), nv) else { continue };
            let name = format!("{}/{}", node.trim_end_matches('/'), scene.entry(c).name);
            tracks.push(DrawnTrack { name, source: TrackSource::Visual(c), vertices: nv });
            let mut l = layer(
                &node,
                format!("{}: {what}", scene.entry(c).label()),
                tracks.len() - 1,
                kind,
                indices,
                Category::Visual,
                LayerSource::Visual(c),
            );
            l.color = Some(color_f32(g.color()));
            layers.push(l);
        }
    }
    (tracks, layers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_surface_over_the_same_vertices_starts_hidden() {
        let layer = |track: usize, indices: Vec<u32>| Layer {
            node: "/n".into(),
            label: String::new(),
            track,
            kind: LayerKind::Triangles,
            indices,
            category: Category::Behavior,
            color: None,
            visible: true,
            source: LayerSource::Springs,
        };
        // A quad split in two, the same four vertices split the other way, another track's
        // copy, and a surface over other vertices of the first track.
        let mut layers =
            vec![layer(0, vec![0, 1, 2, 0, 2, 3]), layer(0, vec![0, 1, 3, 1, 2, 3]), layer(1, vec![0, 1, 2, 0, 2, 3]), layer(0, vec![0, 1, 4])];
        hide_coincident_surfaces(&mut layers);
        assert_eq!(layers.iter().map(|l| l.visible).collect::<Vec<_>>(), [true, false, true, true]);
    }

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

    #[test]
    fn display_flags_follow_sofa_words() {
        let default = DisplayFlags { visual: true, behavior: false, collision: false };
        assert_eq!(default.apply("showBehaviorModels showCollision"), DisplayFlags { visual: true, behavior: true, collision: true });
        assert_eq!(default.apply("hideVisual showBehavior"), DisplayFlags { visual: false, behavior: true, collision: false });
        assert_eq!(default.apply("showAll hideCollisionModels"), DisplayFlags { visual: true, behavior: true, collision: false });
        assert_eq!(default.apply("showVisual  "), default);
    }
}
