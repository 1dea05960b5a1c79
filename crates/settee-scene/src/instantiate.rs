//! The second loading phase: a [`SceneDescription`] becomes a [`Scene`] of nodes and components,
//! created in document order through the factory (SOFA's `BaseElement::init` pass).

use std::path::{Path, PathBuf};

use settee_core::data::{decl, parse_value, DataDecl, DataKind, TemplateArity, Value};
use settee_core::{Attr, Factory, NodeId, Scene, SourcePos};

use crate::datapath::DataPath;
use crate::element::{Element, ElementKind, SceneDescription};
use crate::error::SceneError;

/// Why a scene could not be loaded at all.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be read or parsed (malformed XML, root not a Node, …).
    Parse(SceneError),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Parse(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LoadError {}

/// How a scene is loaded.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// A Data value that does not parse (garbage, NaN/∞, a non-integer where an integer is
    /// expected) is a warning and the Data keeps its default, instead of an error.
    pub lenient: bool,
}

/// Parses a scene file and creates its components (not yet initialised).
pub fn load_scene(path: &Path, factory: &Factory, data_path: &DataPath) -> Result<Scene, LoadError> {
    load_scene_with(path, factory, data_path, &LoadOptions::default())
}

/// [`load_scene`] with options.
pub fn load_scene_with(path: &Path, factory: &Factory, data_path: &DataPath, options: &LoadOptions) -> Result<Scene, LoadError> {
    let desc = crate::parse_scene_file(path, data_path, &|class| factory.is_registered(class)).map_err(LoadError::Parse)?;
    Ok(instantiate_with(&desc, factory, &data_path.dirs, options))
}

/// Creates the nodes and components of a description, in document order. `data_path` is the
/// search list for data files: loaders read their files as they are created.
pub fn instantiate(desc: &SceneDescription, factory: &Factory, data_path: &[PathBuf]) -> Scene {
    instantiate_with(desc, factory, data_path, &LoadOptions::default())
}

/// [`instantiate`] with options.
pub fn instantiate_with(desc: &SceneDescription, factory: &Factory, data_path: &[PathBuf], options: &LoadOptions) -> Scene {
    let root = &desc.root;
    let mut scene = Scene::new(root.name.as_deref().unwrap_or(""));
    scene.lenient = options.lenient;
    scene.data_path = data_path.to_vec();
    for d in &desc.diagnostics {
        scene.report(d.clone());
    }
    apply_node_attributes(&mut scene, Scene::ROOT, root);
    create_children(&mut scene, factory, Scene::ROOT, root);
    scene
}

fn create_children(scene: &mut Scene, factory: &Factory, node: NodeId, element: &Element) {
    for child in &element.children {
        match &child.kind {
            ElementKind::Node => {
                let id = scene.add_node(node, child.name.as_deref().unwrap_or(""));
                apply_node_attributes(scene, id, child);
                create_children(scene, factory, id, child);
            }
            ElementKind::Object { class } => {
                let template = child.attr("template").map(str::to_string);
                let mut attrs: Vec<Attr> = child
                    .attributes
                    .iter()
                    .filter(|a| a.name != "template")
                    .map(|a| Attr { name: a.name.clone(), value: a.value.clone(), pos: Some(a.pos.clone()) })
                    .collect();
                if let Some(n) = &child.name {
                    attrs.push(Attr { name: "name".into(), value: n.clone(), pos: Some(child.pos.clone()) });
                }
                let dir: PathBuf = child.dir.as_ref().clone();
                factory.create(scene, node, class, template.as_deref(), attrs, Some(child.pos.clone()), &dir);
            }
        }
    }
}

/// The Data of a node (SOFA's `Context` and `Base` Data) that a scene file may set, as
/// `settee doc Node` documents them. [`apply_node_attributes`] reads the first six; the others are
/// accepted and have no effect in Settee.
pub static NODE_DATA: &[DataDecl] = &[
    decl("gravity", DataKind::Fixed(3), "0 -9.81 0", "gravity in world coordinates; only the root's value counts, children copy it"),
    decl("dt", DataKind::Real, "0.01", "time step; only the root's value counts (`settee run --dt` overrides it)"),
    decl("time", DataKind::Real, "0", "current simulated time (the start time, in a scene file)"),
    decl("animate", DataKind::Bool, "false", "animate the simulation at start-up (runSofa's play button; `settee run` always steps)"),
    decl("activated", DataKind::Bool, "true", "false: the node and its subtree are ignored by every visitor"),
    decl("tags", DataKind::Strings, "", "list of the subsets the node belongs to"),
    decl("name", DataKind::Str, "", "node name, used in paths (`@/child/object`)"),
    decl("printLog", DataKind::Bool, "false", "extra messages at runtime (no effect in Settee)"),
    decl("bbox", DataKind::Fixed(6), "0 0 0 0 0 0", "bounding box (rendering only; no effect in Settee)"),
    decl("sleeping", DataKind::Bool, "false", "the node is sleeping, ignored by visitors (not supported: no effect in Settee)"),
    decl("canChangeSleepingState", DataKind::Bool, "false", "the node can change its sleeping state (no effect in Settee)"),
];

/// Node attributes: the simulation context and activation. Unknown node attributes are ignored
/// without a message, as SOFA does. A value that does not parse is an error (a warning keeping
/// the previous value when loading is lenient).
fn apply_node_attributes(scene: &mut Scene, node: NodeId, element: &Element) {
    scene.node_mut(node).pos = Some(element.pos.clone());
    for a in &element.attributes {
        apply_node_attribute(scene, node, &a.name, &a.value, a.pos.clone());
    }
}

/// One node attribute, as a scene file gives it (also `--set` on a node of a built scene).
pub fn apply_node_attribute(scene: &mut Scene, node: NodeId, name: &str, value: &str, pos: SourcePos) {
    let arity = TemplateArity::SCALAR;
    let n = scene.node_mut(node);
    let (kind, out) = match name {
        "gravity" => {
            let cur = Value::Reals { arity: 3, v: n.context.gravity.to_vec() };
            let out = parse_value(DataKind::Fixed(3), arity, value, &cur);
            if let (Value::Reals { v, .. }, false) = (&out.value, out.invalid) {
                n.context.gravity = [v[0], v[1], v[2]];
            }
            (DataKind::Fixed(3), out)
        }
        "dt" | "time" => {
            let out = parse_value(DataKind::Real, arity, value, &Value::Real(0.0));
            if let (Value::Real(r), None) = (&out.value, &out.problem) {
                if name == "dt" {
                    n.context.dt = *r
                } else {
                    n.context.time = *r
                }
            }
            (DataKind::Real, out)
        }
        "animate" | "activated" => {
            let out = parse_value(DataKind::Bool, arity, value, &Value::Bool(true));
            if let (Value::Bool(b), false) = (&out.value, out.invalid) {
                if name == "animate" {
                    n.context.animate = *b
                } else {
                    n.activated = *b
                }
            }
            (DataKind::Bool, out)
        }
        "tags" => {
            n.tags = value.split_whitespace().map(str::to_string).collect();
            return;
        }
        _ => return,
    };
    if let Some(message) = out.problem {
        let problem = settee_core::DataProblem { message, invalid: out.invalid };
        let d = settee_core::factory::data_problem(scene.lenient, name, &kind.type_name(), &problem);
        let label = format!("Node '{}'", scene.node(node).name);
        scene.report(d.at(Some(pos)).subject(label));
    }
}
