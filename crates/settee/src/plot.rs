//! `settee plot`: quantities over time drawn as SVG or PNG charts.
//!
//! Inputs are state dumps (`settee run --dump`, SOFA's reference format `*_mstate.txt.gz`),
//! Monitor position files (`*_x.txt`: `time x0 y0 z0 x1 …` per line, `#` comments), or a run of
//! a scene, during which kinetic energy and the constraint solvers' iterations and residual are
//! recorded step by step ([`EnergyRecorder`]).

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use settee_core::role;
use settee_core::{Scene, VecId};

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// One chart: series sharing axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub title: String,
    pub y_label: String,
    /// Logarithmic y axis (residuals).
    pub log_y: bool,
    pub series: Vec<Series>,
}

/// Which scalar of a DOF to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coord {
    X,
    Y,
    Z,
    /// The Euclidean norm of the DOF's position (its first three coordinates at most).
    Norm,
}

impl std::str::FromStr for Coord {
    type Err = String;
    fn from_str(s: &str) -> Result<Coord, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "x" => Coord::X,
            "y" => Coord::Y,
            "z" => Coord::Z,
            "norm" => Coord::Norm,
            _ => return Err(format!("'{s}' is not a coordinate: use x, y, z or norm")),
        })
    }
}

impl Coord {
    fn name(self) -> &'static str {
        match self {
            Coord::X => "x",
            Coord::Y => "y",
            Coord::Z => "z",
            Coord::Norm => "|x|",
        }
    }
}

/// A trajectory read from a file: times, and per time all DOFs' coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    pub times: Vec<f64>,
    pub frames: Vec<Vec<f64>>,
    /// Scalars per DOF in `frames` (3 for Vec3, 7 for Rigid3).
    pub coord_size: usize,
}

impl Trajectory {
    /// Number of DOFs (of the first frame).
    pub fn dofs(&self) -> usize {
        self.frames.first().map(|f| f.len() / self.coord_size.max(1)).unwrap_or(0)
    }

    /// One coordinate of one DOF over time.
    pub fn series(&self, dof: usize, coord: Coord) -> Result<Vec<(f64, f64)>, String> {
        let n = self.dofs();
        if dof >= n {
            return Err(format!("DOF {dof} does not exist: the state has {n} DOFs (0 to {})", n.saturating_sub(1)));
        }
        let k = self.coord_size;
        let pick = |f: &[f64]| -> f64 {
            let c = &f[dof * k..(dof + 1) * k];
            match coord {
                Coord::X => c[0],
                Coord::Y => c.get(1).copied().unwrap_or(f64::NAN),
                Coord::Z => c.get(2).copied().unwrap_or(f64::NAN),
                Coord::Norm => c.iter().take(3).map(|x| x * x).sum::<f64>().sqrt(),
            }
        };
        Ok(self.times.iter().zip(&self.frames).filter(|(_, f)| f.len() >= (dof + 1) * k).map(|(t, f)| (*t, pick(f))).collect())
    }
}

/// Reads a state dump (`.txt.gz` or plain `.txt` in SOFA's reference format) or a Monitor
/// `_x.txt` file.
pub fn read_trajectory(path: &Path) -> Result<Trajectory, String> {
    let text = settee_regress::reference::read_dump_text(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if text.text.lines().any(|l| l.trim_start().starts_with("T=")) {
        let records =
            settee_regress::reference::parse_state_text(&text.text, text.truncated, path).map_err(|e| format!("{}: {e}", path.display()))?;
        if records.is_empty() {
            return Err(format!("{}: no record", path.display()));
        }
        // The coordinate size: Rigid3 records have 7 scalars per position and 6 per velocity.
        let r = &records[0];
        let coord_size = match &r.v {
            Some(v) if !v.is_empty() && r.x.len() * 6 == v.len() * 7 => 7,
            _ if r.x.len() % 3 == 0 => 3,
            _ if r.x.len() % 2 == 0 => 2,
            _ => 1,
        };
        return Ok(Trajectory { times: records.iter().map(|r| r.time).collect(), frames: records.into_iter().map(|r| r.x).collect(), coord_size });
    }
    // Monitor output: `time v0 v1 …` per line, Vec3 values.
    let mut times = Vec::new();
    let mut frames = Vec::new();
    for (i, line) in text.text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let nums: Result<Vec<f64>, _> = l.split_whitespace().map(str::parse::<f64>).collect();
        let nums = nums.map_err(|_| {
            format!("{}:{}: not a line of numbers (expected a dump record `T=…` or a Monitor line `time x y z …`)", path.display(), i + 1)
        })?;
        if nums.len() < 2 {
            continue;
        }
        times.push(nums[0]);
        frames.push(nums[1..].to_vec());
    }
    if times.is_empty() {
        return Err(format!("{}: no data (expected a dump written by `settee run --dump` or a Monitor `_x.txt` file)", path.display()));
    }
    let w = frames[0].len();
    let coord_size = if w % 3 == 0 { 3 } else { 1 };
    Ok(Trajectory { times, frames, coord_size })
}

/// The state name in a dump file name (`scene.scn.reference_0_dofs_mstate.txt.gz` → `dofs`).
pub fn dump_state_name(path: &Path) -> Option<String> {
    let f = path.file_name()?.to_string_lossy().into_owned();
    let rest = &f[f.find(".reference_")? + ".reference_".len()..];
    let rest = &rest[rest.find('_')? + 1..];
    Some(rest[..rest.rfind("_mstate")?].to_string())
}

/// Expands directories into the dump files they hold, keeping those of state `state` if given.
pub fn expand_inputs(inputs: &[PathBuf], state: Option<&str>) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| format!("{}: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.to_string_lossy().contains("_mstate.txt"))
                .collect();
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    if let Some(s) = state {
        let all = out.clone();
        out.retain(|p| dump_state_name(p).as_deref() == Some(s));
        if out.is_empty() {
            let names: Vec<String> = all.iter().filter_map(|p| dump_state_name(p)).collect();
            return Err(format!(
                "no dump of state '{s}' among the inputs (states: {})",
                if names.is_empty() { "none".into() } else { names.join(", ") }
            ));
        }
    }
    if out.is_empty() {
        return Err("no input file (give dump files, a dump directory or --run SCENE)".into());
    }
    Ok(out)
}

/// The panel of DOF coordinates over time from dump or Monitor files.
pub fn trajectory_panel(inputs: &[PathBuf], dofs: &[usize], coords: &[Coord]) -> Result<Panel, String> {
    let mut series = Vec::new();
    for p in inputs {
        let tr = read_trajectory(p)?;
        let label = dump_state_name(p).unwrap_or_else(|| p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default());
        for &d in dofs {
            for &c in coords {
                let points = tr.series(d, c).map_err(|e| format!("{}: {e}", p.display()))?;
                series.push(Series { label: format!("{label} DOF {d} {}", c.name()), points });
            }
        }
    }
    Ok(Panel { title: "position over time".into(), y_label: "position".into(), log_y: false, series })
}

/// What [`EnergyRecorder`] records.
#[derive(Clone, Debug, Default)]
pub struct EnergyRecord {
    /// (time, kinetic energy), from the start time on.
    pub kinetic: Vec<(f64, f64)>,
    /// Per solver (its label): (time, iterations) and (time, residual).
    pub solvers: Vec<(String, Points, Points)>,
}

/// (time, value) pairs.
pub type Points = Vec<(f64, f64)>;

/// Records, after every step, the kinetic energy ½·vᵀMv summed over the scene's masses and each
/// constraint solver's iterations and residual, into a record shared with the caller.
#[derive(Default)]
pub struct EnergyRecorder(pub std::rc::Rc<std::cell::RefCell<EnergyRecord>>);

/// The kinetic energy of a scene: the sum of its masses' ½·vᵀMv.
pub fn kinetic_energy(scene: &Scene) -> f64 {
    let mut e = 0.0;
    for (_, entry) in scene.components.iter() {
        if !entry.plays(role::MASS) {
            continue;
        }
        let Some(m) = entry.role::<dyn settee_core::Mass>() else { continue };
        let s = m.state();
        if scene.store.contains(s) {
            e += m.kinetic_energy(scene.store.get(s).read(VecId::VELOCITY));
        }
    }
    e
}

/// The potential energy of gravity, `−Σ (M·g)·x` over the scene's masses whose points are 3-D
/// (Vec3 states, and the origins of Rigid3 frames), zero at the origin: SOFA's
/// `Mass::getPotentialEnergy`. `M·g` is the mass's own product, so a consistent mass counts as
/// it weighs in the dynamics. Each mass uses the gravity of its node's context.
pub fn gravity_potential_energy(scene: &Scene) -> f64 {
    let mut e = 0.0;
    for (_, entry) in scene.components.iter() {
        if !entry.plays(role::MASS) {
            continue;
        }
        let Some(m) = entry.role::<dyn settee_core::Mass>() else { continue };
        let s = m.state();
        if !scene.store.contains(s) {
            continue;
        }
        let st = scene.store.get(s);
        let (c, d) = (st.layout.coord_size(), st.layout.deriv_size());
        if st.layout.spatial_size() != 3 || st.size == 0 {
            continue;
        }
        let g = scene.params(entry.node).gravity;
        let mut gravity = vec![0.0; d * st.size];
        for point in gravity.chunks_exact_mut(d) {
            point[..3].copy_from_slice(&g);
        }
        let mut weight = vec![0.0; d * st.size];
        m.add_mdx(&mut weight, &gravity, 1.0);
        let x = st.read(VecId::POSITION);
        for (w, p) in weight.chunks_exact(d).zip(x.chunks_exact(c)) {
            e -= w[0] * p[0] + w[1] * p[1] + w[2] * p[2];
        }
    }
    e
}

impl crate::run::RunObserver for EnergyRecorder {
    fn before_step(&mut self, scene: &mut Scene, k: usize) -> Result<(), String> {
        if k == 0 {
            self.0.borrow_mut().kinetic.push((scene.root().context.time, kinetic_energy(scene)));
        }
        Ok(())
    }

    fn after_step(&mut self, scene: &mut Scene, _k: usize, _t_start: f64) -> Result<(), String> {
        let t = scene.root().context.time;
        let mut rec = self.0.borrow_mut();
        rec.kinetic.push((t, kinetic_energy(scene)));
        for s in crate::constraint_export::step_stats(scene) {
            let i = match rec.solvers.iter().position(|(l, _, _)| *l == s.solver) {
                Some(i) => i,
                None => {
                    rec.solvers.push((s.solver.clone(), Vec::new(), Vec::new()));
                    rec.solvers.len() - 1
                }
            };
            rec.solvers[i].1.push((t, s.iterations as f64));
            if s.error > 0.0 && s.error.is_finite() {
                rec.solvers[i].2.push((t, s.error));
            }
        }
        Ok(())
    }
}

impl EnergyRecord {
    /// Kinetic energy, then (when the scene has constraint solvers) iterations and residuals.
    pub fn panels(&self) -> Vec<Panel> {
        let mut out = vec![Panel {
            title: "kinetic energy".into(),
            y_label: "energy".into(),
            log_y: false,
            series: vec![Series { label: "kinetic energy".into(), points: self.kinetic.clone() }],
        }];
        if !self.solvers.is_empty() {
            out.push(Panel {
                title: "constraint solver iterations".into(),
                y_label: "iterations".into(),
                log_y: false,
                series: self.solvers.iter().map(|(l, it, _)| Series { label: l.clone(), points: it.clone() }).collect(),
            });
            let residuals: Vec<Series> =
                self.solvers.iter().filter(|(_, _, r)| !r.is_empty()).map(|(l, _, r)| Series { label: l.clone(), points: r.clone() }).collect();
            if !residuals.is_empty() {
                out.push(Panel { title: "constraint solver residual".into(), y_label: "residual".into(), log_y: true, series: residuals });
            }
        }
        out
    }
}

const FONT: &str = "sans-serif";

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The embedded DejaVu Sans: text is measured (and drawn into PNGs) without system fonts.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Draws the panels one above the other into `out`: SVG or PNG by its extension.
pub fn render(panels: &[Panel], out: &Path) -> Result<(), String> {
    register_font();
    let ext = out.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
    let size = (960, 360 * panels.len().max(1) as u32);
    let err = |e: &dyn std::fmt::Display| format!("cannot draw {}: {e}", out.display());
    match ext.as_str() {
        "svg" => {
            let root = SVGBackend::new(out, size).into_drawing_area();
            draw(&root, panels).map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))
        }
        "png" => {
            let root = BitMapBackend::new(out, size).into_drawing_area();
            draw(&root, panels).map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))
        }
        _ => Err(format!("{}: the output must end in .svg or .png", out.display())),
    }
}

fn bounds(points: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = points.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if lo > hi {
        return None;
    }
    // A flat series still gets a visible range.
    let pad = if hi > lo { (hi - lo) * 0.05 } else { lo.abs().max(1.0) * 0.05 };
    Some((lo - pad, hi + pad))
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, plotters::coord::Shift>, panels: &[Panel]) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let areas = root.split_evenly((panels.len().max(1), 1));
    for (panel, area) in panels.iter().zip(areas.iter()) {
        let all = || panel.series.iter().flat_map(|s| s.points.iter());
        let (x0, x1) = bounds(all().map(|p| p.0)).unwrap_or((0.0, 1.0));
        let mut chart = ChartBuilder::on(area);
        chart.caption(&panel.title, (FONT, 20)).margin(12).x_label_area_size(36).y_label_area_size(72);
        if panel.log_y {
            let lo = all().map(|p| p.1).filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
            let hi = all().map(|p| p.1).filter(|v| *v > 0.0).fold(0.0, f64::max);
            // Whole decades, at least one, so that the axis has labels.
            let (lo, hi) = if lo <= hi {
                let (a, b) = (lo.log10().floor(), hi.log10().ceil());
                (10f64.powf(a), 10f64.powf(if b > a { b } else { a + 1.0 }))
            } else {
                (1e-12, 1.0)
            };
            let mut c = chart.build_cartesian_2d(x0..x1, (lo..hi).log_scale())?;
            c.configure_mesh().x_desc("time (s)").y_desc(&panel.y_label).label_style((FONT, 13)).draw()?;
            draw_series(&mut c, panel)?;
        } else {
            let (y0, y1) = bounds(all().map(|p| p.1)).unwrap_or((0.0, 1.0));
            let mut c = chart.build_cartesian_2d(x0..x1, y0..y1)?;
            c.configure_mesh().x_desc("time (s)").y_desc(&panel.y_label).label_style((FONT, 13)).draw()?;
            draw_series(&mut c, panel)?;
        }
    }
    Ok(())
}

fn draw_series<'a, DB: DrawingBackend + 'a, CT>(c: &mut ChartContext<'a, DB, CT>, panel: &Panel) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    CT: plotters::coord::CoordTranslate<From = (f64, f64)>,
{
    for (i, s) in panel.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite() && (!panel.log_y || *y > 0.0)).collect();
        c.draw_series(LineSeries::new(pts, color.stroke_width(2)))?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    c.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).label_font((FONT, 13)).draw()?;
    Ok(())
}

/// What `settee plot` draws.
pub enum PlotSource {
    /// Dump or Monitor files (directories of dumps expanded), with the DOFs, coordinates and state
    /// to draw.
    Files { inputs: Vec<PathBuf>, dofs: Vec<usize>, coords: Vec<Coord>, state: Option<String> },
    /// A run of `steps` steps of a scene.
    Run { scene: PathBuf, steps: usize, load: crate::LoadOptions },
}

/// `settee plot`: reads or runs, draws into `out`, returns what it says on success.
pub fn plot_command(source: PlotSource, out: &Path) -> Result<String, String> {
    let panels = match source {
        PlotSource::Files { inputs, dofs, coords, state } => {
            let files = expand_inputs(&inputs, state.as_deref())?;
            vec![trajectory_panel(&files, &dofs, &coords)?]
        }
        PlotSource::Run { scene, steps, load } => {
            let factory = crate::factory();
            let mut loaded = crate::load_with(&scene, &factory, &load).map_err(|f| {
                let msgs: Vec<String> =
                    f.diagnostics.iter().filter(|d| d.severity >= settee_core::Severity::Warning).map(|d| d.to_string()).collect();
                format!("{}\nerror: could not load {}", msgs.join("\n"), scene.display())
            })?;
            let recorder = EnergyRecorder::default();
            let record = recorder.0.clone();
            let mut observers: Vec<Box<dyn crate::run::RunObserver>> = vec![Box::new(recorder)];
            crate::run::simulate(&mut loaded.scene, steps, &mut observers).map_err(|e| e.to_string())?;
            let panels = record.borrow().panels();
            panels
        }
    };
    let n: usize = panels.iter().map(|p| p.series.len()).sum();
    render(&panels, out)?;
    Ok(format!("wrote {} ({} series)", out.display(), n))
}
