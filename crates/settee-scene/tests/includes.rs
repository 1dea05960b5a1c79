//! Include / prefab / element-kind semantics on small synthetic scenes
//! written to a temporary directory.

use std::fs;
use std::path::{Path, PathBuf};

use settee_scene::{parse_scene_file, parse_scene_str, DataPath, Element, ElementKind, SceneDescription, SceneError, Severity};

struct Tmp(PathBuf);

impl Tmp {
    fn new(tag: &str) -> Tmp {
        let d = std::env::temp_dir().join(format!("settee-scene-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        Tmp(d)
    }
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn all(_: &str) -> bool {
    true
}

fn labels(e: &Element) -> Vec<String> {
    e.children
        .iter()
        .map(|c| match &c.kind {
            ElementKind::Node => format!("Node:{}", c.name_or_empty()),
            ElementKind::Object { class } => match &c.name {
                Some(n) => format!("{class}:{n}"),
                None => class.clone(),
            },
        })
        .collect()
}

fn parse(path: &Path, dp: &DataPath) -> SceneDescription {
    parse_scene_file(path, dp, &all).unwrap_or_else(|e| panic!("{e}"))
}

fn no_diags(s: &SceneDescription) {
    assert!(s.diagnostics.is_empty(), "{:#?}", s.diagnostics);
}

#[test]
fn group_include_splices_children_in_place() {
    let t = Tmp::new("group");
    t.write("inc/g.xml", "<Node name=\"Group\"><B/><Node name=\"n\"><C/></Node></Node>");
    t.write("inc/g2.xml", "<Node name=\"_Group_\"><D/></Node>");
    let scn = t.write("scene.scn", "<Node name=\"root\">\n <A/>\n <include href=\"inc/g.xml\"/>\n <include href=\"inc/g2.xml\"/>\n <E/>\n</Node>");
    let s = parse(&scn, &DataPath::default());
    no_diags(&s);
    assert_eq!(labels(&s.root), ["A", "B", "Node:n", "D", "E"]);
    // positions come from the included file
    let b = &s.root.children[1];
    assert_eq!(b.pos.file.as_path(), t.0.join("inc/g.xml"));
    assert_eq!((b.pos.line, b.pos.column), (1, 20));
    // spliced content (even a Node) resolves files from the scene directory
    assert_eq!(s.root.children[2].dir.as_path(), t.0.as_path());
    assert_eq!(s.root.children[2].children[0].dir.as_path(), t.0.as_path());
}

#[test]
fn child_include_keeps_its_own_directory_and_nested_includes_are_relative_to_it() {
    let t = Tmp::new("child");
    t.write("sub/deeper/leaf.xml", "<Node name=\"Group\"><Leaf/></Node>");
    t.write("sub/part.xml", "<Node name=\"Part\"><P/><include href=\"deeper/leaf.xml\"/></Node>");
    let scn = t.write("scene.scn", "<Node><include href=\"sub/part.xml\"/><Q/></Node>");
    let s = parse(&scn, &DataPath::default());
    no_diags(&s);
    assert_eq!(labels(&s.root), ["Node:Part", "Q"]);
    let part = &s.root.children[0];
    assert_eq!(labels(part), ["P", "Leaf"]);
    assert_eq!(part.dir.as_path(), t.0.join("sub"));
    assert_eq!(part.children[1].dir.as_path(), t.0.join("sub"));
    assert_eq!(part.children[1].pos.file.as_path(), t.0.join("sub/deeper/leaf.xml"));
    assert_eq!(s.root.children[1].dir.as_path(), t.0.as_path());
}

#[test]
fn include_resolves_through_the_data_path() {
    let t = Tmp::new("dp");
    t.write("share/Objects/thing.xml", "<Node name=\"Thing\"><MeshOBJLoader filename=\"mesh/x.obj\"/></Node>");
    let scn = t.write("scenes/a/scene.scn", "<Node><include href=\"Objects/thing.xml\"/></Node>");
    let dp = DataPath::new([t.0.join("share")]);
    let s = parse(&scn, &dp);
    no_diags(&s);
    assert_eq!(s.root.children[0].dir.as_path(), t.0.join("share/Objects"));
    // `../` names are only looked up relative to the including file (SOFA)
    let scn2 = t.write("scenes/a/scene2.scn", "<Node><include href=\"../Objects/thing.xml\"/></Node>");
    let s2 = parse(&scn2, &dp);
    assert_eq!(s2.diagnostics.len(), 1);
    assert!(s2.root.children.is_empty());
}

#[test]
fn merge_include() {
    let t = Tmp::new("merge");
    t.write(
        "m.xml",
        "<Node name=\"_Merge_\" dt=\"0.5\" gravity=\"0 0 0\">\
           <Node name=\"child\" extra=\"1\"><Added/></Node>\
           <MechanicalObject name=\"mo\" position=\"1 2 3\"/>\
           <UniformMass totalMass=\"2\"/>\
           <Node name=\"fresh\"/>\
         </Node>",
    );
    let scn = t.write(
        "scene.scn",
        "<Node name=\"root\" dt=\"0.01\">\
           <MechanicalObject name=\"mo\" template=\"Vec3\"/>\
           <Node name=\"child\"><Existing/></Node>\
           <include href=\"m.xml\"/>\
           <Last/>\
         </Node>",
    );
    let s = parse(&scn, &DataPath::default());
    no_diags(&s);
    let r = &s.root;
    assert_eq!(r.name.as_deref(), Some("root"));
    assert_eq!(r.attr("dt"), Some("0.5"));
    assert_eq!(r.attr("gravity"), Some("0 0 0"));
    assert_eq!(labels(r), ["MechanicalObject:mo", "Node:child", "UniformMass", "Node:fresh", "Last"]);
    let mo = &r.children[0];
    assert_eq!(mo.attr("template"), Some("Vec3"));
    assert_eq!(mo.attr("position"), Some("1 2 3"));
    let child = &r.children[1];
    assert_eq!(child.attr("extra"), Some("1"));
    assert_eq!(labels(child), ["Existing", "Added"]);
}

#[test]
fn overrides_replace_existing_component_attributes_only() {
    let t = Tmp::new("ovr");
    t.write(
        "inc.xml",
        "<Node name=\"Inc\" dx=\"9\">\
           <MechanicalObject name=\"a\" dx=\"0\" rx=\"0\"/>\
           <OglModel name=\"b\" dx=\"0\"/>\
           <UniformMass name=\"c\"/>\
           <Node name=\"sub\" dx=\"7\"><MechanicalObject name=\"a\" dx=\"1\" rx=\"1\"/></Node>\
         </Node>",
    );
    let scn = t.write("scene.scn", "<Node><include href=\"inc.xml\" dx=\"2.5\" a__rx=\"90\" c__name=\"renamed\"/></Node>");
    let s = parse(&scn, &DataPath::default());
    no_diags(&s);
    let inc = &s.root.children[0];
    assert_eq!(inc.name.as_deref(), Some("Inc"));
    assert_eq!(inc.attr("dx"), Some("9"), "nodes are not overridden");
    let a = &inc.children[0];
    assert_eq!((a.attr("dx"), a.attr("rx")), (Some("2.5"), Some("90")));
    let dx = a.attribute("dx").unwrap();
    assert_eq!(dx.pos.file.as_path(), scn.as_path(), "override position points at the include");
    assert_eq!((dx.pos.line, dx.pos.column), (1, 31));
    let b = &inc.children[1];
    assert_eq!((b.attr("dx"), b.attr("rx")), (Some("2.5"), None));
    let c = &inc.children[2];
    assert_eq!(c.name.as_deref(), Some("renamed"));
    assert!(c.attributes.is_empty());
    let sub = &inc.children[3];
    assert_eq!(sub.attr("dx"), Some("7"));
    let a2 = &sub.children[0];
    assert_eq!((a2.attr("dx"), a2.attr("rx")), (Some("2.5"), Some("90")));
}

#[test]
fn name_override_renames_root_and_can_make_a_group() {
    let t = Tmp::new("name");
    t.write("plain.xml", "<Node name=\"Plain\"><X/></Node>");
    t.write("group.xml", "<Node name=\"Group\"><Y/></Node>");
    let scn = t.write(
        "scene.scn",
        "<Node>\
           <include name=\"Renamed\" href=\"plain.xml\"/>\
           <include name=\"Group\" href=\"plain.xml\"/>\
           <include name=\"Other\" href=\"group.xml\"/>\
         </Node>",
    );
    let s = parse(&scn, &DataPath::default());
    no_diags(&s);
    // renaming a Group root does not undo the Group splice (as SOFA's includeNode)
    assert_eq!(labels(&s.root), ["Node:Renamed", "X", "Y"]);
}

#[test]
fn prefab_fallback() {
    let t = Tmp::new("prefab");
    t.write(
        "data/Objects/MyPrefab.xml",
        "<Node name=\"Group\"><BoxROI name=\"roi\" box=\"0 0 0 1 1 1\" template=\"Vec3\"/><Fixed indices=\"@[-1].indices\"/></Node>",
    );
    let scn = t.write(
        "scene.scn",
        "<Node>\
           <MyPrefab box=\"1 2 3 4 5 6\" drawBoxes=\"1\"/>\
           <Object type=\"MyPrefab\" template=\"Rigid3\"/>\
           <Registered/>\
           <Unknown/>\
         </Node>",
    );
    let dp = DataPath::new([t.0.join("data")]);
    let reg = |c: &str| c != "MyPrefab" && c != "Unknown";
    let s = parse_scene_file(&scn, &dp, &reg).unwrap();
    assert!(s.diagnostics.iter().all(|d| d.severity == Severity::Info), "{:#?}", s.diagnostics);
    assert_eq!(labels(&s.root), ["BoxROI:roi", "Fixed", "BoxROI:roi", "Fixed", "Registered", "Unknown"]);
    let r1 = &s.root.children[0];
    assert_eq!(r1.attr("box"), Some("1 2 3 4 5 6"));
    assert_eq!(r1.attr("drawBoxes"), None);
    assert_eq!(r1.attr("template"), Some("Vec3"));
    let r2 = &s.root.children[2];
    assert_eq!(r2.attr("box"), Some("0 0 0 1 1 1"));
    assert_eq!(r2.attr("template"), Some("Rigid3"));
    // registered: never replaced
    let s = parse_scene_file(&scn, &dp, &all).unwrap();
    assert_eq!(labels(&s.root), ["MyPrefab", "MyPrefab", "Registered", "Unknown"]);
    // a named prefab instance renames the Group root, which is still spliced
    let scn2 = t.write("scene2.scn", "<Node><MyPrefab name=\"fix\" box=\"1 1 1 2 2 2\"/></Node>");
    let s = parse_scene_file(&scn2, &dp, &reg).unwrap();
    assert_eq!(labels(&s.root), ["BoxROI:roi", "Fixed"]);
}

#[test]
fn missing_and_broken_includes_are_error_diagnostics() {
    let t = Tmp::new("missing");
    t.write("bad.xml", "<Node name=\"Group\">\n  <A>\n</Node>\n");
    let scn =
        t.write("scene.scn", "<Node>\n  <A/>\n  <include href=\"nope/none.xml\"/>\n  <include href=\"bad.xml\"/>\n  <include/>\n  <B/>\n</Node>");
    let dp = DataPath::new([t.0.join("share1"), t.0.join("share2")]);
    let s = parse(&scn, &dp);
    assert_eq!(labels(&s.root), ["A", "B"]);
    let errs: Vec<_> = s.errors().collect();
    assert_eq!(errs.len(), 3, "{errs:#?}");
    let missing = errs[0];
    assert_eq!(missing.pos.as_ref().map(|p| (p.line, p.column)), Some((3, 3)));
    assert!(missing.message.contains("nope/none.xml"), "{missing}");
    let hint = missing.hint.as_deref().unwrap();
    assert!(hint.contains(&t.0.join("nope/none.xml").display().to_string()), "{hint}");
    assert!(hint.contains(&t.0.join("share2/nope/none.xml").display().to_string()), "{hint}");
    assert!(hint.contains("share1"), "{hint}");
    let bad = errs[1];
    let expect = format!("{}:3:", t.0.join("bad.xml").display());
    assert!(bad.message.contains(&expect), "{bad}");
    assert!(bad.message.contains("`</A>`"), "{bad}");
    assert!(errs[2].message.contains("href"));
}

#[test]
fn recursive_include_is_reported_not_followed() {
    let t = Tmp::new("rec");
    t.write("a.xml", "<Node name=\"A\"><include href=\"b.xml\"/></Node>");
    t.write("b.xml", "<Node name=\"Group\"><X/><include href=\"a.xml\"/></Node>");
    let scn = t.write("scene.scn", "<Node><include href=\"a.xml\"/><include href=\"scene.scn\"/></Node>");
    let s = parse(&scn, &DataPath::default());
    assert_eq!(s.errors().count(), 2, "{:#?}", s.diagnostics);
    assert!(s.errors().all(|d| d.message.contains("recursive include")));
    assert_eq!(labels(&s.root), ["Node:A"]);
    assert_eq!(labels(&s.root.children[0]), ["X"]);
}

fn parse_text(text: &str) -> Result<SceneDescription, SceneError> {
    parse_scene_str(text, Path::new("/virtual/dir/test.scn"), &DataPath::default(), &all)
}

#[test]
fn element_kinds() {
    let s = parse_text(
        "<?xml version=\"1.0\"?>\n<!-- comment -->\n<Node name=\"root\" type=\"default\" dt=\"0.1\">\n\
           text is ignored <?pi ignored?>\n\
           <Object type=\"MechanicalObject\" name=\"mo\" position=\"0 0 0\"/>\n\
           <MechanicalObject type=\"Foo\" name=\"dropped\"><Child/></MechanicalObject>\n\
           <UniformMass name=\"\" totalMass=\"1\">\n\
             <Attribute type=\"vertexMass\"><Data value=\"3\"/></Attribute>\n\
             <Attribute type=\"totalMass\"><Data value=\"5\"/><Data value=\"6\"/></Attribute>\n\
             <Attribute type=\"name\"><Data value=\"mass\"/></Attribute>\n\
           </UniformMass>\n\
           <Attribute type=\"dt\"><Data value=\"1\"/></Attribute>\n\
           <Data value=\"x\"/>\n\
           <VisualStyle><Node name=\"bad\"/><Nested/></VisualStyle>\n\
           <Node name=\"n\"><![CDATA[ <NotAnElement/> ]]></Node>\n\
         </Node>\n<!-- trailing -->\n",
    )
    .unwrap();
    let r = &s.root;
    assert_eq!(r.attr("dt"), Some("0.1"));
    assert_eq!(r.attr("type"), None);
    assert_eq!(labels(r), ["MechanicalObject:mo", "UniformMass:mass", "VisualStyle", "Node:n"]);
    let mo = &r.children[0];
    assert_eq!(mo.attr("type"), None);
    assert_eq!(mo.attr("name"), None);
    assert_eq!((mo.pos.line, mo.pos.column), (5, 1));
    assert_eq!(mo.pos.file.as_path(), Path::new("/virtual/dir/test.scn"));
    assert_eq!(mo.dir.as_path(), Path::new("/virtual/dir"));
    let mass = &r.children[1];
    assert_eq!(mass.attr("vertexMass"), Some("3"));
    assert_eq!(mass.attr("totalMass"), Some("6"));
    assert!(r.children[3].children.is_empty());
    // dropped: <X type=..>, <Attribute> on a Node, stray <Data>, Node in object, object in object
    let sev: Vec<Severity> = s.diagnostics.iter().map(|d| d.severity).collect();
    assert_eq!(sev, [Severity::Warning, Severity::Warning, Severity::Warning, Severity::Warning, Severity::Error], "{:#?}", s.diagnostics);
    assert!(s.diagnostics[0].message.contains("type=\"Foo\""));
    assert_eq!(s.diagnostics[0].pos.as_ref().map(|p| p.line), Some(6));
}

#[test]
fn fatal_errors() {
    let e = parse_text("<Node>\n  <A>\n  </B>\n</Node>").unwrap_err();
    assert!(matches!(e, SceneError::Xml { .. }));
    let msg = e.to_string();
    assert!(msg.starts_with("/virtual/dir/test.scn:3:3: malformed XML:"), "{msg}");
    assert!(msg.contains("expected `</A>`"), "{msg}");

    let e = parse_text("<MechanicalObject/>").unwrap_err();
    assert!(matches!(e, SceneError::RootNotNode { .. }), "{e}");
    assert!(e.to_string().contains("MechanicalObject"));
    let e = parse_text("<Foo type=\"x\"/>").unwrap_err();
    assert!(matches!(e, SceneError::RootNotNode { .. }), "{e}");
    let e = parse_text("<Attribute type=\"x\"/>").unwrap_err();
    assert!(matches!(e, SceneError::RootNotNode { .. }), "{e}");
    let e = parse_text("").unwrap_err();
    assert!(matches!(e, SceneError::EmptyDocument { .. }), "{e}");
    let e = parse_text("<Node>").unwrap_err();
    assert!(e.to_string().contains("</Node>"), "{e}");
    let e = parse_scene_file(Path::new("/nonexistent/settee/x.scn"), &DataPath::default(), &all).unwrap_err();
    assert!(matches!(e, SceneError::Io { .. }), "{e}");
    assert!(e.to_string().contains("/nonexistent/settee/x.scn"));
}

#[test]
fn unicode_bom_crlf_and_entities() {
    let s = parse_text("\u{feff}<Node name=\"r&amp;d\">\r\n\t<É a=\"x\r\ny&#x09;z&lt;&unknown;\"/>\r\n</Node>").unwrap();
    assert_eq!(s.root.name.as_deref(), Some("r&d"));
    let e = &s.root.children[0];
    assert_eq!(e.class(), Some("É"));
    assert_eq!(e.attr("a"), Some("x\ny\tz<&unknown;"));
    assert_eq!((e.pos.line, e.pos.column), (2, 2));
    assert_eq!((e.attributes[0].pos.line, e.attributes[0].pos.column), (2, 5));
}
