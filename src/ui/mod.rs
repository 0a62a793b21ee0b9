//! What the user sees while a run goes: the live display and signal
//! handling of the control thread. Never runs on a measuring thread.

pub mod live;
