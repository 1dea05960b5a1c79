//! Class-name and template-name tables (spec §2.2–§2.4), transcribed from
//! SOFA `Sofa/framework/Helper/src/sofa/helper/ComponentChange.cpp` and
//! `Sofa/framework/DefaultType/src/sofa/defaulttype/TemplatesAliases.cpp`.

/// Renamed classes (§2.2): old name -> new name. Applied silently by the
/// factory *after* the prefab lookup.
const RENAMED: &[(&str, &str)] = &[
    ("AffineMovementConstraint", "AffineMovementProjectiveConstraint"),
    ("AttachConstraint", "AttachProjectiveConstraint"),
    ("FixedConstraint", "FixedProjectiveConstraint"),
    ("FixedPlaneConstraint", "FixedPlaneProjectiveConstraint"),
    ("FixedRotationConstraint", "FixedRotationProjectiveConstraint"),
    ("FixedTranslationConstraint", "FixedTranslationProjectiveConstraint"),
    ("HermiteSplineConstraint", "HermiteSplineProjectiveConstraint"),
    ("LinearMovementConstraint", "LinearMovementProjectiveConstraint"),
    ("LinearVelocityConstraint", "LinearVelocityProjectiveConstraint"),
    ("OscillatorConstraint", "OscillatorProjectiveConstraint"),
    ("ParabolicConstraint", "ParabolicProjectiveConstraint"),
    ("PartialFixedConstraint", "PartialFixedProjectiveConstraint"),
    ("PartialLinearMovementConstraint", "PartialLinearMovementProjectiveConstraint"),
    ("PatchTestMovementConstraint", "PatchTestMovementProjectiveConstraint"),
    ("PositionBasedDynamicsConstraint", "PositionBasedDynamicsProjectiveConstraint"),
    ("SkeletalMotionConstraint", "SkeletalMotionProjectiveConstraint"),
    ("ProjectToLineConstraint", "LineProjectiveConstraint"),
    ("ProjectToPlaneConstraint", "PlaneProjectiveConstraint"),
    ("ProjectToPointConstraint", "PointProjectiveConstraint"),
    ("ProjectDirectionConstraint", "DirectionProjectiveConstraint"),
    ("BilateralInteractionConstraint", "BilateralLagrangianConstraint"),
    ("SlidingConstraint", "SlidingLagrangianConstraint"),
    ("StopperConstraint", "StopperLagrangianConstraint"),
    ("UniformConstraint", "UniformLagrangianConstraint"),
    ("UnilateralInteractionConstraint", "UnilateralLagrangianConstraint"),
    ("StiffSpringForceField", "SpringForceField"),
    ("ParallelStiffSpringForceField", "ParallelSpringForceField"),
    ("ShewchukPCGLinearSolver", "PCGLinearSolver"),
    ("OglCylinderModel", "CylinderVisualModel"),
    ("TriangleOctreeModel", "TriangleOctreeCollisionModel"),
    ("VolumeFromTetrahedrons", "VolumeFromVolumetricElements"),
];

/// New class name for a renamed (old) class name (§2.2).
pub fn renamed_class(name: &str) -> Option<&'static str> {
    RENAMED.iter().find(|(old, _)| *old == name).map(|(_, new)| *new)
}

/// Dealiased names (§2.3, removed aliases, v24.12): alias -> real class.
const DEALIASED: &[(&str, &str)] = &[
    ("MasterConstraintSolver", "ConstraintAnimationLoop"),
    ("FreeMotionMasterSolver", "FreeMotionAnimationLoop"),
    ("MultiStepMasterSolver", "MultiStepAnimationLoop"),
    ("MultiTagMasterSolver", "MultiTagAnimationLoop"),
    ("Background", "BackgroundSetting"),
    ("SofaDefaultPath", "SofaDefaultPathSetting"),
    ("Stats", "StatsSetting"),
    ("Viewer", "ViewerSetting"),
    ("MeshObjLoader", "MeshOBJLoader"),
    ("ObjExporter", "VisualModelOBJExporter"),
    ("OBJExporter", "VisualModelOBJExporter"),
    ("CentralDifference", "CentralDifferenceSolver"),
    ("DampVelocity", "DampVelocitySolver"),
    ("RungeKutta2", "RungeKutta2Solver"),
    ("RungeKutta4", "RungeKutta4Solver"),
    ("EulerImplicit", "EulerImplicitSolver"),
    ("ImplicitEulerSolver", "EulerImplicitSolver"),
    ("ImplicitEuler", "EulerImplicitSolver"),
    ("VariationalSolver", "VariationalSymplecticSolver"),
    ("Mesh", "MeshTopology"),
    ("SphereQuad", "SphereQuadTopology"),
    ("CylinderGrid", "CylinderGridTopology"),
    ("Grid", "GridTopology"),
    ("RegularGrid", "RegularGridTopology"),
    ("SparseGridMultiple", "SparseGridMultipleTopology"),
    ("SparseGridRamification", "SparseGridRamificationTopology"),
    ("SparseGrid", "SparseGridTopology"),
    ("SphereGrid", "SphereGridTopology"),
    ("SVDLinear", "SVDLinearSolver"),
    ("SVD", "SVDLinearSolver"),
    ("CGSolver", "CGLinearSolver"),
    ("ConjugateGradient", "CGLinearSolver"),
    ("MINRESSolver", "MinResLinearSolver"),
    ("MinResSolver", "MinResLinearSolver"),
    ("JacobiLinearSolver", "JacobiPreconditioner"),
    ("JacobiSolver", "JacobiPreconditioner"),
    ("SSORLinearSolver", "SSORPreconditioner"),
    ("SSORSolver", "SSORPreconditioner"),
    ("RigidEngine", "RigidToQuatEngine"),
    ("DefaultPipeline", "CollisionPipeline"),
    ("IncrementalSAP", "IncrSAP"),
    ("IncrementalSweepAndPrune", "IncrSAP"),
    ("TriangleOctree", "TriangleOctreeModel"),
    ("DefaultContactManager", "CollisionResponse"),
    ("RuleBasedCollisionResponse", "RuleBasedContactManager"),
    ("SurfaceIdentityMapping", "SubsetMapping"),
    // GUI button settings (the "original" names are as in SOFA's table).
    ("AddFrameButtonSetting", "AddFrameButton"),
    ("StartNavigationButtonSetting", "AddRecordedCameraButton"),
    ("AddRecordedCameraButtonSetting", "StartNavigationButton"),
    ("AttachBodyButtonSetting", "AttachBodyButton"),
    ("FixPickedParticleButtonSetting", "FixPickedParticleButton"),
    ("OglColorMap", "ColorMap"),
    ("PointSplatModel", "PointSplat"),
];

/// The real class a removed alias (§2.3 "dealiased") referred to.
pub fn dealiased_class(name: &str) -> Option<&'static str> {
    DEALIASED.iter().find(|(old, _)| *old == name).map(|(_, new)| *new)
}

/// Uncreatable names (§2.3): name -> (removal version, replacement advice).
const UNCREATABLE: &[(&str, &str, &str)] = &[
    ("MakeAliasComponent", "v25.06", "remove it (class aliases are no longer supported)"),
    ("MakeDataAliasComponent", "v25.06", "remove it (data aliases are no longer supported)"),
    ("OglGrid", "v23.06", "use VisualGrid"),
    ("OglLineAxis", "v23.06", "use LineAxis"),
    ("PointConstraint", "v22.06", "use FixedProjectiveConstraint"),
    ("LMDNewProximityIntersection", "v21.12", "use another intersection method (e.g. LocalMinDistance or NewProximityIntersection)"),
    ("LocalMinDistanceFilter", "v21.12", "remove it"),
    ("LineLocalMinDistanceFilter", "v21.12", "remove it"),
    ("PointLocalMinDistanceFilter", "v21.12", "remove it"),
    ("TriangleLocalMinDistanceFilter", "v21.12", "remove it"),
    ("DynamicSparseGridTopologyAlgorithms", "v20.12", "remove it (its role is covered by the topology modifier)"),
    ("HexahedronSetTopologyAlgorithms", "v20.12", "remove it (its role is covered by HexahedronSetTopologyModifier)"),
    ("TetrahedronSetTopologyAlgorithms", "v20.12", "remove it (its role is covered by TetrahedronSetTopologyModifier)"),
    ("QuadSetTopologyAlgorithms", "v20.12", "remove it (its role is covered by QuadSetTopologyModifier)"),
    ("TriangleSetTopologyAlgorithms", "v20.12", "remove it (its role is covered by TriangleSetTopologyModifier)"),
    ("EdgeSetTopologyAlgorithms", "v20.12", "remove it (its role is covered by EdgeSetTopologyModifier)"),
    ("PointSetTopologyAlgorithms", "v20.12", "remove it (its role is covered by PointSetTopologyModifier)"),
    ("Euler", "v20.06", "use EulerExplicitSolver"),
    ("EulerExplicit", "v20.06", "use EulerExplicitSolver"),
    ("ExplicitEuler", "v20.06", "use EulerExplicitSolver"),
    ("EulerSolver", "v20.06", "use EulerExplicitSolver"),
    ("ExplicitEulerSolver", "v20.06", "use EulerExplicitSolver"),
    ("Capsule", "v20.06", "use CapsuleCollisionModel"),
    ("CapsuleModel", "v20.06", "use CapsuleCollisionModel"),
    ("TCapsuleModel", "v20.06", "use CapsuleCollisionModel"),
    ("Cube", "v20.06", "use CubeCollisionModel"),
    ("CubeModel", "v20.06", "use CubeCollisionModel"),
    ("CudaPoint", "v20.06", "use PointCollisionModel"),
    ("CudaPointModel", "v20.06", "use PointCollisionModel"),
    ("Cylinder", "v20.06", "use CylinderCollisionModel"),
    ("CylinderModel", "v20.06", "use CylinderCollisionModel"),
    ("Line", "v20.06", "use LineCollisionModel"),
    ("TLineModel", "v20.06", "use LineCollisionModel"),
    ("LineMeshModel", "v20.06", "use LineCollisionModel"),
    ("LineSetModel", "v20.06", "use LineCollisionModel"),
    ("LineMesh", "v20.06", "use LineCollisionModel"),
    ("LineSet", "v20.06", "use LineCollisionModel"),
    ("LineModel", "v20.06", "use LineCollisionModel"),
    ("OBB", "v20.06", "use OBBCollisionModel"),
    ("OBBModel", "v20.06", "use OBBCollisionModel"),
    ("TOBBModel", "v20.06", "use OBBCollisionModel"),
    ("Point", "v20.06", "use PointCollisionModel"),
    ("TPointModel", "v20.06", "use PointCollisionModel"),
    ("PointModel", "v20.06", "use PointCollisionModel"),
    ("PointMesh", "v20.06", "use PointCollisionModel"),
    ("PointSet", "v20.06", "use PointCollisionModel"),
    ("Ray", "v20.06", "use RayCollisionModel"),
    ("RayModel", "v20.06", "use RayCollisionModel"),
    ("RigidCapsule", "v20.06", "use CapsuleCollisionModel with template=\"Rigid3\""),
    ("RigidCapsuleModel", "v20.06", "use CapsuleCollisionModel with template=\"Rigid3\""),
    ("RigidCapsuleCollisionModel", "v20.06", "use CapsuleCollisionModel with template=\"Rigid3\""),
    ("Sphere", "v20.06", "use SphereCollisionModel"),
    ("SphereModel", "v20.06", "use SphereCollisionModel"),
    ("TSphereModel", "v20.06", "use SphereCollisionModel"),
    ("Tetrahedron", "v20.06", "use TetrahedronCollisionModel"),
    ("TetrahedronModel", "v20.06", "use TetrahedronCollisionModel"),
    ("Triangle", "v20.06", "use TriangleCollisionModel"),
    ("TriangleSet", "v20.06", "use TriangleCollisionModel"),
    ("TriangleMesh", "v20.06", "use TriangleCollisionModel"),
    ("TriangleSetModel", "v20.06", "use TriangleCollisionModel"),
    ("TriangleMeshModel", "v20.06", "use TriangleCollisionModel"),
    ("TriangleModel", "v20.06", "use TriangleCollisionModel"),
    ("TTriangleModel", "v20.06", "use TriangleCollisionModel"),
];

/// Components of SOFA plugins outside its core modules that suite scenes use, with where they
/// come from: recognised so that such a scene is reported as unsupported for that reason.
const EXTERNAL_CLASSES: &[(&str, &str)] = &[
    ("AdaptiveBeamForceFieldAndMass", "the external BeamAdapter plugin"),
    ("BeamInterpolation", "the external BeamAdapter plugin"),
    ("WireBeamInterpolation", "the external BeamAdapter plugin"),
    ("WireRestShape", "the external BeamAdapter plugin"),
    ("AdaptiveBeamMapping", "the external BeamAdapter plugin"),
    ("InterventionalRadiologyController", "the external BeamAdapter plugin"),
    // The Flexible plugin (moved out of SOFA with Compliant in 2021): the Compliant examples that
    // build their FEM with it (CantileverBeam, FEM-donuts, validations/, pseudoStaticSolver).
    ("BarycentricShapeFunction", "the external Flexible plugin"),
    ("ShepardShapeFunction", "the external Flexible plugin"),
    ("VoronoiShapeFunction", "the external Flexible plugin"),
    ("TopologyGaussPointSampler", "the external Flexible plugin"),
    ("ImageGaussPointSampler", "the external Flexible plugin"),
    ("LinearMapping", "the external Flexible plugin"),
    ("CorotationalStrainMapping", "the external Flexible plugin"),
    ("GreenStrainMapping", "the external Flexible plugin"),
    ("PrincipalStretchesMapping", "the external Flexible plugin"),
    ("HookeForceField", "the external Flexible plugin"),
    ("FlexibleCorotationalFEMForceField", "the external Flexible plugin"),
    ("MassFromDensity", "the external Flexible plugin"),
    ("ImageDensityMass", "the external Flexible plugin"),
    // Parts of the Compliant plugin Settee does not implement (compliant spec §8.6, §11).
    ("CompliantPseudoStaticSolver", "the Compliant plugin's pseudo-static solvers (not implemented by Settee)"),
    ("ConstantCompliantPseudoStaticSolver", "the Compliant plugin's pseudo-static solvers (not implemented by Settee)"),
    ("CompliantStaticSolver", "the Compliant plugin's static solver (not implemented by Settee)"),
    ("ConstantCompliantImplicitSolver", "the Compliant plugin's constant-system solver (not implemented by Settee)"),
    ("ModulusSolver", "the Compliant plugin's modulus-based KKT solver (not implemented by Settee)"),
    ("CompliantPostStabilizationAnimationLoop", "the Compliant plugin's contact post-stabilization loop (not implemented by Settee)"),
    ("CompliantSleepController", "the Compliant plugin's sleep controller (not implemented by Settee)"),
    ("ComplianceSolver", "the Compliant plugin's 2012 solver, removed from the plugin in 2013"),
];

/// Where a component Settee does not include comes from (an external plugin or library), for
/// the names of [`EXTERNAL_CLASSES`].
pub fn external_class_origin(name: &str) -> Option<&'static str> {
    EXTERNAL_CLASSES.iter().find(|(n, _)| *n == name).map(|(_, origin)| *origin)
}

/// SOFA's classes and aliases with their modules (`Class\tModule` lines, `#` comments).
const SOFA_CLASSES: &str = include_str!("sofa_classes.tsv");

/// The SOFA module (`Sofa.Component.MechanicalLoad`) or plugin that registers class `name` in
/// SOFA, for a class Settee does not have: so that such a class is reported as not implemented
/// yet rather than as a typo.
pub fn sofa_class_module(name: &str) -> Option<&'static str> {
    SOFA_CLASSES.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let (class, module) = l.split_once('\t')?;
        (class == name).then_some(module.trim())
    })
}

const GENERIC_CONSTRAINT_SOLVER_MESSAGE: &str = concat!(
    "GenericConstraintSolver has been replaced since v25.12 by a set of new components, whose names relate to the method used:\n",
    "    - BlockGaussSeidelConstraintSolver (if you were using this component without setting 'resolutionMethod' or by setting it to 'ProjectedGaussSeidel')\n",
    "    - UnbuiltGaussSeidelConstraintSolver (if you were using this component while setting 'resolutionMethod=\"UnbuiltGaussSeidel\"')\n",
    "    - NNCGConstraintSolver (if you were using this component while setting 'resolutionMethod=\"NonsmoothNonlinearConjugateGradient\"')\n",
    "      --> For NNCGConstraintSolver, data 'newtonIterations' has been replaced by 'maxIterations'",
);

/// For a class name that SOFA refuses to create although it used to exist
/// (§2.3: dealiased and uncreatable tables), the message explaining why and
/// naming the replacement. `None` for any other name (including renamed
/// names, which are still accepted, see [`renamed_class`]).
pub fn removed_class_message(name: &str) -> Option<String> {
    if let Some(real) = dealiased_class(name) {
        return Some(format!("The alias '{name}' for the component {real} was removed in SOFA v24.12; use {real} instead."));
    }
    if name == "GenericConstraintSolver" {
        return Some(GENERIC_CONSTRAINT_SOLVER_MESSAGE.to_string());
    }
    UNCREATABLE
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, version, advice)| format!("The component '{name}' has been REMOVED since SOFA {version}: {advice}."))
}

/// Template aliases (§2.4): written token -> (resolved, emits a deprecation
/// message). Only the `SReal = double` build is modelled, so `Vec3d` etc.
/// have no entry (they resolve to themselves silently).
const TEMPLATE_ALIASES: &[(&str, &str, bool)] = &[
    ("SReal", "d", false),
    ("Vec1", "Vec1d", false),
    ("Vec2", "Vec2d", false),
    ("Vec3", "Vec3d", false),
    ("Vec6", "Vec6d", false),
    ("Rigid2", "Rigid2d", false),
    ("Rigid3", "Rigid3d", false),
    ("CompressedRowSparseMatrix", "CompressedRowSparseMatrixd", false),
    ("CompressedRowSparseMatrixMat3x3", "CompressedRowSparseMatrixMat3x3d", false),
    ("Mat2x2", "Mat2x2d", false),
    ("Mat3x3", "Mat3x3d", false),
    ("Mat4x4", "Mat4x4d", false),
    ("Mat6x6", "Mat6x6d", false),
    ("Rigid", "Rigid3d", true),
    ("Rigid2f", "Rigid2d", true),
    ("Rigid3f", "Rigid3d", true),
    ("Vec1f", "Vec1d", true),
    ("Vec2f", "Vec2d", true),
    ("Vec3f", "Vec3d", true),
    ("Vec6f", "Vec6d", true),
    // Legacy DataExchange / PR#3465 names. The resolved names follow SOFA's
    // DataTypeInfo naming (double = "d", int = "i", unsigned int = "I").
    ("float", "f", true),
    ("double", "d", true),
    ("int", "i", true),
    ("vector<int>", "vector<i>", true),
    ("vector<unsigned_int>", "vector<I>", true),
    ("vector<float>", "vector<f>", true),
    ("vector<double>", "vector<d>", true),
    ("Data<int>", "vector<i>", true),
    ("Data<double>", "vector<d>", true),
    ("Data<bool>", "vector<bool>", true),
    ("Data<Vec<2u,unsigned int>>", "vector<Vec2I>", true),
    ("Data<Vec<2u,double>>", "vector<Vec2d>", true),
    ("Data<Vec<3u,double>>", "vector<Vec3d>", true),
    ("Data<Vec<4u,double>>", "vector<Vec4d>", true),
    ("Data<RigidCoord<2u,double>>", "vector<RigidCoord2d>", true),
    ("Data<RigidDeriv<2u,double>>", "vector<RigidDeriv2d>", true),
    ("Data<RigidCoord<3u,double>>", "vector<RigidCoord3d>", true),
    ("Data<RigidDeriv<3u,double>>", "vector<RigidDeriv3d>", true),
];

/// Resolve one template token (§2.4). Returns the resolved name (the token
/// itself when it has no alias) and, for deprecated aliases, SOFA's
/// deprecation message.
pub fn template_alias(token: &str) -> (&str, Option<String>) {
    match TEMPLATE_ALIASES.iter().find(|(from, _, _)| *from == token) {
        Some((_, to, warn)) => {
            let msg = warn.then(|| format!("The deprecated template '{token}' has been replaced by {to}."));
            (to, msg)
        }
        None => (token, None),
    }
}

/// Resolve a full `template` attribute value: split on `,`, resolve each
/// token (no trimming, as SOFA), join with `,`. Returns the resolved string
/// and the deprecation messages.
pub fn resolve_template(template: &str) -> (String, Vec<String>) {
    let mut msgs = Vec::new();
    let parts: Vec<&str> = template
        .split(',')
        .map(|t| {
            let (r, m) = template_alias(t);
            msgs.extend(m);
            r
        })
        .collect();
    (parts.join(","), msgs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames() {
        assert_eq!(renamed_class("FixedConstraint"), Some("FixedProjectiveConstraint"));
        assert_eq!(renamed_class("ProjectToPlaneConstraint"), Some("PlaneProjectiveConstraint"));
        assert_eq!(renamed_class("VolumeFromTetrahedrons"), Some("VolumeFromVolumetricElements"));
        assert_eq!(renamed_class("FixedProjectiveConstraint"), None);
        assert_eq!(RENAMED.len(), 31);
    }

    /// SOFA's classes are known by module, misspellings and Settee-only names are not.
    #[test]
    fn sofa_classes_know_their_module() {
        assert_eq!(sofa_class_module("Spiral"), Some("Sofa.Component.Engine.Generate"));
        assert_eq!(sofa_class_module("TetrahedronFEMForceField"), Some("Sofa.Component.SolidMechanics.FEM.Elastic"));
        assert_eq!(sofa_class_module("MechanicalObjet"), None);
        assert_eq!(sofa_class_module(""), None);
        let lines = SOFA_CLASSES.lines().filter(|l| !l.starts_with('#'));
        assert!(lines.clone().all(|l| l.split('\t').count() == 2 && !l.contains(' ')), "malformed line in sofa_classes.tsv");
        assert!(lines.count() > 500);
    }

    #[test]
    fn removed() {
        let m = removed_class_message("DefaultPipeline").unwrap();
        assert!(m.contains("CollisionPipeline"), "{m}");
        let m = removed_class_message("GenericConstraintSolver").unwrap();
        assert!(m.contains("BlockGaussSeidelConstraintSolver"));
        assert!(m.contains("NNCGConstraintSolver"));
        let m = removed_class_message("TriangleModel").unwrap();
        assert!(m.contains("TriangleCollisionModel"), "{m}");
        assert!(removed_class_message("MechanicalObject").is_none());
        assert!(removed_class_message("FixedConstraint").is_none());
    }

    #[test]
    fn components_of_external_plugins_are_named_with_their_origin() {
        assert!(external_class_origin("BeamInterpolation").is_some_and(|o| o.contains("BeamAdapter")));
        assert_eq!(external_class_origin("MechanicalObject"), None);
    }

    #[test]
    fn templates() {
        assert_eq!(template_alias("Vec3"), ("Vec3d", None));
        assert_eq!(template_alias("Vec3d"), ("Vec3d", None));
        assert_eq!(template_alias("Hexahedron"), ("Hexahedron", None));
        let (r, m) = template_alias("Rigid");
        assert_eq!(r, "Rigid3d");
        assert_eq!(m.unwrap(), "The deprecated template 'Rigid' has been replaced by Rigid3d.");
        assert_eq!(template_alias("Vec3f").0, "Vec3d");
        assert!(template_alias("Vec3f").1.is_some());
        assert_eq!(resolve_template("Vec3,Vec1").0, "Vec3d,Vec1d");
        assert_eq!(resolve_template("Vec3,Hexahedron").0, "Vec3d,Hexahedron");
        assert_eq!(resolve_template("Vec3,Rigid3").0, "Vec3d,Rigid3d");
        assert_eq!(resolve_template("CompressedRowSparseMatrixMat3x3").0, "CompressedRowSparseMatrixMat3x3d");
        assert_eq!(resolve_template("Rigid,Vec3f").1.len(), 2);
        assert_eq!(resolve_template("").0, "");
    }
}
