//! `CenterOfMassMapping` (Rigid3d → Vec3d): one point at the centre of mass of the input frames,
//! `x = Σ m_k·c_k / M`, with the masses `m_k` of the mass component of the input's node
//! (`M = Σ m_k`, measured at init). Velocities follow the same weights; a force `f` on the point
//! gives each frame the force `(m_k/M)·f` and no torque.
//!
//! The element masses are read from the mass component's product `M·e` with unit translations
//! `e` (SOFA's `getElementMass`): the mass of a Rigid3 element is the factor of its translation.

use settee_core::component::{Mapping, Mass, SparseRows};
use settee_core::role;
use settee_core::{Component, InitCtx, Layout, SimError, SimResult, StateId};

use crate::common::{check_layouts, check_len, finish_init, mapping_ports, resolve_ports, Ports};

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Rigid3, Layout::Vec3)];

crate::common::mapping_class! {
    {
        name = "CenterOfMassMapping", module = "Sofa.Component.Mapping.Linear",
        description = "Maps Rigid3 frames to one point at their centre of mass (masses of the input's mass component).",
        templates = ["Rigid3d,Vec3d"],
        default_template = "Rigid3d,Vec3d",
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct CenterOfMassMapping {
        ports: Ports,
        /// Mass of each input frame.
        masses: Vec<f64>,
        total: f64,
        /// Points of the output (only the first is mapped, as in SOFA).
        n_out: usize,
    }
}

impl CenterOfMassMapping {
    /// A mapping built directly (tests): the masses of the input frames.
    pub fn build(input: StateId, output: StateId, masses: Vec<f64>) -> CenterOfMassMapping {
        let total = masses.iter().sum();
        CenterOfMassMapping { ports: Ports::direct(&[input], Layout::Rigid3, output, Layout::Vec3), masses, total, n_out: 1 }
    }

    fn check(&self, what: &str, input: &[f64], k: usize, output: &[f64]) -> SimResult {
        if self.total == 0.0 {
            return Err(SimError::new("CenterOfMassMapping: the input frames have no mass").hint("add a mass component to the input's node"));
        }
        check_len(&format!("the input {what}"), input, self.masses.len(), k)?;
        check_len(&format!("the output {what}"), output, 1, 3)
    }
}

impl Component for CenterOfMassMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_ports(cx, false)?;
        let Some(output) = self.ports.output else { return Ok(()) };
        check_layouts(cx, &self.ports, TEMPLATES)?;
        let input = self.ports.inputs[0];
        let n = cx.state_size(input);
        let node = cx.scene.store.get(input).node;
        let mass = cx.scene.find_local(node, role::MASS).and_then(|m| cx.scene.role::<dyn Mass>(m));
        let Some(mass) = mass else {
            return Err(cx.error("no mass found for the input frames").hint("add a mass (e.g. UniformMass) next to the input MechanicalObject"));
        };
        let mut masses = Vec::with_capacity(n);
        let mut e = vec![0.0; 6 * n];
        let mut res = vec![0.0; 6 * n];
        for k in 0..n {
            e[6 * k] = 1.0;
            res.fill(0.0);
            mass.add_mdx(&mut res, &e, 1.0);
            e[6 * k] = 0.0;
            masses.push(res[6 * k]);
        }
        self.total = masses.iter().sum();
        self.masses = masses;
        if self.total == 0.0 {
            return Err(cx.error("the input frames have no mass (total 0)"));
        }
        self.n_out = cx.state_size(output).max(1);
        finish_init(cx, self.n_out, self)
    }
}

impl Mapping for CenterOfMassMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        self.check("positions", x, 7, out)?;
        let mut c = [0.0; 3];
        for (k, m) in self.masses.iter().enumerate() {
            for a in 0..3 {
                c[a] += x[7 * k + a] * m;
            }
        }
        for a in 0..3 {
            out[a] = c[a] / self.total;
        }
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let v = inputs[0];
        self.check("velocities", v, 6, out)?;
        let mut c = [0.0; 3];
        for (k, m) in self.masses.iter().enumerate() {
            for a in 0..3 {
                c[a] += v[6 * k + a] * m;
            }
        }
        for a in 0..3 {
            out[a] = c[a] / self.total;
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        let f = &mut *inputs[0];
        self.check("forces", f, 6, out)?;
        for (k, m) in self.masses.iter().enumerate() {
            let w = m / self.total;
            for a in 0..3 {
                f[6 * k + a] += out[a] * w;
            }
        }
        Ok(())
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let mut j = SparseRows::new(3 * self.n_out, 6 * self.masses.len());
        if self.ports.map_forces {
            for (k, m) in self.masses.iter().enumerate() {
                for a in 0..3 {
                    j.rows[a].push((6 * k + a, m / self.total));
                }
            }
        }
        Ok(vec![j])
    }
}
