//! `MechanicalObject`: holds positions, velocities, forces and the other state vectors.
//! The vectors live in the scene's state store; this component fills them at init.

use settee_core::role::{self, MechanicalState, Topology};
use settee_core::types::{quat_from_euler, quat_mul, quat_rotate, Layout};
use settee_core::{component, Component, InitCtx, SimResult, VecId};

/// SOFA reads the shorthand attributes as single-precision floats; the value they denote is that
/// float, printed here exactly so the Data parser reads the same number.
fn as_f32_text(text: &str) -> String {
    match settee_core::data::scan_real(text.trim()) {
        Some((v, _)) => format!("{}", v as f32 as f64),
        None => text.trim().to_string(),
    }
}

/// Folds SOFA's shorthand attributes (`dx`, `rx`, `sx`, `scale`, …) into their vector Data.
fn preparse(attrs: &mut Vec<(String, String)>) {
    let groups: [(&str, [&str; 3], &str); 5] = [
        ("translation", ["dx", "dy", "dz"], "0"),
        ("rotation", ["rx", "ry", "rz"], "0"),
        ("scale3d", ["sx", "sy", "sz"], "1"),
        ("translation2", ["dx2", "dy2", "dz2"], "0"),
        ("rotation2", ["rx2", "ry2", "rz2"], "0"),
    ];
    for (target, keys, missing) in groups {
        if keys.iter().any(|k| attrs.iter().any(|(n, _)| n == k)) {
            let parts: Vec<String> =
                keys.iter().map(|k| attrs.iter().find(|(n, _)| n == k).map(|(_, v)| as_f32_text(v)).unwrap_or_else(|| missing.to_string())).collect();
            attrs.retain(|(n, _)| !keys.contains(&n.as_str()));
            attrs.retain(|(n, _)| n != target);
            attrs.push((target.to_string(), parts.join(" ")));
        }
    }
    if let Some(i) = attrs.iter().position(|(n, _)| n == "scale") {
        let (_, v) = attrs.remove(i);
        let s = as_f32_text(&v);
        attrs.retain(|(n, _)| n != "scale3d");
        attrs.push(("scale3d".into(), format!("{s} {s} {s}")));
    }
}

/// Container of the state vectors (positions, velocities, forces, …) of a set of degrees of freedom.
///
/// The state container component.
#[component(
    module = "Sofa.Component.StateContainer",
    markers = [MechanicalState],
    templates = ["Vec1d", "Vec2d", "Vec3d", "Vec6d", "Rigid2d", "Rigid3d"],
    create = |args| MechanicalObject { layout: args.layout.unwrap_or(Layout::Vec3) },
    preparse = preparse,
    data = {
        /// position coordinates of the degrees of freedom
        position: Coords,
        /// velocity coordinates of the degrees of freedom
        velocity: Derivs,
        /// force vector of the degrees of freedom
        force: Derivs,
        /// rest position coordinates of the degrees of freedom
        rest_position: Coords,
        /// external forces, cleared at the end of every step
        externalForce: Derivs,
        /// dx vector of the degrees of freedom
        derivX: Derivs,
        /// free motion position coordinates
        free_position: Coords,
        /// free motion velocity coordinates
        free_velocity: Derivs,
        /// reset position coordinates
        reset_position: Coords,
        /// reset velocity coordinates
        reset_velocity: Derivs,
        /// optional scaling of rest position coordinates (to simulate pre-existing internal stress)
        restScale: Real = "1",
        /// use the node's mesh topology to initialise positions when no topology link is given
        useTopology: Bool = "true",
        /// translation of the DOFs (attributes dx dy dz set one component)
        translation: Fixed(3) = "0 0 0",
        /// rotation of the DOFs, Euler angles in degrees (attributes rx ry rz)
        rotation: Fixed(3) = "0 0 0",
        /// scale of the DOFs in 3 dimensions (attributes sx sy sz, or scale)
        scale3d: Fixed(3) = "1 1 1",
        /// translation applied after the rest position is stored (dx2 dy2 dz2)
        translation2: Fixed(3) = "0 0 0",
        /// rotation applied after the rest position is stored (rx2 ry2 rz2)
        rotation2: Fixed(3) = "0 0 0",
        /// number of DOFs
        size: Int = "1",
        /// capacity hint for the vectors
        reserve: Int = "0",
        /// display the DOFs (rendering only)
        showObject: Bool = "false",
        /// scale of the displayed DOFs (rendering only)
        showObjectScale: Real = "0.1",
        /// display the DOF indices (rendering only)
        showIndices: Bool = "false",
        /// scale of the displayed indices (rendering only)
        showIndicesScale: Real = "1",
        /// display velocities (rendering only)
        showVectors: Bool = "false",
        /// scale of the displayed velocities (rendering only)
        showVectorsScale: Real = "0.0001",
        /// display mode (rendering only)
        drawMode: Int = "0",
        /// display colour (rendering only)
        #[alias("color")]
        showColor: Color = "white",
    },
    links = {
        /// topology whose points initialise the positions
        topology: Topology,
    },
)]
#[derive(Clone)]
pub struct MechanicalObject {
    layout: Layout,
}

impl Component for MechanicalObject {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let layout = self.layout;
        let (cs, ds) = (layout.coord_size(), layout.deriv_size());
        let d = cx.data();
        let mut pos = d.get(Self::POSITION).to_vec();
        let mut vel = d.get(Self::VELOCITY).to_vec();
        let rest = d.get(Self::REST_POSITION).to_vec();
        let pos_set = d.is_given(Self::POSITION);
        let size_set = d.is_given(Self::SIZE);
        let size_attr = d.get(Self::SIZE).max(0) as usize;
        if d.is_given(Self::SIZE) {
            // A state holds about nine vectors of coordinates or derivatives (position, rest,
            // free position, velocity, force, dx, …): checked before any is allocated.
            let per_dof = 8 * (3 * layout.coord_size() + 6 * layout.deriv_size()) as u128;
            settee_core::budget::check(size_attr as u128, per_dof, &format!("MechanicalObject size={size_attr}"))
                .map_err(|e| cx.error(e.0.message.clone()).hint(e.0.hint.clone().unwrap_or_default()))?;
        }
        let rest_scale = d.get(Self::REST_SCALE);
        let (translation, rotation, scale3d) = (d.get(Self::TRANSLATION), d.get(Self::ROTATION), d.get(Self::SCALE3D));
        let (translation2, rotation2) = (d.get(Self::TRANSLATION2), d.get(Self::ROTATION2));

        // Topology: explicit link, else the node's own mesh topology.
        let topology = cx.link_targets("topology").first().copied().or_else(|| {
            if cx.data().get(Self::USE_TOPOLOGY) {
                cx.scene.find_local(cx.node(), role::TOPOLOGY)
            } else {
                None
            }
        });

        if rest.len() / cs > pos.len() / cs {
            pos = rest.clone();
        }
        let npos = pos.len() / cs;
        let nvel = vel.len() / ds;
        let size;
        if npos <= 1 && nvel <= 1 {
            let topo_points = topology.and_then(|t| cx.scene.mesh_of(t)).map(|m| m.points.clone()).filter(|p| !p.is_empty());
            if let Some(points) = topo_points {
                size = points.len();
                pos = vec![0.0; size * cs];
                for (i, p) in points.iter().enumerate() {
                    let e = &mut pos[i * cs..(i + 1) * cs];
                    let k = layout.spatial_size();
                    e[..k].copy_from_slice(&p[..k]);
                    if layout == Layout::Rigid3 {
                        e[6] = 1.0;
                    }
                }
                vel = replicate_last(&vel, ds, size);
            } else if pos_set && npos == 0 {
                size = 0;
            } else {
                size = npos.max(if size_set { size_attr } else { 1 }).max(nvel);
                pos = extend_default(pos, cs, size, layout);
                vel = replicate_last(&vel, ds, size);
            }
        } else {
            size = npos.max(nvel).max(if size_set { size_attr } else { 0 });
            pos = extend_default(pos, cs, size, layout);
            vel = replicate_last(&vel, ds, size);
        }

        // reinit: scale, rotation, translation of the positions.
        transform(&mut pos, layout, scale3d, rotation, translation);

        let rest = if rest.len() == pos.len() {
            rest
        } else if rest_scale != 1.0 {
            let mut r = pos.clone();
            for e in r.chunks_exact_mut(cs) {
                for c in &mut e[..layout.spatial_size()] {
                    *c *= rest_scale;
                }
            }
            r
        } else {
            pos.clone()
        };
        transform(&mut pos, layout, [1.0; 3], rotation2, translation2);

        // SOFA's `size` Data follows the state's size once it is known.
        cx.data_mut().put(Self::SIZE, size as i64);
        let s = cx.entry().state.expect("mechanical state created at parse time");
        let st = cx.scene.store.get_mut(s);
        st.size = size;
        st.set_vec(VecId::POSITION, pos);
        st.set_vec(VecId::VELOCITY, vel);
        st.set_vec(VecId::REST_POSITION, rest);
        st.write(VecId::FORCE);
        st.write(VecId::DX);
        for (field, id) in
            [(Self::FREE_POSITION, VecId::FREE_POSITION), (Self::FREE_VELOCITY, VecId::FREE_VELOCITY), (Self::EXTERNAL_FORCE, VecId::EXTERNAL_FORCE)]
        {
            let v = cx.data().get(field).to_vec();
            if v.len() == size * st_elem(layout, id) && !v.is_empty() {
                cx.scene.store.get_mut(s).set_vec(id, v);
            }
        }
        Ok(())
    }
}

fn st_elem(layout: Layout, id: VecId) -> usize {
    match id.kind {
        settee_core::VecKind::Coord => layout.coord_size(),
        settee_core::VecKind::Deriv => layout.deriv_size(),
    }
}

/// Pads a coordinate list to `n` elements with the origin (identity orientation for rigids).
fn extend_default(mut v: Vec<f64>, cs: usize, n: usize, layout: Layout) -> Vec<f64> {
    let old = v.len() / cs;
    v.truncate(old * cs);
    for _ in old..n {
        let mut e = vec![0.0; cs];
        if layout == Layout::Rigid3 {
            e[6] = 1.0;
        }
        v.extend(e);
    }
    v
}

/// Fills a derivative list up to `n` elements by repeating its last element (zeros if empty).
fn replicate_last(v: &[f64], ds: usize, n: usize) -> Vec<f64> {
    let have = v.len() / ds;
    let mut out = v[..have.min(n) * ds].to_vec();
    let last: Vec<f64> = if have > 0 { v[(have - 1) * ds..have * ds].to_vec() } else { vec![0.0; ds] };
    while out.len() < n * ds {
        out.extend_from_slice(&last);
    }
    out
}

/// Scales, rotates (Euler angles in degrees) then translates coordinates, as SOFA's reinit.
fn transform(pos: &mut [f64], layout: Layout, scale: [f64; 3], rotation_deg: [f64; 3], translation: [f64; 3]) {
    let cs = layout.coord_size();
    let k = layout.spatial_size();
    if scale != [1.0; 3] {
        for e in pos.chunks_exact_mut(cs) {
            for c in 0..k {
                e[c] *= scale[c];
            }
        }
    }
    if rotation_deg != [0.0; 3] {
        let to_rad = std::f64::consts::PI / 180.0;
        let q = quat_from_euler([rotation_deg[0] * to_rad, rotation_deg[1] * to_rad, rotation_deg[2] * to_rad]);
        for e in pos.chunks_exact_mut(cs) {
            let mut p = [0.0; 3];
            p[..k].copy_from_slice(&e[..k]);
            let r = quat_rotate(q, p);
            e[..k].copy_from_slice(&r[..k]);
            if layout == Layout::Rigid3 {
                let o = quat_mul(q, [e[3], e[4], e[5], e[6]]);
                e[3..7].copy_from_slice(&o);
            }
        }
    }
    if translation != [0.0; 3] {
        for e in pos.chunks_exact_mut(cs) {
            for c in 0..k {
                e[c] += translation[c];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorthand_attributes_fold_into_vectors() {
        let mut a = vec![("dx".to_string(), "60".to_string()), ("scale".to_string(), "2".to_string())];
        preparse(&mut a);
        assert!(a.contains(&("translation".to_string(), "60 0 0".to_string())));
        let mut b = vec![("scale".to_string(), "0.3".to_string())];
        preparse(&mut b);
        assert_eq!(b[0].1, format!("{0} {0} {0}", 0.3f32 as f64));
        assert!(a.contains(&("scale3d".to_string(), "2 2 2".to_string())));
    }

    #[test]
    fn transform_order_is_scale_rotate_translate() {
        let mut p = vec![1.0, 0.0, 0.0];
        transform(&mut p, Layout::Vec3, [2.0, 1.0, 1.0], [0.0, 0.0, 90.0], [0.0, 0.0, 5.0]);
        assert!((p[0]).abs() < 1e-12 && (p[1] - 2.0).abs() < 1e-12 && (p[2] - 5.0).abs() < 1e-12, "{p:?}");
    }

    #[test]
    fn velocities_replicate_last_given() {
        assert_eq!(replicate_last(&[1.0, 2.0, 3.0], 3, 3), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
        assert_eq!(replicate_last(&[], 3, 2), vec![0.0; 6]);
    }
}
