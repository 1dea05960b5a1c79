//! Low level XML reading: text -> generic element tree with source positions.
//!
//! Mirrors what SOFA gets from tinyxml2: elements with attributes (entity
//! decoded, `\r\n`/`\r` normalised to `\n`), comments / text / PIs /
//! declarations ignored, only the first top-level element kept.

use std::path::PathBuf;
use std::sync::Arc;

use quick_xml::events::attributes::AttrError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::diagnostic::{Diagnostic, SourcePos};
use crate::error::SceneError;

/// Maximum element nesting accepted (guards against stack exhaustion in the
/// recursive stages that follow on adversarial input).
pub(crate) const MAX_DEPTH: usize = 256;

#[derive(Debug, Clone)]
pub(crate) struct RawAttr {
    pub name: String,
    pub value: String,
    pub pos: SourcePos,
}

#[derive(Debug, Clone)]
pub(crate) struct RawElement {
    pub tag: String,
    pub attrs: Vec<RawAttr>,
    pub children: Vec<RawElement>,
    pub pos: SourcePos,
}

impl RawElement {
    pub fn attr(&self, name: &str) -> Option<&RawAttr> {
        self.attrs.iter().find(|a| a.name == name)
    }
}

/// Byte offset -> (line, column) mapping. Line breaks: `\n`, `\r\n`, `\r`.
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let b = text.as_bytes();
        let mut starts = vec![0];
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\n' => starts.push(i + 1),
                b'\r' => {
                    if b.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    starts.push(i + 1);
                }
                _ => {}
            }
            i += 1;
        }
        LineIndex { text, starts }
    }

    /// 1-based (line, column); column counts characters.
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.starts[line];
        let mut end = offset;
        while end > start && !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.text[start..end].chars().count();
        (clamp_u32(line + 1), clamp_u32(col + 1))
    }
}

fn clamp_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Decode an attribute value like tinyxml2: `\r\n` and lone `\r` become
/// `\n`; the predefined entities and numeric character references are
/// replaced; anything else (unknown entity, bare `&`, invalid reference) is
/// kept verbatim. No whitespace normalisation beyond that (tinyxml2 keeps
/// literal tabs/newlines).
pub fn decode_attribute_value(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(i) = rest.find(['&', '\r']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after_cr) = tail.strip_prefix('\r') {
            out.push('\n');
            rest = after_cr.strip_prefix('\n').unwrap_or(after_cr);
            continue;
        }
        // tail starts with '&'
        if let Some(semi) = tail[1..].find(';').map(|p| p + 1) {
            let ent = &tail[1..semi];
            let decoded = match ent {
                "lt" => Some('<'),
                "gt" => Some('>'),
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => {
                    if let Some(hex) = ent.strip_prefix("#x").or_else(|| ent.strip_prefix("#X")) {
                        u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
                    } else if let Some(dec) = ent.strip_prefix('#') {
                        dec.parse::<u32>().ok().and_then(char::from_u32)
                    } else {
                        None
                    }
                }
            };
            if let Some(c) = decoded {
                out.push(c);
                rest = &tail[semi + 1..];
                continue;
            }
        }
        out.push('&');
        rest = &tail[1..];
    }
    out.push_str(rest);
    out
}

/// Offset of `sub` inside `base` if `sub` is a sub-slice of it.
fn offset_in(base: &str, sub: &[u8]) -> Option<usize> {
    let b = base.as_ptr() as usize;
    let s = sub.as_ptr() as usize;
    if s >= b && s + sub.len() <= b + base.len() {
        Some(s - b)
    } else {
        None
    }
}

#[derive(Debug)]
pub(crate) struct XmlDoc {
    pub root: RawElement,
    pub diagnostics: Vec<Diagnostic>,
}

/// Parse `text` (the content of `file`) into a raw element tree.
pub(crate) fn parse_xml(text: &str, file: &Arc<PathBuf>) -> Result<XmlDoc, SceneError> {
    let index = LineIndex::new(text);
    let pos_at = |off: usize| {
        let (line, column) = index.line_col(off);
        SourcePos { file: file.clone(), line, column }
    };

    let mut reader = Reader::from_str(text);
    {
        let cfg = reader.config_mut();
        cfg.trim_text(false);
        cfg.expand_empty_elements = false;
        cfg.check_end_names = true;
        cfg.check_comments = false;
        cfg.allow_unmatched_ends = false;
    }

    let mut diagnostics = Vec::new();
    let mut stack: Vec<RawElement> = Vec::new();
    let mut root: Option<RawElement> = None;

    loop {
        let before = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let event = match reader.read_event() {
            Ok(ev) => ev,
            Err(e) => {
                let off = usize::try_from(reader.error_position()).unwrap_or(usize::MAX);
                return Err(SceneError::Xml { pos: pos_at(off), message: e.to_string() });
            }
        };
        match event {
            Event::Start(e) => {
                let el = make_element(text, &e, before, &pos_at)?;
                if stack.len() >= MAX_DEPTH {
                    return Err(SceneError::Xml { pos: el.pos, message: format!("elements nested deeper than {MAX_DEPTH} levels") });
                }
                stack.push(el);
            }
            Event::Empty(e) => {
                let el = make_element(text, &e, before, &pos_at)?;
                attach(&mut stack, &mut root, el, &mut diagnostics);
            }
            Event::End(_) => {
                // quick-xml has checked that the name matches.
                if let Some(el) = stack.pop() {
                    attach(&mut stack, &mut root, el, &mut diagnostics);
                }
            }
            Event::Eof => {
                if let Some(open) = stack.last() {
                    return Err(SceneError::Xml {
                        pos: pos_at(text.len()),
                        message: format!("unexpected end of input: expected `</{}>` to close the element opened at {}", open.tag, open.pos),
                    });
                }
                break;
            }
            // Text, CDATA, comments, declaration, PIs, DOCTYPE: ignored.
            _ => {}
        }
    }

    match root {
        Some(root) => Ok(XmlDoc { root, diagnostics }),
        None => Err(SceneError::EmptyDocument { file: file.as_ref().clone() }),
    }
}

fn attach(stack: &mut [RawElement], root: &mut Option<RawElement>, el: RawElement, diagnostics: &mut Vec<Diagnostic>) {
    if let Some(parent) = stack.last_mut() {
        parent.children.push(el);
    } else if root.is_none() {
        *root = Some(el);
    } else {
        diagnostics.push(
            Diagnostic::warning(format!("ignoring top-level element <{}>: only the first root element of a document is used", el.tag))
                .at(Some(el.pos.clone())),
        );
    }
}

fn make_element(text: &str, e: &BytesStart<'_>, before: usize, pos_at: &dyn Fn(usize) -> SourcePos) -> Result<RawElement, SceneError> {
    let tag = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let pos = pos_at(before);
    let buf: &[u8] = e;
    let buf_off = offset_in(text, buf);
    let mut attrs: Vec<RawAttr> = Vec::new();
    for a in e.attributes().with_checks(true) {
        let a = match a {
            Ok(a) => a,
            Err(err) => {
                let rel = match err {
                    AttrError::ExpectedEq(p)
                    | AttrError::ExpectedValue(p)
                    | AttrError::UnquotedValue(p)
                    | AttrError::ExpectedQuote(p, _)
                    | AttrError::Duplicated(p, _) => Some(p),
                };
                let pos = match (buf_off, rel) {
                    (Some(b), Some(r)) => pos_at(b + r),
                    _ => pos.clone(),
                };
                return Err(SceneError::Xml { pos, message: format!("in <{tag}>: {err}") });
            }
        };
        let key = a.key.as_ref();
        let name = String::from_utf8_lossy(key).into_owned();
        let apos = offset_in(text, key).map(pos_at).unwrap_or_else(|| pos.clone());
        let raw_value = String::from_utf8_lossy(&a.value);
        let value = decode_attribute_value(&raw_value);
        attrs.push(RawAttr { name, value, pos: apos });
    }
    Ok(RawElement { tag, attrs, children: Vec::new(), pos })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> Arc<PathBuf> {
        Arc::new(PathBuf::from("t.scn"))
    }

    #[test]
    fn decode() {
        assert_eq!(decode_attribute_value("a &lt;b&gt; &amp; &quot;&apos;"), "a <b> & \"'");
        assert_eq!(decode_attribute_value("1 2&#x0A;&#x09;3&#10;4"), "1 2\n\t3\n4");
        assert_eq!(decode_attribute_value("x\r\ny\rz"), "x\ny\nz");
        assert_eq!(decode_attribute_value("&#x0D;"), "\r");
        assert_eq!(decode_attribute_value("a & b &foo; &#xZZ; &"), "a & b &foo; &#xZZ; &");
        assert_eq!(decode_attribute_value("é&#233;"), "éé");
    }

    #[test]
    fn line_col() {
        let t = "ab\ncé\r\nx\ry";
        let idx = LineIndex::new(t);
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(3), (2, 1));
        assert_eq!(idx.line_col(4), (2, 2));
        assert_eq!(idx.line_col(6), (2, 3)); // after 'é' (2 bytes)
        assert_eq!(idx.line_col(t.find('x').unwrap()), (3, 1));
        assert_eq!(idx.line_col(t.find('y').unwrap()), (4, 1));
        assert_eq!(idx.line_col(1000), (4, 2));
    }

    #[test]
    fn tree_and_positions() {
        let t = "<?xml version=\"1.0\"?>\n<!-- c -->\n<Node name=\"root\">\n  <A x=\"1\"/>\n  <B>text<C  y='2'/></B>\n</Node>\n";
        let doc = parse_xml(t, &file()).unwrap();
        let r = doc.root;
        assert_eq!(r.tag, "Node");
        assert_eq!((r.pos.line, r.pos.column), (3, 1));
        assert_eq!(r.children.len(), 2);
        let a = &r.children[0];
        assert_eq!((a.pos.line, a.pos.column), (4, 3));
        assert_eq!((a.attrs[0].pos.line, a.attrs[0].pos.column), (4, 6));
        let c = &r.children[1].children[0];
        assert_eq!(c.tag, "C");
        assert_eq!((c.pos.line, c.pos.column), (5, 10));
        assert_eq!(c.attrs[0].value, "2");
        assert_eq!((c.attrs[0].pos.line, c.attrs[0].pos.column), (5, 14));
    }

    #[test]
    fn errors() {
        let e = parse_xml("<Node>\n  <A>\n</Node>", &file()).unwrap_err();
        let s = e.to_string();
        assert!(s.contains("t.scn:3:"), "{s}");
        assert!(s.contains("expected `</A>`"), "{s}");
        let e = parse_xml("<Node>\n  <A x=\"1\" x=\"2\"/></Node>", &file()).unwrap_err();
        assert!(e.to_string().starts_with("t.scn:2:12"), "{e}");
        let e = parse_xml("<Node>\n<A/>", &file()).unwrap_err();
        assert!(e.to_string().contains("expected `</Node>`"), "{e}");
        let e = parse_xml("<Node attr=\"x></Node>", &file()).unwrap_err();
        assert!(e.to_string().starts_with("t.scn:1:1"), "{e}");
        assert!(matches!(parse_xml("<!-- only -->", &file()), Err(SceneError::EmptyDocument { .. })));
        let deep = "<a>".repeat(MAX_DEPTH + 5);
        assert!(parse_xml(&deep, &file()).is_err());
    }
}
