//! The `memory` load: stress-ng's vm stressor, workers that map, write,
//! check and unmap anonymous memory in many patterns. Page faults, TLB
//! shootdowns and memory bandwidth contention: the disturbances that reach
//! a real-time thread through the memory system.

use super::part::{
    BuildCtx, Kind, OptionDef, Part, STRESS_NG, ValueError, Values, push, stress_ng_base,
};

static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "workers",
        help: "stress-ng vm workers (0: one per load CPU)",
        kind: Kind::Count { min: 0, max: 1024 },
        default: Some("1"),
    },
    OptionDef {
        name: "bytes",
        help: "memory each worker maps (stress-ng --vm-bytes)",
        kind: Kind::Size,
        default: Some("256m"),
    },
    OptionDef {
        name: "method",
        help: "stress-ng --vm-method (all cycles through every method)",
        kind: Kind::Text,
        default: Some("all"),
    },
];

fn build(v: &Values, ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    let mut argv = stress_ng_base(ctx);
    push(
        &mut argv,
        &[
            ("--vm", v.workers(ctx).to_string()),
            ("--vm-bytes", v.text("bytes")),
            ("--vm-method", v.text("method")),
        ],
    );
    Ok(argv)
}

pub static PART: Part = Part {
    name: "memory",
    help: "page faults and memory bandwidth (stress-ng --vm)",
    tool: Some(STRESS_NG),
    realtime: false,
    options: OPTIONS,
    build,
};
