//! Force fields written in Python: `Sofa.Core.ForceFieldVec3d` and the other templates (spec
//! `python.md` §5.3).
//!
//! A [`PythonForceField`] plays the force-field role in the scene; its numerical entry points
//! call the instance's `addForce(mparams, f, x, v)`, `addDForce(mparams, df, dx)` and
//! `addKToMatrix(mparams, nNodes, nDofs)`. The stages hand it the scene
//! ([`ForceField::needs_scene`]), which it lends to Python for the call, so that the script
//! reads its own Data (`self.stiffness.value`). The vectors reach Python as [`StateVector`]s:
//! numpy views on buffers the argument owns (a copy of what the stage lent), written back
//! into the stage's vector after `addForce`/`addDForce`.

use numpy::ndarray::ArrayView2;
use numpy::PyArray2;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use settee_core::component::ForceField;
use settee_core::role::MechanicalState;
use settee_core::{
    component, Component, ComponentId, Declared, ForceIo, InitCtx, Layout, MatrixAccumulator, MechParams, Scene, SimError, SimResult, StateId,
    StateSet,
};

use crate::cell::lend;
use crate::object::PyObj;

/// A force field written in Python: SOFA's `ForceField<T>` trampoline.
#[component(
    roles = [ForceField],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d", "Rigid2d", "Rigid3d"],
    template_rule = FromState,
    data = {},
    links = {
        /// the mechanical state it acts on (default: the context's)
        mstate: MechanicalState,
    },
)]
#[derive(Default)]
pub struct PythonForceField {
    instance: Option<Py<PyAny>>,
    layout: Option<Layout>,
    state: Option<StateId>,
}

/// `(rows, coord size, deriv size)` of the state a force field acts on.
fn shape_of(scene: &Scene, s: StateId) -> (usize, usize, usize) {
    let st = scene.store.get(s);
    (st.size, st.layout.coord_size(), st.layout.deriv_size())
}

impl PythonForceField {
    fn instance(&self) -> SimResult<&Py<PyAny>> {
        self.instance.as_ref().ok_or_else(|| SimError::new("the Python force field has no instance"))
    }

    /// Calls `method` of the instance with the scene lent; a Python exception becomes the
    /// step's error (SOFA lets it run up through the solver), its traceback printed.
    fn call<'py>(&self, py: Python<'py>, scene: &mut Scene, method: &str, args: Bound<'py, PyTuple>) -> SimResult<Bound<'py, PyAny>> {
        call_lent(py, scene, self.instance()?.bind(py), method, args)
    }
}

/// Calls `method` of a Python component's instance with the scene lent (its code reads its
/// Data). A Python exception becomes the step's error at the script's line, its traceback
/// printed: SOFA lets the exceptions of force fields and mappings run up through the solver.
pub(crate) fn call_lent<'py>(
    py: Python<'py>,
    scene: &mut Scene,
    obj: &Bound<'py, PyAny>,
    method: &str,
    args: Bound<'py, PyTuple>,
) -> SimResult<Bound<'py, PyAny>> {
    lend(scene, || obj.call_method1(method, args)).map_err(|e| {
        let text = e.to_string();
        let pos = crate::traceback_positions(py, &e).pop();
        e.print(py);
        let mut err = SimError::new(format!("Python exception in {method}: {text}"));
        err.0.pos = pos;
        err
    })
}

/// The `mparams` dict of SofaPython3's trampoline.
fn mparams<'py>(py: Python<'py>, p: &MechParams, entries: &[(&str, f64)], implicit: bool, with_energy: bool) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time", p.time)?;
    for (k, v) in entries {
        d.set_item(*k, *v)?;
    }
    d.set_item("isImplicit", implicit)?;
    // Settee computes no potential energy in the step (SOFA's `energy` flag is off).
    if with_energy {
        d.set_item("energy", false)?;
    }
    Ok(d)
}

fn py_err(e: PyErr) -> SimError {
    SimError::new(e.to_string())
}

impl Component for PythonForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        // SOFA's trampoline binds the context's state when none was linked.
        let Some(owner) = cx.mstate() else {
            return Err(cx.error("Missing mechanical state.").hint("add a MechanicalObject to the node before the Python force field"));
        };
        let Some(state) = cx.scene.state_of(owner) else {
            return Err(cx.error("Missing mechanical state."));
        };
        let layout = cx.scene.store.get(state).layout;
        if self.layout.is_some_and(|l| l != layout) {
            return Err(cx.error(format!(
                "its template {} does not match its mechanical state's {}",
                self.layout.map(|l| l.name()).unwrap_or_default(),
                layout.name()
            )));
        }
        self.state = Some(state);
        let me = cx.id;
        cx.scene.set_link_targets(me, "mstate", vec![owner])?;
        crate::component::call_defined(self.instance.as_ref(), cx.scene, me, "init");
        Ok(())
    }
}

impl ForceField for PythonForceField {
    fn states(&self) -> StateSet {
        self.state.into_iter().collect()
    }

    fn add_force(&mut self, _p: &MechParams, _io: &mut ForceIo) -> SimResult {
        Err(SimError::new("a Python force field is called with its scene (add_force_in_scene)"))
    }

    fn add_dforce(&mut self, _p: &MechParams, _io: &mut ForceIo, _k: f64, _b: f64) -> SimResult {
        Err(SimError::new("a Python force field is called with its scene (add_dforce_in_scene)"))
    }

    fn needs_scene(&self) -> bool {
        true
    }

    fn add_force_in_scene(&mut self, scene: &mut Scene, _me: ComponentId, p: &MechParams, io: &mut ForceIo) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        let (n, cs, ds) = shape_of(scene, s);
        Python::attach(|py| {
            let mp = mparams(py, p, &[("mFactor", 0.0), ("bFactor", 0.0), ("kFactor", 0.0)], false, true).map_err(py_err)?;
            let f = StateVector::new(py, "force", &io.f[0][..], n, ds).map_err(py_err)?;
            let x = StateVector::new(py, "position", io.x[0], n, cs).map_err(py_err)?;
            let v = StateVector::new(py, "velocity", io.v[0], n, ds).map_err(py_err)?;
            let args = PyTuple::new(py, [mp.into_any(), f.clone().into_any(), x.into_any(), v.into_any()]).map_err(py_err)?;
            self.call(py, scene, "addForce", args)?;
            f.borrow().copy_into(io.f[0]);
            Ok(())
        })
    }

    fn add_dforce_in_scene(&mut self, scene: &mut Scene, _me: ComponentId, p: &MechParams, io: &mut ForceIo, k: f64, b: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        let (n, _, ds) = shape_of(scene, s);
        Python::attach(|py| {
            // `nFactor` (sic) carries SOFA's mFactor, which is 0 here: masses add their own part.
            let mp = mparams(py, p, &[("nFactor", 0.0), ("bFactor", b), ("kFactor", k)], true, false).map_err(py_err)?;
            let df = StateVector::new(py, "dforce", &io.f[0][..], n, ds).map_err(py_err)?;
            let dx = StateVector::new(py, "dx", io.x[0], n, ds).map_err(py_err)?;
            let args = PyTuple::new(py, [mp.into_any(), df.clone().into_any(), dx.into_any()]).map_err(py_err)?;
            self.call(py, scene, "addDForce", args)?;
            df.borrow().copy_into(io.f[0]);
            Ok(())
        })
    }

    fn add_k_to_matrix_in_scene(&mut self, scene: &mut Scene, _me: ComponentId, p: &MechParams, m: &mut MatrixAccumulator, k: f64) -> SimResult {
        let Some(s) = self.state else { return Ok(()) };
        // SofaPython3 passes `Coord::total_size` as the DOF count (7 for a rigid body).
        let (n, cs, _) = shape_of(scene, s);
        Python::attach(|py| {
            let mp = mparams(py, p, &[("mFactor", 0.0), ("bFactor", 0.0), ("kFactor", k)], true, false).map_err(py_err)?;
            let args = (mp, n, cs).into_pyobject(py).map_err(py_err)?;
            let ret = self.call(py, scene, "addKToMatrix", args)?;
            let bad = || {
                SimError::new(
                    "Can't read return value of AddKToMatrix. The method should return either a plain 2D matrix or a vector of tuples (i, j, val)",
                )
            };
            let np = py.import("numpy").map_err(py_err)?;
            if !ret.is_instance(&np.getattr("ndarray").map_err(py_err)?).map_err(py_err)? {
                return Err(SimError::new("Can't read return value of AddKToMatrix. A numpy array is expected"));
            }
            let shape: Vec<usize> = ret.getattr("shape").and_then(|s| s.extract()).map_err(py_err)?;
            let a = np.call_method1("ascontiguousarray", (ret, "float64")).map_err(py_err)?;
            let flat: Vec<f64> = a.call_method0("ravel").and_then(|r| r.extract()).map_err(py_err)?;
            match shape[..] {
                [r, c, 1] => {
                    for i in 0..r {
                        for j in 0..c {
                            m.add(s, i, s, j, flat[i * c + j]);
                        }
                    }
                }
                [rows, 3] => {
                    for t in flat.chunks_exact(3).take(rows) {
                        m.add(s, t[0] as usize, s, t[1] as usize, t[2]);
                    }
                }
                _ => return Err(bad()),
            }
            Ok(())
        })
    }
}

/// A state vector handed to a Python force field (`f`, `x`, `v`, `df`, `dx`): SofaPython3
/// gives the state's Data; here the vector's numbers, viewed as `(n, size)` numpy arrays.
#[pyclass(module = "Sofa.Core", name = "StateVector", unsendable)]
pub struct StateVector {
    name: &'static str,
    /// Never resized: numpy views point into it (the views keep this object alive).
    buf: Vec<f64>,
    rows: usize,
    cols: usize,
}

impl StateVector {
    pub(crate) fn new<'py>(py: Python<'py>, name: &'static str, v: &[f64], rows: usize, cols: usize) -> PyResult<Bound<'py, StateVector>> {
        let mut buf = v.to_vec();
        buf.resize(rows * cols, 0.0);
        Bound::new(py, StateVector { name, buf, rows, cols })
    }

    pub(crate) fn copy_into(&self, out: &mut [f64]) {
        let n = out.len().min(self.buf.len());
        out[..n].copy_from_slice(&self.buf[..n]);
    }

    /// A numpy view on the numbers, writeable or not.
    fn view<'py>(slf: &Bound<'py, StateVector>, writeable: bool) -> PyResult<Bound<'py, PyAny>> {
        let (ptr, rows, cols) = {
            let mut b = slf.borrow_mut();
            let (r, c) = (b.rows, b.cols);
            (b.buf.as_mut_ptr(), r, c)
        };
        // SAFETY: `buf` is never resized, so the pointer stays valid as long as this object
        // lives; the array's base is this object, which keeps it alive.
        let arr = unsafe {
            let v = ArrayView2::from_shape_ptr((rows, cols), ptr as *const f64);
            PyArray2::borrow_from_array(&v, slf.clone().into_any())
        }
        .into_any();
        crate::data::set_writeable(&arr, writeable);
        Ok(arr)
    }
}

#[pymethods]
impl StateVector {
    #[getter]
    fn value<'py>(slf: &Bound<'py, StateVector>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, false)
    }

    fn array<'py>(slf: &Bound<'py, StateVector>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, false)
    }

    fn getName(&self) -> &'static str {
        self.name
    }

    /// `with v.writeableArray() as a:` — a writeable view for the block's length.
    #[pyo3(signature = (wrapper = None))]
    fn writeableArray(slf: &Bound<'_, StateVector>, wrapper: Option<Py<PyAny>>) -> StateVectorWrite {
        StateVectorWrite { vector: slf.clone().unbind(), wrapper, array: None }
    }

    #[pyo3(signature = (wrapper = None))]
    fn writeable(slf: &Bound<'_, StateVector>, wrapper: Option<Py<PyAny>>) -> StateVectorWrite {
        Self::writeableArray(slf, wrapper)
    }

    fn toList<'py>(slf: &Bound<'py, StateVector>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, false)?.call_method0("tolist")
    }

    fn tolist<'py>(slf: &Bound<'py, StateVector>) -> PyResult<Bound<'py, PyAny>> {
        Self::toList(slf)
    }

    fn __len__(&self) -> usize {
        self.rows
    }

    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    #[getter]
    fn ndim(&self) -> usize {
        2
    }

    #[getter]
    fn size(&self) -> usize {
        self.rows * self.cols
    }

    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(slf: &Bound<'py, StateVector>, dtype: Option<Bound<'py, PyAny>>, copy: Option<bool>) -> PyResult<Bound<'py, PyAny>> {
        let v = Self::view(slf, false)?;
        match (dtype, copy) {
            (Some(d), _) => v.call_method1("astype", (d,)),
            (None, Some(true)) => v.call_method0("copy"),
            _ => Ok(v),
        }
    }

    fn __getitem__<'py>(slf: &Bound<'py, StateVector>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, false)?.get_item(key)
    }

    fn __setitem__(slf: &Bound<'_, StateVector>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::view(slf, true)?.set_item(key, value)
    }

    fn __iter__<'py>(slf: &Bound<'py, StateVector>) -> PyResult<Bound<'py, PyAny>> {
        Ok(Self::view(slf, false)?.try_iter()?.into_any())
    }

    fn __add__<'py>(slf: &Bound<'py, StateVector>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, false)?.add(other)
    }

    fn __radd__<'py>(slf: &Bound<'py, StateVector>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        other.add(Self::view(slf, false)?)
    }

    fn __sub__<'py>(slf: &Bound<'py, StateVector>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, false)?.sub(other)
    }

    fn __rsub__<'py>(slf: &Bound<'py, StateVector>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        other.sub(Self::view(slf, false)?)
    }

    fn __mul__<'py>(slf: &Bound<'py, StateVector>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, false)?.mul(other)
    }

    fn __rmul__<'py>(slf: &Bound<'py, StateVector>, other: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        other.mul(Self::view(slf, false)?)
    }

    fn __neg__<'py>(slf: &Bound<'py, StateVector>) -> PyResult<Bound<'py, PyAny>> {
        Self::view(slf, false)?.neg()
    }

    fn __iadd__(slf: &Bound<'_, StateVector>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::view(slf, true)?.call_method1("__iadd__", (other,))?;
        Ok(())
    }

    fn __isub__(slf: &Bound<'_, StateVector>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::view(slf, true)?.call_method1("__isub__", (other,))?;
        Ok(())
    }

    fn __imul__(slf: &Bound<'_, StateVector>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::view(slf, true)?.call_method1("__imul__", (other,))?;
        Ok(())
    }

    fn __str__(slf: &Bound<'_, StateVector>) -> PyResult<String> {
        Ok(Self::view(slf, false)?.str()?.to_string())
    }

    fn __repr__(slf: &Bound<'_, StateVector>) -> PyResult<String> {
        Self::__str__(slf)
    }
}

/// The `with` block of [`StateVector::writeableArray`].
#[pyclass(module = "Sofa.Core", name = "StateVectorContext", unsendable)]
pub struct StateVectorWrite {
    vector: Py<StateVector>,
    wrapper: Option<Py<PyAny>>,
    array: Option<Py<PyAny>>,
}

#[pymethods]
impl StateVectorWrite {
    fn __enter__(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let a = StateVector::view(self.vector.bind(py), true)?;
        self.array = Some(a.clone().unbind());
        match &self.wrapper {
            Some(w) => Ok(w.bind(py).call1((a,))?.unbind()),
            None => Ok(a.unbind()),
        }
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> bool {
        if let Some(a) = self.array.take() {
            crate::data::set_writeable(a.bind(py), false);
        }
        false
    }
}

/// What the base constructor of a Python force field does (SofaPython3's `ForceField<T>`
/// `__init__`): listening, a single positional argument is the name, keywords naming the base
/// Data are set, `mstate` given as a path (or a LinkPath) links the state; other keywords stay
/// the subclass's.
fn init_force_field(obj: &Bound<'_, PyObj>, args: &Bound<'_, PyTuple>, kw: Option<&Bound<'_, PyDict>>, layout: Layout) -> PyResult<()> {
    let py = obj.py();
    if obj.borrow().target.is_some() {
        return Ok(());
    }
    let mut mstate = None;
    crate::component::take_base_arguments(&mut obj.borrow_mut(), args, kw)?;
    if let Some(v) = kw.and_then(|k| k.get_item("mstate").ok().flatten()) {
        // An object given as `mstate` is ignored, as SofaPython3 does.
        mstate = if let Ok(l) = v.cast::<crate::node::LinkPath>() { Some(l.borrow().path.clone()) } else { v.extract::<String>().ok() };
    }
    let instance = obj.clone().into_any().unbind();
    let comp = PythonForceField { instance: Some(instance), layout: Some(layout), state: None };
    crate::component::adopt(py, obj, PythonForceField::CLASSES[0], Box::new(comp), Some(layout))?;
    if let (Some(text), Some((cell, id))) = (mstate, crate::object::obj_ref(obj)) {
        crate::cell::with_scene(py, &cell, |s| {
            if let Some(l) = s.entry_mut(id).links.iter_mut().find(|l| l.decl.name == "mstate") {
                l.text = Some(text);
            }
        })?;
    }
    Ok(())
}

macro_rules! force_field_class {
    ($ty:ident, $name:literal, $layout:expr) => {
        #[doc = concat!("`Sofa.Core.", $name, "`: subclass it in the script and add an instance to a node.")]
        #[pyclass(module = "Sofa.Core", name = $name, extends = PyObj, subclass, unsendable)]
        pub struct $ty;

        #[pymethods]
        impl $ty {
            #[new]
            #[pyo3(signature = (*_args, **_kw))]
            fn new(_args: &Bound<'_, PyTuple>, _kw: Option<&Bound<'_, PyDict>>) -> PyClassInitializer<Self> {
                PyObj { target: None, pending: Vec::new() }.initializer().add_subclass($ty)
            }

            #[pyo3(signature = (*args, **kw))]
            fn __init__(slf: &Bound<'_, $ty>, args: &Bound<'_, PyTuple>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
                init_force_field(slf.as_super(), args, kw, $layout)
            }

            /// The base `init` does nothing (a subclass's own is called at the scene's init).
            fn init(&self) {}
        }
    };
}

force_field_class!(ForceFieldVec3d, "ForceFieldVec3d", Layout::Vec3);
force_field_class!(ForceFieldVec2d, "ForceFieldVec2d", Layout::Vec2);
force_field_class!(ForceFieldVec1d, "ForceFieldVec1d", Layout::Vec1);
force_field_class!(ForceFieldVec6d, "ForceFieldVec6d", Layout::Vec6);
force_field_class!(ForceFieldRigid3d, "ForceFieldRigid3d", Layout::Rigid3);
force_field_class!(ForceFieldRigid2d, "ForceFieldRigid2d", Layout::Rigid2);

/// Adds the classes to the native module.
pub fn add_classes(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ForceFieldVec3d>()?;
    m.add_class::<ForceFieldVec2d>()?;
    m.add_class::<ForceFieldVec1d>()?;
    m.add_class::<ForceFieldVec6d>()?;
    m.add_class::<ForceFieldRigid3d>()?;
    m.add_class::<ForceFieldRigid2d>()?;
    m.add_class::<StateVector>()?;
    m.add_class::<StateVectorWrite>()?;
    Ok(())
}

/// Raised when a matrix is asked of a component that has none.
pub fn no_matrix(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!("this component has no {what} matrix"))
}
