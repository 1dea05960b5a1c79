//! The extension module `_settee` of the `Sofa` package that `pip install` builds (see
//! `pyproject.toml`): the bindings of `settee-python` with every component Settee has, for
//! scenes run by `python3 scene.py` instead of `settee run scene.py`.

use std::sync::Arc;

use pyo3::prelude::*;

#[pymodule]
fn _settee(m: &Bound<'_, PyModule>) -> PyResult<()> {
    settee_python::set_factory(Arc::new(settee::factory()));
    // Data files are searched in SOFA_DATA_PATH, as `settee run` searches them.
    for dir in settee::run::data_path(&[]).dirs {
        settee_python::add_data_path(dir);
    }
    settee_python::populate(m)
}
