//! Print the parsed element tree and diagnostics of a scene:
//! `cargo run -p settee-scene --example dump_scene -- scene.scn [data_dir...]`
//! (SOFA_DATA_PATH is honoured; every class counts as registered except
//! `BoxConstraint` and `PlaneConstraint`, so the prefab fallback is shown).

use std::path::Path;

use settee_scene::{parse_scene_file, DataPath, Element};

fn dump(e: &Element, depth: usize) {
    let attrs: Vec<String> = e.attributes.iter().map(|a| format!("{}={:?}", a.name, a.value)).collect();
    println!("{:indent$}{} [{}] {}", "", e.describe(), e.pos, attrs.join(" "), indent = depth * 2);
    for c in &e.children {
        dump(c, depth + 1);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(scene) = args.first() else {
        eprintln!("usage: dump_scene <scene.scn> [data_dir...]");
        std::process::exit(2);
    };
    let dp = DataPath::from_env(args[1..].iter().map(String::as_str));
    let registered = |c: &str| c != "BoxConstraint" && c != "PlaneConstraint";
    match parse_scene_file(Path::new(scene), &dp, &registered) {
        Ok(s) => {
            dump(&s.root, 0);
            for d in &s.diagnostics {
                eprintln!("{d}");
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
