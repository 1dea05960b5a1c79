//! The core is layered: each module imports only the layers below it, so there is no circle
//! (the graph knows nothing of mechanics, mechanics nothing of the Lagrangian stages…). This test
//! reads the sources and checks every `crate::` path of non-test code against the order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, lowest first; modules on one line are peers and may not import each other.
const LAYERS: &[&[&str]] = &[
    &["diag", "gformat", "math"],
    &["budget"],
    &["graph"],
    // Inline lists of states and kept buffers of the stages.
    &["scratch"],
    &["mechanics"],
    &["collision", "compliant", "constraint", "visual"],
    &["divergence", "topology_change"],
    &["simulation"],
    &["testing"],
];

/// The graph's modules, also reachable by their short paths (`crate::scene`).
const GRAPH_MODULES: &[&str] =
    &["arena", "component_graph", "constraint_rows", "data", "data_ref", "factory", "names", "plan", "scene", "state", "topology", "types"];

fn layer_of(module: &str) -> Option<(usize, &'static str)> {
    let module = if GRAPH_MODULES.contains(&module) || module == "arena_key" { "graph" } else { module };
    LAYERS.iter().enumerate().find_map(|(i, l)| l.iter().find(|m| **m == module).map(|m| (i, *m)))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The items `lib.rs` re-exports at the crate root, by name: the module each comes from.
fn root_items(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let text = lib.replace('\n', " ");
    for stmt in text.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else { continue };
        let (path, items) = match rest.split_once("::{") {
            Some((p, items)) => (p.trim(), items.trim_end_matches('}').split(',').map(str::trim).collect::<Vec<_>>()),
            None => match rest.rsplit_once("::") {
                Some((p, item)) => (p.trim(), vec![item.trim()]),
                None => continue,
            },
        };
        let module = path.trim_start_matches("crate::").split("::").find(|s| *s != "graph" || path.ends_with("graph")).unwrap_or("");
        let module = if path.starts_with("graph") || path.starts_with("crate::graph") { "graph" } else { module };
        for it in items {
            let name = it.split(" as ").last().unwrap_or(it).trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.to_string());
            }
        }
    }
    out
}

#[test]
fn every_module_imports_only_layers_below_it() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let roots = root_items(&lib);
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut violations = Vec::new();
    let mut checked = 0;
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        if rel == "lib.rs" {
            continue; // the facades (`component`, `role`) and re-exports
        }
        let module = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        let Some((own, own_name)) = layer_of(&module) else {
            violations.push(format!("{rel}: module '{module}' is in no layer"));
            continue;
        };
        let text = std::fs::read_to_string(&f).unwrap();
        // Non-test code: up to the test module.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            let l = line.trim_start();
            if l.starts_with("//") {
                continue;
            }
            for (at, _) in l.match_indices("crate::") {
                let path = &l[at + "crate::".len()..];
                let first: String = path.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                let target = if first.chars().next().is_some_and(|c| c.is_uppercase()) {
                    match roots.get(&first) {
                        Some(m) => m.clone(),
                        None => continue,
                    }
                } else {
                    first.clone()
                };
                if target == "component" || target == "role" {
                    violations.push(format!("{rel}:{}: `crate::{first}` is a facade for other crates; name the layer's own module", n + 1));
                    continue;
                }
                let Some((theirs, their_name)) = layer_of(&target) else { continue };
                checked += 1;
                if theirs > own || (theirs == own && their_name != own_name) {
                    violations.push(format!("{rel}:{}: {own_name} imports {their_name} (`crate::{first}`)", n + 1));
                }
            }
        }
    }
    assert!(checked > 200, "only {checked} imports checked: is the parser still reading the sources?");
    assert!(violations.is_empty(), "{} imports break the layers:\n{}", violations.len(), violations.join("\n"));
}
