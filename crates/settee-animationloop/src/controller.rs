//! `MechanicalStateController`: drives a DOF of a Rigid3 (or Vec1) state from mouse and device
//! events.
//!
//! Settee has no input events, so no button is ever pressed and no device position arrives: of
//! SOFA's `applyController`, run at every step start when the component listens, only its last
//! part acts — the positions and velocities of the controller's node and the nodes below are
//! projected by their projective constraints, then mapped down through the mechanical mappings.
//! That is what this component does, at the context time of the step's start.

use settee_core::mechanics::{self, MechScope};
use settee_core::{component, Component, ComponentId, InitCtx, Layout, Scene, SimResult, VecId};

/// Controls a mechanical state from mouse or device events.
#[component(
    module = "Sofa.Component.Controller",
    description = "Provides a Mouse & Keyboard user control on a Mechanical State.",
    templates = ["Rigid3d", "Vec1d"],
    template_rule = FromState,
    data = {
        /// Index of the controlled DOF
        index: Int = "0",
        /// Controlling the DOF only in translation
        onlyTranslation: Bool = "false",
        /// state of ths device button
        buttonDeviceState: Bool = "false",
        /// Main direction and orientation of the controlled DOF
        mainDirection: Fixed(3) as Vec3 = "0 0 -1",
        /// Event handling frequency controls the controller update frequency
        handleEventTriggersUpdate: Bool = "false",
    },
)]
#[derive(Clone, Default)]
pub struct MechanicalStateController {
    listening: bool,
}

impl Component for MechanicalStateController {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        let layout = cx.state_layout(s);
        if !matches!(layout, Layout::Rigid3 | Layout::Vec1) {
            return Err(cx
                .error(format!("the mechanical state has template {}, but this controller supports Rigid3d and Vec1d", layout.name()))
                .hint("put the controller next to a Rigid3d MechanicalObject"));
        }
        let d = cx.data();
        let index = d.get(Self::INDEX);
        let n = cx.state_size(s);
        if index < 0 || index as usize >= n {
            return Err(cx.error(format!("index {index} is not a DOF of the state of {n} DOFs")));
        }
        self.listening = d.get(settee_core::factory::BaseData::LISTENING);
        Ok(())
    }

    /// SOFA's `onBeginAnimationStep` without input events: project, then map down.
    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        if !self.listening {
            return Ok(());
        }
        let node = scene.entry(me).node;
        let scope = MechScope::build(scene, node);
        mechanics::project_position_velocity(scene, &scope, VecId::POSITION, VecId::VELOCITY)?;
        mechanics::propagate_position_velocity(scene, &scope, VecId::POSITION, VecId::VELOCITY)
    }
}

#[cfg(test)]
mod tests {
    use settee_core::simulation::{animate_begin, init_root};
    use settee_core::testing::add;
    use settee_core::{Scene, VecId};

    /// Two Rigid3 DOFs moving at (1, 2, 3 | 0.1, 0.2, 0.3), DOF 0 under a
    /// LinearMovementProjectiveConstraint (keys 0 → 1, movement (0, 0, 2)): at the step start a
    /// listening controller projects — DOF 0 gets the slope (0, 0, 2 | 0) as velocity and its
    /// keyed position, DOF 1 is untouched; a controller that does not listen does nothing.
    #[test]
    fn step_start_projects_the_node_states() {
        for listening in [true, false] {
            let f = settee_statecontainer::factory_with(&[settee_projective::register, crate::register]);
            let mut s = Scene::new("root");
            let ms = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", "Rigid3d"), ("position", "0 0 0 0 0 0 1  1 0 0 0 0 0 1")]);
            add(
                &mut s,
                &f,
                Scene::ROOT,
                "LinearMovementProjectiveConstraint",
                &[("indices", "0"), ("keyTimes", "0 1"), ("movements", "0 0 0 0 0 0  0 0 2 0 0 0")],
            );
            let l = if listening { "true" } else { "false" };
            add(&mut s, &f, Scene::ROOT, "MechanicalStateController", &[("listening", l), ("mainDirection", "-1 0 0")]);
            init_root(&mut s, &f).unwrap();
            s.node_mut(Scene::ROOT).context.time = 0.5;
            let st = s.state_of(ms).unwrap();
            s.store.get_mut(st).write(VecId::VELOCITY).copy_from_slice(&[1.0, 2.0, 3.0, 0.1, 0.2, 0.3, 1.0, 2.0, 3.0, 0.1, 0.2, 0.3]);
            animate_begin(&mut s).unwrap();
            let v = s.store.get(st).read(VecId::VELOCITY).to_vec();
            let x = s.store.get(st).read(VecId::POSITION).to_vec();
            if listening {
                assert_eq!(v[..6], [0.0, 0.0, 2.0, 0.0, 0.0, 0.0]);
                assert_eq!(x[..3], [0.0, 0.0, 1.0]);
            } else {
                assert_eq!(v[..6], [1.0, 2.0, 3.0, 0.1, 0.2, 0.3]);
                assert_eq!(x[..3], [0.0, 0.0, 0.0]);
            }
            assert_eq!(v[6..], [1.0, 2.0, 3.0, 0.1, 0.2, 0.3]);
            assert_eq!(x[7..], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        }
    }

    /// A Vec3 state is refused with a clear error; an index beyond the state too.
    #[test]
    fn bad_state_or_index_is_an_error() {
        let f = settee_statecontainer::factory_with(&[crate::register]);
        for (template, pos, index, want) in [("Vec3d", "0 0 0", "0", "Vec3d"), ("Rigid3d", "0 0 0 0 0 0 1", "2", "index 2")] {
            let mut s = Scene::new("root");
            add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("template", template), ("position", pos)]);
            add(&mut s, &f, Scene::ROOT, "MechanicalStateController", &[("index", index)]);
            let e = init_root(&mut s, &f).unwrap_err();
            assert!(e.diagnostic().message.contains(want), "{e:?}");
        }
    }
}
