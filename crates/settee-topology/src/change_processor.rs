//! `TopologicalChangeProcessor` (SOFA's `Sofa.Component.Topology.Utility`): replays scripted
//! additions and removals of elements at given times.
//!
//! The script (`filename`, a text file next to the scene) is a sequence of blocks:
//!
//! ```text
//! T= 0.1
//!   REMOVE= 3
//! 7 2 5
//! T= 0.2
//!   ADD= Triangles 2
//! 0 1 4  1 2 4
//! ```
//!
//! At every step start (SOFA's AnimateBeginEvent) with node time `t` (+ `shift`), the processor
//! reads the blocks whose time is ≤ t (within machine epsilon) and performs the operations of
//! **the last of them** (SOFA clears what it collected each time it reads another due `T=`
//! line). `REMOVE=` removes elements of the type of the first topology modifier found from the
//! topology's node upwards (`removeItems`: tetrahedra for a TetrahedronSetTopologyModifier, …);
//! `ADD=` names its type (`Edges`, `Triangles` (optionally `Ancestors`), `Quads`, `Tetrahedra`,
//! `Hexahedra`, `PointsInTriangle`). With `useDataInputs`, the `*ToRemove` lists are removed
//! once the time passes `timeToRemove` (then every `interval`).
//!
//! Unlike SOFA, which skips out-of-range indices with a warning, a script naming elements that
//! do not exist stops the step with an error at the script's line and column.

use std::path::PathBuf;
use std::sync::Arc;

use settee_core::diag::{Diagnostic, SourcePos};
use settee_core::role::Topology;
use settee_core::topology_change::{ElementKind, Follow, TopologyChange};
use settee_core::{component, Component, ComponentId, InitCtx, Scene, SimError, SimResult};

use crate::modifier::{self, DynTopo};
use crate::set_container::SetTopologyContainer;

/// One line of the script, with its number (1-based) for messages.
#[derive(Clone, Debug)]
struct Line {
    number: u32,
    text: String,
}

/// Replays a script of element additions and removals on a dynamic topology at given times.
///
/// The TopologicalChangeProcessor component.
#[component(
    module = "Sofa.Component.Topology.Utility",
    data = {
        /// script of topological changes (times and element lists)
        filename: FileName,
        /// 0 for adding, 1 for removing, 2 for cutting, with indices (unused by SOFA)
        listChanges: Indices,
        /// time between two removals of the Data lists (useDataInputs)
        interval: Real = "0",
        /// added to the node time before it is compared with the script's times
        shift: Real = "0",
        /// re-read the script from the start when its end is reached
        "loop" as LOOP: Bool = "false",
        /// remove the *ToRemove lists at timeToRemove instead of reading a script
        useDataInputs: Bool = "false",
        /// time after which the *ToRemove lists are removed (useDataInputs)
        timeToRemove: Real = "0",
        /// points to remove (useDataInputs)
        pointsToRemove: Indices,
        /// edges to remove (useDataInputs)
        edgesToRemove: Indices,
        /// triangles to remove (useDataInputs)
        trianglesToRemove: Indices,
        /// quads to remove (useDataInputs)
        quadsToRemove: Indices,
        /// tetrahedra to remove (useDataInputs)
        tetrahedraToRemove: Indices,
        /// hexahedra to remove (useDataInputs)
        hexahedraToRemove: Indices,
        /// incisions: save the elements to cut at init (INCISE= is not supported)
        saveIndicesAtInit: Bool = "false",
        /// incisions: snapping distance along the path (INCISE= is not supported)
        epsilonSnapPath: Real = "0.1",
        /// incisions: snapping distance to the border (INCISE= is not supported)
        epsilonSnapBorder: Real = "0.25",
        /// draw the incision path (rendering only)
        draw: Bool = "false",
    },
    links = {
        /// the topology container to change (default: the context topology)
        topology: Topology,
    },
)]
#[derive(Clone, Default)]
pub struct TopologicalChangeProcessor {
    file: Option<Arc<PathBuf>>,
    lines: Vec<Line>,
    /// Next line to read.
    cursor: usize,
    next_time: f64,
    loop_time: f64,
    topology: Option<ComponentId>,
}

impl TopologicalChangeProcessor {
    fn pos(&self, line: &Line, column: usize) -> Option<SourcePos> {
        self.file.as_ref().map(|f| SourcePos::new(f.clone(), line.number, column as u32 + 1))
    }

    fn script_error(&self, line: &Line, column: usize, message: impl Into<String>, hint: &str) -> SimError {
        let mut d = Diagnostic::error(message).at(self.pos(line, column));
        d.hint = Some(hint.to_string());
        SimError(Box::new(d))
    }

    /// SOFA's `readNext`: the lines of the last block due at `time`.
    fn read_due(&mut self, time: f64, do_loop: bool) -> Vec<Line> {
        let mut valid = Vec::new();
        let due = |next: f64| next < time || (next - time).abs() < f64::EPSILON;
        while due(self.next_time) {
            if self.cursor >= self.lines.len() {
                if !do_loop || self.lines.is_empty() {
                    break;
                }
                self.cursor = 0;
                self.loop_time = self.next_time;
            }
            let line = self.lines[self.cursor].clone();
            self.cursor += 1;
            let mut words = line.text.split_whitespace();
            if words.next() == Some("T=") {
                // An unreadable time reads as 0, as a failed stream extraction does.
                self.next_time = words.next().and_then(|w| w.parse::<f64>().ok()).unwrap_or(0.0) + self.loop_time;
                if due(self.next_time) {
                    valid.clear();
                }
            }
            if due(self.next_time) {
                valid.push(line);
            }
        }
        valid
    }

    /// The modifier SOFA's `getContext()->get(topoMod)` finds from the topology's node: the
    /// element kind its `removeItems` removes.
    fn modifier_kind(scene: &Scene, topology: ComponentId) -> Option<(ElementKind, ComponentId)> {
        let mut cur = Some(scene.entry(topology).node);
        while let Some(n) = cur {
            for &c in &scene.node(n).objects {
                let kind = match scene.entry(c).class.name {
                    "PointSetTopologyModifier" => ElementKind::Point,
                    "EdgeSetTopologyModifier" => ElementKind::Edge,
                    "TriangleSetTopologyModifier" => ElementKind::Triangle,
                    "QuadSetTopologyModifier" => ElementKind::Quad,
                    "TetrahedronSetTopologyModifier" => ElementKind::Tetrahedron,
                    "HexahedronSetTopologyModifier" => ElementKind::Hexahedron,
                    _ => continue,
                };
                return Some((kind, c));
            }
            cur = scene.node(n).parent();
        }
        None
    }

    fn process_script(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let Some(topology) = self.topology else { return Ok(()) };
        let d = &scene.entry(me).data;
        let time = scene.params(scene.entry(me).node).time + d.get(Self::SHIFT);
        let do_loop = d.get(Self::LOOP);
        let lines = self.read_due(time, do_loop);
        let mut k = 0;
        while k < lines.len() {
            let line = &lines[k];
            let mut words = line.text.split_whitespace();
            let command = words.next().unwrap_or("");
            match command {
                "ADD=" | "REMOVE=" => {
                    let (kind_word, count_word) = if command == "ADD=" { (words.next(), words.next()) } else { (None, words.next()) };
                    let after: Vec<&str> = words.collect();
                    let count: usize = count_word.and_then(|w| w.parse().ok()).ok_or_else(|| {
                        self.script_error(
                            line,
                            0,
                            format!("`{}`: expected a number of elements", line.text.trim()),
                            "write e.g. `REMOVE= 3` or `ADD= Triangles 2`",
                        )
                    })?;
                    let Some(values_line) = lines.get(k + 1) else {
                        return Err(self.script_error(line, 0, "the element list is missing after this line", "put the indices on the next line"));
                    };
                    let values = self.parse_indices(values_line)?;
                    k += 2;
                    if command == "REMOVE=" {
                        self.remove(scene, topology, values_line, count, &values)?;
                    } else {
                        self.add(scene, topology, line, values_line, kind_word.unwrap_or(""), &after, count, &values)?;
                    }
                }
                "INCISE=" => {
                    return Err(
                        SimError::unsupported("INCISE= (cutting along a path) is not supported").hint("remove the INCISE= blocks from the script")
                    );
                }
                _ => k += 1,
            }
        }
        Ok(())
    }

    fn parse_indices(&self, line: &Line) -> SimResult<Vec<(usize, usize)>> {
        // (value, column)
        let mut out = Vec::new();
        let text = &line.text;
        let mut start = None;
        for (i, ch) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
            if ch.is_whitespace() {
                if let Some(s) = start.take() {
                    let word = &text[s..i];
                    let v = word.parse::<usize>().map_err(|_| {
                        self.script_error(
                            line,
                            s,
                            format!("`{word}` is not an element index"),
                            "indices are non-negative integers separated by spaces",
                        )
                    })?;
                    out.push((v, s));
                }
            } else if start.is_none() {
                start = Some(i);
            }
        }
        Ok(out)
    }

    /// Checks a list of `count` element ids against `len` elements, distinct.
    fn check_ids(&self, line: &Line, values: &[(usize, usize)], count: usize, len: usize, what: &str) -> SimResult<Vec<usize>> {
        if values.len() < count {
            return Err(self.script_error(
                line,
                line.text.len(),
                format!("{count} {what}s announced, {} given", values.len()),
                "the count after REMOVE=/ADD= must match the list",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        let mut ids = Vec::with_capacity(count);
        for &(v, col) in &values[..count] {
            if v >= len {
                return Err(self.script_error(
                    line,
                    col,
                    format!("{what} {v} does not exist (the topology has {len} {what}s)"),
                    "check the script against the mesh at this time",
                ));
            }
            if !seen.insert(v) {
                return Err(self.script_error(line, col, format!("{what} {v} is named twice"), "name each element once"));
            }
            ids.push(v);
        }
        Ok(ids)
    }

    fn container(scene: &Scene, topology: ComponentId) -> SimResult<&SetTopologyContainer> {
        scene.get::<SetTopologyContainer>(topology).ok_or_else(|| {
            SimError::unsupported(format!("{} is not a dynamic topology container: its elements cannot be changed", scene.entry(topology).label()))
                .hint("use a *SetTopologyContainer with its *SetTopologyModifier")
        })
    }

    fn remove(&self, scene: &mut Scene, topology: ComponentId, line: &Line, count: usize, values: &[(usize, usize)]) -> SimResult {
        let Some((kind, modifier)) = Self::modifier_kind(scene, topology) else {
            return Err(SimError::new(format!("no topology modifier in the node of {} or above", scene.entry(topology).label()))
                .hint("add the container's *SetTopologyModifier next to it"));
        };
        let len = Self::container(scene, topology)?.topo().count(kind);
        let ids = self.check_ids(line, values, count, len, kind.name())?;
        remove_items_with(scene, topology, kind, ids, remove_isolated_points(scene, modifier))
    }

    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        scene: &mut Scene,
        topology: ComponentId,
        line: &Line,
        values_line: &Line,
        kind_word: &str,
        after: &[&str],
        count: usize,
        values: &[(usize, usize)],
    ) -> SimResult {
        let kind = match kind_word {
            "Edge" | "Edges" => ElementKind::Edge,
            "Triangle" | "Triangles" => ElementKind::Triangle,
            "Quad" | "Quads" => ElementKind::Quad,
            "Tetrahedron" | "Tetrahedra" => ElementKind::Tetrahedron,
            "Hexahedron" | "Hexahedra" => ElementKind::Hexahedron,
            "PointInTriangle" | "PointsInTriangle" => {
                return Err(self.script_error(line, 0, "ADD= PointsInTriangle is not supported", "add whole elements instead"));
            }
            other => {
                return Err(self.script_error(
                    line,
                    0,
                    format!("`{other}` is not an element type"),
                    "write Edges, Triangles, Quads, Tetrahedra or Hexahedra",
                ))
            }
        };
        let arity = kind.arity();
        let topo = Self::container(scene, topology)?.topo();
        let nb_points = topo.nb_points;
        if values.len() < count * arity {
            return Err(self.script_error(
                values_line,
                values_line.text.len(),
                format!("{count} {}s need {} indices, {} given", kind.name(), count * arity, values.len()),
                "give the vertices of every element",
            ));
        }
        for &(v, col) in &values[..count * arity] {
            if v >= nb_points {
                return Err(self.script_error(
                    values_line,
                    col,
                    format!("point {v} does not exist (the topology has {nb_points} points)"),
                    "added elements use existing points",
                ));
            }
        }
        let flat: Vec<usize> = values[..count * arity].iter().map(|&(v, _)| v).collect();
        // `Ancestors` on the ADD= line (triangles): one ancestor per new triangle.
        let mut ancestors: Vec<Vec<usize>> = Vec::new();
        if kind == ElementKind::Triangle && matches!(after.first(), Some(&"Ancestors") | Some(&"Ancestor")) {
            for k in 0..count {
                let a = after.get(1 + k).and_then(|w| w.parse::<usize>().ok()).ok_or_else(|| {
                    self.script_error(
                        line,
                        0,
                        format!("{count} ancestors expected after `Ancestors`"),
                        "give one ancestor triangle per added triangle",
                    )
                })?;
                if a >= topo.count(ElementKind::Triangle) {
                    return Err(self.script_error(line, 0, format!("ancestor triangle {a} does not exist"), "ancestors are existing triangles"));
                }
                ancestors.push(vec![a]);
            }
        }
        modifier::modify(scene, topology, |t: &mut DynTopo| match kind {
            ElementKind::Edge => modifier::edge::add_edges(t, &chunks::<2>(&flat)),
            ElementKind::Triangle => modifier::triangle::add_triangles(t, &chunks::<3>(&flat), ancestors, Vec::new()),
            ElementKind::Quad => modifier::quad::add_quads(t, &chunks::<4>(&flat)),
            ElementKind::Tetrahedron => modifier::tetrahedron::add_tetrahedra(t, &chunks::<4>(&flat)),
            ElementKind::Hexahedron => modifier::hexahedron::add_hexahedra(t, &chunks::<8>(&flat)),
            ElementKind::Point => {}
        })
    }

    fn process_data_inputs(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        let Some(topology) = self.topology else { return Ok(()) };
        let node = scene.entry(me).node;
        let time = scene.params(node).time;
        let d = &scene.entry(me).data;
        if d.get(Self::TIME_TO_REMOVE) >= time {
            return Ok(());
        }
        let lists: Vec<(ElementKind, Vec<usize>)> = vec![
            (ElementKind::Hexahedron, d.get(Self::HEXAHEDRA_TO_REMOVE).to_vec()),
            (ElementKind::Tetrahedron, d.get(Self::TETRAHEDRA_TO_REMOVE).to_vec()),
            (ElementKind::Quad, d.get(Self::QUADS_TO_REMOVE).to_vec()),
            (ElementKind::Triangle, d.get(Self::TRIANGLES_TO_REMOVE).to_vec()),
            (ElementKind::Edge, d.get(Self::EDGES_TO_REMOVE).to_vec()),
            (ElementKind::Point, d.get(Self::POINTS_TO_REMOVE).to_vec()),
        ];
        let interval = d.get(Self::INTERVAL);
        let next = if interval != 0.0 { d.get(Self::TIME_TO_REMOVE) + interval } else { f64::INFINITY };
        for (kind, ids) in lists {
            if ids.is_empty() {
                continue;
            }
            let len = Self::container(scene, topology)?.topo().count(kind);
            let mut seen = std::collections::HashSet::new();
            if let Some(&bad) = ids.iter().find(|&&i| i >= len || !seen.insert(i)) {
                return Err(SimError::new(format!(
                    "{}sToRemove names {} {bad}, which does not exist or is named twice ({len} {}s)",
                    kind.name(),
                    kind.name(),
                    kind.name()
                ))
                .hint("name existing elements, each once"));
            }
            remove_items(scene, topology, kind, ids)?;
        }
        scene.components[me].data.put(Self::TIME_TO_REMOVE, next);
        Ok(())
    }
}

fn chunks<const K: usize>(flat: &[usize]) -> Vec<[usize; K]> {
    flat.chunks_exact(K).map(|c| std::array::from_fn(|i| c[i])).collect()
}

/// SOFA's `removeItems` of the modifier of `kind` on a container, the modifier's
/// `removeIsolated` at its default (true).
pub fn remove_items(scene: &mut Scene, topology: ComponentId, kind: ElementKind, ids: Vec<usize>) -> SimResult {
    remove_items_with(scene, topology, kind, ids, true)
}

/// SOFA's `removeItems`, with the `removeIsolated` Data of the tetrahedron and hexahedron
/// modifiers (points left without a volume element are removed only when it is set).
pub fn remove_items_with(scene: &mut Scene, topology: ComponentId, kind: ElementKind, ids: Vec<usize>, remove_isolated_points: bool) -> SimResult {
    modifier::modify(scene, topology, |t: &mut DynTopo| match kind {
        ElementKind::Point => modifier::point::remove_points(t, ids),
        ElementKind::Edge => modifier::edge::remove_edges(t, ids, true),
        ElementKind::Triangle => modifier::triangle::remove_triangles(t, ids, true, true),
        ElementKind::Quad => modifier::quad::remove_quads(t, ids, true, true),
        ElementKind::Tetrahedron => modifier::tetrahedron::remove_tetrahedra_with(t, ids, true, remove_isolated_points),
        ElementKind::Hexahedron => modifier::hexahedron::remove_hexahedra_with(t, ids, true, remove_isolated_points),
    })
}

/// The `removeIsolated` Data of a tetrahedron or hexahedron modifier (others have none: true).
fn remove_isolated_points(scene: &Scene, modifier: ComponentId) -> bool {
    let e = scene.entry(modifier);
    match e.class.name {
        "TetrahedronSetTopologyModifier" | "HexahedronSetTopologyModifier" => e.data.get(crate::set_algorithms::RemoveIsolatedData::REMOVE_ISOLATED),
        _ => true,
    }
}

impl Component for TopologicalChangeProcessor {
    fn init(&mut self, cx: &mut InitCtx) -> SimResult {
        self.topology = cx.topology();
        if self.topology.is_none() {
            return Err(cx
                .error("no topology container found in this node or its ancestors")
                .hint("set `topology=\"@container\"` or add a *SetTopologyContainer"));
        }
        self.lines.clear();
        self.cursor = 0;
        self.next_time = 0.0;
        self.loop_time = 0.0;
        if cx.data().get(Self::USE_DATA_INPUTS) {
            return Ok(());
        }
        let name = cx.data().get(Self::FILENAME).trim().to_string();
        if name.is_empty() {
            return Err(cx
                .error("no script: `filename` is empty")
                .hint("set `filename=\"changes.txt\"`, or useDataInputs=\"true\" with the *ToRemove lists"));
        }
        let path = cx.resolve_file(&name)?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| cx.error(format!("cannot read the script '{}': {e}", path.display())).hint("check the file name (relative to the scene)"))?;
        self.lines = text.lines().enumerate().map(|(i, l)| Line { number: i as u32 + 1, text: l.to_string() }).collect();
        self.file = Some(Arc::new(path));
        Ok(())
    }

    fn animate_begin(&mut self, scene: &mut Scene, me: ComponentId) -> SimResult {
        if scene.entry(me).data.get(Self::USE_DATA_INPUTS) {
            self.process_data_inputs(scene, me)
        } else {
            self.process_script(scene, me)
        }
    }

    /// The processor holds no per-element data.
    fn topology_changed(&mut self, _cx: &mut InitCtx, _topology: ComponentId, _changes: &[TopologyChange]) -> SimResult<Follow> {
        Ok(Follow::NotConcerned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn processor(script: &str) -> TopologicalChangeProcessor {
        let lines = script.lines().enumerate().map(|(i, l)| Line { number: i as u32 + 1, text: l.to_string() }).collect();
        TopologicalChangeProcessor { lines, ..Default::default() }
    }

    fn texts(v: &[Line]) -> Vec<&str> {
        v.iter().map(|l| l.text.trim()).collect()
    }

    #[test]
    fn blocks_are_read_when_their_time_comes_within_machine_epsilon() {
        let mut p = processor("T= 0.1\n  REMOVE= 1\n4\nT= 0.2\n  REMOVE= 2\n0 1\n");
        assert!(p.read_due(0.0, false).is_empty());
        assert!(p.read_due(0.09, false).is_empty());
        // 0.01 added ten times is 0.09999999999999999: due.
        let t: f64 = (0..10).map(|_| 0.01).sum();
        assert_ne!(t, 0.1);
        // The `T=` line was read (not due) by an earlier step.
        assert_eq!(texts(&p.read_due(t, false)), ["REMOVE= 1", "4"]);
        assert!(p.read_due(0.15, false).is_empty());
        assert_eq!(texts(&p.read_due(0.2, false)), ["REMOVE= 2", "0 1"]);
        // The end of the script: nothing more, every later step.
        assert!(p.read_due(0.3, false).is_empty());
        assert!(p.read_due(0.4, false).is_empty());
    }

    #[test]
    fn when_several_blocks_are_due_only_the_last_is_performed() {
        // SOFA clears the lines it collected each time it reads another due `T=` line.
        let mut p = processor("T= 0.1\n  REMOVE= 1\n4\nT= 0.2\n  REMOVE= 1\n3\nT= 0.5\n  REMOVE= 1\n0\n");
        assert_eq!(texts(&p.read_due(0.25, false)), ["T= 0.2", "REMOVE= 1", "3"]);
        assert_eq!(texts(&p.read_due(0.5, false)), ["REMOVE= 1", "0"]);
    }

    #[test]
    fn a_looping_script_starts_again_shifted_by_its_last_time() {
        let mut p = processor("T= 0.1\n  REMOVE= 1\n0\n");
        assert_eq!(texts(&p.read_due(0.1, true)), ["T= 0.1", "REMOVE= 1", "0"]);
        // At the end, the script restarts with times shifted by 0.1.
        assert!(p.read_due(0.15, true).is_empty());
        assert_eq!(texts(&p.read_due(0.2, true)), ["REMOVE= 1", "0"]);
    }

    #[test]
    fn bad_index_lists_are_refused_at_their_line_and_column() {
        let p = processor("T= 0\n  REMOVE= 2\n3 x\n");
        let e = p.parse_indices(&p.lines[2].clone()).unwrap_err().to_string();
        assert!(e.contains("`x` is not an element index"), "{e}");
        let p = processor("T= 0\n  REMOVE= 2\n3 9\n");
        let line = p.lines[2].clone();
        let values = p.parse_indices(&line).unwrap();
        let e = p.check_ids(&line, &values, 2, 5, "triangle").unwrap_err();
        assert!(e.to_string().contains("triangle 9 does not exist (the topology has 5 triangles)"), "{e}");
        let pos = e.diagnostic().pos.clone();
        assert!(pos.is_none(), "no file in this test");
        let e = p.check_ids(&line, &values, 3, 50, "triangle").unwrap_err();
        assert!(e.to_string().contains("3 triangles announced, 2 given"), "{e}");
        let p = processor("1 1\n");
        let line = p.lines[0].clone();
        let values = p.parse_indices(&line).unwrap();
        assert!(p.check_ids(&line, &values, 2, 5, "edge").unwrap_err().to_string().contains("named twice"));
    }
}
