//! The component factory: classes by name, SOFA's renames and template aliases, and the creation
//! of a component from its class name and attributes.

use std::collections::BTreeMap;
use std::path::Path;

use crate::data::{decl, DataDecl, DataKind, DataLinkTarget, DataSet};
use crate::diag::{Diagnostic, SourcePos};
use crate::graph::component::{ComponentClass, CreateArgs, Declared, LinkDecl, TemplateRule};
use crate::graph::role;
use crate::names::{removed_class_message, renamed_class, resolve_template};
use crate::scene::{ComponentEntry, ComponentId, InitCtx, LinkTarget, NodeId, Scene};
use crate::state::MState;
use crate::types::Layout;

/// Typed references to the Data every component has ([`BASE_DATA`]).
pub struct BaseData;

impl BaseData {
    pub const NAME: crate::DataRef<crate::data_ref::Text> = crate::DataRef::declared("name");
    pub const TAGS: crate::DataRef<crate::data_ref::Words> = crate::DataRef::declared("tags");
    pub const PRINT_LOG: crate::DataRef<crate::data_ref::Bool> = crate::DataRef::declared("printLog");
    pub const LISTENING: crate::DataRef<crate::data_ref::Bool> = crate::DataRef::declared("listening");
    pub const BBOX: crate::DataRef<crate::data_ref::Reals> = crate::DataRef::declared("bbox");
}

/// Data every component has.
pub static BASE_DATA: &[DataDecl] = &[
    decl("name", DataKind::Str, "", "object name"),
    decl("printLog", DataKind::Bool, "false", "if true, emits extra messages at runtime"),
    decl("tags", DataKind::Strings, "", "list of the subsets the object belongs to"),
    // SOFA's default box is the empty one (min above max), which no point has widened yet.
    decl(
        "bbox",
        DataKind::BoundingBox,
        "1.79769e+308 1.79769e+308 1.79769e+308 -1.79769e+308 -1.79769e+308 -1.79769e+308",
        "this object bounding box",
    ),
    decl("listening", DataKind::Bool, "false", "if true, handles the events that are sent to it"),
];

/// Class-name aliases declared by SOFA's registrations (not renames: the class keeps its name).
pub static REGISTRY_ALIASES: &[(&str, &str)] = &[
    ("VisualModel", "VisualModelImpl"),
    ("VolumeFromTetrahedrons", "VolumeFromVolumetricElements"),
    ("AddResourceRepository", "AddDataRepository"),
    // The Compliant plugin's registrations (compliant spec §3, §7, §9, §11).
    ("AssembledSolver", "CompliantImplicitSolver"),
    ("CompliantNonLinearImplicitSolver", "CompliantNLImplicitSolver"),
    ("NewtonSolver", "CompliantNLImplicitSolver"),
    ("UnilateralProjector", "UnilateralConstraint"),
    ("OffsetMapping", "DifferenceFromTargetMapping"),
    ("CompliantAttachButton", "CompliantAttachButtonSetting"),
];

/// The element size of a container template (`vector<Vec3d>`, as SOFA's `MergeVectors` is
/// templated on): a component on it reads its `Coords` Data in groups of that many scalars.
pub fn vector_template_arity(template: &str) -> Option<crate::data::TemplateArity> {
    let element = template.strip_prefix("vector<")?.strip_suffix('>')?;
    let k = match element {
        "d" | "f" | "i" | "I" | "bool" | "Vec1d" => 1,
        "Vec2d" | "Vec2I" => 2,
        "Vec3d" | "RigidCoord2d" | "RigidDeriv2d" => 3,
        "Vec4d" => 4,
        "RigidDeriv3d" => 6,
        "RigidCoord3d" => 7,
        _ => return None,
    };
    Some(crate::data::TemplateArity { coord: k, deriv: k })
}

/// One attribute to assign.
#[derive(Clone, Debug)]
pub struct Attr {
    pub name: String,
    pub value: String,
    pub pos: Option<SourcePos>,
}

/// The registry of component classes.
#[derive(Clone, Default)]
pub struct Factory {
    classes: BTreeMap<&'static str, &'static ComponentClass>,
    /// Unknown classes are skipped with a warning instead of refused (`--skip-unknown`).
    skip_unknown: bool,
}

impl Factory {
    pub fn new() -> Factory {
        Factory::default()
    }

    /// Registers a class.
    pub fn register(&mut self, class: &'static ComponentClass) {
        self.classes.insert(class.name, class);
    }

    /// Registers the classes a struct's `#[component]` declaration gives.
    pub fn add<T: Declared>(&mut self) {
        for c in T::CLASSES {
            self.register(c);
        }
    }

    /// With `yes`, a component of an unknown class is left out of the scene with a warning
    /// (at its position) instead of an error, so the rest of the scene can run. Classes SOFA
    /// itself removed stay errors.
    pub fn skip_unknown(mut self, yes: bool) -> Factory {
        self.skip_unknown = yes;
        self
    }

    pub fn skips_unknown(&self) -> bool {
        self.skip_unknown
    }

    pub fn register_all(&mut self, classes: &[&'static ComponentClass]) {
        for c in classes {
            self.register(c);
        }
    }

    /// Exact registry lookup (no renames), as the prefab fallback uses.
    pub fn is_registered(&self, name: &str) -> bool {
        self.classes.contains_key(name) || REGISTRY_ALIASES.iter().any(|(a, c)| *a == name && self.classes.contains_key(c))
    }

    /// Class lookup with SOFA's renames applied.
    pub fn class(&self, name: &str) -> Option<&'static ComponentClass> {
        let name = renamed_class(name).unwrap_or(name);
        let name = REGISTRY_ALIASES.iter().find(|(a, _)| *a == name).map(|(_, c)| *c).unwrap_or(name);
        self.classes.get(name).copied()
    }

    pub fn classes(&self) -> impl Iterator<Item = &'static ComponentClass> + '_ {
        self.classes.values().copied()
    }

    /// Known class names closest to `name` (for "did you mean" hints).
    pub fn nearest(&self, name: &str, n: usize) -> Vec<&'static str> {
        let mut scored: Vec<(usize, &'static str)> =
            self.classes.keys().map(|k| (edit_distance(&name.to_lowercase(), &k.to_lowercase()), *k)).collect();
        scored.sort();
        scored.into_iter().take(n).map(|(_, k)| k).collect()
    }

    /// Creates a component in `node` from its class name, template text and attributes, then
    /// parses the attributes and runs the class's `parsed` hook. Problems are reported into the
    /// scene's messages; `None` when the component could not be created.
    #[allow(clippy::too_many_arguments)] // mirrors an XML element: class, template, attributes, position, directory
    pub fn create(
        &self,
        scene: &mut Scene,
        node: NodeId,
        class_name: &str,
        template_text: Option<&str>,
        mut attrs: Vec<Attr>,
        pos: Option<SourcePos>,
        dir: &Path,
    ) -> Option<ComponentId> {
        let Some(class) = self.class(class_name) else {
            let d = if let Some(message) = removed_class_message(class_name) {
                Diagnostic::error(format!("component '{class_name}' cannot be created")).hint(message)
            } else if self.skip_unknown {
                let why = match (crate::names::external_class_origin(class_name), crate::names::sofa_class_module(class_name)) {
                    (Some(origin), _) => format!("it comes from {origin}, which Settee does not include"),
                    (None, Some(module)) => format!("SOFA's {module} has it; it is not implemented yet in Settee"),
                    (None, None) => format!("nearest known components: {}", self.nearest(class_name, 3).join(", ")),
                };
                Diagnostic::warning(format!("unknown component '{class_name}' skipped (--skip-unknown): the scene runs without it")).hint(why)
            } else if let Some(origin) = crate::names::external_class_origin(class_name) {
                Diagnostic::error(format!("unsupported component '{class_name}': it comes from {origin}, which Settee does not include"))
                    .hint("remove it from the scene or replace it by a component of SOFA's core modules")
                    .unsupported()
            } else if let Some(module) = crate::names::sofa_class_module(class_name) {
                let from = if module.starts_with("Sofa.") { format!("SOFA's module {module}") } else { format!("SOFA's plugin {module}") };
                Diagnostic::error(format!("component '{class_name}' ({from}) is not implemented yet in Settee"))
                    .hint("`settee doc --list` lists the components Settee has")
                    .unsupported()
            } else {
                Diagnostic::error(format!("unknown component '{class_name}'"))
                    .hint(format!("nearest known components: {}", self.nearest(class_name, 3).join(", ")))
                    .unsupported()
            };
            scene.report(d.at(pos));
            return None;
        };

        // Template: requested (after aliases), else deduced from the context, else the default.
        // `template=""` is no request: SOFA deduces the template as when the attribute is absent.
        let requested = template_text.filter(|t| !t.trim().is_empty()).map(|t| {
            let (r, notes) = resolve_template(t);
            for n in notes {
                scene.report(Diagnostic::warning(n).at(pos.clone()).subject(class.name));
            }
            r
        });
        let template = self.choose_template(scene, node, class, requested.as_deref(), &attrs, pos.clone())?;
        let layout = template.split(',').next().and_then(Layout::from_name);
        let arity =
            layout.map(|l| l.arity()).or_else(|| vector_template_arity(&template)).unwrap_or(crate::data::TemplateArity { coord: 3, deriv: 3 });

        let mut tables: Vec<&'static [DataDecl]> = vec![BASE_DATA];
        tables.extend_from_slice(class.data);
        let mut data = DataSet::from_decls(&tables, arity);
        data.families = class.families;
        // An indexed family's count is read first, so that its instances exist when the other
        // attributes are assigned (SOFA's `vectorData::parseSizeData`).
        for fam in class.families {
            if let (Some(a), Some(fi)) = (attrs.iter().find(|a| a.name == fam.count && !a.value.starts_with('@')), data.index_of(fam.count)) {
                let _ = data.set_text(fi, &a.value);
            }
        }
        let refused_count =
            data.resize_families().err().map(|(count, n)| (count, n, attrs.iter().find(|a| a.name == count).and_then(|a| a.pos.clone())));
        let obj = (class.create)(&CreateArgs { template: &template, layout });
        let id = scene.components.insert(ComponentEntry {
            template: template.clone(),
            layout,
            pos: pos.clone(),
            dir: dir.to_path_buf(),
            ..ComponentEntry::new(class, node, data, Some(obj))
        });
        scene.node_mut(node).objects.push(id);
        scene.touch();
        if let Some((count, n, at)) = refused_count {
            scene.report(
                Diagnostic::error(format!("{count}={n} asks for more indexed Data than Settee keeps"))
                    .at(at.or_else(|| pos.clone()))
                    .subject(class.name)
                    .hint(format!("{count} can be at most {}", crate::data::MAX_FAMILY_COUNT)),
            );
        }

        // Class-specific attribute rewriting.
        if let Some(pre) = class.preparse {
            let mut pairs: Vec<(String, String)> = attrs.iter().map(|a| (a.name.clone(), a.value.clone())).collect();
            pre(&mut pairs);
            let old = std::mem::take(&mut attrs);
            attrs = pairs
                .into_iter()
                .map(|(name, value)| {
                    let p = old.iter().find(|a| a.name == name).and_then(|a| a.pos.clone()).or_else(|| pos.clone());
                    Attr { name, value, pos: p }
                })
                .collect();
        }

        self.parse_attributes(scene, id, attrs);

        // Default name: class name + per-node, per-class counter of unnamed components.
        if scene.entry(id).data.get(BaseData::NAME).is_empty() {
            let k = scene
                .node(node)
                .objects
                .iter()
                .filter(|c| scene.entry(**c).class.name == class.name && scene.entry(**c).data.field("name").is_some_and(|f| !f.is_set))
                .count();
            let name = format!("{}{}", class.name, k);
            scene.entry_mut(id).data.put(BaseData::NAME, name);
        }
        let name = scene.entry(id).data.get(BaseData::NAME).to_string();
        scene.entry_mut(id).name = name.clone();

        if class.plays(role::MECHANICAL_STATE) {
            let l = layout.unwrap_or(Layout::Vec3);
            let s = scene.store.add(MState::new(l, id, node, name));
            scene.entry_mut(id).state = Some(s);
        }

        scene.pull_links(id);
        let r = scene.with_taken(id, |obj, scene| obj.parsed(&mut InitCtx { scene, id }));
        if let Err(e) = r {
            scene.report(*e.0);
        }
        Some(id)
    }

    /// Gives attributes to a component created but not yet initialised, as if its creation had
    /// been given them: the same parsing and messages, then its parse-time hook again (`--set` on a
    /// Python scene, whose components exist once its script has run). `false` when the component
    /// is already initialised, where a changed Data would not be taken into account.
    pub fn set_attributes(&self, scene: &mut Scene, id: ComponentId, attrs: Vec<Attr>) -> bool {
        if scene.entry(id).initialized {
            return false;
        }
        self.parse_attributes(scene, id, attrs);
        scene.pull_links(id);
        let r = scene.with_taken(id, |obj, scene| obj.parsed(&mut InitCtx { scene, id }));
        if let Err(e) = r {
            scene.report(*e.0);
        }
        true
    }

    fn choose_template(
        &self,
        scene: &mut Scene,
        node: NodeId,
        class: &'static ComponentClass,
        requested: Option<&str>,
        attrs: &[Attr],
        pos: Option<SourcePos>,
    ) -> Option<String> {
        if class.templates.is_empty() {
            return Some(requested.unwrap_or("").to_string());
        }
        if let Some(r) = requested {
            if class.templates.contains(&r) && self.template_fits(scene, node, class, r, attrs) {
                return Some(r.to_string());
            }
        }
        let deduced = match class.template_rule {
            TemplateRule::Default => None,
            // An unknown given template: SOFA's check passes for the default one.
            TemplateRule::FromStateWhenNotGiven if requested.is_some() => None,
            TemplateRule::FromState | TemplateRule::FromPair | TemplateRule::FromStateWhenNotGiven => {
                attached_state(scene, node, attrs).and_then(|c| scene.entry(c).layout).map(|l| l.name().to_string())
            }
            TemplateRule::FromMapping => mapping_template(scene, node, attrs),
        };
        let chosen = deduced.filter(|d| class.templates.contains(&d.as_str())).unwrap_or_else(|| class.default_template.to_string());
        if let Some(r) = requested {
            if r != chosen {
                let d = if class.templates.contains(&r) {
                    Diagnostic::error(format!("requested template '{r}' is not compatible with the current context; '{chosen}' is used"))
                } else {
                    Diagnostic::error(format!("requested template '{r}' is not available for {}", class.name))
                        .hint(format!("available templates: {}", class.templates.join(", ")))
                };
                scene.report(d.at(pos).subject(class.name));
            }
        }
        Some(chosen)
    }

    fn template_fits(&self, scene: &Scene, node: NodeId, class: &ComponentClass, t: &str, attrs: &[Attr]) -> bool {
        match class.template_rule {
            TemplateRule::FromState | TemplateRule::FromPair => match attached_state(scene, node, attrs).and_then(|c| scene.entry(c).layout) {
                Some(l) => l.name() == t.split(',').next().unwrap_or(""),
                None => true,
            },
            // A given template is never checked against the state.
            TemplateRule::FromStateWhenNotGiven => true,
            _ => true,
        }
    }

    /// Assigns attributes to Data and links, in SOFA's order: `src` first, `printLog`, then the
    /// others in byte order of their names.
    fn parse_attributes(&self, scene: &mut Scene, id: ComponentId, mut attrs: Vec<Attr>) {
        let node = scene.entry(id).node;
        let label = scene.entry(id).label();
        let class = scene.entry(id).class;
        if let Some(i) = attrs.iter().position(|a| a.name == "src") {
            let src = attrs.remove(i);
            self.apply_src(scene, id, &src, &attrs);
        }
        attrs.sort_by(|a, b| {
            let ka = (a.name != "printLog", a.name.as_bytes());
            let kb = (b.name != "printLog", b.name.as_bytes());
            ka.cmp(&kb)
        });
        for a in attrs {
            if a.name == "type" || a.name == "template" {
                continue;
            }
            let fields: Vec<usize> = {
                let ds = &scene.entry(id).data;
                ds.fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.decl.name == a.name || f.decl.aliases.contains(&a.name.as_str()))
                    .map(|(i, _)| i)
                    .collect()
            };
            let link_idx = scene.entry(id).links.iter().position(|l| l.decl.name == a.name);
            if fields.is_empty() && link_idx.is_none() {
                if a.name.starts_with('_') || a.name.starts_with("NO") {
                    continue;
                }
                let names: Vec<&str> = scene.entry(id).data.fields.iter().map(|f| f.decl.name).chain(class.links.iter().map(|l| l.name)).collect();
                let near = nearest_of(&a.name, &names);
                let mut d = Diagnostic::warning(format!("unused attribute '{}'", a.name)).at(a.pos.clone()).subject(label.clone());
                if let Some(n) = near {
                    d = d.hint(format!("did you mean '{n}'? (`settee doc {}` lists its Data)", class.name));
                }
                scene.report(d);
                continue;
            }
            for fi in fields {
                if a.value.starts_with('@') {
                    self.link_data(scene, id, fi, &a);
                } else if let Some(problem) = scene.entry_mut(id).data.set_text(fi, &a.value) {
                    let fname = scene.entry(id).data.fields[fi].decl.name;
                    let kind = scene.entry(id).data.fields[fi].decl.kind.type_name();
                    scene.report(data_problem(scene.lenient, fname, &kind, &problem).at(a.pos.clone()).subject(label.clone()));
                }
            }
            if let Some(li) = link_idx {
                let l = &mut scene.entry_mut(id).links[li];
                l.text = Some(a.value.clone());
                l.pos = a.pos.clone();
            }
        }
        let _ = node;
    }

    /// Sets up a Data link `@path.data` (resolved now: only earlier objects are visible, as in
    /// SOFA's creation order).
    fn link_data(&self, scene: &mut Scene, id: ComponentId, field: usize, a: &Attr) {
        let node = scene.entry(id).node;
        let label = scene.entry(id).label();
        let text = &a.value[1..];
        let Some((path, data_name)) = split_data_link(text) else {
            scene.report(
                Diagnostic::error(format!("Data link '{}' names no Data", a.value))
                    .at(a.pos.clone())
                    .subject(label)
                    .hint("write `@path/to/object.dataName`"),
            );
            return;
        };
        let target = match scene.resolve_path(node, path, Some(id), None) {
            Some(LinkTarget::Component(c)) => Some(c),
            _ => None,
        };
        // SOFA logs an error for a link it cannot resolve and goes on with the Data's default:
        // so does Settee, with a warning, so that the scene runs as it does in SOFA.
        let Some(target) = target else {
            scene.report(
                Diagnostic::warning(format!("Data link '{}': object '{path}' not found; the Data keeps its default, as in SOFA", a.value))
                    .at(a.pos.clone())
                    .subject(label)
                    .hint("a Data link can only name an object created earlier in the file"),
            );
            return;
        };
        let Some(tf) = scene.entry(target).data.index_of(data_name) else {
            let avail: Vec<&str> = scene.entry(target).data.fields.iter().map(|f| f.decl.name).collect();
            let near = nearest_of(data_name, &avail);
            let mut d = Diagnostic::warning(format!(
                "Data link '{}': {} has no Data '{data_name}'; the Data keeps its default, as in SOFA",
                a.value,
                scene.entry(target).label()
            ))
            .at(a.pos.clone())
            .subject(label);
            if let Some(n) = near {
                d = d.hint(format!("did you mean '{n}'?"));
            }
            scene.report(d);
            return;
        };
        let f = &mut scene.entry_mut(id).data.fields[field];
        f.link = Some(DataLinkTarget::component(target, tf));
        f.link_text = Some(a.value.clone());
        f.is_set = true;
    }

    fn apply_src(&self, scene: &mut Scene, id: ComponentId, src: &Attr, explicit: &[Attr]) {
        let node = scene.entry(id).node;
        let label = scene.entry(id).label();
        let Some(path) = src.value.rsplit('@').next().filter(|_| src.value.starts_with('@')) else {
            scene.report(Diagnostic::error(format!("src=\"{}\" must start with '@'", src.value)).at(src.pos.clone()).subject(label));
            return;
        };
        if path.is_empty() {
            return;
        }
        let Some(source) = scene.resolve_src(node, path) else {
            scene.report(
                Diagnostic::error(format!("source object '{}' not found", src.value))
                    .at(src.pos.clone())
                    .subject(label)
                    .hint("src=\"@name\" looks only in the same node; use @../name for a parent's object"),
            );
            return;
        };
        const NEVER: &[&str] = &["name", "printLog", "tags", "bbox", "componentState", "listening", "type", "filename"];
        let src_class = scene.entry(source).class;
        let src_fields: Vec<(usize, Vec<&'static str>)> = scene
            .entry(source)
            .data
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut names = vec![f.decl.name];
                names.extend_from_slice(f.decl.aliases);
                (i, names)
            })
            .collect();
        for (sf, names) in src_fields {
            let primary = names[0];
            if NEVER.contains(&primary) || src_class.no_src_link.contains(&primary) {
                continue;
            }
            for name in names {
                if explicit.iter().any(|a| a.name == name) {
                    continue;
                }
                let targets: Vec<usize> = scene
                    .entry(id)
                    .data
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.decl.name == name || f.decl.aliases.contains(&name))
                    .map(|(i, _)| i)
                    .collect();
                for t in targets {
                    let f = &mut scene.entry_mut(id).data.fields[t];
                    if f.link.is_none() {
                        f.link = Some(DataLinkTarget::component(source, sf));
                        f.link_text = Some(format!("{}.{name}", src.value));
                        f.is_set = true;
                    }
                }
            }
        }
    }
}

/// SOFA's mapping `canCreate`: `In,Out` from the layouts of the states designated by `input`
/// (default `@../`, first path of a list) and `output` (default `@./`); a visual model output is
/// `Vec3d`.
fn mapping_template(scene: &Scene, node: NodeId, attrs: &[Attr]) -> Option<String> {
    let path = |name: &str, default: &str| -> String {
        let v = attrs.iter().find(|a| a.name == name).map(|a| a.value.as_str()).unwrap_or(default);
        v.split_whitespace().next().unwrap_or(default).trim_start_matches('@').to_string()
    };
    let layout_of = |c: ComponentId| -> Option<String> {
        let e = scene.entry(c);
        if e.plays(role::VISUAL_MODEL) && !e.plays(role::MECHANICAL_STATE) {
            return Some(Layout::Vec3.name().to_string());
        }
        e.layout.map(|l| l.name().to_string())
    };
    let input = scene.resolve_state_path(node, &path("input", "../"), None, false)?;
    let output = scene.resolve_state_path(node, &path("output", "./"), None, true)?;
    if input == output {
        return None;
    }
    Some(format!("{},{}", layout_of(input)?, layout_of(output)?))
}

/// Splits `path.data` of a Data link (text after `@`). The data name follows the last `.` that
/// comes after the last `/`; `..` and `/.` endings have none.
pub fn split_data_link(text: &str) -> Option<(&str, &str)> {
    if text == "." || text.ends_with("..") || text.ends_with("/.") {
        return None;
    }
    let after_slash = text.rfind('/').map(|i| i + 1).unwrap_or(0);
    let dot = text[after_slash..].rfind('.')? + after_slash;
    let data = &text[dot + 1..];
    if data.is_empty() {
        return None;
    }
    Some((&text[..dot], data))
}

fn nearest_of<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (edit_distance(&name.to_lowercase(), &c.to_lowercase()), *c))
        .filter(|(d, _)| *d <= 3.max(name.len() / 3))
        .min()
        .map(|(_, c)| c)
}

/// Levenshtein distance.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Declares no links.
pub static NO_LINKS: &[LinkDecl] = &[];

/// The message for a Data text that did not parse cleanly: an error when the text is not a value
/// of the Data's kind, unless loading is lenient (then a warning, and the Data keeps its default).
pub fn data_problem(lenient: bool, data: &str, kind: &str, problem: &crate::data::DataProblem) -> Diagnostic {
    let hint = format!("'{data}' expects a {kind}");
    if problem.invalid && !lenient {
        Diagnostic::error(format!("invalid value for Data '{data}': {}", problem.message))
            .hint(format!("{hint}; `--lenient` (LoadOptions::lenient) reads on with the default value"))
    } else if problem.invalid {
        Diagnostic::warning(format!("could not read value of Data '{data}': {}; kept its default", problem.message)).hint(hint)
    } else {
        Diagnostic::warning(format!("could not read value of Data '{data}': {}", problem.message)).hint(hint)
    }
}

/// The state a component being created attaches to: its `mstate` (or `object1`) link, else the
/// node's context state.
fn attached_state(scene: &Scene, node: NodeId, attrs: &[Attr]) -> Option<ComponentId> {
    attrs
        .iter()
        .find(|a| a.name == "mstate" || a.name == "object1")
        .and_then(|a| scene.resolve_path(node, a.value.trim_start_matches('@'), None, Some(role::MECHANICAL_STATE)))
        .and_then(|t| if let LinkTarget::Component(c) = t { Some(c) } else { None })
        .or_else(|| scene.context_state(node))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_link_splitting() {
        assert_eq!(split_data_link("box.indices"), Some(("box", "indices")));
        assert_eq!(split_data_link("[-1].indices"), Some(("[-1]", "indices")));
        assert_eq!(split_data_link("../loader.position"), Some(("../loader", "position")));
        assert_eq!(split_data_link(".."), None);
        assert_eq!(split_data_link("a/."), None);
        assert_eq!(split_data_link("loader"), None);
    }

    #[test]
    fn template_aliases() {
        assert_eq!(resolve_template("Vec3,Rigid3").0, "Vec3d,Rigid3d");
        assert_eq!(resolve_template("CompressedRowSparseMatrixMat3x3").0, "CompressedRowSparseMatrixMat3x3d");
        let (t, notes) = resolve_template("Rigid");
        assert_eq!(t, "Rigid3d");
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn distances() {
        assert_eq!(edit_distance("MechanicalObjet", "MechanicalObject"), 1);
    }
}
