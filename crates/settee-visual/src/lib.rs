//! Components that only matter to SOFA's renderer or GUI (visual models, cameras, grids, GUI
//! button settings, …) and `RequiredPlugin`. Settee recognises them so SOFA scenes load
//! unmodified; they take no part in the simulation. Their attributes are accepted without
//! checking, since none of them can change a simulated number.

use settee_core::data::{decl, DataKind::*};
use settee_core::{component_any, Component, ComponentClass, CreateArgs, DataDecl, InitCtx, Roles, SimResult, TemplateRule};

/// A component without effect on the simulation.
pub struct NoEffect;

impl Component for NoEffect {
    component_any!();

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

fn create(_: &CreateArgs) -> Box<dyn Component> {
    Box::new(NoEffect)
}

/// Visual components accept any attribute: only their name is kept.
fn keep_name_only(attrs: &mut Vec<(String, String)>) {
    attrs.retain(|(n, _)| n == "name");
}

macro_rules! visual_classes {
    ($( $ident:ident = $name:literal, $roles:expr, $desc:literal; )*) => {
        $(
            pub static $ident: ComponentClass = ComponentClass {
                name: $name,
                description: $desc,
                roles: $roles,
                templates: &[],
                default_template: "",
                template_rule: TemplateRule::Default,
                data: &[],
                links: &[],
                create,
                preparse: Some(keep_name_only),
                no_src_link: &[],
                reads: &[],
            };
        )*
        /// Every class of this crate except `RequiredPlugin`.
        pub static VISUAL_CLASSES: &[&ComponentClass] = &[$(&$ident),*];
    };
}

const V: Roles = Roles::VISUAL;
const VM: Roles = Roles::VISUAL.union(Roles::VISUAL_MODEL);

visual_classes! {
    OGL_MODEL = "OglModel", VM, "OpenGL visual model (rendering only; Settee does not render).";
    VISUAL_MODEL = "VisualModelImpl", VM, "Generic visual model (rendering only).";
    VISUAL_STYLE = "VisualStyle", V, "Display flags of the GUI (rendering only).";
    VISUAL_GRID = "VisualGrid", V, "A grid drawn in the viewer (rendering only).";
    LINE_AXIS = "LineAxis", V, "Axes drawn in the viewer (rendering only).";
    OGL_SCENE_FRAME = "OglSceneFrame", V, "Frame drawn in a corner of the viewer (rendering only).";
    OGL_LABEL = "OglLabel", V, "Text drawn in the viewer (rendering only).";
    OGL_GRID = "OglGrid", V, "Grid drawn in the viewer (rendering only).";
    OGL_COLOR_MAP = "ColorMap", V, "Color map for rendering (rendering only).";
    INTERACTIVE_CAMERA = "InteractiveCamera", V, "Camera of the GUI (rendering only).";
    CAMERA = "Camera", V, "Camera of the GUI (rendering only).";
    BACKGROUND = "BackgroundSetting", V, "Background colour or image of the viewer (GUI only).";
    VISUAL_LOOP = "DefaultVisualManagerLoop", V.union(Roles::VISUAL_LOOP), "Visual loop of the GUI (rendering only).";
    ATTACH_BUTTON = "ConstraintAttachButtonSetting", V, "Mouse interaction setting of the GUI (GUI only).";
    COMPLIANT_ATTACH_BUTTON = "CompliantAttachButtonSetting", V, "Mouse interaction setting of the Compliant plugin's GUI (GUI only; alias CompliantAttachButton).";
    ATTACH_BODY_BUTTON = "AttachBodyButtonSetting", V, "Mouse interaction setting of the GUI (GUI only).";
    FIX_PICKED_BUTTON = "FixPickedParticleButtonSetting", V, "Mouse interaction setting of the GUI (GUI only).";
    MOUSE_BUTTON = "MouseButtonSetting", V, "Mouse interaction setting of the GUI (GUI only).";
    VIEWER_SETTING = "ViewerSetting", V, "Viewer settings of the GUI (GUI only).";
    STATS_SETTING = "StatsSetting", V, "Statistics settings of the GUI (GUI only).";
    DEFAULT_PATH_SETTING = "SofaDefaultPathSetting", V, "Default paths of the GUI (GUI only).";
    MATRIX_IMAGE = "GlobalSystemMatrixImage", V, "Displays the global system matrix as an image (GUI only).";
    TRAIL_RENDERER = "TrailRenderer", V, "Draws the trail of points (rendering only).";
    LIGHT_MANAGER = "LightManager", V, "Lights of the viewer (rendering only).";
    DIRECTIONAL_LIGHT = "DirectionalLight", V, "A light of the viewer (rendering only).";
    POSITIONAL_LIGHT = "PositionalLight", V, "A light of the viewer (rendering only).";
    SPOT_LIGHT = "SpotLight", V, "A light of the viewer (rendering only).";
    CLIP_PLANE = "ClipPlane", V, "Clipping plane of the viewer (rendering only).";
    OGL_SHADER = "OglShader", V, "Shader of the viewer (rendering only).";
    CYLINDER_VISUAL = "CylinderVisualModel", V, "Cylinders drawn along edges (rendering only).";
    POINT_SPLAT = "PointSplat", V, "Point splats (rendering only).";
    OBJ_EXPORTER = "VisualModelOBJExporter", V, "Exports visual models to OBJ files from the GUI (GUI only).";
    RECORDED_CAMERA = "RecordedCamera", V, "A camera moving along a predetermined path (rendering only).";
    VISUAL_BOUNDING_BOX = "VisualBoundingBox", V, "Draws an axis-aligned bounding box (rendering only).";
    VISUAL_POINT_CLOUD = "VisualPointCloud", V, "Draws a point cloud (rendering only).";
    VISUAL_VECTOR_FIELD = "VisualVectorField", V, "Draws a vector field (rendering only).";
    VISUAL_TRANSFORM = "VisualTransform", V, "Moves what is drawn below it (rendering only; no effect on states).";
    ADD_FRAME_BUTTON = "AddFrameButtonSetting", V, "Mouse interaction setting of the GUI (GUI only).";
    ADD_CAMERA_BUTTON = "AddRecordedCameraButtonSetting", V, "Mouse interaction setting of the GUI (GUI only).";
    OGL_VIEWPORT = "OglViewport", V, "An additional viewport in the main one (rendering only).";
    OGL_SRGB = "OglRenderingSRGB", V, "sRGB framebuffer of the viewer (rendering only).";
    OIT_MANAGER = "OrderIndependentTransparencyManager", V, "Order-independent transparency of the viewer (rendering only).";
    OGL_OIT_SHADER = "OglOITShader", V, "Shader of the order-independent transparency (rendering only).";
    OGL_SHADOW_SHADER = "OglShadowShader", V, "Shadow shader of the viewer (rendering only).";
    OGL_TEXTURE = "OglTexture", V, "A texture for a shader (rendering only).";
    OGL_TEXTURE_POINTER = "OglTexturePointer", V, "A texture reference for a shader (rendering only).";
    COMPOSITING_LOOP = "CompositingVisualLoop", V.union(Roles::VISUAL_LOOP), "Multipass visual loop of the viewer (rendering only).";
    VISUAL_MANAGER_PASS = "VisualManagerPass", V, "A render pass of the viewer (rendering only).";
    VISUAL_MANAGER_SECONDARY_PASS = "VisualManagerSecondaryPass", V, "A render pass of the viewer (rendering only).";
    POST_PROCESS_MANAGER = "PostProcessManager", V, "A post-processing pass of the viewer (rendering only).";
    POINT_SPLAT_MODEL = "PointSplatModel", V, "Point splats (rendering only).";
    SLICED_VOLUMETRIC_MODEL = "SlicedVolumetricModel", V, "Slices of a hexahedral model (rendering only).";
}

static TEXT_DATA: &[DataDecl] = &[
    decl("enable", Bool, "true", "Display the object or not (rendering only)"),
    decl("text", Str, "", "Test to display (rendering only)"),
    decl("position", Fixed(3), "0 0 0", "3d position (rendering only)"),
    decl("scale", Real, "1", "text scale (rendering only)"),
    decl("color", Str, "1 1 1 1", "text color. (default=[1.0,1.0,1.0,1.0]) (rendering only)"),
    decl("depthTest", Bool, "true", "perform depth test (rendering only)"),
];

/// `Visual3DText`: camera-facing text drawn by SOFA's viewer. Unlike the classes above, its Data
/// are declared and parsed (so typos and bad values are reported), though none of them can change
/// a simulated number. It is a visual model in SOFA but holds no points, so it never serves as a
/// mapping output.
pub static VISUAL_3D_TEXT: ComponentClass = ComponentClass {
    name: "Visual3DText",
    description: "Display 3D camera-oriented text (rendering only; Settee does not render).",
    roles: Roles::VISUAL,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[TEXT_DATA],
    links: &[],
    create,
    preparse: None,
    no_src_link: &[],
    reads: &[],
};

static PLUGIN_DATA: &[DataDecl] = &[
    decl("pluginName", Strings, "", "names of the SOFA modules or plugins to load (Settee has every supported component built in)"),
    decl("suffixMap", Strings, "", "standard->custom suffixes pairs (unused by Settee)"),
    decl("stopAfterFirstNameFound", Bool, "false", "unused by Settee"),
    decl("stopAfterFirstSuffixFound", Bool, "true", "unused by Settee"),
    decl("requireOne", Bool, "false", "unused by Settee"),
    decl("requireAll", Bool, "true", "unused by Settee"),
    decl("loadedPlugins", Strings, "", "plugins reported as loaded (output)"),
];

/// `RequiredPlugin`: accepted and recorded; every component Settee knows is built in.
pub struct RequiredPlugin;

impl Component for RequiredPlugin {
    component_any!();
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let names = cx.data().get(PLUGIN_NAME).to_vec();
        cx.data_mut().set("loadedPlugins", settee_core::Value::Strings(names));
        Ok(())
    }
}

settee_core::data_refs! {
    static PLUGIN_READS;
    PLUGIN_NAME: Words = "pluginName";
}

pub static REQUIRED_PLUGIN: ComponentClass = ComponentClass {
    name: "RequiredPlugin",
    description: "Declares the SOFA modules a scene needs. Accepted and recorded; Settee's components are built in.",
    roles: Roles::PLUGIN,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[PLUGIN_DATA],
    links: &[],
    create: |_| Box::new(RequiredPlugin),
    preparse: None,
    no_src_link: &[],
    reads: PLUGIN_READS,
};

static TASK_SCHEDULER_DATA: &[DataDecl] = &[
    decl("nbThreads", Int, "0", "threads of SOFA's task scheduler (0: one per core); no effect here: Settee's thread count is set by the runner"),
    decl("taskSchedulerType", Str, "_default", "type of task scheduler (SOFA knows '_default'); no effect here"),
];

settee_core::data_refs! {
    static TASK_SCHEDULER_READS;
    SCHEDULER_TYPE: Text = "taskSchedulerType";
}

/// `TaskSchedulerSettings`: sets up SOFA's global task scheduler (thread count, scheduler type).
/// The scheduler only decides how SOFA spreads work over threads, never a simulated number, and
/// Settee's threads are chosen by whoever runs the scene; so the Data are read and kept, and an
/// unknown scheduler type gets the warning SOFA's error becomes here (SOFA marks the component
/// invalid and goes on).
pub struct TaskSchedulerSettings;

impl Component for TaskSchedulerSettings {
    component_any!();
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let kind = cx.data().get(SCHEDULER_TYPE).trim().to_string();
        if !kind.is_empty() && kind != "_default" {
            cx.warn(format!("unknown task scheduler type '{kind}' (SOFA knows '_default'); the setting has no effect in Settee anyway"));
        }
        Ok(())
    }
}

pub static TASK_SCHEDULER_SETTINGS: ComponentClass = ComponentClass {
    name: "TaskSchedulerSettings",
    description: "Sets SOFA's task scheduler globally for the scene (no effect on results; Settee's threads are set by the runner).",
    roles: Roles::VISUAL,
    templates: &[],
    default_template: "",
    template_rule: TemplateRule::Default,
    data: &[TASK_SCHEDULER_DATA],
    links: &[],
    create: |_| Box::new(TaskSchedulerSettings),
    preparse: None,
    no_src_link: &[],
    reads: TASK_SCHEDULER_READS,
};

/// Registers the classes of this crate.
pub fn register(f: &mut settee_core::Factory) {
    f.register_all(VISUAL_CLASSES);
    f.register(&VISUAL_3D_TEXT);
    f.register(&REQUIRED_PLUGIN);
    f.register(&TASK_SCHEDULER_SETTINGS);
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests check output Data by name
mod tests {
    use settee_core::simulation::init_root;
    use settee_core::testing::add;
    use settee_core::{Factory, Roles, Scene, Severity};

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
        assert_eq!(e.roles(), Roles::VISUAL);
        assert_eq!(e.data.str("text"), "ArrudaBoyce");
        assert_eq!(e.data.reals("position"), [3.0, 0.0, -0.5]);
        assert_eq!(e.data.real("scale"), 0.2);
        assert_eq!(e.data.str("color"), "1 1 1 1");
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
        assert!(!e.roles().intersects(Roles::MECHANICAL_STATE | Roles::FORCE_FIELD | Roles::ODE_SOLVER));

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
