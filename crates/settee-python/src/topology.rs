//! `Sofa.Core.BaseMeshTopology`: the Python class of topology containers (spec `python.md`
//! §4.1), with SofaPython3's accessors to their elements and shells.

use std::collections::HashMap;

use pyo3::exceptions::{PyIndexError, PyNotImplementedError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use settee_core::role::Topology;
use settee_core::topology_change::TopologyModifier;
use settee_core::{Adjacency, MeshData};

use crate::cell::with_scene;
use crate::object::{obj_ref, PyObj};

/// SOFA's `InvalidID`: what a shell holds where the mesh has no such element.
const INVALID_ID: u64 = u32::MAX as u64;

/// A component playing the topology role (a grid, a MeshTopology, a set container).
#[pyclass(module = "Sofa.Core", name = "BaseMeshTopology", extends = PyObj, subclass, unsendable)]
pub struct PyMeshTopology;

/// Runs `f` on the mesh of the topology `slf` stands for (as it is now: a container whose Data
/// are linked gives its mesh once initialised).
fn with_mesh<R>(slf: &Bound<'_, PyMeshTopology>, f: impl FnOnce(&MeshData) -> R) -> PyResult<R> {
    let (cell, id) = obj_ref(slf.as_super()).ok_or_else(|| PyRuntimeError::new_err("this topology was not added to a node yet"))?;
    with_scene(slf.py(), &cell, |s| s.entry(id).role::<dyn Topology>().map(|t| f(t.mesh())))?
        .ok_or_else(|| PyRuntimeError::new_err("the topology is in use by the engine"))
}

/// One more than the largest index the elements use.
fn points_used(m: &MeshData) -> usize {
    let elements = m.edges.iter().flatten().chain(m.triangles.iter().flatten()).chain(m.quads.iter().flatten());
    elements.chain(m.tetrahedra.iter().flatten()).chain(m.hexahedra.iter().flatten()).map(|&i| i + 1).max().unwrap_or(0)
}

/// The positions given, else the points the elements use.
fn nb_points(m: &MeshData) -> usize {
    if m.points.is_empty() {
        points_used(m)
    } else {
        m.points.len()
    }
}

/// Element `index` of `list`, as a list of vertex indices.
fn element<const K: usize>(list: &[[usize; K]], index: usize, what: &str) -> PyResult<Vec<usize>> {
    list.get(index).map(|e| e.to_vec()).ok_or_else(|| PyIndexError::new_err(format!("{what} {index} does not exist (the mesh has {})", list.len())))
}

/// The shells of the mesh (built on demand: scripts ask for a few entries).
fn adjacency(m: &MeshData) -> Adjacency {
    Adjacency::build(m, nb_points(m))
}

fn shell(lists: &[Vec<usize>], index: usize) -> Vec<usize> {
    lists.get(index).cloned().unwrap_or_default()
}

#[pymethods]
impl PyMeshTopology {
    /// SOFA's MeshTopology counts the points its elements use (its `position` does not count:
    /// only a loader or `addPoint` sets the count); the other containers count their points.
    fn getNbPoints(slf: &Bound<'_, PyMeshTopology>) -> PyResult<usize> {
        let (cell, id) = obj_ref(slf.as_super()).ok_or_else(|| PyRuntimeError::new_err("this topology was not added to a node yet"))?;
        let mesh_topology = with_scene(slf.py(), &cell, |s| s.entry(id).class.name == "MeshTopology")?;
        with_mesh(slf, |m| match points_used(m) {
            n if mesh_topology && n > 0 => n,
            _ => nb_points(m),
        })
    }

    fn getNbEdges(slf: &Bound<'_, PyMeshTopology>) -> PyResult<usize> {
        with_mesh(slf, |m| m.edges.len())
    }

    fn getNbLines(slf: &Bound<'_, PyMeshTopology>) -> PyResult<usize> {
        Self::getNbEdges(slf)
    }

    fn getNbTriangles(slf: &Bound<'_, PyMeshTopology>) -> PyResult<usize> {
        with_mesh(slf, |m| m.triangles.len())
    }

    fn getNbQuads(slf: &Bound<'_, PyMeshTopology>) -> PyResult<usize> {
        with_mesh(slf, |m| m.quads.len())
    }

    fn getNbTetrahedra(slf: &Bound<'_, PyMeshTopology>) -> PyResult<usize> {
        with_mesh(slf, |m| m.tetrahedra.len())
    }

    fn getNbTetras(slf: &Bound<'_, PyMeshTopology>) -> PyResult<usize> {
        Self::getNbTetrahedra(slf)
    }

    fn getNbHexahedra(slf: &Bound<'_, PyMeshTopology>) -> PyResult<usize> {
        with_mesh(slf, |m| m.hexahedra.len())
    }

    fn getNbHexas(slf: &Bound<'_, PyMeshTopology>) -> PyResult<usize> {
        Self::getNbHexahedra(slf)
    }

    /// Settee's meshes have no prisms nor pyramids.
    fn getNbPrisms(&self) -> usize {
        0
    }

    fn getNbPyramids(&self) -> usize {
        0
    }

    fn getEdge(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<usize>> {
        with_mesh(slf, |m| element(&m.edges, index, "edge"))?
    }

    fn getTriangle(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<usize>> {
        with_mesh(slf, |m| element(&m.triangles, index, "triangle"))?
    }

    fn getQuad(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<usize>> {
        with_mesh(slf, |m| element(&m.quads, index, "quad"))?
    }

    fn getTetrahedron(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<usize>> {
        with_mesh(slf, |m| element(&m.tetrahedra, index, "tetrahedron"))?
    }

    fn getHexahedron(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<usize>> {
        with_mesh(slf, |m| element(&m.hexahedra, index, "hexahedron"))?
    }

    /// The edges that have vertex `index` as an end, in edge order.
    fn getEdgesAroundVertex(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<usize>> {
        with_mesh(slf, |m| shell(&adjacency(m).edges_around_vertex, index))
    }

    fn getTrianglesAroundVertex(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<usize>> {
        with_mesh(slf, |m| shell(&adjacency(m).triangles_around_vertex, index))
    }

    fn getQuadsAroundVertex(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<usize>> {
        with_mesh(slf, |m| shell(&adjacency(m).quads_around_vertex, index))
    }

    fn getTrianglesAroundEdge(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<usize>> {
        with_mesh(slf, |m| shell(&adjacency(m).triangles_around_edge, index))
    }

    /// The edge opposite each vertex of triangle `index`.
    fn getEdgesInTriangle(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<u64>> {
        with_mesh(slf, |m| {
            let a = adjacency(m);
            let edges = a.edges_in_triangle.get(index).ok_or_else(|| PyIndexError::new_err(format!("triangle {index} does not exist")))?;
            Ok(edges.iter().map(|&e| if e == usize::MAX { INVALID_ID } else { e as u64 }).collect())
        })?
    }

    /// The triangle opposite each vertex of tetrahedron `index` (SOFA's face order), or SOFA's
    /// invalid id where the mesh lists no such triangle.
    fn getTrianglesInTetrahedron(slf: &Bound<'_, PyMeshTopology>, index: usize) -> PyResult<Vec<u64>> {
        with_mesh(slf, |m| {
            let t = *m.tetrahedra.get(index).ok_or_else(|| PyIndexError::new_err(format!("tetrahedron {index} does not exist")))?;
            let sorted = |mut f: [usize; 3]| {
                f.sort_unstable();
                f
            };
            let by_vertices: HashMap<[usize; 3], usize> =
                m.triangles.iter().enumerate().rev().map(|(i, &tri)| (sorted(tri), i)).collect::<HashMap<_, _>>();
            Ok((0..4)
                .map(|j| {
                    let face = [t[(j + 1) % 4], t[(j + 2) % 4], t[(j + 3) % 4]];
                    by_vertices.get(&sorted(face)).map_or(INVALID_ID, |&i| i as u64)
                })
                .collect())
        })?
    }
}

/// `Sofa.Core.PointSetTopologyModifier`: the modifiers of the dynamic containers (every
/// `*SetTopologyModifier` is one), with SofaPython3's `addPoints` and `removePoints`.
#[pyclass(module = "Sofa.Core", name = "PointSetTopologyModifier", extends = PyObj, subclass, unsendable)]
pub struct PyTopologyModifier;

/// Runs one change through the modifier `slf` stands for, and turns the engine's refusal into a
/// Python exception.
fn modify_with(
    slf: &Bound<'_, PyTopologyModifier>,
    change: impl FnOnce(&mut dyn TopologyModifier, &mut settee_core::Scene, settee_core::ComponentId) -> settee_core::SimResult,
) -> PyResult<()> {
    let (cell, id) = obj_ref(slf.as_super()).ok_or_else(|| PyRuntimeError::new_err("this modifier was not added to a node yet"))?;
    with_scene(slf.py(), &cell, |s| {
        if s.entry(id).obj.is_none() {
            return Err(PyRuntimeError::new_err("the modifier is in use by the engine"));
        }
        s.with_role::<dyn TopologyModifier, _>(id, |m, s| change(m, s, id)).map_err(|e| PyValueError::new_err(e.to_string()))
    })?
}

#[pymethods]
impl PyTopologyModifier {
    /// Appends `nPoints` points to the container, and to the mechanical states on it
    /// (`addDOF`), each at the origin, as SOFA's `addPoints(nPoints, addDOF)` does.
    #[pyo3(signature = (nPoints, addDOF))]
    #[allow(non_snake_case)]
    fn addPoints(slf: &Bound<'_, PyTopologyModifier>, nPoints: usize, addDOF: bool) -> PyResult<()> {
        if !addDOF {
            return Err(PyNotImplementedError::new_err(
                "addPoints(n, addDOF=False) is not supported by Settee: the mechanical states would no longer match their topology",
            ));
        }
        modify_with(slf, |m, s, id| m.add_points(s, id, nPoints, Vec::new(), Vec::new()))
    }

    /// Removes the points `indices` (each by swap-with-last, in decreasing order) from the
    /// container and from the mechanical states on it (`removeDOF`). Points an element still
    /// uses cannot be removed.
    #[pyo3(signature = (indices, removeDOF))]
    #[allow(non_snake_case)]
    fn removePoints(slf: &Bound<'_, PyTopologyModifier>, indices: Vec<usize>, removeDOF: bool) -> PyResult<()> {
        if !removeDOF {
            return Err(PyNotImplementedError::new_err(
                "removePoints(indices, removeDOF=False) is not supported by Settee: the mechanical states would no longer match their topology",
            ));
        }
        modify_with(slf, |m, s, id| m.remove_points(s, id, indices))
    }
}
