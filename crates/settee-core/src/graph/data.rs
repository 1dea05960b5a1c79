//! The Data system: named, typed fields of components, parsed from and printed to SOFA's text
//! syntax.
//!
//! A component declares its fields once, as a static table of [`DataDecl`]. From that table the
//! factory derives parsing, default values, help text and the generated documentation. Values are
//! stored in a small dynamic [`Value`] type so that links between Data of different components
//! (`@loader.position`) and `src=` bulk links can copy values generically, as SOFA does.

use std::fmt::Write as _;

/// What kind of value a Data holds. The kind decides how text is parsed and printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataKind {
    Bool,
    /// Signed or unsigned integer scalar.
    Int,
    Real,
    /// Free text (names, paths that are not files).
    Str,
    /// A file name, resolved against the scene directory and the data path when used.
    FileName,
    /// An enumeration; the whole text must equal one of the names (or be an index, as SOFA allows).
    Options(&'static [&'static str]),
    /// A fixed-size vector of reals (`Vec3d` gravity, a box, …).
    Fixed(usize),
    /// A list of reals (`vector<Real>`).
    Reals,
    /// A list of tuples of `k` reals (`vector<Vec6>` boxes, springs `i j ks kd l`).
    RealTuples(usize),
    /// A list of indices with SOFA's range syntax (`0-9`, `0-9-2`).
    Indices,
    /// A list of tuples of `k` indices: edges (2), triangles (3), quads/tetrahedra (4), hexahedra (8).
    IndexTuples(usize),
    /// A list of coordinates of the component's template (Vec3: 3 reals, Rigid3: 7 reals).
    Coords,
    /// A list of derivatives of the component's template (Vec3: 3, Rigid3: 6).
    Derivs,
    /// One coordinate of the component's template.
    Coord,
    /// One derivative of the component's template.
    Deriv,
    /// A list of words (`tags`, plugin names).
    Strings,
    /// SOFA's `RGBAColor`: 4 reals (r g b a), read as SOFA reads a colour: 3 or 4 numbers, a
    /// name (`red`) or `#rgb[a]` / `#rrggbb[aa]`.
    Color,
    /// SOFA's `BoundingBox`: 6 reals, the min corner then the max corner.
    BoundingBox,
}

impl DataKind {
    /// Human-readable type name used by `settee doc`.
    pub fn type_name(&self) -> String {
        match self {
            DataKind::Bool => "bool".into(),
            DataKind::Int => "int".into(),
            DataKind::Real => "real".into(),
            DataKind::Str => "string".into(),
            DataKind::FileName => "file name".into(),
            DataKind::Options(o) => format!("one of {}", o.join("|")),
            DataKind::Fixed(n) => format!("vec{n}"),
            DataKind::Reals => "real list".into(),
            DataKind::RealTuples(k) => format!("list of {k}-real tuples"),
            DataKind::Indices => "index list".into(),
            DataKind::IndexTuples(k) => format!("list of {k}-index tuples"),
            DataKind::Coords => "coordinate list".into(),
            DataKind::Derivs => "derivative list".into(),
            DataKind::Coord => "coordinate".into(),
            DataKind::Deriv => "derivative".into(),
            DataKind::Strings => "word list".into(),
            DataKind::Color => "RGBA colour".into(),
            DataKind::BoundingBox => "bounding box".into(),
        }
    }

    /// The kind its values are stored as: a colour is a vector of 4 reals, a bounding box one
    /// of 6; every other kind is its own.
    pub fn storage(self) -> DataKind {
        match self {
            DataKind::Color => DataKind::Fixed(4),
            DataKind::BoundingBox => DataKind::Fixed(6),
            k => k,
        }
    }
}

/// SOFA's named colours (`RGBAColor`'s table).
const NAMED_COLORS: &[(&str, [f32; 4])] = &[
    ("white", [1.0, 1.0, 1.0, 1.0]),
    ("black", [0.0, 0.0, 0.0, 1.0]),
    ("red", [1.0, 0.0, 0.0, 1.0]),
    ("green", [0.0, 1.0, 0.0, 1.0]),
    ("blue", [0.0, 0.0, 1.0, 1.0]),
    ("cyan", [0.0, 1.0, 1.0, 1.0]),
    ("magenta", [1.0, 0.0, 1.0, 1.0]),
    ("yellow", [1.0, 1.0, 0.0, 1.0]),
    ("gray", [0.5, 0.5, 0.5, 1.0]),
    ("darkgray", [0.25, 0.25, 0.25, 1.0]),
    ("lightgray", [0.75, 0.75, 0.75, 1.0]),
    ("orange", [1.0, 0.5, 0.0, 1.0]),
    ("purple", [0.5, 0.0, 0.5, 1.0]),
    ("pink", [1.0, 0.0, 0.5, 1.0]),
    ("brown", [0.6, 0.3, 0.0, 1.0]),
    ("lime", [0.5, 1.0, 0.0, 1.0]),
    ("teal", [0.0, 0.5, 0.5, 1.0]),
    ("navy", [0.0, 0.0, 0.5, 1.0]),
    ("olive", [0.5, 0.5, 0.0, 1.0]),
    ("maroon", [0.5, 0.0, 0.0, 1.0]),
    ("silver", [0.75, 0.75, 0.75, 1.0]),
    ("gold", [1.0, 0.84, 0.0, 1.0]),
    ("azure", [0.0, 0.5, 1.0, 1.0]),
];

/// Reads a colour as SOFA's `RGBAColor` stream operator does: text starting with a digit is 3
/// numbers and an optional alpha; `#` starts 3, 4, 6 or 8 hex digits; anything else is a name.
/// SOFA's components are floats (`f32`), so a hex or named colour has their values.
pub fn parse_color(text: &str) -> Result<[f64; 4], String> {
    let t = text.trim();
    let bad = || format!("'{t}' is not a colour (3 or 4 numbers, a name such as 'red', or #rrggbb[aa])");
    let first = t.chars().next().ok_or_else(bad)?;
    if first.is_ascii_digit() {
        let ReadReals { values: v, stop, .. } = read_reals(t);
        if stop.is_some() || !(3..=4).contains(&v.len()) {
            return Err(bad());
        }
        return Ok([v[0], v[1], v[2], v.get(3).copied().unwrap_or(1.0)]);
    }
    if let Some(hex) = t.strip_prefix('#') {
        let digits: Option<Vec<u32>> = hex.chars().map(|c| c.to_digit(16)).collect();
        let d = digits.ok_or_else(bad)?;
        let c = match d.len() {
            // One digit per channel: #f00 is #ff0000.
            3 | 4 => d.iter().map(|&x| (x * 17) as f32 / 255.0).collect::<Vec<f32>>(),
            6 | 8 => d.chunks(2).map(|p| (p[0] * 16 + p[1]) as f32 / 255.0).collect(),
            _ => return Err(bad()),
        };
        return Ok([c[0] as f64, c[1] as f64, c[2] as f64, c.get(3).map_or(1.0, |&a| a as f64)]);
    }
    NAMED_COLORS.iter().find(|(n, _)| *n == t).map(|(_, c)| c.map(|x| x as f64)).ok_or_else(bad)
}

/// The static declaration of one Data field.
#[derive(Debug)]
pub struct DataDecl {
    pub name: &'static str,
    /// Other attribute names that set this same field (SOFA's Data aliases).
    pub aliases: &'static [&'static str],
    pub kind: DataKind,
    /// Default value, in SOFA's text syntax (parsed with the same parser as scene text).
    pub default: &'static str,
    pub help: &'static str,
}

/// An indexed Data family: Data `name1`, `name2`, … `nameN` for every member, where N is the
/// value of the integer Data `count` (SOFA's `vectorData`, e.g. MergeMeshes' `nbMeshes` giving
/// `position1..N`, `triangles1..N`). The factory reads the count attribute before the others, so
/// that `position2="@..."` finds its Data; [`DataSet::resize_families`] follows a later change.
#[derive(Debug)]
pub struct DataFamily {
    /// Name of the integer Data giving how many of each member exist.
    pub count: &'static str,
    /// The members, by base name (without index); each instance takes the member's kind,
    /// default and help.
    pub members: &'static [DataDecl],
}

/// A family count above this is refused (each instance is a declaration kept for the process).
pub const MAX_FAMILY_COUNT: usize = 4096;

/// The declaration of instance `index` (1-based) of family member `member`: interned, so that
/// every component of a class shares its instances' declarations.
pub fn family_member_decl(member: &'static DataDecl, index: usize) -> &'static DataDecl {
    type Interned = Vec<(usize, usize, &'static DataDecl)>;
    static DECLS: std::sync::Mutex<Interned> = std::sync::Mutex::new(Vec::new());
    let key = member as *const DataDecl as usize;
    let mut decls = DECLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, _, d)) = decls.iter().find(|(k, i, _)| *k == key && *i == index) {
        return d;
    }
    let d: &'static DataDecl = Box::leak(Box::new(DataDecl {
        name: Box::leak(format!("{}{index}", member.name).into_boxed_str()),
        aliases: &[],
        kind: member.kind,
        default: member.default,
        help: member.help,
    }));
    decls.push((key, index, d));
    d
}

/// Data several classes share (SOFA's base classes), declared with `#[data_group(...)]`; a class
/// includes the table with `inherit = [Group]`.
pub trait DataGroup {
    const TABLE: &'static [DataDecl];
}

/// Why a write by name was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataError {
    /// The component declares no Data of that name (nor alias).
    Unknown { name: String, known: Vec<&'static str> },
    /// The value is not of the Data's kind.
    WrongType { name: String, expected: String, given: &'static str },
    /// The text is not a value of the Data's kind.
    Invalid { name: String, message: String },
}

impl std::fmt::Display for DataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataError::Unknown { name, .. } => write!(f, "no Data '{name}'"),
            DataError::WrongType { name, expected, given } => write!(f, "Data '{name}' is a {expected}, not a {given}"),
            DataError::Invalid { name, message } => write!(f, "invalid value for Data '{name}': {message}"),
        }
    }
}

impl std::error::Error for DataError {}

/// Shorthand used by component declaration tables.
pub const fn decl(name: &'static str, kind: DataKind, default: &'static str, help: &'static str) -> DataDecl {
    DataDecl { name, aliases: &[], kind, default, help }
}

/// Same as [`decl`] with aliases.
pub const fn decl_alias(name: &'static str, aliases: &'static [&'static str], kind: DataKind, default: &'static str, help: &'static str) -> DataDecl {
    DataDecl { name, aliases, kind, default, help }
}

/// A Data value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Real(f64),
    Str(String),
    /// Reals grouped by `arity` (arity 1 for a plain list; a fixed vector is one group).
    Reals {
        arity: usize,
        v: Vec<f64>,
    },
    /// Indices grouped by `arity`.
    Indices {
        arity: usize,
        v: Vec<usize>,
    },
    Strings(Vec<String>),
}

impl Value {
    /// The name of the value's variant, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Real(_) => "real",
            Value::Str(_) => "string",
            Value::Reals { .. } => "real list",
            Value::Indices { .. } => "index list",
            Value::Strings(_) => "word list",
        }
    }

    /// Number of elements (groups) for list values, 1 for scalars.
    pub fn len(&self) -> usize {
        match self {
            Value::Reals { arity, v } => v.len() / (*arity).max(1),
            Value::Indices { arity, v } => v.len() / (*arity).max(1),
            Value::Strings(s) => s.len(),
            _ => 1,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The outcome of parsing text into a value: SOFA keeps what the stream could read, and warns.
#[derive(Debug)]
pub struct ParseOutcome {
    pub value: Value,
    /// A problem worth a message (the value holds what could be read).
    pub problem: Option<String>,
    /// The text is not a value of the kind (a token that is not a number, NaN/∞, an index range
    /// over the memory budget): an error unless loading is lenient. False for problems SOFA
    /// reads through (a fixed vector given fewer numbers, an option given by its index).
    pub invalid: bool,
}

impl ParseOutcome {
    fn ok(value: Value) -> ParseOutcome {
        ParseOutcome { value, problem: None, invalid: false }
    }
    fn warn(value: Value, problem: Option<String>) -> ParseOutcome {
        ParseOutcome { value, problem, invalid: false }
    }
    fn invalid(value: Value, problem: String) -> ParseOutcome {
        ParseOutcome { value, problem: Some(problem), invalid: true }
    }
}

/// Why a Data text was not read cleanly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataProblem {
    pub message: String,
    /// See [`ParseOutcome::invalid`].
    pub invalid: bool,
}

/// Arity of coordinates and derivatives for template-dependent kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TemplateArity {
    pub coord: usize,
    pub deriv: usize,
}

impl TemplateArity {
    pub const SCALAR: TemplateArity = TemplateArity { coord: 1, deriv: 1 };
}

/// Reads the longest numeric prefix of a token, as C++ stream extraction of a double does.
/// Returns the number and whether the whole token was consumed.
pub fn scan_real(token: &str) -> Option<(f64, bool)> {
    scan_real_len(token).map(|(v, n)| (v, n == token.len()))
}

/// [`scan_real`] giving the length of the prefix read, so a reader can go on after it.
fn scan_real_len(token: &str) -> Option<(f64, usize)> {
    let b = token.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    // inf / nan (compared as bytes: the token may hold any UTF-8 after the sign)
    let rest = &b[i..];
    for word in ["infinity", "inf", "nan"] {
        if rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word.as_bytes()) {
            let neg = token.starts_with('-');
            let v = if word == "nan" {
                f64::NAN
            } else if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            return Some((v, i + word.len()));
        }
    }
    let start_digits = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut ndigits = i - start_digits;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f0 = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        ndigits += i - f0;
    }
    if ndigits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let e0 = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > e0 {
            i = j;
        }
    }
    token[..i].parse::<f64>().ok().map(|v| (v, i))
}

/// Reads the longest integer prefix of a token.
pub fn scan_int(token: &str) -> Option<(i64, bool)> {
    let b = token.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let d0 = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == d0 {
        return None;
    }
    token[..i].parse::<i64>().ok().map(|v| (v, i == b.len()))
}

fn parse_bool(text: &str) -> Result<bool, String> {
    let t = text.trim_start();
    match t.chars().next() {
        Some('T') | Some('t') => Ok(true),
        Some('F') | Some('f') => Ok(false),
        Some(c) if c.is_ascii_digit() || c == '-' || c == '+' => {
            let tok = t.split_whitespace().next().unwrap_or("");
            match scan_int(tok) {
                Some((v, true)) => Ok(v != 0),
                _ => Err(format!("'{text}' is not a boolean (expected true/false, 1/0)")),
            }
        }
        _ => Err(format!("'{text}' is not a boolean (expected true/false, 1/0)")),
    }
}

/// Reals read as SOFA's stream extraction reads them, one number after the other: `values`, what
/// stopped the reading (`stop`: a token that is not a number, or a non-finite number, which no
/// Data accepts) and a note when a token held several numbers written without a space.
struct ReadReals {
    values: Vec<f64>,
    stop: Option<String>,
    note: Option<String>,
}

/// Reads reals until one fails. A token holding numbers written one after the other
/// (`0-0.707107`) gives each of them, since the stream starts each extraction where the last one
/// stopped; a numeric prefix followed by anything else stops the reading there.
fn read_reals(text: &str) -> ReadReals {
    let mut r = ReadReals { values: Vec::new(), stop: None, note: None };
    for tok in text.split_whitespace() {
        let (mut rest, first) = (tok, r.values.len());
        loop {
            match scan_real_len(rest) {
                Some((v, _)) if !v.is_finite() => {
                    r.stop = Some(non_finite(tok));
                    return r;
                }
                Some((v, n)) => {
                    r.values.push(v);
                    rest = &rest[n..];
                    if rest.is_empty() {
                        break;
                    }
                }
                None => {
                    r.stop = Some(not_a_number(tok));
                    return r;
                }
            }
        }
        if r.values.len() > first + 1 && r.note.is_none() {
            let read: Vec<String> = r.values[first..].iter().map(|v| format!("{v}")).collect();
            r.note = Some(format!(
                "'{tok}' is read as {} numbers ({}), as SOFA's stream reads numbers written without a space",
                read.len(),
                read.join(", ")
            ));
        }
    }
    r
}

fn not_a_number(tok: &str) -> String {
    format!("'{tok}' is not a number")
}

fn non_finite(tok: &str) -> String {
    format!("'{tok}' is not a finite number (NaN and infinities are refused)")
}

/// Parses an index token with SOFA's range syntax (`A`, `A-B`, `A-B-step`).
fn parse_index_token(tok: &str, out: &mut Vec<usize>) -> bool {
    let parts: Vec<&str> = tok.split('-').collect();
    let nums: Option<Vec<usize>> = parts.iter().map(|p| p.parse::<usize>().ok()).collect();
    match nums.as_deref() {
        Some([a]) => {
            out.push(*a);
            true
        }
        Some([a, b]) | Some([a, b, _]) => {
            let step = if parts.len() == 3 { nums.as_ref().unwrap()[2].max(1) } else { 1 };
            let count = (a.abs_diff(*b) / step) as u128 + 1;
            if crate::budget::check(out.len() as u128 + count, std::mem::size_of::<usize>() as u128, "index range").is_err() {
                return false;
            }
            if a <= b {
                let mut i = *a;
                while i <= *b {
                    out.push(i);
                    i += step;
                }
            } else {
                let mut i = *a as i64;
                while i >= *b as i64 {
                    out.push(i as usize);
                    i -= step as i64;
                }
            }
            true
        }
        _ => {
            out.push(0);
            false
        }
    }
}

/// Parses `text` as a value of `kind`, starting from `current` (SOFA reads into the current value,
/// so unread parts of fixed-size values keep their previous content).
pub fn parse_value(kind: DataKind, arity: TemplateArity, text: &str, current: &Value) -> ParseOutcome {
    let ok = ParseOutcome::ok;
    if kind == DataKind::Color && !text.trim().is_empty() {
        return match parse_color(text) {
            Ok(c) => ok(Value::Reals { arity: 4, v: c.to_vec() }),
            Err(e) => ParseOutcome::invalid(current.clone(), e),
        };
    }
    let kind = kind.storage();
    match kind {
        DataKind::Bool => match parse_bool(text) {
            Ok(b) => ok(Value::Bool(b)),
            Err(e) => ParseOutcome::invalid(current.clone(), e),
        },
        DataKind::Int => {
            let tok = text.split_whitespace().next().unwrap_or("");
            match scan_int(tok) {
                Some((v, true)) => ok(Value::Int(v)),
                // A real where an integer is expected (`1e4`, `2.5`): SOFA's stream reads the
                // integer prefix and stops there, without failing.
                Some((v, false)) => ParseOutcome::warn(
                    Value::Int(v),
                    Some(format!("'{}' is not an integer: read as {v}, as SOFA reads its integer prefix", text.trim())),
                ),
                None if text.trim().is_empty() => ok(current.clone()),
                None => ParseOutcome::invalid(current.clone(), format!("'{}' is not an integer", text.trim())),
            }
        }
        DataKind::Real => {
            let tok = text.split_whitespace().next().unwrap_or("");
            match scan_real(tok) {
                Some((v, _)) if !v.is_finite() => ParseOutcome::invalid(current.clone(), non_finite(tok)),
                Some((v, true)) => ok(Value::Real(v)),
                // SOFA's stream extraction reads the numeric prefix and stops without failing
                // (`tolerance="10-3"` is 10): the value is read, with a warning.
                Some((v, false)) => ParseOutcome::warn(
                    Value::Real(v),
                    Some(format!("'{}' is not a number: read as {v}, as SOFA reads its numeric prefix", text.trim())),
                ),
                None if text.trim().is_empty() => ok(current.clone()),
                None => ParseOutcome::invalid(current.clone(), not_a_number(text.trim())),
            }
        }
        DataKind::Str | DataKind::FileName => ok(Value::Str(text.to_string())),
        DataKind::Options(names) => {
            let t = text.trim();
            if names.contains(&t) {
                return ok(Value::Str(t.to_string()));
            }
            if let Some((i, true)) = scan_int(t) {
                if i >= 0 && (i as usize) < names.len() {
                    return ParseOutcome::warn(
                        Value::Str(names[i as usize].to_string()),
                        Some(format!("option given by index {i}; prefer its name '{}'", names[i as usize])),
                    );
                }
            }
            ParseOutcome::invalid(current.clone(), format!("'{t}' is not one of: {}", names.join(", ")))
        }
        DataKind::Fixed(_) | DataKind::Coord | DataKind::Deriv => {
            let n = match kind {
                DataKind::Coord => arity.coord,
                DataKind::Deriv => arity.deriv,
                DataKind::Fixed(n) => n,
                _ => unreachable!(),
            };
            let read = read_reals(&matrix_text(n, text));
            let vals = read.values;
            let mut v = match current {
                Value::Reals { v, .. } if v.len() == n => v.clone(),
                _ => vec![0.0; n],
            };
            if let Some(b) = read.stop {
                return ParseOutcome::invalid(Value::Reals { arity: n, v }, b);
            }
            for (slot, x) in v.iter_mut().zip(vals.iter()) {
                *slot = *x;
            }
            // Fewer numbers than the vector holds: SOFA keeps what it read and the rest.
            let problem =
                (vals.len() < n && !text.trim().is_empty()).then(|| format!("expected {n} numbers, read {} from '{}'", vals.len(), text.trim()));
            ParseOutcome::warn(Value::Reals { arity: n, v }, problem.or(read.note))
        }
        DataKind::Reals | DataKind::RealTuples(_) | DataKind::Coords | DataKind::Derivs => {
            let k = match kind {
                DataKind::RealTuples(k) => k,
                DataKind::Coords => arity.coord,
                DataKind::Derivs => arity.deriv,
                _ => 1,
            };
            let read = read_reals(text);
            if let Some(b) = read.stop {
                return ParseOutcome::invalid(current.clone(), b);
            }
            let mut vals = read.values;
            // A trailing incomplete element is dropped silently, as SOFA's vector reader does.
            vals.truncate(vals.len() / k * k);
            ParseOutcome::warn(Value::Reals { arity: k, v: vals }, read.note)
        }
        DataKind::Indices | DataKind::IndexTuples(_) => {
            let k = if let DataKind::IndexTuples(k) = kind { k } else { 1 };
            let mut v = Vec::new();
            let mut bad = None;
            for tok in text.split_whitespace() {
                if !parse_index_token(tok, &mut v) && bad.is_none() {
                    bad = Some(tok.to_string());
                }
            }
            if let Some(t) = bad {
                let why = if t.contains('-') && t.split('-').all(|p| p.parse::<usize>().is_ok()) {
                    format!("index range '{t}' is larger than the memory budget")
                } else {
                    format!("'{t}' is not an index (expected a non-negative integer or a range A-B)")
                };
                return ParseOutcome::invalid(current.clone(), why);
            }
            v.truncate(v.len() / k * k);
            ok(Value::Indices { arity: k, v })
        }
        DataKind::Strings => {
            let t = text.trim();
            let words = if t.starts_with('[') && t.ends_with(']') && t.len() >= 2 {
                t[1..t.len() - 1].split(',').map(|w| w.trim().trim_matches('"').to_string()).filter(|w| !w.is_empty()).collect()
            } else {
                t.split_whitespace().map(str::to_string).collect()
            };
            ok(Value::Strings(words))
        }
        DataKind::Color | DataKind::BoundingBox => unreachable!("stored as fixed vectors"),
    }
}

/// SOFA's 3×3 matrices also read `[a b c,d e f,g h i]`: a leading `[` opens the rows, commas
/// separate them and `]` closes them. Other fixed vectors take the text as it is.
fn matrix_text(n: usize, text: &str) -> std::borrow::Cow<'_, str> {
    if n == 9 && text.trim_start().starts_with('[') {
        text.replace(['[', ']', ','], " ").into()
    } else {
        text.into()
    }
}

/// Prints a real the way the C++ default stream does (6 significant digits, `%g` style).
pub fn format_real(x: f64) -> String {
    crate::gformat::format_g6(x)
}

/// Prints a value in SOFA's text syntax.
pub fn print_value(v: &Value) -> String {
    match v {
        Value::Bool(b) => (if *b { "1" } else { "0" }).into(),
        Value::Int(i) => i.to_string(),
        Value::Real(r) => format_real(*r),
        Value::Str(s) => s.clone(),
        Value::Reals { v, .. } => {
            let mut s = String::new();
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                s.push_str(&format_real(*x));
            }
            s
        }
        Value::Indices { v, .. } => {
            let mut s = String::new();
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                let _ = write!(s, "{x}");
            }
            s
        }
        Value::Strings(w) => w.join(" "),
    }
}

/// Converts a value copied through a Data link into the kind of the destination, following
/// SOFA's generic copy: numbers are cast, containers follow the parent's element count and copy
/// `min(k_child, k_parent)` scalars per element; strings go through text.
pub fn convert_value(src: &Value, kind: DataKind, arity: TemplateArity, current: &Value) -> Option<Value> {
    if let Value::Str(s) = src {
        return Some(parse_value(kind, arity, s, current).value);
    }
    let kind = kind.storage();
    let dst_group = |k: usize| match kind {
        DataKind::Coords | DataKind::Coord => arity.coord,
        DataKind::Derivs | DataKind::Deriv => arity.deriv,
        DataKind::RealTuples(n) | DataKind::IndexTuples(n) | DataKind::Fixed(n) => n,
        _ => k,
    };
    match (src, kind) {
        (Value::Str(s), _) => Some(parse_value(kind, arity, s, current).value),
        (_, DataKind::Str | DataKind::FileName | DataKind::Options(_)) => Some(parse_value(kind, arity, &print_value(src), current).value),
        (Value::Bool(b), DataKind::Bool) => Some(Value::Bool(*b)),
        (Value::Int(i), DataKind::Bool) => Some(Value::Bool(*i != 0)),
        (Value::Int(i), DataKind::Int) => Some(Value::Int(*i)),
        (Value::Real(r), DataKind::Int) => Some(Value::Int(*r as i64)),
        (Value::Int(i), DataKind::Real) => Some(Value::Real(*i as f64)),
        (Value::Real(r), DataKind::Real) => Some(Value::Real(*r)),
        (Value::Bool(b), DataKind::Int) => Some(Value::Int(*b as i64)),
        (Value::Reals { arity: ka, v }, _) => {
            let scalars: Vec<f64> = v.clone();
            let mut out = regroup_reals(&scalars, *ka, kind, dst_group(*ka), current);
            // SOFA resizes the destination with default elements before copying: a Rigid3
            // coordinate (7 reals, 6 derivative reals) defaults to the identity orientation.
            if let (Some(Value::Reals { arity: 7, v: d }), DataKind::Coords, 6, true) = (&mut out, kind, arity.deriv, *ka < 7) {
                for e in d.chunks_exact_mut(7) {
                    e[6] = 1.0;
                }
            }
            out
        }
        (Value::Indices { arity: ka, v }, _) => {
            let scalars: Vec<f64> = v.iter().map(|&i| i as f64).collect();
            regroup_reals(&scalars, *ka, kind, dst_group(*ka), current)
        }
        (Value::Strings(w), DataKind::Strings) => Some(Value::Strings(w.clone())),
        _ => None,
    }
}

fn regroup_reals(src: &[f64], ka: usize, kind: DataKind, kd: usize, current: &Value) -> Option<Value> {
    let ka = ka.max(1);
    let kd = kd.max(1);
    let n_el = src.len() / ka;
    let copy = ka.min(kd);
    match kind {
        DataKind::Real => src.first().map(|&x| Value::Real(x)),
        DataKind::Int => src.first().map(|&x| Value::Int(x as i64)),
        DataKind::Fixed(_) | DataKind::Coord | DataKind::Deriv => {
            let mut v = match current {
                Value::Reals { v, .. } if v.len() == kd => v.clone(),
                _ => vec![0.0; kd],
            };
            for (d, s) in v.iter_mut().zip(src.iter()) {
                *d = *s;
            }
            Some(Value::Reals { arity: kd, v })
        }
        DataKind::Reals | DataKind::RealTuples(_) | DataKind::Coords | DataKind::Derivs => {
            let mut v = vec![0.0; n_el * kd];
            for e in 0..n_el {
                v[e * kd..e * kd + copy].copy_from_slice(&src[e * ka..e * ka + copy]);
            }
            Some(Value::Reals { arity: kd, v })
        }
        DataKind::Indices | DataKind::IndexTuples(_) => {
            let mut v = vec![0usize; n_el * kd];
            for e in 0..n_el {
                for c in 0..copy {
                    v[e * kd + c] = src[e * ka + c].max(0.0) as usize;
                }
            }
            Some(Value::Indices { arity: kd, v })
        }
        _ => None,
    }
}

/// What holds a Data: a component, or a node (the Data a script added to it with `addData`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataHolder {
    Component(crate::ComponentId),
    Node(crate::NodeId),
}

/// Where a Data link points: field `field` of `holder`'s Data set. A Data and its parent may
/// be held by components or nodes in any combination, as SOFA's Data of any `Base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataLinkTarget {
    pub holder: DataHolder,
    pub field: usize,
}

impl DataLinkTarget {
    pub fn component(component: crate::ComponentId, field: usize) -> DataLinkTarget {
        DataLinkTarget { holder: DataHolder::Component(component), field }
    }
    pub fn node(node: crate::NodeId, field: usize) -> DataLinkTarget {
        DataLinkTarget { holder: DataHolder::Node(node), field }
    }
    /// The component holding the Data, if a component does.
    pub fn owner_component(&self) -> Option<crate::ComponentId> {
        match self.holder {
            DataHolder::Component(c) => Some(c),
            DataHolder::Node(_) => None,
        }
    }
}

/// One Data field of a component instance.
#[derive(Clone, Debug)]
pub struct DataField {
    pub decl: &'static DataDecl,
    pub value: Value,
    /// True when the scene gave a value (or a link) for this field.
    pub is_set: bool,
    /// The parent Data when this field is linked (`@path.data` or `src=`).
    pub link: Option<DataLinkTarget>,
    /// The link text as written, for messages.
    pub link_text: Option<String>,
    /// Bumped at every change of `value`: readers and linked Data compare it with what they
    /// last saw.
    pub version: u64,
    /// The parent's version when the value was last pulled through `link`.
    pub seen: Option<u64>,
    /// SOFA's `FLAG_PERSISTENT` (on by default): the value is worth saving. Settee saves no
    /// scene, so only scripts read it.
    pub persistent: bool,
    /// SOFA's `FLAG_READONLY` (off by default): a hint to editors only; as in SOFA, it does not
    /// refuse writes (`read`, `.value =` still change the value).
    pub read_only: bool,
}

impl DataField {
    /// A field of `decl` holding `value`, not set by the scene, unlinked, with SOFA's default
    /// flags.
    pub fn new(decl: &'static DataDecl, value: Value) -> DataField {
        DataField { decl, value, is_set: false, link: None, link_text: None, version: 0, seen: None, persistent: true, read_only: false }
    }
}

/// The Data fields of one component, in declaration order.
#[derive(Clone, Debug, Default)]
pub struct DataSet {
    pub fields: Vec<DataField>,
    pub arity: Option<TemplateArity>,
    /// The class's indexed Data families, whose instances are in `fields`.
    pub families: &'static [DataFamily],
}

impl DataSet {
    /// Builds the fields of `decls` with their default values.
    pub fn from_decls(decls: &[&'static [DataDecl]], arity: TemplateArity) -> DataSet {
        let mut fields = Vec::new();
        for table in decls {
            for d in table.iter() {
                let init = default_value(d.kind, arity);
                let value = parse_value(d.kind, arity, d.default, &init).value;
                fields.push(DataField::new(d, value));
            }
        }
        DataSet { fields, arity: Some(arity), families: &[] }
    }

    /// Gives every indexed family as many instances of each member as its count Data says:
    /// missing instances are added with their defaults, extra ones removed (SOFA's
    /// `vectorData::resize`). A negative count counts as 0; one above [`MAX_FAMILY_COUNT`] is
    /// refused and returned, and that family is left as it was.
    pub fn resize_families(&mut self) -> Result<(), (&'static str, i64)> {
        let arity = self.arity();
        let mut refused = Ok(());
        for fam in self.families {
            let n = match self.field(fam.count).map(|f| &f.value) {
                Some(Value::Int(n)) => *n,
                Some(Value::Real(r)) => *r as i64,
                _ => 0,
            };
            if n > MAX_FAMILY_COUNT as i64 {
                refused = Err((fam.count, n));
                continue;
            }
            let n = n.max(0) as usize;
            for member in fam.members {
                let base = member.name;
                // An instance is a field whose declaration is the interned one of its index.
                let instance = |f: &DataField| {
                    let k = f.decl.name.strip_prefix(base)?.parse::<usize>().ok().filter(|&k| k >= 1)?;
                    std::ptr::eq(f.decl, family_member_decl(member, k)).then_some(k)
                };
                self.fields.retain(|f| instance(f).is_none_or(|k| k <= n));
                for k in 1..=n {
                    if !self.fields.iter().any(|f| instance(f) == Some(k)) {
                        let d = family_member_decl(member, k);
                        let init = default_value(d.kind, arity);
                        let value = parse_value(d.kind, arity, d.default, &init).value;
                        self.fields.push(DataField::new(d, value));
                    }
                }
            }
        }
        refused
    }

    pub fn arity(&self) -> TemplateArity {
        self.arity.unwrap_or(TemplateArity::SCALAR)
    }

    /// Index of the field named `name` or having `name` as alias.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.decl.name == name).or_else(|| self.fields.iter().position(|f| f.decl.aliases.contains(&name)))
    }

    pub fn field(&self, name: &str) -> Option<&DataField> {
        self.index_of(name).map(|i| &self.fields[i])
    }

    pub fn is_set(&self, name: &str) -> bool {
        self.field(name).is_some_and(|f| f.is_set)
    }

    /// Assigns text to a field; returns the problem if the text did not parse cleanly. A text
    /// that is not a value of the field's kind ([`DataProblem::invalid`]) leaves the field as it
    /// was.
    pub fn set_text(&mut self, index: usize, text: &str) -> Option<DataProblem> {
        let arity = self.arity();
        let f = &mut self.fields[index];
        let out = parse_value(f.decl.kind, arity, text, &f.value);
        if !out.invalid {
            f.value = out.value;
            f.is_set = true;
            f.version += 1;
        }
        out.problem.map(|message| DataProblem { message, invalid: out.invalid })
    }

    /// Replaces the value of field `index` (readers linked to it see the change). The caller
    /// has checked that the value fits the field's kind.
    pub(crate) fn replace(&mut self, index: usize, value: Value) {
        let f = &mut self.fields[index];
        if f.value != value {
            f.value = value;
            f.version += 1;
        }
    }

    /// The one checked write by name, for generic code (scene overrides, tools, bindings): an
    /// unknown name or a value of another kind is an error, and nothing changes. Components
    /// write their own Data through the typed references of their declaration
    /// ([`DataSet::put`]).
    pub fn write_value(&mut self, name: &str, value: Value) -> Result<(), DataError> {
        let i = self.index_of(name).ok_or_else(|| self.unknown(name))?;
        let kind = self.fields[i].decl.kind;
        let value = fit_value(kind, self.arity(), value).map_err(|given| DataError::WrongType {
            name: name.to_string(),
            expected: kind.type_name(),
            given,
        })?;
        self.replace(i, value);
        self.fields[i].is_set = true;
        Ok(())
    }

    /// Writes a field by name from text in SOFA's syntax: an unknown name or a text that is not
    /// a value of the field's kind is an error; a text SOFA reads through with a warning
    /// (fewer numbers than a vector holds) gives that warning.
    pub fn write_text(&mut self, name: &str, text: &str) -> Result<Option<DataProblem>, DataError> {
        let i = self.index_of(name).ok_or_else(|| self.unknown(name))?;
        match self.set_text(i, text) {
            Some(p) if p.invalid => Err(DataError::Invalid { name: name.to_string(), message: p.message }),
            other => Ok(other),
        }
    }

    fn unknown(&self, name: &str) -> DataError {
        DataError::Unknown { name: name.to_string(), known: self.fields.iter().map(|f| f.decl.name).collect() }
    }

    fn value(&self, name: &str) -> &Value {
        match self.field(name) {
            Some(f) => &f.value,
            None => {
                panic!("component reads undeclared Data '{name}' (a bug in its declaration table)")
            }
        }
    }

    pub fn real(&self, name: &str) -> f64 {
        match self.value(name) {
            Value::Real(r) => *r,
            Value::Int(i) => *i as f64,
            Value::Reals { v, .. } => v.first().copied().unwrap_or(0.0),
            _ => 0.0,
        }
    }

    pub fn int(&self, name: &str) -> i64 {
        match self.value(name) {
            Value::Int(i) => *i,
            Value::Real(r) => *r as i64,
            Value::Bool(b) => *b as i64,
            _ => 0,
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        match self.value(name) {
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            _ => false,
        }
    }

    pub fn str(&self, name: &str) -> &str {
        match self.value(name) {
            Value::Str(s) => s,
            _ => "",
        }
    }

    /// The flat reals of a real-valued field (lists, fixed vectors, coordinates).
    pub fn reals(&self, name: &str) -> &[f64] {
        match self.value(name) {
            Value::Reals { v, .. } => v,
            _ => &[],
        }
    }

    pub fn indices(&self, name: &str) -> &[usize] {
        match self.value(name) {
            Value::Indices { v, .. } => v,
            _ => &[],
        }
    }

    pub fn strings(&self, name: &str) -> &[String] {
        match self.value(name) {
            Value::Strings(v) => v,
            _ => &[],
        }
    }

    #[allow(clippy::disallowed_methods)] // the name-based getters build on one another
    pub fn vec3(&self, name: &str) -> [f64; 3] {
        let r = self.reals(name);
        [r.first().copied().unwrap_or(0.0), r.get(1).copied().unwrap_or(0.0), r.get(2).copied().unwrap_or(0.0)]
    }
}

/// `value` as a value of `kind`: integers widen to reals, reals with an integer value narrow to
/// integers, a scalar becomes a one-element list; anything else of another family is refused
/// (the error names what was given).
pub fn fit_value(kind: DataKind, arity: TemplateArity, value: Value) -> Result<Value, &'static str> {
    let kind = kind.storage();
    let given = value.type_name();
    let group = |k: DataKind| match k {
        DataKind::Fixed(n) => n,
        DataKind::RealTuples(n) | DataKind::IndexTuples(n) => n,
        DataKind::Coords | DataKind::Coord => arity.coord,
        DataKind::Derivs | DataKind::Deriv => arity.deriv,
        _ => 1,
    };
    let out = match (kind, value) {
        (DataKind::Bool, Value::Bool(b)) => Value::Bool(b),
        (DataKind::Bool, Value::Int(i)) => Value::Bool(i != 0),
        (DataKind::Int, Value::Int(i)) => Value::Int(i),
        (DataKind::Int, Value::Real(r)) if r.fract() == 0.0 && r.is_finite() => Value::Int(r as i64),
        (DataKind::Real, Value::Real(r)) if r.is_finite() => Value::Real(r),
        (DataKind::Real, Value::Int(i)) => Value::Real(i as f64),
        (DataKind::Str | DataKind::FileName, Value::Str(t)) => Value::Str(t),
        (DataKind::Options(names), Value::Str(t)) if names.contains(&t.as_str()) => Value::Str(t),
        (DataKind::Strings, Value::Strings(w)) => Value::Strings(w),
        (
            k @ (DataKind::Fixed(_)
            | DataKind::Reals
            | DataKind::RealTuples(_)
            | DataKind::Coords
            | DataKind::Derivs
            | DataKind::Coord
            | DataKind::Deriv),
            Value::Reals { v, .. },
        ) if v.iter().all(|x| x.is_finite()) => {
            let g = group(k).max(1);
            let fixed = matches!(k, DataKind::Fixed(_) | DataKind::Coord | DataKind::Deriv);
            if v.len() % g != 0 || (fixed && v.len() != g) {
                return Err(given);
            }
            Value::Reals { arity: g, v }
        }
        (k @ (DataKind::Indices | DataKind::IndexTuples(_)), Value::Indices { v, .. }) => {
            let g = group(k).max(1);
            if v.len() % g != 0 {
                return Err(given);
            }
            Value::Indices { arity: g, v }
        }
        _ => return Err(given),
    };
    Ok(out)
}

/// The empty value of a kind, before its default text is parsed.
pub fn default_value(kind: DataKind, arity: TemplateArity) -> Value {
    match kind.storage() {
        DataKind::Bool => Value::Bool(false),
        DataKind::Int => Value::Int(0),
        DataKind::Real => Value::Real(0.0),
        DataKind::Str | DataKind::FileName | DataKind::Options(_) => Value::Str(String::new()),
        DataKind::Fixed(n) => Value::Reals { arity: n, v: vec![0.0; n] },
        DataKind::Coord => Value::Reals { arity: arity.coord, v: vec![0.0; arity.coord] },
        DataKind::Deriv => Value::Reals { arity: arity.deriv, v: vec![0.0; arity.deriv] },
        DataKind::Reals => Value::Reals { arity: 1, v: vec![] },
        DataKind::RealTuples(k) => Value::Reals { arity: k, v: vec![] },
        DataKind::Coords => Value::Reals { arity: arity.coord, v: vec![] },
        DataKind::Derivs => Value::Reals { arity: arity.deriv, v: vec![] },
        DataKind::Indices => Value::Indices { arity: 1, v: vec![] },
        DataKind::IndexTuples(k) => Value::Indices { arity: k, v: vec![] },
        DataKind::Strings => Value::Strings(vec![]),
        DataKind::Color | DataKind::BoundingBox => unreachable!("stored as fixed vectors"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    const A3: TemplateArity = TemplateArity { coord: 3, deriv: 3 };

    /// Every form SOFA's `RGBAColor` reads: 4 numbers, 3 (opaque), a name, short and long hex
    /// with and without alpha (hex and named values are floats, as SOFA's components are).
    #[test]
    fn colours_read_as_sofa_reads_them() {
        let c = |t: &str| parse_color(t).unwrap();
        assert_eq!(c("0.42 0.1 0.9 0.5"), [0.42, 0.1, 0.9, 0.5]);
        assert_eq!(c(" 1 0 0"), [1.0, 0.0, 0.0, 1.0]);
        assert_eq!(c("gold"), [1.0, 0.84f32 as f64, 0.0, 1.0]);
        assert_eq!(c("#ff8000"), [1.0, (128.0f32 / 255.0) as f64, 0.0, 1.0]);
        assert_eq!(c("#f008"), [1.0, 0.0, 0.0, (136.0f32 / 255.0) as f64]);
        assert_eq!(c("#00ff0080"), [0.0, 1.0, 0.0, (128.0f32 / 255.0) as f64]);
        for bad in ["", "reddish", "#12", "#1234567", "#gg0000", "1 2", "1 2 3 4 5", "-1 0 0 1"] {
            assert!(parse_color(bad).is_err(), "'{bad}' is refused");
        }
        // A Data of kind Color keeps its value when the text is not a colour.
        let cur = Value::Reals { arity: 4, v: vec![1.0; 4] };
        let out = parse_value(DataKind::Color, A3, "reddish", &cur);
        assert!(out.invalid && out.problem.is_some());
        assert_eq!(out.value, cur);
        assert_eq!(parse_value(DataKind::Color, A3, "blue", &cur).value, Value::Reals { arity: 4, v: vec![0.0, 0.0, 1.0, 1.0] });
    }

    /// Linking Vec3 positions into a Rigid3 state: new elements start at SOFA's default
    /// coordinate, the identity orientation (quaternion w = 1).
    #[test]
    fn vec3_coords_linked_into_rigid3_get_identity_orientations() {
        let rigid = TemplateArity { coord: 7, deriv: 6 };
        let src = Value::Reals { arity: 3, v: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0] };
        let out = convert_value(&src, DataKind::Coords, rigid, &Value::Reals { arity: 7, v: vec![] }).unwrap();
        assert_eq!(out, Value::Reals { arity: 7, v: vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 4.0, 5.0, 6.0, 0.0, 0.0, 0.0, 1.0] });
        // Full Rigid3 sources are copied as they are.
        let full = Value::Reals { arity: 7, v: vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.6, 0.8] };
        assert_eq!(convert_value(&full, DataKind::Coords, rigid, &Value::Reals { arity: 7, v: vec![] }).unwrap(), full);
    }

    #[test]
    fn bools_follow_sofa_rules() {
        let cur = Value::Bool(false);
        assert_eq!(parse_value(DataKind::Bool, A3, "true", &cur).value, Value::Bool(true));
        assert_eq!(parse_value(DataKind::Bool, A3, "False", &cur).value, Value::Bool(false));
        assert_eq!(parse_value(DataKind::Bool, A3, "1", &cur).value, Value::Bool(true));
        assert_eq!(parse_value(DataKind::Bool, A3, "0", &cur).value, Value::Bool(false));
        assert!(parse_value(DataKind::Bool, A3, "1.5", &cur).problem.is_some());
        assert!(parse_value(DataKind::Bool, A3, "yes", &cur).problem.is_some());
    }

    #[test]
    fn partial_vec_keeps_previous_components() {
        let cur = Value::Reals { arity: 3, v: vec![1.0, 2.0, 3.0] };
        let out = parse_value(DataKind::Fixed(3), A3, "0 -9.81", &cur);
        assert_eq!(out.value, Value::Reals { arity: 3, v: vec![0.0, -9.81, 3.0] });
        assert!(out.problem.is_some());
    }

    #[test]
    fn trailing_incomplete_coordinate_is_dropped() {
        let out = parse_value(DataKind::Coords, A3, "1 2 3 4 5 6 7", &Value::Bool(false));
        assert_eq!(out.value, Value::Reals { arity: 3, v: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0] });
        assert!(out.problem.is_none());
    }

    #[test]
    fn index_ranges() {
        let out = parse_value(DataKind::Indices, A3, "0 3-5 10-6-2", &Value::Bool(false));
        assert_eq!(out.value, Value::Indices { arity: 1, v: vec![0, 3, 4, 5, 10, 8, 6] });
        let bad = parse_value(DataKind::Indices, A3, "1 x 2", &Value::Bool(false));
        assert_eq!(bad.value, Value::Bool(false));
        assert!(bad.problem.is_some() && bad.invalid);
        // A range over the memory budget is refused before it is expanded.
        let huge = parse_value(DataKind::Indices, A3, "0-99999999999999", &Value::Bool(false));
        assert!(huge.invalid && huge.problem.unwrap().contains("memory budget"));
    }

    #[test]
    fn reals_read_numeric_prefix() {
        assert_eq!(scan_real("0.5abc"), Some((0.5, false)));
        assert_eq!(scan_real("1e-9"), Some((1e-9, true)));
        assert_eq!(scan_real(".5"), Some((0.5, true)));
        assert_eq!(scan_real("abc"), None);
        let prefix = parse_value(DataKind::Real, A3, " 0.5abc", &Value::Real(1.0));
        assert_eq!(prefix.value, Value::Real(0.5));
        // SOFA reads `10-3` as 10 without failing: a warning, not an invalid value.
        let ten = parse_value(DataKind::Real, A3, "10-3", &Value::Real(1.0));
        assert_eq!(ten.value, Value::Real(10.0));
        assert!(!ten.invalid && ten.problem.as_ref().is_some_and(|p| p.contains("read as 10")), "{ten:?}");
    }

    /// Non-ASCII text where a number is expected is an invalid value, not a panic on a char
    /// boundary (`<Node dt="éè"/>`, `rotation="0 90° 0"`).
    #[test]
    fn non_ascii_numbers_are_invalid_not_panics() {
        assert_eq!(scan_real("éè"), None);
        assert_eq!(scan_real("-é"), None);
        assert_eq!(scan_real("9°"), Some((9.0, false)));
        let r = parse_value(DataKind::Real, A3, "éè", &Value::Real(0.01));
        assert!(r.invalid && r.value == Value::Real(0.01));
        let v = parse_value(DataKind::Fixed(3), A3, "0 90° 0", &Value::Reals { arity: 3, v: vec![0.0; 3] });
        assert!(v.invalid, "{v:?}");
        assert!(v.problem.unwrap().contains("90°"));
    }

    /// NaN and infinities are refused in every numeric kind.
    #[test]
    fn non_finite_numbers_are_invalid() {
        for (kind, text) in [
            (DataKind::Real, "nan"),
            (DataKind::Real, "-inf"),
            (DataKind::Fixed(3), "nan 0 0"),
            (DataKind::Coords, "0 0 0 1 Infinity 0"),
            (DataKind::Reals, "NaN"),
        ] {
            let out = parse_value(kind, A3, text, &default_value(kind, A3));
            assert!(out.invalid, "{kind:?} {text}");
            assert!(out.problem.unwrap().contains("finite"), "{kind:?} {text}");
        }
        // Partial fixed vectors are read as SOFA reads them, with a warning only.
        let p = parse_value(DataKind::Fixed(4), A3, "1 0 0", &default_value(DataKind::Fixed(4), A3));
        assert!(!p.invalid && p.problem.is_some());
    }

    /// A 3×3 matrix in SOFA's bracket syntax (AffineMovementProjectiveConstraint's `rotation`)
    /// reads row by row; a 3-vector with brackets stays a read failure.
    #[test]
    fn matrices_read_the_bracket_syntax() {
        let m = parse_value(DataKind::Fixed(9), A3, "[0.7 -0.7 0,0.7 0.7 0,0 0 1]", &default_value(DataKind::Fixed(9), A3));
        assert!(!m.invalid && m.problem.is_none(), "{:?}", m.problem);
        assert_eq!(m.value, Value::Reals { arity: 9, v: vec![0.7, -0.7, 0.0, 0.7, 0.7, 0.0, 0.0, 0.0, 1.0] });
        assert!(parse_value(DataKind::Fixed(3), A3, "[1 2 3]", &default_value(DataKind::Fixed(3), A3)).invalid);
    }

    /// Integers as SOFA's stream reads them: the integer prefix, with a warning (`1e4` is 1 in
    /// SOFA, which is worth knowing: `iterations="1e4"` runs one iteration).
    #[test]
    fn integers_read_their_integer_prefix_with_a_warning() {
        for (text, v) in [("1.5", 1), ("1e4", 1), ("-3x", -3)] {
            let i = parse_value(DataKind::Int, A3, text, &Value::Int(3));
            assert_eq!(i.value, Value::Int(v), "{text}");
            assert!(!i.invalid && i.problem.as_ref().is_some_and(|p| p.contains(&format!("read as {v}"))), "{text}: {i:?}");
        }
        assert!(parse_value(DataKind::Int, A3, "x", &Value::Int(3)).invalid);
    }

    /// Numbers written without a space between them are read one after the other, as SOFA's
    /// stream extraction does (`0-0.75` is 0 and -0.75), with a warning; a number followed
    /// by anything else still stops the reading.
    #[test]
    fn numbers_written_together_are_read_one_after_the_other() {
        let c = parse_value(DataKind::Coords, A3, "0 0-0.75 0.5  1 1 1", &Value::Bool(false));
        assert_eq!(c.value, Value::Reals { arity: 3, v: vec![0.0, 0.0, -0.75, 0.5, 1.0, 1.0] });
        assert!(!c.invalid && c.problem.as_ref().is_some_and(|p| p.contains("2 numbers (0, -0.75)")), "{c:?}");
        let f = parse_value(DataKind::Fixed(3), A3, "1-2+3", &Value::Reals { arity: 3, v: vec![0.0; 3] });
        assert_eq!(f.value, Value::Reals { arity: 3, v: vec![1.0, -2.0, 3.0] });
        assert!(!f.invalid && f.problem.is_some());
        let bad = parse_value(DataKind::Reals, A3, "1 2x 3", &Value::Bool(false));
        assert!(bad.invalid && bad.problem.unwrap().contains("'2x'"));
        let clean = parse_value(DataKind::Reals, A3, "1 -2 3e2", &Value::Bool(false));
        assert_eq!(clean.value, Value::Reals { arity: 1, v: vec![1.0, -2.0, 300.0] });
        assert!(clean.problem.is_none());
    }

    #[test]
    fn options_accept_names_and_indices() {
        const M: &[&str] = &["large", "polar", "small"];
        let cur = Value::Str("large".into());
        assert_eq!(parse_value(DataKind::Options(M), A3, "polar", &cur).value, Value::Str("polar".into()));
        assert_eq!(parse_value(DataKind::Options(M), A3, "2", &cur).value, Value::Str("small".into()));
        let bad = parse_value(DataKind::Options(M), A3, "huge", &cur);
        assert_eq!(bad.value, cur);
        assert!(bad.problem.is_some());
    }

    #[test]
    fn format_matches_c_default_stream() {
        assert_eq!(format_real(0.0), "0");
        assert_eq!(format_real(0.99), "0.99");
        assert_eq!(format_real(19.998), "19.998");
        assert_eq!(format_real(1e-5), "1e-05");
        assert_eq!(format_real(1234567.0), "1.23457e+06");
        assert_eq!(format_real(-0.000787169), "-0.000787169");
        assert_eq!(format_real(100000.0), "100000");
    }

    #[test]
    fn link_conversion_regroups_elements() {
        // Rigid3 coordinates (7 reals) copied into a Vec3 coordinate list keep the centers.
        let src = Value::Reals { arity: 7, v: vec![1., 2., 3., 0., 0., 0., 1., 4., 5., 6., 0., 0., 0., 1.] };
        let out = convert_value(&src, DataKind::Coords, A3, &Value::Bool(false)).unwrap();
        assert_eq!(out, Value::Reals { arity: 3, v: vec![1., 2., 3., 4., 5., 6.] });
        let idx = Value::Indices { arity: 1, v: vec![3, 4] };
        let out = convert_value(&idx, DataKind::Indices, A3, &Value::Bool(false)).unwrap();
        assert_eq!(out, idx);
    }

    proptest! {
        /// An index list printed in SOFA's syntax parses back to itself.
        #[test]
        fn index_lists_round_trip(v in prop::collection::vec(0usize..100000, 0..50)) {
            let val = Value::Indices { arity: 1, v: v.clone() };
            let back = parse_value(DataKind::Indices, A3, &print_value(&val), &Value::Bool(false));
            prop_assert_eq!(back.value, val);
            prop_assert!(back.problem.is_none());
        }

        /// A range `a-b` expands to every index between a and b, in the written direction.
        #[test]
        fn ranges_expand(a in 0usize..500, b in 0usize..500) {
            let out = parse_value(DataKind::Indices, A3, &format!("{a}-{b}"), &Value::Bool(false)).value;
            let expected: Vec<usize> = if a <= b { (a..=b).collect() } else { (b..=a).rev().collect() };
            prop_assert_eq!(out, Value::Indices { arity: 1, v: expected });
        }

        /// Reals printed with 17 significant digits parse back exactly.
        #[test]
        fn reals_round_trip_exactly(v in prop::collection::vec(-1e12f64..1e12, 0..30)) {
            let text: Vec<String> = v.iter().map(|x| format!("{x:.17e}")).collect();
            let out = parse_value(DataKind::Reals, A3, &text.join(" "), &Value::Bool(false)).value;
            prop_assert_eq!(out, Value::Reals { arity: 1, v });
        }
    }
}

#[cfg(test)]
mod family_tests {
    use super::*;

    static TABLE: &[DataDecl] = &[decl("nbInputs", DataKind::Int, "2", "")];
    static FAMILIES: &[DataFamily] = &[DataFamily { count: "nbInputs", members: &[decl("input", DataKind::Reals, "7", "input i")] }];

    /// The instances follow the count: added with the member's default, removed beyond it, and
    /// the kept ones keep their values; a count beyond the limit is refused and changes nothing.
    #[test]
    fn instances_follow_the_count() {
        let mut d = DataSet::from_decls(&[TABLE], TemplateArity::SCALAR);
        d.families = FAMILIES;
        d.resize_families().unwrap();
        let names = |d: &DataSet| d.fields.iter().map(|f| f.decl.name).collect::<Vec<_>>();
        assert_eq!(names(&d), ["nbInputs", "input1", "input2"]);
        assert_eq!(d.field("input2").unwrap().value, Value::Reals { arity: 1, v: vec![7.0] });
        d.write_text("input1", "1 2").unwrap();
        d.write_text("nbInputs", "3").unwrap();
        d.resize_families().unwrap();
        assert_eq!(names(&d), ["nbInputs", "input1", "input2", "input3"]);
        d.write_text("nbInputs", "1").unwrap();
        d.resize_families().unwrap();
        assert_eq!(names(&d), ["nbInputs", "input1"]);
        assert_eq!(d.field("input1").unwrap().value, Value::Reals { arity: 1, v: vec![1.0, 2.0] });
        assert!(std::ptr::eq(d.field("input1").unwrap().decl, family_member_decl(&FAMILIES[0].members[0], 1)), "declarations are interned");
        d.write_text("nbInputs", "100000").unwrap();
        assert_eq!(d.resize_families(), Err(("nbInputs", 100000)));
        assert_eq!(names(&d), ["nbInputs", "input1"]);
    }
}
