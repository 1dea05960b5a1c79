//! Helpers shared by the tests of this crate and of the crates that test against it (no part of
//! a simulation): a force field with a constant dense stiffness matrix and a dense reference
//! solve.

use std::path::Path;

use settee_core::component::ForceField;
use settee_core::{component, Attr, Component, ComponentId, Factory, ForceIo, InitCtx, MatrixAccumulator, MechParams, Scene, SimResult, StateId};

/// f = -K (x - x0) with a constant dense K
///
/// `TestMatrixForceField`: `f = −K (x − x0)` with a constant dense row-major `K` over the
/// state's scalar DOFs (`stiffness`), `x0` the rest positions (or the positions).
#[component(
    name = "TestMatrixForceField",
    roles = [ForceField],
    templates = ["Vec3d"],
    template_rule = FromState,
    data = {
        /// dense row-major stiffness matrix (scalar DOFs)
        stiffness: Reals,
    },
)]
#[derive(Clone, Default)]
pub struct MatrixForceField {
    state: Option<StateId>,
    n: usize,
    k: Vec<f64>,
    x0: Vec<f64>,
}

impl Component for MatrixForceField {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        let s = cx.require_state()?;
        self.state = Some(s);
        self.x0 = cx.rest_or_position(s);
        self.n = self.x0.len();
        self.k = cx.data().get(Self::STIFFNESS).to_vec();
        if self.k.len() != self.n * self.n {
            return Err(cx.error("stiffness has the wrong size"));
        }
        Ok(())
    }
}

impl ForceField for MatrixForceField {
    fn states(&self) -> settee_core::StateSet {
        settee_core::StateSet::from_elem(self.state.unwrap(), 1)
    }
    fn add_force(&mut self, _p: &MechParams, io: &mut ForceIo) -> SimResult {
        let x = io.x[0];
        for (i, row) in self.k.chunks_exact(self.n).enumerate() {
            let s: f64 = row.iter().zip(x).zip(&self.x0).map(|((k, x), x0)| k * (x - x0)).sum();
            io.f[0][i] -= s;
        }
        Ok(())
    }
    fn add_dforce(&mut self, _p: &MechParams, io: &mut ForceIo, k_factor: f64, _b_factor: f64) -> SimResult {
        let dx = io.x[0];
        for (i, row) in self.k.chunks_exact(self.n).enumerate() {
            let s: f64 = row.iter().zip(dx).map(|(k, d)| k * d).sum();
            io.f[0][i] -= k_factor * s;
        }
        Ok(())
    }
    fn add_k_to_matrix(&self, _p: &MechParams, m: &mut MatrixAccumulator, k_factor: f64) -> SimResult {
        let s = self.state.unwrap();
        for i in 0..self.n {
            for j in 0..self.n {
                let v = self.k[i * self.n + j];
                if v != 0.0 {
                    m.add(s, i, s, j, -k_factor * v);
                }
            }
        }
        Ok(())
    }
}

/// Creates a component of `class` at the root (panics with the scene's messages when it cannot).
pub fn add_at_root(scene: &mut Scene, f: &Factory, class: &str, template: Option<&str>, attrs: &[(&str, &str)]) -> ComponentId {
    let attrs = attrs.iter().map(|(n, v)| Attr { name: n.to_string(), value: v.to_string(), pos: None }).collect();
    f.create(scene, Scene::ROOT, class, template, attrs, None, Path::new("."))
        .unwrap_or_else(|| panic!("could not create {class}: {:?}", scene.messages))
}

/// `A x = b` for a dense row-major `A`, by Gaussian elimination with partial pivoting.
pub fn dense_solve(a: &[f64], b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut m = a.to_vec();
    let mut x = b.to_vec();
    eliminate(&mut m, &mut x);
    for r in (0..n).rev() {
        let mut s = x[r];
        for k in r + 1..n {
            s -= m[r * n + k] * x[k];
        }
        x[r] = s / m[r * n + r];
    }
    x
}

/// The forward elimination of [`dense_solve`], in place: `m` (dense row-major, `n × n` with
/// `n = x.len()`) becomes upper triangular and `x` the matching right-hand side, rows swapped
/// for the largest pivot of each column.
pub fn eliminate(m: &mut [f64], x: &mut [f64]) {
    let n = x.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| m[i * n + c].abs().total_cmp(&m[j * n + c].abs())).unwrap();
        for k in 0..n {
            m.swap(c * n + k, p * n + k);
        }
        x.swap(c, p);
        for r in c + 1..n {
            let f = m[r * n + c] / m[c * n + c];
            for k in c..n {
                m[r * n + k] -= f * m[c * n + k];
            }
            x[r] -= f * x[c];
        }
    }
}
