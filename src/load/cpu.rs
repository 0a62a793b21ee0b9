//! The `cpu` load: stress-ng's cpu stressor, compute-bound workers that
//! cycle through its methods (integer, floating point, bit twiddling...).
//! Keeps CPUs busy and caches warm-then-thrashed; no system calls to
//! speak of, so it shows what plain CPU contention does to wake-ups.

use super::part::{
    BuildCtx, Kind, OptionDef, Part, STRESS_NG, ValueError, Values, push, stress_ng_base,
};

static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "workers",
        help: "stress-ng cpu workers (0: one per load CPU)",
        kind: Kind::Count { min: 0, max: 1024 },
        default: Some("0"),
    },
    OptionDef {
        name: "method",
        help: "stress-ng --cpu-method (all cycles through every method)",
        kind: Kind::Text,
        default: Some("all"),
    },
];

fn build(v: &Values, ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    let mut argv = stress_ng_base(ctx);
    push(
        &mut argv,
        &[
            ("--cpu", v.workers(ctx).to_string()),
            ("--cpu-method", v.text("method")),
        ],
    );
    Ok(argv)
}

pub static PART: Part = Part {
    name: "cpu",
    help: "CPU-bound workers (stress-ng --cpu)",
    tool: Some(STRESS_NG),
    realtime: false,
    options: OPTIONS,
    build,
};
