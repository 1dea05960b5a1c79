//! Settee's core: the object model (nodes, components, Data fields, links), the state store, the
//! component factory and the mechanical stages that solvers and animation loops are built from.
//!
//! Component crates depend on this crate only; they declare their classes with
//! [`macro@component`] and register them into a [`Factory`].

// The declarations' expansions name `::settee_core`, which must resolve inside this crate too.
extern crate self as settee_core;

pub use settee_derive::{component, data_group};

// The layers, lowest first; each imports only the ones above it in this list (checked by
// `tests/layers.rs`):
// - diag, gformat, math, budget: leaf utilities;
// - graph: nodes, components, Data, links, factory, arenas, state store, the step plan;
// - mechanics: vectors, mapping propagation, assembly, and the roles of the mechanical stages;
// - constraint (the Lagrangian stages), collision (the collision interfaces), compliant (the
//   Compliant assembly);
// - topology_change, divergence;
// - simulation: initialisation and the stages the animation loops are made of; testing.
pub mod budget;
pub mod diag;
pub mod gformat;
pub mod math;
pub mod scratch;

pub mod graph;

pub mod mechanics;

pub mod collision;
pub mod compliant;
pub mod constraint;

pub mod divergence;
pub mod topology_change;

pub mod simulation;
pub mod testing;
pub mod visual;

// The graph's modules keep their short paths (`settee_core::scene::Scene`).
pub use graph::{arena, constraint_rows, data, data_ref, factory, names, plan, scene, snapshot, state, topology, types};

/// Component declarations with every role trait of the core, by one path.
pub mod component {
    pub use crate::collision::CollisionPipeline;
    pub use crate::graph::component::*;
    pub use crate::mechanics::roles::*;
}

/// Role ids: the graph's own (`MECHANICAL_STATE`, `TOPOLOGY`, the markers) and those of every
/// role trait of the core, by one path (`settee_core::role::FORCE_FIELD`).
pub mod role {
    pub use crate::collision::{COLLISION_MODEL, COLLISION_PIPELINE, CONTACT_MANAGER, INTERSECTION, POINT_MAPPER};
    pub use crate::compliant::{COMPLIANT_PROJECTOR, CONSTRAINT_VALUE, KKT_SOLVER};
    pub use crate::constraint::{CONSTRAINT_CORRECTION, CONSTRAINT_LAW, CONSTRAINT_SOLVER, CONTACT_CONSTRAINT};
    pub use crate::graph::role::*;
    pub use crate::mechanics::roles::{ANIMATION_LOOP, FORCE_FIELD, LINEAR_SOLVER, MAPPING, MASS, ODE_SOLVER, PROJECTIVE_CONSTRAINT};
    pub use crate::topology_change::TOPOLOGY_MODIFIER;
    pub use crate::visual::VISUAL_GEOMETRY;
}

pub use component::{
    AnimationLoop, CollisionPipeline, Component, ComponentClass, CreateArgs, Declared, ForceField, ForceIo, LinearSolver, LinkDecl, Mapping, Mass,
    Mbk, MechParams, OdeSolver, ProjectiveConstraint, TemplateRule,
};
pub use constraint_rows::{ConstraintRows, RowRef};
pub use data::{DataDecl, DataError, DataFamily, DataGroup, DataKind, DataProblem, DataSet, Value};
pub use data_ref::{DataFamilyRef, DataRef};
pub use diag::{Diagnostic, Severity, SimError, SimResult, SourcePos};
pub use factory::{Attr, Factory};
pub use mechanics::{MatrixAccumulator, MechScope};
pub use role::RoleId;
pub use scene::{ComponentId, InitCtx, NodeId, Scene};
pub use scratch::StateSet;
pub use snapshot::Snapshot;
pub use state::{StateId, VecId, VecKind};
pub use topology::{Adjacency, MeshData};
pub use types::Layout;
