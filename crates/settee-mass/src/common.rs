//! What the masses of this crate write alike: the force-field side of a mass (gravity is its
//! only force, it has no stiffness), gravity on the velocities, diagonal matrix entries, and the
//! checks of their state and topology at init.

use settee_core::{data_group, DataSet, InitCtx, Layout, MatrixAccumulator, MeshData, SimResult, StateId};

use crate::geometry::ElementType;

/// The Data of the masses that display their center of gravity (rendering only).
#[data_group(data = {
    /// display the center of gravity (rendering only)
    showGravityCenter: Bool = "false",
    /// axis size factor (rendering only)
    showAxisSizeFactor: Real = "1",
})]
pub struct GravityCenterData;

/// The last Data of the masses (SOFA's `Mass`): gravity on the velocities, Rayleigh damping.
#[data_group(data = {
    /// add gravity to the velocity directly instead of as a force
    separateGravity: Bool = "false",
    /// Rayleigh damping coefficient related to mass
    rayleighMass: Real = "0",
    /// Rayleigh damping coefficient related to stiffness (unused by masses)
    rayleighStiffness: Real = "0",
})]
pub struct MassData;

impl MassData {
    /// `(separateGravity, rayleighMass, rayleighStiffness)`.
    pub fn read(d: &DataSet) -> (bool, f64, f64) {
        (d.get(Self::SEPARATE_GRAVITY), d.get(Self::RAYLEIGH_MASS), d.get(Self::RAYLEIGH_STIFFNESS))
    }
}

/// `impl ForceField` for a mass of this crate: its force is its weight (the type's inherent
/// `fn weight(&mut self, &MechParams, &mut ForceIo) -> SimResult`), skipped when the mass adds
/// gravity to the velocities instead (`Mass::separate_gravity`); `add_dforce` adds nothing. The
/// type has a field `state: Option<StateId>`; its Rayleigh stiffness coefficient is the field
/// `rayleigh_stiffness`, or the expression given as `|m| …` (`m`: the mass).
macro_rules! mass_force_field {
    ($t:ty) => {
        $crate::common::mass_force_field!($t, |m| m.rayleigh_stiffness);
    };
    ($t:ty, |$m:tt| $rayleigh_stiffness:expr) => {
        impl settee_core::ForceField for $t {
            fn states(&self) -> settee_core::StateSet {
                self.state.into_iter().collect()
            }

            fn add_force(&mut self, p: &settee_core::MechParams, io: &mut settee_core::ForceIo) -> settee_core::SimResult {
                if settee_core::component::Mass::separate_gravity(self) {
                    return Ok(());
                }
                self.weight(p, io)
            }

            fn add_dforce(&mut self, _p: &settee_core::MechParams, _io: &mut settee_core::ForceIo, _k: f64, _b: f64) -> settee_core::SimResult {
                Ok(())
            }

            fn rayleigh_stiffness(&self) -> f64 {
                let $m = self;
                $rayleigh_stiffness
            }

            fn is_mass(&self) -> bool {
                true
            }
        }
    };
}
pub(crate) use mass_force_field;

/// The `Mass` methods every mass of this crate writes alike, to put inside its `impl Mass`: the
/// state set at init (field `state: Option<StateId>`), whether the matrix is diagonal and whether
/// gravity goes to the velocities (the expressions given as `|m| …`, `m`: the mass), and the
/// Rayleigh mass coefficient (field `rayleigh_mass`).
macro_rules! mass_items {
    (is_diagonal: |$d:tt| $diagonal:expr, separate_gravity: |$g:tt| $separate_gravity:expr) => {
        fn state(&self) -> settee_core::StateId {
            self.state.expect("initialised")
        }

        fn is_diagonal(&self) -> bool {
            let $d = self;
            $diagonal
        }

        fn separate_gravity(&self) -> bool {
            let $g = self;
            $separate_gravity
        }

        fn rayleigh_mass(&self) -> f64 {
            self.rayleigh_mass
        }
    };
}
pub(crate) use mass_items;

/// Gravity as a force: `f[i·ds + c] += weight(g_c, m_i)` on the spatial components `c` of the
/// DOFs `(i, m_i)` that `dofs(n)` lists for the `n` DOFs of `f`.
pub(crate) fn add_weights<I: Iterator<Item = (usize, f64)>>(
    f: &mut [f64],
    layout: Layout,
    g: [f64; 3],
    dofs: impl FnOnce(usize) -> I,
    weight: impl Fn(f64, f64) -> f64,
) {
    let ds = layout.deriv_size();
    let k = layout.spatial_size();
    let n = f.len() / ds;
    for (i, m) in dofs(n) {
        for c in 0..k {
            f[i * ds + c] += weight(g[c], m);
        }
    }
}

/// `v_i += g·h` on the spatial components (the first `k` of the `ds` reals) of every DOF.
pub(crate) fn add_gravity_to_v(v: &mut [f64], ds: usize, k: usize, g: [f64; 3], dt: f64) {
    for e in v.chunks_exact_mut(ds) {
        for c in 0..k {
            e[c] += g[c] * dt;
        }
    }
}

/// `value` on the diagonal of the `ds × ds` block of DOF `i`.
pub(crate) fn add_diagonal(acc: &mut MatrixAccumulator, s: StateId, i: usize, ds: usize, value: f64) {
    for c in 0..ds {
        acc.add(s, i * ds + c, s, i * ds + c, value);
    }
}

/// The mechanical state of the mass, which must have the mass's template `layout` (else an
/// error with `hint`).
pub(crate) fn state_of_layout(cx: &InitCtx, layout: Layout, hint: &str) -> SimResult<StateId> {
    let s = cx.require_state()?;
    let sl = cx.state_layout(s);
    if sl != layout {
        return Err(cx.error(format!("the mechanical state has template {}, but this mass is {}", sl.name(), layout.name())).hint(hint));
    }
    Ok(s)
}

/// The topology of a mass of class `class` (which integrates over its elements), its mesh and
/// the type of the elements it integrates over.
pub(crate) fn element_topology(cx: &InitCtx, class: &str) -> SimResult<(settee_core::ComponentId, MeshData, ElementType)> {
    let topo = cx.topology().ok_or_else(|| {
        cx.error("no topology found in this node or its ancestors").hint(format!(
            "{class} integrates over the elements of a topology: add one (MeshTopology, RegularGridTopology…) or set `topology=\"@...\"`"
        ))
    })?;
    let mesh = cx.require_mesh()?;
    let t = ElementType::of(&mesh).ok_or_else(|| {
        cx.error(format!("{} is empty (no hexahedra, tetrahedra, quads, triangles or edges)", cx.scene.entry(topo).label()))
            .hint(format!("{class} needs elements to integrate the mass over; use UniformMass for point sets"))
    })?;
    Ok((topo, mesh, t))
}

/// Every vertex of the elements of type `t` must be one of the `ndof` DOFs of the state.
pub(crate) fn check_element_vertices(cx: &InitCtx, t: ElementType, mesh: &MeshData, ndof: usize) -> SimResult {
    if let Some((k, v, bad)) = t.first_vertex_beyond(mesh, ndof) {
        return Err(cx
            .error(format!("{} {k} {v:?} refers to point {bad}, but the mechanical state has {ndof} DOFs", t.name()))
            .hint("the topology and the MechanicalObject must describe the same points"));
    }
    Ok(())
}
