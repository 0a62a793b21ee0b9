//! How a load part describes itself: its name, help, the tool it drives,
//! its options with their kinds, defaults and ranges, and how it turns
//! checked option values into the command line to run. Also the checking
//! of option values (from TOML or from `name:key=value` on the command
//! line) against those descriptions.
//!
//! Never starts anything: building a command line is pure.

use crate::units::parse_time_ns;
use std::collections::BTreeMap;
use std::path::PathBuf;
use thiserror::Error;

/// Why a value was refused: one option's value, a part's values taken
/// together (a part's `build`), a schedule, or an adjustment of a profile.
/// Worded for people (what is wrong, what is allowed); callers add where.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{0}")]
pub struct ValueError(pub(crate) String);

impl From<String> for ValueError {
    fn from(why: String) -> ValueError {
        ValueError(why)
    }
}

impl From<&str> for ValueError {
    fn from(why: &str) -> ValueError {
        ValueError(why.to_string())
    }
}

/// Why a part's options were refused ([`Part::check`]).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum OptionError {
    #[error("load '{part}' has no option '{option}' (options: {options})")]
    Unknown {
        part: &'static str,
        option: String,
        options: String,
    },
    #[error("load '{part}', option '{option}': {reason}")]
    Value {
        part: &'static str,
        option: &'static str,
        reason: ValueError,
    },
    #[error("built-in default of {part}.{option}: {reason}")]
    Default {
        part: &'static str,
        option: &'static str,
        reason: ValueError,
    },
    #[error("load '{part}' needs option '{option}' ({kind}: {help})")]
    Missing {
        part: &'static str,
        option: &'static str,
        kind: String,
        help: &'static str,
    },
}

/// An external program a part needs, and the Debian package holding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tool {
    pub program: &'static str,
    pub package: &'static str,
}

pub const STRESS_NG: Tool = Tool {
    program: "stress-ng",
    package: "stress-ng",
};
pub const HACKBENCH: Tool = Tool {
    program: "hackbench",
    package: "rt-tests",
};

/// The kind of value an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number in `[min, max]`.
    Count { min: u64, max: u64 },
    /// A time with a unit (`17ms`, `2s`) in `[min_ns, max_ns]`.
    Duration { min_ns: u64, max_ns: u64 },
    /// A stress-ng size: a number with b, k, m or g, or a percentage.
    Size,
    /// true or false; on the command line a bare `name` means true.
    Flag,
    /// A word.
    Text,
    /// SCHED_FIFO priorities 1-99, e.g. `60,70,80` or `[60, 70, 80]`.
    Priorities,
    /// A list of words (TOML array, or comma-separated).
    Words,
}

impl Kind {
    /// How the kind reads in help.
    pub fn describe(self) -> String {
        match self {
            Kind::Count { min, max } => format!("number {min}-{max}"),
            Kind::Duration { min_ns, max_ns } => format!(
                "time {}-{}",
                crate::units::fmt_duration(min_ns),
                crate::units::fmt_duration(max_ns)
            ),
            Kind::Size => "size (e.g. 256m, 1g, 10%)".into(),
            Kind::Flag => "true/false".into(),
            Kind::Text => "word".into(),
            Kind::Priorities => "priorities 1-99 (e.g. 60,70,80)".into(),
            Kind::Words => "list of words".into(),
        }
    }
}

/// One option of a part.
#[derive(Clone, Copy, Debug)]
pub struct OptionDef {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    /// Default value as it would be written on the command line; `None`:
    /// the option is required.
    pub default: Option<&'static str>,
}

/// A checked option value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Count(u64),
    Duration(u64),
    Text(String),
    Flag(bool),
    Priorities(Vec<i32>),
    Words(Vec<String>),
}

/// What building a command line may use.
#[derive(Clone, Debug)]
pub struct BuildCtx {
    /// CPUs the load may use.
    pub cpus: Vec<usize>,
    /// The load's scratch directory (created by the supervisor).
    pub scratch: PathBuf,
    /// A base for TCP/UDP ports, different for each rtscope process.
    pub port_base: u16,
    /// This rtscope binary (for built-in parts): /proc/self/exe.
    pub self_exe: PathBuf,
}

/// Checked values of one part, by option name.
#[derive(Clone, Debug, Default)]
pub struct Values(pub BTreeMap<String, Value>);

impl Values {
    pub fn count(&self, name: &str) -> u64 {
        match self.0.get(name) {
            Some(Value::Count(v)) => *v,
            _ => 0,
        }
    }
    pub fn duration_ns(&self, name: &str) -> u64 {
        match self.0.get(name) {
            Some(Value::Duration(v)) => *v,
            _ => 0,
        }
    }
    pub fn text(&self, name: &str) -> String {
        match self.0.get(name) {
            Some(Value::Text(v)) => v.clone(),
            _ => String::new(),
        }
    }
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.0.get(name), Some(Value::Flag(true)))
    }
    pub fn priorities(&self, name: &str) -> Vec<i32> {
        match self.0.get(name) {
            Some(Value::Priorities(v)) => v.clone(),
            _ => Vec::new(),
        }
    }
    pub fn words(&self, name: &str) -> Vec<String> {
        match self.0.get(name) {
            Some(Value::Words(v)) => v.clone(),
            _ => Vec::new(),
        }
    }
    /// `workers`, with 0 meaning one per load CPU.
    pub fn workers(&self, ctx: &BuildCtx) -> u64 {
        match self.count("workers") {
            0 => ctx.cpus.len().max(1) as u64,
            n => n,
        }
    }
}

/// A kind of load, registered in [`super::PARTS`].
pub struct Part {
    /// What `load = "..."` names in a profile.
    pub name: &'static str,
    pub help: &'static str,
    /// The program it drives (`None`: built into rtscope, or any command).
    pub tool: Option<Tool>,
    /// Runs SCHED_FIFO threads on purpose (kept out of the cpu cgroup,
    /// which has no real-time budget).
    pub realtime: bool,
    pub options: &'static [OptionDef],
    /// The command line for these values.
    pub build: fn(&Values, &BuildCtx) -> Result<Vec<String>, ValueError>,
}

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Part").field("name", &self.name).finish()
    }
}

impl Part {
    pub fn option(&self, name: &str) -> Option<&OptionDef> {
        self.options.iter().find(|o| o.name == name)
    }

    /// Check raw values (`name -> raw`) against the options, filling in
    /// defaults. Errors name the part, the option and what is allowed.
    pub fn check(&self, raw: &BTreeMap<String, Raw>) -> Result<Values, OptionError> {
        let mut out = BTreeMap::new();
        for (k, _) in raw.iter() {
            if self.option(k).is_none() {
                return Err(OptionError::Unknown {
                    part: self.name,
                    option: k.clone(),
                    options: self.option_names(),
                });
            }
        }
        for o in self.options {
            let v = match (raw.get(o.name), o.default) {
                (Some(r), _) => parse_value(o, r).map_err(|reason| OptionError::Value {
                    part: self.name,
                    option: o.name,
                    reason,
                })?,
                (None, Some(d)) => parse_value(o, &Raw::Text(d.to_string())).map_err(|reason| {
                    OptionError::Default {
                        part: self.name,
                        option: o.name,
                        reason,
                    }
                })?,
                (None, None) => {
                    return Err(OptionError::Missing {
                        part: self.name,
                        option: o.name,
                        kind: o.kind.describe(),
                        help: o.help,
                    });
                }
            };
            out.insert(o.name.to_string(), v);
        }
        Ok(Values(out))
    }

    pub fn option_names(&self) -> String {
        if self.options.is_empty() {
            return "none".into();
        }
        self.options
            .iter()
            .map(|o| o.name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// An option value as written, before checking.
#[derive(Clone, Debug, PartialEq)]
pub enum Raw {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<Raw>),
}

impl Raw {
    /// From a TOML value; tables and floats are refused.
    pub fn from_toml(v: &toml::Value) -> Result<Raw, ValueError> {
        Ok(match v {
            toml::Value::String(s) => Raw::Text(s.clone()),
            toml::Value::Integer(i) => Raw::Int(*i),
            toml::Value::Float(f) => Raw::Float(*f),
            toml::Value::Boolean(b) => Raw::Bool(*b),
            toml::Value::Array(a) => Raw::List(
                a.iter()
                    .map(Raw::from_toml)
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            other => return Err(ValueError(format!("unsupported value {other}"))),
        })
    }

    pub(super) fn as_text(&self) -> Result<String, ValueError> {
        match self {
            Raw::Text(s) => Ok(s.trim().to_string()),
            Raw::Int(i) => Ok(i.to_string()),
            Raw::Float(f) => Ok(f.to_string()),
            Raw::Bool(b) => Ok(b.to_string()),
            Raw::List(_) => Err("expected a single value, not a list".into()),
        }
    }

    fn as_list(&self) -> Result<Vec<String>, ValueError> {
        match self {
            Raw::List(items) => items.iter().map(|i| i.as_text()).collect(),
            Raw::Text(s) => Ok(s
                .split(',')
                .map(|w| w.trim().to_string())
                .filter(|w| !w.is_empty())
                .collect()),
            other => Ok(vec![other.as_text()?]),
        }
    }
}

/// Parse a time that must carry a unit (`17ms`, `2s`, `1m30s`).
pub fn parse_time_with_unit(text: &str) -> Result<u64, ValueError> {
    let t = text.trim();
    if t.is_empty() || !t.ends_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(ValueError(format!("'{t}' needs a unit, e.g. 17ms, 2s, 1m")));
    }
    parse_time_ns(t, 1).map_err(|e| ValueError(e.to_string()))
}

fn parse_value(o: &OptionDef, raw: &Raw) -> Result<Value, ValueError> {
    match o.kind {
        Kind::Count { min, max } => {
            let t = raw.as_text()?;
            let v: u64 = t
                .parse()
                .map_err(|_| format!("'{t}' is not a whole number"))?;
            if v < min || v > max {
                return Err(ValueError(format!("{v} is outside {min}-{max}")));
            }
            Ok(Value::Count(v))
        }
        Kind::Duration { min_ns, max_ns } => {
            let t = raw.as_text()?;
            let v = parse_time_with_unit(&t)?;
            if v < min_ns || v > max_ns {
                return Err(ValueError(format!("{t} is outside {}", o.kind.describe())));
            }
            Ok(Value::Duration(v))
        }
        Kind::Size => {
            let t = raw.as_text()?.to_ascii_lowercase();
            let (num, unit) = t.split_at(t.trim_end_matches(|c: char| !c.is_ascii_digit()).len());
            let ok = !num.is_empty()
                && num.chars().all(|c| c.is_ascii_digit())
                && matches!(unit, "" | "b" | "k" | "m" | "g" | "%");
            if !ok || num.parse::<u64>().map(|n| n == 0).unwrap_or(true) {
                return Err(ValueError(format!(
                    "'{t}' is not a size: use a number with b, k, m or g, or a percentage (e.g. 256m, 10%)"
                )));
            }
            if unit == "%" && num.parse::<u64>().unwrap_or(101) > 100 {
                return Err(ValueError(format!("'{t}' is more than 100%")));
            }
            Ok(Value::Text(t))
        }
        Kind::Flag => match raw {
            Raw::Bool(b) => Ok(Value::Flag(*b)),
            other => match other.as_text()?.as_str() {
                "true" | "yes" | "on" | "1" => Ok(Value::Flag(true)),
                "false" | "no" | "off" | "0" => Ok(Value::Flag(false)),
                t => Err(ValueError(format!("'{t}' is not true or false"))),
            },
        },
        Kind::Text => {
            let t = raw.as_text()?;
            if t.is_empty() || t.contains(char::is_whitespace) {
                return Err(ValueError(format!("'{t}' must be one word")));
            }
            Ok(Value::Text(t))
        }
        Kind::Priorities => {
            let words = raw.as_list()?;
            if words.is_empty() || words.len() > 16 {
                return Err("give 1 to 16 priorities, e.g. 60,70,80".into());
            }
            let mut prios = Vec::new();
            for w in words {
                let p: i32 = w.parse().map_err(|_| format!("'{w}' is not a priority"))?;
                if !(1..=99).contains(&p) {
                    return Err(ValueError(format!("priority {p} is outside 1-99")));
                }
                prios.push(p);
            }
            Ok(Value::Priorities(prios))
        }
        Kind::Words => {
            let words = raw.as_list()?;
            if words.is_empty() {
                return Err("give at least one word".into());
            }
            Ok(Value::Words(words))
        }
    }
}

/// The start of every stress-ng command line: run until stopped, scratch
/// files in the load's directory, leave OOM scores to rtscope (load
/// processes are the OOM killer's first choice, rtscope its last).
pub fn stress_ng_base(ctx: &BuildCtx) -> Vec<String> {
    vec![
        "stress-ng".into(),
        "--timeout".into(),
        "0".into(),
        "--temp-path".into(),
        ctx.scratch.display().to_string(),
        "--no-oom-adjust".into(),
    ]
}

/// Push `--flag value` pairs.
pub fn push(argv: &mut Vec<String>, pairs: &[(&str, String)]) {
    for (k, v) in pairs {
        argv.push((*k).to_string());
        argv.push(v.clone());
    }
}

#[cfg(test)]
pub(crate) fn test_ctx() -> BuildCtx {
    BuildCtx {
        cpus: vec![0, 1],
        scratch: PathBuf::from("/var/tmp/rtscope-load-1"),
        port_base: 21000,
        self_exe: PathBuf::from("/usr/bin/rtscope"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static OPTS: &[OptionDef] = &[
        OptionDef {
            name: "workers",
            help: "w",
            kind: Kind::Count { min: 0, max: 64 },
            default: Some("0"),
        },
        OptionDef {
            name: "busy",
            help: "b",
            kind: Kind::Duration {
                min_ns: 100_000,
                max_ns: 1_000_000_000,
            },
            default: Some("17ms"),
        },
        OptionDef {
            name: "bytes",
            help: "s",
            kind: Kind::Size,
            default: Some("256m"),
        },
        OptionDef {
            name: "prio",
            help: "p",
            kind: Kind::Priorities,
            default: Some("60,70,80"),
        },
    ];

    fn build(_: &Values, _: &BuildCtx) -> Result<Vec<String>, ValueError> {
        Ok(vec![])
    }

    static PART: Part = Part {
        name: "demo",
        help: "demo",
        tool: None,
        realtime: false,
        options: OPTS,
        build,
    };

    fn raw(pairs: &[(&str, Raw)]) -> BTreeMap<String, Raw> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn defaults_fill_in_and_values_are_checked() {
        let v = PART.check(&BTreeMap::new()).unwrap();
        assert_eq!(v.count("workers"), 0);
        assert_eq!(v.duration_ns("busy"), 17_000_000);
        assert_eq!(v.text("bytes"), "256m");
        assert_eq!(v.priorities("prio"), vec![60, 70, 80]);
        assert_eq!(v.workers(&test_ctx()), 2);

        let v = PART
            .check(&raw(&[
                ("workers", Raw::Int(3)),
                ("prio", Raw::List(vec![Raw::Int(10), Raw::Int(20)])),
                ("bytes", Raw::Text("10%".into())),
            ]))
            .unwrap();
        assert_eq!(v.workers(&test_ctx()), 3);
        assert_eq!(v.priorities("prio"), vec![10, 20]);
        assert_eq!(v.text("bytes"), "10%");
    }

    #[test]
    fn bad_values_say_what_is_allowed() {
        let e = PART
            .check(&raw(&[("workers", Raw::Int(65))]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside 0-64"), "{e}");
        let e = PART
            .check(&raw(&[("busy", Raw::Text("17".into()))]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs a unit"), "{e}");
        let e = PART
            .check(&raw(&[("prio", Raw::Text("60,100".into()))]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside 1-99"), "{e}");
        let e = PART
            .check(&raw(&[("bytes", Raw::Text("12q".into()))]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a size"), "{e}");
        let e = PART
            .check(&raw(&[("nope", Raw::Int(1))]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no option 'nope'") && e.contains("workers, busy"),
            "{e}"
        );
    }
}
