//! Reading text files the way SOFA's readers do (C++ stream extraction `>>` and `getline`), with
//! line tracking so that every problem can be reported as `file:line: what was expected`.

use std::path::Path;

/// Reads a whole file as text (invalid UTF-8 sequences are replaced, as the readers only look at
/// ASCII keywords and numbers).
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = settee_core::budget::read_file(path).map_err(|e| format!("{}: cannot read the file: {e}", path.display()))?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// `file:line: message`.
pub fn at(path: &Path, line: usize, message: impl std::fmt::Display) -> String {
    format!("{}:{line}: {message}", path.display())
}

/// True when `tok` looks like a number a C++ stream would read entirely (digits, sign, point,
/// exponent; no `inf`/`nan` words, which `>>` rejects).
fn numeric_chars(tok: &str) -> bool {
    !tok.is_empty() && tok.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
}

/// Parses a whole token as a double.
pub fn parse_f64(tok: &str) -> Option<f64> {
    if !numeric_chars(tok) {
        return None;
    }
    tok.parse::<f64>().ok()
}

/// Parses a whole token as a single-precision float (rounded as `strtof` does).
pub fn parse_f32(tok: &str) -> Option<f32> {
    if !numeric_chars(tok) {
        return None;
    }
    tok.parse::<f32>().ok()
}

/// Parses a whole token as an integer.
pub fn parse_i64(tok: &str) -> Option<i64> {
    tok.parse::<i64>().ok()
}

/// A cursor over a text supporting both whitespace-separated extraction (`>>`) and line reads
/// (`getline`), tracking the current line number.
pub struct Cursor<'a> {
    pub path: &'a Path,
    text: &'a str,
    pos: usize,
    line: usize,
    /// Line of the last token or line read (where an unexpected end of file is reported).
    last: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(path: &'a Path, text: &'a str) -> Cursor<'a> {
        Cursor { path, text, pos: 0, line: 1, last: 1 }
    }

    /// The line to blame for an unexpected end of file: the last one read.
    pub fn eof_line(&self) -> usize {
        self.last
    }

    /// The line the cursor is on (1-based).
    pub fn line(&self) -> usize {
        self.line
    }

    /// The cursor state, to come back to it with [`Cursor::restore`] (`tellg`/`seekg`).
    pub fn save(&self) -> (usize, usize, usize) {
        (self.pos, self.line, self.last)
    }

    pub fn restore(&mut self, s: (usize, usize, usize)) {
        (self.pos, self.line, self.last) = s;
    }

    pub fn at_eof(&self) -> bool {
        self.pos >= self.text.len()
    }

    /// An error message positioned at `line`.
    pub fn err(&self, line: usize, message: impl std::fmt::Display) -> String {
        at(self.path, line, message)
    }

    fn skip_ws(&mut self) {
        let b = self.text.as_bytes();
        while self.pos < b.len() && b[self.pos].is_ascii_whitespace() {
            if b[self.pos] == b'\n' {
                self.line += 1;
            }
            self.pos += 1;
        }
    }

    /// Next whitespace-separated token and its line (`>>` into a string).
    pub fn token(&mut self) -> Option<(&'a str, usize)> {
        self.skip_ws();
        let b = self.text.as_bytes();
        if self.pos >= b.len() {
            return None;
        }
        let start = self.pos;
        while self.pos < b.len() && !b[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        self.last = self.line;
        Some((&self.text[start..self.pos], self.line))
    }

    /// Next token, or an error naming what was expected.
    pub fn expect_token(&mut self, what: &str) -> Result<(&'a str, usize), String> {
        self.token().ok_or_else(|| self.err(self.last, format!("unexpected end of file: expected {what}")))
    }

    /// Next token read as an integer.
    pub fn int(&mut self, what: &str) -> Result<i64, String> {
        let (tok, line) = self.expect_token(what)?;
        parse_i64(tok).ok_or_else(|| self.err(line, format!("expected {what} (an integer), found '{tok}'")))
    }

    /// Next token read as a non-negative integer (a count).
    pub fn count(&mut self, what: &str) -> Result<usize, String> {
        let (tok, line) = self.expect_token(what)?;
        match parse_i64(tok) {
            Some(v) if v >= 0 => Ok(v as usize),
            _ => Err(self.err(line, format!("expected {what} (a non-negative integer), found '{tok}'"))),
        }
    }

    /// Next token read as a real.
    pub fn real(&mut self, what: &str) -> Result<f64, String> {
        let (tok, line) = self.expect_token(what)?;
        parse_f64(tok).ok_or_else(|| self.err(line, format!("expected {what} (a number), found '{tok}'")))
    }

    /// The rest of the current line (`getline`): from the cursor to the end of the line, which is
    /// consumed. Returns the text (without `\n`) and its line; `None` at the end of the file.
    pub fn getline(&mut self) -> Option<(&'a str, usize)> {
        if self.pos >= self.text.len() {
            return None;
        }
        let line = self.line;
        self.last = line;
        let rest = &self.text[self.pos..];
        match rest.find('\n') {
            Some(i) => {
                self.pos += i + 1;
                self.line += 1;
                Some((&rest[..i], line))
            }
            None => {
                self.pos = self.text.len();
                Some((rest, line))
            }
        }
    }

    /// Like [`Cursor::getline`], with an error naming what was expected at the end of the file.
    pub fn expect_line(&mut self, what: &str) -> Result<(&'a str, usize), String> {
        self.getline().ok_or_else(|| self.err(self.last, format!("unexpected end of file: expected {what}")))
    }
}

/// Whitespace-separated fields of one line, with typed accessors reporting the line.
pub struct Fields<'a> {
    path: &'a Path,
    line: usize,
    it: std::str::SplitAsciiWhitespace<'a>,
}

impl<'a> Fields<'a> {
    pub fn new(path: &'a Path, text: &'a str, line: usize) -> Fields<'a> {
        Fields { path, line, it: text.split_ascii_whitespace() }
    }

    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<&'a str> {
        self.it.next()
    }

    pub fn expect(&mut self, what: &str) -> Result<&'a str, String> {
        self.it.next().ok_or_else(|| at(self.path, self.line, format!("line ends early: expected {what}")))
    }

    pub fn int(&mut self, what: &str) -> Result<i64, String> {
        let t = self.expect(what)?;
        parse_i64(t).ok_or_else(|| at(self.path, self.line, format!("expected {what} (an integer), found '{t}'")))
    }

    pub fn count(&mut self, what: &str) -> Result<usize, String> {
        let t = self.expect(what)?;
        match parse_i64(t) {
            Some(v) if v >= 0 => Ok(v as usize),
            _ => Err(at(self.path, self.line, format!("expected {what} (a non-negative integer), found '{t}'"))),
        }
    }

    pub fn real(&mut self, what: &str) -> Result<f64, String> {
        let t = self.expect(what)?;
        parse_f64(t).ok_or_else(|| at(self.path, self.line, format!("expected {what} (a number), found '{t}'")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_lines_interleave_like_streams() {
        let p = Path::new("t.txt");
        let text = "3 1.5\n  rest of line\nlast";
        let mut c = Cursor::new(p, text);
        assert_eq!(c.int("n").unwrap(), 3);
        assert_eq!(c.real("x").unwrap(), 1.5);
        // getline after >> returns the (empty) rest of the first line
        assert_eq!(c.getline(), Some(("", 1)));
        assert_eq!(c.getline(), Some(("  rest of line", 2)));
        assert_eq!(c.token(), Some(("last", 3)));
        assert!(c.token().is_none());
        let e = c.int("a count").unwrap_err();
        assert!(e.starts_with("t.txt:3: unexpected end of file"), "{e}");
        let mut c = Cursor::new(p, "1 2\n\n");
        c.int("a").unwrap();
        c.int("b").unwrap();
        assert!(c.int("c").unwrap_err().starts_with("t.txt:1: unexpected end of file"));
    }

    #[test]
    fn numbers_are_strict() {
        assert_eq!(parse_f64("1e-3"), Some(1e-3));
        assert_eq!(parse_f64(".5"), Some(0.5));
        assert_eq!(parse_f64("inf"), None);
        assert_eq!(parse_f64("1.5abc"), None);
        assert_eq!(parse_f32("25.0303438"), Some(25.030_344_f32));
    }
}
