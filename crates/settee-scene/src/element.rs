//! The parsed scene description: a tree of [`Element`]s.

use std::path::PathBuf;
use std::sync::Arc;

use crate::diagnostic::{Diagnostic, Severity, SourcePos};

/// One attribute of an element, value already entity-decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    pub name: String,
    pub value: String,
    /// Where the value comes from: the attribute in the XML, or the include
    /// attribute that overrode it.
    pub pos: SourcePos,
}

/// What an element describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElementKind {
    /// A graph node (`<Node>`).
    Node,
    /// A component. `class` is the class name exactly as written (the XML tag,
    /// or the `type` attribute of `<Object>`); renames (§2.2) are *not*
    /// applied here, see [`settee_core::names::renamed_class`].
    Object { class: String },
}

/// An element of the scene tree, after `<include>`/prefab expansion and
/// folding of legacy `<Attribute>`/`<Data>` children into attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    pub kind: ElementKind,
    /// The `name` attribute, `None` if absent (an empty `name=""` is kept as
    /// `Some("")`; SOFA treats both as unnamed).
    pub name: Option<String>,
    /// Attributes in document order, excluding `name` (and `type` for objects).
    pub attributes: Vec<Attribute>,
    /// Children in document order (objects and nodes interleaved, exactly as
    /// SOFA creates them). Objects never have children.
    pub children: Vec<Element>,
    /// Position of the element's start tag (`<`).
    pub pos: SourcePos,
    /// Directory against which relative file names of this element are
    /// resolved ("cwd" of SOFA §1.3/§1.6): the directory of the nearest
    /// enclosing file root, i.e. the scene file, or a non-`Group` included
    /// file whose root is a Node. Content spliced from a `Group`/`_Group_`
    /// include (or merged from `_Merge_`) keeps the directory of the including
    /// context, exactly as SOFA (whose `SetDirectory` is only applied for Node
    /// elements that are roots of a file).
    pub dir: Arc<PathBuf>,
}

impl Element {
    pub fn is_node(&self) -> bool {
        matches!(self.kind, ElementKind::Node)
    }

    pub fn is_object(&self) -> bool {
        matches!(self.kind, ElementKind::Object { .. })
    }

    /// The class of an object element (`None` for nodes).
    pub fn class(&self) -> Option<&str> {
        match &self.kind {
            ElementKind::Object { class } => Some(class),
            ElementKind::Node => None,
        }
    }

    /// The name, or `""` when unnamed.
    pub fn name_or_empty(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attribute(name).map(|a| a.value.as_str())
    }

    /// Set (replace in place, or append) an attribute.
    pub fn set_attribute(&mut self, name: &str, value: String, pos: SourcePos) {
        if let Some(a) = self.attributes.iter_mut().find(|a| a.name == name) {
            a.value = value;
            a.pos = pos;
        } else {
            self.attributes.push(Attribute { name: name.to_string(), value, pos });
        }
    }

    /// Child nodes only.
    pub fn child_nodes(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter(|c| c.is_node())
    }

    /// Child objects only.
    pub fn child_objects(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter(|c| c.is_object())
    }

    /// Pre-order depth-first visit (document / creation order).
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a Element)) {
        f(self);
        for c in &self.children {
            c.visit(f);
        }
    }

    /// Short human description, e.g. `Node "root"` or `MechanicalObject "dofs"`.
    pub fn describe(&self) -> String {
        let what = match &self.kind {
            ElementKind::Node => "Node",
            ElementKind::Object { class } => class.as_str(),
        };
        match &self.name {
            Some(n) => format!("{what} \"{n}\""),
            None => what.to_string(),
        }
    }
}

/// Result of parsing a scene: the root node and non-fatal diagnostics.
#[derive(Debug, Clone)]
pub struct SceneDescription {
    /// Always a Node.
    pub root: Element,
    pub diagnostics: Vec<Diagnostic>,
}

impl SceneDescription {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Error)
    }
}
