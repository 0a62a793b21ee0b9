//! `rtscope man DIR`: write the man pages (rtscope.1, rtscope-measure.1,
//! …) from the same clap definitions as `--help`, so they never drift.

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

pub fn run(args: &ManArgs) -> Result<Exit> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    let cmd = Cli::command();
    let mut pages = vec![("rtscope".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("rtscope-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name)));
    }
    for (name, page) in pages {
        let mut buf = Vec::new();
        clap_mangen::Man::new(page)
            .render(&mut buf)
            .context("rendering a man page")?;
        let path = args.dir.join(format!("{name}.1"));
        std::fs::write(&path, buf).with_context(|| format!("cannot write {}", path.display()))?;
        outln!("{}", path.display());
    }
    Ok(Exit::Ok)
}
