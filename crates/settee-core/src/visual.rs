//! Visual models' geometry and SOFA's visual update.
//!
//! A visual model (OglModel, VisualModelImpl) holds vertex positions and elements of its own,
//! apart from the mechanical states. SOFA moves them in its *visual* update, after the step,
//! by applying every mapping whose output is a visual model to positions only; the mechanical
//! stages never see these mappings. [`update_visual_models`] is that update: called only by a
//! viewer after a step, so a run that draws nothing never pays for it, and no simulated number
//! depends on it.

use crate::diag::SimResult;
use crate::graph::role::RoleId;
use crate::graph::scene::{ComponentId, Scene};
use crate::graph::state::VecId;
use crate::graph::topology::MeshData;
use crate::mechanics::roles::{Mapping, MAPPING};

/// The geometry of a visual model.
pub trait VisualGeometry {
    /// Current vertex positions, 3 reals per vertex.
    fn positions(&self) -> &[f64];
    /// Replaces the vertex positions (same count, 3 reals per vertex).
    fn set_positions(&mut self, x: &[f64]);
    /// The positions once the model was initialised (its translation, rotation and scale
    /// applied): what a mapping to it locates in its input at init.
    fn rest_positions(&self) -> &[f64];
    /// Its elements (triangles, quads, edges; `points` is left empty).
    fn elements(&self) -> &MeshData;
    /// Its colour (r, g, b, a in [0, 1]).
    fn color(&self) -> [f64; 4];
}

pub const VISUAL_GEOMETRY: RoleId = RoleId::of::<dyn VisualGeometry>("VisualGeometry");

/// SOFA's visual update: every mapping whose output is a visual model maps the current
/// positions of its inputs into the model's vertices. Touches no mechanical state.
pub fn update_visual_models(scene: &mut Scene) -> SimResult {
    let pairs: Vec<(ComponentId, ComponentId)> = scene
        .components
        .iter()
        .filter(|(_, e)| e.plays(MAPPING))
        .filter_map(|(id, e)| Some((id, e.role::<dyn Mapping>()?.visual_output()?)))
        .collect();
    for (m, v) in pairs {
        let Some(mut out) = scene.role::<dyn VisualGeometry>(v).map(|g| g.positions().to_vec()) else { continue };
        {
            let Scene { components, store, .. } = &mut *scene;
            let Some(map) = components[m].role_mut::<dyn Mapping>() else { continue };
            let ins: Vec<&[f64]> = map.inputs().iter().map(|s| store.get(*s).read(VecId::POSITION)).collect();
            map.apply(&mut out, &ins)?;
        }
        if let Some(g) = scene.role_mut::<dyn VisualGeometry>(v) {
            g.set_positions(&out);
        }
    }
    Ok(())
}

/// Maps the current positions of `map`'s inputs into its visual model (a mapping's init, which
/// holds the mapping outside the scene).
pub fn map_into_visual(scene: &mut Scene, map: &mut dyn Mapping) -> SimResult {
    let Some(v) = map.visual_output() else { return Ok(()) };
    let Some(mut out) = scene.role::<dyn VisualGeometry>(v).map(|g| g.positions().to_vec()) else { return Ok(()) };
    {
        let ins: Vec<&[f64]> = map.inputs().iter().map(|s| scene.store.get(*s).read(VecId::POSITION)).collect();
        map.apply(&mut out, &ins)?;
    }
    if let Some(g) = scene.role_mut::<dyn VisualGeometry>(v) {
        g.set_positions(&out);
    }
    Ok(())
}
