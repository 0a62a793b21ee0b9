//! Page furniture shared by every output (terminal text, HTML, SVG):
//! numbers with their units, plain-text tables, escaping for markup and
//! for terminals (`terminal::for_terminal`: no control character from a
//! file or a board reaches a terminal raw). A
//! leaf: it imports nothing of rtscope, so anything may use it. Pure
//! functions; no clock is read here (an output depends only on its data,
//! so it can be reproduced).

pub mod escape;
pub mod num;
pub mod rank;
pub mod table;
pub mod terminal;

pub use terminal::{for_terminal, for_terminal_lines};

/// `e` and its causes, joined by ": " (as `{:#}` prints an
/// `anyhow::Error`): for text kept or shown without
/// anyhow (a study's store, a server's error).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}
