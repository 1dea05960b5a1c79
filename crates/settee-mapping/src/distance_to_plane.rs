//! `DistanceToPlaneMapping` (Vec3d, Vec2d, Vec6d, Rigid3d or Rigid2d → Vec1d): the signed
//! distance of each point (each frame's centre) to a plane, `d_i = x_i·n − p·n` with the unit
//! normal `n` (`planeNormal`, normalised at init) and a point `p` of the plane. Linear:
//! `J = nᵀ` per point, so a force `λ` gives the point `λ·n`.
//!
//! As in SOFA, the positions are first mapped at init with the normal as given, then the normal
//! is normalised (the scenes give unit normals).

use settee_core::component::{Mapping, SparseRows};
use settee_core::{Component, InitCtx, Layout, SimResult, StateId};

use crate::common::{apply_at_init, check_len, mapping_ports, resize_output, resolve_mechanical_ports, MappingData, Ports};

const TEMPLATES: &[(Layout, Layout)] = &[
    (Layout::Vec3, Layout::Vec1),
    (Layout::Vec2, Layout::Vec1),
    (Layout::Vec6, Layout::Vec1),
    (Layout::Rigid3, Layout::Vec1),
    (Layout::Rigid2, Layout::Vec1),
];

crate::common::mapping_class! {
    {
        name = "DistanceToPlaneMapping", module = "Sofa.Component.Mapping.Linear",
        description = "Maps each point (frame centre) to its signed distance to a plane.",
        templates = ["Vec3d,Vec1d", "Vec2d,Vec1d", "Vec6d,Vec1d", "Rigid3d,Vec1d", "Rigid2d,Vec1d"],
        default_template = "Vec3d,Vec1d",
        data = {
            /// Normal of the plane to compute the distance to
            planeNormal: Reals,
            /// A point belonging to the plane
            planePoint: Reals,
        },
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct DistanceToPlaneMapping {
        ports: Ports,
        n: usize,
        normal: Vec<f64>,
        point: Vec<f64>,
        /// Coordinate and derivative sizes of an input element (the position comes first).
        cs: usize,
        ds: usize,
    }
}

/// The number of position components of a layout (SOFA's `spatial_dimensions`).
fn spatial_dimensions(l: Layout) -> usize {
    match l {
        Layout::Vec1 => 1,
        Layout::Vec2 | Layout::Rigid2 => 2,
        Layout::Vec6 => 6,
        _ => 3,
    }
}

impl DistanceToPlaneMapping {
    /// A mapping built directly (tests): `n` points of `layout`, the plane (unit normal).
    pub fn build(input: StateId, output: StateId, layout: Layout, n: usize, normal: Vec<f64>, point: Vec<f64>) -> Self {
        DistanceToPlaneMapping {
            ports: Ports::direct(&[input], layout, output, Layout::Vec1),
            n,
            normal,
            point,
            cs: layout.coord_size(),
            ds: layout.deriv_size(),
        }
    }

    fn offset(&self) -> f64 {
        self.point.iter().zip(&self.normal).map(|(p, n)| p * n).sum()
    }
}

impl Component for DistanceToPlaneMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_mechanical_ports(cx, false, "a Vec1d MechanicalObject", TEMPLATES)?;
        let layout = self.ports.in_layouts[0];
        let sd = spatial_dimensions(layout);
        let d = cx.data();
        let (normal, point) = (d.get(Self::PLANE_NORMAL).to_vec(), d.get(Self::PLANE_POINT).to_vec());
        for (name, v) in [("planeNormal", &normal), ("planePoint", &point)] {
            if v.len() != sd {
                return Err(cx.error(format!("{name} has {} values; the input's points have {sd} coordinates", v.len())));
            }
        }
        let norm = normal.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm < f64::EPSILON {
            return Err(cx.error("planeNormal has null norm").hint("give the plane's normal, e.g. planeNormal=\"0 0 1\""));
        }
        (self.normal, self.point) = (normal.clone(), point);
        (self.cs, self.ds) = (layout.coord_size(), layout.deriv_size());
        self.n = cx.state_size(self.ports.inputs[0]);
        resize_output(cx.scene, &self.ports, self.n);
        let rest = cx.data().get(MappingData::APPLY_REST_POSITION);
        apply_at_init(self, cx.scene, rest)?;
        self.normal = normal.iter().map(|x| x / norm).collect();
        cx.data_mut().put(Self::PLANE_NORMAL, self.normal.clone());
        Ok(())
    }
}

impl Mapping for DistanceToPlaneMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let x = inputs[0];
        check_len("the input positions", x, self.n, self.cs)?;
        check_len("the output positions", out, self.n, 1)?;
        let off = self.offset();
        for (i, o) in out.iter_mut().enumerate().take(self.n) {
            let p = &x[i * self.cs..];
            *o = self.normal.iter().enumerate().map(|(k, nk)| p[k] * nk).sum::<f64>() - off;
        }
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let v = inputs[0];
        check_len("the input velocities", v, self.n, self.ds)?;
        check_len("the output velocities", out, self.n, 1)?;
        for (i, o) in out.iter_mut().enumerate().take(self.n) {
            let p = &v[i * self.ds..];
            *o = self.normal.iter().enumerate().map(|(k, nk)| p[k] * nk).sum::<f64>();
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        let f = &mut *inputs[0];
        check_len("the input forces", f, self.n, self.ds)?;
        check_len("the output forces", out, self.n, 1)?;
        for (i, l) in out.iter().enumerate().take(self.n) {
            for (k, nk) in self.normal.iter().enumerate() {
                f[i * self.ds + k] += nk * l;
            }
        }
        Ok(())
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let mut j = SparseRows::new(self.n, self.n * self.ds);
        if self.ports.map_forces {
            for (i, row) in j.rows.iter_mut().enumerate() {
                *row = self.normal.iter().enumerate().map(|(k, nk)| (i * self.ds + k, *nk)).collect();
            }
        }
        Ok(vec![j])
    }
}
