//! `node.children`, `node.objects`, `node.parents`: sequences with SOFA's extra methods
//! (`at`, `remove_at`, lookup by name).

use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyList;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Children,
    Objects,
    Parents,
}

#[pyclass(module = "Sofa.Core", name = "NodeSequence", unsendable)]
pub struct NodeSeq {
    owner: Py<PyAny>,
    kind: Kind,
    items: Vec<Py<PyAny>>,
}

pub fn make(py: Python<'_>, owner: Py<PyAny>, kind: Kind, items: Vec<Py<PyAny>>) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, NodeSeq { owner, kind, items })?.into_any())
}

fn name_of(item: &Bound<'_, PyAny>) -> PyResult<String> {
    item.call_method0("getName")?.extract()
}

#[pymethods]
impl NodeSeq {
    fn __len__(&self) -> usize {
        self.items.len()
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(i) = key.extract::<isize>() {
            let n = self.items.len() as isize;
            let j = if i < 0 { i + n } else { i };
            if j < 0 || j >= n {
                return Err(PyIndexError::new_err("Too large index"));
            }
            return Ok(self.items[j as usize].clone_ref(py));
        }
        if let Ok(name) = key.extract::<String>() {
            for it in &self.items {
                if name_of(it.bind(py))? == name {
                    return Ok(it.clone_ref(py));
                }
            }
            return Err(PyIndexError::new_err(format!("No existing object '{name}'")));
        }
        Err(PyTypeError::new_err("an index (int) or a name (str)"))
    }

    fn at(&self, py: Python<'_>, i: isize) -> PyResult<Py<PyAny>> {
        self.__getitem__(py, &i.into_pyobject(py)?.into_any())
    }

    fn remove_at(&mut self, py: Python<'_>, i: usize) -> PyResult<()> {
        if i >= self.items.len() {
            return Err(PyIndexError::new_err("Too large index"));
        }
        let item = self.items.remove(i);
        match self.kind {
            Kind::Children => {
                self.owner.bind(py).call_method1("removeChild", (item,))?;
            }
            Kind::Objects => {
                self.owner.bind(py).call_method1("removeObject", (item,))?;
            }
            Kind::Parents => return Err(PyTypeError::new_err("a node's parents cannot be removed through this list")),
        }
        Ok(())
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Ok(name) = key.extract::<String>() {
            for it in &self.items {
                if name_of(it.bind(py))? == name {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        for it in &self.items {
            if it.bind(py).eq(key)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let list = PyList::new(py, self.items.iter().map(|i| i.clone_ref(py)))?;
        Ok(list.call_method0("__iter__")?.unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let names: Vec<String> = self.items.iter().map(|i| name_of(i.bind(py))).collect::<PyResult<_>>()?;
        Ok(format!("{names:?}"))
    }
}
