//! `MeshSampler`: `number` points of a mesh spread uniformly — farthest point sampling from
//! point 0, then Lloyd relaxation (each sample replaced by the point of its Voronoi region
//! nearest the region's centroid) until nothing changes or `maxIter` passes.
//!
//! Distances are squared Euclidean distances, or with `edges` geodesic ones along the edges
//! (Dijkstra with SOFA's ordered queue of (distance, point)). Ties keep the first point found,
//! as SOFA's strict comparisons do.

use std::collections::BTreeSet;

use settee_core::role::Engine;
use settee_core::{component, Component, InitCtx, SimResult};

type V3 = [f64; 3];

fn dist2(a: V3, b: V3) -> f64 {
    (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2])
}

/// The sampler's state: the points, their neighbours (empty: Euclidean distances), the samples.
struct Sampler<'a> {
    pos: &'a [V3],
    ngb: Vec<Vec<usize>>,
    samples: Vec<usize>,
    distances: Vec<f64>,
    voronoi: Vec<usize>,
}

impl Sampler<'_> {
    fn compute_distances(&mut self) {
        let n = self.pos.len();
        self.distances = vec![f64::MAX; n];
        self.voronoi.resize(n, 0);
        if self.ngb.is_empty() {
            for i in 0..n {
                for (j, &s) in self.samples.iter().enumerate() {
                    let d = dist2(self.pos[i], self.pos[s]);
                    if d < self.distances[i] {
                        self.distances[i] = d;
                        self.voronoi[i] = j;
                    }
                }
            }
            return;
        }
        // Distances are non-negative: their bit patterns sort as the numbers do.
        let mut queue: BTreeSet<(u64, usize)> = BTreeSet::new();
        for (j, &s) in self.samples.iter().enumerate() {
            queue.insert((0f64.to_bits(), s));
            self.distances[s] = 0.0;
            self.voronoi[s] = j;
        }
        while let Some((_, v)) = queue.pop_first() {
            for k in 0..self.ngb[v].len() {
                let v2 = self.ngb[v][k];
                let d = self.distances[v] + dist2(self.pos[v], self.pos[v2]).sqrt();
                if self.distances[v2] > d {
                    queue.remove(&(self.distances[v2].to_bits(), v2));
                    self.voronoi[v2] = self.voronoi[v];
                    self.distances[v2] = d;
                    queue.insert((d.to_bits(), v2));
                }
            }
        }
    }

    fn farthest_point_sampling(&mut self, number: usize) {
        self.samples = vec![0];
        self.compute_distances();
        let nbc = number.min(self.pos.len());
        while self.samples.len() < nbc {
            let (mut dmax, mut imax) = (0.0, 0);
            for (i, &d) in self.distances.iter().enumerate() {
                if d > dmax {
                    dmax = d;
                    imax = i;
                }
            }
            if dmax == 0.0 {
                break;
            }
            self.samples.push(imax);
            self.compute_distances();
        }
    }

    fn lloyd(&mut self) -> bool {
        let (n, m) = (self.pos.len(), self.samples.len());
        let mut center = vec![[0.0; 3]; m];
        let mut count = vec![0usize; m];
        for (p, &r) in self.pos.iter().zip(&self.voronoi) {
            for (cc, pc) in center[r].iter_mut().zip(p) {
                *cc += pc;
            }
            count[r] += 1;
        }
        for (c, &k) in center.iter_mut().zip(&count) {
            *c = c.map(|x| x / k as f64);
        }
        let d: Vec<f64> = (0..n).map(|i| dist2(self.pos[i], center[self.voronoi[i]])).collect();
        let mut dmin: Vec<f64> = self.samples.iter().map(|&s| d[s]).collect();
        let mut changed = false;
        for (i, (&di, &r)) in d.iter().zip(&self.voronoi).enumerate() {
            if di < dmin[r] {
                dmin[r] = di;
                self.samples[r] = i;
                changed = true;
            }
        }
        self.compute_distances();
        changed
    }
}

/// The sample indices of `pos` (with `edges`, geodesic sampling).
pub fn sample(pos: &[V3], edges: &[[usize; 2]], number: usize, max_iter: usize) -> Vec<usize> {
    if pos.is_empty() {
        return Vec::new();
    }
    let mut ngb = Vec::new();
    if !edges.is_empty() {
        ngb = vec![Vec::new(); pos.len()];
        for &[a, b] in edges {
            ngb[a].push(b);
            ngb[b].push(a);
        }
    }
    let mut s = Sampler { pos, ngb, samples: Vec::new(), distances: Vec::new(), voronoi: Vec::new() };
    s.farthest_point_sampling(number);
    for _ in 0..max_iter {
        if !s.lloyd() {
            break;
        }
    }
    s.samples
}

/// Select uniformly distributed points on a mesh based on Euclidean or Geodesic distance measure.
#[component(
    module = "Sofa.Component.Engine.Select",
    markers = [Engine],
    templates = ["Vec3d"],
    create = |_| MeshSampler,
    data = {
        /// Sample number
        number: Int = "1",
        /// Input positions.
        position: RealTuples(3),
        /// Input edges for geodesic sampling (Euclidean distances are used if not specified).
        edges: IndexTuples(2),
        /// Max number of Lloyd iterations.
        maxIter: Int = "100",
        /// Computed sample indices.
        outputIndices: Indices,
        /// Computed sample coordinates.
        outputPosition: RealTuples(3),
    },
)]
#[derive(Clone)]
pub struct MeshSampler;

impl MeshSampler {
    fn update(&mut self, cx: &mut InitCtx) -> SimResult {
        let d = cx.data();
        let pos: Vec<V3> = d.get(Self::POSITION).chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
        let edges: Vec<[usize; 2]> = d.get(Self::EDGES).chunks_exact(2).map(|e| [e[0], e[1]]).collect();
        if let Some(&i) = edges.iter().flatten().find(|&&i| i >= pos.len()) {
            return Err(cx.error(format!("an edge uses point {i}, beyond the {} positions", pos.len())));
        }
        let (number, max_iter) = (d.get(Self::NUMBER).max(0) as usize, d.get(Self::MAX_ITER).max(0) as usize);
        let ind = sample(&pos, &edges, number, max_iter);
        let out: Vec<f64> = ind.iter().flat_map(|&i| pos[i]).collect();
        cx.data_mut().put(Self::OUTPUT_INDICES, ind);
        cx.data_mut().put(Self::OUTPUT_POSITION, out);
        Ok(())
    }
}

impl Component for MeshSampler {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
    fn data_changed(&mut self, cx: &mut InitCtx) -> SimResult {
        self.update(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seven points on a line at x = 0..6: two Euclidean samples start at 0 and 6 (farthest);
    /// Lloyd moves them to the points nearest the centroids of their regions {0..3} → 1.5 and
    /// {4..6} → 5, i.e. points 1 (first of the tie 1/2) and 5, then settles. Geodesically along
    /// the chain edges the same. Asking for more samples than points gives every point.
    #[test]
    fn line_samples_settle_at_region_centres() {
        let pos: Vec<V3> = (0..7).map(|i| [i as f64, 0.0, 0.0]).collect();
        assert_eq!(sample(&pos, &[], 2, 0), [0, 6]);
        assert_eq!(sample(&pos, &[], 2, 100), [1, 5]);
        let chain: Vec<[usize; 2]> = (0..6).map(|i| [i, i + 1]).collect();
        assert_eq!(sample(&pos, &chain, 2, 100), [1, 5]);
        let mut all = sample(&pos, &[], 10, 0);
        all.sort();
        assert_eq!(all, (0..7).collect::<Vec<_>>());
    }
}
