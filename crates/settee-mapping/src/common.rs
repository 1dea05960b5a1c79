//! What every mapping shares: SOFA's `BaseMapping`/`Mapping` Data, the `input`/`output` links and
//! their defaults (`@../` and `@./`), the application at init, the geometric-stiffness option and
//! small 3D vector helpers.

use settee_core::component::{Mapping, SparseRows};
use settee_core::role;
use settee_core::{ComponentId, InitCtx, Layout, Scene, SimError, SimResult, StateId, VecId};

/// SOFA's `BaseMapping` and `Mapping` Data, included first by every mapping class. `isMechanical`
/// is an alias of the three `map*` flags (SOFA adds it to each), so `isMechanical="false"` clears
/// all three. The code shared by every mapping reads `mapForces` (when the ports are resolved)
/// and `applyRestPosition` (at init).
#[settee_core::data_group(data = {
    /// Are forces mapped ?
    #[alias("isMechanical")]
    mapForces: Bool = "true",
    /// Are constraints mapped ?
    #[alias("isMechanical")]
    mapConstraints: Bool = "true",
    /// Are masses mapped ?
    #[alias("isMechanical")]
    mapMasses: Bool = "true",
    /// Are matrix explicit mapped?
    mapMatrices: Bool = "false",
    /// set to true to apply this mapping to restPosition at init
    applyRestPosition: Bool = "false",
})]
pub struct MappingData;

/// Drawing Data of the compliant mappings (rendering only), as SOFA's
/// DifferenceFromTargetMapping and SquareDistanceMapping declare them (scale `0`).
#[settee_core::data_group(data = {
    /// Scale for object display
    showObjectScale: Real = "0",
    /// Color for object display. (default=[1.0,1.0,0.0,1.0])
    showColor: Color = "1 1 0 1",
})]
pub struct DrawData;

/// The `geometricStiffness` option of SOFA's non-linear mappings.
pub const GEOMETRIC_STIFFNESS_OPTIONS: &[&str] = &["None", "Exact", "Stabilized"];

/// The states a mapping connects, as resolved at init.
#[derive(Clone, Debug, Default)]
pub struct Ports {
    pub inputs: Vec<StateId>,
    pub in_layouts: Vec<Layout>,
    /// `None` when the output is a visual model.
    pub output: Option<StateId>,
    pub out_layout: Option<Layout>,
    /// The visual model the mapping outputs into, when it does (then `output` is `None`).
    pub visual: Option<ComponentId>,
    /// Forces (and matrices) travel through the mapping (`mapForces`).
    pub map_forces: bool,
}

impl Ports {
    /// The ports of a mapping built directly (tests, programmatic use): every input of
    /// `in_layout`, a mechanical output of `out_layout`, forces mapped.
    pub fn direct(inputs: &[StateId], in_layout: Layout, output: StateId, out_layout: Layout) -> Ports {
        Ports {
            inputs: inputs.to_vec(),
            in_layouts: vec![in_layout; inputs.len()],
            output: Some(output),
            out_layout: Some(out_layout),
            visual: None,
            map_forces: true,
        }
    }

    /// A mechanical mapping: its output is a mechanical state (then flagged as mapped). A
    /// mapping to a visual model only matters to the renderer.
    pub fn is_mechanical(&self) -> bool {
        self.output.is_some()
    }
}

/// The geometric-stiffness method of a non-linear mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GeometricStiffness {
    #[default]
    None,
    Exact,
    Stabilized,
}

impl GeometricStiffness {
    pub fn from_name(name: &str) -> GeometricStiffness {
        match name {
            "Exact" => GeometricStiffness::Exact,
            "Stabilized" => GeometricStiffness::Stabilized,
            _ => GeometricStiffness::None,
        }
    }

    /// SOFA's test on each child force: the stabilized method keeps only forces `< 0`
    /// (tension when the child force opposes the elongation).
    pub fn keeps(self, child_force: f64) -> bool {
        match self {
            GeometricStiffness::None => false,
            GeometricStiffness::Exact => true,
            GeometricStiffness::Stabilized => child_force < 0.0,
        }
    }
}

fn link_text(cx: &InitCtx, name: &str) -> Option<String> {
    cx.entry().links.iter().find(|l| l.decl.name == name).and_then(|l| l.text.clone())
}

/// Resolves `input` and `output` as SOFA's `Mapping::create` does (defaults `@../` and `@./`),
/// checks them against the template `In,Out` and flags the output state as mapped.
pub fn resolve_ports(cx: &mut InitCtx, multi: bool) -> SimResult<Ports> {
    let node = cx.node();
    let id = cx.id;
    let template = cx.entry().template.clone();
    let mut parts = template.split(',').map(|t| Layout::from_name(t.trim()));
    let (t_in, t_out) = (parts.next().flatten(), parts.next().flatten());

    // Inputs.
    let mut inputs = Vec::new();
    match link_text(cx, "input") {
        Some(text) => {
            let words: Vec<&str> = text.split_whitespace().collect();
            if !multi && words.len() > 1 {
                return Err(cx.error(format!("input=\"{text}\" names {} objects but this mapping has a single input", words.len())));
            }
            for w in words {
                let path = w.strip_prefix('@').unwrap_or(w);
                let c = cx.scene.resolve_state_path(node, path, Some(id), false).ok_or_else(|| {
                    cx.error(format!("input \"{w}\" does not designate a mechanical state"))
                        .hint("write the path of a MechanicalObject or of a node holding one, e.g. input=\"@../dofs\"")
                })?;
                inputs.push(c);
            }
        }
        None => {
            let c = cx
                .scene
                .resolve_state_path(node, "../", Some(id), false)
                .ok_or_else(|| cx.error("no input state: the parent node has no mechanical state").hint("set input=\"@path/to/MechanicalObject\""))?;
            inputs.push(c);
        }
    }
    if inputs.is_empty() {
        return Err(cx.error("the mapping has no input state").hint("set input=\"@path/to/MechanicalObject\""));
    }

    // Output.
    let out_text = link_text(cx, "output");
    let out_path =
        out_text.as_deref().map(|t| t.split_whitespace().next().unwrap_or("").trim_start_matches('@').to_string()).unwrap_or_else(|| "./".into());
    let output = cx.scene.resolve_state_path(node, &out_path, Some(id), true).ok_or_else(|| {
        cx.error(format!("output \"@{out_path}\" does not designate a mechanical state or a visual model"))
            .hint("write the path of the MechanicalObject (or OglModel) to map to, e.g. output=\"@dofs\"")
    })?;
    if inputs.contains(&output) {
        return Err(cx
            .error(format!("the input and the output are the same state ('{}')", cx.scene.entry(output).name))
            .hint("a mapped node needs its own MechanicalObject (declare it before the mapping)"));
    }

    let mut ports = Ports { map_forces: cx.data().get(MappingData::MAP_FORCES), ..Default::default() };
    for c in inputs {
        let s = cx.scene.state_of(c).ok_or_else(|| cx.error(format!("{} has no state", cx.scene.entry(c).label())))?;
        let l = cx.state_layout(s);
        if let Some(t) = t_in {
            if t != l {
                return Err(cx
                    .error(format!("the input '{}' has template {} but the mapping's template is {template}", cx.scene.entry(c).name, l.name()))
                    .hint("remove the template attribute: it is deduced from the input and output states"));
            }
        }
        if ports.inputs.contains(&s) {
            return Err(cx.error(format!("the input '{}' is listed twice", cx.scene.entry(c).name)));
        }
        ports.inputs.push(s);
        ports.in_layouts.push(l);
    }
    let out_entry = cx.scene.entry(output);
    if out_entry.plays(role::MECHANICAL_STATE) {
        let s = cx.scene.state_of(output).ok_or_else(|| cx.error(format!("{} has no state", out_entry.label())))?;
        let l = cx.state_layout(s);
        if let Some(t) = t_out {
            if t != l {
                return Err(cx
                    .error(format!("the output '{}' has template {} but the mapping's template is {template}", out_entry.name, l.name()))
                    .hint("remove the template attribute: it is deduced from the input and output states"));
            }
        }
        ports.output = Some(s);
        ports.out_layout = Some(l);
        cx.scene.store.get_mut(s).mapped = true;
    } else if out_entry.plays(settee_core::role::VISUAL_GEOMETRY) {
        ports.visual = Some(output);
    }
    Ok(ports)
}

/// The rest positions of the visual model a mapping outputs into (3 reals per vertex), read at
/// the mapping's init.
pub fn visual_rest_positions(scene: &Scene, ports: &Ports) -> Option<Vec<f64>> {
    let v = ports.visual?;
    Some(scene.role::<dyn settee_core::visual::VisualGeometry>(v)?.rest_positions().to_vec())
}

/// SOFA's `Mapping::init` tail for a visual output: the model's vertices are mapped once from
/// the inputs' positions.
pub fn apply_to_visual_at_init(map: &mut dyn Mapping, scene: &mut Scene) -> SimResult {
    settee_core::visual::map_into_visual(scene, map)
}

/// The ports of a two-input mapping (SOFA's `Multi2Mapping`): the states named by `input1` and
/// `input2` (required, one each) and by `output` (default `@./`, a mechanical state), with the
/// layouts the class implements (`expected`: input1, input2, output). The output is flagged as
/// mapped.
pub fn resolve_two_input_ports(cx: &mut InitCtx, expected: [Layout; 3]) -> SimResult<Ports> {
    let node = cx.node();
    let id = cx.id;
    let mut ports = Ports { map_forces: cx.data().get(MappingData::MAP_FORCES), ..Default::default() };
    for (k, name) in ["input1", "input2"].into_iter().enumerate() {
        let Some(text) = link_text(cx, name) else {
            return Err(cx.error(format!("{name} is not set")).hint(format!("set {name}=\"@path/to/MechanicalObject\"")));
        };
        let w = text.split_whitespace().next().unwrap_or("");
        let c = cx.scene.resolve_state_path(node, w.trim_start_matches('@'), Some(id), false).ok_or_else(|| {
            cx.error(format!("{name} \"{w}\" does not designate a mechanical state"))
                .hint("write the path of a MechanicalObject or of a node holding one")
        })?;
        let s = cx.scene.state_of(c).ok_or_else(|| cx.error(format!("{} has no state", cx.scene.entry(c).label())))?;
        let l = cx.state_layout(s);
        if l != expected[k] {
            return Err(cx
                .error(format!("{name} '{}' is a {} state, {} expected", cx.scene.entry(c).name, l.name(), expected[k].name()))
                .hint(format!("supported template: {},{},{}", expected[0].name(), expected[1].name(), expected[2].name())));
        }
        ports.inputs.push(s);
        ports.in_layouts.push(l);
    }
    let out_text = link_text(cx, "output");
    let out_path = out_text.as_deref().and_then(|t| t.split_whitespace().next()).unwrap_or("./").trim_start_matches('@').to_string();
    let output = cx.scene.resolve_state_path(node, &out_path, Some(id), false).ok_or_else(|| {
        cx.error(format!("output \"@{out_path}\" does not designate a mechanical state")).hint("write the path of the MechanicalObject to map to")
    })?;
    let s = cx.scene.state_of(output).ok_or_else(|| cx.error(format!("{} has no state", cx.scene.entry(output).label())))?;
    if ports.inputs.contains(&s) {
        return Err(cx.error("the output is also an input").hint("a mapped node needs its own MechanicalObject"));
    }
    let l = cx.state_layout(s);
    if l != expected[2] {
        return Err(cx.error(format!("the output '{}' is a {} state, {} expected", cx.scene.entry(output).name, l.name(), expected[2].name())));
    }
    ports.output = Some(s);
    ports.out_layout = Some(l);
    cx.scene.store.get_mut(s).mapped = true;
    Ok(ports)
}

/// [`resolve_ports`] for a mapping whose output must be a mechanical state (`what`, e.g.
/// "a Vec3d MechanicalObject"), then [`check_layouts`] against the templates it implements.
pub fn resolve_mechanical_ports(cx: &mut InitCtx, multi: bool, what: &str, accepted: &[(Layout, Layout)]) -> SimResult<Ports> {
    let ports = resolve_ports(cx, multi)?;
    if ports.output.is_none() {
        return Err(cx.error(format!("the output of this mapping must be {what}, not a visual model")));
    }
    check_layouts(cx, &ports, accepted)?;
    Ok(ports)
}

/// Checks that the resolved layouts are among those the class implements.
pub fn check_layouts(cx: &InitCtx, ports: &Ports, accepted: &[(Layout, Layout)]) -> SimResult {
    let Some(out) = ports.out_layout else { return Ok(()) };
    for &l in &ports.in_layouts {
        if !accepted.contains(&(l, out)) {
            let list: Vec<String> = accepted.iter().map(|(a, b)| format!("{},{}", a.name(), b.name())).collect();
            return Err(SimError::unsupported(format!("{} → {} is not supported by {}", l.name(), out.name(), cx.entry().class.name))
                .hint(format!("supported templates: {}", list.join(", "))));
        }
    }
    Ok(())
}

/// Resizes the output state to `n` elements (SOFA's `toModel->resize`).
pub fn resize_output(scene: &mut Scene, ports: &Ports, n: usize) {
    resize_state(scene, ports.output, n);
}

fn resize_state(scene: &mut Scene, output: Option<StateId>, n: usize) {
    if let Some(s) = output {
        let st = scene.store.get_mut(s);
        if st.size != n {
            st.resize(n);
        }
    }
}

/// The end of a mapping's init: the output resized to `n` elements ([`resize_output`]), then
/// [`apply_at_init`] with the `applyRestPosition` Data.
pub fn finish_init(cx: &mut InitCtx, n: usize, map: &mut dyn Mapping) -> SimResult {
    resize_state(cx.scene, map.output(), n);
    let rest = cx.data().get(MappingData::APPLY_REST_POSITION);
    apply_at_init(map, cx.scene, rest)
}

/// SOFA's `Mapping::init` tail: `apply` on positions, `applyJ` on velocities, and `apply` on rest
/// positions when `applyRestPosition` is set. Vectors an input does not hold are skipped.
pub fn apply_at_init(map: &mut dyn Mapping, scene: &mut Scene, apply_rest: bool) -> SimResult {
    let Some(out) = map.output() else { return Ok(()) };
    let inputs = map.inputs().to_vec();
    let mut ops = vec![(VecId::POSITION, true), (VecId::VELOCITY, false)];
    if apply_rest {
        ops.push((VecId::REST_POSITION, true));
    }
    for (id, positions) in ops {
        let complete = inputs.iter().all(|s| {
            let st = scene.store.get(*s);
            st.read(id).len() >= st.size * st.elem_size(id.kind)
        });
        if !complete {
            continue;
        }
        let mut o = scene.store.get_mut(out).take(id);
        let r = {
            let ins: Vec<&[f64]> = inputs.iter().map(|s| scene.store.get(*s).read(id)).collect();
            if positions {
                map.apply(&mut o, &ins)
            } else {
                map.apply_j(&mut o, &ins)
            }
        };
        scene.store.get_mut(out).put(id, o);
        r?;
    }
    Ok(())
}

/// Checks that a vector holds at least `n` elements of `k` reals.
pub fn check_len(what: &str, v: &[f64], n: usize, k: usize) -> SimResult {
    if v.len() < n * k {
        return Err(SimError::new(format!("{what} has {} values, {} expected ({n} elements of {k})", v.len(), n * k))
            .hint("a state connected to the mapping was resized after init, which the mapping does not follow"));
    }
    Ok(())
}

/// The output force `apply_djt` differentiates: the one `update_k` kept, else `f_out`; checked
/// (`n_out` elements of `k_out` values) with the displacement and the force of the single input
/// (`n_in` elements of `k_in`).
pub fn djt_force<'a>(
    k_force: &'a [f64],
    f_out: &'a [f64],
    (n_out, k_out): (usize, usize),
    dx: &[f64],
    f_in: &[f64],
    (n_in, k_in): (usize, usize),
) -> SimResult<&'a [f64]> {
    let f = if k_force.is_empty() { f_out } else { k_force };
    check_len("the output forces", f, n_out, k_out)?;
    check_len("the input displacements", dx, n_in, k_in)?;
    check_len("the input forces", f_in, n_in, k_in)?;
    Ok(f)
}

/// [`check_len`] of a Rigid3 input (`n_in` frames of `k` values) and a Vec3 output (`n_out`
/// points), `what` naming both vectors ("velocities": "the input velocities", "the output
/// velocities").
pub fn check_frames_and_points(what: &str, input: &[f64], n_in: usize, k: usize, output: &[f64], n_out: usize) -> SimResult {
    // The names are written only for an error: this check runs at every product.
    if input.len() < n_in * k {
        return check_len(&format!("the input {what}"), input, n_in, k);
    }
    if output.len() < n_out * 3 {
        return check_len(&format!("the output {what}"), output, n_out, 3);
    }
    Ok(())
}

/// See [`FramesToPoints::sizes`].
pub struct FramePointSizes {
    pub frames: usize,
    pub points: usize,
    pub rotated: usize,
    pub map_forces: bool,
}

/// Rigid3 → Vec3 mappings placing points from the input frames (RigidMapping,
/// BeamLinearMapping): the checks their products start with.
pub trait FramesToPoints {
    /// The sizes: frames of the input, points of the output, points rotated by the last `apply`
    /// (one per output point once applied); and whether forces (and matrices) travel through
    /// the mapping.
    fn sizes(&self) -> FramePointSizes;

    fn n_frames(&self) -> usize {
        self.sizes().frames
    }

    fn n_points(&self) -> usize {
        self.sizes().points
    }

    /// An error when `apply` never computed the rotated points.
    fn ready(&self) -> SimResult {
        let s = self.sizes();
        if s.rotated != s.points {
            return Err(SimError::new("the mapping was never applied (its rotated points are not computed)"));
        }
        Ok(())
    }

    /// Whether a transposed product (forces, constraints, matrices) acts: not when forces are not
    /// mapped; an error when the rotated points are not computed.
    fn transposed_ready(&self) -> SimResult<bool> {
        if !self.sizes().map_forces {
            return Ok(false);
        }
        self.ready()?;
        Ok(true)
    }

    /// The input positions of `apply`, checked with the output.
    fn checked_positions<'a>(&self, out: &[f64], inputs: &[&'a [f64]]) -> SimResult<&'a [f64]> {
        let x = inputs[0];
        check_frames_and_points("positions", x, self.n_frames(), 7, out, self.n_points())?;
        Ok(x)
    }

    /// The input velocities of `apply_j`, checked with the output.
    fn checked_velocities<'a>(&self, out: &[f64], inputs: &[&'a [f64]]) -> SimResult<&'a [f64]> {
        self.ready()?;
        let v = inputs[0];
        check_frames_and_points("velocities", v, self.n_frames(), 6, out, self.n_points())?;
        Ok(v)
    }

    /// The input forces of `apply_jt`, checked with the output; `None` when forces are not mapped.
    fn checked_forces<'a>(&self, inputs: &'a mut [&mut [f64]], out: &[f64]) -> SimResult<Option<&'a mut [f64]>> {
        if !self.transposed_ready()? {
            return Ok(None);
        }
        let f = &mut *inputs[0];
        check_frames_and_points("forces", f, self.n_frames(), 6, out, self.n_points())?;
        Ok(Some(f))
    }

    /// The Jacobian (3 rows per point, 6 columns per frame), empty, and whether it is filled
    /// ([`Self::transposed_ready`]).
    fn jacobian_to_fill(&self) -> SimResult<(SparseRows, bool)> {
        let jac = SparseRows::new(3 * self.n_points(), 6 * self.n_frames());
        let fill = self.transposed_ready()?;
        Ok((jac, fill))
    }
}

/// Appends to rows `3i..3i+3` of `jac` the block `w·[I | −[r]×]` of input frame `frame`: the
/// Jacobian of a point at `r` from the frame's origin, weighted; the zero entries of `[r]×` are
/// left out.
#[allow(clippy::needless_range_loop)] // row a of the 3×6 block [I | −[r]×]
pub fn push_point_block(jac: &mut SparseRows, i: usize, frame: usize, r: V3, w: f64) {
    // −[r]× row by row: (0, r2, −r1), (−r2, 0, r0), (r1, −r0, 0)
    let m = [[0.0, r[2], -r[1]], [-r[2], 0.0, r[0]], [r[1], -r[0], 0.0]];
    for a in 0..3 {
        let row = &mut jac.rows[3 * i + a];
        row.push((6 * frame + a, w));
        for c in 0..3 {
            if m[a][c] != 0.0 {
                row.push((6 * frame + 3 + c, m[a][c] * w));
            }
        }
    }
}

/// `[(c, v)]` rows of the identity-like Jacobian of `n` elements: output component `k < ko` of
/// element `i` reads input component `k` of element `map(i)`.
pub fn selection_jacobian(rows_out: usize, ncols: usize, ko: usize, ki: usize, map: impl Fn(usize) -> Option<usize>) -> SparseRows {
    let mut j = SparseRows::new(rows_out, ncols);
    for r in 0..rows_out {
        let (i, k) = (r / ko, r % ko);
        if let Some(src) = map(i) {
            if k < ki {
                j.rows[r].push((src * ki + k, 1.0));
            }
        }
    }
    j
}

/// The `Mapping` methods every mapping writes the same way, from its resolved `ports`:
/// `inputs`, `output` and `is_mechanical`.
macro_rules! mapping_ports {
    () => {
        fn inputs(&self) -> &[settee_core::StateId] {
            &self.ports.inputs
        }
        fn output(&self) -> Option<settee_core::StateId> {
            self.ports.output
        }
        fn is_mechanical(&self) -> bool {
            self.ports.is_mechanical()
        }
    };
}
pub(crate) use mapping_ports;

/// [`FramesToPoints`] for a mapping with `n_in` frames, `points`, `ports` and the rotated points
/// of its last `apply` in the field named.
macro_rules! frames_to_points {
    ($mapping:ty, $rotated:ident) => {
        impl $crate::common::FramesToPoints for $mapping {
            fn sizes(&self) -> $crate::common::FramePointSizes {
                let map_forces = self.ports.map_forces;
                $crate::common::FramePointSizes { frames: self.n_in, points: self.points.len(), rotated: self.$rotated.len(), map_forces }
            }
        }
    };
}
pub(crate) use frames_to_points;

/// Declares a mapping class: `#[component(...)]` with what every mapping class shares (the
/// mapping roles, templates deduced from the states, SOFA's `BaseMapping` Data first, then the
/// class's own, and the `input` and `output` links), followed by the class's own keys (a key
/// given again replaces the shared one):
///
/// ```text
/// mapping_class! { [multi] [with { extra links }] { keys } struct }
/// ```
///
/// `multi` declares a list of inputs; `with` adds links after `output`; among the keys,
/// `multi_class(...)` is a `class(...)` whose input is a list.
macro_rules! mapping_class {
    (multi $($rest:tt)*) => {
        $crate::common::mapping_class!(@with multi $($rest)*);
    };
    (@with $top:ident with { $($extra:tt)* } $($rest:tt)*) => {
        $crate::common::mapping_class!(@start $top [$($extra)*] $($rest)*);
    };
    (@with $top:ident $($rest:tt)*) => {
        $crate::common::mapping_class!(@start $top [] $($rest)*);
    };
    (@start $top:ident [$($extra:tt)*] { $($keys:tt)* } $($item:tt)*) => {
        $crate::common::mapping_class!(@munch $top
            [
                /// Input object to map (default: the state of the parent node, `@../`)
                #[node_or_state]
                input: settee_core::role::MechanicalState,
            ]
            [
                /// Input objects to map (a list of states or nodes)
                #[multi]
                #[node_or_state]
                input: settee_core::role::MechanicalState,
            ]
            [
                /// Output object to map: a mechanical state, or a visual model (default: the state of this node, `@./`)
                #[node_or_state]
                output: _,
                $($extra)*
            ]
            [] { $($keys)* } $($item)*);
    };
    (@munch $top:ident $single:tt [$($multi:tt)*] [$($out:tt)*] [$($done:tt)*] { multi_class($($c:tt)*) $($keys:tt)* } $($item:tt)*) => {
        $crate::common::mapping_class!(@munch $top $single [$($multi)*] [$($out)*]
            [$($done)* class(links = { $($multi)* $($out)* }, $($c)*)] { $($keys)* } $($item)*);
    };
    (@munch $top:ident $single:tt $multi:tt $out:tt [$($done:tt)*] { $key:tt $($keys:tt)* } $($item:tt)*) => {
        $crate::common::mapping_class!(@munch $top $single $multi $out [$($done)* $key] { $($keys)* } $($item)*);
    };
    (@munch single [$($input:tt)*] $multi:tt $out:tt $done:tt {} $($item:tt)*) => {
        $crate::common::mapping_class!(@emit [$($input)*] $out $done $($item)*);
    };
    (@munch multi $single:tt [$($input:tt)*] $out:tt $done:tt {} $($item:tt)*) => {
        $crate::common::mapping_class!(@emit [$($input)*] $out $done $($item)*);
    };
    (@emit [$($input:tt)*] [$($out:tt)*] [$($keys:tt)*] $($item:tt)*) => {
        #[settee_core::component(
            roles = [settee_core::component::Mapping],
            markers = [settee_core::role::MechanicalMapping],
            template_rule = FromMapping,
            inherit = [crate::common::MappingData, Self],
            links = { $($input)* $($out)* },
            $($keys)*
        )]
        $($item)*
    };
    ($($rest:tt)*) => {
        $crate::common::mapping_class!(@with single $($rest)*);
    };
}
pub(crate) use mapping_class;

// ----- 3D vectors ----------------------------------------------------------------------------------

pub use settee_core::math::{add, cross, dot, norm, scale, sub, V3};

#[inline]
pub fn v3(x: &[f64]) -> V3 {
    [x[0], x[1], x[2]]
}

/// A 3×3 matrix, row-major.
pub type M3 = [[f64; 3]; 3];

/// SOFA's `determinant` of a 3×3 matrix (same term order).
pub fn det3(m: &M3) -> f64 {
    m[0][0] * m[1][1] * m[2][2] + m[1][0] * m[2][1] * m[0][2] + m[2][0] * m[0][1] * m[1][2]
        - m[0][0] * m[2][1] * m[1][2]
        - m[1][0] * m[0][1] * m[2][2]
        - m[2][0] * m[1][1] * m[0][2]
}

/// SOFA's `invertMatrix` for 3×3 matrices (adjugate over determinant); `None` when
/// `|det| ≤ ε`.
pub fn invert3(from: &M3) -> Option<M3> {
    let det = det3(from);
    if det.abs() <= f64::EPSILON {
        return None;
    }
    let f = |i: usize, j: usize| from[i][j];
    let mut d = [[0.0; 3]; 3];
    d[0][0] = (f(1, 1) * f(2, 2) - f(2, 1) * f(1, 2)) / det;
    d[1][0] = (f(1, 2) * f(2, 0) - f(2, 2) * f(1, 0)) / det;
    d[2][0] = (f(1, 0) * f(2, 1) - f(2, 0) * f(1, 1)) / det;
    d[0][1] = (f(2, 1) * f(0, 2) - f(0, 1) * f(2, 2)) / det;
    d[1][1] = (f(2, 2) * f(0, 0) - f(0, 2) * f(2, 0)) / det;
    d[2][1] = (f(2, 0) * f(0, 1) - f(0, 0) * f(2, 1)) / det;
    d[0][2] = (f(0, 1) * f(1, 2) - f(1, 1) * f(0, 2)) / det;
    d[1][2] = (f(0, 2) * f(1, 0) - f(1, 2) * f(0, 0)) / det;
    d[2][2] = (f(0, 0) * f(1, 1) - f(1, 0) * f(0, 1)) / det;
    Some(d)
}

/// `M·v`, row by row.
pub fn mat_vec(m: &M3, v: V3) -> V3 {
    [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
}

/// Eigen-decomposition of a symmetric 3×3 matrix by cyclic Jacobi rotations: `(values, vectors)`
/// with the eigenvectors in the columns.
#[allow(clippy::needless_range_loop)] // rotations mix rows p and q of the same matrix
pub fn sym_eigen3(a: &M3) -> (V3, M3) {
    let mut m = *a;
    let mut v: M3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _ in 0..64 {
        let off = m[0][1] * m[0][1] + m[0][2] * m[0][2] + m[1][2] * m[1][2];
        if off <= 1e-300 {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if m[p][q] == 0.0 {
                continue;
            }
            let theta = (m[q][q] - m[p][p]) / (2.0 * m[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            // m ← Jᵀ m J with the rotation J in the (p, q) plane.
            for k in 0..3 {
                let (mkp, mkq) = (m[k][p], m[k][q]);
                m[k][p] = c * mkp - s * mkq;
                m[k][q] = s * mkp + c * mkq;
            }
            for k in 0..3 {
                let (mpk, mqk) = (m[p][k], m[q][k]);
                m[p][k] = c * mpk - s * mqk;
                m[q][k] = s * mpk + c * mqk;
            }
            for row in v.iter_mut() {
                let (vp, vq) = (row[p], row[q]);
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    ([m[0][0], m[1][1], m[2][2]], v)
}

/// SOFA's `Decompose::NSDProjection`: the nearest negative semi-definite matrix of a symmetric
/// matrix (positive eigenvalues set to zero).
pub fn nsd_projection(a: &M3) -> M3 {
    let (values, vectors) = sym_eigen3(a);
    let mut out = [[0.0; 3]; 3];
    for (k, &lambda) in values.iter().enumerate() {
        if lambda >= 0.0 {
            continue;
        }
        for i in 0..3 {
            for j in 0..3 {
                out[i][j] += lambda * vectors[i][k] * vectors[j][k];
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;

    /// Every mapping class of the crate includes SOFA's `BaseMapping` Data first (the code shared
    /// by every mapping reads `mapForces` and `applyRestPosition` through [`MappingData`]), plays
    /// the mapping roles and has the `input` and `output` links.
    #[test]
    fn every_mapping_class_includes_the_shared_data_first() {
        use settee_core::data::DataGroup;
        let mut f = settee_core::Factory::new();
        crate::register(&mut f);
        let shared: Vec<&str> = MappingData::TABLE.iter().map(|d| d.name).collect();
        assert_eq!(shared, ["mapForces", "mapConstraints", "mapMasses", "mapMatrices", "applyRestPosition"]);
        let mut n = 0;
        for class in f.classes() {
            n += 1;
            let first: Vec<&str> = class.data.first().map(|t| t.iter().map(|d| d.name).collect()).unwrap_or_default();
            assert_eq!(first, shared, "{}", class.name);
            assert!(class.plays(role::MAPPING) && class.plays(role::MECHANICAL_MAPPING), "{} plays {:?}", class.name, class.role_names());
            let links: Vec<&str> = class.links.iter().map(|l| l.name).collect();
            // two-input mappings (SOFA's Multi2Mapping) name their inputs input1 and input2
            let n_in = if links[0] == "input1" { 2 } else { 1 };
            let expected: &[&str] = if n_in == 2 { &["input1", "input2", "output"] } else { &["input", "output"] };
            assert_eq!(&links[..n_in + 1], expected, "{}", class.name);
            for l in &class.links[..=n_in] {
                assert!(l.to_node_or_state, "{}", class.name);
            }
            for l in &class.links[..n_in] {
                assert_eq!(l.target, Some(role::MECHANICAL_STATE), "{}", class.name);
            }
            assert_eq!(class.links[n_in].target, None, "{}", class.name);
        }
        assert_eq!(n, 34);
    }

    /// The grid's Data BarycentricMapping reads are declared by RegularGridTopology, with these
    /// kinds and defaults.
    #[test]
    fn grid_references_match_the_regular_grid_class() {
        use settee_core::data::DataGroup;
        let mut f = settee_core::Factory::new();
        settee_topology::register(&mut f);
        let class = f.class("RegularGridTopology").expect("RegularGridTopology is registered");
        for d in crate::barycentric::RegularGridData::TABLE {
            let theirs = class.data.iter().flat_map(|t| t.iter()).find(|o| o.name == d.name);
            let theirs = theirs.unwrap_or_else(|| panic!("RegularGridTopology has no Data '{}'", d.name));
            assert_eq!((theirs.kind, theirs.default, theirs.help), (d.kind, d.default, d.help), "Data '{}'", d.name);
        }
    }

    #[test]
    fn inverse_times_matrix_is_identity() {
        let m = [[2.0, 1.0, 0.5], [0.0, 3.0, -1.0], [1.0, 0.0, 4.0]];
        let inv = invert3(&m).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let p: f64 = (0..3).map(|k| m[i][k] * inv[k][j]).sum();
                assert!((p - if i == j { 1.0 } else { 0.0 }).abs() < 1e-14);
            }
        }
        assert!(invert3(&[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]]).is_none());
    }

    #[test]
    fn eigen_decomposition_reconstructs_and_projection_is_nsd() {
        let a = [[2.0, -1.0, 0.3], [-1.0, -3.0, 0.5], [0.3, 0.5, 1.0]];
        let (l, v) = sym_eigen3(&a);
        for i in 0..3 {
            for j in 0..3 {
                let r: f64 = (0..3).map(|k| l[k] * v[i][k] * v[j][k]).sum();
                assert!((r - a[i][j]).abs() < 1e-12, "{r} vs {}", a[i][j]);
            }
        }
        let p = nsd_projection(&a);
        let (lp, _) = sym_eigen3(&p);
        assert!(lp.iter().all(|&x| x <= 1e-12));
        // A negative definite matrix is its own projection.
        let n = [[-2.0, 0.5, 0.0], [0.5, -1.0, 0.0], [0.0, 0.0, -3.0]];
        let pn = nsd_projection(&n);
        for i in 0..3 {
            for j in 0..3 {
                assert!((pn[i][j] - n[i][j]).abs() < 1e-12);
            }
        }
    }
}
