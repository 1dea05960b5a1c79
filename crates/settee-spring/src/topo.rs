//! Cross-element lookups the bending springs need, derived from a [`MeshData`] as SOFA's
//! topology containers build them (forcefields-mappings spec §3.2, §3.6):
//! `edgesInTriangle[t][j]` is the edge `(t[j+1], t[j+2])`, `edgesInQuad[q][j]` the edge
//! `(q[j+1], q[j+2])` (indices modulo the element size), and an element's shell around an edge
//! lists the elements containing it.

use std::collections::HashMap;

use settee_core::MeshData;

/// Edge lookup by unordered vertex pair (the lowest edge index wins, as SOFA's `getEdgeIndex`
/// scans the edges around a vertex in increasing order).
pub(crate) struct EdgeIndex {
    map: HashMap<(usize, usize), usize>,
}

impl EdgeIndex {
    pub fn new(edges: &[[usize; 2]]) -> EdgeIndex {
        let mut map = HashMap::with_capacity(edges.len());
        for (i, e) in edges.iter().enumerate() {
            map.entry(sorted(e[0], e[1])).or_insert(i);
        }
        EdgeIndex { map }
    }

    pub fn get(&self, a: usize, b: usize) -> Option<usize> {
        self.map.get(&sorted(a, b)).copied()
    }
}

fn sorted(a: usize, b: usize) -> (usize, usize) {
    if a < b {
        (a, b)
    } else {
        (b, a)
    }
}

/// Edges of every element (`K` vertices per element, edge `j` = `(e[j+1], e[j+2])`) and the
/// number/list of elements around each edge.
pub(crate) struct ElementEdges<const K: usize> {
    pub edges_in: Vec<[usize; K]>,
    pub around_edge: Vec<Vec<usize>>,
}

/// Builds [`ElementEdges`] for triangles (`K = 3`) or quads (`K = 4`); an element edge missing from
/// the mesh's edge list is an error naming it.
pub(crate) fn element_edges<const K: usize>(mesh: &MeshData, elements: &[[usize; K]], what: &str) -> Result<ElementEdges<K>, String> {
    let index = EdgeIndex::new(&mesh.edges);
    let mut edges_in = Vec::with_capacity(elements.len());
    let mut around_edge = vec![Vec::new(); mesh.edges.len()];
    for (t, e) in elements.iter().enumerate() {
        let mut local = [0usize; K];
        for (j, slot) in local.iter_mut().enumerate() {
            let (a, b) = (e[(j + 1) % K], e[(j + 2) % K]);
            *slot = index.get(a, b).ok_or_else(|| format!("{what} {t} has the edge ({a}, {b}) which is not in the topology's edge list"))?;
        }
        for &ei in &local {
            around_edge[ei].push(t);
        }
        edges_in.push(local);
    }
    Ok(ElementEdges { edges_in, around_edge })
}

/// Local index of edge `e` in an element's edge list (SOFA's `getEdgeIndexInTriangle/Quad`).
pub(crate) fn local_edge<const K: usize>(edges_in: &[usize; K], e: usize) -> Option<usize> {
    edges_in.iter().position(|&x| x == e)
}

/// Checks that every element refers to points of a state of `n` DOFs.
pub(crate) fn check_points<const K: usize>(elements: &[[usize; K]], n: usize, what: &str) -> Result<(), String> {
    for (i, e) in elements.iter().enumerate() {
        if let Some(&p) = e.iter().find(|&&p| p >= n) {
            return Err(format!("{what} {i} refers to point {p} but the mechanical state has {n} DOFs"));
        }
    }
    Ok(())
}

#[inline]
pub(crate) fn sub3(a: &[f64], b: &[f64]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
pub(crate) fn dot3(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
pub(crate) fn norm3(a: [f64; 3]) -> f64 {
    dot3(a, a).sqrt()
}

/// SOFA's `cross`.
#[inline]
pub(crate) fn cross3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// The mechanical state a single-state force field acts on (`mstate` link, else the context
/// state), checked against the force field's template.
pub(crate) fn state_with_layout(cx: &settee_core::InitCtx, layout: settee_core::Layout) -> settee_core::SimResult<settee_core::StateId> {
    let s = cx.require_state()?;
    match template_error(cx, s, layout) {
        Some(e) => Err(e.hint(format!("{} needs a {} mechanical state", cx.entry().class.name, layout.name()))),
        None => Ok(s),
    }
}

/// The error for a state `s` whose template is not the force field's `layout` (`None` when it
/// is).
pub(crate) fn template_error(cx: &settee_core::InitCtx, s: settee_core::StateId, layout: settee_core::Layout) -> Option<settee_core::SimError> {
    let l = cx.state_layout(s);
    (l != layout).then(|| cx.error(format!("the mechanical state is a {} state but the force field has template {}", l.name(), layout.name())))
}
