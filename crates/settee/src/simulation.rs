//! A small API for programs that embed Settee: load a scene, step it, read its states as
//! nalgebra vectors.
//!
//! ```no_run
//! let mut sim = settee::Simulation::open("scenes/first_scene_1_hanging_cube.scn").unwrap();
//! sim.step_n(50).unwrap();
//! let lowest = sim.positions("dofs").unwrap().iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
//! println!("t = {:.2} s, lowest node at y = {lowest:.4}", sim.time());
//! ```
//!
//! [`Simulation::scene`] and [`Simulation::scene_mut`] give the whole scene graph
//! (`settee_core::Scene`) when this is not enough.

use std::fmt;
use std::path::Path;

use nalgebra::{Point3, UnitQuaternion, Vector3};
use settee_core::{Layout, Scene, SimError, StateId, VecId};

use crate::run::LoadFailure;

/// A loaded, initialised scene, ready to step.
pub struct Simulation {
    scene: Scene,
}

/// What went wrong in a [`Simulation`] call.
#[derive(Debug)]
pub enum Error {
    /// The scene could not be loaded or initialised; every diagnostic is kept.
    Load(LoadFailure),
    /// A step failed (a diverged state, a solver error, ...).
    Step(SimError),
    /// No state, or several, answer to this name.
    State(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Load(failure) => write!(f, "{}", failure.first_error()),
            Error::Step(e) => write!(f, "{e}"),
            Error::State(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for Error {}

impl Simulation {
    /// Loads and initialises a scene file with every component Settee knows. Relative mesh
    /// paths are searched next to the scene and in `SOFA_DATA_PATH`.
    pub fn open(path: impl AsRef<Path>) -> Result<Simulation, Error> {
        let loaded = crate::load(path.as_ref(), &crate::factory(), &[]).map_err(Error::Load)?;
        Ok(Simulation { scene: loaded.scene })
    }

    /// Wraps a scene that is already initialised.
    pub fn from_scene(scene: Scene) -> Simulation {
        Simulation { scene }
    }

    /// One time step of the root node's `dt`.
    pub fn step(&mut self) -> Result<(), Error> {
        let dt = self.dt();
        settee_core::simulation::animate(&mut self.scene, dt).map_err(Error::Step)
    }

    /// `n` time steps.
    pub fn step_n(&mut self, n: usize) -> Result<(), Error> {
        (0..n).try_for_each(|_| self.step())
    }

    /// Simulated time.
    pub fn time(&self) -> f64 {
        self.scene.root().context.time
    }

    /// The root node's time step.
    pub fn dt(&self) -> f64 {
        self.scene.root().context.dt
    }

    /// The names of the scene's mechanical states (`MechanicalObject` names), in creation order.
    pub fn state_names(&self) -> Vec<&str> {
        self.scene.store.states.values().map(|s| s.name.as_str()).collect()
    }

    /// Positions of the state named `state`: Vec1/Vec2 coordinates padded with zeros, the
    /// centres of rigid frames.
    pub fn positions(&self, state: &str) -> Result<Vec<Point3<f64>>, Error> {
        let (layout, x) = self.read(state, VecId::POSITION)?;
        Ok(x.chunks_exact(layout.coord_size()).map(|c| Point3::from(leading_vector(layout, c))).collect())
    }

    /// Velocities of the state named `state` (linear velocity for rigid frames).
    pub fn velocities(&self, state: &str) -> Result<Vec<Vector3<f64>>, Error> {
        let (layout, v) = self.read(state, VecId::VELOCITY)?;
        Ok(v.chunks_exact(layout.deriv_size()).map(|c| leading_vector(layout, c)).collect())
    }

    /// Orientations of the frames of a Rigid3 state (SOFA stores quaternions as x y z w).
    pub fn orientations(&self, state: &str) -> Result<Vec<UnitQuaternion<f64>>, Error> {
        let (layout, x) = self.read(state, VecId::POSITION)?;
        if layout != Layout::Rigid3 {
            return Err(Error::State(format!("state '{state}' is {}, not Rigid3d: it has no orientations", layout.name())));
        }
        Ok(x.chunks_exact(7).map(|c| UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(c[6], c[3], c[4], c[5]))).collect())
    }

    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    pub fn scene_mut(&mut self) -> &mut Scene {
        &mut self.scene
    }

    fn state_id(&self, name: &str) -> Result<StateId, Error> {
        let found: Vec<StateId> = self.scene.store.states.iter().filter(|(_, s)| s.name == name).map(|(id, _)| id).collect();
        match found.as_slice() {
            [id] => Ok(*id),
            [] => Err(Error::State(format!("no state named '{name}'; the scene's states: {}", self.state_names().join(", ")))),
            _ => Err(Error::State(format!("{} states are named '{name}'; give them distinct names in the scene", found.len()))),
        }
    }

    fn read(&self, name: &str, v: VecId) -> Result<(Layout, &[f64]), Error> {
        let st = self.scene.store.get(self.state_id(name)?);
        Ok((st.layout, st.read(v)))
    }
}

/// The first (up to) three reals of a coordinate or derivative as a 3-vector.
fn leading_vector(layout: Layout, c: &[f64]) -> Vector3<f64> {
    let n = match layout {
        Layout::Vec1 => 1,
        Layout::Vec2 | Layout::Rigid2 => 2,
        _ => 3,
    };
    let mut out = Vector3::zeros();
    out.as_mut_slice()[..n].copy_from_slice(&c[..n]);
    out
}
