//! Settee's core: the object model (nodes, components, Data fields, links), the state store, the
//! component factory and the mechanical stages that solvers and animation loops are built from.
//!
//! Component crates depend on this crate only; they declare their classes with
//! [`macro@component`] and register them into a [`Factory`].

// The declarations' expansions name `::settee_core`, which must resolve inside this crate too.
extern crate self as settee_core;

pub use settee_derive::{component, data_group};

pub mod arena;
pub mod budget;
pub mod collision;
pub mod compliant;
pub mod component;
pub mod constraint;
pub mod constraint_rows;
pub mod data;
pub mod data_ref;
pub mod diag;
pub mod divergence;
pub mod factory;
pub mod gformat;
pub mod math;
pub mod mechanics;
pub mod names;
pub mod plan;
pub mod role;
pub mod scene;
pub mod simulation;
pub mod state;
pub mod testing;
pub mod topology;
pub mod topology_change;
pub mod types;

pub use component::{
    AnimationLoop, CollisionPipeline, Component, ComponentClass, CreateArgs, Declared, ForceField, ForceIo, LinearSolver, LinkDecl, Mapping, Mass,
    Mbk, MechParams, OdeSolver, ProjectiveConstraint, TemplateRule,
};
pub use constraint_rows::ConstraintRows;
pub use data::{DataDecl, DataError, DataGroup, DataKind, DataProblem, DataSet, Value};
pub use data_ref::DataRef;
pub use diag::{Diagnostic, Severity, SimError, SimResult, SourcePos};
pub use factory::{Attr, Factory};
pub use mechanics::{MatrixAccumulator, MechScope};
pub use role::RoleId;
pub use scene::{ComponentId, InitCtx, NodeId, Scene};
pub use state::{StateId, VecId, VecKind};
pub use topology::{Adjacency, MeshData};
pub use types::Layout;
