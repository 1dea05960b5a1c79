//! Helpers for the tests of the crates that build scenes on topologies (as
//! `settee_core::testing` for force fields): attribute lists, SOFA's init visitor without the
//! animation loop, and the grid of the FEMBAR scenes.

use settee_core::{Attr, InitCtx, Scene, SimResult};

/// Attributes from `(name, value)` pairs.
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

/// The RegularGridTopology of the FEMBAR scenes (`FEMBAR_SparseLDLSolver.scn`, …): 4 × 4 × 20
/// points from (-9, 0, 0) to (-6, 3, 19).
pub const FEMBAR_GRID: &[(&str, &str)] = &[
    ("name", "grid"),
    ("nx", "4"),
    ("ny", "4"),
    ("nz", "20"),
    ("xmin", "-9"),
    ("xmax", "-6"),
    ("ymin", "0"),
    ("ymax", "3"),
    ("zmin", "0"),
    ("zmax", "19"),
];
