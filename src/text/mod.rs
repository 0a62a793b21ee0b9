//! Page furniture shared by every output (terminal text, HTML, SVG):
//! numbers with their units, plain-text tables, escaping for markup. A
//! leaf: it imports nothing of rtscope, so anything may use it. Pure
//! functions; no clock is read here (an output depends only on its data,
//! so it can be reproduced).

pub mod escape;
pub mod num;
pub mod table;
