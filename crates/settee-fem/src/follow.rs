//! Following topological changes (issue 11): the per-element arrays of the FEM force fields are
//! [`ElementData`]s updated by the container's change log; created elements are computed once
//! the whole log is applied, from the container's final lists and the state's rest positions
//! (which the core has already updated for point changes), so that an element created and then
//! renumbered by a later event of the same log is computed from its final vertices.

use settee_core::topology_change::{ChangeError, ElementData, ElementKind, IndexSubset, TopologyChange};
use settee_core::{InitCtx, SimError, SimResult, StateId};

/// Applies the changes of `data`'s kind in order; each created element gets `placeholder`.
/// Returns the final indices of the created elements still present (in creation order).
pub(crate) fn apply_deferred<T: Clone>(data: &mut ElementData<T>, changes: &[TopologyChange], placeholder: T) -> Result<Vec<usize>, ChangeError> {
    let kind = data.kind();
    let mut created = IndexSubset::default();
    for c in changes.iter().filter(|c| c.kind() == kind) {
        let len = data.len();
        data.apply(std::slice::from_ref(c), |_| placeholder.clone())?;
        match c {
            TopologyChange::Added { count, .. } => created.indices.extend(len..len + count),
            _ => {
                created.apply(kind, len, std::slice::from_ref(c))?;
            }
        }
    }
    Ok(created.indices)
}

/// True when the log holds a change of `kind`.
pub(crate) fn touches(changes: &[TopologyChange], kind: ElementKind) -> bool {
    changes.iter().any(|c| c.kind() == kind)
}

/// The error of a change this component cannot apply.
pub(crate) fn change_error(cx: &InitCtx, e: ChangeError) -> SimError {
    cx.error(format!("cannot follow the topological change: {e}"))
}

/// Checks that the per-element array has as many entries as the container has elements.
pub(crate) fn check_aligned(cx: &InitCtx, kind: ElementKind, data_len: usize, container_len: usize) -> SimResult {
    if data_len != container_len {
        return Err(cx
            .error(format!(
                "after the topological change this force field has {data_len} {k} data but the topology has {container_len} {k}s",
                k = kind.name()
            ))
            .hint("the change log and the container's lists disagree (a modifier logged its change incompletely)"));
    }
    Ok(())
}

/// The state's rest positions (positions when unset) and its size, checking every vertex of the
/// `elements` exists.
pub(crate) fn rest_for<const N: usize>(cx: &InitCtx, s: StateId, elements: &[[usize; N]], created: &[usize]) -> SimResult<Vec<f64>> {
    let rest = cx.rest_or_position(s);
    let n = rest.len() / 3;
    for &i in created {
        if let Some(&bad) = elements[i].iter().find(|&&v| v >= n) {
            return Err(cx.error(format!("created element {i} {:?} refers to point {bad}, but the mechanical state has {n} points", elements[i])));
        }
    }
    Ok(rest)
}
