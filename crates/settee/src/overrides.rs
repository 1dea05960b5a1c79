//! `--set PATH.data=VALUE`: Data overrides applied to the parsed scene, before any component is
//! created or initialised — exactly as if the scene file said so.
//!
//! # Path syntax
//!
//! `PATH` names a node and, last, a component of that node; `data` is one of its Data (or links):
//!
//! * `beam/mass.totalMass=2` — component `mass` of node `beam`, a child of the root;
//! * `root/beam/mass.totalMass=2` or `/beam/mass.totalMass=2` — the same: a leading `/` (SOFA's
//!   absolute path) and a first segment equal to the root node's name are both accepted;
//! * `@/beam/mass.totalMass=2` — SOFA's link syntax (`@` is optional);
//! * `beam/UniformMass.totalMass=2` — a component may also be named by its class when the node has
//!   only one of that class, or by the name Settee gives an unnamed one (`UniformMass1`, see
//!   `settee tree`);
//! * `beam.dt=0.02`, `root.gravity=0 0 -9.81`, `.dt=0.02` — when the last segment is a node (or
//!   is missing), the Data is one of the node's own (`settee doc Node`).
//!
//! The data name follows the last `.` after the last `/`; `VALUE` is everything after the first
//! `=`, in the scene file's syntax (`@path.data` makes a Data link).

use std::path::PathBuf;
use std::sync::Arc;

use settee_core::factory::BASE_DATA;
use settee_core::{ComponentId, Diagnostic, Factory, NodeId, Scene, SourcePos};
use settee_scene::{Element, SceneDescription};

/// One `--set` override.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    /// The argument as given, for messages.
    pub text: String,
    /// Node path and component name (`root/beam/mass`), without `@` and data name.
    pub path: String,
    /// The Data (or link) name.
    pub data: String,
    /// The value, in the scene file's syntax.
    pub value: String,
}

impl std::str::FromStr for Override {
    type Err = String;

    fn from_str(text: &str) -> Result<Override, String> {
        let hint = "write PATH.data=VALUE, e.g. `root/beam/mass.totalMass=2` or `@/beam/ode.rayleighStiffness=0.1`";
        let Some((lhs, value)) = text.split_once('=') else {
            return Err(format!("--set '{text}': no '=' ({hint})"));
        };
        let Some((path, data)) = split_path(lhs) else {
            return Err(format!("--set '{text}': no Data name in '{lhs}' ({hint})"));
        };
        Ok(Override { text: text.to_string(), path: path.to_string(), data: data.to_string(), value: value.to_string() })
    }
}

/// Splits `[@]path.data` at the last `.` after the last `/`; `None` without a Data name.
pub fn split_path(text: &str) -> Option<(&str, &str)> {
    let t = text.trim();
    let t = t.strip_prefix('@').unwrap_or(t);
    let after_slash = t.rfind('/').map(|i| i + 1).unwrap_or(0);
    let dot = t[after_slash..].rfind('.')? + after_slash;
    let (path, data) = (&t[..dot], &t[dot + 1..]);
    (!data.is_empty() && !data.contains(char::is_whitespace)).then_some((path, data))
}

/// The Data a node accepts in a scene file (SOFA's `Context` and `Base` Data), as `settee doc Node`
/// documents them.
pub use settee_scene::instantiate::NODE_DATA;

/// The position given to the attribute an override sets: its messages are recognised by it.
pub fn override_pos(index: usize) -> SourcePos {
    SourcePos::new(Arc::new(PathBuf::from("--set")), index as u32 + 1, 1)
}

/// The child nodes and components of a node, for messages.
fn names_of(factory: &Factory, e: &Element) -> String {
    let objs: Vec<String> = e
        .children
        .iter()
        .zip(default_names(factory, e))
        .filter(|(c, _)| c.is_object())
        .map(|(o, d)| format!("{} ({})", o.name.clone().or(d).unwrap_or_default(), o.class().unwrap_or("")))
        .collect();
    let nodes: Vec<&str> = e.child_nodes().map(|n| n.name_or_empty()).collect();
    describe_contents(&nodes, &objs)
}

/// What a node holds, for a message about a path that names nothing in it: its child nodes and
/// its components as `name (Class)`.
fn describe_contents(nodes: &[&str], objs: &[String]) -> String {
    let mut parts = Vec::new();
    if !nodes.is_empty() {
        parts.push(format!("child nodes: {}", nodes.join(", ")));
    }
    if !objs.is_empty() {
        parts.push(format!("components: {}", objs.join(", ")));
    }
    if parts.is_empty() {
        "it is empty".into()
    } else {
        parts.join("; ")
    }
}

/// The names components get in the scene: their `name`, or for unnamed ones the class name and
/// a per-node, per-class counter from 1 (as the factory names them).
fn default_names(factory: &Factory, node: &Element) -> Vec<Option<String>> {
    let mut counters: Vec<(String, usize)> = Vec::new();
    node.children
        .iter()
        .map(|c| {
            let class = c.class()?;
            if c.name.is_some() {
                return None;
            }
            let canonical = factory.class(class).map(|k| k.name.to_string()).unwrap_or_else(|| class.to_string());
            let k = match counters.iter_mut().find(|(n, _)| *n == canonical) {
                Some(e) => {
                    e.1 += 1;
                    e.1
                }
                None => {
                    counters.push((canonical.clone(), 1));
                    1
                }
            };
            Some(format!("{canonical}{k}"))
        })
        .collect()
}

/// Finds the element an override addresses: a component, or a node for node Data.
fn resolve<'a>(factory: &Factory, root: &'a mut Element, path: &str) -> Result<&'a mut Element, String> {
    let mut segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty() && *s != ".").collect();
    if segs.first().is_some_and(|s| Some(*s) == root.name.as_deref()) && !root.children.iter().any(|c| c.name.as_deref() == Some(segs[0])) {
        segs.remove(0);
    }
    let mut cur = root;
    let mut where_ = String::from("/");
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        if last {
            let defaults = default_names(factory, cur);
            let by_name = cur.children.iter().position(|c| c.is_object() && c.name.as_deref() == Some(*seg));
            let by_default = || defaults.iter().position(|d| d.as_deref() == Some(*seg));
            let by_class = || {
                let of_class: Vec<usize> = cur
                    .children
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.class().is_some_and(|k| k == *seg || factory.class(k).is_some_and(|fc| fc.name == *seg)))
                    .map(|(i, _)| i)
                    .collect();
                (of_class.len() == 1).then(|| of_class[0])
            };
            if let Some(idx) = by_name.or_else(by_default).or_else(by_class) {
                return Ok(&mut cur.children[idx]);
            }
        }
        let Some(idx) = cur.children.iter().position(|c| c.is_node() && c.name.as_deref() == Some(*seg)) else {
            let what = if last { "no component or child node" } else { "no child node" };
            return Err(format!("node {where_} has {what} named '{seg}' ({})", names_of(factory, cur)));
        };
        cur = &mut cur.children[idx];
        where_ = format!("{}{}/", where_, seg);
    }
    Ok(cur)
}

fn nearest(name: &str, names: &[&str]) -> Option<String> {
    names
        .iter()
        .map(|n| (settee_core::factory::edit_distance(&name.to_lowercase(), &n.to_lowercase()), *n))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, n)| n.to_string())
}

/// Applies the overrides to the parsed scene. Unknown paths and unknown Data are errors (one
/// diagnostic per bad override); values are checked later, when the factory parses them (their
/// messages carry [`override_pos`]).
pub fn apply(desc: &mut SceneDescription, factory: &Factory, overrides: &[Override]) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    for (i, o) in overrides.iter().enumerate() {
        let err = |m: String| Diagnostic::error(format!("--set {}: {m}", o.text));
        let target = match resolve(factory, &mut desc.root, &o.path) {
            Ok(t) => t,
            Err(m) => {
                errors.push(err(m).hint("`settee tree SCENE` shows the nodes and the components' names"));
                continue;
            }
        };
        let class = match target.class() {
            None => None,
            Some(class) => match factory.class(class) {
                Some(c) => Some(c),
                None => {
                    errors.push(err(format!("component class '{class}' is unknown")));
                    continue;
                }
            },
        };
        let what = match class {
            None => format!("node '{}'", target.name_or_empty()),
            Some(_) => target.describe(),
        };
        if let Err(d) = check_data_name(o, class, &what) {
            errors.push(d);
            continue;
        }
        target.set_attribute(&o.data, o.value.clone(), override_pos(i));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Checks that the Data an override sets exists on its target (a component of `class`, or a node
/// when `None`) and may be set; `what` names the target in messages.
fn check_data_name(o: &Override, class: Option<&settee_core::component::ComponentClass>, what: &str) -> Result<(), Diagnostic> {
    let err = |m: String| Diagnostic::error(format!("--set {}: {m}", o.text));
    let known: Vec<&str> = match class {
        None => NODE_DATA.iter().map(|d| d.name).collect(),
        Some(c) => BASE_DATA
            .iter()
            .chain(c.data.iter().flat_map(|t| t.iter()))
            .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
            .chain(c.links.iter().map(|l| l.name))
            .chain(["template"])
            .collect(),
    };
    if !known.contains(&o.data.as_str()) {
        let doc = class.map(|k| k.name).unwrap_or("Node");
        let d = err(format!("{what} has no Data '{}'", o.data));
        return Err(match nearest(&o.data, &known) {
            Some(n) => d.hint(format!("did you mean '{n}'? (`settee doc {doc}` lists its Data)")),
            None => d.hint(format!("`settee doc {doc}` lists its Data")),
        });
    }
    if o.data == "name" {
        return Err(err("renaming is not supported: paths and links would no longer match".into()));
    }
    Ok(())
}

/// What an override addresses in a built scene.
enum LiveTarget {
    Node(NodeId),
    Component(ComponentId),
}

/// Finds the node or component an override addresses in a built scene, with the path rules of
/// the scene-file case (a component by name, else by class when its node has one of that class).
fn resolve_live(scene: &Scene, factory: &Factory, path: &str) -> Result<LiveTarget, String> {
    let mut segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty() && *s != ".").collect();
    let root = scene.node(Scene::ROOT);
    let child_named = |n: NodeId, name: &str| scene.node(n).children.iter().copied().find(|c| scene.node(*c).name == name);
    if segs.first().is_some_and(|s| *s == root.name) && child_named(Scene::ROOT, segs[0]).is_none() {
        segs.remove(0);
    }
    let mut cur = Scene::ROOT;
    let mut where_ = String::from("/");
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        if last {
            let objects = &scene.node(cur).objects;
            let by_name = objects.iter().copied().find(|c| scene.entry(*c).name == *seg);
            let by_class = || {
                let of_class: Vec<ComponentId> = objects
                    .iter()
                    .copied()
                    .filter(|c| {
                        let k = scene.entry(*c).class;
                        k.name == *seg || factory.class(seg).is_some_and(|fc| std::ptr::eq(fc, k))
                    })
                    .collect();
                (of_class.len() == 1).then(|| of_class[0])
            };
            if let Some(c) = by_name.or_else(by_class) {
                return Ok(LiveTarget::Component(c));
            }
        }
        let Some(child) = child_named(cur, seg) else {
            let what = if last { "no component or child node" } else { "no child node" };
            let node = scene.node(cur);
            let nodes: Vec<&str> = node.children.iter().map(|c| scene.node(*c).name.as_str()).collect();
            let objs: Vec<String> = node.objects.iter().map(|c| format!("{} ({})", scene.entry(*c).name, scene.entry(*c).class.name)).collect();
            return Err(format!("node {where_} has {what} named '{seg}' ({})", describe_contents(&nodes, &objs)));
        };
        cur = child;
        where_ = format!("{where_}{seg}/");
    }
    Ok(LiveTarget::Node(cur))
}

/// Applies the overrides to a scene already built but not initialised (a Python scene once its
/// `createScene` has run): each value is parsed as the component's creation would have parsed it,
/// and the component's parse-time work is redone. Unknown paths and Data are errors, as for
/// scene files; value messages carry [`override_pos`] (see [`promote_messages`]).
pub fn apply_to_scene(scene: &mut Scene, factory: &Factory, overrides: &[Override]) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    for (i, o) in overrides.iter().enumerate() {
        let err = |m: String| Diagnostic::error(format!("--set {}: {m}", o.text));
        let target = match resolve_live(scene, factory, &o.path) {
            Ok(t) => t,
            Err(m) => {
                errors.push(err(m).hint("`settee tree SCENE` shows the nodes and the components' names"));
                continue;
            }
        };
        let (class, what) = match target {
            LiveTarget::Node(n) => (None, format!("node '{}'", scene.node(n).name)),
            LiveTarget::Component(c) => (Some(scene.entry(c).class), scene.entry(c).label()),
        };
        if let Err(d) = check_data_name(o, class, &what) {
            errors.push(d);
            continue;
        }
        match target {
            LiveTarget::Node(n) => settee_scene::instantiate::apply_node_attribute(scene, n, &o.data, &o.value, override_pos(i)),
            LiveTarget::Component(c) => {
                if o.data == "template" {
                    errors.push(err("a Python scene's components exist once its script has run: set the template in the script".into()));
                    continue;
                }
                let attr = settee_core::Attr { name: o.data.clone(), value: o.value.clone(), pos: Some(override_pos(i)) };
                factory.set_attributes(scene, c, vec![attr]);
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Turns the messages the factory gave about an override's value into errors that name the
/// override (a value that does not parse must not fall back silently to the default).
pub fn promote_messages(messages: &mut [Diagnostic], overrides: &[Override]) {
    for m in messages.iter_mut() {
        let Some(p) = &m.pos else { continue };
        if p.file.as_path() != std::path::Path::new("--set") || m.severity < settee_core::Severity::Warning {
            continue;
        }
        let Some(o) = overrides.get(p.line as usize - 1) else { continue };
        m.severity = settee_core::Severity::Error;
        m.message = format!("--set {}: {}", o.text, m.message);
        m.pos = None;
        // The component's label is not known yet when its attributes are parsed.
        m.subject = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_at_the_last_dot_after_the_last_slash() {
        let o: Override = "@/beam.v2/mass.totalMass=2 3".parse().unwrap();
        assert_eq!((o.path.as_str(), o.data.as_str(), o.value.as_str()), ("/beam.v2/mass", "totalMass", "2 3"));
        let o: Override = ".dt=0.1".parse().unwrap();
        assert_eq!((o.path.as_str(), o.data.as_str()), ("", "dt"));
        assert!("beam/mass=2".parse::<Override>().is_err());
        assert!("beam/mass.totalMass".parse::<Override>().is_err());
    }
}
