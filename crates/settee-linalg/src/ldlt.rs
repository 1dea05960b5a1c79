//! Supernodal sparse `LDLᵀ` factorization (no pivoting), used by
//! [`crate::DirectKind::Ldlt`] (SOFA's `SparseLDLSolver` /
//! `EigenSimplicialLDLT`) and [`crate::DirectKind::Llt`].
//!
//! * Input: a square CSR matrix, read as in SOFA: "column" `k` of the
//!   permuted matrix is CSR row `perm[k]`, and only the entries whose permuted
//!   column index is `<= k` are used (the lower triangle of `P A Pᵀ` read by
//!   rows, i.e. its upper triangle read by columns — the same thing for a
//!   symmetric matrix).
//! * Symbolic phase (once per sparsity pattern): elimination tree and column
//!   counts of `L` (SOFA's `L_nnz` is their sum, whatever the storage), then
//!   *supernodes*: runs of consecutive columns of `L` sharing (up to a few
//!   explicit zeros, "relaxed amalgamation") the same row pattern. With the
//!   3-DOF nodes of SOFA's systems the columns of one node normally form (part
//!   of) a supernode, and AMD's nested ordering makes much larger ones. Each
//!   supernode is stored as one dense column-major block (its rows × its
//!   columns), and the scatter of `A` into those blocks is precomputed.
//! * Numeric phase: left-looking supernodal. For each supernode `s` in order:
//!   copy its columns of `A`, subtract the updates `L_d D_d L_dᵀ` of every
//!   descendant supernode `d` whose pattern meets the columns of `s` (found
//!   through linked lists, as in CHOLMOD), then a blocked dense `LDLᵀ` of the
//!   panel. The updates go through one register-tiled kernel
//!   ([`syrk_update`]) in which every entry is accumulated over `t` in
//!   increasing order from `0.0` with separate multiplications and additions
//!   (no FMA, no reassociation): the AVX2 build (runtime-detected, intrinsics)
//!   and the portable build give the same bits, whatever the tiling. All
//!   numeric work runs on the calling thread, so the result is also the same
//!   for any number of threads. Workspaces live in [`LdlNumeric`] and are
//!   reused: a refactorization with an unchanged pattern allocates nothing.
//! * Solve: `b' = P b`, forward substitution with unit `L`, multiplication by
//!   `D⁻¹`, backward substitution with `Lᵀ`, `x = Pᵀ x'`, supernode by
//!   supernode (dense triangle, then the rows below it; dot products with a
//!   fixed 4-lane association, so again the same bits with or without AVX2).
//!
//! The result equals SOFA's up-looking simplicial `LDLᵀ` to round-off (the
//! same factors, the sums accumulated in another order).

use crate::csr::CsrMatrix;
use crate::error::{LinalgError, Result};

const NONE: usize = usize::MAX;

/// Relaxed amalgamation thresholds (CHOLMOD's defaults): a supernode is
/// merged into its parent (the next supernode) if, for one line `(nc, z)`,
/// the merged one has at most `nc` columns and a fraction of explicit zeros
/// below `z`.
const RELAX: [(usize, f64); 3] = [(4, 0.8), (16, 0.1), (48, 0.05)];

/// Symbolic part: permutation, supernodes and their row patterns, scatter
/// map of `A`.
#[derive(Debug, Clone)]
pub(crate) struct LdlSymbolic {
    n: usize,
    /// Number of stored entries of the analysed matrix.
    a_nnz: usize,
    /// `perm[k]` = original index of permuted index `k`.
    perm: Vec<usize>,
    /// Number of strictly-lower entries of the (scalar) factor `L`.
    l_nnz: usize,
    /// Supernode `s` holds the columns `sn_ptr[s]..sn_ptr[s + 1]`.
    sn_ptr: Vec<usize>,
    /// Supernode of each column.
    col2sn: Vec<usize>,
    /// Row pattern of supernode `s`: `rows[row_ptr[s]..row_ptr[s + 1]]`,
    /// increasing, starting with its own columns.
    row_ptr: Vec<usize>,
    rows: Vec<usize>,
    /// Dense block of supernode `s` (column-major, leading dimension = its
    /// number of rows): `values[val_ptr[s]..val_ptr[s + 1]]`.
    val_ptr: Vec<usize>,
    /// Scatter of `A`: for supernode `s`, the pairs
    /// `(amap_dst[q], amap_src[q])`, `q` in `amap_ptr[s]..amap_ptr[s + 1]`,
    /// mean `values[amap_dst[q]] = a.values()[amap_src[q]]`. `amap_dst` is
    /// relative to `val_ptr[s]`.
    amap_ptr: Vec<usize>,
    amap_dst: Vec<usize>,
    amap_src: Vec<usize>,
    /// `invperm[p]` = permuted index of original index `p`.
    invperm: Vec<usize>,
    /// Workspace of [`Self::build_scatter`] (next free slot of each supernode).
    cursor: Vec<usize>,
    /// Largest number of rows of a supernode.
    max_rows: usize,
    /// Largest number of columns of a supernode.
    max_cols: usize,
}

/// Numeric factors and the workspaces of the factorization, reused from one
/// factorization to the next.
#[derive(Debug, Clone, Default)]
pub(crate) struct LdlNumeric {
    /// Dense supernode blocks (unit `L`; the diagonal slots hold `D`).
    values: Vec<f64>,
    /// `D(k,k)`.
    d: Vec<f64>,
    /// `1 / D(k,k)`.
    inv_d: Vec<f64>,
    // --- workspaces ---
    /// Global row -> local row in the current supernode.
    map: Vec<usize>,
    /// Linked lists of supernodes waiting to update supernode `s`.
    head: Vec<usize>,
    next: Vec<usize>,
    /// First row (local index) of supernode `d` not yet used for updates.
    pos: Vec<usize>,
    /// Relative row indices of an update.
    rel: Vec<usize>,
    /// Packed `L(j, t) D(t)` of the current update (see [`pack_w`]).
    w: Vec<f64>,
    /// Packed rows of `L` of a large update (see [`syrk_update`]).
    ap: Vec<f64>,
}

impl LdlSymbolic {
    /// Symbolic analysis of `a` (square, validated by the caller) with the
    /// permutation `perm` (`perm[k]` = original index placed at `k`).
    pub(crate) fn new(a: &CsrMatrix, perm: Vec<usize>) -> Result<Self> {
        let n = a.nrows();
        if perm.len() != n {
            return Err(LinalgError::DimensionMismatch { what: "permutation", expected: n, found: perm.len() });
        }
        let mut invperm = vec![NONE; n];
        for (k, &p) in perm.iter().enumerate() {
            if p >= n || invperm[p] != NONE {
                return Err(LinalgError::InvalidStructure("ordering is not a permutation".into()));
            }
            invperm[p] = k;
        }
        let row_ptr_a = a.row_ptr();
        let col_idx_a = a.col_idx();

        // Elimination tree and column counts (strictly lower) of L.
        let mut parent = vec![NONE; n];
        let mut flag = vec![NONE; n];
        let mut count = vec![0usize; n];
        for k in 0..n {
            flag[k] = k;
            let kk = perm[k];
            for &c in &col_idx_a[row_ptr_a[kk]..row_ptr_a[kk + 1]] {
                let mut i = invperm[c];
                if i >= k {
                    continue;
                }
                // Walk up the (partial) elimination tree until a node already
                // visited for this k; every node met gets L(k, i) != 0.
                while flag[i] != k {
                    if parent[i] == NONE {
                        parent[i] = k;
                    }
                    count[i] += 1;
                    flag[i] = k;
                    i = parent[i];
                }
            }
        }
        let l_nnz = count.iter().sum();

        // Fundamental supernodes: j + 1 continues the supernode of j when j
        // is its only child and the patterns nest exactly.
        let mut nchild = vec![0usize; n];
        for &p in &parent {
            if p != NONE {
                nchild[p] += 1;
            }
        }
        let mut fund = vec![0usize];
        for j in 1..n {
            let cont = parent[j - 1] == j && nchild[j] == 1 && count[j - 1] == count[j] + 1;
            if !cont {
                fund.push(j);
            }
        }
        if n > 0 {
            fund.push(n);
        }

        // Relaxed amalgamation: merge a supernode into the next one when it is
        // its child in the tree (consecutive columns) and few zeros are added.
        let mut sn_ptr = vec![0usize];
        if n > 0 {
            // Current (merged) supernode: first column, columns, rows of its
            // first column (including the diagonal), explicit zeros.
            let mut cur_cols = fund[1] - fund[0];
            let mut cur_rows = count[fund[0]] + 1;
            let mut cur_zeros = 0usize;
            for w in fund[1..].windows(2) {
                let (f, l) = (w[0], w[1]);
                let (c2, n2) = (l - f, count[f] + 1);
                let child = parent[f - 1] == f;
                let merged_cols = cur_cols + c2;
                let merged_rows = cur_cols + n2;
                let mut merge = false;
                if child && merged_rows >= cur_rows {
                    let extra = cur_cols * (merged_rows - cur_rows);
                    let zeros = cur_zeros + extra;
                    // Stored entries of the merged lower trapezoid.
                    let total = merged_cols * merged_rows - merged_cols * (merged_cols - 1) / 2;
                    let z = zeros as f64 / total as f64;
                    merge = RELAX.iter().any(|&(nc, zr)| merged_cols <= nc && z < zr);
                    if merge {
                        cur_zeros = zeros;
                    }
                }
                if merge {
                    cur_cols = merged_cols;
                    cur_rows = merged_rows;
                } else {
                    sn_ptr.push(f);
                    cur_cols = c2;
                    cur_rows = n2;
                    cur_zeros = 0;
                }
            }
            sn_ptr.push(n);
        }
        let ns = sn_ptr.len() - 1;
        let mut col2sn = vec![0usize; n];
        for s in 0..ns {
            col2sn[sn_ptr[s]..sn_ptr[s + 1]].fill(s);
        }

        // Strictly lower pattern of P A Pᵀ by columns (rows > column).
        let mut lcount = vec![0usize; n + 1];
        for (k, &kk) in perm.iter().enumerate() {
            for &c in &col_idx_a[row_ptr_a[kk]..row_ptr_a[kk + 1]] {
                let i = invperm[c];
                if i < k {
                    lcount[i + 1] += 1;
                }
            }
        }
        for i in 0..n {
            lcount[i + 1] += lcount[i];
        }
        let mut lnext = lcount.clone();
        let mut lrows = vec![0usize; lcount[n]];
        for (k, &kk) in perm.iter().enumerate() {
            for &c in &col_idx_a[row_ptr_a[kk]..row_ptr_a[kk + 1]] {
                let i = invperm[c];
                if i < k {
                    lrows[lnext[i]] = k;
                    lnext[i] += 1;
                }
            }
        }

        // Supernode patterns: own columns, rows of A below them, rows of the
        // child supernodes below them; the supernodal parent is the supernode
        // of the first row below the own columns.
        let mut row_ptr = vec![0usize];
        let mut rows: Vec<usize> = Vec::new();
        let mut child_head = vec![NONE; ns];
        let mut child_next = vec![NONE; ns];
        let mut mark = vec![NONE; n];
        let mut buf: Vec<usize> = Vec::new();
        for s in 0..ns {
            let (f, l) = (sn_ptr[s], sn_ptr[s + 1]);
            buf.clear();
            mark[f..l].fill(s);
            for j in f..l {
                for &r in &lrows[lcount[j]..lcount[j + 1]] {
                    if r >= l && mark[r] != s {
                        mark[r] = s;
                        buf.push(r);
                    }
                }
            }
            let mut c = child_head[s];
            while c != NONE {
                for &r in &rows[row_ptr[c]..row_ptr[c + 1]] {
                    if r >= l && mark[r] != s {
                        mark[r] = s;
                        buf.push(r);
                    }
                }
                c = child_next[c];
            }
            buf.sort_unstable();
            rows.extend(f..l);
            rows.extend_from_slice(&buf);
            row_ptr.push(rows.len());
            if let Some(&r) = buf.first() {
                let p = col2sn[r];
                child_next[s] = child_head[p];
                child_head[p] = s;
            }
        }

        let mut val_ptr = Vec::with_capacity(ns + 1);
        val_ptr.push(0usize);
        let mut max_rows = 0;
        let mut max_cols = 0;
        for s in 0..ns {
            let nr = row_ptr[s + 1] - row_ptr[s];
            let nc = sn_ptr[s + 1] - sn_ptr[s];
            max_rows = max_rows.max(nr);
            max_cols = max_cols.max(nc);
            let last = *val_ptr.last().unwrap_or(&0);
            val_ptr.push(last + nr * nc);
        }

        let mut sym = Self {
            n,
            a_nnz: 0,
            perm,
            invperm,
            l_nnz,
            sn_ptr,
            col2sn,
            row_ptr,
            rows,
            val_ptr,
            amap_ptr: Vec::new(),
            amap_dst: Vec::new(),
            amap_src: Vec::new(),
            cursor: Vec::new(),
            max_rows,
            max_cols,
        };
        if !sym.build_scatter(a) {
            return Err(LinalgError::InvalidStructure("supernode pattern misses an entry".into()));
        }
        Ok(sym)
    }

    /// Builds the scatter map of `a` into the supernode blocks: entry `(k, i)`, `i <= k`
    /// (permuted), goes to column `i`, row `k` of `L`, in supernode `col2sn[i]`. The rows of `a`
    /// are read in storage order, so each supernode's pairs come by increasing source (reads
    /// of the CSR values in order, writes inside one small block). Returns `false`, leaving a
    /// map to discard, when an entry of `a` lies outside the analysed pattern. Reuses the
    /// map's buffers: no allocation once they are large enough.
    fn build_scatter(&mut self, a: &CsrMatrix) -> bool {
        let (rp, ci) = (a.row_ptr(), a.col_idx());
        let ns = self.sn_ptr.len() - 1;
        let Self { invperm, col2sn, amap_ptr, amap_dst, amap_src, cursor, rows, row_ptr, sn_ptr, .. } = self;
        amap_ptr.clear();
        amap_ptr.resize(ns + 1, 0);
        for (kk, &k) in invperm.iter().enumerate() {
            for &c in &ci[rp[kk]..rp[kk + 1]] {
                let i = invperm[c];
                if i <= k {
                    amap_ptr[col2sn[i] + 1] += 1;
                }
            }
        }
        for s in 0..ns {
            amap_ptr[s + 1] += amap_ptr[s];
        }
        let total = amap_ptr[ns];
        amap_dst.clear();
        amap_dst.resize(total, 0);
        amap_src.clear();
        amap_src.resize(total, 0);
        cursor.clear();
        cursor.extend_from_slice(&amap_ptr[..ns]);
        for (kk, &k) in invperm.iter().enumerate() {
            for (&c, p) in ci[rp[kk]..rp[kk + 1]].iter().zip(rp[kk]..) {
                let i = invperm[c];
                if i > k {
                    continue;
                }
                let s = col2sn[i];
                let pat = &rows[row_ptr[s]..row_ptr[s + 1]];
                let Ok(local) = pat.binary_search(&k) else { return false };
                let q = cursor[s];
                cursor[s] += 1;
                amap_dst[q] = (i - sn_ptr[s]) * pat.len() + local;
                amap_src[q] = p;
            }
        }
        self.a_nnz = a.nnz();
        true
    }

    /// Takes `a`, whose pattern differs from the analysed one, into this analysis when every
    /// entry of `a` lies in the pattern of the factor: only the scatter map is rebuilt (no
    /// ordering, elimination tree or supernodes). The factor's pattern is closed under
    /// elimination, so `a`'s own fill lies inside it too and the numeric phase stays exact; its
    /// extra entries hold zeros. Returns `false` when `a` does not fit (a new analysis is then
    /// needed: this one must not be used before it).
    pub(crate) fn refit(&mut self, a: &CsrMatrix) -> bool {
        a.nrows() == self.n && a.ncols() == self.n && self.build_scatter(a)
    }

    /// Number of stored (strictly lower) entries of the scalar factor `L`.
    pub(crate) fn l_nnz(&self) -> usize {
        self.l_nnz
    }

    pub(crate) fn perm(&self) -> &[usize] {
        &self.perm
    }

    /// Numeric factorization of `a`, which must have the pattern analysed by
    /// [`Self::new`], into `num` (buffers reused). With `spd`, a pivot that is
    /// not strictly positive gives [`LinalgError::NotPositiveDefinite`];
    /// otherwise only an exactly zero (or non-finite) pivot is an error
    /// ([`LinalgError::ZeroPivot`]).
    pub(crate) fn factorize(&self, a: &CsrMatrix, num: &mut LdlNumeric, spd: bool) -> Result<()> {
        if a.nrows() != self.n || a.nnz() != self.a_nnz {
            return Err(LinalgError::InvalidStructure("matrix pattern differs from the symbolic analysis".into()));
        }
        let n = self.n;
        let ns = self.sn_ptr.len() - 1;
        let nval = *self.val_ptr.last().unwrap_or(&0);
        num.values.resize(nval, 0.0);
        num.d.resize(n, 0.0);
        num.inv_d.resize(n, 0.0);
        num.map.resize(n, 0);
        num.head.clear();
        num.head.resize(ns, NONE);
        num.next.resize(ns, NONE);
        num.pos.resize(ns, 0);
        num.rel.resize(self.max_rows, 0);
        num.w.resize(self.max_rows * self.max_cols, 0.0);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { self.factorize_avx2(a, num, spd) };
            }
        }
        self.factorize_impl::<false>(a, num, spd)
    }

    /// [`Self::factorize_impl`] compiled with AVX2 enabled. The kernels only
    /// use element-wise additions and multiplications (no FMA contraction,
    /// no reassociation), so the result is bitwise identical to the baseline
    /// build.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn factorize_avx2(&self, a: &CsrMatrix, num: &mut LdlNumeric, spd: bool) -> Result<()> {
        self.factorize_impl::<true>(a, num, spd)
    }

    #[inline(always)]
    fn factorize_impl<const SIMD: bool>(&self, a: &CsrMatrix, num: &mut LdlNumeric, spd: bool) -> Result<()> {
        let ns = self.sn_ptr.len() - 1;
        let avals = a.values();
        let LdlNumeric { values, d, inv_d, map, head, next, pos, rel, w, ap } = num;
        for s in 0..ns {
            let (f, l) = (self.sn_ptr[s], self.sn_ptr[s + 1]);
            let cs = l - f;
            let pat_s = &self.rows[self.row_ptr[s]..self.row_ptr[s + 1]];
            let ld_s = pat_s.len();
            let (done, rest) = values.split_at_mut(self.val_ptr[s]);
            let ls = &mut rest[..ld_s * cs];

            // Columns of A.
            ls.fill(0.0);
            let ar = self.amap_ptr[s]..self.amap_ptr[s + 1];
            for (&dst, &src) in self.amap_dst[ar.clone()].iter().zip(&self.amap_src[ar]) {
                ls[dst] = avals[src];
            }
            for (loc, &r) in pat_s.iter().enumerate() {
                map[r] = loc;
            }

            // Updates from the descendants.
            let mut dn = head[s];
            head[s] = NONE;
            while dn != NONE {
                let dd = dn;
                dn = next[dd];
                let fd = self.sn_ptr[dd];
                let cd = self.sn_ptr[dd + 1] - fd;
                let pat_d = &self.rows[self.row_ptr[dd]..self.row_ptr[dd + 1]];
                let ld_d = pat_d.len();
                let p0 = pos[dd];
                let rows_d = &pat_d[p0..];
                let m = rows_d.len();
                let k = rows_d.partition_point(|&r| r < l);
                let lblock = &done[self.val_ptr[dd]..self.val_ptr[dd] + ld_d * cd];
                let dvals = &d[fd..fd + cd];
                let rel = &mut rel[..m];
                for (x, &r) in rel.iter_mut().zip(rows_d) {
                    *x = map[r];
                }
                let wp = pack_w(w, lblock, ld_d, p0, k, dvals);
                if rel[m - 1] - rel[0] == m - 1 {
                    syrk_update::<SIMD, _>(ls, ld_s, Contig(rel[0]), 0, lblock, ld_d, p0, m, k, cd, wp, ap);
                } else {
                    syrk_update::<SIMD, _>(ls, ld_s, Indexed(rel), 0, lblock, ld_d, p0, m, k, cd, wp, ap);
                }
                pos[dd] = p0 + k;
                if k < m {
                    let target = self.col2sn[rows_d[k]];
                    next[dd] = head[target];
                    head[target] = dd;
                }
            }

            // Dense LDLᵀ of the panel: blocks of `NB_PANEL` columns updated by
            // all the previous columns, inside them blocks of `NR` columns
            // updated by the previous columns of the block (both with the
            // update kernel), then factorized column by column.
            let mut b0 = 0;
            while b0 < cs {
                let bn = NB_PANEL.min(cs - b0);
                if b0 > 0 {
                    let (left, right) = ls.split_at_mut(b0 * ld_s);
                    let wp = pack_w(w, left, ld_s, b0, bn, &d[f..f + b0]);
                    syrk_update::<SIMD, _>(right, ld_s, Contig(b0), b0, left, ld_s, b0, ld_s - b0, bn, b0, wp, ap);
                }
                let mut j0 = b0;
                while j0 < b0 + bn {
                    let nb = NR.min(b0 + bn - j0);
                    if j0 > b0 {
                        let (left, right) = ls.split_at_mut(j0 * ld_s);
                        let left = &left[b0 * ld_s..];
                        let wp = pack_w(w, left, ld_s, j0, nb, &d[f + b0..f + j0]);
                        syrk_update::<SIMD, _>(right, ld_s, Contig(j0), j0, left, ld_s, j0, ld_s - j0, nb, j0 - b0, wp, ap);
                    }
                    for j in j0..j0 + nb {
                        let (left, right) = ls.split_at_mut(j * ld_s);
                        let col_j = &mut right[j..ld_s];
                        for t in j0..j {
                            let col_t = &left[t * ld_s..(t + 1) * ld_s];
                            let wt = col_t[j] * d[f + t];
                            for (y, &x) in col_j.iter_mut().zip(&col_t[j..]) {
                                *y -= x * wt;
                            }
                        }
                        let dj = col_j[0];
                        let bad = if spd {
                            dj.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) || !dj.is_finite()
                        } else {
                            dj == 0.0 || !dj.is_finite()
                        };
                        if bad {
                            return Err(if spd {
                                LinalgError::NotPositiveDefinite { index: f + j }
                            } else {
                                LinalgError::ZeroPivot { index: f + j }
                            });
                        }
                        d[f + j] = dj;
                        let inv = 1.0 / dj;
                        inv_d[f + j] = inv;
                        for y in &mut col_j[1..] {
                            *y *= inv;
                        }
                    }
                    j0 += nb;
                }
                b0 += bn;
            }

            if cs < ld_s {
                pos[s] = cs;
                let target = self.col2sn[pat_s[cs]];
                next[s] = head[target];
                head[target] = s;
            }
        }
        // A non-finite entry of L shows up in the pivot of its row (checked),
        // so the factors are finite here.
        Ok(())
    }

    /// Length of the workspace needed by [`Self::solve_in_place`].
    pub(crate) fn solve_workspace_len(&self) -> usize {
        self.n + self.max_rows
    }

    /// Solves `A x = b` in place (`rhs.len() == n`, checked by the caller;
    /// `work.len() >= solve_workspace_len()`).
    pub(crate) fn solve_in_place(&self, num: &LdlNumeric, rhs: &mut [f64], work: &mut [f64]) {
        self.solve_dispatch(num, rhs, work, None)
    }

    /// [`Self::solve_in_place`] for a right-hand side that is zero (`+0.0`) except at the
    /// permuted position `q` (`rhs[perm[q]]`), as for the unit columns of a dense inverse. The
    /// forward substitution then only visits the supernodes on the elimination-tree path from
    /// the one holding `q` to its root: on every other supernode `y` stays `+0.0` and its
    /// updates subtract `+0.0`, which changes no bit, so the result is that of
    /// [`Self::solve_in_place`].
    pub(crate) fn solve_unit_in_place(&self, num: &LdlNumeric, q: usize, rhs: &mut [f64], work: &mut [f64]) {
        self.solve_dispatch(num, rhs, work, Some(q))
    }

    fn solve_dispatch(&self, num: &LdlNumeric, rhs: &mut [f64], work: &mut [f64], unit: Option<usize>) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { self.solve_avx2(num, rhs, work, unit) };
            }
        }
        self.solve_impl(num, rhs, work, unit)
    }

    /// [`Self::solve_impl`] compiled with AVX2 enabled (bitwise the same
    /// result, see [`Self::factorize_avx2`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn solve_avx2(&self, num: &LdlNumeric, rhs: &mut [f64], work: &mut [f64], unit: Option<usize>) {
        self.solve_impl(num, rhs, work, unit)
    }

    /// Forward substitution `L y = b'` in place on a vector already in permuted order (`x[k]`
    /// belongs to original index `perm[k]`), without `D⁻¹` or the backward pass: the `L⁻¹Jᵀ` of
    /// SOFA's `SparseLDLSolver::addJMInvJt` (`work.len() >= solve_workspace_len()`).
    pub(crate) fn forward_in_place(&self, num: &LdlNumeric, x: &mut [f64], work: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { self.forward_avx2(num, x, work) };
            }
        }
        self.forward_impl(num, x, &mut work[self.n..], None, true)
    }

    /// [`Self::forward_impl`] compiled with AVX2 enabled (same bits).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn forward_avx2(&self, num: &LdlNumeric, x: &mut [f64], work: &mut [f64]) {
        self.forward_impl(num, x, &mut work[self.n..], None, true)
    }

    /// Marks (`mark[k] = true`, permuted columns) every column of `L` a forward substitution
    /// from a right-hand side non-zero at permuted position `q` can make non-zero: the columns
    /// of the supernodes on the elimination-tree path from the one holding `q` to its root.
    /// Marked sets are closed towards the root, so the walk stops at the first supernode already
    /// marked.
    pub(crate) fn mark_reach(&self, q: usize, mark: &mut [bool]) {
        let ns = self.sn_ptr.len() - 1;
        let mut s = self.col2sn[q];
        while s < ns {
            let (f, l) = (self.sn_ptr[s], self.sn_ptr[s + 1]);
            if mark[f] {
                break;
            }
            mark[f..l].fill(true);
            let pat = &self.rows[self.row_ptr[s]..self.row_ptr[s + 1]];
            s = pat.get(l - f).map_or(ns, |&r| self.col2sn[r]);
        }
    }

    /// `1 / D(k,k)` in permuted order.
    pub(crate) fn inv_d<'a>(&self, num: &'a LdlNumeric) -> &'a [f64] {
        &num.inv_d
    }

    /// The forward substitution of [`Self::solve_impl`] on the permuted vector `x`. With
    /// `skip_zero`, a supernode whose entries of `x` are all zero when it is reached is skipped:
    /// it would subtract only zero products (sparse right-hand sides, such as constraint rows,
    /// then cost the supernodes of their elimination paths only).
    #[inline(always)]
    fn forward_impl(&self, num: &LdlNumeric, x: &mut [f64], tmp: &mut [f64], unit: Option<usize>, skip_zero: bool) {
        let ns = self.sn_ptr.len() - 1;
        // With a unit right-hand side: the next supernode of the path (`ns` once past the root).
        let mut on_path = unit.map(|q| self.col2sn[q]);
        // L y = b' (unit lower): per supernode, the dense triangle, then the
        // rows below it accumulated in `tmp` and scattered.
        for s in 0..ns {
            if let Some(p) = on_path {
                if p >= ns {
                    break;
                }
                if s != p {
                    continue;
                }
                let pat = &self.rows[self.row_ptr[s]..self.row_ptr[s + 1]];
                let cs = self.sn_ptr[s + 1] - self.sn_ptr[s];
                on_path = Some(pat[cs..].iter().map(|&r| self.col2sn[r]).min().unwrap_or(ns));
            }
            let (f, l) = (self.sn_ptr[s], self.sn_ptr[s + 1]);
            if skip_zero && x[f..l].iter().all(|v| *v == 0.0) {
                continue;
            }
            let cs = l - f;
            let pat = &self.rows[self.row_ptr[s]..self.row_ptr[s + 1]];
            let ld = pat.len();
            let block = &num.values[self.val_ptr[s]..self.val_ptr[s] + ld * cs];
            let xs = &mut x[f..l];
            for j in 0..cs {
                let col = &block[j * ld..j * ld + cs];
                let (head, tail) = xs.split_at_mut(j + 1);
                let xj = head[j];
                for (y, &v) in tail.iter_mut().zip(&col[j + 1..]) {
                    *y -= v * xj;
                }
            }
            if ld > cs {
                let t = &mut tmp[..ld - cs];
                t.fill(0.0);
                let xs = &x[f..l];
                let nc4 = cs / 4 * 4;
                // Four columns at a time: `t += (c0 x0 + c1 x1) + (c2 x2 + c3 x3)`.
                for j in (0..nc4).step_by(4) {
                    let c = |q: usize| &block[(j + q) * ld + cs..(j + q + 1) * ld];
                    let (x0, x1, x2, x3) = (xs[j], xs[j + 1], xs[j + 2], xs[j + 3]);
                    for ((((y, &a0), &a1), &a2), &a3) in t.iter_mut().zip(c(0)).zip(c(1)).zip(c(2)).zip(c(3)) {
                        *y += (a0 * x0 + a1 * x1) + (a2 * x2 + a3 * x3);
                    }
                }
                for (j, &xj) in xs.iter().enumerate().skip(nc4) {
                    for (y, &v) in t.iter_mut().zip(&block[j * ld + cs..(j + 1) * ld]) {
                        *y += v * xj;
                    }
                }
                for (&y, &r) in t.iter().zip(&pat[cs..]) {
                    x[r] -= y;
                }
            }
        }
    }

    #[inline(always)]
    fn solve_impl(&self, num: &LdlNumeric, rhs: &mut [f64], work: &mut [f64], unit: Option<usize>) {
        let (x, tmp) = work.split_at_mut(self.n);
        for (xi, &p) in x.iter_mut().zip(&self.perm) {
            *xi = rhs[p];
        }
        self.forward_impl(num, x, tmp, unit, false);
        let ns = self.sn_ptr.len() - 1;
        // z = D⁻¹ y.
        for (xi, &id) in x.iter_mut().zip(&num.inv_d) {
            *xi *= id;
        }
        // Lᵀ x' = z (unit upper): per supernode, the rows below it gathered in
        // `tmp`, dot products, then the dense triangle.
        for s in (0..ns).rev() {
            let (f, l) = (self.sn_ptr[s], self.sn_ptr[s + 1]);
            let cs = l - f;
            let pat = &self.rows[self.row_ptr[s]..self.row_ptr[s + 1]];
            let ld = pat.len();
            let block = &num.values[self.val_ptr[s]..self.val_ptr[s] + ld * cs];
            let g = &mut tmp[..ld - cs];
            for (y, &r) in g.iter_mut().zip(&pat[cs..]) {
                *y = x[r];
            }
            let xs = &mut x[f..l];
            for j in (0..cs).rev() {
                let col = &block[j * ld..(j + 1) * ld];
                xs[j] = xs[j] - dot(&col[cs..], g) - dot(&col[j + 1..cs], &xs[j + 1..]);
            }
        }
        for (&xi, &p) in x.iter().zip(&self.perm) {
            rhs[p] = xi;
        }
    }
}

/// `Σ a_i b_i` (over the common length) with 16 partial sums (lane `q`
/// sums the indices `≡ q mod 16`), combined pairwise in a fixed tree, then
/// the remainder added in order: a fixed association, vectorisable, the same
/// bits for any SIMD width.
#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let mut s = [0.0f64; 16];
    let ca = a.chunks_exact(16);
    let cb = b.chunks_exact(16);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for q in 0..16 {
            s[q] += x[q] * y[q];
        }
    }
    let mut h = [0.0f64; 8];
    for q in 0..8 {
        h[q] = s[q] + s[q + 8];
    }
    let q4 = [h[0] + h[4], h[1] + h[5], h[2] + h[6], h[3] + h[7]];
    let mut acc = (q4[0] + q4[2]) + (q4[1] + q4[3]);
    for (&x, &y) in ra.iter().zip(rb) {
        acc += x * y;
    }
    acc
}

/// Width (number of target columns) of the update kernel's register tile.
const NR: usize = 4;

/// Packs `W(j, t) = L(r0 + j, t) D(t)` (`j < k`, `t < dvals.len()`, column
/// `t` of `L` at `lblock[t * ld..]`) for [`syrk_update`]: blocks of `NR`
/// columns `j` (the last one possibly narrower), block `b` at offset
/// `b * NR * cd`, stored `t`-major (the block's `jn` values of one `t`
/// consecutive).
#[inline(always)]
fn pack_w<'w>(w: &'w mut Vec<f64>, lblock: &[f64], ld: usize, r0: usize, k: usize, dvals: &[f64]) -> &'w [f64] {
    let cd = dvals.len();
    let len = k * cd;
    if w.len() < len {
        w.resize(len, 0.0);
    }
    let wp = &mut w[..len];
    let mut j0 = 0;
    while j0 < k {
        let jn = NR.min(k - j0);
        let blk = &mut wp[j0 * cd..(j0 + jn) * cd];
        if jn == NR {
            for (t, (wt, &dt)) in blk.chunks_exact_mut(NR).zip(dvals).enumerate() {
                let col: &[f64; NR] = lblock[t * ld + r0 + j0..t * ld + r0 + j0 + NR].try_into().unwrap();
                for (x, &l) in wt.iter_mut().zip(col) {
                    *x = l * dt;
                }
            }
        } else {
            for (t, (wt, &dt)) in blk.chunks_exact_mut(jn).zip(dvals).enumerate() {
                let col = &lblock[t * ld + r0 + j0..t * ld + r0 + j0 + jn];
                for (x, &l) in wt.iter_mut().zip(col) {
                    *x = l * dt;
                }
            }
        }
        j0 += jn;
    }
    wp
}

/// Row (and column) mapping of an update into the destination block.
trait RowMap: Copy {
    /// Destination row of source row `i`.
    fn at(self, i: usize) -> usize;
    /// Subtracts the `MR x NB` tile `acc` (source rows `i0..i0 + MR`,
    /// columns `j0..j0 + NB`, destination columns `cols`) from `dst`
    /// (leading dimension `ld`); entries with row < column (upper triangle)
    /// are skipped.
    fn sub<const MR: usize, const NB: usize>(self, dst: &mut [f64], ld: usize, cols: &[usize; NB], j0: usize, i0: usize, acc: &[[f64; MR]; NB]);
}

/// Source row `i` goes to destination row `r0 + i`.
#[derive(Clone, Copy)]
struct Contig(usize);

/// Source row `i` goes to destination row `rel[i]`.
#[derive(Clone, Copy)]
struct Indexed<'a>(&'a [usize]);

impl RowMap for Contig {
    #[inline(always)]
    fn at(self, i: usize) -> usize {
        self.0 + i
    }
    #[inline(always)]
    fn sub<const MR: usize, const NB: usize>(self, dst: &mut [f64], ld: usize, cols: &[usize; NB], j0: usize, i0: usize, acc: &[[f64; MR]; NB]) {
        if i0 + 1 >= j0 + NB {
            for (&c, a) in cols.iter().zip(acc) {
                let base = c * ld + self.0 + i0;
                let y: &mut [f64; MR] = (&mut dst[base..base + MR]).try_into().unwrap();
                for (y, &x) in y.iter_mut().zip(a) {
                    *y -= x;
                }
            }
        } else {
            for (jj, (&c, a)) in cols.iter().zip(acc).enumerate() {
                let base = c * ld + self.0 + i0;
                let y: &mut [f64; MR] = (&mut dst[base..base + MR]).try_into().unwrap();
                for (ii, (y, &x)) in y.iter_mut().zip(a).enumerate() {
                    if i0 + ii >= j0 + jj {
                        *y -= x;
                    }
                }
            }
        }
    }
}

impl RowMap for Indexed<'_> {
    #[inline(always)]
    fn at(self, i: usize) -> usize {
        self.0[i]
    }
    #[inline(always)]
    fn sub<const MR: usize, const NB: usize>(self, dst: &mut [f64], ld: usize, cols: &[usize; NB], j0: usize, i0: usize, acc: &[[f64; MR]; NB]) {
        let rel: &[usize; MR] = self.0[i0..i0 + MR].try_into().unwrap();
        if i0 + 1 >= j0 + NB {
            for (&c, a) in cols.iter().zip(acc) {
                let col = &mut dst[c * ld..(c + 1) * ld];
                for (&x, &r) in a.iter().zip(rel) {
                    col[r] -= x;
                }
            }
        } else {
            for (jj, (&c, a)) in cols.iter().zip(acc).enumerate() {
                let col = &mut dst[c * ld..(c + 1) * ld];
                for (ii, (&x, &r)) in a.iter().zip(rel).enumerate() {
                    if i0 + ii >= j0 + jj {
                        col[r] -= x;
                    }
                }
            }
        }
    }
}

/// [`tile`], with AVX2 intrinsics when `SIMD` (only inside
/// `factorize_avx2`) and `MR` is a multiple of 4: the same operations on
/// every element, hence bitwise the same result.
#[inline(always)]
fn tile_any<const SIMD: bool, const MR: usize, const NB: usize>(a: &[f64], lda: usize, row: usize, wp: &[f64]) -> [[f64; MR]; NB] {
    #[cfg(target_arch = "x86_64")]
    {
        if SIMD && MR.is_multiple_of(4) && MR <= 8 {
            // SAFETY: `SIMD` is true only in code reached from
            // `factorize_avx2`, which is called after detecting AVX2.
            return unsafe { tile_avx2::<MR, NB>(a, lda, row, wp) };
        }
    }
    tile::<MR, NB>(a, lda, row, wp)
}

/// AVX2 version of [`tile`] for `MR` = 4 or 8: per `t`, `acc + a * w` with
/// separate multiplications and additions (no FMA), as the portable code.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn tile_avx2<const MR: usize, const NB: usize>(a: &[f64], lda: usize, row: usize, wp: &[f64]) -> [[f64; MR]; NB] {
    use core::arch::x86_64::{__m256d, _mm256_add_pd, _mm256_broadcast_sd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd, _mm256_storeu_pd};
    let mut out = [[0.0f64; MR]; NB];
    let nv = MR / 4;
    let cd = wp.len() / NB;
    if cd == 0 || nv == 0 {
        return out;
    }
    // One check for the whole loop: the last column read ends inside `a`.
    assert!((cd - 1) * lda + row + MR <= a.len() && MR <= 8);
    let mut acc: [[__m256d; 2]; NB] = [[_mm256_setzero_pd(); 2]; NB];
    for (t, w) in wp.chunks_exact(NB).enumerate() {
        // SAFETY: `t < cd`, so the `MR <= 8` values at `t * lda + row` lie
        // inside `a` (asserted above); `loadu` has no alignment requirement.
        let p = a.as_ptr().add(t * lda + row);
        let a0 = _mm256_loadu_pd(p);
        let a1 = if nv == 2 { _mm256_loadu_pd(p.add(4)) } else { a0 };
        for (accj, wj) in acc.iter_mut().zip(w) {
            let wv = _mm256_broadcast_sd(wj);
            accj[0] = _mm256_add_pd(accj[0], _mm256_mul_pd(a0, wv));
            if nv == 2 {
                accj[1] = _mm256_add_pd(accj[1], _mm256_mul_pd(a1, wv));
            }
        }
    }
    for (o, accj) in out.iter_mut().zip(&acc) {
        for (v, &x) in accj.iter().enumerate().take(nv) {
            // SAFETY: `4 * v + 4 <= MR`: the 4 values lie inside `o`.
            _mm256_storeu_pd(o.as_mut_ptr().add(4 * v), x);
        }
    }
    out
}

/// Register tile: `acc[jj][ii] = Σ_t a[t * lda + row + ii] * wp[t * NB + jj]`,
/// accumulated in increasing `t` from `0.0`.
#[inline(always)]
fn tile<const MR: usize, const NB: usize>(a: &[f64], lda: usize, row: usize, wp: &[f64]) -> [[f64; MR]; NB] {
    let mut acc = [[0.0f64; MR]; NB];
    let cd = wp.len() / NB;
    if cd == 0 {
        return acc;
    }
    // One check for the whole loop: the last column read ends inside `a`.
    assert!((cd - 1) * lda + row + MR <= a.len());
    for (t, w) in wp.chunks_exact(NB).enumerate() {
        // SAFETY: `t < cd`, so `t * lda + row + MR <= (cd - 1) * lda + row + MR
        // <= a.len()` (asserted above): the `MR` values are inside `a`.
        let col: &[f64; MR] = unsafe { &*(a.as_ptr().add(t * lda + row) as *const [f64; MR]) };
        let w: &[f64; NB] = w.try_into().unwrap();
        for jj in 0..NB {
            for ii in 0..MR {
                acc[jj][ii] += col[ii] * w[jj];
            }
        }
    }
    acc
}

/// All row tiles of one block of `NB` target columns `j0..j0 + NB`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn update_block<const SIMD: bool, M: RowMap, const NB: usize>(
    dst: &mut [f64],
    ld: usize,
    map: M,
    col_shift: usize,
    a: &[f64],
    lda: usize,
    a0: usize,
    m: usize,
    j0: usize,
    wpb: &[f64],
) {
    let cols: [usize; NB] = core::array::from_fn(|jj| map.at(j0 + jj) - col_shift);
    let mut i = j0;
    while i + 8 <= m {
        let acc = tile_any::<SIMD, 8, NB>(a, lda, a0 + i, wpb);
        map.sub(dst, ld, &cols, j0, i, &acc);
        i += 8;
    }
    if i + 4 <= m {
        let acc = tile_any::<SIMD, 4, NB>(a, lda, a0 + i, wpb);
        map.sub(dst, ld, &cols, j0, i, &acc);
        i += 4;
    }
    if i + 2 <= m {
        let acc = tile_any::<SIMD, 2, NB>(a, lda, a0 + i, wpb);
        map.sub(dst, ld, &cols, j0, i, &acc);
        i += 2;
    }
    if i < m {
        let acc = tile_any::<SIMD, 1, NB>(a, lda, a0 + i, wpb);
        map.sub(dst, ld, &cols, j0, i, &acc);
    }
}

/// Columns of a panel block (see `factorize_impl`).
const NB_PANEL: usize = 32;

/// Updates whose `A` part has at least this many values (and more than one
/// block of target columns) first copy it into contiguous 8-row panels.
const PACK_MIN: usize = 4096;

/// The update `dst(map(i), map(j) - col_shift) -= Σ_t A(a0 + i, t) W(j, t)`
/// for `j < k`, `j <= i < m`, `t < cd`, where column `t` of `A` is
/// `a[t * lda..]` and `W` is packed by [`pack_w`]. Every entry is computed by
/// one register tile, accumulating over `t` in increasing order from `0.0`,
/// then subtracted: the tiling (and the packing of large `A` parts into
/// `ap`, which makes the reads sequential) does not change the result.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn syrk_update<const SIMD: bool, M: RowMap>(
    dst: &mut [f64],
    ld: usize,
    map: M,
    col_shift: usize,
    a: &[f64],
    lda: usize,
    a0: usize,
    m: usize,
    k: usize,
    cd: usize,
    wp: &[f64],
    ap: &mut Vec<f64>,
) {
    if cd == 0 {
        return;
    }
    if k > NR && m * cd >= PACK_MIN {
        // Panel p holds rows 8p..8p + 8 (zero-padded), `t`-major.
        let npan = m.div_ceil(8);
        let len = npan * 8 * cd;
        if ap.len() < len {
            ap.resize(len, 0.0);
        }
        let ap = &mut ap[..len];
        for (p, pan) in ap.chunks_exact_mut(8 * cd).enumerate() {
            let r = 8 * p;
            let rn = 8.min(m - r);
            for (t, x8) in pan.chunks_exact_mut(8).enumerate() {
                let src = &a[t * lda + a0 + r..t * lda + a0 + r + rn];
                x8[..rn].copy_from_slice(src);
                x8[rn..].fill(0.0);
            }
        }
        let full = m / 8;
        let mut j0 = 0;
        while j0 < k {
            let jn = NR.min(k - j0);
            let wpb = &wp[j0 * cd..(j0 + jn) * cd];
            match jn {
                4 => packed_block::<SIMD, M, 4>(dst, ld, map, col_shift, ap, cd, m, full, j0, wpb),
                3 => packed_block::<SIMD, M, 3>(dst, ld, map, col_shift, ap, cd, m, full, j0, wpb),
                2 => packed_block::<SIMD, M, 2>(dst, ld, map, col_shift, ap, cd, m, full, j0, wpb),
                _ => packed_block::<SIMD, M, 1>(dst, ld, map, col_shift, ap, cd, m, full, j0, wpb),
            }
            j0 += jn;
        }
        return;
    }
    let mut j0 = 0;
    while j0 < k {
        let jn = NR.min(k - j0);
        let wpb = &wp[j0 * cd..(j0 + jn) * cd];
        match jn {
            4 => update_block::<SIMD, M, 4>(dst, ld, map, col_shift, a, lda, a0, m, j0, wpb),
            3 => update_block::<SIMD, M, 3>(dst, ld, map, col_shift, a, lda, a0, m, j0, wpb),
            2 => update_block::<SIMD, M, 2>(dst, ld, map, col_shift, a, lda, a0, m, j0, wpb),
            _ => update_block::<SIMD, M, 1>(dst, ld, map, col_shift, a, lda, a0, m, j0, wpb),
        }
        j0 += jn;
    }
}

/// [`update_block`] on `A` packed in 8-row panels (`full` complete ones);
/// the tiles start at multiples of 8 (rows above the block are masked).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn packed_block<const SIMD: bool, M: RowMap, const NB: usize>(
    dst: &mut [f64],
    ld: usize,
    map: M,
    col_shift: usize,
    ap: &[f64],
    cd: usize,
    m: usize,
    full: usize,
    j0: usize,
    wpb: &[f64],
) {
    let cols: [usize; NB] = core::array::from_fn(|jj| map.at(j0 + jj) - col_shift);
    for p in j0 / 8..full {
        let acc = tile_any::<SIMD, 8, NB>(&ap[p * 8 * cd..(p + 1) * 8 * cd], 8, 0, wpb);
        map.sub(dst, ld, &cols, j0, 8 * p, &acc);
    }
    let mut i = 8 * full;
    if i < m {
        let pan = &ap[full * 8 * cd..(full + 1) * 8 * cd];
        if i + 4 <= m {
            let acc = tile_any::<SIMD, 4, NB>(pan, 8, i - 8 * full, wpb);
            map.sub(dst, ld, &cols, j0, i, &acc);
            i += 4;
        }
        if i + 2 <= m {
            let acc = tile_any::<SIMD, 2, NB>(pan, 8, i - 8 * full, wpb);
            map.sub(dst, ld, &cols, j0, i, &acc);
            i += 2;
        }
        if i < m {
            let acc = tile_any::<SIMD, 1, NB>(pan, 8, i - 8 * full, wpb);
            map.sub(dst, ld, &cols, j0, i, &acc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Symmetric positive definite matrix with 3x3 blocks on a random
    /// pattern, plus its dense copy.
    fn block_spd(nodes: usize, seed: u64) -> CsrMatrix {
        let mut state = seed;
        let mut rnd = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 11) as f64) / ((1u64 << 53) as f64)
        };
        let n = 3 * nodes;
        let mut t = Vec::new();
        for a in 0..nodes {
            for _ in 0..4 {
                let b = (rnd() * nodes as f64) as usize % nodes;
                if a == b {
                    continue;
                }
                for r in 0..3 {
                    for c in 0..3 {
                        let v = rnd() - 0.5;
                        t.push((3 * a + r, 3 * b + c, v));
                        t.push((3 * b + c, 3 * a + r, v));
                    }
                }
            }
        }
        for i in 0..n {
            t.push((i, i, 40.0 + rnd()));
        }
        CsrMatrix::from_triplets(n, n, &t).unwrap()
    }

    /// The AVX2 build of the kernels gives bitwise the baseline result.
    #[test]
    fn simd_and_baseline_paths_agree_bitwise() {
        let a = block_spd(150, 3);
        let n = a.nrows();
        for perm in [(0..n).collect::<Vec<_>>(), (0..n).rev().collect()] {
            let sym = LdlSymbolic::new(&a, perm).unwrap();
            let mut dispatched = LdlNumeric::default();
            sym.factorize(&a, &mut dispatched, false).unwrap();
            let mut baseline = dispatched.clone();
            baseline.values.fill(0.0);
            sym.factorize_impl::<false>(&a, &mut baseline, false).unwrap();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&dispatched.values), bits(&baseline.values));
            assert_eq!(bits(&dispatched.d), bits(&baseline.d));
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).cos()).collect();
            let mut work = vec![0.0; sym.solve_workspace_len()];
            let mut x1 = b.clone();
            sym.solve_in_place(&dispatched, &mut x1, &mut work);
            let mut x2 = b.clone();
            sym.solve_impl(&baseline, &mut x2, &mut work, None);
            assert_eq!(bits(&x1), bits(&x2));
            // and it solves the system
            let mut r = vec![0.0; n];
            a.mul_vec(&x1, &mut r).unwrap();
            let err = r.iter().zip(&b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
            assert!(err < 1e-12, "residual {err}");
        }
    }
}
