//! The `command` load: any program, for custom profiles (dohell's `ps`,
//! `cat /proc/interrupts`, `dd` ...). It runs in the scratch directory,
//! in the load's process group and cgroup like every part, and is started
//! again whenever it ends by itself while the part is on.

use super::part::{BuildCtx, Kind, OptionDef, Part, ValueError, Values};

static OPTIONS: &[OptionDef] = &[OptionDef {
    name: "argv",
    help: "program and arguments, e.g. [\"sh\", \"-c\", \"ls -lR / >/dev/null\"]",
    kind: Kind::Words,
    default: None,
}];

fn build(v: &Values, _ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    Ok(v.words("argv"))
}

pub static PART: Part = Part {
    name: "command",
    help: "any command, restarted while on (custom profiles: argv = [...])",
    tool: None,
    realtime: false,
    options: OPTIONS,
    build,
};
