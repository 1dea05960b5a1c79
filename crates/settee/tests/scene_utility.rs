//! SOFA's scene-utility components on SOFA's own example scenes: `AddDataRepository` (and its
//! old name `AddResourceRepository`) adds a directory, relative to the scene's, where the files
//! named after it are found.
#![allow(clippy::disallowed_methods)] // the test reads the loaders' output Data by name

use std::path::PathBuf;

use settee_core::Scene;

fn example(rel: &str) -> Option<PathBuf> {
    Some(settee_testkit::shared_dir("sofa-examples")?.join("examples").join(rel))
}

fn component<'a>(scene: &'a Scene, name: &str) -> &'a settee_core::scene::ComponentEntry {
    let (_, e) = scene.components.iter().find(|(_, e)| e.name == name).unwrap_or_else(|| panic!("no component '{name}'"));
    e
}

#[test]
fn a_data_repository_serves_the_loaders_after_it() {
    let Some(path) = example("Component/SceneUtility/AddResourceRepository.scn") else { return };
    // No data directory at all: the second loader names its file relative to the added `./mesh`.
    let loaded = settee::run::load(&path, &settee::factory(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    let scene = &loaded.scene;
    let first = component(scene, "meshLoader_0").data.reals("position").to_vec();
    let second = component(scene, "meshLoader_1").data.reals("position").to_vec();
    assert!(!first.is_empty() && first.len() == second.len(), "{} and {} coordinates", first.len(), second.len());
    // The same cube, translated by (5, 0, 0).
    for (a, b) in first.chunks(3).zip(second.chunks(3)) {
        assert_eq!([a[0] + 5.0, a[1], a[2]], [b[0], b[1], b[2]]);
    }
    let (_, repo) = scene.components.iter().find(|(_, e)| e.class.name == "AddDataRepository").expect("the AddDataRepository");
    let added = repo.data.str("path").to_string();
    assert!(added.ends_with("SceneUtility/mesh") && PathBuf::from(&added).is_absolute(), "{added}");
}

#[test]
fn the_old_name_works_and_a_missing_directory_is_a_warning() {
    let dir = std::env::temp_dir().join(format!("settee-scene-utility-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("meshes")).unwrap();
    std::fs::write(dir.join("meshes/tri.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    let scene = dir.join("scene.scn");
    std::fs::write(
        &scene,
        r#"<Node name="root">
    <AddDataRepository path="missing"/>
    <AddResourceRepository path="meshes"/>
    <MeshOBJLoader name="tri" filename="tri.obj"/>
</Node>
"#,
    )
    .unwrap();
    let loaded = settee::run::load(&scene, &settee::factory(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(component(&loaded.scene, "tri").data.reals("position"), &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let warnings: Vec<String> = loaded.scene.messages.iter().map(|m| m.to_string()).filter(|m| m.contains("does not exist")).collect();
    assert_eq!(warnings.len(), 1, "{:?}", loaded.scene.messages);
    assert!(warnings[0].contains("scene.scn:2:"), "the warning is positioned: {}", warnings[0]);
    let _ = std::fs::remove_dir_all(&dir);
}
