//! Fill-reducing ordering components: `NaturalOrderingMethod`, `AMDOrderingMethod`,
//! `COLAMDOrderingMethod` (mechanics spec §4.5). They only carry the choice; direct solvers read it
//! at init through their `orderingMethod` link or from their node.

use settee_core::{component_any, Component, ComponentClass, ComponentId, CreateArgs, InitCtx, Roles, SimResult, TemplateRule};
use settee_linalg::Ordering;

/// An ordering-method component.
pub struct OrderingMethod {
    pub ordering: Ordering,
}

impl Component for OrderingMethod {
    component_any!();
}

const fn class(name: &'static str, description: &'static str, create: fn(&CreateArgs) -> Box<dyn Component>) -> ComponentClass {
    ComponentClass {
        name,
        description,
        roles: Roles::ORDERING,
        templates: &[],
        default_template: "",
        template_rule: TemplateRule::Default,
        data: &[],
        links: &[],
        create,
        preparse: None,
        no_src_link: &[],
        reads: &[],
    }
}

pub static NATURAL: ComponentClass =
    class("NaturalOrderingMethod", "Natural order (no permutation).", |_| Box::new(OrderingMethod { ordering: Ordering::Natural }));
pub static AMD: ComponentClass = class("AMDOrderingMethod", "Approximate minimum degree ordering implemented in the Eigen library.", |_| {
    Box::new(OrderingMethod { ordering: Ordering::Amd })
});
pub static COLAMD: ComponentClass =
    class("COLAMDOrderingMethod", "Column approximate minimum degree ordering implemented in the Eigen library.", |_| {
        Box::new(OrderingMethod { ordering: Ordering::Colamd })
    });

/// SOFA's name of an ordering (as `OrderingMethod::methodName`).
pub fn ordering_name(o: Ordering) -> &'static str {
    match o {
        Ordering::Natural => "Natural",
        Ordering::Amd => "AMD",
        Ordering::Colamd => "COLAMD",
    }
}

/// The ordering a direct solver uses: its `orderingMethod` link, else the first ordering
/// component of its node, else AMD (SOFA would try METIS first, which it only has with the
/// METIS plugin, then falls back to AMD). Returns the ordering and the component it came from.
pub fn resolve_ordering(cx: &InitCtx) -> SimResult<(Ordering, Option<ComponentId>)> {
    let linked = cx.link_targets("orderingMethod");
    let chosen = match linked.first() {
        Some(t) => Some(*t),
        None if cx.scene.link_is_set(cx.id, "orderingMethod") => {
            return Err(cx
                .error("link 'orderingMethod' does not designate an ordering method")
                .hint("point it to a NaturalOrderingMethod, AMDOrderingMethod or COLAMDOrderingMethod, or remove it (AMD is then used)"))
        }
        None => cx.scene.find_local(cx.node(), Roles::ORDERING),
    };
    match chosen {
        None => Ok((Ordering::Amd, None)),
        Some(c) => match cx.scene.get::<OrderingMethod>(c) {
            Some(o) => Ok((o.ordering, Some(c))),
            None => Err(cx
                .error(format!("{} is not an ordering method Settee supports", cx.scene.entry(c).label()))
                .hint("use NaturalOrderingMethod, AMDOrderingMethod or COLAMDOrderingMethod")),
        },
    }
}
