//! The component reference in `docs/components.md` is generated (`settee doc --markdown`); this
//! test fails when a component or a Data declaration changed and the file was not regenerated.

#[test]
fn component_reference_is_current() {
    let generated = settee::doc::document(&settee::factory(), None, true).expect("the reference of every component");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/components.md");
    let committed = std::fs::read_to_string(path).expect("docs/components.md");
    assert!(
        committed.trim_end() == generated.trim_end(),
        "docs/components.md is stale: regenerate it with `settee doc --markdown > docs/components.md`"
    );
}
