//! `rtscope man DIR`: write the man pages (rtscope.1, rtscope-measure.1,
//! rtscope-runs-show.1, …: one per visible subcommand, nested ones too)
//! from the same clap definitions as `--help`, so they never drift.

use super::{Cli, Exit};
use anyhow::{Context, Result};
use clap::{Args, CommandFactory};
use std::path::PathBuf;

/// Write man pages for rtscope and every subcommand into DIR.
#[derive(Args, Debug, Clone)]
pub struct ManArgs {
    /// Directory to write rtscope.1, rtscope-measure.1, … into.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Every page to write: its file name (without `.1`) and its command,
/// named `rtscope-runs-show` for the title and `rtscope runs show` for the
/// synopsis. Hidden (internal) subcommands get none.
pub fn pages() -> Vec<(String, clap::Command)> {
    fn walk(page: &str, usage: &str, cmd: &clap::Command, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let page = format!("{page}-{}", sub.get_name());
            let usage = format!("{usage} {}", sub.get_name());
            let named = sub.clone().name(&page).bin_name(&usage);
            walk(&page, &usage, sub, out);
            out.push((page, named));
        }
    }
    let cmd = Cli::command();
    let mut out = vec![("rtscope".to_string(), cmd.clone())];
    walk("rtscope", "rtscope", &cmd, &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

pub fn run(args: &ManArgs) -> Result<Exit> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    let source = format!("rtscope {}", env!("CARGO_PKG_VERSION"));
    for (name, page) in pages() {
        let mut buf = Vec::new();
        clap_mangen::Man::new(page)
            .source(source.clone())
            .render(&mut buf)
            .with_context(|| format!("rendering the man page {name}.1"))?;
        let path = args.dir.join(format!("{name}.1"));
        std::fs::write(&path, buf).with_context(|| format!("cannot write {}", path.display()))?;
        outln!("{}", path.display());
    }
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_visible_subcommand_has_a_page_nested_ones_too() {
        let names: Vec<String> = pages().into_iter().map(|(n, _)| n).collect();
        for want in [
            "rtscope",
            "rtscope-measure",
            "rtscope-completions",
            "rtscope-runs",
            "rtscope-runs-show",
            "rtscope-tune-isolate",
        ] {
            assert!(names.iter().any(|n| n == want), "no {want} in {names:?}");
        }
        assert!(
            !names
                .iter()
                .any(|n| n.contains("__") || n.contains("hold-dma"))
        );
        assert!(!names.iter().any(|n| n == "rtscope-man"), "{names:?}");
    }
}
