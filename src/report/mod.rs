//! Everything that turns run records into something to read: the
//! terminal summary, cyclictest's histogram file, and (one file per
//! format) the exporters. Reads records only; never measures.

pub mod csv;
pub mod histfile;
pub mod summary;
