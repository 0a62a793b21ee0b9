//! What the load supervisor tells rtscope, one JSON object per line on
//! its standard output: ready, a process group started, a part on or
//! off, a part failed, warnings, and the end of the clean-up. Times are
//! CLOCK_MONOTONIC nanoseconds (the same clock in both processes).

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Set up; parts due at the start are running. `t_ns`: the origin of
    /// the schedule.
    Ready {
        session: i32,
        cgroups: Vec<String>,
        t_ns: u64,
    },
    Warning {
        message: String,
    },
    /// A part's command was started in its own process group.
    Started {
        part: String,
        pgid: i32,
        t_ns: u64,
    },
    /// A part's burst began (its first process group started).
    On {
        part: String,
        t_ns: u64,
    },
    /// A part's burst ended (its processes are gone).
    Off {
        part: String,
        t_ns: u64,
    },
    /// A part ended by itself with an error, or could not start.
    Failed {
        part: String,
        t_ns: u64,
        message: String,
    },
    /// The supervisor cannot work at all.
    Fatal {
        message: String,
    },
    /// Every load process is gone and the scratch directory and cgroups
    /// are removed, except for what `problems` says.
    Done {
        t_ns: u64,
        problems: Vec<String>,
    },
}

impl Event {
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("events serialize");
        s.push('\n');
        s
    }

    pub fn from_line(line: &str) -> Option<Event> {
        serde_json::from_str(line.trim()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_as_tagged_lines() {
        let e = Event::Failed {
            part: "io".into(),
            t_ns: 5,
            message: "exit status 1".into(),
        };
        let line = e.to_line();
        assert!(line.starts_with("{\"event\":\"failed\""), "{line}");
        assert_eq!(Event::from_line(&line), Some(e));
        assert_eq!(Event::from_line("not json"), None);
    }
}
