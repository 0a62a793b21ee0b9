//! The `stress-ng` load: any stress-ng stressors, for custom profiles
//! (`args = ["--cache", "1"]`). rtscope adds what every stress-ng part
//! gets: run until stopped, scratch files in the load's directory, OOM
//! scores left to rtscope.

use super::part::{BuildCtx, Kind, OptionDef, Part, STRESS_NG, ValueError, Values, stress_ng_base};

static OPTIONS: &[OptionDef] = &[OptionDef {
    name: "args",
    help: "stress-ng arguments, e.g. [\"--cache\", \"1\"] (see stress-ng --help)",
    kind: Kind::Words,
    default: None,
}];

/// Options rtscope sets itself; a profile must not change them.
const RESERVED: &[&str] = &["--timeout", "-t", "--temp-path", "--taskset", "--oomable"];

fn build(v: &Values, ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    let args = v.words("args");
    if let Some(bad) = args.iter().find(|a| RESERVED.contains(&a.as_str())) {
        return Err(ValueError(format!(
            "stress-ng: '{bad}' is set by rtscope (the part runs while it is on, in the scratch directory, on --load-cpus)"
        )));
    }
    let mut argv = stress_ng_base(ctx);
    argv.extend(args);
    Ok(argv)
}

pub static PART: Part = Part {
    name: "stress-ng",
    help: "any stress-ng stressors (custom profiles: args = [...])",
    tool: Some(STRESS_NG),
    realtime: false,
    options: OPTIONS,
    build,
};
