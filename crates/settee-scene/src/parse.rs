//! Scene construction from XML (spec §1.1–§1.6): element kinds, legacy
//! `<Attribute>`/`<Data>`, `<include>` expansion (Group / _Merge_ / child,
//! overrides), prefab fallback (`Objects/<Class>.xml`).
//!
//! Follows SOFA's `XML.cpp` (`createNode`, `includeNode`,
//! `recReplaceAttribute`, `recursiveMergeNode`) and the element classes'
//! `init` (for when overrides / legacy attributes take effect).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::datapath::{clean, DataPath};
use crate::diagnostic::{Diagnostic, SourcePos};
use crate::element::{Attribute, Element, ElementKind, SceneDescription};
use crate::error::SceneError;
use crate::xml::{self, RawAttr, RawElement, MAX_DEPTH};

/// Maximum nesting of `<include>` (SOFA has none and overflows its stack on
/// cyclic includes; cycles are detected separately).
const MAX_INCLUDE_DEPTH: usize = 32;

/// Parse the scene file `path`.
///
/// * `data_path`: search list for includes and prefabs (§1.6).
/// * `is_registered(class)`: whether the factory knows `class` *exactly*
///   (registered names and registered class aliases, but not the renamed
///   table of §2.2). Used only for the prefab fallback (§1.2): an object whose
///   class is not registered and for which `Objects/<class>.xml` resolves is
///   replaced by an include of that file.
///
/// Fatal problems (unreadable file, malformed XML in the scene file itself,
/// root not a Node) are returned as `Err`; everything SOFA survives
/// (including a missing or malformed *included* file, which SOFA drops with
/// an error message) is reported in [`SceneDescription::diagnostics`].
pub fn parse_scene_file(path: &Path, data_path: &DataPath, is_registered: &dyn Fn(&str) -> bool) -> Result<SceneDescription, SceneError> {
    let bytes = settee_core::budget::read_file(path).map_err(|source| SceneError::Io { path: path.to_path_buf(), source })?;
    let mut diagnostics = Vec::new();
    let file = Arc::new(path.to_path_buf());
    let text = decode_bytes(&bytes, &file, &mut diagnostics);
    parse_impl(&text, file, data_path, is_registered, diagnostics)
}

/// Parse scene text as if it had been read from `virtual_path` (which
/// provides the file name of source positions and the directory against
/// which relative includes are resolved; it need not exist).
pub fn parse_scene_str(
    text: &str,
    virtual_path: &Path,
    data_path: &DataPath,
    is_registered: &dyn Fn(&str) -> bool,
) -> Result<SceneDescription, SceneError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let file = Arc::new(virtual_path.to_path_buf());
    parse_impl(text, file, data_path, is_registered, Vec::new())
}

fn parse_impl(
    text: &str,
    file: Arc<PathBuf>,
    data_path: &DataPath,
    is_registered: &dyn Fn(&str) -> bool,
    mut diagnostics: Vec<Diagnostic>,
) -> Result<SceneDescription, SceneError> {
    let doc = xml::parse_xml(text, &file)?;
    diagnostics.extend(doc.diagnostics);
    let ctx = FileCtx { dir: parent_dir(&file), path: file.clone() };
    let mut b = Builder { data_path, is_registered, diagnostics, include_stack: vec![canonical(&file)] };
    let root = b.create_node(&doc.root, &ctx, true, 0);
    let root = match root {
        Some(r) if matches!(r.kind, ElementKind::Node) => r,
        Some(r) => {
            return Err(SceneError::RootNotNode {
                pos: r.pos.clone(),
                tag: doc.root.tag.clone(),
                reason: format!("it defines the component {}", describe(&r.kind, &r.name)),
            })
        }
        None => {
            let reason = b
                .diagnostics
                .iter()
                .rev()
                .find(|d| d.pos.as_ref().is_some_and(|p| p.file == file))
                .map(|d| d.message.clone())
                .unwrap_or_else(|| "the element was dropped".to_string());
            return Err(SceneError::RootNotNode { pos: doc.root.pos.clone(), tag: doc.root.tag.clone(), reason });
        }
    };
    let dir = Arc::new(ctx.dir);
    let root = finalize(root, &dir);
    Ok(SceneDescription { root, diagnostics: b.diagnostics })
}

/// Bytes -> text: strip a UTF-8 BOM; invalid UTF-8 is replaced (with a
/// warning) rather than rejected.
fn decode_bytes(bytes: &[u8], file: &Arc<PathBuf>, diagnostics: &mut Vec<Diagnostic>) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => {
            diagnostics.push(
                Diagnostic::warning("file is not valid UTF-8; invalid bytes were replaced by U+FFFD").at(Some(SourcePos::start_of(file.clone()))),
            );
            String::from_utf8_lossy(bytes).into_owned()
        }
    }
}

fn parent_dir(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn canonical(p: &Path) -> PathBuf {
    fs::canonicalize(p).unwrap_or_else(|_| clean(p))
}

fn describe(kind: &ElementKind, name: &Option<String>) -> String {
    let what = match kind {
        ElementKind::Node => "Node",
        ElementKind::Object { class } => class.as_str(),
    };
    match name {
        Some(n) => format!("{what} \"{n}\""),
        None => what.to_string(),
    }
}

/// How an element produced by an include is inserted in its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IncludeType {
    Child,
    Group,
    Merge,
}

/// Element under construction.
#[derive(Debug)]
struct BElem {
    kind: ElementKind,
    name: Option<String>,
    attributes: Vec<Attribute>,
    children: Vec<BElem>,
    pos: SourcePos,
    /// Set for Node elements that are the root of a file: the directory
    /// their subtree resolves files against (SOFA `SetDirectory(basefile)`).
    own_dir: Option<Arc<PathBuf>>,
    include_type: IncludeType,
}

impl BElem {
    fn name_or_empty(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    fn describe(&self) -> String {
        describe(&self.kind, &self.name)
    }

    fn set_attribute(&mut self, name: &str, value: String, pos: SourcePos) {
        if let Some(a) = self.attributes.iter_mut().find(|a| a.name == name) {
            a.value = value;
            a.pos = pos;
        } else {
            self.attributes.push(Attribute { name: name.to_string(), value, pos });
        }
    }

    /// SOFA's `getType()` equality used by `_Merge_`: nodes all have type
    /// "default", objects their class.
    fn same_type(&self, other: &BElem) -> bool {
        match (&self.kind, &other.kind) {
            (ElementKind::Node, ElementKind::Node) => true,
            (ElementKind::Object { class: a }, ElementKind::Object { class: b }) => a == b,
            _ => false,
        }
    }
}

fn finalize(b: BElem, inherited: &Arc<PathBuf>) -> Element {
    let dir = b.own_dir.unwrap_or_else(|| inherited.clone());
    let children = b.children.into_iter().map(|c| finalize(c, &dir)).collect();
    Element { kind: b.kind, name: b.name, attributes: b.attributes, children, pos: b.pos, dir }
}

fn include_type_for(name: Option<&str>) -> Option<IncludeType> {
    match name {
        Some("Group") | Some("_Group_") => Some(IncludeType::Group),
        Some("_Merge_") => Some(IncludeType::Merge),
        _ => None,
    }
}

struct FileCtx {
    path: Arc<PathBuf>,
    /// Directory of `path`: base for includes/prefabs written in this file.
    dir: PathBuf,
}

struct Builder<'a> {
    data_path: &'a DataPath,
    is_registered: &'a dyn Fn(&str) -> bool,
    diagnostics: Vec<Diagnostic>,
    /// Canonical paths of the files currently being expanded (cycle guard).
    include_stack: Vec<PathBuf>,
}

impl Builder<'_> {
    fn warn(&mut self, pos: &SourcePos, msg: impl Into<String>) {
        self.diagnostics.push(Diagnostic::warning(msg).at(Some(pos.clone())));
    }

    fn error(&mut self, pos: &SourcePos, msg: impl Into<String>) {
        self.diagnostics.push(Diagnostic::error(msg).at(Some(pos.clone())));
    }

    /// SOFA `createNode`. `depth` is the nesting depth in the final tree.
    fn create_node(&mut self, raw: &RawElement, file: &FileCtx, is_root: bool, depth: usize) -> Option<BElem> {
        if depth > MAX_DEPTH {
            self.error(&raw.pos, format!("scene nested deeper than {MAX_DEPTH} levels; element ignored"));
            return None;
        }
        if raw.tag == "include" {
            return self.include_element(raw, file, depth);
        }
        let type_attr = raw.attr("type");
        let kind = match raw.tag.as_str() {
            "Node" => ElementKind::Node,
            "Object" => match type_attr {
                Some(t) => ElementKind::Object { class: t.value.clone() },
                None => {
                    self.warn(&raw.pos, "<Object> without a `type` attribute (SOFA looks for class \"default\")");
                    ElementKind::Object { class: "default".to_string() }
                }
            },
            "Attribute" | "Data" => {
                self.warn(&raw.pos, format!("<{}> is only meaningful inside an element (or an <Attribute>); ignored", raw.tag));
                return None;
            }
            tag => {
                if let Some(t) = type_attr {
                    // SOFA tries to create an XML element of kind `tag`, which
                    // fails: element and subtree dropped (info message).
                    self.warn(
                        &raw.pos,
                        format!(
                            "element <{tag} type=\"{}\"> ignored with its whole subtree: a component tag cannot have a `type` attribute (write <{tag} .../> or <Object type=\"...\"/>)",
                            t.value
                        ),
                    );
                    return None;
                }
                ElementKind::Object { class: tag.to_string() }
            }
        };

        // Prefab fallback (§1.2): checked against the registry *before* renames.
        if let ElementKind::Object { class } = &kind {
            if !(self.is_registered)(class) {
                let prefab = format!("Objects/{class}.xml");
                let found = self.data_path.resolve(&prefab, &file.dir);
                if let (None, Some(text)) = (&found, builtin_prefab(class)) {
                    self.diagnostics.push(
                        Diagnostic::info(format!(
                            "{class} is not a registered class: replaced by Settee's definition of SOFA's standard prefab {prefab} (not in the data path)"
                        ))
                        .at(Some(raw.pos.clone())),
                    );
                    if !raw.children.is_empty() {
                        self.warn(&raw.pos, format!("children of <{}> are ignored (replaced by a prefab)", raw.tag));
                    }
                    let overrides: Vec<&RawAttr> = raw.attrs.iter().filter(|a| a.name != "type" && a.name != "href").collect();
                    let label = PathBuf::from(format!("<settee>/{prefab}"));
                    return self.include_text(text.to_string(), &label, &file.dir, &overrides, &raw.pos, depth);
                }
                if let Some(path) = found {
                    log::debug!("{}: {class} is not registered, using prefab {}", raw.pos, path.display());
                    self.diagnostics.push(
                        Diagnostic::info(format!("{class} is not a registered class: replaced by the prefab {}", path.display()))
                            .at(Some(raw.pos.clone())),
                    );
                    if !raw.children.is_empty() {
                        self.warn(&raw.pos, format!("children of <{}> are ignored (replaced by a prefab)", raw.tag));
                    }
                    // All attributes except `type` become include overrides
                    // (`name` renames the included root).
                    let overrides: Vec<&RawAttr> = raw.attrs.iter().filter(|a| a.name != "type" && a.name != "href").collect();
                    return self.include_file(&path, &overrides, &raw.pos, depth);
                }
            }
        }

        let name = raw.attr("name").map(|a| a.value.clone());
        let attributes = raw
            .attrs
            .iter()
            .filter(|a| a.name != "name" && a.name != "type")
            .map(|a| Attribute { name: a.name.clone(), value: a.value.clone(), pos: a.pos.clone() })
            .collect();
        let own_dir = (is_root && matches!(kind, ElementKind::Node)).then(|| Arc::new(file.dir.clone()));
        let mut el = BElem { kind, name, attributes, children: Vec::new(), pos: raw.pos.clone(), own_dir, include_type: IncludeType::Child };

        for child in &raw.children {
            match child.tag.as_str() {
                "Attribute" => self.fold_attribute(&mut el, child),
                "Data" => self.warn(&child.pos, "<Data> outside of an <Attribute> element; ignored"),
                _ => {
                    if let Some(c) = self.create_node(child, file, false, depth + 1) {
                        self.insert(&mut el, c);
                    }
                }
            }
        }
        Some(el)
    }

    /// Insert the result of `create_node` into `parent` according to its
    /// include type.
    fn insert(&mut self, parent: &mut BElem, c: BElem) {
        match c.include_type {
            IncludeType::Child => self.add_child(parent, c),
            IncludeType::Group => {
                for gc in c.children {
                    self.add_child(parent, gc);
                }
            }
            IncludeType::Merge => self.merge(parent, c),
        }
    }

    /// SOFA `addChild`: a Node cannot be the child of an Object (message,
    /// dropped). An Object inside an Object is accepted by SOFA's XML layer
    /// but cannot be created (the parent component does not exist yet when
    /// the child is initialised), so it is dropped with an error.
    fn add_child(&mut self, parent: &mut BElem, child: BElem) {
        match (&parent.kind, &child.kind) {
            (ElementKind::Node, _) => parent.children.push(child),
            (ElementKind::Object { .. }, ElementKind::Node) => {
                let msg = format!("{} cannot be a child of component {}; ignored", child.describe(), parent.describe());
                self.warn(&child.pos, msg);
            }
            (ElementKind::Object { .. }, ElementKind::Object { .. }) => {
                let msg = format!("component {} cannot be nested inside component {}; ignored", child.describe(), parent.describe());
                self.error(&child.pos, msg);
            }
        }
    }

    /// SOFA `recursiveMergeNode`.
    fn merge(&mut self, dest: &mut BElem, src: BElem) {
        for a in src.attributes {
            dest.set_attribute(&a.name, a.value, a.pos);
        }
        for c in src.children {
            let target = if c.name_or_empty().is_empty() { None } else { dest.children.iter().position(|e| e.same_type(&c) && e.name == c.name) };
            match target {
                Some(i) => {
                    let mut d = std::mem::replace(&mut dest.children[i], placeholder(&c.pos));
                    self.merge(&mut d, c);
                    dest.children[i] = d;
                }
                None => self.add_child(dest, c),
            }
        }
    }

    /// Legacy `<Attribute type="attr"><Data value="v"/></Attribute>`: sets
    /// attribute `attr` of the parent element (last `<Data>` wins; no `<Data>`
    /// gives an empty value).
    fn fold_attribute(&mut self, parent: &mut BElem, raw: &RawElement) {
        let Some(target) = raw.attr("type") else {
            self.warn(&raw.pos, "<Attribute> without a `type` attribute (the attribute name); ignored");
            return;
        };
        let mut value = String::new();
        let mut pos = raw.pos.clone();
        for d in &raw.children {
            if d.tag == "Data" {
                match d.attr("value") {
                    Some(v) => {
                        value = v.value.clone();
                        pos = v.pos.clone();
                    }
                    None => {
                        value.clear();
                        pos = d.pos.clone();
                    }
                }
            } else {
                self.warn(&d.pos, format!("<{}> inside <Attribute> ignored (only <Data> is allowed)", d.tag));
            }
        }
        if matches!(parent.kind, ElementKind::Node) {
            // NodeElement::init creates the node before initialising its
            // children, so the value arrives too late to be used.
            self.warn(&raw.pos, format!("<Attribute type=\"{}\"> has no effect on a Node (SOFA applies it after creating the node)", target.value));
            return;
        }
        match target.value.as_str() {
            "name" => parent.name = Some(value),
            "type" => self.warn(&raw.pos, "<Attribute type=\"type\"> cannot change a component's class; ignored"),
            "" => self.warn(&raw.pos, "<Attribute> with an empty `type`; ignored"),
            attr => parent.set_attribute(attr, value, pos),
        }
    }

    /// `<include href=...>` element.
    fn include_element(&mut self, raw: &RawElement, file: &FileCtx, depth: usize) -> Option<BElem> {
        let href = raw.attr("href").map(|a| a.value.as_str()).unwrap_or("");
        if href.is_empty() {
            self.error(&raw.pos, "<include> requires a non-empty `href` attribute; ignored");
            return None;
        }
        let Some(path) = self.data_path.resolve(href, &file.dir) else {
            let searched: Vec<String> = self.data_path.candidates(href, &file.dir).iter().map(|p| p.display().to_string()).collect();
            let d = Diagnostic::error(format!("include file \"{href}\" not found; element ignored")).at(Some(raw.pos.clone())).hint(format!(
                "searched {} (relative to the including file {}, then the data search path [{}]; set SOFA_DATA_PATH or pass data directories)",
                searched.join(", "),
                file.path.display(),
                self.data_path.dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(":"),
            ));
            self.diagnostics.push(d);
            return None;
        };
        let overrides: Vec<&RawAttr> = raw.attrs.iter().filter(|a| a.name != "href").collect();
        self.include_file(&path, &overrides, &raw.pos, depth)
    }

    /// SOFA `includeNode` once the file is resolved: build the included root
    /// and apply `name=` / override attributes.
    fn include_file(&mut self, path: &Path, overrides: &[&RawAttr], at: &SourcePos, depth: usize) -> Option<BElem> {
        let key = canonical(path);
        if self.include_stack.contains(&key) {
            self.error(at, format!("recursive include of {}; ignored", path.display()));
            return None;
        }
        if self.include_stack.len() > MAX_INCLUDE_DEPTH {
            self.error(at, format!("includes nested deeper than {MAX_INCLUDE_DEPTH} levels; {} ignored", path.display()));
            return None;
        }
        let bytes = match settee_core::budget::read_file(path) {
            Ok(b) => b,
            Err(e) => {
                self.error(at, format!("cannot read included file {}: {e}; ignored", path.display()));
                return None;
            }
        };
        let file = Arc::new(path.to_path_buf());
        let text = decode_bytes(&bytes, &file, &mut self.diagnostics);
        self.include_stack.push(key);
        let result = self.include_text(text, path, &parent_dir(path), overrides, at, depth);
        self.include_stack.pop();
        result
    }

    /// Includes the scene text `text` (from file `path`, or a built-in prefab labelled so, its
    /// relative names resolved against `dir`), applying the include's `overrides`.
    fn include_text(&mut self, text: String, path: &Path, dir: &Path, overrides: &[&RawAttr], at: &SourcePos, depth: usize) -> Option<BElem> {
        let file = Arc::new(path.to_path_buf());
        let doc = match xml::parse_xml(&text, &file) {
            Ok(d) => d,
            Err(e) => {
                self.error(at, format!("failed to parse included file: {e}; include ignored"));
                return None;
            }
        };
        self.diagnostics.extend(doc.diagnostics);
        let ctx = FileCtx { dir: dir.to_path_buf(), path: file };
        let mut result = self.create_node(&doc.root, &ctx, true, depth)?;

        if let Some(t) = include_type_for(result.name.as_deref()) {
            result.include_type = t;
        }
        for o in overrides {
            if o.name == "name" {
                // Renames the included root; may turn it into a Group/_Merge_
                // (never the reverse, as in SOFA).
                result.name = Some(o.value.clone());
                if let Some(t) = include_type_for(result.name.as_deref()) {
                    result.include_type = t;
                }
            } else if let Some((elem, attr)) = o.name.split_once("__") {
                rec_replace(&mut result, attr, &o.value, &o.pos, Some(elem));
            } else {
                rec_replace(&mut result, &o.name, &o.value, &o.pos, None);
            }
        }
        Some(result)
    }
}

fn placeholder(pos: &SourcePos) -> BElem {
    BElem {
        kind: ElementKind::Node,
        name: None,
        attributes: Vec::new(),
        children: Vec::new(),
        pos: pos.clone(),
        own_dir: None,
        include_type: IncludeType::Child,
    }
}

/// SOFA `recReplaceAttribute` + its effect in `ObjectElement::initNode`:
/// for every component element of the subtree (restricted to elements named
/// `only_named` if given) that already has attribute `attr`, replace its
/// value. Nodes are never affected. `name` is always "present" on a
/// component in SOFA, so `Elem__name=` renames; `type` is ignored.
fn rec_replace(el: &mut BElem, attr: &str, value: &str, pos: &SourcePos, only_named: Option<&str>) {
    let selected = only_named.is_none_or(|n| el.name_or_empty() == n);
    if selected && matches!(el.kind, ElementKind::Object { .. }) {
        if attr == "name" {
            el.name = Some(value.to_string());
        } else if attr != "type" {
            if let Some(a) = el.attributes.iter_mut().find(|a| a.name == attr) {
                a.value = value.to_string();
                a.pos = pos.clone();
            }
        }
    }
    for c in &mut el.children {
        rec_replace(c, attr, value, pos, only_named);
    }
}

/// Settee's own definitions of the standard prefabs of SOFA's data directory (`Objects/`), used
/// when the data path has none, so that a scene using them runs without `--data-dir`: the
/// components each stands for, with SOFA's defaults. A file found in the data path wins.
fn builtin_prefab(class: &str) -> Option<&'static str> {
    const SOLVERS: &str = r#"<Node name="Group">
  <EulerImplicitSolver name="Euler Implicit" rayleighStiffness="0.1" rayleighMass="0.1" vdamping="0"/>
  <CGLinearSolver name="CG Solver" iterations="25" tolerance="1e-5" threshold="1e-5"/>
</Node>"#;
    Some(match class {
        // A box of fixed points: the ROI's indices feed the constraint.
        "BoxConstraint" => {
            r#"<Node name="Group">
  <BoxROI name="box_roi" box="0 0 0 1 1 1" drawBoxes="0"/>
  <FixedProjectiveConstraint indices="@[-1].indices"/>
</Node>"#
        }
        // Implicit Euler with a conjugate gradient.
        "CGImplicit" | "CGImplicitSolver" => SOLVERS,
        _ => return None,
    })
}
