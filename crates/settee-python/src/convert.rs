//! Python values to SOFA's Data text and back (spec `python.md` §3.3, §4.4, §4.5).

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};
use settee_core::data::{DataKind, Value};

/// The text SOFA's `addObject` gives the Data parser for a keyword value (`toSofaParsableString`):
/// strings unchanged, sequences element by element each followed by a space, numpy arrays as
/// lists, Data by their current text, link paths as `@path`, anything else by `repr`.
pub fn to_sofa_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut out = String::new();
    push_text(v, &mut out)?;
    Ok(out)
}

fn push_text(v: &Bound<'_, PyAny>, out: &mut String) -> PyResult<()> {
    if let Ok(s) = v.cast::<PyString>() {
        out.push_str(s.to_str()?);
        return Ok(());
    }
    if let Ok(l) = v.cast::<PyList>() {
        for item in l.iter() {
            push_text(&item, out)?;
            out.push(' ');
        }
        return Ok(());
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        for item in t.iter() {
            push_text(&item, out)?;
            out.push(' ');
        }
        return Ok(());
    }
    if let Ok(d) = v.cast::<crate::data::PyData>() {
        out.push_str(&crate::data::value_string(d)?);
        return Ok(());
    }
    if let Ok(l) = v.cast::<crate::node::LinkPath>() {
        out.push_str(&l.borrow().path);
        return Ok(());
    }
    if is_ndarray(v) {
        let list = v.call_method0("tolist")?;
        return push_text(&list, out);
    }
    // numpy scalars print as plain numbers (SOFA switches numpy's legacy print mode on).
    if v.hasattr("item")? && v.hasattr("dtype")? {
        let item = v.call_method0("item")?;
        return push_text(&item, out);
    }
    out.push_str(&v.repr()?.to_string());
    Ok(())
}

pub fn is_ndarray(v: &Bound<'_, PyAny>) -> bool {
    v.get_type().name().is_ok_and(|n| n == "ndarray")
}

/// A Python value for a Data assignment after creation (`obj.d = v`, `d.value = v`), as the
/// text the Data parser reads, with SOFA's typed rules: an integer Data refuses a float, a text
/// Data refuses what is not a `str`.
pub fn assignment_text(kind: DataKind, name: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    let is_str = v.is_instance_of::<PyString>();
    let is_int = v.is_instance_of::<PyBool>() || v.is_instance_of::<PyInt>();
    match kind {
        DataKind::Int if v.is_instance_of::<PyFloat>() => {
            return Err(PyRuntimeError::new_err(format!("Unable to cast Python instance of type float to C++ type 'int' (Data '{name}')")));
        }
        DataKind::Int if is_int => {
            let i: i64 = v.extract()?;
            return Ok(i.to_string());
        }
        DataKind::Bool if is_int => {
            let i: i64 = v.extract()?;
            return Ok(if i != 0 { "1".into() } else { "0".into() });
        }
        DataKind::Real if !is_str => {
            let x: f64 = v.extract().map_err(|_| PyTypeError::new_err(format!("Data '{name}' takes a number")))?;
            return Ok(repr_real(x));
        }
        // A list of numbers into a text Data: a color given as numbers (`showColor = [1, 0, 0, 1]`),
        // which SOFA's RGBAColor Data take; Settee keeps colors as text, read from the numbers.
        DataKind::Str if is_number_list(v) => return to_sofa_text(v),
        DataKind::Str | DataKind::FileName if !is_str => {
            return Err(PyRuntimeError::new_err(format!("trying to set value for '{name}' from a python object of type {}", v.get_type().name()?)));
        }
        _ => {}
    }
    to_sofa_text(v)
}

/// A list or tuple of numbers (ints, floats, numpy scalars), not empty.
fn is_number_list(v: &Bound<'_, PyAny>) -> bool {
    let items = match (v.cast::<pyo3::types::PyList>(), v.cast::<pyo3::types::PyTuple>()) {
        (Ok(l), _) => l.iter().collect::<Vec<_>>(),
        (_, Ok(t)) => t.iter().collect(),
        _ => return false,
    };
    !items.is_empty() && items.iter().all(|x| !x.is_instance_of::<PyString>() && x.extract::<f64>().is_ok())
}

/// Shortest text that reads back as the same double (Python's `repr`).
pub fn repr_real(x: f64) -> String {
    let s = format!("{x:?}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// A Data value as Python reads it through `.value` when it is not a numeric container: bool
/// and integer Data as `int` (SOFA's bool is an integer type), reals as `float`, text as `str`,
/// word lists as `list[str]`.
pub fn scalar_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Bool(b) => (*b as i64).into_pyobject(py)?.into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Real(r) => r.into_pyobject(py)?.into_any(),
        Value::Str(s) => s.into_pyobject(py)?.into_any(),
        Value::Strings(s) => PyList::new(py, s)?.into_any(),
        Value::Reals { v, .. } => PyList::new(py, v)?.into_any(),
        Value::Indices { v, .. } => PyList::new(py, v)?.into_any(),
    })
}
