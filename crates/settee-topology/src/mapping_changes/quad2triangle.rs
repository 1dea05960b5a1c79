//! (being written)

use super::IndexMaps;
use settee_core::topology_change::{Follow, TopologyChange};
use settee_core::{ComponentId, InitCtx, SimResult};

/// Follows the input's changes (`maps` is None until the first change: build it then from the
/// input and output as they were at init).
pub fn follow(
    maps: &mut Option<IndexMaps>,
    cx: &mut InitCtx,
    input: ComponentId,
    output: ComponentId,
    changes: &[TopologyChange],
) -> SimResult<Follow> {
    let _ = (maps, cx, input, output, changes);
    todo!()
}
