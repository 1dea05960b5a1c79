//! What the end-to-end scene tests share: a scene text loaded with every component, steps, and
//! a state found by name.
#![allow(dead_code)] // every test file uses its own part

use settee_core::simulation::animate;
use settee_core::state::MState;
use settee_core::Scene;
use settee_tests::temp_scene;

/// Loads a scene text with Settee's factory (written to a temporary file named after `name`);
/// panics with the first error.
pub fn load(name: &str, text: &str) -> Scene {
    let path = temp_scene(name, text);
    settee::load(&path, &settee::factory(), &[]).unwrap_or_else(|f| panic!("{}", f.first_error())).scene
}

/// `n` steps of the root's time step.
pub fn steps(s: &mut Scene, n: usize) {
    let dt = s.root().context.dt;
    for _ in 0..n {
        animate(s, dt).expect("step");
    }
}

/// The mechanical state named `name`.
pub fn state<'a>(s: &'a Scene, name: &str) -> &'a MState {
    s.store.states.values().find(|m| m.name == name).unwrap_or_else(|| panic!("no state {name}"))
}
