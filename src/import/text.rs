//! Text as people paste it, made readable for every reader: output pasted
//! into markdown (indented by four spaces, inside ``` or ~~~ fences,
//! quoted with `> `) is de-indented line by line, keeping every line in
//! its place so messages name the line of the file. Also: a file holding
//! several runs cut into its parts (each part is the whole text with the
//! other parts' lines blanked, so line numbers stay), and the `--lenient`
//! reading that skips lines a reader refuses. Pure: no files, no system.

use super::ImportError;
use std::borrow::Cow;

/// `text` with, on every line, leading blanks and `>` quote markers
/// removed and fence lines (```…, ~~~…) blanked. JSON (text starting
/// with `{`) and text needing none of this are returned as they are, so
/// the content id of a file imported before stays the same.
pub fn dedent(text: &str) -> Cow<'_, str> {
    if text.trim_start().starts_with('{') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let clean = dedent_line(body);
        changed |= clean.len() != body.len();
        out.push_str(clean);
        out.push_str(end);
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// One line without its indentation, quote markers or fence.
fn dedent_line(line: &str) -> &str {
    let mut l = line.trim_start();
    while let Some(rest) = l.strip_prefix('>') {
        l = rest.trim_start();
    }
    if l.starts_with("```") || l.starts_with("~~~") {
        return "";
    }
    l
}

/// The text of part `from..to` (0-based line indices, `to` exclusive):
/// every other line is blanked, line ends kept.
pub fn part(text: &str, from: usize, to: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if (from..to).contains(&i) {
            out.push_str(line);
        } else if line.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// `text` with 1-based line `no` blanked.
pub fn blank_line(text: &str, no: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i + 1 == no {
            if line.ends_with('\n') {
                out.push('\n');
            }
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The text of 1-based line `no`.
pub fn line_text(text: &str, no: usize) -> &str {
    text.lines()
        .nth(no.saturating_sub(1))
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .unwrap_or("")
}

/// A line `--lenient` skipped: where, what it held, why it was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub line: usize,
    pub text: String,
    pub why: String,
}

impl Skipped {
    /// How the record's warnings and stderr list it.
    pub fn note(&self) -> String {
        format!(
            "line {} skipped (--lenient): '{}': {}",
            self.line, self.text, self.why
        )
    }
}

/// The most lines `--lenient` skips in one file: beyond that the file is
/// not a damaged paste but something else, and is refused.
pub const MAX_SKIPPED: usize = 100;

/// Read `text` with `parse`; when `lenient`, a refusal that names a line
/// blanks that line and reads again (up to [`MAX_SKIPPED`] lines), and
/// the lines skipped are returned with the result.
pub fn read_leniently<T>(
    text: &str,
    lenient: bool,
    mut parse: impl FnMut(&str) -> Result<T, ImportError>,
) -> Result<(T, Vec<Skipped>), ImportError> {
    let mut skipped = Vec::new();
    let mut current: Cow<str> = Cow::Borrowed(text);
    loop {
        let e = match parse(&current) {
            Ok(v) => return Ok((v, skipped)),
            Err(e) => e,
        };
        let Some(no) = e.line.filter(|_| lenient) else {
            return Err(e);
        };
        let line = line_text(&current, no);
        if line.trim().is_empty() || skipped.len() >= MAX_SKIPPED {
            return Err(ImportError {
                line: e.line,
                message: if line.trim().is_empty() {
                    e.message
                } else {
                    format!(
                        "{} (--lenient skips at most {MAX_SKIPPED} lines: this is more than a damaged paste)",
                        e.message
                    )
                },
            });
        }
        skipped.push(Skipped {
            line: no,
            text: super::excerpt(line),
            why: crate::units::shorten(&e.message, 100),
        });
        current = Cow::Owned(blank_line(&current, no));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indentation_fences_and_quotes_go_and_lines_stay_in_place() {
        let md = "Results:\n\n```\n    # Histogram\n> > 000001 000002\n~~~\n";
        let d = dedent(md);
        assert_eq!(d, "Results:\n\n\n# Histogram\n000001 000002\n\n");
        assert_eq!(d.lines().count(), md.lines().count());
        assert!(matches!(dedent("# Histogram\n"), Cow::Borrowed(_)));
        let json = "{\n  \"a\": 1\n}\n";
        assert!(matches!(dedent(json), Cow::Borrowed(_)));
    }

    #[test]
    fn parts_and_blanked_lines_keep_numbering() {
        let t = "a\nb\nc\nd\n";
        assert_eq!(part(t, 1, 3), "\nb\nc\n\n");
        assert_eq!(blank_line(t, 2), "a\n\nc\nd\n");
        assert_eq!(line_text(t, 3), "c");
    }

    #[test]
    fn lenient_reading_skips_the_lines_named_and_strict_refuses() {
        let parse = |t: &str| match t.lines().position(|l| l == "bad") {
            Some(i) => Err(ImportError::at(i + 1, "not good")),
            None => Ok(t.lines().filter(|l| !l.is_empty()).count()),
        };
        let text = "x\nbad\ny\nbad\n";
        let e = read_leniently(text, false, parse).unwrap_err();
        assert_eq!(e.line, Some(2));
        let (n, skipped) = read_leniently(text, true, parse).unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            skipped.iter().map(|s| s.line).collect::<Vec<_>>(),
            vec![2, 4]
        );
        assert!(skipped[0].note().contains("line 2 skipped"));
        let many = "bad\n".repeat(MAX_SKIPPED + 1);
        let e = read_leniently(&many, true, parse).unwrap_err();
        assert!(e.message.contains("at most"), "{e}");
        let whole = |_: &str| -> Result<(), ImportError> { Err(ImportError::whole("no")) };
        assert!(read_leniently("a\n", true, whole).is_err());
    }
}
