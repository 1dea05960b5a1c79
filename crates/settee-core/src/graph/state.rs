//! The state store: every mechanical state's vectors, addressed by (state, vector id) as SOFA's
//! VecId system does, and lent to components as slices for each operation.

use crate::arena::Arena;
use crate::types::Layout;
use crate::{ComponentId, NodeId};

/// Whether a vector holds coordinates or derivatives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VecKind {
    Coord,
    Deriv,
}

/// SOFA's VecId: a kind and an index; static ids below, temporaries from 9 (derivs) or 5 (coords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VecId {
    pub kind: VecKind,
    pub index: u32,
}

impl VecId {
    pub const POSITION: VecId = VecId { kind: VecKind::Coord, index: 1 };
    pub const REST_POSITION: VecId = VecId { kind: VecKind::Coord, index: 2 };
    pub const FREE_POSITION: VecId = VecId { kind: VecKind::Coord, index: 3 };
    pub const RESET_POSITION: VecId = VecId { kind: VecKind::Coord, index: 4 };
    pub const VELOCITY: VecId = VecId { kind: VecKind::Deriv, index: 1 };
    pub const RESET_VELOCITY: VecId = VecId { kind: VecKind::Deriv, index: 2 };
    pub const FREE_VELOCITY: VecId = VecId { kind: VecKind::Deriv, index: 3 };
    pub const NORMAL: VecId = VecId { kind: VecKind::Deriv, index: 4 };
    pub const FORCE: VecId = VecId { kind: VecKind::Deriv, index: 5 };
    pub const EXTERNAL_FORCE: VecId = VecId { kind: VecKind::Deriv, index: 6 };
    pub const DX: VecId = VecId { kind: VecKind::Deriv, index: 7 };
    pub const DFORCE: VecId = VecId { kind: VecKind::Deriv, index: 8 };

    pub const FIRST_DYNAMIC_COORD: u32 = 5;
    pub const FIRST_DYNAMIC_DERIV: u32 = 9;

    /// True for the ids bound to a MechanicalObject Data (positions, velocities, forces…), as
    /// opposed to the temporaries solvers allocate.
    pub const fn is_static(self) -> bool {
        match self.kind {
            VecKind::Coord => self.index < Self::FIRST_DYNAMIC_COORD,
            VecKind::Deriv => self.index < Self::FIRST_DYNAMIC_DERIV,
        }
    }

    pub const fn coord(index: u32) -> VecId {
        VecId { kind: VecKind::Coord, index }
    }
    pub const fn deriv(index: u32) -> VecId {
        VecId { kind: VecKind::Deriv, index }
    }

    /// SOFA's name of the Data bound to a static id.
    pub fn data_name(self) -> Option<&'static str> {
        Some(match (self.kind, self.index) {
            (VecKind::Coord, 1) => "position",
            (VecKind::Coord, 2) => "rest_position",
            (VecKind::Coord, 3) => "free_position",
            (VecKind::Coord, 4) => "reset_position",
            (VecKind::Deriv, 1) => "velocity",
            (VecKind::Deriv, 2) => "reset_velocity",
            (VecKind::Deriv, 3) => "free_velocity",
            (VecKind::Deriv, 5) => "force",
            (VecKind::Deriv, 6) => "externalForce",
            (VecKind::Deriv, 7) => "derivX",
            _ => return None,
        })
    }
}

crate::arena_key!(
    /// Id of a mechanical state in the store (generational, like [`crate::ComponentId`]).
    StateId
);

/// One mechanical state (a MechanicalObject): its layout, size and vectors.
#[derive(Clone, Debug)]
pub struct MState {
    pub layout: Layout,
    pub size: usize,
    pub owner: ComponentId,
    pub node: NodeId,
    pub name: String,
    /// Set when the state is the output of a mechanical mapping.
    pub mapped: bool,
    /// Constraint Jacobian rows written on this state (SOFA's `constraintJacobian` MatrixDeriv).
    pub constraint: crate::constraint_rows::ConstraintRows,
    pub(crate) coords: Vec<Option<Vec<f64>>>,
    pub(crate) derivs: Vec<Option<Vec<f64>>>,
    /// The memory of freed vectors, for the next ones created (the external forces are freed at
    /// every step's end and written again in the next).
    spare: Vec<Vec<f64>>,
    /// Bumped whenever a vector may have been changed (written, replaced, resized, freed): Data
    /// linked to a state vector (`@dofs.position`) compare it to know when to pull again.
    pub revision: u64,
}

impl MState {
    pub fn new(layout: Layout, owner: ComponentId, node: NodeId, name: String) -> MState {
        MState {
            layout,
            size: 0,
            owner,
            node,
            name,
            mapped: false,
            constraint: crate::constraint_rows::ConstraintRows::new(layout.deriv_size()),
            coords: Vec::new(),
            derivs: Vec::new(),
            spare: Vec::new(),
            revision: 0,
        }
    }

    fn table(&self, kind: VecKind) -> &Vec<Option<Vec<f64>>> {
        match kind {
            VecKind::Coord => &self.coords,
            VecKind::Deriv => &self.derivs,
        }
    }
    fn table_mut(&mut self, kind: VecKind) -> &mut Vec<Option<Vec<f64>>> {
        match kind {
            VecKind::Coord => &mut self.coords,
            VecKind::Deriv => &mut self.derivs,
        }
    }

    pub fn elem_size(&self, kind: VecKind) -> usize {
        match kind {
            VecKind::Coord => self.layout.coord_size(),
            VecKind::Deriv => self.layout.deriv_size(),
        }
    }

    /// True when the vector exists and is non-empty ("set" in SOFA's sense).
    pub fn is_set(&self, id: VecId) -> bool {
        self.table(id.kind).get(id.index as usize).is_some_and(|v| v.as_ref().is_some_and(|v| !v.is_empty()))
    }

    /// Reads a vector; a missing vector reads as empty.
    pub fn read(&self, id: VecId) -> &[f64] {
        match self.table(id.kind).get(id.index as usize) {
            Some(Some(v)) => v,
            _ => &[],
        }
    }

    /// Writes a vector, creating it zero-filled at the state's size when absent (SOFA's `write`).
    pub fn write(&mut self, id: VecId) -> &mut Vec<f64> {
        self.revision += 1;
        let n = self.size * self.elem_size(id.kind);
        let i = id.index as usize;
        let exists = self.table(id.kind).get(i).is_some_and(Option::is_some);
        let mut spare = if exists { None } else { self.spare.pop() };
        let t = self.table_mut(id.kind);
        if t.len() <= i {
            t.resize_with(i + 1, || None);
        }
        let slot = t[i].get_or_insert_with(|| {
            spare
                .take()
                .map(|mut v| {
                    v.clear();
                    v
                })
                .unwrap_or_default()
        });
        if slot.len() != n {
            slot.resize(n, 0.0);
        }
        slot
    }

    /// Takes a vector out (to lend it mutably beside reads of other vectors); put it back with
    /// [`MState::put`].
    pub fn take(&mut self, id: VecId) -> Vec<f64> {
        std::mem::take(self.write(id))
    }

    pub fn put(&mut self, id: VecId, v: Vec<f64>) {
        self.revision += 1;
        let t = self.table_mut(id.kind);
        t[id.index as usize] = Some(v);
    }

    /// Replaces a vector's content.
    pub fn set_vec(&mut self, id: VecId, v: Vec<f64>) {
        self.revision += 1;
        let t = self.table_mut(id.kind);
        let i = id.index as usize;
        if t.len() <= i {
            t.resize_with(i + 1, || None);
        }
        t[i] = Some(v);
    }

    /// Makes `to` a copy of `from` in the memory `to` already has.
    pub fn copy_vec(&mut self, to: VecId, from: VecId) {
        let mut v = self.take(to);
        v.clear();
        v.extend_from_slice(self.read(from));
        self.put(to, v);
    }

    /// Frees a vector (SOFA's `vFree`: resized to 0 and unset).
    pub fn free(&mut self, id: VecId) {
        self.revision += 1;
        if let Some(v) = self.table_mut(id.kind).get_mut(id.index as usize).and_then(Option::take) {
            if v.capacity() > 0 {
                self.spare.push(v);
            }
        }
    }

    /// Resizes every set vector to `n` elements (new entries zero).
    pub fn resize(&mut self, n: usize) {
        self.revision += 1;
        self.size = n;
        let (cs, ds) = (self.layout.coord_size(), self.layout.deriv_size());
        for v in self.coords.iter_mut().flatten() {
            v.resize(n * cs, 0.0);
        }
        for v in self.derivs.iter_mut().flatten() {
            v.resize(n * ds, 0.0);
        }
    }
}

/// All mechanical states of a scene.
#[derive(Clone, Debug, Default)]
pub struct StateStore {
    pub states: Arena<StateId, MState>,
}

impl StateStore {
    pub fn add(&mut self, s: MState) -> StateId {
        self.states.insert(s)
    }
    /// The `i`-th live state in slot order (the order of creation while nothing was removed).
    pub fn nth(&self, i: usize) -> &MState {
        self.states.values().nth(i).unwrap_or_else(|| panic!("the store has {} states, not {}", self.states.len(), i + 1))
    }
    pub fn get(&self, id: StateId) -> &MState {
        &self.states[id]
    }
    /// False for a removed state (a stale id).
    pub fn contains(&self, id: StateId) -> bool {
        self.states.contains(id)
    }
    pub fn get_mut(&mut self, id: StateId) -> &mut MState {
        &mut self.states[id]
    }
    /// Two distinct states at once (a constraint between two states).
    pub fn get_two_mut(&mut self, a: StateId, b: StateId) -> [&mut MState; 2] {
        self.states.get_two_mut(a, b)
    }
    pub fn len(&self) -> usize {
        self.states.len()
    }
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// First free temporary index of `kind` not set in any of `states` (SOFA's `v_alloc`).
    pub fn alloc(&mut self, states: &[StateId], kind: VecKind) -> VecId {
        let mut index = match kind {
            VecKind::Coord => VecId::FIRST_DYNAMIC_COORD,
            VecKind::Deriv => VecId::FIRST_DYNAMIC_DERIV,
        };
        loop {
            let id = VecId { kind, index };
            if states.iter().all(|s| !self.get(*s).is_set(id)) {
                for s in states {
                    let st = self.get_mut(*s);
                    st.write(id).fill(0.0);
                }
                return id;
            }
            index += 1;
        }
    }

    pub fn free(&mut self, states: &[StateId], id: VecId) {
        for s in states {
            self.get_mut(*s).free(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology_change::{ElementKind, TopologyChange};

    /// A Rigid3 state (coords of 7, derivs of 6) of 5 DOFs with a position, a rest position and a
    /// velocity whose entries encode (DOF, component).
    fn state() -> MState {
        let mut s = MState::new(Layout::Rigid3, ComponentId::first_in_slot(0), NodeId::first_in_slot(0), "dofs".into());
        s.resize(5);
        let fill = |v: &mut Vec<f64>, w: usize, base: f64| {
            for (k, x) in v.iter_mut().enumerate() {
                *x = base + (k / w) as f64 * 10.0 + (k % w) as f64;
            }
        };
        fill(s.write(VecId::POSITION), 7, 0.0);
        fill(s.write(VecId::REST_POSITION), 7, 1000.0);
        fill(s.write(VecId::VELOCITY), 6, 2000.0);
        s
    }

    fn dof(s: &MState, id: VecId, i: usize) -> Vec<f64> {
        let w = s.elem_size(id.kind);
        s.read(id)[i * w..(i + 1) * w].to_vec()
    }

    #[test]
    fn removed_points_leave_every_vector_by_swap_with_last() {
        let mut s = state();
        let before = state();
        let rev = s.revision;
        // Remove 1 (4 moves into 1), then 3 (the last): [0, 4, 2].
        s.apply_point_change(&TopologyChange::Removed { kind: ElementKind::Point, indices: vec![1, 3], elements: vec![] }).unwrap();
        assert_eq!(s.size, 3);
        assert!(s.revision > rev);
        for id in [VecId::POSITION, VecId::REST_POSITION, VecId::VELOCITY] {
            assert_eq!(s.read(id).len(), 3 * s.elem_size(id.kind));
            for (new, old) in [(0, 0), (1, 4), (2, 2)] {
                assert_eq!(dof(&s, id, new), dof(&before, id, old), "{id:?} {new}");
            }
        }
        // Vectors never set stay unset.
        assert!(!s.is_set(VecId::FORCE));
    }

    #[test]
    fn added_points_are_weighted_sums_of_their_ancestors() {
        let mut s = state();
        let before = state();
        let add = TopologyChange::Added {
            kind: ElementKind::Point,
            count: 3,
            elements: vec![],
            ancestors: vec![vec![0, 2], vec![1, 3, 4]],
            coefs: vec![vec![0.25, 0.75], vec![]],
        };
        s.apply_point_change(&add).unwrap();
        assert_eq!(s.size, 8);
        for id in [VecId::POSITION, VecId::REST_POSITION, VecId::VELOCITY] {
            let (a0, a2) = (dof(&before, id, 0), dof(&before, id, 2));
            let expected: Vec<f64> = a0.iter().zip(&a2).map(|(x, y)| 0.0 + 0.25 * x + 0.75 * y).collect();
            assert_eq!(dof(&s, id, 5), expected, "{id:?}");
            // No coefficients: equal weights.
            let third = 1.0 / 3.0;
            let expected: Vec<f64> = (0..s.elem_size(id.kind))
                .map(|c| 0.0 + third * dof(&before, id, 1)[c] + third * dof(&before, id, 3)[c] + third * dof(&before, id, 4)[c])
                .collect();
            assert_eq!(dof(&s, id, 6), expected, "{id:?}");
            // No ancestors: zero.
            assert!(dof(&s, id, 7).iter().all(|&x| x == 0.0), "{id:?}");
            // The old DOFs are untouched.
            assert_eq!(&s.read(id)[..5 * s.elem_size(id.kind)], before.read(id));
        }
    }

    #[test]
    fn renumbered_points_are_permuted_and_bad_changes_refused_untouched() {
        let mut s = state();
        let before = state();
        s.apply_point_change(&TopologyChange::Renumbered { kind: ElementKind::Point, old_of_new: vec![4, 3, 2, 1, 0] }).unwrap();
        assert_eq!(dof(&s, VecId::VELOCITY, 0), dof(&before, VecId::VELOCITY, 4));
        assert_eq!(dof(&s, VecId::POSITION, 3), dof(&before, VecId::POSITION, 1));

        let mut s = state();
        let e = s.apply_point_change(&TopologyChange::Removed { kind: ElementKind::Point, indices: vec![2, 4], elements: vec![] }).unwrap_err();
        assert!(e.0.contains("only 4 points are left"), "{e}");
        assert_eq!(s.size, 5);
        assert_eq!(s.read(VecId::POSITION), before.read(VecId::POSITION));
        let e = s
            .apply_point_change(&TopologyChange::Added {
                kind: ElementKind::Point,
                count: 1,
                elements: vec![],
                ancestors: vec![vec![5]],
                coefs: vec![],
            })
            .unwrap_err();
        assert!(e.0.contains("ancestor 5"), "{e}");
        assert_eq!(s.size, 5);
    }
}
