//! Looking into an initialised scene: `settee print` (Data values) and `settee tree` (the graph).
//!
//! Paths are those of `--set` (see [`crate::overrides`]): `root/beam/box.indices`,
//! `@/beam/box.indices`, `beam/BoxROI.indices`, `beam.dt`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use crate::LoadOptions;
use settee_core::Severity;

use settee_core::data::{format_real, print_value, Value};
use settee_core::scene::{Reach, Visit};
use settee_core::{ComponentId, NodeId, Scene};

/// What a path names in an initialised scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Node(NodeId),
    Component(ComponentId),
}

/// Resolves `path` (node path, then a component of that node or nothing) in the scene.
pub fn resolve(scene: &Scene, path: &str) -> Result<Target, String> {
    let mut segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty() && *s != ".").collect();
    let root = scene.root();
    let has_child = |n: &settee_core::scene::Node, name: &str| {
        n.children.iter().any(|c| scene.node(*c).name == name) || n.objects.iter().any(|c| scene.entry(*c).name == name)
    };
    if segs.first().is_some_and(|s| *s == root.name && !has_child(root, s)) {
        segs.remove(0);
    }
    let mut cur = Scene::ROOT;
    for (i, seg) in segs.iter().enumerate() {
        let node = scene.node(cur);
        if i + 1 == segs.len() {
            let by_name = node.objects.iter().find(|c| scene.entry(**c).name == *seg);
            let of_class: Vec<&ComponentId> = node.objects.iter().filter(|c| scene.entry(**c).class.name == *seg).collect();
            if let Some(c) = by_name.or((of_class.len() == 1).then(|| of_class[0])) {
                return Ok(Target::Component(*c));
            }
        }
        let Some(child) = node.children.iter().find(|c| scene.node(**c).name == *seg) else {
            let nodes: Vec<&str> = node.children.iter().map(|c| scene.node(*c).name.as_str()).collect();
            let comps: Vec<&str> = node.objects.iter().map(|c| scene.entry(*c).name.as_str()).collect();
            return Err(format!(
                "node {} has no {} named '{seg}' (child nodes: {}; components: {})",
                scene.node_path(cur),
                if i + 1 == segs.len() { "component or child node" } else { "child node" },
                if nodes.is_empty() { "none".to_string() } else { nodes.join(", ") },
                if comps.is_empty() { "none".to_string() } else { comps.join(", ") },
            ));
        };
        cur = *child;
    }
    Ok(Target::Node(cur))
}

/// The value of one of a node's own Data.
fn node_data(scene: &Scene, n: NodeId, data: &str) -> Option<String> {
    let node = scene.node(n);
    let c = &node.context;
    let reals = |v: &[f64]| v.iter().map(|x| format_real(*x)).collect::<Vec<_>>().join(" ");
    Some(match data {
        "gravity" => reals(&c.gravity),
        "dt" => format_real(c.dt),
        "time" => format_real(c.time),
        "animate" => (if c.animate { "1" } else { "0" }).into(),
        "activated" => (if node.activated { "1" } else { "0" }).into(),
        "tags" => node.tags.join(" "),
        "name" => node.name.clone(),
        _ => return None,
    })
}

/// The text of `PATH.data` in an initialised scene (state vectors read from the store; a link
/// prints the paths of its targets).
pub fn print_data(scene: &Scene, arg: &str) -> Result<String, String> {
    let (path, data) = crate::overrides::split_path(arg)
        .ok_or_else(|| format!("'{arg}' names no Data: write PATH.data, e.g. `root/beam/box.indices` or `@/beam/box.indices`"))?;
    let target = resolve(scene, path)?;
    match target {
        Target::Node(n) => node_data(scene, n, data).ok_or_else(|| {
            let names: Vec<&str> = crate::overrides::NODE_DATA.iter().map(|d| d.name).collect();
            format!("node {} has no Data '{}' (a node has: {})", scene.node_path(n), data, names.join(", "))
        }),
        Target::Component(c) => {
            let e = scene.entry(c);
            if let Some(i) = e.data.index_of(data) {
                return Ok(print_value(&scene.read_data(c, i)));
            }
            if let Some(l) = e.links.iter().find(|l| l.decl.name == data) {
                return Ok(l
                    .targets
                    .iter()
                    .map(|t| format!("@{}/{}", scene.node_path(scene.entry(*t).node), scene.entry(*t).name))
                    .collect::<Vec<_>>()
                    .join(" "));
            }
            let names: Vec<&str> = e.data.fields.iter().map(|f| f.decl.name).collect();
            Err(format!("{} has no Data '{}' (`settee doc {}` lists its Data; it has: {})", e.label(), data, e.class.name, names.join(", ")))
        }
    }
}

/// A short form of a value for the tree: small values in full, lists as their size.
fn short_value(v: &Value) -> String {
    let group = match v {
        Value::Reals { arity, .. } | Value::Indices { arity, .. } => *arity,
        _ => 1,
    };
    let text = print_value(v);
    if matches!(v, Value::Reals { .. } | Value::Indices { .. }) && v.len() > 1 {
        return if group > 1 { format!("[{} × {group}]", v.len()) } else { format!("[{}]", v.len()) };
    }
    if text.chars().count() > 32 {
        let cut: String = text.chars().take(31).collect();
        return format!("{cut}…");
    }
    text
}

/// The graph, one line per node and component (indented by depth): class, template, name, the
/// state's size, the topology's counts, and the Data the scene sets.
pub fn tree(scene: &Scene) -> String {
    let mut out = String::new();
    let mut depth = 0;
    scene.walk_all(Scene::ROOT, &mut |n, reach| {
        match reach {
            Reach::Enter => {
                tree_node(scene, n, depth, &mut out);
                depth += 1;
            }
            Reach::Leave => depth -= 1,
        }
        Visit::Descend
    });
    out
}

fn tree_node(scene: &Scene, n: NodeId, depth: usize, out: &mut String) {
    let node = scene.node(n);
    let pad = "  ".repeat(depth);
    let mut extra = Vec::new();
    if n == Scene::ROOT {
        let c = &node.context;
        extra.push(format!("dt={}", format_real(c.dt)));
        extra.push(format!("gravity={} {} {}", format_real(c.gravity[0]), format_real(c.gravity[1]), format_real(c.gravity[2])));
        if c.time != 0.0 {
            extra.push(format!("time={}", format_real(c.time)));
        }
    }
    if !node.activated {
        extra.push("activated=0".into());
    }
    let name = if node.name.is_empty() { "(unnamed)" } else { node.name.as_str() };
    let _ = writeln!(out, "{pad}{name}/{}", if extra.is_empty() { String::new() } else { format!("  {}", extra.join(" ")) });
    for c in &node.objects {
        let e = scene.entry(*c);
        let mut line = format!("{pad}  {}", e.class.name);
        if !e.template.is_empty() {
            let _ = write!(line, "<{}>", e.template);
        }
        let _ = write!(line, " '{}'", e.name);
        let mut facts = Vec::new();
        if let Some(s) = e.state {
            if scene.store.contains(s) {
                facts.push(format!("size={}", scene.store.get(s).size));
            }
        }
        if let Some(m) = scene.mesh_of(*c) {
            let counts = [
                ("points", m.points.len()),
                ("edges", m.edges.len()),
                ("triangles", m.triangles.len()),
                ("quads", m.quads.len()),
                ("tetrahedra", m.tetrahedra.len()),
                ("hexahedra", m.hexahedra.len()),
            ];
            facts.extend(counts.iter().filter(|(_, k)| *k > 0).map(|(w, k)| format!("{w}={k}")));
        }
        for (i, f) in e.data.fields.iter().enumerate() {
            if !f.is_set || f.decl.name == "name" || (e.state.is_some() && settee_core::scene::vec_id_of_data(f.decl.name).is_some()) {
                continue;
            }
            match &f.link_text {
                Some(l) => facts.push(format!("{}={l}", f.decl.name)),
                None => facts.push(format!("{}={}", f.decl.name, short_value(&scene.read_data(*c, i)))),
            }
        }
        if !facts.is_empty() {
            let _ = write!(line, "  {}", facts.join(" "));
        }
        out.push_str(&line);
        out.push('\n');
    }
}

/// Loads a scene for inspection, printing its warnings (or why it could not be loaded) to stderr.
fn load_for_inspection(scene: &Path, opts: &LoadOptions) -> Option<crate::LoadedScene> {
    match crate::load_with(scene, &crate::factory(), opts) {
        Ok(l) => {
            for m in l.scene.messages.iter().filter(|m| m.severity >= Severity::Warning) {
                eprintln!("{m}");
            }
            Some(l)
        }
        Err(f) => {
            for d in f.diagnostics.iter().filter(|d| d.severity >= Severity::Warning) {
                eprintln!("{d}");
            }
            eprintln!("error: could not load {}", scene.display());
            None
        }
    }
}

/// `settee print SCENE PATH.data…`: one line `PATH.data = value` per argument (the value alone
/// when there is one argument). Exit code 1 if the scene does not load or a path names nothing.
pub fn print_command(scene: &Path, args: &[String], opts: &LoadOptions) -> ExitCode {
    let Some(loaded) = load_for_inspection(scene, opts) else {
        return ExitCode::FAILURE;
    };
    let mut ok = true;
    let mut out = String::new();
    for a in args {
        match print_data(&loaded.scene, a) {
            Ok(v) if args.len() == 1 => out.push_str(&format!("{v}\n")),
            Ok(v) => out.push_str(&format!("{a} = {v}\n")),
            Err(e) => {
                eprintln!("error: {a}: {e}");
                ok = false;
            }
        }
    }
    write_stdout(&out);
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `settee tree SCENE`.
pub fn tree_command(scene: &Path, opts: &LoadOptions) -> ExitCode {
    let Some(loaded) = load_for_inspection(scene, opts) else {
        return ExitCode::FAILURE;
    };
    write_stdout(&tree(&loaded.scene));
    ExitCode::SUCCESS
}

/// Writes to stdout; a closed pipe (`settee tree x.scn | head`) ends the output quietly.
pub fn write_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}
