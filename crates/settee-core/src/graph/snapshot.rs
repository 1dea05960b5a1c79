//! Copies of a whole scene: [`Scene::try_clone`] (an independent scene, run on its own, on
//! another thread if need be) and [`Scene::snapshot`] / [`Scene::restore`] (go back to a state
//! the scene had, and run on from it bit for bit as the first time).
//!
//! A copy is the scene's every field: the arenas with their ids (slots, generations and the
//! order free slots are reused in, so that wrappers holding ids and components created later
//! get the same ids in both), the state store, the contacts, the step plan, each component's
//! Data, links and object. Components refer to each other and to states by these ids only, so
//! a copy refers to its own scene. Objects are copied by
//! [`crate::component::ComponentAny::clone_component`]: a component type that is not `Clone`
//! refuses, and the copy fails naming it.
//!
//! Copies are made between steps: while a component runs it is out of its entry
//! ([`Scene::with_taken`]), and a scene with a component out refuses to be copied or restored.

use crate::diag::{SimError, SimResult};
use crate::graph::scene::{next_uid, ComponentId, Scene};

/// The whole state of a scene at one moment, to go back to with [`Scene::restore`]. It is
/// never run itself.
pub struct Snapshot {
    scene: Scene,
    /// Components whose object the snapshot leaves out (`kept_by_restore`).
    kept: Vec<ComponentId>,
}

impl Snapshot {
    /// The simulation time at which it was taken.
    pub fn time(&self) -> f64 {
        self.scene.root().context.time
    }

    /// The uid of the scene it was taken from.
    pub fn scene_uid(&self) -> u64 {
        self.scene.uid
    }
}

impl Scene {
    /// An independent copy of the scene with a uid of its own: the same nodes, components and
    /// ids, states, contacts and solver memories; stepping it gives what stepping this scene
    /// would. Fails, naming the component, when a component cannot be copied (its type is not
    /// `Clone`, e.g. a Python controller) or is running. Observers attached from outside
    /// ([`Scene::step_probes`]) are not copied: they belong to whoever attached them.
    pub fn try_clone(&self) -> SimResult<Scene> {
        self.copy(next_uid(), &[])
    }

    /// The scene's whole state now, to go back to with [`Scene::restore`]. Components that are
    /// [`crate::Component::kept_by_restore`] are left out (the restore keeps the scene's);
    /// the others must be copyable, as for [`Scene::try_clone`].
    pub fn snapshot(&self) -> SimResult<Snapshot> {
        let kept: Vec<ComponentId> =
            self.components.iter().filter(|(_, e)| e.obj.as_ref().is_some_and(|o| o.kept_by_restore())).map(|(id, _)| id).collect();
        Ok(Snapshot { scene: self.copy(self.uid, &kept)?, kept })
    }

    /// Puts the scene back in the state of `snap` (taken from this scene, or from a scene it
    /// was cloned from): the run goes on from there as it did the first time. The scene keeps
    /// its uid, its messages (a log, not state) and its observers; components the snapshot
    /// left out keep their object; the others are copies of the snapshot's, which may take over
    /// what the replaced objects held outside the scene
    /// ([`crate::Component::resume_from`]: an exporter's open file). Nothing changes when it
    /// fails.
    pub fn restore(&mut self, snap: &Snapshot) -> SimResult {
        if let Some((_, e)) = self.components.iter().find(|(_, e)| e.obj.is_none()) {
            return Err(running(&e.label()));
        }
        for &id in &snap.kept {
            let ours = self.components.get(id).filter(|e| std::ptr::eq(e.class, snap.scene.components[id].class));
            if ours.is_none() {
                let label = snap.scene.components[id].label();
                return Err(SimError::new(format!(
                    "cannot restore the snapshot: {label} is not in the scene any more, and a snapshot does not hold its object (its state is not the scene's)"
                )));
            }
        }
        let mut restored = snap.scene.copy(self.uid, &snap.kept)?;
        for (id, entry) in restored.components.iter_mut() {
            let Some(old) = self.components.get_mut(id).filter(|e| std::ptr::eq(e.class, entry.class)) else { continue };
            if snap.kept.contains(&id) {
                entry.obj = old.obj.take();
            } else if let (Some(new), Some(old)) = (entry.obj.as_deref_mut(), old.obj.as_deref_mut()) {
                new.resume_from(old);
            }
        }
        restored.messages = std::mem::take(&mut self.messages);
        restored.step_probes = std::mem::take(&mut self.step_probes);
        restored.stage_observer = self.stage_observer;
        restored.timing_enabled = self.timing_enabled;
        restored.timers = std::mem::take(&mut self.timers);
        *self = restored;
        Ok(())
    }

    /// The copy behind the three: every field, objects through `clone_component`; the objects
    /// of `kept` stay out (`None`).
    fn copy(&self, uid: u64, kept: &[ComponentId]) -> SimResult<Scene> {
        let mut components = self.components.clone();
        for (id, entry) in self.components.iter() {
            if kept.contains(&id) {
                continue;
            }
            let Some(obj) = entry.obj.as_deref() else { return Err(running(&entry.label())) };
            let copy = obj.clone_component().map_err(|r| {
                SimError::new(format!("{} (in {}) cannot be copied: {}", entry.label(), self.node_path(entry.node), r))
                    .hint("a scene is copied only when all its components can be; see docs/architecture.md, \"Copies of a scene\"")
            })?;
            components[id].obj = Some(copy);
        }
        Ok(Scene {
            uid,
            nodes: self.nodes.clone(),
            components,
            store: self.store.clone(),
            messages: self.messages.clone(),
            data_path: self.data_path.clone(),
            timers: self.timers.clone(),
            timing_enabled: self.timing_enabled,
            stage_observer: self.stage_observer,
            animation_loop: self.animation_loop,
            initialized: self.initialized,
            factory: self.factory.clone(),
            deferred: self.deferred.clone(),
            live_data_pass: self.live_data_pass,
            total_force_contributor: self.total_force_contributor,
            output_dir: self.output_dir.clone(),
            started: self.started,
            divergence: self.divergence.clone(),
            lenient: self.lenient,
            step_probes: Vec::new(),
            structure_version: self.structure_version,
            topology_revision: self.topology_revision,
            contacts: self.contacts.clone(),
            plan: self.plan.clone(),
            spare_vectors: Vec::new(),
            spare_object_lists: Vec::new(),
        })
    }
}

fn running(label: &str) -> SimError {
    SimError::new(format!("{label} is running: a scene is copied, snapshot or restored between steps only"))
}
