//! Components that only matter to SOFA's renderer or GUI (visual models, cameras, grids, GUI
//! button settings, …) and `RequiredPlugin`. Settee recognises them so SOFA scenes load
//! unmodified; they take no part in the simulation. Their attributes are accepted without
//! checking, since none of them can change a simulated number.
//!
//! The visual models `OglModel` and `VisualModelImpl` ([`model`]) hold a mesh the viewer draws,
//! moved by the mappings that output into them in the visual update only.

pub mod model;

use settee_core::role::{Plugin, Visual, VisualLoop, VisualModel};
use settee_core::{component, Component, InitCtx, SimResult};

/// Visual components accept any attribute: only their name is kept.
fn keep_name_only(attrs: &mut Vec<(String, String)>) {
    attrs.retain(|(n, _)| n == "name");
}

/// A component without effect on the simulation.
#[component(
    markers = [Visual],
    preparse = keep_name_only,
    class(name = "VisualGrid", module = "Sofa.Component.Visual", description = "A grid drawn in the viewer (rendering only)."),
    class(name = "LineAxis", module = "Sofa.Component.Visual", description = "Axes drawn in the viewer (rendering only)."),
    class(name = "OglSceneFrame", module = "Sofa.GL.Component.Rendering3D", description = "Frame drawn in a corner of the viewer (rendering only)."),
    class(name = "OglLabel", module = "Sofa.GL.Component.Rendering2D", description = "Text drawn in the viewer (rendering only)."),
    class(name = "OglGrid", module = "Sofa.Component.Visual", description = "Grid drawn in the viewer (rendering only)."),
    class(name = "ColorMap", module = "Sofa.GL.Component.Rendering2D", description = "Color map for rendering (rendering only)."),
    class(name = "InteractiveCamera", module = "Sofa.Component.Visual", description = "Camera of the GUI (rendering only)."),
    class(name = "Camera", module = "Sofa.Component.Visual", description = "Camera of the GUI (rendering only)."),
    class(name = "BackgroundSetting", module = "Sofa.Component.Setting", description = "Background colour or image of the viewer (GUI only)."),
    class(name = "DefaultVisualManagerLoop", module = "Sofa.Simulation.Core", description = "Visual loop of the GUI (rendering only).", markers = [VisualLoop]),
    class(name = "ConstraintAttachButtonSetting", module = "Sofa.GUI.Component", description = "Mouse interaction setting of the GUI (GUI only)."),
    class(name = "CompliantAttachButtonSetting", module = "Compliant", description = "Mouse interaction setting of the Compliant plugin's GUI (GUI only; alias CompliantAttachButton)."),
    class(name = "AttachBodyButtonSetting", module = "Sofa.GUI.Component", description = "Mouse interaction setting of the GUI (GUI only)."),
    class(name = "FixPickedParticleButtonSetting", module = "Sofa.GUI.Component", description = "Mouse interaction setting of the GUI (GUI only)."),
    class(name = "MouseButtonSetting", module = "Sofa.Component.Setting", description = "Mouse interaction setting of the GUI (GUI only)."),
    class(name = "ViewerSetting", module = "Sofa.Component.Setting", description = "Viewer settings of the GUI (GUI only)."),
    class(name = "StatsSetting", module = "Sofa.Component.Setting", description = "Statistics settings of the GUI (GUI only)."),
    class(name = "SofaDefaultPathSetting", module = "Sofa.Component.Setting", description = "Default paths of the GUI (GUI only)."),
    class(name = "GlobalSystemMatrixImage", module = "SofaMatrix", description = "Displays the global system matrix as an image (GUI only)."),
    class(name = "TrailRenderer", module = "Sofa.Component.Visual", description = "Draws the trail of points (rendering only)."),
    class(name = "LightManager", module = "Sofa.GL.Component.Shader", description = "Lights of the viewer (rendering only)."),
    class(name = "DirectionalLight", module = "Sofa.GL.Component.Shader", description = "A light of the viewer (rendering only)."),
    class(name = "PositionalLight", module = "Sofa.GL.Component.Shader", description = "A light of the viewer (rendering only)."),
    class(name = "SpotLight", module = "Sofa.GL.Component.Shader", description = "A light of the viewer (rendering only)."),
    class(name = "ClipPlane", module = "Sofa.GL.Component.Rendering3D", description = "Clipping plane of the viewer (rendering only)."),
    class(name = "OglShader", module = "Sofa.GL.Component.Shader", description = "Shader of the viewer (rendering only)."),
    class(name = "CylinderVisualModel", module = "Sofa.Component.Visual", description = "Cylinders drawn along edges (rendering only)."),
    class(name = "PointSplat", module = "Sofa.GL.Component.Rendering3D", description = "Point splats (rendering only)."),
    class(name = "VisualModelOBJExporter", module = "Sofa.Component.IO.Mesh", description = "Exports visual models to OBJ files from the GUI (GUI only)."),
    class(name = "RecordedCamera", module = "Sofa.Component.Visual", description = "A camera moving along a predetermined path (rendering only)."),
    class(name = "VisualBoundingBox", module = "Sofa.Component.Visual", description = "Draws an axis-aligned bounding box (rendering only)."),
    class(name = "VisualPointCloud", module = "Sofa.Component.Visual", description = "Draws a point cloud (rendering only)."),
    class(name = "VisualVectorField", module = "Sofa.Component.Visual", description = "Draws a vector field (rendering only)."),
    class(name = "VisualTransform", module = "Sofa.Component.Visual", description = "Moves what is drawn below it (rendering only; no effect on states)."),
    class(name = "AddFrameButtonSetting", module = "Sofa.GUI.Component", description = "Mouse interaction setting of the GUI (GUI only)."),
    class(name = "AddRecordedCameraButtonSetting", module = "Sofa.GUI.Component", description = "Mouse interaction setting of the GUI (GUI only)."),
    class(name = "OglViewport", module = "Sofa.GL.Component.Rendering2D", description = "An additional viewport in the main one (rendering only)."),
    class(name = "OglRenderingSRGB", module = "Sofa.GL.Component.Shader", description = "sRGB framebuffer of the viewer (rendering only)."),
    class(name = "OrderIndependentTransparencyManager", module = "Sofa.GL.Component.Shader", description = "Order-independent transparency of the viewer (rendering only)."),
    class(name = "OglOITShader", module = "Sofa.GL.Component.Shader", description = "Shader of the order-independent transparency (rendering only)."),
    class(name = "OglShadowShader", module = "Sofa.GL.Component.Shader", description = "Shadow shader of the viewer (rendering only)."),
    class(name = "OglTexture", module = "Sofa.GL.Component.Shader", description = "A texture for a shader (rendering only)."),
    class(name = "OglTexturePointer", module = "Sofa.GL.Component.Shader", description = "A texture reference for a shader (rendering only)."),
    class(name = "CompositingVisualLoop", module = "Sofa.GL.Component.Shader", description = "Multipass visual loop of the viewer (rendering only).", markers = [VisualLoop]),
    class(name = "VisualManagerPass", module = "Sofa.GL.Component.Shader", description = "A render pass of the viewer (rendering only)."),
    class(name = "VisualManagerSecondaryPass", module = "Sofa.GL.Component.Shader", description = "A render pass of the viewer (rendering only)."),
    class(name = "PostProcessManager", module = "Sofa.GL.Component.Shader", description = "A post-processing pass of the viewer (rendering only)."),
    class(name = "PointSplatModel", module = "Sofa.GL.Component.Rendering3D", description = "Point splats (rendering only)."),
    class(name = "SlicedVolumetricModel", module = "Sofa.GL.Component.Rendering3D", description = "Slices of a hexahedral model (rendering only)."),
    class(name = "OglShaderVisualModel", module = "Sofa.GL.Component.Shader", description = "OpenGL visual model drawn with a shader (rendering only).", markers = [VisualModel]),
    class(name = "MergeVisualModels", module = "Sofa.GL.Component.Rendering3D", description = "One visual model made of several (`nb`, `input1`…), for drawing (rendering only).", markers = [VisualModel]),
    class(name = "DataDisplay", module = "Sofa.GL.Component.Rendering3D", description = "Draws per-point or per-element values as colours on a mesh (rendering only).", markers = [VisualModel]),
    class(name = "VisualMesh", module = "Sofa.Component.Visual", description = "Draws the elements of a topology at given positions (rendering only)."),
    class(name = "OglColorMap", module = "Sofa.GL.Component.Rendering2D", description = "Colour map of the viewer, with its legend (rendering only)."),
    class(name = "TextureInterpolation", module = "Sofa.GL.Component.Engine", description = "Texture coordinates from per-point values (rendering only)."),
    class(name = "OglShaderDefineMacro", module = "Sofa.GL.Component.Shader", description = "A #define given to a shader (rendering only)."),
    class(name = "OglIntVariable", module = "Sofa.GL.Component.Shader", description = "A uniform variable of a shader (rendering only)."),
    class(name = "OglInt2Variable", module = "Sofa.GL.Component.Shader", description = "A uniform variable of a shader (rendering only)."),
    class(name = "OglInt3Variable", module = "Sofa.GL.Component.Shader", description = "A uniform variable of a shader (rendering only)."),
    class(name = "OglInt4Variable", module = "Sofa.GL.Component.Shader", description = "A uniform variable of a shader (rendering only)."),
    class(name = "OglFloatVariable", module = "Sofa.GL.Component.Shader", description = "A uniform variable of a shader (rendering only)."),
    class(name = "OglFloat2Variable", module = "Sofa.GL.Component.Shader", description = "A uniform variable of a shader (rendering only)."),
    class(name = "OglFloat3Variable", module = "Sofa.GL.Component.Shader", description = "A uniform variable of a shader (rendering only)."),
    class(name = "OglFloat4Variable", module = "Sofa.GL.Component.Shader", description = "A uniform variable of a shader (rendering only)."),
    class(name = "OglMatrix4VectorVariable", module = "Sofa.GL.Component.Shader", description = "A uniform variable of a shader (rendering only)."),
    class(name = "OglFloatAttribute", module = "Sofa.GL.Component.Shader", description = "A per-vertex attribute of a shader (rendering only)."),
    class(name = "OglFloat2Attribute", module = "Sofa.GL.Component.Shader", description = "A per-vertex attribute of a shader (rendering only)."),
    class(name = "OglFloat3Attribute", module = "Sofa.GL.Component.Shader", description = "A per-vertex attribute of a shader (rendering only)."),
    class(name = "OglFloat4Attribute", module = "Sofa.GL.Component.Shader", description = "A per-vertex attribute of a shader (rendering only)."),
    class(name = "OglIntAttribute", module = "Sofa.GL.Component.Shader", description = "A per-vertex attribute of a shader (rendering only)."),
    class(name = "OglInt4Attribute", module = "Sofa.GL.Component.Shader", description = "A per-vertex attribute of a shader (rendering only)."),
)]
#[derive(Clone, Default)]
pub struct NoEffect;

impl Component for NoEffect {
    /// Nothing is kept from the topology (visual models are not rendered; a viewer reads the
    /// current lists of the container).
    fn topology_changed(
        &mut self,
        _cx: &mut InitCtx,
        _topology: settee_core::ComponentId,
        _changes: &[settee_core::topology_change::TopologyChange],
    ) -> SimResult<settee_core::topology_change::Follow> {
        Ok(settee_core::topology_change::Follow::NotConcerned)
    }
}

/// What the viewer shows by default: SOFA's display flags (the replay page reads them).
///
/// `VisualStyle`: `displayFlags` is a list of words `show…`/`hide…` (`showVisualModels`,
/// `showBehaviorModels`, `showCollisionModels`, `showForceFields`, `hideVisual`, `showAll`, …).
/// Other attributes are accepted and dropped (they only concern SOFA's renderer).
#[component(
    module = "Sofa.Component.Visual",
    markers = [Visual],
    preparse = keep_display_flags,
    data = {
        /// display flags: words show… / hide… (showVisualModels, showBehaviorModels, showCollisionModels, showForceFields, showMappings, showAll, hideVisual, …)
        displayFlags: Str,
    },
)]
#[derive(Clone, Default)]
pub struct VisualStyle;

fn keep_display_flags(attrs: &mut Vec<(String, String)>) {
    attrs.retain(|(n, _)| n == "name" || n == "displayFlags");
}

impl Component for VisualStyle {}

/// Display 3D camera-oriented text (rendering only; Settee does not render).
///
/// `Visual3DText`: camera-facing text drawn by SOFA's viewer. Unlike the classes above, its Data
/// are declared and parsed (so typos and bad values are reported), though none of them can change
/// a simulated number. It is a visual model in SOFA but holds no points, so it never serves as a
/// mapping output.
#[component(
    module = "Sofa.Component.Visual",
    markers = [Visual],
    data = {
        /// Display the object or not (rendering only)
        enable: Bool = "true",
        /// Test to display (rendering only)
        text: Str,
        /// 3d position (rendering only)
        position: Fixed(3) = "0 0 0",
        /// text scale (rendering only)
        scale: Real = "1",
        /// text color. (default=[1.0,1.0,1.0,1.0]) (rendering only)
        color: Color = "1 1 1 1",
        /// perform depth test (rendering only)
        depthTest: Bool = "true",
    },
)]
#[derive(Clone, Default)]
pub struct Visual3DText;

impl Component for Visual3DText {}

/// Declares the SOFA modules a scene needs. Accepted and recorded; Settee's components are built in.
///
/// `RequiredPlugin`: accepted and recorded; every component Settee knows is built in.
#[component(
    module = "Sofa.Simulation.Core",
    markers = [Plugin],
    data = {
        /// names of the SOFA modules or plugins to load (Settee has every supported component built in)
        pluginName: Strings,
        /// standard->custom suffixes pairs (unused by Settee)
        suffixMap: Strings,
        /// unused by Settee
        stopAfterFirstNameFound: Bool = "false",
        /// unused by Settee
        stopAfterFirstSuffixFound: Bool = "true",
        /// unused by Settee
        requireOne: Bool = "false",
        /// unused by Settee
        requireAll: Bool = "true",
        /// plugins reported as loaded (output)
        loadedPlugins: Strings,
    },
)]
#[derive(Clone, Default)]
pub struct RequiredPlugin;

impl Component for RequiredPlugin {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let names = cx.data().get(Self::PLUGIN_NAME).to_vec();
        cx.data_mut().put(Self::LOADED_PLUGINS, names);
        Ok(())
    }
}

/// Adds a directory to the data path: the files named after it in the scene (meshes, images)
/// are also looked for there.
///
/// `AddDataRepository` (alias `AddResourceRepository`, its name before SOFA v21.06): SOFA adds
/// the directory as the scene is read, so only the components read after it find their files
/// there; a relative path is taken from the scene file's directory (SOFA reads a scene with its
/// directory as the current one). A directory that does not exist gets a warning (SOFA logs an
/// error and goes on).
#[component(
    markers = [Plugin],
    data = {
        /// Path to add to the pool of resources (made absolute once added)
        path: Str,
    },
)]
#[derive(Clone, Default)]
pub struct AddDataRepository;

impl Component for AddDataRepository {
    fn parsed(&mut self, cx: &mut InitCtx) -> SimResult {
        let text = cx.data().get(Self::PATH).trim().to_string();
        if text.is_empty() {
            cx.warn("no directory to add (Data 'path' is empty)");
            return Ok(());
        }
        let dir = cx.entry().dir.join(&text);
        if !dir.is_dir() {
            cx.warn(format!("the directory '{}' does not exist: nothing is added to the data path", dir.display()));
            return Ok(());
        }
        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        // SOFA writes the absolute path it added back into the Data.
        cx.data_mut().put(Self::PATH, dir.display().to_string());
        if !cx.scene.data_path.contains(&dir) {
            cx.scene.data_path.push(dir);
        }
        Ok(())
    }
}

/// Adds a directory where SOFA looks for plugins. Accepted; Settee's components are built in.
///
/// `AddPluginRepository`: SOFA's plugin manager then finds plugin libraries there; Settee loads no
/// plugin, so only the Data is kept.
#[component(
    markers = [Plugin],
    data = {
        /// Path to add to the plugin path (Settee loads no plugin)
        path: Str,
    },
)]
#[derive(Clone, Default)]
pub struct AddPluginRepository;

impl Component for AddPluginRepository {}

/// Sets SOFA's task scheduler globally for the scene (no effect on results; Settee's threads are set by the runner).
///
/// `TaskSchedulerSettings`: sets up SOFA's global task scheduler (thread count, scheduler type).
/// The scheduler only decides how SOFA spreads work over threads, never a simulated number, and
/// Settee's threads are chosen by whoever runs the scene; so the Data are read and kept, and an
/// unknown scheduler type gets the warning SOFA's error becomes here (SOFA marks the component
/// invalid and goes on).
#[component(
    module = "Sofa.Simulation.Core",
    markers = [Visual],
    data = {
        /// threads of SOFA's task scheduler (0: one per core); no effect here: Settee's thread count is set by the runner
        nbThreads: Int = "0",
        /// type of task scheduler (SOFA knows '_default'); no effect here
        taskSchedulerType: Str = "_default",
    },
)]
#[derive(Clone, Default)]
pub struct TaskSchedulerSettings;

impl Component for TaskSchedulerSettings {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let kind = cx.data().get(Self::TASK_SCHEDULER_TYPE).trim().to_string();
        if !kind.is_empty() && kind != "_default" {
            cx.warn(format!("unknown task scheduler type '{kind}' (SOFA knows '_default'); the setting has no effect in Settee anyway"));
        }
        Ok(())
    }
}

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.add::<NoEffect>();
    f.add::<model::OglModel>();
    f.add::<VisualStyle>();
    f.add::<Visual3DText>();
    f.add::<RequiredPlugin>();
    f.add::<AddDataRepository>();
    f.add::<AddPluginRepository>();
    f.add::<TaskSchedulerSettings>();
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use settee_core::role;
    use settee_core::simulation::init_root;
    use settee_core::testing::add;
    use settee_core::{Factory, Scene, Severity};

    fn factory() -> Factory {
        let mut f = Factory::new();
        super::register(&mut f);
        f
    }

    /// The Data of SOFA's TetrahedronHyperelasticityFEMForceField scene are read; the others keep
    /// SOFA's defaults; the component plays no mechanical role.
    #[test]
    fn visual_3d_text_reads_its_data() {
        let f = factory();
        let mut s = Scene::new("root");
        let c = add(&mut s, &f, Scene::ROOT, "Visual3DText", &[("text", "ArrudaBoyce"), ("position", "3 0 -0.5"), ("scale", "0.2")]);
        init_root(&mut s, &f).unwrap();
        let e = s.entry(c);
        assert_eq!(e.class.role_names(), ["Visual"]);
        assert_eq!(e.data.str("text"), "ArrudaBoyce");
        assert_eq!(e.data.reals("position"), [3.0, 0.0, -0.5]);
        assert_eq!(e.data.real("scale"), 0.2);
        assert_eq!(e.data.reals("color"), [1.0, 1.0, 1.0, 1.0]);
        assert!(e.data.bool("depthTest"));
        assert!(e.data.bool("enable"));
    }

    /// A bad value is reported (visual classes that keep only their name would accept it).
    #[test]
    fn visual_3d_text_reports_bad_values() {
        let f = factory();
        let mut s = Scene::new("root");
        let attrs = [("text", "x"), ("scale", "big")].map(|(n, v)| settee_core::Attr { name: n.into(), value: v.into(), pos: None }).to_vec();
        f.create(&mut s, Scene::ROOT, "Visual3DText", None, attrs, None, std::path::Path::new(".")).unwrap();
        let bad: Vec<_> = s.messages.iter().filter(|m| m.severity != Severity::Info && m.message.contains("big")).collect();
        assert_eq!(bad.len(), 1, "{:?}", s.messages);
    }

    /// SofaScene.scn's `<TaskSchedulerSettings nbThreads="8"/>` loads and keeps its Data; the
    /// scheduler type defaults to SOFA's '_default'; an unknown type is a warning, not an error.
    #[test]
    fn task_scheduler_settings_loads() {
        let f = factory();
        let mut s = Scene::new("root");
        let c = add(&mut s, &f, Scene::ROOT, "TaskSchedulerSettings", &[("name", "TaskSchedulerSettings"), ("nbThreads", "8")]);
        init_root(&mut s, &f).unwrap();
        // (this crate has no animation loop: init_root's default loop is reported as unknown)
        let own = |s: &Scene| s.messages.iter().filter(|m| !m.message.contains("DefaultAnimationLoop")).cloned().collect::<Vec<_>>();
        assert!(own(&s).is_empty(), "{:?}", s.messages);
        let e = s.entry(c);
        assert_eq!(e.data.int("nbThreads"), 8);
        assert_eq!(e.data.str("taskSchedulerType"), "_default");
        assert!([role::MECHANICAL_STATE, role::FORCE_FIELD, role::ODE_SOLVER].iter().all(|r| !e.plays(*r)));

        let mut s = Scene::new("root");
        add(&mut s, &f, Scene::ROOT, "TaskSchedulerSettings", &[("taskSchedulerType", "tbb")]);
        init_root(&mut s, &f).unwrap();
        assert!(own(&s).iter().all(|m| m.severity != Severity::Error), "{:?}", s.messages);
        assert!(s.messages.iter().any(|m| m.severity == Severity::Warning && m.message.contains("'tbb'")), "{:?}", s.messages);

        // A value that does not parse is an error at its Data (strict parsing; `--lenient` makes
        // it a warning).
        let mut s = Scene::new("root");
        let attrs = vec![settee_core::Attr { name: "nbThreads".into(), value: "many".into(), pos: None }];
        let _ = f.create(&mut s, Scene::ROOT, "TaskSchedulerSettings", None, attrs, None, std::path::Path::new("."));
        assert!(s.messages.iter().any(|m| m.severity == Severity::Error && m.message.contains("many")), "{:?}", s.messages);
    }
}
