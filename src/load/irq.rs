//! The `irq` load: timer interrupts and signals. stress-ng's timer
//! stressor arms a POSIX timer at a high rate (hrtimer interrupts and a
//! signal per expiry); sigq sends queued signals to a child that waits
//! for them. Interrupt and signal delivery paths, without hardware.

use super::part::{
    BuildCtx, Kind, OptionDef, Part, STRESS_NG, ValueError, Values, push, stress_ng_base,
};

static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "workers",
        help: "workers of each stressor (timer, sigq; 0: one per load CPU)",
        kind: Kind::Count { min: 0, max: 256 },
        default: Some("1"),
    },
    OptionDef {
        name: "timer_hz",
        help: "rate of each timer worker, in Hz (stress-ng --timer-freq)",
        kind: Kind::Count {
            min: 1,
            max: 1_000_000,
        },
        default: Some("100000"),
    },
];

fn build(v: &Values, ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    let w = v.workers(ctx).to_string();
    let mut argv = stress_ng_base(ctx);
    push(
        &mut argv,
        &[
            ("--timer", w.clone()),
            ("--timer-freq", v.count("timer_hz").to_string()),
            ("--sigq", w),
        ],
    );
    Ok(argv)
}

pub static PART: Part = Part {
    name: "irq",
    help: "timer interrupts and signals (stress-ng --timer --sigq)",
    tool: Some(STRESS_NG),
    realtime: false,
    options: OPTIONS,
    build,
};
