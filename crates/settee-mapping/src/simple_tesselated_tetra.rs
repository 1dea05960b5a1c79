//! `SimpleTesselatedTetraMechanicalMapping` (Vec3d → Vec3d): the states of the points a
//! `SimpleTesselatedTetraTopologicalMapping` creates — the input points, then the midpoint of each
//! edge of the input topology (`x = (x_a + x_b)/2`, forces split half and half).
//!
//! As in SOFA, the topological mapping is the first `SimpleTesselatedTetraTopologicalMapping`
//! found from this node upwards; its `input` topology (default: its parent node's topology)
//! gives the edges, in the order it numbered the midpoints.

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, NodeId, Scene, SimResult, StateId};

use crate::common::{check_layouts, check_len, finish_init, mapping_ports, resolve_ports, Ports};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec3, Layout::Vec3)];

crate::common::mapping_class! {
    {
        name = "SimpleTesselatedTetraMechanicalMapping", module = "Sofa.Component.Mapping.Linear",
        description = "Maps the input points and the midpoints of the input topology's edges (the points of SimpleTesselatedTetraTopologicalMapping).",
        templates = ["Vec3d,Vec3d"],
        default_template = "Vec3d,Vec3d",
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct SimpleTesselatedTetraMechanicalMapping {
        ports: Ports,
        n_in: usize,
        /// The input topology's edges: output point `n_in + e` is the midpoint of edge `e`.
        edges: Vec<[usize; 2]>,
    }
}

/// The first object of class `class` from `node` upwards (SOFA's `getContext()->get<T>()`).
fn find_up_class(scene: &Scene, node: NodeId, class: &str) -> Option<settee_core::ComponentId> {
    let mut cur = Some(node);
    while let Some(n) = cur {
        if let Some(c) = scene.node(n).objects.iter().copied().find(|c| scene.entry(*c).class.name == class) {
            return Some(c);
        }
        cur = scene.node(n).parent();
    }
    None
}

impl SimpleTesselatedTetraMechanicalMapping {
    /// A mapping built directly (tests): `n_in` input points and the input's edges.
    pub fn build(input: StateId, output: StateId, n_in: usize, edges: Vec<[usize; 2]>) -> Self {
        SimpleTesselatedTetraMechanicalMapping { ports: Ports::direct(&[input], Layout::Vec3, output, Layout::Vec3), n_in, edges }
    }

    fn n_out(&self) -> usize {
        self.n_in + self.edges.len()
    }

    fn check(&self, what: &str, input: &[f64], output: &[f64]) -> SimResult {
        check_len(&format!("the input {what}"), input, self.n_in, 3)?;
        check_len(&format!("the output {what}"), output, self.n_out(), 3)
    }

    /// `out = J·in` (positions and velocities alike).
    fn map(&self, out: &mut [f64], x: &[f64]) {
        out[..3 * self.n_in].copy_from_slice(&x[..3 * self.n_in]);
        for (e, [a, b]) in self.edges.iter().enumerate() {
            let o = 3 * (self.n_in + e);
            for c in 0..3 {
                out[o + c] = (x[3 * a + c] + x[3 * b + c]) * 0.5;
            }
        }
    }
}

impl Component for SimpleTesselatedTetraMechanicalMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_ports(cx, false)?;
        if self.ports.output.is_none() {
            return Ok(());
        }
        check_layouts(cx, &self.ports, TEMPLATES)?;
        let Some(tm) = find_up_class(cx.scene, cx.node(), "SimpleTesselatedTetraTopologicalMapping") else {
            return Err(cx
                .error("no SimpleTesselatedTetraTopologicalMapping found in this node or above")
                .hint("declare the topological mapping before this mapping, in this node or a parent"));
        };
        let tm_node = cx.scene.entry(tm).node;
        let topo = cx
            .scene
            .link_targets(tm, "input")
            .first()
            .copied()
            .or_else(|| cx.scene.node(tm_node).parent().and_then(|p| cx.scene.context_topology(p)));
        let Some(mesh) = topo.and_then(|t| cx.scene.mesh_of(t)) else {
            return Err(cx.error("the SimpleTesselatedTetraTopologicalMapping has no input topology"));
        };
        self.edges = mesh.edges.clone();
        self.n_in = cx.state_size(self.ports.inputs[0]);
        if let Some(e) = self.edges.iter().find(|e| e[0] >= self.n_in || e[1] >= self.n_in) {
            return Err(cx.error(format!("edge {e:?} of the input topology is beyond the input state's {} points", self.n_in)));
        }
        let n = self.n_out();
        finish_init(cx, n, self)
    }
}

impl Mapping for SimpleTesselatedTetraMechanicalMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.check("positions", inputs[0], out)?;
        self.map(out, inputs[0]);
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        self.check("velocities", inputs[0], out)?;
        self.map(out, inputs[0]);
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        let f = &mut *inputs[0];
        self.check("forces", f, out)?;
        for (i, v) in f[..3 * self.n_in].iter_mut().enumerate() {
            *v += out[i];
        }
        for (e, [a, b]) in self.edges.iter().enumerate() {
            let o = 3 * (self.n_in + e);
            for c in 0..3 {
                f[3 * a + c] += out[o + c] * 0.5;
                f[3 * b + c] += out[o + c] * 0.5;
            }
        }
        Ok(())
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let mut j = SparseRows::new(3 * self.n_out(), 3 * self.n_in);
        if self.ports.map_forces {
            for r in 0..3 * self.n_in {
                j.rows[r].push((r, 1.0));
            }
            for (e, [a, b]) in self.edges.iter().enumerate() {
                for c in 0..3 {
                    j.rows[3 * (self.n_in + e) + c] = vec![(3 * a + c, 0.5), (3 * b + c, 0.5)];
                }
            }
        }
        Ok(vec![j])
    }
}
