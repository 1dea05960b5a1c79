//! `SubsetMapping`: the output is a subset of the input elements, `out[i] = in[indices[i]]`
//! (spec §5.3). Without `indices`, a `first`/`last` range or, failing that, a nearest-point search
//! within `radius` builds them at init.

use settee_core::component::{Mapping, SparseRows};
use settee_core::role::Topology;
use settee_core::ConstraintRows;
use settee_core::{Component, InitCtx, Layout, SimResult, StateId, VecId};

use crate::common::{apply_at_init, check_layouts, check_len, mapping_ports, resize_output, resolve_ports, selection_jacobian, MappingData, Ports};

/// SOFA's `sofa::InvalidID` as an unsigned Data value.
const INVALID: i64 = u32::MAX as i64;

const TEMPLATES: &[(Layout, Layout)] = &[(Layout::Vec3, Layout::Vec3), (Layout::Vec1, Layout::Vec1), (Layout::Rigid3, Layout::Rigid3)];

crate::common::mapping_class! {
    with {
        /// link to the topology container
        topology: Topology,
    }
    {
        name = "SubsetMapping", module = "Sofa.Component.Mapping.Linear",
        description = "Maps a subset of the input elements: out[i] = in[indices[i]].",
        templates = ["Vec3d,Vec3d", "Vec1d,Vec1d", "Rigid3d,Rigid3d"],
        default_template = "Vec3d,Vec3d",
        data = {
            /// list of input indices
            indices: Indices,
            /// first index (use if indices are sequential)
            first: Int = "4294967295",
            /// last index (use if indices are sequential)
            last: Int = "4294967295",
            /// search radius to find corresponding points in case no indices are given
            radius: Real = "1e-5",
            /// Enable support of topological changes for indices (disable if it is linked from SubsetTopologicalMapping::pointD2S)
            handleTopologyChange: Bool = "true",
            /// True to ignore points that are not found in the input model, they will be treated as fixed points
            ignoreNotFound: Bool = "false",
            /// True to resize the output MechanicalState to match the size of indices
            resizeToModel: Bool = "false",
        },
    }
    /// The mapping.
    #[derive(Clone, Default)]
    pub struct SubsetMapping {
        ports: Ports,
        /// Input index of each output element (`None`: not found, the element keeps its rest position).
        indices: Vec<Option<usize>>,
        n_in: usize,
        cs: usize,
        ds: usize,
        /// Rest positions of the output at init (used for elements without input).
        rest_out: Vec<f64>,
    }
}

impl SubsetMapping {
    /// A mapping with explicit indices (for tests and programmatic use).
    pub fn with_indices(input: StateId, output: StateId, layout: Layout, n_in: usize, indices: Vec<usize>) -> SubsetMapping {
        SubsetMapping {
            ports: Ports::direct(&[input], layout, output, layout),
            indices: indices.into_iter().map(Some).collect(),
            n_in,
            cs: layout.coord_size(),
            ds: layout.deriv_size(),
            rest_out: Vec::new(),
        }
    }

    pub fn indices(&self) -> &[Option<usize>] {
        &self.indices
    }
}

impl Component for SubsetMapping {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.ports = resolve_ports(cx, false)?;
        let Some(out_layout) = self.ports.out_layout else { return Ok(()) };
        check_layouts(cx, &self.ports, TEMPLATES)?;
        let input = self.ports.inputs[0];
        let output = self.ports.output.expect("mechanical output");
        let n_in = cx.state_size(input);
        self.n_in = n_in;
        self.cs = out_layout.coord_size();
        self.ds = out_layout.deriv_size();
        let d = cx.data();
        let given: Vec<usize> = d.get(Self::INDICES).to_vec();
        let (first, last) = (d.get(Self::FIRST), d.get(Self::LAST));
        let radius = d.get(Self::RADIUS);
        let ignore_not_found = d.get(Self::IGNORE_NOT_FOUND);

        let mut indices: Vec<Option<usize>> = Vec::new();
        if given.is_empty() && first != INVALID {
            let mut first = first.max(0) as usize;
            let mut last = if last < 0 { usize::MAX } else { last as usize };
            if first >= n_in {
                first = 0;
            }
            if last >= n_in {
                last = n_in.wrapping_sub(1);
            }
            if last >= first && n_in > 0 {
                indices = (first..=last).map(Some).collect();
            }
        } else if given.is_empty() {
            // Nearest input point within `radius` of each output point (strictly closer replaces).
            let cs = self.cs;
            let sp = out_layout.spatial_size();
            let xin = cx.read_vec(input, VecId::POSITION).to_vec();
            let xout = cx.read_vec(output, VecId::POSITION).to_vec();
            let n_out = cx.state_size(output);
            for i in 0..n_out {
                let mut rmax = radius;
                let mut found = None;
                for j in 0..n_in {
                    let r: f64 = (0..sp).map(|c| (xout[i * cs + c] - xin[j * cs + c]).powi(2)).sum::<f64>().sqrt();
                    if r < rmax {
                        found = Some(j);
                        rmax = r;
                    }
                }
                if found.is_none() && !ignore_not_found {
                    cx.warn(format!("output point {i} not found in the input within a radius of {radius}: it stays at its rest position"));
                }
                indices.push(found);
            }
        } else {
            for (k, &i) in given.iter().enumerate() {
                if i < n_in || ignore_not_found {
                    indices.push(if i < n_in { Some(i) } else { None });
                } else {
                    cx.warn(format!("incorrect index {i} at position {k} (input size {n_in}): removed"));
                }
            }
        }
        let written: Vec<usize> = indices.iter().map(|i| i.unwrap_or(INVALID as usize)).collect();
        cx.data_mut().put(Self::INDICES, written);
        self.indices = indices;
        resize_output(cx.scene, &self.ports, self.indices.len());
        self.rest_out = cx.rest_or_position(output);
        let rest = cx.data().get(MappingData::APPLY_REST_POSITION);
        apply_at_init(self, cx.scene, rest)
    }
}

impl Mapping for SubsetMapping {
    mapping_ports!();

    fn apply(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let k = self.cs;
        check_len("the input positions", inputs[0], self.n_in, k)?;
        check_len("the output positions", out, self.indices.len(), k)?;
        for (i, idx) in self.indices.iter().enumerate() {
            let src = match idx {
                Some(j) => &inputs[0][j * k..(j + 1) * k],
                None if self.rest_out.len() >= (i + 1) * k => &self.rest_out[i * k..(i + 1) * k],
                None => continue,
            };
            out[i * k..(i + 1) * k].copy_from_slice(src);
        }
        Ok(())
    }

    fn apply_j(&mut self, out: &mut [f64], inputs: &[&[f64]]) -> SimResult {
        let k = self.ds;
        check_len("the input velocities", inputs[0], self.n_in, k)?;
        check_len("the output velocities", out, self.indices.len(), k)?;
        for (i, idx) in self.indices.iter().enumerate() {
            if let Some(j) = idx {
                out[i * k..(i + 1) * k].copy_from_slice(&inputs[0][j * k..(j + 1) * k]);
            }
        }
        Ok(())
    }

    fn apply_jt(&mut self, inputs: &mut [&mut [f64]], out: &[f64]) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        let k = self.ds;
        check_len("the input forces", inputs[0], self.n_in, k)?;
        check_len("the output forces", out, self.indices.len(), k)?;
        let f = &mut *inputs[0];
        for (i, idx) in self.indices.iter().enumerate() {
            if let Some(j) = idx {
                for c in 0..k {
                    f[j * k + c] += out[i * k + c];
                }
            }
        }
        Ok(())
    }

    /// Row entries moved to the input DOF each output point copies (SOFA's `applyJT` on a
    /// MatrixDeriv).
    fn apply_jt_constraints(&mut self, inputs: &mut [&mut ConstraintRows], out: &ConstraintRows) -> SimResult {
        if !self.ports.map_forces {
            return Ok(());
        }
        for (row, entries) in out.rows() {
            for (point, b) in entries {
                match self.indices.get(point) {
                    Some(Some(j)) => inputs[0].add(row, *j, b),
                    Some(None) => {}
                    None => {
                        return Err(settee_core::SimError::new(format!(
                            "a constraint row refers to point {point}, but the subset has {}",
                            self.indices.len()
                        )))
                    }
                }
            }
        }
        Ok(())
    }

    fn jacobians(&self) -> SimResult<Vec<SparseRows>> {
        let k = self.ds;
        let forces = self.ports.map_forces;
        Ok(vec![selection_jacobian(self.indices.len() * k, self.n_in * k, k, k, |i| if forces { self.indices[i] } else { None })])
    }
}
