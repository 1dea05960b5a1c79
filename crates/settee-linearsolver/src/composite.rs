//! `CompositeLinearSystem` (mechanics spec §4.1): a linear system that delegates to a list of
//! assembled systems. All of them are built at every assembly; the solver linked to the
//! composite solves the one named by `solverLinearSystem` (by default the first listed
//! assembled system; when it is given but not listed, it is appended to the list, as SOFA does).
//!
//! In Settee the solver assembles the solved system itself (a `MatrixLinearSystem` with its
//! default Data is exactly what solvers build), so the composite only records which systems are
//! built *alongside*: the solver builds each of them after its own matrix, with the same ODE
//! factors and over the same scope (SOFA's solve context: the linear solver's node), honouring
//! their `assemble*`/`apply*` Data (e.g. stiffness-only or mass-only matrices for inspection).

use settee_core::role::LinearSystem;
use settee_core::{Component, ComponentId, InitCtx, Scene, SimResult};

use crate::common::{linear_system_component, unsupported};
use crate::system::{BaseSystemData, MatrixLinearSystem};

/// The classes whose matrix a composite can build ([`MatrixLinearSystem`]).
fn is_assembled_system(scene: &Scene, c: ComponentId) -> bool {
    matches!(scene.entry(c).class.name, "MatrixLinearSystem" | "ConstantSparsityPatternSystem")
}

/// The systems of composite `c` (after SOFA's init rules) and the one its solver solves.
fn members(scene: &Scene, c: ComponentId) -> (Vec<ComponentId>, Option<ComponentId>) {
    let mut list = scene.link_targets(c, "linearSystems").to_vec();
    let solver = scene.link_targets(c, "solverLinearSystem").first().copied();
    match solver {
        Some(s) => {
            if !list.contains(&s) {
                list.push(s);
            }
            (list, Some(s))
        }
        None => {
            let first = list.iter().copied().find(|&s| is_assembled_system(scene, s));
            (list, first)
        }
    }
}

/// True when `system` is built by a composite without being the system its solver solves
/// (such a system may select partial contributions: nothing is solved with it).
pub(crate) fn is_side_system(scene: &Scene, system: ComponentId) -> bool {
    scene.components.keys().filter(|&c| scene.entry(c).class.name == COMPOSITE).any(|c| {
        let (list, solver) = members(scene, c);
        list.contains(&system) && solver != Some(system)
    })
}

/// The systems a solver whose `linearSystem` link targets `system` builds besides its own: the
/// other members of a composite, none otherwise.
pub(crate) fn side_systems(scene: &Scene, system: ComponentId) -> Vec<ComponentId> {
    if scene.entry(system).class.name != COMPOSITE {
        return Vec::new();
    }
    let (list, solver) = members(scene, system);
    let mut out = Vec::new();
    for s in list {
        if Some(s) != solver && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Builds the matrix of side system `c` (a [`MatrixLinearSystem`]) over the solver's scope.
pub(crate) fn build_side_system(scene: &mut Scene, c: ComponentId, scope: &settee_core::MechScope, factors: settee_core::Mbk) -> SimResult {
    scene.with_taken(c, |obj, scene| match obj.as_any_mut().downcast_mut::<MatrixLinearSystem>() {
        Some(sys) => sys.build(scene, scope, factors),
        None => Ok(()),
    })
}

/// The class name of [`CompositeLinearSystem`].
const COMPOSITE: &str = "CompositeLinearSystem";

linear_system_component! {
    []
    /// Component acting like a linear system, but delegating the linear system functionalities to a list of real linear systems
    ///
    /// A `CompositeLinearSystem`.
    #[component(
    module = "Sofa.Component.LinearSystem",
        markers = [LinearSystem],
        default_template = "CompressedRowSparseMatrixd",
        inherit = [BaseSystemData],
        links = {
            /// List of linear systems to assemble
            #[multi]
            linearSystems: LinearSystem,
            /// Among the list of linear systems, which one is to be used by the linear solver
            solverLinearSystem: LinearSystem,
        },
    )]
    #[derive(Clone, Default)]
    pub struct CompositeLinearSystem {
        systems: Vec<ComponentId>,
        solver_system: Option<ComponentId>,
    }
}

impl CompositeLinearSystem {
    /// Every system built (in list order).
    pub fn systems(&self) -> &[ComponentId] {
        &self.systems
    }
    /// The system solved by the linear solver.
    pub fn solver_system(&self) -> Option<ComponentId> {
        self.solver_system
    }
}

impl Component for CompositeLinearSystem {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let (list, solver) = members(cx.scene, cx.id);
        if list.is_empty() {
            return Err(cx
                .error("at least one linear system must be provided")
                .hint("list the systems in `linearSystems=\"@a @b\"` (and name the solved one in `solverLinearSystem`)"));
        }
        let Some(solver) = solver else {
            return Err(cx
                .error("at least one linear system with a compatible type must be provided")
                .hint("list a MatrixLinearSystem in `linearSystems`"));
        };
        for &s in &list {
            if !is_assembled_system(cx.scene, s) {
                let label = cx.scene.entry(s).label();
                return Err(unsupported(
                    cx.error(format!("{label} cannot be part of a CompositeLinearSystem in Settee"))
                        .hint("list MatrixLinearSystem (or ConstantSparsityPatternSystem) components only"),
                ));
            }
        }
        self.systems = list;
        self.solver_system = Some(solver);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
