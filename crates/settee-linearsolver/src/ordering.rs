//! Fill-reducing ordering components: `NaturalOrderingMethod`, `AMDOrderingMethod`,
//! `COLAMDOrderingMethod` (mechanics spec §4.5) and `MetisOrderingMethod` (SOFA's `Sofa.Metis`
//! plugin; Settee's own nested dissection, no METIS). They only carry the choice; direct solvers
//! read it at init through their `orderingMethod` link or from their node.

use settee_core::role;
use settee_core::{component, Component, ComponentId, InitCtx, SimResult};
use settee_linalg::Ordering;

/// An ordering-method component.
#[component(
    markers = [role::Ordering],
    class(name = "NaturalOrderingMethod", module = "Sofa.Component.LinearSolver.Ordering", description = "Natural order (no permutation).", create = |_| OrderingMethod { ordering: Ordering::Natural }),
    class(
        name = "AMDOrderingMethod", module = "Sofa.Component.LinearSolver.Ordering",
        description = "Approximate minimum degree ordering implemented in the Eigen library.",
        create = |_| OrderingMethod { ordering: Ordering::Amd },
    ),
    class(
        name = "COLAMDOrderingMethod", module = "Sofa.Component.LinearSolver.Ordering",
        description = "Column approximate minimum degree ordering implemented in the Eigen library.",
        create = |_| OrderingMethod { ordering: Ordering::Colamd },
    ),
    class(
        name = "MetisOrderingMethod", module = "Sofa.Metis",
        description = "Nested dissection ordering (SOFA calls METIS; Settee has its own multilevel nested dissection of the matrix's node graph, minimum degree on the small leaves). Less fill than AMD on large 3-D meshes. Only used where a scene names it: without ordering component a direct solver still uses AMD, as SOFA without its METIS plugin.",
        create = |_| OrderingMethod { ordering: Ordering::NestedDissection },
    ),
)]
#[derive(Clone)]
pub struct OrderingMethod {
    pub ordering: Ordering,
}

impl Component for OrderingMethod {}

/// SOFA's name of an ordering (as `OrderingMethod::methodName`).
pub fn ordering_name(o: Ordering) -> &'static str {
    match o {
        Ordering::Natural => "Natural",
        Ordering::Amd => "AMD",
        Ordering::Colamd => "COLAMD",
        Ordering::NestedDissection => "Metis",
    }
}

/// The ordering a direct solver uses: its `orderingMethod` link, else the first ordering
/// component of its node, else AMD. SOFA would try to create a `MetisOrderingMethod` first, which
/// it only has with its METIS plugin, then falls back to AMD: Settee keeps AMD, as the SOFA builds
/// whose results it reproduces (a scene that wants nested dissection names `MetisOrderingMethod`).
/// Returns the ordering and the component it came from.
pub fn resolve_ordering(cx: &InitCtx) -> SimResult<(Ordering, Option<ComponentId>)> {
    let linked = cx.link_targets("orderingMethod");
    let chosen = match linked.first() {
        Some(t) => Some(*t),
        None if cx.scene.link_is_set(cx.id, "orderingMethod") => {
            return Err(cx
                .error("link 'orderingMethod' does not designate an ordering method")
                .hint("point it to a NaturalOrderingMethod, AMDOrderingMethod, COLAMDOrderingMethod or MetisOrderingMethod, or remove it (AMD is then used)"))
        }
        None => cx.scene.find_local(cx.node(), role::ORDERING),
    };
    match chosen {
        None => Ok((Ordering::Amd, None)),
        Some(c) => match cx.scene.get::<OrderingMethod>(c) {
            Some(o) => Ok((o.ordering, Some(c))),
            None => Err(cx
                .error(format!("{} is not an ordering method Settee supports", cx.scene.entry(c).label()))
                .hint("use NaturalOrderingMethod, AMDOrderingMethod, COLAMDOrderingMethod or MetisOrderingMethod")),
        },
    }
}
