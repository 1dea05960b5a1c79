//! A component's own matrix as a `scipy.sparse.csr_matrix` (`forcefield.assembleKMatrix()`,
//! `mass.assembleMMatrix()`, spec `python.md` §5.3), and the state a component acts on
//! (`component.mstate`).

use pyo3::prelude::*;
use settee_core::component::{ForceField, Mass};
use settee_core::mechanics::{assemble_with, AssemblyOptions, Mbk};
use settee_core::{ComponentId, Scene};

use crate::cell::{run_engine, SceneCell};

/// Which matrix of a component.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Stiffness,
    Mass,
}

/// The mechanical state component `id` acts on: its `mstate` link, else the state its role
/// names (a force field's, a mass's), else the context's.
pub fn mstate_of(s: &Scene, id: ComponentId) -> Option<ComponentId> {
    if let Some(t) = s.link_targets(id, "mstate").first() {
        return Some(*t);
    }
    let state = s.role::<dyn ForceField>(id).and_then(|f| f.states().first().copied()).or_else(|| s.role::<dyn Mass>(id).map(|m| m.state()));
    match state {
        Some(st) => s.store.states.get(st).map(|st| st.owner),
        None => s.context_state(s.entry(id).node),
    }
}

/// A square CSR matrix: `(n, row_ptr, col_idx, values)`, scipy's index type.
type Csr = (usize, Vec<i64>, Vec<i64>, Vec<f64>);

/// `(n, row_ptr, col_idx, values)` of the matrix of component `id` alone on its state, with
/// kFactor 1 (stiffness) or mFactor 1 (mass), no projection: SofaPython3 assembles it into a
/// matrix of the state's size with a one-state accessor.
fn assemble(scene: &mut Scene, id: ComponentId, which: Which) -> Result<Csr, String> {
    let state = match which {
        Which::Stiffness => scene.role::<dyn ForceField>(id).ok_or("assembleKMatrix: this component is not a force field")?.states().first().copied(),
        Which::Mass => scene.role::<dyn Mass>(id).map(|m| m.state()),
    };
    let Some(state) = state else { return Ok((0, vec![0], Vec::new(), Vec::new())) };
    let owner = scene.store.get(state).owner;
    let node = scene.entry(owner).node;
    let mut scope = (*scene.scope(node)).clone();
    scope.force_fields.retain(|c| *c == id);
    scope.masses.retain(|c| *c == id);
    scope.projective.clear();
    scope.mappings.clear();
    let Some(off) = scope.offset(state) else { return Err("the component's state is not solved in its node (a mapped state)".into()) };
    let n = scene.store.get(state).size * scene.store.get(state).layout.deriv_size();
    let opts = AssemblyOptions {
        stiffness: which == Which::Stiffness,
        mass: which == Which::Mass,
        damping: false,
        geometric_stiffness: false,
        projective_constraints: false,
        mapped_components: false,
        ignore_outside_inputs: true,
    };
    let f = match which {
        Which::Stiffness => Mbk { m: 0.0, b: 0.0, k: 1.0 },
        Which::Mass => Mbk { m: 1.0, b: 0.0, k: 0.0 },
    };
    let mut builder = settee_linalg::MatrixBuilder::new(scope.size);
    assemble_with(scene, &scope, f, &opts, &mut builder).map_err(|e| e.to_string())?;
    let m = builder.matrix();
    let (rp, ci, vals) = (m.row_ptr(), m.col_idx(), m.values());
    let mut row_ptr = vec![0i64];
    let (mut cols, mut values) = (Vec::new(), Vec::new());
    for r in off..off + n {
        for k in rp[r]..rp[r + 1] {
            if (off..off + n).contains(&ci[k]) {
                cols.push((ci[k] - off) as i64);
                values.push(vals[k]);
            }
        }
        row_ptr.push(cols.len() as i64);
    }
    Ok((n, row_ptr, cols, values))
}

/// The matrix as `scipy.sparse.csr_matrix((values, cols, row_ptr), shape=(n, n))`.
pub fn assemble_csr(py: Python<'_>, cell: &Py<SceneCell>, id: ComponentId, which: Which) -> PyResult<Py<PyAny>> {
    let (n, row_ptr, cols, values) = run_engine(py, cell, |s| assemble(s, id, which))?.map_err(pyo3::exceptions::PyRuntimeError::new_err)?;
    let sparse = py.import("scipy.sparse")?;
    let np = py.import("numpy")?;
    let data = np.call_method1("array", (values,))?;
    let indices = np.call_method1("array", (cols, "int32"))?;
    let indptr = np.call_method1("array", (row_ptr, "int32"))?;
    let kw = pyo3::types::PyDict::new(py);
    kw.set_item("shape", (n, n))?;
    Ok(sparse.getattr("csr_matrix")?.call(((data, indices, indptr),), Some(&kw))?.unbind())
}
