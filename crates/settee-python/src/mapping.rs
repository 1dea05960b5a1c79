//! Mappings written in Python: `Sofa.Core.Mapping_Vec3d_Vec3d` and the other pairs of templates
//! SofaPython3 binds (spec `python.md` §5.3).
//!
//! A [`PythonMapping`] plays the mapping role between its `input` and `output` states; the stages
//! hand it the scene ([`Mapping::needs_scene`]) and it calls the instance's
//! `apply(mparams, out, in)` on positions, `applyJ(mparams, out, in)` on velocities and
//! `applyJT(mparams, in_force, out_force)` on forces. The vectors reach Python as
//! [`StateVector`]s, copies written back after the call. Constraint rows and assembled matrices
//! do not go through a Python mapping (it gives no Jacobian): both are refused with the mapping
//! named.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use settee_core::component::Mapping;
use settee_core::role::MechanicalMapping;
use settee_core::{
    component, Component, ComponentId, ConstraintRows, DataGroup, Declared, InitCtx, Layout, Scene, SimError, SimResult, StateId, VecId,
};
use settee_mapping::common::{resolve_ports, MappingData, Ports};

use crate::forcefield::{call_lent, StateVector};
use crate::object::PyObj;

/// A mapping written in Python: SOFA's `Mapping<In, Out>` trampoline.
#[component(
    roles = [Mapping],
    markers = [MechanicalMapping],
    inherit = [MappingData, Self],
    data = {},
    links = {
        /// Input object to map (default: the state of the parent node, `@../`)
        #[node_or_state]
        input: settee_core::role::MechanicalState,
        /// Output object to map (default: the state of this node, `@./`)
        #[node_or_state]
        output: settee_core::role::MechanicalState,
    },
)]
#[derive(Default)]
pub struct PythonMapping {
    instance: Option<Py<PyAny>>,
    /// The templates of the Python class (`Mapping_<In>_<Out>`).
    layouts: Option<(Layout, Layout)>,
    ports: Ports,
}

/// Which Python method a call makes, and on which vectors.
#[derive(Clone, Copy)]
enum Call {
    Apply,
    ApplyJ,
    ApplyJT,
}

impl Call {
    fn method(self) -> &'static str {
        match self {
            Call::Apply => "apply",
            Call::ApplyJ => "applyJ",
            Call::ApplyJT => "applyJT",
        }
    }
}

fn py_err(e: PyErr) -> SimError {
    SimError::new(e.to_string())
}

impl PythonMapping {
    fn instance(&self) -> SimResult<&Py<PyAny>> {
        self.instance.as_ref().ok_or_else(|| SimError::new("the Python mapping has no instance"))
    }

    /// `(rows, coord size, deriv size)` of a state.
    fn shape(scene: &Scene, s: StateId) -> (usize, usize, usize) {
        let st = scene.store.get(s);
        (st.size, st.layout.coord_size(), st.layout.deriv_size())
    }

    /// Calls the instance's `call` method with the scene lent. `written` is the vector the
    /// method writes (the output for `apply`/`applyJ`, the input's forces for `applyJT`),
    /// `read` the one it reads; both are copied into [`StateVector`]s and `written` is copied
    /// back. A Python exception becomes the step's error, its traceback printed.
    fn call(&self, scene: &mut Scene, me: ComponentId, call: Call, written: &mut [f64], read: &[f64]) -> SimResult {
        let (Some(&input), Some(output)) = (self.ports.inputs.first(), self.ports.output) else { return Ok(()) };
        let (ni, ci, di) = Self::shape(scene, input);
        let (no, co, dout) = Self::shape(scene, output);
        let (w, r) = match call {
            Call::Apply => ((no, co, "outCoord"), (ni, ci, "inCoord")),
            Call::ApplyJ => ((no, dout, "outDeriv"), (ni, di, "inDeriv")),
            Call::ApplyJT => ((ni, di, "inForce"), (no, dout, "outForce")),
        };
        let time = scene.params(scene.entry(me).node).time;
        let obj = self.instance()?;
        Python::attach(|py| {
            // SOFA's default MechanicalParams: every factor 0, explicit, no energy.
            let mp = PyDict::new(py);
            for (k, v) in [("time", time), ("mFactor", 0.0), ("bFactor", 0.0), ("kFactor", 0.0)] {
                mp.set_item(k, v).map_err(py_err)?;
            }
            mp.set_item("isImplicit", false).map_err(py_err)?;
            mp.set_item("energy", false).map_err(py_err)?;
            let out = StateVector::new(py, w.2, written, w.0, w.1).map_err(py_err)?;
            let inp = StateVector::new(py, r.2, read, r.0, r.1).map_err(py_err)?;
            let args = PyTuple::new(py, [mp.into_any(), out.clone().into_any(), inp.into_any()]).map_err(py_err)?;
            call_lent(py, scene, obj.bind(py), call.method(), args)?;
            out.borrow().copy_into(written);
            Ok(())
        })
    }

    /// SOFA's `Mapping::init` tail: `apply` on positions, `applyJ` on velocities, and `apply`
    /// on rest positions with `applyRestPosition`.
    fn apply_at_init(&self, scene: &mut Scene, me: ComponentId, rest: bool) -> SimResult {
        let (Some(&input), Some(output)) = (self.ports.inputs.first(), self.ports.output) else { return Ok(()) };
        let mut ops = vec![(VecId::POSITION, Call::Apply), (VecId::VELOCITY, Call::ApplyJ)];
        if rest {
            ops.push((VecId::REST_POSITION, Call::Apply));
        }
        for (id, call) in ops {
            let read = scene.store.get(input).read(id).to_vec();
            let mut out = scene.store.get_mut(output).take(id);
            let r = self.call(scene, me, call, &mut out, &read);
            scene.store.get_mut(output).put(id, out);
            r?;
        }
        Ok(())
    }
}

impl Component for PythonMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let ports = resolve_ports(cx, false)?;
        let Some(out_layout) = ports.out_layout else {
            return Err(cx.error("the output of a Python mapping must be a MechanicalObject, not a visual model"));
        };
        if let Some((i, o)) = self.layouts {
            let got = (ports.in_layouts[0], out_layout);
            if got != (i, o) {
                return Err(cx.error(format!(
                    "a Mapping_{}_{} maps {} to {}, but its input is {} and its output {}",
                    i.name(),
                    o.name(),
                    i.name(),
                    o.name(),
                    got.0.name(),
                    got.1.name()
                )));
            }
        }
        self.ports = ports;
        if let Some((i, o)) = self.layouts {
            // Set once the states are known to match, so that the check above gives the message.
            let me = cx.id;
            cx.scene.entry_mut(me).template = format!("{},{}", i.name(), o.name());
        }
        let rest = cx.data().get(MappingData::APPLY_REST_POSITION);
        let me = cx.id;
        self.apply_at_init(cx.scene, me, rest)
    }
}

impl Mapping for PythonMapping {
    fn inputs(&self) -> &[StateId] {
        &self.ports.inputs
    }

    fn output(&self) -> Option<StateId> {
        self.ports.output
    }

    fn is_mechanical(&self) -> bool {
        self.ports.is_mechanical()
    }

    fn needs_scene(&self) -> bool {
        true
    }

    fn apply(&mut self, _out: &mut [f64], _inputs: &[&[f64]]) -> SimResult {
        Err(SimError::new("a Python mapping is called with its scene (apply_in_scene)"))
    }

    fn apply_j(&mut self, _out: &mut [f64], _inputs: &[&[f64]]) -> SimResult {
        Err(SimError::new("a Python mapping is called with its scene (apply_in_scene)"))
    }

    fn apply_jt(&mut self, _inputs: &mut [&mut [f64]], _out: &[f64]) -> SimResult {
        Err(SimError::new("a Python mapping is called with its scene (apply_jt_in_scene)"))
    }

    fn apply_in_scene(&mut self, scene: &mut Scene, me: ComponentId, out: &mut [f64], inputs: &[&[f64]], positions: bool) -> SimResult {
        let call = if positions { Call::Apply } else { Call::ApplyJ };
        self.call(scene, me, call, out, inputs[0])
    }

    fn apply_jt_in_scene(&mut self, scene: &mut Scene, me: ComponentId, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        self.call(scene, me, Call::ApplyJT, inputs[0], out)
    }

    fn apply_jt_constraints(&mut self, _inputs: &mut [&mut ConstraintRows], _out: &ConstraintRows) -> SimResult {
        Err(SimError::unsupported("constraint rows cannot be carried through a Python mapping yet in Settee (its applyConstraintsJT is not called)"))
    }
}

/// What the base constructor of a Python mapping does (SofaPython3's `Mapping<In, Out>`
/// `__init__`): listening, a single positional argument is the name, keywords naming its Data
/// are set, `input`/`output` given as paths (or LinkPaths) link the states; other keywords stay
/// the subclass's.
fn init_mapping(obj: &Bound<'_, PyObj>, args: &Bound<'_, PyTuple>, kw: Option<&Bound<'_, PyDict>>, layouts: (Layout, Layout)) -> PyResult<()> {
    let py = obj.py();
    if obj.borrow().target.is_some() {
        return Ok(());
    }
    let mut links = Vec::new();
    {
        let mut base = obj.borrow_mut();
        crate::component::take_base_arguments(&mut base, args, kw)?;
        if let Some(kw) = kw {
            for (k, v) in kw.iter() {
                let k: String = k.extract()?;
                if k == "input" || k == "output" {
                    let text = if let Ok(l) = v.cast::<crate::node::LinkPath>() {
                        l.borrow().path.clone()
                    } else if let Ok(s) = v.extract::<String>() {
                        s
                    } else {
                        return Err(PyTypeError::new_err(format!(
                            "'{k}' of a Python mapping is a path to a MechanicalObject: pass a string or `.linkpath`, not {}",
                            v.get_type().name()?
                        )));
                    };
                    links.push((k, text));
                } else if <MappingData as DataGroup>::TABLE.iter().any(|d| d.name == k || d.aliases.contains(&k.as_str())) {
                    base.pending.push((k, crate::convert::to_sofa_text(&v)?));
                }
            }
        }
    }
    let instance = obj.clone().into_any().unbind();
    let comp = PythonMapping { instance: Some(instance), layouts: Some(layouts), ports: Ports::default() };
    crate::component::adopt(py, obj, PythonMapping::CLASSES[0], Box::new(comp), None)?;
    if let Some((cell, id)) = crate::object::obj_ref(obj) {
        crate::cell::with_scene(py, &cell, |s| {
            let e = s.entry_mut(id);
            for (name, text) in links {
                if let Some(l) = e.links.iter_mut().find(|l| l.decl.name == name) {
                    l.text = Some(text);
                }
            }
        })?;
    }
    Ok(())
}

macro_rules! mapping_classes {
    ($(($ty:ident, $name:literal, $in:expr, $out:expr)),* $(,)?) => {
        $(
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
                    init_mapping(slf.as_super(), args, kw, ($in, $out))
                }
            }
        )*

        /// Adds the classes to the native module.
        pub fn add_classes(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $( m.add_class::<$ty>()?; )*
            Ok(())
        }

        /// The names of the classes, for `Sofa.Core`.
        pub const CLASS_NAMES: &[&str] = &[$($name),*];
    };
}

// The pairs SofaPython3 declares (`moduleAddMapping`).
mapping_classes! {
    (MappingVec1dVec1d, "Mapping_Vec1d_Vec1d", Layout::Vec1, Layout::Vec1),
    (MappingVec1dVec2d, "Mapping_Vec1d_Vec2d", Layout::Vec1, Layout::Vec2),
    (MappingVec1dVec3d, "Mapping_Vec1d_Vec3d", Layout::Vec1, Layout::Vec3),
    (MappingVec2dVec2d, "Mapping_Vec2d_Vec2d", Layout::Vec2, Layout::Vec2),
    (MappingVec2dVec1d, "Mapping_Vec2d_Vec1d", Layout::Vec2, Layout::Vec1),
    (MappingVec3dVec3d, "Mapping_Vec3d_Vec3d", Layout::Vec3, Layout::Vec3),
    (MappingVec3dVec2d, "Mapping_Vec3d_Vec2d", Layout::Vec3, Layout::Vec2),
    (MappingVec3dVec1d, "Mapping_Vec3d_Vec1d", Layout::Vec3, Layout::Vec1),
    (MappingVec6dVec6d, "Mapping_Vec6d_Vec6d", Layout::Vec6, Layout::Vec6),
    (MappingVec6dVec3d, "Mapping_Vec6d_Vec3d", Layout::Vec6, Layout::Vec3),
    (MappingVec6dVec1d, "Mapping_Vec6d_Vec1d", Layout::Vec6, Layout::Vec1),
    (MappingRigid2dVec2d, "Mapping_Rigid2d_Vec2d", Layout::Rigid2, Layout::Vec2),
    (MappingRigid2dRigid2d, "Mapping_Rigid2d_Rigid2d", Layout::Rigid2, Layout::Rigid2),
    (MappingRigid3dVec6d, "Mapping_Rigid3d_Vec6d", Layout::Rigid3, Layout::Vec6),
    (MappingRigid3dVec3d, "Mapping_Rigid3d_Vec3d", Layout::Rigid3, Layout::Vec3),
    (MappingRigid3dVec1d, "Mapping_Rigid3d_Vec1d", Layout::Rigid3, Layout::Vec1),
    (MappingRigid3dRigid3d, "Mapping_Rigid3d_Rigid3d", Layout::Rigid3, Layout::Rigid3),
    (MappingVec3dRigid3d, "Mapping_Vec3d_Rigid3d", Layout::Vec3, Layout::Rigid3),
}
