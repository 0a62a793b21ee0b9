//! The `sched` load: the scheduler's fast paths. stress-ng's switch
//! stressor (pairs of processes that wake each other through a pipe),
//! fork (create and reap children) and exec (fork, exec, exit). Many
//! short-lived tasks, wake-ups and migrations.

use super::part::{
    BuildCtx, Kind, OptionDef, Part, STRESS_NG, ValueError, Values, push, stress_ng_base,
};

static OPTIONS: &[OptionDef] = &[OptionDef {
    name: "workers",
    help: "workers of each stressor (switch, fork, exec; 0: one per load CPU)",
    kind: Kind::Count { min: 0, max: 256 },
    default: Some("1"),
}];

fn build(v: &Values, ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    let w = v.workers(ctx).to_string();
    let mut argv = stress_ng_base(ctx);
    push(
        &mut argv,
        &[
            ("--switch", w.clone()),
            ("--fork", w.clone()),
            ("--exec", w),
        ],
    );
    Ok(argv)
}

pub static PART: Part = Part {
    name: "sched",
    help: "context switches, fork and exec (stress-ng --switch --fork --exec)",
    tool: Some(STRESS_NG),
    realtime: false,
    options: OPTIONS,
    build,
};
