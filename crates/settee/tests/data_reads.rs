//! Components read their Data through typed references (`settee_core::data_refs!`), listed in
//! their class's `reads`; the factory checks the list against the class's declaration when the
//! class is registered. These tests build the full factory (so a misspelt or mistyped reference
//! in any component fails here, not in a run) and check that the factory refuses a bad class.

use std::panic::{catch_unwind, AssertUnwindSafe};

use settee_core::data::{decl, DataKind};
use settee_core::factory::check_reads;
use settee_core::{component_any, Component, ComponentClass, CreateArgs, DataDecl, Factory, Roles, TemplateRule};

#[test]
fn every_registered_class_reads_only_declared_data_of_its_kind() {
    let f = settee::factory();
    let mut classes = 0;
    for class in f.classes() {
        check_reads(class).unwrap_or_else(|e| panic!("{e}"));
        classes += 1;
    }
    assert!(classes > 100, "only {classes} classes registered");

    // The lists are wired: a few classes name what they read, with the type they read it as.
    let listed = |class: &str, field: &str| -> Option<&'static str> {
        let c = f.class(class).unwrap_or_else(|| panic!("{class} is not registered"));
        c.reads.iter().find(|r| r.name == field).map(|r| r.type_name)
    };
    assert_eq!(listed("MechanicalObject", "position"), Some("real list"));
    assert_eq!(listed("MechanicalObject", "translation"), Some("3-vector"));
    assert_eq!(listed("BoxROI", "strict"), Some("boolean"));
    assert_eq!(listed("BoxROI", "stifness"), None);
}

struct Nothing;

impl Component for Nothing {
    component_any!();
}

fn create(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(Nothing)
}

static DATA: &[DataDecl] = &[decl("stiffness", DataKind::Real, "10", "a real"), decl("indices", DataKind::Indices, "0", "an index list")];
static TABLES: &[&[DataDecl]] = &[DATA];

mod good {
    settee_core::data_refs! {
        pub static READS;
        STIFFNESS: Real = "stiffness";
        INDICES: Indices = "indices";
        // Common Data every class has.
        NAME: Text = "name";
    }
}

mod misspelt {
    settee_core::data_refs! {
        pub static READS;
        STIFFNESS: Real = "stifness";
    }
}

mod mistyped {
    settee_core::data_refs! {
        pub static READS;
        INDICES: Real = "indices";
    }
}

const fn class(name: &'static str, reads: &'static [settee_core::DataUse]) -> ComponentClass {
    ComponentClass {
        name,
        description: "test class",
        roles: Roles::NONE,
        templates: &[],
        default_template: "",
        template_rule: TemplateRule::Default,
        data: TABLES,
        links: &[],
        create,
        preparse: None,
        no_src_link: &[],
        reads,
    }
}

static GOOD: ComponentClass = class("GoodReads", good::READS);
static MISSPELT: ComponentClass = class("MisspeltReads", misspelt::READS);
static MISTYPED: ComponentClass = class("MistypedReads", mistyped::READS);

/// Registers `class` in a fresh factory; the panic message when it is refused.
fn register(class: &'static ComponentClass) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| Factory::new().register(class)))
        .map_err(|p| p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default())
}

#[test]
fn the_factory_refuses_a_class_reading_undeclared_or_mistyped_data() {
    assert_eq!(register(&GOOD), Ok(()));
    assert_eq!(register(&MISSPELT), Err("component class MisspeltReads reads Data 'stifness', which it does not declare".to_string()));
    assert_eq!(
        register(&MISTYPED),
        Err("component class MistypedReads reads Data 'indices' as a real, but it is declared as a index list".to_string())
    );
}
