//! Nested-dissection fill-reducing ordering (what SOFA's `MetisOrderingMethod` asks METIS for),
//! written for Settee:
//!
//! 1. the graph of the symmetric pattern is compressed: rows with the same pattern (the 3 DOFs of
//!    a node) become one weighted vertex, so the work is done on the mesh's nodes;
//! 2. each graph is split by a small vertex separator found by multilevel bisection: coarsening
//!    by heavy-edge matching, greedy graph growing of the coarsest graph (several starts, the best
//!    kept), Fiduccia–Mattheyses refinement at every level back, then the cut edges' minimum
//!    vertex cover (König) as separator, refined by moving separator vertices out where the
//!    separator shrinks;
//! 3. both halves are ordered recursively, the separator after them; graphs of at most
//!    [`LEAF_SIZE`] vertices are ordered by approximate minimum degree.
//!
//! Everything is sequential and the only "random" choices come from a fixed-seed generator:
//! the ordering depends on the pattern alone.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::amd;
use faer::sparse::SymbolicSparseColMatRef;

use crate::csr::CsrMatrix;

/// Graphs of at most this many (compressed) vertices are ordered by minimum degree.
const LEAF_SIZE: usize = 120;
/// Coarsening stops at this many vertices.
const COARSEST_SIZE: usize = 100;
/// Greedy-growing starts tried on the coarsest graph.
const INITIAL_TRIES: usize = 8;
/// Allowed weight of each half: `(1 + IMBALANCE) / 2` of the graph's.
const IMBALANCE: f64 = 0.2;
/// A Fiduccia–Mattheyses pass stops after this many moves without a better cut.
const FM_PATIENCE: usize = 60;
const FM_PASSES: usize = 6;
const NONE: usize = usize::MAX;

/// Undirected graph in compressed adjacency form, with vertex and edge weights.
#[derive(Clone, Debug, Default)]
struct Graph {
    xadj: Vec<usize>,
    adj: Vec<usize>,
    ewgt: Vec<i64>,
    vwgt: Vec<i64>,
}

impl Graph {
    fn n(&self) -> usize {
        self.vwgt.len()
    }
    fn neighbours(&self, v: usize) -> impl Iterator<Item = (usize, i64)> + '_ {
        let r = self.xadj[v]..self.xadj[v + 1];
        self.adj[r.clone()].iter().copied().zip(self.ewgt[r].iter().copied())
    }
    fn total_weight(&self) -> i64 {
        self.vwgt.iter().sum()
    }
}

/// Small deterministic generator (SplitMix64): fixed seed, same sequence on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            p.swap(i, self.below(i + 1));
        }
        p
    }
}

/// Nested-dissection permutation of the symmetric pattern of `a` (`perm[k]` = original index
/// placed at `k`). The pattern is symmetrised and its diagonal ignored.
pub fn nested_dissection_ordering(a: &CsrMatrix) -> Vec<usize> {
    let n = a.nrows().min(a.ncols());
    let (xadj, adj) = symmetric_pattern(a, n);
    let (groups, graph) = compress(n, &xadj, &adj);
    let mut order = Vec::with_capacity(graph.n());
    let mut nd = Dissection { whole: &graph, rng: Rng(0x5E77_EE0D_15EC_7104), stamp: vec![0; graph.n()], local: vec![NONE; graph.n()], leaf: 0 };
    nd.dissect(graph.clone(), (0..groups.len()).collect(), &mut order);
    order.into_iter().flat_map(|g| groups[g].iter().copied()).collect()
}

/// Adjacency of the pattern of `A + Aᵀ` restricted to `n × n`, without the diagonal, each row sorted.
fn symmetric_pattern(a: &CsrMatrix, n: usize) -> (Vec<usize>, Vec<usize>) {
    let mut deg = vec![0usize; n + 1];
    for i in 0..n {
        for &j in a.row_cols(i) {
            if j < n && j != i {
                deg[i] += 1;
                deg[j] += 1;
            }
        }
    }
    let mut xadj = vec![0usize; n + 1];
    for i in 0..n {
        xadj[i + 1] = xadj[i] + deg[i];
    }
    let mut fill = xadj[..n].to_vec();
    let mut adj = vec![0usize; xadj[n]];
    for i in 0..n {
        for &j in a.row_cols(i) {
            if j < n && j != i {
                adj[fill[i]] = j;
                fill[i] += 1;
                adj[fill[j]] = i;
                fill[j] += 1;
            }
        }
    }
    // Sort and deduplicate each row, compacting in place.
    let mut out = 0;
    let mut start = 0;
    for i in 0..n {
        let end = xadj[i + 1];
        adj[start..end].sort_unstable();
        let row_begin = out;
        for k in start..end {
            if out == row_begin || adj[out - 1] != adj[k] {
                adj[out] = adj[k];
                out += 1;
            }
        }
        start = end;
        xadj[i + 1] = out;
    }
    adj.truncate(out);
    (xadj, adj)
}

/// Groups the vertices whose closed neighbourhoods (row pattern with the diagonal) are equal.
/// Returns the groups (members ascending, groups numbered by their smallest member) and the
/// graph between groups (vertex weight = group size, edge weight 1).
fn compress(n: usize, xadj: &[usize], adj: &[usize]) -> (Vec<Vec<usize>>, Graph) {
    let row = |v: usize| &adj[xadj[v]..xadj[v + 1]];
    // Cheap key: degree and sum of the closed neighbourhood; equal rows have equal keys.
    let key = |v: usize| (row(v).len(), row(v).iter().sum::<usize>() + v);
    let mut by_key: Vec<usize> = (0..n).collect();
    by_key.sort_unstable_by_key(|&v| (key(v), v));
    let same = |u: usize, v: usize| {
        // Closed neighbourhoods equal ⇔ u ∈ N(v) and N(u) \ {v} = N(v) \ {u}.
        let (ru, rv) = (row(u), row(v));
        ru.len() == rv.len() && ru.binary_search(&v).is_ok() && ru.iter().filter(|&&x| x != v).eq(rv.iter().filter(|&&x| x != u))
    };
    let mut leader = vec![NONE; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j < n && key(by_key[j]) == key(by_key[i]) {
            j += 1;
        }
        // by_key[i..j] share a key (ascending vertex order): attach each to the first equal leader.
        for a in i..j {
            let u = by_key[a];
            if leader[u] != NONE {
                continue;
            }
            leader[u] = u;
            for &v in &by_key[a + 1..j] {
                if leader[v] == NONE && same(u, v) {
                    leader[v] = u;
                }
            }
        }
        i = j;
    }
    let mut group_of = vec![NONE; n];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for v in 0..n {
        let l = leader[v];
        if group_of[l] == NONE {
            group_of[l] = groups.len();
            groups.push(Vec::new());
        }
        group_of[v] = group_of[l];
        groups[group_of[v]].push(v);
    }
    let mut g = Graph { xadj: vec![0], ..Graph::default() };
    let mut mark = vec![NONE; groups.len()];
    for (gi, members) in groups.iter().enumerate() {
        let start = g.adj.len();
        for &w in row(members[0]) {
            let gw = group_of[w];
            if gw != gi && mark[gw] != gi {
                mark[gw] = gi;
                g.adj.push(gw);
            }
        }
        g.adj[start..].sort_unstable();
        g.xadj.push(g.adj.len());
        g.vwgt.push(members.len() as i64);
    }
    g.ewgt = vec![1; g.adj.len()];
    (groups, g)
}

/// State of one ordering: the whole (compressed) graph, for the leaves' halos.
struct Dissection<'a> {
    whole: &'a Graph,
    rng: Rng,
    /// `stamp[v] == leaf` marks the vertices of the current leaf and its halo.
    stamp: Vec<usize>,
    local: Vec<usize>,
    leaf: usize,
}

impl Dissection<'_> {
    /// Appends the nested-dissection order of `g` (as `labels`, vertices of the whole graph) to `order`.
    fn dissect(&mut self, g: Graph, labels: Vec<usize>, order: &mut Vec<usize>) {
        if g.n() <= LEAF_SIZE {
            self.order_leaf(&g, &labels, order);
            return;
        }
        let part = vertex_separator(&g, &mut self.rng);
        let count = |p: u8| part.iter().filter(|&&x| x == p).count();
        if count(0) == 0 || count(1) == 0 {
            self.order_leaf(&g, &labels, order);
            return;
        }
        for side in [0u8, 1] {
            let (sub, sub_labels) = induced(&g, &labels, &part, side);
            self.dissect(sub, sub_labels, order);
        }
        order.extend((0..g.n()).filter(|&v| part[v] == 2).map(|v| labels[v]));
    }

    /// Orders a leaf by minimum degree together with its halo (its neighbours in the whole
    /// graph, separator vertices numbered after it), the halo made a clique so that it comes
    /// last: a boundary vertex then counts the separator vertices it is joined to, and is not
    /// eliminated early for looking cheap inside the leaf.
    fn order_leaf(&mut self, g: &Graph, labels: &[usize], order: &mut Vec<usize>) {
        let n = g.n();
        self.leaf += 1;
        let stamp = self.leaf;
        for (i, &l) in labels.iter().enumerate() {
            self.stamp[l] = stamp;
            self.local[l] = i;
        }
        let mut halo = Vec::new();
        for &l in labels {
            for (m, _) in self.whole.neighbours(l) {
                if self.stamp[m] != stamp {
                    self.stamp[m] = stamp;
                    self.local[m] = n + halo.len();
                    halo.push(m);
                }
            }
        }
        if halo.is_empty() {
            order.extend(minimum_degree(g).into_iter().map(|v| labels[v]));
            return;
        }
        let mut h = Graph { xadj: vec![0], ..Graph::default() };
        for &l in labels {
            h.adj.extend(self.whole.neighbours(l).map(|(m, _)| self.local[m]));
            h.xadj.push(h.adj.len());
        }
        for (k, &m) in halo.iter().enumerate() {
            h.adj.extend(self.whole.neighbours(m).map(|(u, _)| u).filter(|&u| self.stamp[u] == stamp && self.local[u] < n).map(|u| self.local[u]));
            h.adj.extend((0..halo.len()).filter(|&j| j != k).map(|j| n + j));
            h.xadj.push(h.adj.len());
        }
        for v in 0..n + halo.len() {
            h.adj[h.xadj[v]..h.xadj[v + 1]].sort_unstable();
        }
        h.vwgt = vec![1; n + halo.len()];
        order.extend(minimum_degree(&h).into_iter().filter(|&v| v < n).map(|v| labels[v]));
    }
}

/// The subgraph induced by the vertices with `part[v] == side` (unit edge weights), with their labels.
fn induced(g: &Graph, labels: &[usize], part: &[u8], side: u8) -> (Graph, Vec<usize>) {
    let mut local = vec![NONE; g.n()];
    let mut sub = Graph { xadj: vec![0], ..Graph::default() };
    let mut sub_labels = Vec::new();
    for v in (0..g.n()).filter(|&v| part[v] == side) {
        local[v] = sub_labels.len();
        sub_labels.push(labels[v]);
        sub.vwgt.push(g.vwgt[v]);
    }
    for v in (0..g.n()).filter(|&v| part[v] == side) {
        sub.adj.extend(g.neighbours(v).filter(|&(u, _)| part[u] == side).map(|(u, _)| local[u]));
        sub.xadj.push(sub.adj.len());
    }
    sub.ewgt = vec![1; sub.adj.len()];
    (sub, sub_labels)
}

/// Approximate-minimum-degree order of a small graph's vertices (faer's AMD); natural order if
/// it fails (it only can on allocation failure). Adjacency rows must be sorted.
fn minimum_degree(g: &Graph) -> Vec<usize> {
    let n = g.n();
    let mut perm: Vec<usize> = (0..n).collect();
    if n <= 2 {
        return perm;
    }
    let mut perm_inv = vec![0usize; n];
    let sym = SymbolicSparseColMatRef::new_checked(n, n, &g.xadj, None, &g.adj);
    let Ok(mut buf) = MemBuffer::try_new(amd::order_maybe_unsorted_scratch::<usize>(n, g.adj.len())) else {
        return perm;
    };
    if amd::order_maybe_unsorted(&mut perm, &mut perm_inv, sym, amd::Control::default(), MemStack::new(&mut buf)).is_err() {
        return (0..n).collect();
    }
    perm
}

/// A vertex separator of `g`: `part[v]` is 0 or 1 for the two halves, 2 for the separator; no
/// edge joins a 0 and a 1.
fn vertex_separator(g: &Graph, rng: &mut Rng) -> Vec<u8> {
    let total = g.total_weight();
    let max_part = ((total as f64) * 0.5 * (1.0 + IMBALANCE)).ceil() as i64;
    let mut part = edge_bisection(g, max_part, rng);
    cover_cut_edges(g, &mut part);
    refine_separator(g, &mut part, max_part);
    part
}

/// Multilevel edge bisection: `part[v]` ∈ {0, 1}, each side of weight ≤ `max_part` when possible.
fn edge_bisection(g: &Graph, max_part: i64, rng: &mut Rng) -> Vec<u8> {
    let max_vertex = (1.5 * g.total_weight() as f64 / COARSEST_SIZE as f64).ceil().max(1.0) as i64;
    let mut levels: Vec<(Graph, Vec<usize>)> = Vec::new();
    loop {
        let fine = levels.last().map_or(g, |(c, _)| c);
        if fine.n() <= COARSEST_SIZE {
            break;
        }
        let (coarse, cmap) = coarsen(fine, max_vertex, rng);
        // Matching has stalled (e.g. a star): stop coarsening.
        if coarse.n() as f64 > 0.9 * fine.n() as f64 {
            break;
        }
        levels.push((coarse, cmap));
    }
    let coarsest = levels.last().map_or(g, |(c, _)| c);
    let mut part = initial_bisection(coarsest, max_part, rng);
    for k in (0..levels.len()).rev() {
        let fine = if k == 0 { g } else { &levels[k - 1].0 };
        let cmap = &levels[k].1;
        part = cmap.iter().map(|&c| part[c]).collect();
        fm_refine(fine, &mut part, max_part, FM_PASSES);
    }
    part
}

/// One level of heavy-edge matching: each vertex, in a fixed pseudo-random order, is merged
/// with its unmatched neighbour of heaviest edge (merged weight ≤ `max_vertex`), or stays alone.
/// Returns the coarse graph and the fine → coarse map.
fn coarsen(g: &Graph, max_vertex: i64, rng: &mut Rng) -> (Graph, Vec<usize>) {
    let n = g.n();
    let mut mate = vec![NONE; n];
    for u in rng.permutation(n) {
        if mate[u] != NONE {
            continue;
        }
        let mut best = u;
        let mut best_w = 0;
        for (v, w) in g.neighbours(u) {
            if mate[v] == NONE && v != u && w > best_w && g.vwgt[u] + g.vwgt[v] <= max_vertex {
                best = v;
                best_w = w;
            }
        }
        mate[u] = best;
        mate[best] = u;
    }
    let mut cmap = vec![NONE; n];
    let mut nc = 0;
    for u in 0..n {
        if cmap[u] == NONE {
            cmap[u] = nc;
            cmap[mate[u]] = nc;
            nc += 1;
        }
    }
    let mut coarse = Graph { xadj: Vec::with_capacity(nc + 1), ..Graph::default() };
    coarse.xadj.push(0);
    let mut slot = vec![NONE; nc];
    for u in 0..n {
        let c = cmap[u];
        if u > mate[u] {
            continue; // the pair was handled at its smaller vertex
        }
        let start = coarse.adj.len();
        let members = if mate[u] == u { [u, NONE] } else { [u, mate[u]] };
        let mut weight = 0;
        for &m in members.iter().filter(|&&m| m != NONE) {
            weight += g.vwgt[m];
            for (v, w) in g.neighbours(m) {
                let cv = cmap[v];
                if cv == c {
                    continue;
                }
                if slot[cv] == NONE || slot[cv] < start {
                    slot[cv] = coarse.adj.len();
                    coarse.adj.push(cv);
                    coarse.ewgt.push(w);
                } else {
                    coarse.ewgt[slot[cv]] += w;
                }
            }
        }
        coarse.xadj.push(coarse.adj.len());
        coarse.vwgt.push(weight);
    }
    (coarse, cmap)
}

/// Greedy graph growing from several seeds, each refined by FM; the best cut (balanced first) wins.
fn initial_bisection(g: &Graph, max_part: i64, rng: &mut Rng) -> Vec<u8> {
    let n = g.n();
    let total = g.total_weight();
    let mut best: Option<(Vec<u8>, (bool, i64, i64))> = None;
    for _ in 0..INITIAL_TRIES.min(n.max(1)) {
        let mut part = vec![1u8; n];
        if n > 0 {
            grow(g, &mut part, rng.below(n), total / 2);
        }
        fm_refine(g, &mut part, max_part, FM_PASSES);
        let score = bisection_score(g, &part, max_part);
        if best.as_ref().is_none_or(|(_, s)| score < *s) {
            best = Some((part, score));
        }
    }
    best.map(|(p, _)| p).unwrap_or_default()
}

/// (unbalanced, cut, imbalance): smaller is better.
fn bisection_score(g: &Graph, part: &[u8], max_part: i64) -> (bool, i64, i64) {
    let mut w = [0i64; 2];
    let mut cut = 0;
    for v in 0..g.n() {
        w[part[v] as usize] += g.vwgt[v];
        cut += g.neighbours(v).filter(|&(u, _)| part[u] != part[v]).map(|(_, e)| e).sum::<i64>();
    }
    (w[0] > max_part || w[1] > max_part, cut / 2, (w[0] - w[1]).abs())
}

/// Moves vertices from side 1 to side 0, starting at `seed` and always taking the frontier
/// vertex that adds least to the cut, until side 0 weighs `target`; a disconnected graph
/// restarts from its first vertex left on side 1.
fn grow(g: &Graph, part: &mut [u8], seed: usize, target: i64) {
    let n = g.n();
    // gain of moving v to side 0 = (edges to 0) - (edges to 1)
    let mut gain: Vec<i64> = (0..n).map(|v| -g.neighbours(v).map(|(_, w)| w).sum::<i64>()).collect();
    let mut heap = BinaryHeap::new();
    let mut weight0 = 0;
    let mut next_unused = 0;
    let mut start = Some(seed);
    while weight0 < target {
        let v = match start.take() {
            Some(s) => s,
            None => match pop_valid(&mut heap, |v, gn| part[v] == 1 && gain[v] == gn) {
                Some(v) => v,
                None => {
                    while next_unused < n && part[next_unused] == 0 {
                        next_unused += 1;
                    }
                    if next_unused == n {
                        break;
                    }
                    next_unused
                }
            },
        };
        if part[v] == 0 {
            continue;
        }
        part[v] = 0;
        weight0 += g.vwgt[v];
        for (u, w) in g.neighbours(v) {
            if part[u] == 1 {
                gain[u] += 2 * w;
                heap.push((gain[u], Reverse(u)));
            }
        }
    }
}

/// Pops entries until one is still current (`valid(v, gain)`).
fn pop_valid(heap: &mut BinaryHeap<(i64, Reverse<usize>)>, valid: impl Fn(usize, i64) -> bool) -> Option<usize> {
    while let Some((gn, Reverse(v))) = heap.pop() {
        if valid(v, gn) {
            return Some(v);
        }
    }
    None
}

/// Top of `heap` that is still current, stale entries dropped.
fn peek_valid(heap: &mut BinaryHeap<(i64, Reverse<usize>)>, valid: impl Fn(usize, i64) -> bool) -> Option<(i64, usize)> {
    while let Some(&(gn, Reverse(v))) = heap.peek() {
        if valid(v, gn) {
            return Some((gn, v));
        }
        heap.pop();
    }
    None
}

/// Fiduccia–Mattheyses refinement of a 2-way edge cut: each pass moves boundary vertices one at
/// a time, best gain first (each at most once), keeping side weights ≤ `max_part` (or moving
/// weight off an overweight side), then rolls back to the best state seen.
fn fm_refine(g: &Graph, part: &mut [u8], max_part: i64, passes: usize) {
    let n = g.n();
    // ext - int edge weight: the cut's decrease when v changes side.
    let mut gain = vec![0i64; n];
    let mut w = [0i64; 2];
    let mut cut = 0;
    for v in 0..n {
        w[part[v] as usize] += g.vwgt[v];
        for (u, e) in g.neighbours(v) {
            if part[u] != part[v] {
                gain[v] += e;
                cut += e;
            } else {
                gain[v] -= e;
            }
        }
    }
    cut /= 2;
    let mut locked = vec![false; n];
    for _ in 0..passes {
        let mut heaps = [BinaryHeap::new(), BinaryHeap::new()];
        for v in 0..n {
            let boundary = g.neighbours(v).any(|(u, _)| part[u] != part[v]);
            if boundary {
                heaps[part[v] as usize].push((gain[v], Reverse(v)));
            }
        }
        let score = |cut: i64, w: &[i64; 2]| ((w[0] > max_part || w[1] > max_part), cut, (w[0] - w[1]).abs());
        let start = score(cut, &w);
        let mut best = start;
        let mut moves: Vec<usize> = Vec::new();
        let mut best_len = 0;
        loop {
            let mut cand = [None, None];
            for s in 0..2 {
                cand[s] = peek_valid(&mut heaps[s], |v, gn| !locked[v] && part[v] as usize == s && gain[v] == gn);
            }
            let fits = |s: usize, v: usize| w[1 - s] + g.vwgt[v] <= max_part;
            let from = if w[0] > max_part {
                Some(0)
            } else if w[1] > max_part {
                Some(1)
            } else {
                match (cand[0].filter(|&(_, v)| fits(0, v)), cand[1].filter(|&(_, v)| fits(1, v))) {
                    (Some((g0, _)), Some((g1, _))) => Some(if g1 > g0 || (g1 == g0 && w[1] > w[0]) { 1 } else { 0 }),
                    (Some(_), None) => Some(0),
                    (None, Some(_)) => Some(1),
                    (None, None) => None,
                }
            };
            let Some(s) = from else { break };
            let Some((gn, v)) = cand[s] else { break };
            heaps[s].pop();
            part[v] = (1 - s) as u8;
            locked[v] = true;
            w[s] -= g.vwgt[v];
            w[1 - s] += g.vwgt[v];
            cut -= gn;
            gain[v] = -gn;
            moves.push(v);
            for (u, e) in g.neighbours(v) {
                // v joined u's side if part[u] == 1-s: the edge is no longer cut.
                gain[u] += if part[u] as usize == 1 - s { -2 * e } else { 2 * e };
                if !locked[u] {
                    heaps[part[u] as usize].push((gain[u], Reverse(u)));
                }
            }
            let now = score(cut, &w);
            if now < best {
                best = now;
                best_len = moves.len();
            } else if moves.len() - best_len > FM_PATIENCE {
                break;
            }
        }
        // Roll back the moves after the best state.
        for &v in moves[best_len..].iter().rev() {
            let s = part[v] as usize;
            part[v] = (1 - s) as u8;
            w[s] -= g.vwgt[v];
            w[1 - s] += g.vwgt[v];
            cut -= gain[v];
            gain[v] = -gain[v];
            for (u, e) in g.neighbours(v) {
                gain[u] += if part[u] as usize == 1 - s { -2 * e } else { 2 * e };
            }
        }
        for &v in &moves {
            locked[v] = false;
        }
        if best >= start {
            break;
        }
    }
}

/// Turns an edge bisection into a vertex separator (`part[v] = 2`): a minimum vertex cover of
/// the cut edges (maximum bipartite matching, then König's construction).
fn cover_cut_edges(g: &Graph, part: &mut [u8]) {
    let n = g.n();
    let side: &[u8] = part;
    let cut = |v: usize| g.neighbours(v).filter(move |&(u, _)| side[u] != side[v]).map(|(u, _)| u);
    let left: Vec<usize> = (0..n).filter(|&v| side[v] == 0 && cut(v).next().is_some()).collect();
    // Maximum matching by augmenting paths (depth-first, iterative).
    let mut mate = vec![NONE; n];
    let mut seen = vec![NONE; n];
    for (round, &root) in left.iter().enumerate() {
        // Each stack frame: (left vertex, next neighbour offset); `via[l]` = right vertex reached from.
        let mut stack: Vec<(usize, usize)> = vec![(root, g.xadj[root])];
        let mut path: Vec<usize> = Vec::new(); // right vertices along the stack
        seen[root] = round;
        let mut found = false;
        while let Some(&mut (l, ref mut k)) = stack.last_mut() {
            let mut advanced = false;
            while *k < g.xadj[l + 1] {
                let r = g.adj[*k];
                *k += 1;
                if side[r] != 1 || seen[r] == round {
                    continue;
                }
                seen[r] = round;
                path.push(r);
                if mate[r] == NONE {
                    found = true;
                } else {
                    let l2 = mate[r];
                    stack.push((l2, g.xadj[l2]));
                }
                advanced = true;
                break;
            }
            if found {
                break;
            }
            if !advanced {
                stack.pop();
                path.pop();
            }
        }
        if found {
            // stack[i].0 is matched with path[i].
            for (i, &(l, _)) in stack.iter().enumerate() {
                let r = path[i];
                mate[l] = r;
                mate[r] = l;
            }
        }
    }
    // König: Z = vertices reachable from unmatched left vertices by alternating paths;
    // cover = (left \ Z) ∪ (right ∩ Z).
    let mut in_z = vec![false; n];
    let mut queue: Vec<usize> = left.iter().copied().filter(|&l| mate[l] == NONE).collect();
    for &l in &queue {
        in_z[l] = true;
    }
    while let Some(l) = queue.pop() {
        for r in cut(l).collect::<Vec<_>>() {
            if !in_z[r] && mate[l] != r {
                in_z[r] = true;
                let l2 = mate[r];
                if l2 != NONE && !in_z[l2] {
                    in_z[l2] = true;
                    queue.push(l2);
                }
            }
        }
    }
    let right: Vec<usize> = (0..n).filter(|&v| side[v] == 1 && cut(v).next().is_some()).collect();
    let cover: Vec<usize> = left.iter().copied().filter(|&l| !in_z[l]).chain(right.iter().copied().filter(|&r| in_z[r])).collect();
    for v in cover {
        part[v] = 2;
    }
}

/// Shrinks a vertex separator: a separator vertex moves to a side when the neighbours it
/// pulls from the other side into the separator weigh less than itself (or as much, if it
/// evens the sides out), the side staying ≤ `max_part`. Repeated until nothing moves.
fn refine_separator(g: &Graph, part: &mut [u8], max_part: i64) {
    let n = g.n();
    let mut w = [0i64; 3];
    for v in 0..n {
        w[part[v] as usize] += g.vwgt[v];
    }
    loop {
        let mut moved = false;
        for v in 0..n {
            if part[v] != 2 {
                continue;
            }
            // pulled[s]: weight of v's neighbours on side s, which join the separator if v moves to 1-s.
            let mut pulled = [0i64; 2];
            for (u, _) in g.neighbours(v) {
                if part[u] < 2 {
                    pulled[part[u] as usize] += g.vwgt[u];
                }
            }
            let mut best: Option<(i64, i64, usize)> = None;
            for t in 0..2 {
                let (to, from) = (w[t] + g.vwgt[v], w[1 - t] - pulled[1 - t]);
                if to > max_part {
                    continue;
                }
                let gain = g.vwgt[v] - pulled[1 - t];
                let imbalance = (to - from).abs();
                // A zero gain only to even the sides out: every move shrinks the separator or
                // the imbalance, so the loop ends.
                let worth = gain > 0 || (gain == 0 && imbalance < (w[0] - w[1]).abs());
                if worth && best.is_none_or(|(bg, bi, _)| gain > bg || (gain == bg && imbalance < bi)) {
                    best = Some((gain, imbalance, t));
                }
            }
            if let Some((_, _, t)) = best {
                part[v] = t as u8;
                w[2] -= g.vwgt[v];
                w[t] += g.vwgt[v];
                for (u, _) in g.neighbours(v) {
                    if part[u] as usize == 1 - t {
                        part[u] = 2;
                        w[1 - t] -= g.vwgt[u];
                        w[2] += g.vwgt[u];
                    }
                }
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Graph with unit weights from adjacency lists (made symmetric and sorted here).
    fn graph(n: usize, edges: &[(usize, usize)]) -> Graph {
        let mut rows = vec![Vec::new(); n];
        for &(i, j) in edges {
            rows[i].push(j);
            rows[j].push(i);
        }
        let mut g = Graph { xadj: vec![0], ..Graph::default() };
        for mut r in rows {
            r.sort_unstable();
            r.dedup();
            g.adj.extend(r);
            g.xadj.push(g.adj.len());
        }
        g.vwgt = vec![1; n];
        g.ewgt = vec![1; g.adj.len()];
        g
    }

    /// Edges of a `nx × ny × nz` grid, 7-point stencil.
    fn grid(nx: usize, ny: usize, nz: usize) -> (usize, Vec<(usize, usize)>) {
        let id = |x: usize, y: usize, z: usize| (x * ny + y) * nz + z;
        let mut e = Vec::new();
        for x in 0..nx {
            for y in 0..ny {
                for z in 0..nz {
                    if x + 1 < nx {
                        e.push((id(x, y, z), id(x + 1, y, z)));
                    }
                    if y + 1 < ny {
                        e.push((id(x, y, z), id(x, y + 1, z)));
                    }
                    if z + 1 < nz {
                        e.push((id(x, y, z), id(x, y, z + 1)));
                    }
                }
            }
        }
        (nx * ny * nz, e)
    }

    /// Checks that `part` is a vertex separator of `g` with both sides within the balance, and
    /// returns the separator's size.
    fn check_separator(g: &Graph, part: &[u8]) -> usize {
        for v in 0..g.n() {
            for (u, _) in g.neighbours(v) {
                assert!(part[v] == 2 || part[u] == 2 || part[v] == part[u], "edge {v}-{u} joins the halves");
            }
        }
        let size = |p: u8| part.iter().filter(|&&x| x == p).count();
        let max_part = (g.n() as f64 * 0.5 * (1.0 + IMBALANCE)).ceil() as usize;
        assert!(size(0) > 0 && size(1) > 0 && size(0) <= max_part && size(1) <= max_part, "sides {} / {}", size(0), size(1));
        size(2)
    }

    #[test]
    fn separators_of_grids_are_a_plane() {
        // The smallest separators of these grids are a line / a plane across the longest side.
        for ((nx, ny, nz), best) in [((40, 40, 1), 40), ((60, 25, 1), 25), ((16, 16, 16), 256), ((24, 12, 12), 144)] {
            let (n, e) = grid(nx, ny, nz);
            let g = graph(n, &e);
            let s = check_separator(&g, &vertex_separator(&g, &mut Rng(1)));
            assert!(s <= best + best / 10, "{nx}x{ny}x{nz}: separator {s}, best {best}");
        }
    }

    #[test]
    fn separators_separate_irregular_and_disconnected_graphs() {
        let mut rng = Rng(42);
        // Random geometric-like graph: each vertex joined to a few near indices.
        let n = 3000;
        let e: Vec<(usize, usize)> = (0..n).flat_map(|i| (0..4).map(move |k| (i, (i + 1 + k * 37) % n))).collect();
        let g = graph(n, &e);
        check_separator(&g, &vertex_separator(&g, &mut rng));
        // Two grids with no edge between them: nothing to cut.
        let (m, e1) = grid(12, 12, 12);
        let mut e2 = e1.clone();
        e2.extend(e1.iter().map(|&(i, j)| (i + m, j + m)));
        let g = graph(2 * m, &e2);
        let s = check_separator(&g, &vertex_separator(&g, &mut rng));
        assert_eq!(s, 0);
        // No edge at all.
        let g = graph(500, &[]);
        assert_eq!(check_separator(&g, &vertex_separator(&g, &mut rng)), 0);
    }

    #[test]
    fn compression_groups_identical_rows() {
        // Vertices 1, 3, 4 are joined together and to 0 and 2: one node with 3 DOFs.
        let xadj = [0, 3, 7, 10, 14, 18];
        let adj = [1, 3, 4, 0, 2, 3, 4, 1, 3, 4, 0, 1, 2, 4, 0, 1, 2, 3];
        let (groups, g) = compress(5, &xadj, &adj);
        assert_eq!(groups, vec![vec![0], vec![1, 3, 4], vec![2]]);
        assert_eq!(g.vwgt, vec![1, 3, 1]);
        assert_eq!(g.adj, vec![1, 0, 2, 1]);
    }
}
