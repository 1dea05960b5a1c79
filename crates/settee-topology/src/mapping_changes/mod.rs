//! How each topological mapping follows changes of its input (SOFA's `updateTopologicalMappingTopDown`
//! of `Tetra2TriangleTopologicalMapping`, `Triangle2EdgeTopologicalMapping`,
//! `Hexa2QuadTopologicalMapping`, `Quad2TriangleTopologicalMapping`): it turns the input's events
//! into operations of the output container's modifier ([`crate::modifier::modify`]), which
//! propagates them further down.

pub mod hexa2quad;
pub mod quad2triangle;
pub mod replay;
pub mod tetra2triangle;
pub mod triangle2edge;

use std::collections::HashMap;

use settee_core::topology_change::TopologyChange;
use settee_core::ComponentId;

/// What a topological mapping follows: its index maps (`None` until the first change: each
/// `follow` builds them then from the input and output as they were at init), its input and
/// output containers, and the input's events.
pub struct Following<'a> {
    pub maps: &'a mut Option<IndexMaps>,
    pub input: ComponentId,
    pub output: ComponentId,
    pub changes: &'a [TopologyChange],
}

/// The index maps SOFA's topological mappings keep between their input and output elements.
#[derive(Clone, Debug, Default)]
pub struct IndexMaps {
    /// Output element → input element it comes from (SOFA's `Loc2GlobDataVec`).
    pub loc2glob: Vec<usize>,
    /// Input element → output element (SOFA's `Glob2LocMap`).
    pub glob2loc: HashMap<usize, usize>,
    /// Input element → output elements made from it (SOFA's `In2OutMap`).
    pub in2out: Vec<Vec<usize>>,
}
