//! What the user sees while a run goes: the live display and signal
//! handling of the control thread; Ctrl-C during the long waits of
//! commands that only read (`interrupt`). Never runs on a measuring
//! thread.

pub mod interrupt;
pub mod live;

/// One line on standard error; a closed or full stderr is no reason to
/// stop (eprintln! would panic).
pub fn say_line(line: &str) {
    use std::io::Write as _;
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "{line}");
}
