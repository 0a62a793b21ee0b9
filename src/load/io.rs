//! The `io` load: stress-ng's hdd stressor writing files in the load's
//! scratch directory with an fsync after every write, so data really
//! reaches the block device (block layer, I/O completion interrupts,
//! writeback). Files live only in the scratch directory, which is removed
//! at the end.

use super::part::{
    BuildCtx, Kind, OptionDef, Part, STRESS_NG, ValueError, Values, push, stress_ng_base,
};

static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "workers",
        help: "stress-ng hdd workers (0: one per load CPU)",
        kind: Kind::Count { min: 0, max: 256 },
        default: Some("1"),
    },
    OptionDef {
        name: "bytes",
        help: "bytes each worker writes before starting over (stress-ng --hdd-bytes)",
        kind: Kind::Size,
        default: Some("128m"),
    },
    OptionDef {
        name: "write_size",
        help: "size of each write (stress-ng --hdd-write-size, at most 4m)",
        kind: Kind::Size,
        default: Some("64k"),
    },
];

fn build(v: &Values, ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    let ws = v.text("write_size");
    if ws.ends_with('%') {
        return Err("io: write_size must be a size, not a percentage".into());
    }
    let mut argv = stress_ng_base(ctx);
    push(
        &mut argv,
        &[
            ("--hdd", v.workers(ctx).to_string()),
            ("--hdd-bytes", v.text("bytes")),
            ("--hdd-write-size", ws),
            ("--hdd-opts", "fsync".into()),
        ],
    );
    Ok(argv)
}

pub static PART: Part = Part {
    name: "io",
    help: "block I/O: writes with fsync in the scratch directory (stress-ng --hdd)",
    tool: Some(STRESS_NG),
    realtime: false,
    options: OPTIONS,
    build,
};
