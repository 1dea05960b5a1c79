//! The component reference, generated from the Data declarations.

use settee_core::component::ComponentClass;
use settee_core::data::{DataDecl, DataKind};
use settee_core::factory::BASE_DATA;
use settee_core::Factory;

/// An empty default means an empty list or text, except for numbers, where it means that there is
/// none: the scene must give a value (UniformMass's totalMass or vertexMass).
fn no_default(d: &DataDecl) -> bool {
    d.default.is_empty()
        && (matches!(d.kind, DataKind::Real | DataKind::Int | DataKind::Fixed(_) | DataKind::Coord | DataKind::Deriv)
            || d.help.contains("no default"))
}

/// A default in the Markdown table.
fn md_default(d: &DataDecl) -> String {
    if no_default(d) {
        "none".into()
    } else if d.default.is_empty() {
        "empty".into()
    } else {
        format!("`{}`", d.default)
    }
}

/// A default in the text output.
fn text_default(d: &DataDecl) -> String {
    if no_default(d) {
        "no default".into()
    } else if d.default.is_empty() {
        "default empty".into()
    } else {
        format!("default '{}'", d.default)
    }
}

fn class_text(c: &ComponentClass, md: bool) -> String {
    let mut s = String::new();
    if md {
        s.push_str(&format!("## {}\n\n{}\n\n", c.name, c.description));
        if !c.templates.is_empty() {
            s.push_str(&format!("Templates: {} (default {}).\n\n", c.templates.join(", "), c.default_template));
        }
        let data: Vec<_> = c.data.iter().flat_map(|t| t.iter()).collect();
        if !data.is_empty() {
            s.push_str("| Data | type | default | help |\n|---|---|---|---|\n");
            for d in data {
                let name = if d.aliases.is_empty() { d.name.to_string() } else { format!("{} ({})", d.name, d.aliases.join(", ")) };
                s.push_str(&format!("| {} | {} | {} | {} |\n", name, d.kind.type_name(), md_default(d), d.help.replace('|', "\\|")));
            }
            for f in c.families {
                for d in f.members {
                    let name = format!("{}1…{}N (N = {})", d.name, d.name, f.count);
                    s.push_str(&format!("| {} | {} | {} | {} |\n", name, d.kind.type_name(), md_default(d), d.help.replace('|', "\\|")));
                }
            }
            s.push('\n');
        }
        if !c.links.is_empty() {
            s.push_str("| Link | help |\n|---|---|\n");
            for l in c.links {
                s.push_str(&format!("| {} | {} |\n", l.name, l.help));
            }
            s.push('\n');
        }
    } else {
        s.push_str(&format!("{}\n  {}\n", c.name, c.description));
        if !c.templates.is_empty() {
            s.push_str(&format!("  templates: {} (default {})\n", c.templates.join(", "), c.default_template));
        }
        for d in c.data.iter().flat_map(|t| t.iter()) {
            s.push_str(&format!("  {:<24} {:<22} {}\n      {}\n", d.name, d.kind.type_name(), text_default(d), d.help));
        }
        for f in c.families {
            for d in f.members {
                let name = format!("{}1..{}", d.name, f.count);
                s.push_str(&format!("  {:<24} {:<22} {}\n      {}\n", name, d.kind.type_name(), text_default(d), d.help));
            }
        }
        for l in c.links {
            s.push_str(&format!("  @{:<23} link\n      {}\n", l.name, l.help));
        }
    }
    s
}

/// The node's own Data (`settee doc Node`).
fn node_text(md: bool) -> String {
    use settee_scene::instantiate::NODE_DATA;
    let description = "A node of the scene graph (`<Node>`): holds components and child nodes. The root's gravity, dt and time are the simulation's; children copy them.";
    let mut s = String::new();
    if md {
        s.push_str(&format!("## Node\n\n{description}\n\n| Data | type | default | help |\n|---|---|---|---|\n"));
        for d in NODE_DATA {
            s.push_str(&format!("| {} | {} | {} | {} |\n", d.name, d.kind.type_name(), md_default(d), d.help.replace('|', "\\|")));
        }
        s.push('\n');
    } else {
        s.push_str(&format!("Node\n  {description}\n"));
        for d in NODE_DATA {
            s.push_str(&format!("  {:<24} {:<22} {}\n      {}\n", d.name, d.kind.type_name(), text_default(d), d.help));
        }
    }
    s
}

/// The component names, one a line (`settee doc --list`), `Node` first.
pub fn list(factory: &Factory) -> String {
    let mut s = String::from("Node\n");
    for c in factory.classes() {
        s.push_str(c.name);
        s.push('\n');
    }
    s
}

/// Text for one component, or all of them when `name` is `None`. A name that is not exactly a
/// component's (after SOFA's renames) is searched for, case-insensitively: a single match is
/// documented, several are listed with their descriptions; `Node` documents the node's own Data.
pub fn document(factory: &Factory, name: Option<&str>, md: bool) -> Result<String, String> {
    if let Some(n) = name {
        if n.eq_ignore_ascii_case("node") {
            return Ok(node_text(md));
        }
        if let Some(c) = factory.class(n) {
            return Ok(class_text(c, md));
        }
        let lower = n.to_lowercase();
        if let Some(c) = factory.classes().find(|c| c.name.to_lowercase() == lower) {
            return Ok(class_text(c, md));
        }
        let matches: Vec<&ComponentClass> = factory.classes().filter(|c| c.name.to_lowercase().contains(&lower)).collect();
        return match matches.as_slice() {
            [] => Err(format!(
                "no component named or containing '{n}'; nearest: {} (`settee doc --list` lists them all)",
                factory.nearest(n, 3).join(", ")
            )),
            [one] => Ok(class_text(one, md)),
            many => {
                let mut s = format!("{} components contain '{n}':\n", many.len());
                let w = many.iter().map(|c| c.name.len()).max().unwrap_or(0);
                for c in many {
                    let first = c.description.split(". ").next().unwrap_or("").trim_end_matches('.');
                    s.push_str(&format!("  {:<w$}  {first}\n", c.name));
                }
                Ok(s)
            }
        };
    }
    let mut s = String::new();
    if md {
        s.push_str("# Component reference\n\nGenerated by `settee doc --markdown` from the components' Data declarations.\n\n");
        s.push_str("Every component also has the common Data: ");
        s.push_str(&BASE_DATA.iter().map(|d| format!("`{}`", d.name)).collect::<Vec<_>>().join(", "));
        s.push_str(".\n\n");
    }
    s.push_str(&node_text(md));
    if !md {
        s.push('\n');
    }
    for c in factory.classes() {
        s.push_str(&class_text(c, md));
        if !md {
            s.push('\n');
        }
    }
    Ok(s)
}
