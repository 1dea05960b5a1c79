//! `IdentityMapping`: the output copies the input element by element (spec §5.2). For a rigid or
//! `Vec6` input mapped to a vector output, the leading components are copied: the centre, the
//! linear velocity, and forces are added to the linear part.

use settee_core::component::{Mapping, SparseRows};
use settee_core::ConstraintRows;
use settee_core::{Component, InitCtx, Layout, SimResult, StateId};

use crate::common::{
    apply_to_visual_at_init, check_layouts, check_len, finish_init, mapping_ports, resolve_ports, selection_jacobian, visual_rest_positions, Ports,
};

const TEMPLATES: &[(Layout, Layout)] = &[
    (Layout::Vec3, Layout::Vec3),
    (Layout::Vec2, Layout::Vec2),
    (Layout::Vec1, Layout::Vec1),
    (Layout::Vec6, Layout::Vec3),
    (Layout::Vec6, Layout::Vec6),
    (Layout::Rigid3, Layout::Rigid3),
    (Layout::Rigid2, Layout::Rigid2),
    (Layout::Rigid3, Layout::Vec3),
    (Layout::Rigid2, Layout::Vec2),
];

crate::common::mapping_class! {
    {
        name = "IdentityMapping", module = "Sofa.Component.Mapping.Linear",
        description = "Maps each input element to the output element of the same index (rigid inputs give their centre).",
        templates = [
            "Vec3d,Vec3d",
            "Vec2d,Vec2d",
            "Vec1d,Vec1d",
            "Vec6d,Vec3d",
            "Vec6d,Vec6d",
            "Rigid3d,Rigid3d",
            "Rigid2d,Rigid2d",
            "Rigid3d,Vec3d",
            "Rigid2d,Vec2d",
        ],
        default_template = "Vec3d,Vec3d",
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct IdentityMapping {
        ports: Ports,
        /// Number of mapped elements (the input size at init).
        n: usize,
        /// Coordinate and derivative sizes of the input and output elements.
        cs: (usize, usize),
        ds: (usize, usize),
    }
}

impl IdentityMapping {
    /// A mapping between two states of `n` elements (for tests and programmatic use).
    pub fn between(input: StateId, in_layout: Layout, output: StateId, out_layout: Layout, n: usize) -> IdentityMapping {
        IdentityMapping {
            ports: Ports::direct(&[input], in_layout, output, out_layout),
            n,
            cs: (in_layout.coord_size(), out_layout.coord_size()),
            ds: (in_layout.deriv_size(), out_layout.deriv_size()),
        }
    }

    fn copy(n: usize, out: &mut [f64], input: &[f64], (ki, ko): (usize, usize)) {
        let k = ki.min(ko);
        for i in 0..n {
            out[i * ko..i * ko + k].copy_from_slice(&input[i * ki..i * ki + k]);
        }
    }
}

impl Component for IdentityMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_ports(cx, false)?;
        let Some(out_layout) = self.ports.out_layout else {
            // A visual model: its vertex i follows input element i (the first three
            // coordinates), moved only by the visual update.
            let Some(rest) = visual_rest_positions(cx.scene, &self.ports) else { return Ok(()) };
            let in_layout = self.ports.in_layouts[0];
            self.n = cx.state_size(self.ports.inputs[0]).min(rest.len() / 3);
            self.cs = (in_layout.coord_size(), 3);
            self.ds = (in_layout.deriv_size(), 3);
            return apply_to_visual_at_init(self, cx.scene);
        };
        check_layouts(cx, &self.ports, TEMPLATES)?;
        let in_layout = self.ports.in_layouts[0];
        self.n = cx.state_size(self.ports.inputs[0]);
        self.cs = (in_layout.coord_size(), out_layout.coord_size());
        self.ds = (in_layout.deriv_size(), out_layout.deriv_size());
        finish_init(cx, self.n, self)
    }

    /// Point changes resize the input and the output together (every state following the
    /// changed container is resized with the same log): the mapping then maps the new size. A visual model output has no state of its own. An output left at another
    /// size (it follows another topology) cannot be mapped one to one any more.
    fn topology_changed(
        &mut self,
        cx: &mut InitCtx,
        _topology: settee_core::ComponentId,
        changes: &[settee_core::topology_change::TopologyChange],
    ) -> SimResult<settee_core::topology_change::Follow> {
        let Some(&input) = self.ports.inputs.first() else { return Ok(settee_core::topology_change::Follow::NotConcerned) };
        let n = settee_core::topology_change::state_size_after(changes, cx.state_size(input));
        if let Some(out) = self.ports.output {
            let m = settee_core::topology_change::state_size_after(changes, cx.state_size(out));
            if m != n {
                return Err(cx
                    .error(format!("after the topological change the input has {n} elements but the output has {m}"))
                    .hint("the input and output states must follow the same topology (declare the output in a child node without its own topology, or with a topological mapping of the input's)"));
            }
        }
        self.n = n;
        Ok(settee_core::topology_change::Follow::Followed)
    }
}

impl Mapping for IdentityMapping {
    mapping_ports!();

    fn visual_output(&self) -> Option<settee_core::ComponentId> {
        self.ports.visual
    }

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        check_len("the input positions", inputs[0], self.n, self.cs.0)?;
        check_len("the output positions", out, self.n, self.cs.1)?;
        Self::copy(self.n, out, inputs[0], self.cs);
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        check_len("the input velocities", inputs[0], self.n, self.ds.0)?;
        check_len("the output velocities", out, self.n, self.ds.1)?;
        Self::copy(self.n, out, inputs[0], self.ds);
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        let (ki, ko) = self.ds;
        check_len("the input forces", inputs[0], self.n, ki)?;
        check_len("the output forces", out, self.n, ko)?;
        let k = ki.min(ko);
        let f = &mut *inputs[0];
        for i in 0..self.n {
            for c in 0..k {
                f[i * ki + c] += out[i * ko + c];
            }
        }
        Ok(())
    }

    /// Row entries copied onto the same DOFs (SOFA's `applyJT` on a MatrixDeriv).
    fn apply_jt_constraints(&mut self, inputs: &mut [&mut ConstraintRows], out: &ConstraintRows) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        let (ki, ko) = self.ds;
        let k = ki.min(ko);
        let mut block = vec![0.0; ki];
        for (row, entries) in out.rows() {
            for (dof, b) in entries {
                block[..k].copy_from_slice(&b[..k]);
                inputs[0].add(row, dof, &block);
            }
        }
        Ok(())
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let (ki, ko) = self.ds;
        let forces = self.ports.map_forces;
        Ok(vec![selection_jacobian(self.n * ko, self.n * ki, ko, ki, |i| forces.then_some(i))])
    }
}
