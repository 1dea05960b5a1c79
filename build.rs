//! Links the embedded Python interpreter: libpython's directory goes into the rpath.
fn main() {
    pyo3_build_config::add_libpython_rpath_link_args();
}
