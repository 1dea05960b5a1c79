//! Reading and writing SOFA dump files (spec §5.2, §5.4, §5.8).
//!
//! State dump (`<base>_<i>_<name>_mstate.txt.gz`), one record per dumped time:
//!
//! ```text
//! T= <time>
//!   X= <v0> <v1> ... <vn-1>
//!   V= <w0> ... <wn-1>          (optional)
//! ```
//!
//! Topology dump (`<base>_<i>_<name>_topology.txt.gz`): after `T=`, for each of Edges, Triangles,
//! Quads, Tetrahedra, Hexahedra a count line `  Edges= <n>` followed by one line holding the flat
//! index list (empty when the count is 0).
//!
//! Files are gzip streams that SOFA flushes (`Z_SYNC_FLUSH`) after every record; a writer that was
//! never closed leaves a stream without its end marker. Readers therefore keep everything that
//! could be decoded from a truncated stream and only drop an unparseable trailing fragment.

use std::fs::File;
use std::io::{BufWriter, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use crate::error::RegressError;
use crate::gformat::{format_g6, write_g6_list};

/// One record of a state dump: the time and the flat scalar vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct StateRecord {
    /// Time as printed in the file (6 significant digits).
    pub time: f64,
    /// Positions, all scalars element after element (`x y z` per Vec3, `x y z qx qy qz qw` per
    /// Rigid3). Empty if the record had no `X=` line.
    pub x: Vec<f64>,
    /// Velocities, if the record has a `V=` line.
    pub v: Option<Vec<f64>>,
}

/// One record of a topology dump. Each vector is the flat index list of its element type
/// (2 indices per edge, 3 per triangle, 4 per quad/tetrahedron, 8 per hexahedron).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopologyRecord {
    pub time: f64,
    pub edges: Vec<u32>,
    pub triangles: Vec<u32>,
    pub quads: Vec<u32>,
    pub tetrahedra: Vec<u32>,
    pub hexahedra: Vec<u32>,
}

/// The element sections of a topology record, in file order: (label, indices per element).
pub const TOPOLOGY_SECTIONS: [(&str, usize); 5] = [("Edges=", 2), ("Triangles=", 3), ("Quads=", 4), ("Tetrahedra=", 4), ("Hexahedra=", 8)];

impl TopologyRecord {
    /// The index vectors in [`TOPOLOGY_SECTIONS`] order.
    pub fn sections(&self) -> [&Vec<u32>; 5] {
        [&self.edges, &self.triangles, &self.quads, &self.tetrahedra, &self.hexahedra]
    }

    fn sections_mut(&mut self) -> [&mut Vec<u32>; 5] {
        [&mut self.edges, &mut self.triangles, &mut self.quads, &mut self.tetrahedra, &mut self.hexahedra]
    }
}

// ------------------------------------------------------------------------------------------------
// File names

/// Appends `suffix` to the file name of `base` (not a path join: `x.scn.reference` ->
/// `x.scn.reference<suffix>`).
fn with_suffix(base: &Path, suffix: &str) -> PathBuf {
    let mut s = base.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// `<base>_<index>_<name>_mstate.txt.gz` (spec §5.2), `base` being `<refdir>/<scene>.reference`.
pub fn state_reference_path(base: &Path, index: usize, name: &str) -> PathBuf {
    with_suffix(base, &format!("_{index}_{name}_mstate.txt.gz"))
}

/// `<base>_<index>_<name>_topology.txt.gz` (spec §5.2, §5.8).
pub fn topology_reference_path(base: &Path, index: usize, name: &str) -> PathBuf {
    with_suffix(base, &format!("_{index}_{name}_topology.txt.gz"))
}

// ------------------------------------------------------------------------------------------------
// Decompression

/// Text content of a dump file and whether its gzip stream ended prematurely.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedText {
    pub text: String,
    /// True if the gzip stream was cut before its end marker; `text` then holds everything that
    /// could be decoded.
    pub truncated: bool,
}

/// Reads a dump file: gzip (detected by its magic bytes, possibly several members) or plain text.
///
/// A truncated gzip stream is not an error: the decoded prefix is returned with
/// `truncated = true`. Any other decoding failure (corrupt data) is [`RegressError::Gzip`].
pub fn read_dump_text(path: &Path) -> Result<DecodedText, RegressError> {
    let mut raw = Vec::new();
    File::open(path).and_then(|mut f| f.read_to_end(&mut raw)).map_err(|e| RegressError::io(path, "reading", e))?;

    if !raw.starts_with(&[0x1f, 0x8b]) {
        return Ok(DecodedText { text: String::from_utf8_lossy(&raw).into_owned(), truncated: false });
    }

    let mut decoder = MultiGzDecoder::new(raw.as_slice());
    let mut out = Vec::with_capacity(raw.len() * 4);
    let mut buf = vec![0u8; 1 << 16];
    let mut truncated = false;
    // Read chunk by chunk (not read_to_end) so that the decoded prefix is kept, whatever
    // the decoder does with its buffers when it hits the premature end.
    loop {
        match decoder.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                truncated = true;
                break;
            }
            Err(source) => return Err(RegressError::Gzip { path: path.to_owned(), decoded: out.len(), source }),
        }
    }
    Ok(DecodedText { text: String::from_utf8_lossy(&out).into_owned(), truncated })
}

/// A line of decoded text with its 1-based number and whether it ended with `\n`.
struct Line<'a> {
    no: usize,
    text: &'a str,
    complete: bool,
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut lines: Vec<Line> =
        text.split('\n').enumerate().map(|(i, t)| Line { no: i + 1, text: t.strip_suffix('\r').unwrap_or(t), complete: true }).collect();
    // `split` yields a final piece after the last '\n': empty for a well-terminated text,
    // otherwise an unterminated (possibly cut) last line.
    if let Some(last) = lines.last_mut() {
        if text.is_empty() || text.ends_with('\n') {
            lines.pop();
        } else {
            last.complete = false;
        }
    }
    lines
}

/// Parses one number the way the values were printed (`%g`, incl. `inf`/`nan` which SOFA can
/// print for diverged states; the metric treats those like C++ streams do, see `metric`).
fn parse_f64(tok: &str) -> Result<f64, String> {
    tok.parse::<f64>().map_err(|_| format!("expected a number, found `{tok}`"))
}

fn parse_f64_list<'a>(toks: impl Iterator<Item = &'a str>) -> Result<Vec<f64>, String> {
    toks.map(parse_f64).collect()
}

// ------------------------------------------------------------------------------------------------
// State dumps

/// Reads a state dump (`*_mstate.txt.gz`, gzip or plain text).
///
/// Unknown lines inside a record (`X0=`, `F=`, blank lines) are ignored, as SOFA's reader does.
/// For a truncated gzip stream, a trailing unterminated line that does not parse is dropped,
/// and so is a trailing record that has no `X=` line yet.
pub fn read_state_reference(path: &Path) -> Result<Vec<StateRecord>, RegressError> {
    let decoded = read_dump_text(path)?;
    parse_state_text(&decoded.text, decoded.truncated, path)
}

/// Parses the text of a state dump; `path` is only used in error messages. See
/// [`read_state_reference`] for the meaning of `truncated`.
pub fn parse_state_text(text: &str, truncated: bool, path: &Path) -> Result<Vec<StateRecord>, RegressError> {
    let mut records = Vec::new();
    // Current record and whether it has an X line.
    let mut current: Option<(StateRecord, bool)> = None;

    for line in split_lines(text) {
        let mut toks = line.text.split_ascii_whitespace();
        let Some(cmd) = toks.next() else { continue };
        let parsed: Result<(), String> = match cmd {
            "T=" => match toks.next().map(parse_f64) {
                Some(Ok(time)) => {
                    if let Some((rec, _)) = current.take() {
                        records.push(rec);
                    }
                    current = Some((StateRecord { time, x: Vec::new(), v: None }, false));
                    Ok(())
                }
                Some(Err(e)) => Err(format!("in `T=` line: {e}")),
                None => Err("`T=` line without a time value".into()),
            },
            "X=" | "V=" => match (&mut current, parse_f64_list(toks)) {
                (None, _) => Err(format!("`{cmd}` line before any `T=` line")),
                (_, Err(e)) => Err(format!("in `{cmd}` line: {e}")),
                (Some((rec, has_x)), Ok(values)) => {
                    if cmd == "X=" {
                        if *has_x {
                            Err("second `X=` line in one record".into())
                        } else {
                            rec.x = values;
                            *has_x = true;
                            Ok(())
                        }
                    } else if rec.v.is_some() {
                        Err("second `V=` line in one record".into())
                    } else {
                        rec.v = Some(values);
                        Ok(())
                    }
                }
            },
            _ => Ok(()),
        };
        if let Err(message) = parsed {
            if truncated && !line.complete {
                // The stream was cut in the middle of this line: drop the fragment.
                break;
            }
            return Err(RegressError::parse(path, line.no, message));
        }
    }
    if let Some((rec, has_x)) = current {
        // A cut stream may end right after a `T=` line: that record was never completed.
        if has_x || !truncated {
            records.push(rec);
        }
    }
    Ok(records)
}

/// Renders one state record exactly as SOFA's `WriteState` does:
/// `T= <t>\n  X= v0 v1 ...\n` and, if `v` is given, `  V= w0 ...\n`.
pub fn format_state_record(time: f64, x: &[f64], v: Option<&[f64]>) -> String {
    let mut s = String::with_capacity(16 + 12 * (x.len() + v.map_or(0, <[f64]>::len)));
    s.push_str("T= ");
    s.push_str(&format_g6(time));
    s.push_str("\n  X= ");
    write_g6_list(&mut s, x);
    s.push('\n');
    if let Some(v) = v {
        s.push_str("  V= ");
        write_g6_list(&mut s, v);
        s.push('\n');
    }
    s
}

// ------------------------------------------------------------------------------------------------
// Topology dumps

/// Reads a topology dump (`*_topology.txt.gz`, gzip or plain text).
///
/// For a truncated gzip stream, a trailing record that is incomplete (cut line, missing index
/// line or missing sections) is dropped; everything before it is kept.
pub fn read_topology_reference(path: &Path) -> Result<Vec<TopologyRecord>, RegressError> {
    let decoded = read_dump_text(path)?;
    parse_topology_text(&decoded.text, decoded.truncated, path)
}

/// Parses the text of a topology dump; see [`read_topology_reference`].
///
/// In a complete file a record may omit sections (they read as empty, which SOFA's comparison
/// treats the same way as a zero count: not compared).
pub fn parse_topology_text(text: &str, truncated: bool, path: &Path) -> Result<Vec<TopologyRecord>, RegressError> {
    let lines = split_lines(text);
    let mut records = Vec::new();
    // Current record and the bit set of sections seen in it.
    let mut current: Option<(TopologyRecord, u8)> = None;
    let mut i = 0;

    // Error at line `no`: tolerated (drops the current record) only if it is caused by the
    // stream being cut, i.e. it concerns the unterminated last line or the missing line after it.
    let at_cut = |idx: usize| truncated && (idx >= lines.len() || !lines[idx].complete);

    while i < lines.len() {
        let line = &lines[i];
        let mut toks = line.text.split_ascii_whitespace();
        let Some(cmd) = toks.next() else {
            i += 1;
            continue;
        };
        if cmd == "T=" {
            let time = match toks.next().map(parse_f64) {
                Some(Ok(t)) => t,
                other => {
                    if at_cut(i) {
                        current = None;
                        break;
                    }
                    let msg = match other {
                        Some(Err(e)) => format!("in `T=` line: {e}"),
                        _ => "`T=` line without a time value".into(),
                    };
                    return Err(RegressError::parse(path, line.no, msg));
                }
            };
            if let Some((rec, _)) = current.take() {
                records.push(rec);
            }
            current = Some((TopologyRecord { time, ..Default::default() }, 0));
            i += 1;
            continue;
        }
        let Some(section) = TOPOLOGY_SECTIONS.iter().position(|(label, _)| *label == cmd) else {
            // Unknown line: ignored, like SOFA's reader.
            i += 1;
            continue;
        };
        let (label, arity) = TOPOLOGY_SECTIONS[section];

        // Count line, then the index line (consumed unconditionally, as SOFA does).
        let result: Result<Vec<u32>, (usize, String)> = (|| {
            let Some((_, seen)) = &current else {
                return Err((i, format!("`{label}` line before any `T=` line")));
            };
            if seen & (1 << section) != 0 {
                return Err((i, format!("second `{label}` line in one record")));
            }
            let count: usize = match toks.next().map(str::parse) {
                Some(Ok(c)) => c,
                _ => return Err((i, format!("expected `{label} <count>`"))),
            };
            if at_cut(i) {
                return Err((i, "cut count line".into()));
            }
            let Some(idx_line) = lines.get(i + 1) else {
                return Err((i + 1, format!("missing index line after `{label} {count}`")));
            };
            let indices: Vec<u32> = idx_line
                .text
                .split_ascii_whitespace()
                .map(|t| t.parse::<u32>().map_err(|_| format!("expected a vertex index, found `{t}`")))
                .collect::<Result<_, _>>()
                .map_err(|e| (i + 1, e))?;
            if indices.len() != count * arity {
                return Err((i + 1, format!("`{label} {count}` needs {} indices, found {}", count * arity, indices.len())));
            }
            Ok(indices)
        })();
        match result {
            Ok(indices) => {
                let (rec, seen) = current.as_mut().expect("checked above");
                *rec.sections_mut()[section] = indices;
                *seen |= 1 << section;
                i += 2;
            }
            Err((idx, message)) => {
                if at_cut(idx) {
                    current = None;
                    break;
                }
                let no = lines.get(idx).map_or(lines.len() + 1, |l| l.no);
                return Err(RegressError::parse(path, no, message));
            }
        }
    }
    if let Some((rec, seen)) = current {
        // In a cut stream only a record with all five sections is known to be complete.
        if !truncated || seen == 0b1_1111 {
            records.push(rec);
        }
    }
    Ok(records)
}

/// Renders one topology record as SOFA's `WriteTopology` does (count line, then index line,
/// empty when the count is 0).
pub fn format_topology_record(rec: &TopologyRecord) -> String {
    let mut s = format!("T= {}\n", format_g6(rec.time));
    for ((label, arity), indices) in TOPOLOGY_SECTIONS.iter().zip(rec.sections()) {
        s.push_str(&format!("  {label} {}\n", indices.len() / arity));
        for (k, idx) in indices.iter().enumerate() {
            if k > 0 {
                s.push(' ');
            }
            s.push_str(&idx.to_string());
        }
        s.push('\n');
    }
    s
}

// ------------------------------------------------------------------------------------------------
// Writers

/// Gzip text sink flushed (sync flush) after each record, so that a crash or a writer that is
/// never finished still leaves every complete record readable, like SOFA's `gzflush`.
struct GzRecordSink<W: Write> {
    path: PathBuf,
    enc: Option<GzEncoder<W>>,
}

impl<W: Write> GzRecordSink<W> {
    fn new(path: PathBuf, inner: W) -> Self {
        GzRecordSink { path, enc: Some(GzEncoder::new(inner, Compression::default())) }
    }

    fn write_text(&mut self, text: &str) -> Result<(), RegressError> {
        let enc = self.enc.as_mut().expect("sink is only finished by value");
        enc.write_all(text.as_bytes()).and_then(|()| enc.flush()).map_err(|e| RegressError::io(&self.path, "writing a record", e))
    }

    fn finish(mut self) -> Result<W, RegressError> {
        let enc = self.enc.take().expect("sink is only finished once");
        let mut inner = enc.finish().map_err(|e| RegressError::io(&self.path, "finishing the gzip stream", e))?;
        inner.flush().map_err(|e| RegressError::io(&self.path, "flushing", e))?;
        Ok(inner)
    }
}

fn create_file(path: &Path) -> Result<BufWriter<File>, RegressError> {
    File::create(path).map(BufWriter::new).map_err(|e| RegressError::io(path, "creating", e))
}

/// Writes state dump records (gzip text, one sync flush per record).
///
/// Dropping the writer without [`finish`](Self::finish) still writes the gzip trailer
/// (best effort); `finish` reports errors.
pub struct StateDumpWriter<W: Write = BufWriter<File>> {
    sink: GzRecordSink<W>,
}

/// `create`, `from_writer` and `finish` of a dump writer (a struct whose `sink` is a
/// [`GzRecordSink`]).
macro_rules! dump_writer_sink {
    ($writer:ident) => {
        impl $writer<BufWriter<File>> {
            /// Creates (truncates) the file at `path`.
            pub fn create(path: &Path) -> Result<Self, RegressError> {
                Ok($writer { sink: GzRecordSink::new(path.to_owned(), create_file(path)?) })
            }
        }

        impl<W: Write> $writer<W> {
            /// Writes into an arbitrary sink (e.g. a `Vec<u8>` in tests).
            pub fn from_writer(inner: W) -> Self {
                $writer { sink: GzRecordSink::new(PathBuf::from("<writer>"), inner) }
            }

            /// Ends the gzip stream and returns the inner writer.
            pub fn finish(self) -> Result<W, RegressError> {
                self.sink.finish()
            }
        }
    };
}

dump_writer_sink!(StateDumpWriter);
dump_writer_sink!(TopologyDumpWriter);

impl<W: Write> StateDumpWriter<W> {
    /// Writes one record (see [`format_state_record`]) and flushes it.
    pub fn write_record(&mut self, time: f64, x: &[f64], v: Option<&[f64]>) -> Result<(), RegressError> {
        self.sink.write_text(&format_state_record(time, x, v))
    }

    /// Same as [`write_record`](Self::write_record) for a [`StateRecord`].
    pub fn write(&mut self, rec: &StateRecord) -> Result<(), RegressError> {
        self.write_record(rec.time, &rec.x, rec.v.as_deref())
    }
}

/// Writes topology dump records (gzip text, one sync flush per record).
pub struct TopologyDumpWriter<W: Write = BufWriter<File>> {
    sink: GzRecordSink<W>,
}

impl<W: Write> TopologyDumpWriter<W> {
    /// Writes one record (see [`format_topology_record`]) and flushes it.
    ///
    /// Fails with [`RegressError::Length`] if an index list is not a multiple of its arity.
    pub fn write(&mut self, rec: &TopologyRecord) -> Result<(), RegressError> {
        for ((label, arity), indices) in TOPOLOGY_SECTIONS.iter().zip(rec.sections()) {
            if indices.len() % arity != 0 {
                return Err(RegressError::Length { what: label, expected: indices.len() / arity * arity + arity, got: indices.len() });
            }
        }
        self.sink.write_text(&format_topology_record(rec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("settee-regress-{tag}-{}-{:?}", std::process::id(), std::thread::current().id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    use settee_testkit::suite;

    #[test]
    fn file_names() {
        let base = Path::new("/r/Demos/liver.scn.reference");
        assert_eq!(state_reference_path(base, 1, "dofs"), PathBuf::from("/r/Demos/liver.scn.reference_1_dofs_mstate.txt.gz"));
        assert_eq!(topology_reference_path(base, 0, "Edge_topo"), PathBuf::from("/r/Demos/liver.scn.reference_0_Edge_topo_topology.txt.gz"));
    }

    #[test]
    fn record_text_is_exact() {
        assert_eq!(
            format_state_record(1.98, &[-9.0, 0.0, 1e-5, 19.998449], Some(&[0.0, -0.150742])),
            "T= 1.98\n  X= -9 0 1e-05 19.9984\n  V= 0 -0.150742\n"
        );
        assert_eq!(format_state_record(0.0, &[], None), "T= 0\n  X= \n");
        let rec = TopologyRecord { time: 0.01, edges: vec![0, 4, 4, 5], triangles: vec![1, 2, 3], ..Default::default() };
        assert_eq!(
            format_topology_record(&rec),
            "T= 0.01\n  Edges= 2\n0 4 4 5\n  Triangles= 1\n1 2 3\n  Quads= 0\n\n  \
             Tetrahedra= 0\n\n  Hexahedra= 0\n\n"
        );
    }

    #[test]
    fn state_round_trip() {
        let dir = tmp_dir("state");
        let path = dir.join("a_0_dofs_mstate.txt.gz");
        let recs = vec![
            StateRecord { time: 0.0, x: vec![1.0, -2.5, 3.25e-7], v: Some(vec![0.0, 0.0, 0.0]) },
            StateRecord { time: 0.99, x: vec![1.5, 2.0, -1234567.0], v: None },
        ];
        let mut w = StateDumpWriter::create(&path).unwrap();
        for r in &recs {
            w.write(r).unwrap();
        }
        w.finish().unwrap();
        let back = read_state_reference(&path).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0], recs[0]);
        // -1234567 is printed (and so read back) with 6 significant digits.
        assert_eq!(back[1].x, vec![1.5, 2.0, -1234570.0]);
        assert_eq!(back[1].v, None);
        assert_eq!(back[1].time, 0.99);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn unfinished_writer_stream_is_readable_up_to_last_flush() {
        // Simulate a writer that was never closed: take the bytes after two flushed records
        // without finishing the gzip stream.
        let mut w = StateDumpWriter::from_writer(Vec::new());
        w.write_record(0.0, &[1.0, 2.0], None).unwrap();
        w.write_record(0.01, &[3.0, 4.0], Some(&[5.0, 6.0])).unwrap();
        let bytes = w.sink.enc.as_ref().unwrap().get_ref().clone();
        let dir = tmp_dir("cut");
        let path = dir.join("cut.txt.gz");
        std::fs::write(&path, &bytes).unwrap();
        let decoded = read_dump_text(&path).unwrap();
        assert!(decoded.truncated);
        assert_eq!(decoded.text, "T= 0\n  X= 1 2\nT= 0.01\n  X= 3 4\n  V= 5 6\n");
        let recs = read_state_reference(&path).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].v, Some(vec![5.0, 6.0]));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn truncated_state_text_drops_only_unparseable_tail() {
        let p = Path::new("t");
        // Cut inside a number token: "-1." still parses, so the line is kept (brief rule),
        let recs = parse_state_text("T= 0\n  X= 1 2\nT= 1\n  X= 3 -1.", true, p).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].x, vec![3.0, -1.0]);
        // "1e-" does not parse: the fragment is dropped, leaving a record with no X: dropped.
        let recs = parse_state_text("T= 0\n  X= 1 2\nT= 1\n  X= 3 1e-", true, p).unwrap();
        assert_eq!(recs.len(), 1);
        // A T line without X at the end of a cut stream is an incomplete record.
        let recs = parse_state_text("T= 0\n  X= 1 2\nT= 1\n", true, p).unwrap();
        assert_eq!(recs.len(), 1);
        // ... but in a complete file it is a record with no positions.
        let recs = parse_state_text("T= 0\n  X= 1 2\nT= 1\n", false, p).unwrap();
        assert_eq!(recs.len(), 2);
        assert!(recs[1].x.is_empty());
        // Errors in complete lines are reported with their line number.
        let err = parse_state_text("T= 0\n  X= 1 zz\nT= 1\n", false, p).unwrap_err();
        assert!(matches!(&err, RegressError::Parse { line: 2, message, .. } if message.contains("`zz`")), "{err}");
        let err = parse_state_text("T= 0\n  X= 1 zz\n", true, p).unwrap_err();
        assert!(matches!(err, RegressError::Parse { line: 2, .. }));
        let err = parse_state_text("  X= 1\n", false, p).unwrap_err();
        assert_eq!(err.to_string(), "t:1: `X=` line before any `T=` line");
    }

    #[test]
    fn state_text_ignores_other_lines_and_reads_nan() {
        let recs = parse_state_text("T= 0\r\n  X= nan -inf 1e+06\r\n  X0= 1 2\r\n\r\n  F= 1\r\n", false, Path::new("t")).unwrap();
        assert_eq!(recs.len(), 1);
        assert!(recs[0].x[0].is_nan());
        assert_eq!(recs[0].x[1], f64::NEG_INFINITY);
        assert_eq!(recs[0].x[2], 1e6);
    }

    #[test]
    fn topology_round_trip_and_errors() {
        let dir = tmp_dir("topo");
        let path = dir.join("t_topology.txt.gz");
        let recs = vec![
            TopologyRecord {
                time: 0.0,
                edges: vec![0, 1, 1, 2],
                triangles: vec![0, 1, 2],
                quads: vec![],
                tetrahedra: vec![0, 1, 2, 3],
                hexahedra: (0..8).collect(),
            },
            TopologyRecord { time: 0.01, ..Default::default() },
        ];
        let mut w = TopologyDumpWriter::create(&path).unwrap();
        for r in &recs {
            w.write(r).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(read_topology_reference(&path).unwrap(), recs);
        std::fs::remove_dir_all(dir).unwrap();

        let mut w = TopologyDumpWriter::from_writer(Vec::new());
        let bad = TopologyRecord { edges: vec![1, 2, 3], ..Default::default() };
        assert!(matches!(w.write(&bad), Err(RegressError::Length { got: 3, .. })));

        let p = Path::new("t");
        let err = parse_topology_text("T= 0\n  Edges= 2\n0 1 2\n", false, p).unwrap_err();
        assert_eq!(err.to_string(), "t:3: `Edges= 2` needs 4 indices, found 3");
        let err = parse_topology_text("T= 0\n  Edges= 1\n", false, p).unwrap_err();
        assert!(matches!(err, RegressError::Parse { line: 3, .. }), "{err}");
        // Same text in a cut stream: the incomplete record is dropped.
        let full = "T= 0\n  Edges= 1\n0 1\n  Triangles= 0\n\n  Quads= 0\n\n  Tetrahedra= 0\n\n  \
                    Hexahedra= 0\n\n";
        let cut = format!("{full}T= 0.01\n  Edges= 1\n");
        let recs = parse_topology_text(&cut, true, p).unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].edges, vec![0, 1]);
        let cut = format!("{full}T= 0.01\n  Edges= 1\n0");
        assert_eq!(parse_topology_text(&cut, true, p).unwrap().len(), 1);
        let cut = format!("{full}T= 0.0");
        assert_eq!(parse_topology_text(&cut, true, p).unwrap().len(), 1);
        // The complete text as a cut stream (ends exactly at a record boundary).
        assert_eq!(parse_topology_text(full, true, p).unwrap().len(), 1);
        // A complete file may omit sections.
        let recs = parse_topology_text("T= 0\n  Edges= 1\n0 1\nT= 1\n", false, p).unwrap();
        assert_eq!(recs.len(), 2);
        assert!(recs[1].edges.is_empty());
    }

    #[test]
    fn real_fembar_reference() {
        let Some(suite) = suite() else { return };
        let path = suite.join(
            "references/Component/LinearSolver/Direct/\
             FEMBAR_SparseLDLSolver.scn.reference_0_DoFs_mstate.txt.gz",
        );
        let decoded = read_dump_text(&path).unwrap();
        assert!(!decoded.truncated);
        let recs = read_state_reference(&path).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].time, 0.0);
        assert_eq!(recs[1].time, 1.98);
        for r in &recs {
            assert_eq!(r.x.len(), 960);
            assert_eq!(r.v.as_ref().map(Vec::len), Some(960));
        }
        // Grid start (-9 0 0) and a moved point of the last record.
        assert_eq!(&recs[0].x[..3], &[-9.0, 0.0, 0.0]);
        assert_eq!(&recs[1].x[48..50], &[-9.17349, -0.317366]);
        assert_eq!(recs[1].v.as_ref().unwrap()[48], -0.150742);
        // Re-rendering the records reproduces the decompressed file byte for byte.
        let text: String = recs.iter().map(|r| format_state_record(r.time, &r.x, r.v.as_deref())).collect();
        assert_eq!(text, decoded.text);
    }

    #[test]
    fn real_truncated_topology_references() {
        let Some(suite) = suite() else { return };
        let dir = suite.join("references/Component/Topology/Container/Dynamic");
        let base = dir.join("RemovingTriangle2EdgeProcess.scn.reference");
        for (i, name) in [(0, "Triangle_topo"), (1, "Edge_topo"), (2, "Triangle_topo")] {
            let path = topology_reference_path(&base, i, name);
            let decoded = read_dump_text(&path).unwrap();
            assert!(decoded.truncated, "{}", path.display());
            let recs = read_topology_reference(&path).unwrap();
            assert_eq!(recs.len(), 21, "{}", path.display());
            assert_eq!(recs[0].time, 0.0);
            assert_eq!(recs[20].time, 0.2);
            for (k, r) in recs.iter().enumerate() {
                assert!((r.time - 0.01 * k as f64).abs() < 1e-9);
            }
        }
        let first = read_topology_reference(&topology_reference_path(&base, 0, "Triangle_topo")).unwrap();
        assert_eq!(first[0].edges.len(), 2 * 2223);
        assert_eq!(first[0].triangles.len(), 3 * 1450);
        assert_eq!(&first[0].edges[..6], &[0, 4, 4, 5, 5, 6]);
        assert_eq!(&first[0].triangles[..3], &[76, 134, 75]);
    }

    #[test]
    fn all_real_references_parse() {
        let Some(suite) = suite() else { return };
        let (mut states, mut topos, mut truncated) = (0, 0, 0);
        let mut stack = vec![suite.join("references")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() {
                    stack.push(path);
                } else if name.ends_with("_mstate.txt.gz") {
                    let decoded = read_dump_text(&path).unwrap();
                    let recs = read_state_reference(&path).unwrap();
                    assert!(recs.len() >= 2, "{}", path.display());
                    assert_eq!(recs[0].time, 0.0, "{}", path.display());
                    // Our writer's rendering (incl. %g) reproduces SOFA's text exactly.
                    let text: String = recs.iter().map(|r| format_state_record(r.time, &r.x, r.v.as_deref())).collect();
                    assert!(text == decoded.text, "{}", path.display());
                    states += 1;
                } else if name.ends_with("_topology.txt.gz") {
                    let decoded = read_dump_text(&path).unwrap();
                    truncated += usize::from(decoded.truncated);
                    let recs = read_topology_reference(&path).unwrap();
                    assert!(recs.len() >= 21, "{}", path.display());
                    let text: String = recs.iter().map(format_topology_record).collect();
                    assert!(text == decoded.text, "{}", path.display());
                    topos += 1;
                }
            }
        }
        assert_eq!(states, 197);
        assert_eq!(topos, 34);
        assert_eq!(truncated, 3);
    }
}
