//! The `rtscope` binary: parse the command line, dispatch, map the result
//! to an exit code (0 ok, 1 a latency limit was exceeded, 2 usage or
//! system error). Nothing else lives here.
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match rtscope::cli::parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // One line: what is wrong and where to look. clap lists
            // what a message ending in ':' is about on the next lines
            // (the missing arguments): they are kept, the usage is not.
            let mut text = e.to_string();
            // clap quotes a refused value: never a password (a --db URL
            // or connection string) in the message.
            if let Some(clap::error::ContextValue::String(v)) =
                e.get(clap::error::ContextKind::InvalidValue)
                && !v.is_empty()
            {
                text = text.replace(v.as_str(), &rtscope::redact::url(v));
            }
            let what: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let first = match what.join(" ") {
                w if w.is_empty() => "bad usage".to_string(),
                w => w.trim_start_matches("error: ").to_string(),
            };
            eprintln!("rtscope: error: {first} (see --help)");
            return ExitCode::from(2);
        }
    };
    match std::panic::catch_unwind(|| rtscope::cli::run(cli)) {
        Ok(Ok(exit)) => ExitCode::from(exit.code()),
        Ok(Err(e)) => {
            eprintln!("rtscope: error: {e:#}");
            ExitCode::from(2)
        }
        Err(_) => {
            eprintln!(
                "rtscope: internal error (a bug): please report it with the command line used"
            );
            ExitCode::from(2)
        }
    }
}
