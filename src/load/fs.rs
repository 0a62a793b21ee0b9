//! The `fs` load: file-system walks and metadata, the part of dohell
//! that runs `ls -lR /`. stress-ng's getdent stressor walks /proc, /dev,
//! /tmp, /sys and /run; dentry and dir create and remove directory
//! entries and directories (in the scratch directory). VFS locks, dcache
//! and inode cache churn.

use super::part::{
    BuildCtx, Kind, OptionDef, Part, STRESS_NG, ValueError, Values, push, stress_ng_base,
};

static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "workers",
        help: "workers of each stressor (getdent, dentry, dir; 0: one per load CPU)",
        kind: Kind::Count { min: 0, max: 256 },
        default: Some("1"),
    },
    OptionDef {
        name: "entries",
        help: "entries each dentry/dir worker creates per round (--dentries, --dir-dirs); more means a longer clean-up when a burst is cut",
        kind: Kind::Count {
            min: 64,
            max: 65536,
        },
        default: Some("512"),
    },
];

fn build(v: &Values, ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    let w = v.workers(ctx).to_string();
    let mut argv = stress_ng_base(ctx);
    let n = v.count("entries").to_string();
    push(
        &mut argv,
        &[
            ("--getdent", w.clone()),
            ("--dentry", w.clone()),
            ("--dentries", n.clone()),
            ("--dir", w),
            ("--dir-dirs", n),
        ],
    );
    Ok(argv)
}

pub static PART: Part = Part {
    name: "fs",
    help: "directory walks and metadata churn (stress-ng --getdent --dentry --dir)",
    tool: Some(STRESS_NG),
    realtime: false,
    options: OPTIONS,
    build,
};
