//! Components that watch a simulation and write what they see, as SOFA's exporters and
//! recorders do: `VTKExporter` (ParaView files), `WriteState` and `ReadState` (SOFA's state
//! text format, for recording and replaying trajectories) and `Monitor` (gnuplot columns of
//! chosen DOFs). None of them changes a simulated number, except `ReadState`, which replays one.
//!
//! They run on the scene's events: the start of the simulation, the start and end of each
//! step, and the end of the simulation ([`settee_core::Component::simulation_start`],
//! `animate_begin`, `animate_end`, `simulation_end`). Relative output names are written under
//! the scene's [`settee_core::Scene::output_dir`] (the current directory unless set), as SOFA
//! writes them relative to the current directory.

mod common;
pub mod compare_state;
pub mod mesh_exporter;
pub mod monitor;
pub mod read_state;
pub mod vtk;
pub mod vtk_exporter;
pub mod write_state;

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<vtk_exporter::VtkExporter>();
    f.add::<write_state::WriteState>();
    f.add::<read_state::ReadState>();
    f.add::<compare_state::CompareState>();
    f.add::<monitor::Monitor>();
    f.add::<mesh_exporter::MeshExporter>();
    f.add::<mesh_exporter::STLExporter>();
}
