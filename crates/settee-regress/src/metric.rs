//! The exact comparison of SOFA's C++ regression driver (spec §5.5, §5.6, §5.8).
//!
//! Per dumped state, a [`StateComparer`] replays `CompareState`: at every step start it consumes
//! the reference records that are due and compares the current state with the last one, using
//! `MechanicalObject::compareVec`'s formula on **printed** (`%.6g`) current values. The scene
//! statistic is [`error_by_dof`]; the scene FAILS iff `error_by_dof > epsilon` (strict), or if
//! any error message was emitted while loading/running it (that part is the harness's job).

use crate::gformat::round_g6;
use crate::reference::{StateRecord, TopologyRecord, TOPOLOGY_SECTIONS};

/// Result of comparing one reference line with the current vector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineComparison {
    /// `e = Σ|ref_j − cur_j| / m` (0 if `m == 0`).
    pub error: f64,
    /// `m`: number of scalar pairs compared.
    pub count: usize,
    /// Largest `|ref_j − cur_j|` among the compared pairs (0 if none).
    pub max_abs_diff: f64,
}

/// `compareVec` (§5.6): `current` is rounded to 6 significant digits (printed with `%.6g` and
/// re-parsed), then compared pairwise with `reference` over `m = min(len)` scalars.
///
/// Like the C++ `istream >> double` loop, comparison stops at the first pair where either side
/// is not a finite number (`nan`/`inf` text cannot be read back by C++ streams), so `m` is
/// smaller than `min(len)` only for diverged states.
pub fn compare_line(reference: &[f64], current: &[f64]) -> LineComparison {
    let mut sum = 0.0;
    let mut count = 0;
    let mut max_abs_diff = 0.0_f64;
    for (&r, &c) in reference.iter().zip(current) {
        let c = round_g6(c);
        if !r.is_finite() || !c.is_finite() {
            break;
        }
        let d = (r - c).abs();
        sum += d;
        max_abs_diff = max_abs_diff.max(d);
        count += 1;
    }
    LineComparison { error: if count == 0 { 0.0 } else { sum / count as f64 }, count, max_abs_diff }
}

/// What happened at one step start where a reference record was due.
#[derive(Debug, Clone, PartialEq)]
pub struct StepComparison {
    /// Time of the (last) consumed record, the one compared.
    pub record_time: f64,
    /// Number of records consumed at this step start (normally 1; more if the simulation time
    /// skipped over records, in which case only the last one is compared).
    pub records_consumed: usize,
    /// Position comparison.
    pub x: LineComparison,
    /// Velocity comparison, if the record has `V=` and velocities were supplied.
    pub v: Option<LineComparison>,
}

/// Replays SOFA's `CompareState` for one mechanical state.
///
/// Feed it the state at the start of every step with [`at_step_start`](Self::at_step_start);
/// read [`dof_error`](Self::dof_error) at the end.
#[derive(Debug, Clone)]
pub struct StateComparer {
    records: Vec<StateRecord>,
    next: usize,
    n: usize,
    total_error: f64,
    dof_error: f64,
    max_abs_diff: f64,
    records_compared: usize,
    diagnostic_epsilon: Option<f64>,
    first_exceeding_time: Option<f64>,
}

impl StateComparer {
    /// `records`: the reference file of this state, in file order; `n`: the state's element
    /// count (`getSize()`: points, or rigid frames, not scalars).
    pub fn new(records: Vec<StateRecord>, n: usize) -> Self {
        StateComparer {
            records,
            next: 0,
            n,
            total_error: 0.0,
            dof_error: 0.0,
            max_abs_diff: 0.0,
            records_compared: 0,
            diagnostic_epsilon: None,
            first_exceeding_time: None,
        }
    }

    /// Enables [`first_exceeding_time`](Self::first_exceeding_time): the time of the first
    /// record whose per-line error `e` (X or V) exceeds `epsilon`. Diagnostics only; the
    /// verdict uses [`error_by_dof`].
    pub fn with_diagnostic_epsilon(mut self, epsilon: f64) -> Self {
        self.diagnostic_epsilon = Some(epsilon);
        self
    }

    /// Called at each step start (`AnimateBeginEvent`) with the current node time `time`, the
    /// time step `dt`, and the current positions `x` and (optionally) velocities `v` as flat
    /// scalar vectors.
    ///
    /// Consumes every not-yet-consumed record with `T ≤ time + 0.001·dt`; if any was consumed,
    /// compares the last of them and returns the details, otherwise returns `None`.
    pub fn at_step_start(&mut self, time: f64, dt: f64, x: &[f64], v: Option<&[f64]>) -> Option<StepComparison> {
        // Same expression as CompareState: (time + shift) + dt * 0.001, shift = 0.
        let limit = time + dt * 0.001;
        let start = self.next;
        while self.next < self.records.len() && self.records[self.next].time <= limit {
            self.next += 1;
        }
        if self.next == start {
            return None;
        }
        let rec = &self.records[self.next - 1];

        let xc = compare_line(&rec.x, x);
        let vc = match (&rec.v, v) {
            (Some(rv), Some(cv)) => Some(compare_line(rv, cv)),
            _ => None,
        };
        for c in std::iter::once(&xc).chain(vc.as_ref()) {
            self.total_error += c.error;
            // CompareState skips the division for an empty state instead of producing NaN.
            if self.n != 0 {
                self.dof_error += c.error / self.n as f64;
            }
            self.max_abs_diff = self.max_abs_diff.max(c.max_abs_diff);
            if let Some(eps) = self.diagnostic_epsilon {
                if self.first_exceeding_time.is_none() && c.error > eps {
                    self.first_exceeding_time = Some(rec.time);
                }
            }
        }
        self.records_compared += 1;
        Some(StepComparison { record_time: rec.time, records_consumed: self.next - start, x: xc, v: vc })
    }

    /// `totalError`: Σ over compared records of `e_X + e_V`.
    pub fn total_error(&self) -> f64 {
        self.total_error
    }

    /// `dofError`: Σ over compared records of `e_X/n + e_V/n` (the value averaged by
    /// [`error_by_dof`]).
    pub fn dof_error(&self) -> f64 {
        self.dof_error
    }

    /// Largest `|ref − cur|` (after rounding `cur` to 6 digits) seen in any compared line.
    pub fn max_abs_diff(&self) -> f64 {
        self.max_abs_diff
    }

    /// Number of step starts at which a comparison took place.
    pub fn records_compared(&self) -> usize {
        self.records_compared
    }

    /// Number of reference records not consumed yet (e.g. the run was shorter than the
    /// reference).
    pub fn pending_records(&self) -> usize {
        self.records.len() - self.next
    }

    /// See [`with_diagnostic_epsilon`](Self::with_diagnostic_epsilon).
    pub fn first_exceeding_time(&self) -> Option<f64> {
        self.first_exceeding_time
    }

    /// The element count `n` given at construction.
    pub fn element_count(&self) -> usize {
        self.n
    }
}

/// Scene statistic `errorByDof = Σ w·dofError / Σ w` over `(dofError, w)` pairs, `w` being the
/// number of nodes whose nearest comparer is that one (spec §5.6).
///
/// The scene FAILS iff `error_by_dof(..) > epsilon` (strict; see [`fails`]). With no weight at
/// all the C++ driver computes 0/0 = NaN, which never fails; we return 0.0, same verdict.
pub fn error_by_dof(comparers: &[(f64, usize)]) -> f64 {
    let total_weight: usize = comparers.iter().map(|&(_, w)| w).sum();
    if total_weight == 0 {
        return 0.0;
    }
    let sum: f64 = comparers.iter().map(|&(d, w)| w as f64 * d).sum();
    sum / total_weight as f64
}

/// The metric part of the verdict: `error_by_dof > epsilon` (strict). NaN never fails, as in
/// C++.
pub fn fails(error_by_dof: f64, epsilon: f64) -> bool {
    error_by_dof > epsilon
}

/// Per-record topology error of `CompareTopology` (spec §5.8), per element type in
/// [`TOPOLOGY_SECTIONS`] order: for each type whose **reference** count is non-zero, the count
/// difference if the counts differ, else the number of elements with any differing vertex
/// index (in order). A reference count of 0 is not compared. The test fails if the sum over all
/// records, containers and types is non-zero.
pub fn topology_errors(reference: &TopologyRecord, current: &TopologyRecord) -> [u64; 5] {
    let mut out = [0; 5];
    for (k, ((_, arity), (r, c))) in TOPOLOGY_SECTIONS.iter().zip(reference.sections().into_iter().zip(current.sections())).enumerate() {
        let (nr, nc) = (r.len() / arity, c.len() / arity);
        out[k] = if nr == 0 {
            0
        } else if nr != nc {
            nr.abs_diff(nc) as u64
        } else {
            r.chunks(*arity).zip(c.chunks(*arity)).filter(|(a, b)| a != b).count() as u64
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time: f64, x: &[f64], v: Option<&[f64]>) -> StateRecord {
        StateRecord { time, x: x.to_vec(), v: v.map(<[f64]>::to_vec) }
    }

    #[test]
    fn compare_line_rounds_current_values() {
        // Current values are rounded to 6 significant digits before comparing:
        // 1.0000004 prints as "1" (no difference), 2.0000051 as "2.00001".
        let c = compare_line(&[1.0, 2.0], &[1.000_000_4, 2.000_005_1]);
        assert_eq!(c.count, 2);
        assert!((c.error - 0.5e-5).abs() < 1e-15, "{}", c.error);
        assert!((c.max_abs_diff - 1e-5).abs() < 1e-15);
        // m = min(len): extra values on either side are ignored.
        let c = compare_line(&[1.0, 2.0, 3.0], &[1.5]);
        assert_eq!((c.count, c.error), (1, 0.5));
        let c = compare_line(&[1.0], &[1.5, 100.0]);
        assert_eq!((c.count, c.error), (1, 0.5));
        // m == 0 -> e = 0.
        assert_eq!(compare_line(&[], &[1.0]).error, 0.0);
        // C++ streams stop reading at nan/inf.
        let c = compare_line(&[1.0, 2.0, 3.0], &[2.0, f64::NAN, 0.0]);
        assert_eq!((c.count, c.error), (1, 1.0));
        let c = compare_line(&[f64::INFINITY, 2.0], &[0.0, 0.0]);
        assert_eq!((c.count, c.error), (0, 0.0));
    }

    #[test]
    fn comparer_timing_and_accumulation() {
        // Two Vec3 points (n = 2, 6 scalars), records at T=0 and T=0.3 with dt = 0.1.
        let refs = vec![rec(0.0, &[0.0, 0.0, 0.0, 1.0, 1.0, 1.0], Some(&[0.0; 6])), rec(0.3, &[0.0, 0.0, 0.0, 1.0, 1.0, 2.0], None)];
        let mut c = StateComparer::new(refs, 2).with_diagnostic_epsilon(0.05);
        let dt = 0.1;
        // Step 0 at t = 0: X identical, V differs by 0.6 in one scalar -> e_V = 0.1.
        let s = c.at_step_start(0.0, dt, &[0.0, 0.0, 0.0, 1.0, 1.0, 1.0], Some(&[0.6, 0., 0., 0., 0., 0.])).unwrap();
        assert_eq!(s.record_time, 0.0);
        assert_eq!(s.x.error, 0.0);
        assert!((s.v.unwrap().error - 0.1).abs() < 1e-15);
        // Steps at t = 0.1, 0.2: nothing due.
        let x = [0.0, 0.0, 0.0, 1.0, 1.0, 1.4];
        assert!(c.at_step_start(0.1, dt, &x, None).is_none());
        assert!(c.at_step_start(0.2, dt, &x, None).is_none());
        // Accumulated time 0.30000000000000004 reaches T=0.3.
        let s = c.at_step_start(0.1 + 0.1 + 0.1, dt, &x, None).unwrap();
        assert_eq!(s.records_consumed, 1);
        assert!(s.v.is_none());
        // e_X = 0.6 / 6 = 0.1
        assert!((s.x.error - 0.1).abs() < 1e-15);
        assert!(c.at_step_start(0.4, dt, &x, None).is_none());

        assert_eq!(c.records_compared(), 2);
        assert_eq!(c.pending_records(), 0);
        // totalError = e_V(0) + e_X(0.3) = 0.2; dofError = 0.2 / n = 0.1
        assert!((c.total_error() - 0.2).abs() < 1e-15);
        assert!((c.dof_error() - 0.1).abs() < 1e-15);
        assert!((c.max_abs_diff() - 0.6).abs() < 1e-15);
        assert_eq!(c.first_exceeding_time(), Some(0.0));
    }

    #[test]
    fn tolerance_and_last_record_wins() {
        let refs =
            vec![rec(0.0, &[0.0], None), rec(0.1, &[1.0], None), rec(0.2, &[2.0], None), rec(0.30005, &[3.0], None), rec(0.3002, &[4.0], None)];
        let mut c = StateComparer::new(refs, 1);
        let dt = 0.1;
        // Time jumped: at t=0.25 records 0, 0.1, 0.2 are due, only T=0.2 is compared.
        let s = c.at_step_start(0.25, dt, &[2.5], None).unwrap();
        assert_eq!((s.records_consumed, s.record_time, s.x.error), (3, 0.2, 0.5));
        // T=0.30005 <= 0.3 + 0.0001, T=0.3002 is not.
        let s = c.at_step_start(0.3, dt, &[3.0], None).unwrap();
        assert_eq!((s.records_consumed, s.record_time, s.x.error), (1, 0.30005, 0.0));
        assert_eq!(c.pending_records(), 1);
        assert_eq!(c.records_compared(), 2);
        assert_eq!(c.dof_error(), 0.5);
        assert_eq!(c.first_exceeding_time(), None);
    }

    #[test]
    fn empty_state_and_missing_velocity() {
        // n == 0: dofError not accumulated (no NaN), totalError still is.
        let mut c = StateComparer::new(vec![rec(0.0, &[1.0], Some(&[1.0]))], 0);
        c.at_step_start(0.0, 0.01, &[2.0], Some(&[3.0])).unwrap();
        assert_eq!(c.total_error(), 3.0);
        assert_eq!(c.dof_error(), 0.0);
        // Reference with V but the caller supplies none: only X is compared.
        let mut c = StateComparer::new(vec![rec(0.0, &[1.0], Some(&[1.0]))], 1);
        let s = c.at_step_start(0.0, 0.01, &[2.0], None).unwrap();
        assert!(s.v.is_none());
        assert_eq!(c.dof_error(), 1.0);
    }

    #[test]
    fn fembar_last_digit_flip_budget() {
        // Spec §5.6 example: 320 Vec3 points, one last-digit flip of a value in [10, 100)
        // gives e = 1e-4/960 and dofError = e/320 ≈ 3.26e-10.
        let reference: Vec<f64> = (0..960).map(|i| 10.0 + i as f64 * 0.01).collect();
        let mut current = reference.clone();
        current[5] += 1e-4; // 10.05 -> 10.0501
        let mut c = StateComparer::new(vec![rec(1.98, &reference, None)], 320);
        c.at_step_start(1.98, 0.02, &current, None).unwrap();
        let want = 1e-4 / 960.0 / 320.0;
        assert!((c.dof_error() - want).abs() < 1e-6 * want, "{}", c.dof_error());
        assert!(!fails(error_by_dof(&[(c.dof_error(), 1)]), 1e-8));
    }

    #[test]
    fn scene_statistic() {
        // liver-like weights [2, 1].
        let e = error_by_dof(&[(3e-5, 2), (6e-5, 1)]);
        assert!((e - 4e-5).abs() < 1e-18);
        assert_eq!(error_by_dof(&[]), 0.0);
        assert_eq!(error_by_dof(&[(1.0, 0)]), 0.0);
        // Strict comparison.
        assert!(!fails(1e-4, 1e-4));
        assert!(fails(1.0000001e-4, 1e-4));
        assert!(!fails(f64::NAN, 1e-4));
    }

    #[test]
    fn topology_record_errors() {
        let r = TopologyRecord {
            time: 0.0,
            edges: vec![0, 1, 1, 2, 2, 3],
            triangles: vec![0, 1, 2, 1, 2, 3],
            quads: vec![],
            tetrahedra: vec![0, 1, 2, 3],
            hexahedra: vec![],
        };
        let c = TopologyRecord {
            time: 0.0,
            edges: vec![0, 1, 2, 1, 2, 3], // 1 edge differs (order matters)
            triangles: vec![0, 1, 2],      // count 2 vs 1
            quads: vec![0, 1, 2, 3],       // reference count 0: not compared
            tetrahedra: vec![0, 1, 2, 3],  // equal
            hexahedra: (0..8).collect(),   // reference count 0: not compared
        };
        assert_eq!(topology_errors(&r, &c), [1, 1, 0, 0, 0]);
        assert_eq!(topology_errors(&r, &r), [0; 5]);
    }

    #[test]
    fn real_reference_against_itself() {
        let Some(suite) = settee_testkit::suite() else {
            return;
        };
        let path = suite.join("references/Component/LinearSolver/Direct/FEMBAR_SparseLDLSolver.scn.reference_0_DoFs_mstate.txt.gz");
        let recs = crate::reference::read_state_reference(&path).unwrap();
        let (x0, x1) = (recs[0].x.clone(), recs[1].x.clone());
        let (v1, n) = (recs[1].v.clone().unwrap(), recs[0].x.len() / 3);
        let mut c = StateComparer::new(recs, n);
        let dt = 0.02;
        let mut t = 0.0;
        for k in 0..100 {
            let (x, v) = if k == 99 { (&x1, Some(&v1[..])) } else { (&x0, None) };
            c.at_step_start(t, dt, x, v);
            t += dt;
        }
        // The accumulated time after 99 steps (1.9800000000000013) still matches T=1.98.
        assert_eq!(c.records_compared(), 2);
        assert_eq!(c.dof_error(), 0.0);
        assert_eq!(c.max_abs_diff(), 0.0);
    }
}
