//! SOFA's non-linear mapping regression scenes (`examples/Component/Mapping/NonLinear`, 100
//! steps, threshold 1e-8) compared with SOFA's reference trajectories.

mod support;

fn check(scene: &str) {
    let Some((err, max)) = support::regression_error(scene, 100) else {
        return;
    };
    eprintln!("{scene}: errorByDof {err:.3e}, max |Δ| {max:.3e}");
    assert!(err <= 1e-8, "{scene}: errorByDof {err:e} > 1e-8 (max |Δ| {max:e})");
}

#[test]
fn distance_mapping_scene() {
    check("Component/Mapping/NonLinear/DistanceMapping.scn");
}

#[test]
fn distance_multi_mapping_scene() {
    check("Component/Mapping/NonLinear/DistanceMultiMapping.scn");
}

#[test]
fn square_distance_mapping_scene() {
    check("Component/Mapping/NonLinear/SquareDistanceMapping.scn");
}
