//! `AverageCoord`: the mean of some coordinates of the context state (SOFA's Engine/Analyze).
//!
//! The coordinates summed in index order (every coordinate when `indices` is empty), then
//! multiplied by `1/n`. `vecId` names the state vector as SOFA numbers them: 1 the positions
//! (default), 2 the rest positions. With `listening`, the mean is computed again at the start of
//! every step, as SOFA does on its AnimateBeginEvent.

use settee_core::factory::BaseData;
use settee_core::role::Engine;
use settee_core::{component, Component, ComponentId, InitCtx, Scene, SimResult, StateId, VecId};

/// The mean of the listed coordinates (`k` reals each; every one when `indices` is empty), or
/// a message when there are none or an index is beyond them.
pub fn average(coords: &[f64], k: usize, indices: &[usize]) -> Result<Vec<f64>, String> {
    let total = coords.len() / k;
    let n = if indices.is_empty() { total } else { indices.len() };
    if n == 0 {
        return Err("there are no coordinates to average".into());
    }
    let mut c = vec![0.0; k];
    for j in 0..n {
        let i = if indices.is_empty() { j } else { indices[j] };
        let x = coords.get(i * k..(i + 1) * k).ok_or_else(|| format!("index {i} is beyond the {total} coordinates"))?;
        for (ck, xk) in c.iter_mut().zip(x) {
            *ck += xk;
        }
    }
    let inv = 1.0 / n as f64;
    for ck in &mut c {
        *ck *= inv;
    }
    Ok(c)
}

/// Compute the average of coordinates.
#[component(
    module = "Sofa.Component.Engine.Analyze",
    markers = [Engine],
    templates = ["Vec3d", "Vec2d", "Vec1d", "Rigid3d", "Rigid2d"],
    template_rule = FromState,
    create = |_| AverageCoord::default(),
    data = {
        /// indices of the coordinates to average
        indices: Indices,
        /// index of the vector (default value corresponds to core::vec_id::write_access::position )
        vecId: Int = "1",
        /// average of the values with the given indices in the given coordinate vector (default value corresponds to the average coord of the mechanical context)
        average: Coord,
    },
)]
#[derive(Clone, Default)]
pub struct AverageCoord {
    state: Option<StateId>,
    vector: Option<VecId>,
}

impl AverageCoord {
    fn compute(&self, scene: &Scene, me: ComponentId) -> Result<Option<Vec<f64>>, String> {
        let (Some(s), Some(v)) = (self.state, self.vector) else { return Ok(None) };
        let k = scene.store.get(s).layout.coord_size();
        let x = scene.store.get(s).read(v);
        average(x, k, scene.entry(me).data.get(Self::INDICES)).map(Some)
    }
}

impl Component for AverageCoord {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.vector = match cx.data().get(Self::VEC_ID) {
            1 => Some(VecId::POSITION),
            2 => Some(VecId::REST_POSITION),
            other => return Err(cx.error(format!("vecId {other} is not supported")).hint("use 1 (positions) or 2 (rest positions)")),
        };
        self.state = Some(s);
        match self.compute(cx.scene, cx.id) {
            Ok(Some(c)) => cx.data_mut().put(Self::AVERAGE, c),
            Ok(None) => {}
            Err(e) => return Err(cx.error(e)),
        }
        Ok(())
    }

    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        if !scene.entry(me).data.get(BaseData::LISTENING) {
            return Ok(());
        }
        if let Ok(Some(c)) = self.compute(scene, me) {
            scene.entry_mut(me).data.put(Self::AVERAGE, c);
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use super::*;
    use crate::test_support::factory;
    use settee_core::simulation::init_root;
    use settee_core::testing::add;

    /// OglLabel.scn's cube: the mean of its 8 corners is (0.5, 0.5, 1.5); of corners 1 and 7,
    /// (1, 0.5, 1.5). Listening, the mean follows the state at the start of a step.
    #[test]
    fn mean_of_the_cube_corners() {
        let f = factory();
        let mut s = Scene::new("root");
        let ms = add(&mut s, &f, Scene::ROOT, "MechanicalObject", &[("position", "0 0 1  1 0 1  0 1 1  1 1 1  0 0 2  1 0 2  0 1 2  1 1 2")]);
        let all = add(&mut s, &f, Scene::ROOT, "AverageCoord", &[("listening", "true")]);
        let two = add(&mut s, &f, Scene::ROOT, "AverageCoord", &[("indices", "1 7")]);
        init_root(&mut s, &f).unwrap();
        assert_eq!(s.entry(all).template, "Vec3d");
        assert_eq!(s.entry(all).data.reals("average"), [0.5, 0.5, 1.5]);
        assert_eq!(s.entry(two).data.reals("average"), [1.0, 0.5, 1.5]);
        let st = s.state_of(ms).unwrap();
        s.store.get_mut(st).write(VecId::POSITION)[0] = 8.0;
        settee_core::simulation::animate_begin(&mut s).unwrap();
        assert_eq!(s.entry(all).data.reals("average"), [1.5, 0.5, 1.5]);
        assert_eq!(s.entry(two).data.reals("average"), [1.0, 0.5, 1.5]);
        assert_eq!(average(&[1.0, 2.0], 1, &[]), Ok(vec![1.5]));
        assert!(average(&[1.0, 2.0], 1, &[3]).is_err());
        assert!(average(&[], 3, &[]).is_err());
    }
}
