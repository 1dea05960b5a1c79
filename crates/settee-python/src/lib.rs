//! SofaPython3's Python API on Settee (spec `python.md`): the `Sofa` modules that scene scripts
//! import, backed by Settee's scene graph.
//!
//! Two ways in: `settee run scene.py` embeds CPython, runs the script's `createScene(root)` and
//! steps the scene it built ([`load_python_scene`]); `pip install` of the repository gives a
//! Python package (`crates/settee-pywheel`) whose `Sofa.Simulation.init`/`animate` drive the
//! same engine from `python3 scene.py`. The native classes live in the module `_settee`; the
//! `Sofa` package around them is Python (`python/`), embedded in the runner and installed by
//! the wheel, so both ways run the same code.

#![allow(non_snake_case)] // Python method names are SOFA's (`addObject`, `getLinkPath`).

pub mod base;
pub mod cell;
pub mod component;
pub mod convert;
pub mod copies;
pub mod data;
pub mod engine;
pub mod forcefield;
pub mod graft;
pub mod mapping;
pub mod matrix;
pub mod node;
pub mod object;
pub mod seq;
pub mod simulation;
pub mod topology;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use settee_core::diag::{Diagnostic, Severity, SourcePos};
use settee_core::{Factory, Scene};

static FACTORY: OnceLock<Arc<Factory>> = OnceLock::new();
static DATA_PATH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set while `settee run` owns the scene: it prints the scene's messages itself.
static RUNNER_PRINTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Gives the bindings the factory they create components with (every component Settee has:
/// `settee::factory()`). The first call wins.
pub fn set_factory(f: Arc<Factory>) {
    let _ = FACTORY.set(f);
}

pub fn factory() -> PyResult<Arc<Factory>> {
    FACTORY.get().cloned().ok_or_else(|| PyRuntimeError::new_err("Settee's component factory is not installed (set_factory was not called)"))
}

/// Directories searched for data files (meshes), after the script's own directory: SOFA's
/// DataRepository.
pub fn data_path() -> Vec<PathBuf> {
    DATA_PATH.lock().map(|d| d.clone()).unwrap_or_default()
}

pub fn add_data_path(dir: PathBuf) {
    if let Ok(mut d) = DATA_PATH.lock() {
        if !d.contains(&dir) {
            d.push(dir);
        }
    }
}

/// Prints the warnings and errors a scene gathered since `before` (SOFA logs as it goes), unless
/// `settee run` prints them.
pub fn print_messages(py: Python<'_>, cell: &Py<cell::SceneCell>, before: usize) -> PyResult<()> {
    if RUNNER_PRINTS.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    let lines = cell::with_scene(py, cell, |s| {
        s.messages.get(before..).unwrap_or(&[]).iter().filter(|m| m.severity != Severity::Info).map(|m| m.to_string()).collect::<Vec<_>>()
    })?;
    for l in lines {
        eprintln!("{l}");
    }
    Ok(())
}

/// Fills the native module `_settee` with its classes and the functions behind
/// `Sofa.Simulation`: the runner's module ([`start_interpreter`]) and the wheel's
/// (`crates/settee-pywheel`, whose `#[pymodule]` is the only `PyInit__settee` of a build).
pub fn populate(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<cell::SceneCell>()?;
    m.add_class::<base::PyBase>()?;
    m.add_class::<base::PyLink>()?;
    m.add_class::<topology::PyMeshTopology>()?;
    m.add_class::<topology::PyTopologyModifier>()?;
    m.add_class::<node::PyNode>()?;
    m.add_class::<node::LinkPath>()?;
    m.add_class::<object::PyObj>()?;
    m.add_class::<data::PyData>()?;
    m.add_class::<data::DataContainer>()?;
    m.add_class::<data::DataString>()?;
    m.add_class::<data::DataVectorString>()?;
    m.add_class::<data::WriteContext>()?;
    m.add_class::<component::PyController>()?;
    m.add_class::<engine::PyDataEngine>()?;
    forcefield::add_classes(m)?;
    mapping::add_classes(m)?;
    m.add("MAPPING_CLASSES", mapping::CLASS_NAMES.to_vec())?;
    m.add_class::<seq::NodeSeq>()?;
    m.add_function(pyo3::wrap_pyfunction!(object::class_categories, m)?)?;
    m.add_function(pyo3::wrap_pyfunction!(object::factory_entries, m)?)?;
    m.add_function(pyo3::wrap_pyfunction!(object::bounding_box, m)?)?;
    simulation::add_functions(m)?;
    copies::add_functions(m)?;
    Ok(())
}

/// The `Sofa` package and its companions, as Python sources (`python/`): `(module, source,
/// is_package)`.
pub const PYTHON_SOURCES: &[(&str, &str, bool)] = &[
    ("Sofa", include_str!("../python/Sofa/__init__.py"), true),
    ("Sofa.Core", include_str!("../python/Sofa/Core.py"), false),
    ("Sofa.prefab", include_str!("../python/Sofa/prefab.py"), false),
    ("Sofa.Simulation", include_str!("../python/Sofa/Simulation.py"), false),
    ("Sofa.Helper", include_str!("../python/Sofa/Helper.py"), false),
    ("Sofa.Types", include_str!("../python/Sofa/Types.py"), false),
    ("Sofa.Gui", include_str!("../python/Sofa/Gui.py"), false),
    ("Sofa.SofaDeformable", include_str!("../python/Sofa/SofaDeformable.py"), false),
    ("Sofa.PyTypes", include_str!("../python/Sofa/PyTypes/__init__.py"), true),
    ("Sofa.PyTypes._wrap", include_str!("../python/Sofa/PyTypes/_wrap.py"), false),
    ("Sofa.PyTypes.Vec3", include_str!("../python/Sofa/PyTypes/Vec3.py"), false),
    ("Sofa.PyTypes.RGBAColor", include_str!("../python/Sofa/PyTypes/RGBAColor.py"), false),
    ("Sofa.constants", include_str!("../python/Sofa/constants/__init__.py"), true),
    ("Sofa.constants.Key", include_str!("../python/Sofa/constants/Key.py"), false),
    ("SofaTypes", include_str!("../python/SofaTypes/__init__.py"), true),
    ("SofaRuntime", include_str!("../python/SofaRuntime/__init__.py"), true),
    ("SofaImGui", include_str!("../python/SofaImGui/__init__.py"), true),
    ("SofaQt", include_str!("../python/SofaQt/__init__.py"), true),
    ("settee", include_str!("../python/settee/__init__.py"), true),
];

/// Makes the embedded `Sofa` package importable (ahead of any installed copy, so that the
/// runner always runs its own).
fn install_python_sources(py: Python<'_>) -> PyResult<()> {
    let finder = pyo3::ffi::c_str!(
        r#"
import sys, importlib.abc, importlib.util
class SetteeEmbeddedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, sources):
        self.sources = {name: (src, pkg) for name, src, pkg in sources}
    def find_spec(self, name, path=None, target=None):
        if name in self.sources:
            return importlib.util.spec_from_loader(name, self, is_package=self.sources[name][1])
        return None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        src, pkg = self.sources[module.__name__]
        if pkg:
            module.__path__ = []
        exec(compile(src, "<settee>/" + module.__name__.replace(".", "/") + (".__init__" if pkg else "") + ".py", "exec"), module.__dict__)
"#
    );
    let m = PyModule::from_code(py, finder, pyo3::ffi::c_str!("settee_embedded_finder.py"), pyo3::ffi::c_str!("settee_embedded_finder"))?;
    let sources = pyo3::types::PyList::new(py, PYTHON_SOURCES.iter().map(|(n, s, p)| (*n, *s, *p)))?;
    let finder = m.getattr("SetteeEmbeddedFinder")?.call1((sources,))?;
    let meta_path = py.import("sys")?.getattr("meta_path")?;
    meta_path.call_method1("insert", (0, finder))?;
    Ok(())
}

/// The runner's native module, made here and put in `sys.modules`: a `#[pymodule]` would export
/// `PyInit__settee`, which the wheel's extension module, linking this crate, defines itself.
fn install_native_module(py: Python<'_>) -> PyResult<()> {
    let m = PyModule::new(py, "_settee")?;
    populate(&m)?;
    py.import("sys")?.getattr("modules")?.set_item("_settee", m)
}

/// Starts the embedded interpreter with the native module and the `Sofa` package importable
/// (once per process).
fn start_interpreter() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        Python::initialize();
        Python::attach(|py| {
            if let Err(e) = install_native_module(py).and_then(|_| install_python_sources(py)) {
                e.print(py);
            }
        });
    });
}

/// The frames of an exception's traceback that name a file and line, outermost first.
pub fn traceback_positions(py: Python<'_>, e: &PyErr) -> Vec<SourcePos> {
    let mut out = Vec::new();
    let mut cur = e.traceback(py);
    while let Some(t) = cur {
        let line: Option<u32> = t.getattr("tb_lineno").ok().and_then(|l| l.extract().ok());
        let file: Option<String> = t
            .getattr("tb_frame")
            .ok()
            .and_then(|f| f.getattr("f_code").ok())
            .and_then(|c| c.getattr("co_filename").ok())
            .and_then(|f| f.extract().ok());
        if let (Some(line), Some(file)) = (line, file) {
            out.push(SourcePos::new(Arc::new(PathBuf::from(file)), line, 1));
        }
        cur = t.getattr("tb_next").ok().and_then(|n| n.cast_into::<pyo3::types::PyTraceback>().ok());
    }
    out
}

/// Where a Python exception points in the script: the innermost frame in `script`, else the
/// innermost frame.
fn exception_pos(py: Python<'_>, e: &PyErr, script: &Path) -> Option<SourcePos> {
    // A syntax error carries its own position.
    if let Ok(v) = e.value(py).getattr("lineno") {
        if let (Ok(line), Ok(file)) = (v.extract::<u32>(), e.value(py).getattr("filename").and_then(|f| f.extract::<String>())) {
            return Some(SourcePos::new(
                Arc::new(PathBuf::from(file)),
                line,
                e.value(py).getattr("offset").and_then(|o| o.extract::<u32>()).unwrap_or(1),
            ));
        }
    }
    let frames = traceback_positions(py, e);
    frames.iter().rev().find(|p| p.file() == script).or(frames.last()).cloned()
}

fn python_error(py: Python<'_>, e: PyErr, script: &Path, what: &str) -> Diagnostic {
    let kind = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_default();
    let text = e.value(py).to_string();
    let tb = e.traceback(py).and_then(|t| t.format().ok()).unwrap_or_default();
    let pos = exception_pos(py, &e, script);
    let mut d = Diagnostic::error(format!("{what}: {kind}: {text}")).at(pos);
    if !tb.is_empty() {
        d = d.hint(tb.trim_end().to_string());
    }
    d
}

/// Runs a Python scene script as SOFA's loader does (spec §2.2): the script's directory first
/// on `sys.path` and the current directory while it loads, `createScene(root)` on a fresh
/// root named `root`. Returns the scene it built, not yet initialised; the Python objects stay
/// alive with it (its controllers are called as it runs).
pub fn load_python_scene(path: &Path, factory: Arc<Factory>, data_path: &[PathBuf], args: &[String]) -> Result<Scene, Vec<Diagnostic>> {
    set_factory(factory);
    for d in data_path {
        add_data_path(d.clone());
    }
    RUNNER_PRINTS.store(true, std::sync::atomic::Ordering::Relaxed);
    start_interpreter();
    let script = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = script.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    Python::attach(|py| {
        let at_file = || Some(SourcePos::start_of(Arc::new(script.clone())));
        let run = || -> Result<Py<PyAny>, Diagnostic> {
            let sys = py.import("sys").map_err(|e| python_error(py, e, &script, "cannot start Python"))?;
            let name = script.file_stem().and_then(|s| s.to_str()).unwrap_or("scene").to_string();
            let mut argv = vec![script.file_name().and_then(|s| s.to_str()).unwrap_or("scene.py").to_string()];
            argv.extend(args.iter().cloned());
            let _ = sys.setattr("argv", argv);
            let _ = sys.getattr("path").and_then(|p| p.call_method1("insert", (0, dir.to_string_lossy().to_string())));
            let util = py.import("importlib.util").map_err(|e| python_error(py, e, &script, "cannot start Python"))?;
            let spec = util
                .call_method1("spec_from_file_location", (name.as_str(), script.to_string_lossy().to_string()))
                .map_err(|e| python_error(py, e, &script, "cannot read the script"))?;
            let module = util.call_method1("module_from_spec", (&spec,)).map_err(|e| python_error(py, e, &script, "cannot read the script"))?;
            let _ = sys.getattr("modules").and_then(|m| m.set_item(name.as_str(), &module));
            spec.getattr("loader")
                .and_then(|l| l.call_method1("exec_module", (&module,)))
                .map_err(|e| python_error(py, e, &script, "the script raised an exception while it was imported"))?;
            let create = module.getattr("createScene").map_err(|_| {
                Diagnostic::error("the script defines no createScene(rootNode) function")
                    .at(at_file())
                    .hint("a SOFA Python scene is a module with `def createScene(rootNode): ...`")
            })?;
            let root = py
                .import("Sofa.Core")
                .and_then(|c| c.getattr("Node"))
                .and_then(|n| n.call1(("root",)))
                .map_err(|e| python_error(py, e, &script, "cannot create the root node"))?;
            create.call1((&root,)).map_err(|e| python_error(py, e, &script, "createScene raised an exception"))?;
            Ok(root.unbind())
        };
        let old_dir = std::env::current_dir().ok();
        let _ = std::env::set_current_dir(&dir);
        let r = run();
        if let Some(d) = old_dir {
            let _ = std::env::set_current_dir(d);
        }
        let root = r.map_err(|d| vec![d])?;
        let root = root.bind(py).cast::<node::PyNode>().map_err(|_| vec![Diagnostic::error("the root is not a Sofa.Core.Node")])?.clone();
        let (cell, _) = node::node_ref(&root);
        let scene = cell::take(py, &cell).map_err(|e| vec![python_error(py, e, &script, "the scene cannot be taken")])?;
        // The script's objects live as long as the process: the scene's Python components
        // call into them.
        std::mem::forget(root.unbind());
        Ok(scene)
    })
}

/// Runs a Python program as `python3 ARGS…` would (`script.py args`, `-m module args`,
/// `-c code`), with the `Sofa` modules importable; returns its exit status.
pub fn run_program(factory: Arc<Factory>, data_path: &[PathBuf], args: &[String]) -> u8 {
    set_factory(factory);
    for d in data_path {
        add_data_path(d.clone());
    }
    start_interpreter();
    Python::attach(|py| {
        let code = pyo3::ffi::c_str!(
            r#"
import runpy, sys
def run(args):
    try:
        if args[0] == "-m":
            sys.argv = args[1:]
            sys.path.insert(0, "")
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        elif args[0] == "-c":
            sys.argv = ["-c"] + args[2:]
            sys.path.insert(0, "")
            exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
        else:
            import os
            sys.argv = args
            sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    sys.stdout.flush()
    return 0
"#
        );
        let run = || -> PyResult<u8> {
            let m = PyModule::from_code(py, code, pyo3::ffi::c_str!("settee_run_program.py"), pyo3::ffi::c_str!("settee_run_program"))?;
            let status: i64 = m.getattr("run")?.call1((args.to_vec(),))?.extract()?;
            Ok(status.clamp(0, 255) as u8)
        };
        match run() {
            Ok(s) => s,
            Err(e) => {
                e.print(py);
                1
            }
        }
    })
}

/// Runs `f` with the embedded interpreter started and the `Sofa` modules importable (programs
/// and benchmarks that drive Python scenes from Rust).
pub fn with_python<R>(factory: Arc<Factory>, f: impl FnOnce(Python<'_>) -> R) -> R {
    set_factory(factory);
    start_interpreter();
    Python::attach(f)
}

/// Whether an error of the scene is one of Python's (for the runner's exit code: a script
/// error is the scene's fault, like an XML error).
pub fn is_python_scene(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref(), Some("py" | "pyscn" | "py3" | "py3scn"))
}
