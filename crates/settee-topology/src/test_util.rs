//! Helpers for the tests of this crate: attribute lists and a minimal scene initialisation.

use settee_core::{Attr, InitCtx, Scene, SimResult};

pub fn attrs(pairs: &[(&str, &str)]) -> Vec<Attr> {
    pairs.iter().map(|(n, v)| Attr { name: n.to_string(), value: v.to_string(), pos: None }).collect()
}

/// `init` of every component, top-down in object order (SOFA's init visitor, without the
/// animation loop and the bottom-up pass).
pub fn init_scene(scene: &mut Scene) -> SimResult {
    scene.resolve_all_links();
    for n in scene.preorder(Scene::ROOT) {
        for c in scene.node(n).objects.clone() {
            scene.pull_links(c);
            scene.with_taken(c, |obj, scene| obj.init(&mut InitCtx { scene, id: c }))?;
            scene.entry_mut(c).initialized = true;
        }
    }
    Ok(())
}
