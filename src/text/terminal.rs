//! Text from elsewhere (an imported file, a board, an older store) made
//! safe for a terminal: no control character or bidirectional override
//! reaches it raw, so a label, host name or kernel release cannot clear
//! the screen, set the window title, move the cursor or reorder what is
//! shown. Each such character is written as a visible escape instead
//! (`\x1b`, `\u{202e}`), and the rest of the text is kept as it is.

use std::borrow::Cow;

/// True for a character that must not reach a terminal raw: C0 controls
/// (ESC, BEL, CR, newline, tab, ...), DEL, C1 controls (U+0080–U+009F,
/// among them CSI U+009B), and the bidirectional marks, embeddings,
/// overrides and isolates (U+061C, U+200E–U+200F, U+202A–U+202E,
/// U+2066–U+2069).
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// `c` as a visible escape: `\x1b` for an ASCII control, `\u{9b}` for
/// the others.
fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write;
    if c.is_ascii() {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

/// `s` for one place on a line of terminal output (a table cell, a
/// `key: value`): every control character, newline and tab included, and
/// every bidirectional control written as a visible escape. Borrowed when
/// there is nothing to escape.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    escape(s, |_| false)
}

/// A whole block of terminal output (lines of a view): as
/// [`for_terminal`], but its newlines stay line breaks and its tabs stay.
/// The last guard of a view whose pieces come from elsewhere.
pub fn for_terminal_lines(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\n' || c == '\t')
}

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| needs_escape(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c) && !keep(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_become_visible() {
        let label = "a\u{1b}]0;pwned\u{7}b\u{1b}[2Jc";
        assert_eq!(for_terminal(label), "a\\x1b]0;pwned\\x07b\\x1b[2Jc");
        assert_eq!(for_terminal("x\u{9b}31my"), "x\\u{9b}31my");
        assert_eq!(for_terminal("x\u{85}y\u{7f}"), "x\\u{85}y\\x7f");
        assert_eq!(
            for_terminal("abc\u{202e}fed\u{2066}\u{200f}"),
            "abc\\u{202e}fed\\u{2066}\\u{200f}"
        );
        assert_eq!(for_terminal("two\nlines\r\t"), "two\\x0alines\\x0d\\x09");
        assert_eq!(for_terminal_lines("two\nlines\r\t"), "two\nlines\\x0d\t");
    }

    #[test]
    fn plain_text_is_kept_borrowed() {
        for s in [
            "",
            "PREEMPT_RT, idle",
            "6.1.0-rt-amd64",
            "Größe µs ≤ 50 日本",
        ] {
            assert!(matches!(for_terminal(s), Cow::Borrowed(_)), "{s}");
            assert_eq!(for_terminal(s), s);
        }
    }

    #[test]
    fn no_control_is_left_in_any_text() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        for out in [for_terminal(&all), for_terminal_lines(&all)] {
            assert!(
                !out.chars()
                    .any(|c| needs_escape(c) && c != '\n' && c != '\t'),
                "{out}"
            );
            assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'));
            assert!(!out.contains('\u{9b}'));
        }
    }
}
