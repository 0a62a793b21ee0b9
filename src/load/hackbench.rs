//! The `hackbench` load: rt-tests' hackbench, groups of senders and
//! receivers passing messages over sockets (or pipes), the scheduler load
//! the PREEMPT_RT community measures under. One run is finite: the
//! supervisor starts it again for as long as the part is on.

use super::part::{BuildCtx, HACKBENCH, Kind, OptionDef, Part, ValueError, Values, push};

static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "groups",
        help: "groups of 20 senders and 20 receivers (hackbench -g)",
        kind: Kind::Count { min: 1, max: 100 },
        default: Some("4"),
    },
    OptionDef {
        name: "loops",
        help: "messages each sender sends per run (hackbench -l)",
        kind: Kind::Count {
            min: 1,
            max: 10_000_000,
        },
        default: Some("1000"),
    },
    OptionDef {
        name: "pipe",
        help: "use pipes instead of sockets (hackbench -p)",
        kind: Kind::Flag,
        default: Some("false"),
    },
    OptionDef {
        name: "threads",
        help: "threads instead of processes (hackbench -T)",
        kind: Kind::Flag,
        default: Some("false"),
    },
];

fn build(v: &Values, _ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    let mut argv = vec!["hackbench".to_string()];
    push(
        &mut argv,
        &[
            ("-g", v.count("groups").to_string()),
            ("-l", v.count("loops").to_string()),
        ],
    );
    if v.flag("pipe") {
        argv.push("-p".into());
    }
    argv.push(if v.flag("threads") { "-T" } else { "-P" }.into());
    Ok(argv)
}

pub static PART: Part = Part {
    name: "hackbench",
    help: "scheduler and socket message storm (rt-tests hackbench, restarted while on)",
    tool: Some(HACKBENCH),
    realtime: false,
    options: OPTIONS,
    build,
};
