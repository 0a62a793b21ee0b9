//! Ctrl-C for commands that only read (`runs`, `report`) while they
//! wait for something that may never come: a PostgreSQL server that
//! accepts connections and never answers. Outside such a wait SIGINT and
//! SIGTERM keep their default action (the process ends at once, as
//! without this module); during one, the first asks the wait to end (the
//! command then exits 2 saying why) and a second exits at once.
//!
//! Registered with `signal-hook` beside nothing else: a command that
//! handles these signals itself (`measure`, `monitor`) passes its
//! own stop flag instead and never installs this.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a second signal during a wait prints before it exits.
const SECOND_SIGNAL: &str = "rtscope: second signal: exiting at once\n";

/// The flags of the handlers: `stop` is set by a signal during a wait;
/// `outside` is true while no wait is under way (the default action then).
pub struct WaitSignals {
    stop: Arc<AtomicBool>,
    outside: Arc<AtomicBool>,
}

impl WaitSignals {
    /// Register the handlers of SIGINT and SIGTERM: once per process.
    pub fn install() -> std::io::Result<WaitSignals> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let stop = Arc::new(AtomicBool::new(false));
        let outside = Arc::new(AtomicBool::new(true));
        for sig in [SIGINT, SIGTERM] {
            // In the order they run: a second signal during a wait exits,
            // any signal outside one takes the default action, and the
            // first during one sets the flag.
            crate::sys::signal::exit_when_set(sig, stop.clone(), SECOND_SIGNAL, 2)?;
            signal_hook::flag::register_conditional_default(sig, outside.clone())?;
            signal_hook::flag::register(sig, stop.clone())?;
        }
        Ok(WaitSignals { stop, outside })
    }

    /// Run `f`, which may wait long, with the flag a signal sets meanwhile
    /// (one set before is kept: a wait that starts after it ends at once).
    pub fn during<R>(&self, f: impl FnOnce(&AtomicBool) -> R) -> R {
        self.outside.store(false, Ordering::SeqCst);
        let r = f(&self.stop);
        self.outside.store(true, Ordering::SeqCst);
        r
    }
}
