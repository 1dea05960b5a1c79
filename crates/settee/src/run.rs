//! Loading a scene file into an initialised scene.

use std::path::{Path, PathBuf};

use settee_core::{Diagnostic, Factory, Scene, Severity};
use settee_scene::DataPath;

/// A loaded and initialised scene, with the diagnostics of loading.
pub struct LoadedScene {
    pub scene: Scene,
    pub path: PathBuf,
}

/// Why loading stopped.
#[derive(Debug)]
pub struct LoadFailure {
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadFailure {
    /// True when some problem is a component or feature Settee does not support.
    pub fn unsupported(&self) -> bool {
        self.diagnostics.iter().any(|d| d.unsupported)
    }
    pub fn first_error(&self) -> String {
        self.diagnostics.iter().find(|d| d.severity == Severity::Error).map(|d| d.to_string()).unwrap_or_else(|| "unknown error".into())
    }
}

/// The data path: `SOFA_DATA_PATH`, then the given directories.
pub fn data_path(dirs: &[PathBuf]) -> DataPath {
    DataPath::from_env(dirs.iter().cloned())
}

/// Parses, creates and initialises a scene. Fails on any error message (as SOFA's regression
/// driver does); warnings stay in `scene.messages`.
pub fn load(path: &Path, factory: &Factory, data_dirs: &[PathBuf]) -> Result<LoadedScene, LoadFailure> {
    let dp = data_path(data_dirs);
    let mut scene = match settee_scene::load_scene(path, factory, &dp) {
        Ok(s) => s,
        Err(e) => {
            let d = Diagnostic::error(e.to_string()).hint("check that the file is a SOFA XML scene whose root element is a <Node>");
            return Err(LoadFailure { diagnostics: vec![d] });
        }
    };
    if scene.has_errors() {
        return Err(LoadFailure { diagnostics: scene.messages });
    }
    if let Err(e) = settee_core::simulation::init_root(&mut scene, factory) {
        let mut diagnostics = scene.messages;
        if !diagnostics.iter().any(|d| d.severity == Severity::Error) {
            diagnostics.push((*e.0).clone());
        }
        return Err(LoadFailure { diagnostics });
    }
    if scene.has_errors() {
        return Err(LoadFailure { diagnostics: scene.messages });
    }
    Ok(LoadedScene { scene, path: path.to_path_buf() })
}
