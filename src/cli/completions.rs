//! `rtscope completions bash|zsh|fish`: print a shell completion script
//! generated (clap_complete) from the same clap definitions as `--help`
//! and the man pages, so completions never drift from the flags. It only
//! writes to standard output; installing the script is the package's job.

use super::Exit;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::io::Write as _;

/// Print a shell completion script on standard output.
///
/// Install it where your shell looks, for example:
/// `rtscope completions bash > /usr/share/bash-completion/completions/rtscope`,
/// `rtscope completions zsh > /usr/share/zsh/vendor-completions/_rtscope`,
/// `rtscope completions fish > ~/.config/fish/completions/rtscope.fish`.
/// The Debian package (`make deb`) installs all three.
#[derive(Args, Debug, Clone)]
pub struct CompletionsArgs {
    /// Shell to write the script for.
    #[arg(value_name = "SHELL", value_enum)]
    pub shell: CompletionShell,
}

/// The shells a completion script is written for.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

impl From<CompletionShell> for clap_complete::Shell {
    fn from(s: CompletionShell) -> Self {
        match s {
            CompletionShell::Bash => clap_complete::Shell::Bash,
            CompletionShell::Zsh => clap_complete::Shell::Zsh,
            CompletionShell::Fish => clap_complete::Shell::Fish,
        }
    }
}

/// `cmd` without what `--help` hides (internal subcommands and test
/// flags), for clap_complete, which offers hidden subcommands. Only what
/// the generators read is kept: names, abouts, the version, the help
/// flag's setting, arguments and subcommands.
fn visible(cmd: &clap::Command) -> clap::Command {
    let mut out = clap::Command::new(cmd.get_name().to_owned());
    if let Some(about) = cmd.get_about() {
        out = out.about(about.clone());
    }
    if let Some(version) = cmd.get_version() {
        out = out.version(version.to_owned()).propagate_version(true);
    }
    // `measure` frees `-h` for cyclictest's histogram and declares its
    // own `--help`: a generated one would clash with it.
    out = out.disable_help_flag(cmd.is_disable_help_flag_set());
    out.args(cmd.get_arguments().filter(|a| !a.is_hide_set()).cloned())
        .subcommands(
            cmd.get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(visible),
        )
}

/// The completion script for `shell`.
pub fn script(shell: CompletionShell) -> Vec<u8> {
    let mut cmd = visible(&crate::cli::command());
    let mut buf = Vec::new();
    // Into memory first: clap_complete panics on a failed write, and a
    // closed standard output (`rtscope completions bash | head`) must not.
    clap_complete::generate(
        clap_complete::Shell::from(shell),
        &mut cmd,
        "rtscope",
        &mut buf,
    );
    buf
}

pub fn run(args: &CompletionsArgs) -> Result<Exit> {
    let buf = script(args.shell);
    let mut out = std::io::stdout().lock();
    match out.write_all(&buf).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write the completion script to standard output")
        }
        _ => Ok(Exit::Ok),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_a_script_that_names_the_subcommands() {
        for shell in [
            CompletionShell::Bash,
            CompletionShell::Zsh,
            CompletionShell::Fish,
        ] {
            let text = String::from_utf8(script(shell)).unwrap();
            for sub in ["measure", "report", "completions", "doctor"] {
                assert!(text.contains(sub), "{shell:?} script lacks {sub}");
            }
            // What --help hides stays hidden (`tune hold-dma-latency`
            // cannot be told apart from the visible `--hold-dma-latency`
            // here: tests/it/completions.rs checks it).
            for hidden in ["__load-supervisor", "__rt-interference", "sysroot"] {
                assert!(!text.contains(hidden), "{shell:?} script offers {hidden}");
            }
        }
    }
}
