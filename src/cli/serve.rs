//! `rtscope serve`: the flags of the read-only web view of the run store,
//! turned into [`crate::serve::ServeOptions`]. Parse-only: the server is
//! `crate::serve`.

use super::Exit;
use crate::serve::{self, ServeOptions};
use anyhow::Result;
use clap::Args;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

fn listen(s: &str) -> Result<SocketAddr, serve::BadListen> {
    serve::parse_listen(s)
}

/// Browse the run store in a web browser (read-only).
///
/// Serves, until Ctrl-C or SIGTERM: the runs list with the filters of
/// `rtscope runs` (host, label, tag, state, kernel, since, until), sorted
/// by date or worst case, paged, with a checkbox per run to compare them;
/// each run's HTML report, the one `rtscope report` writes; several runs
/// compared (`/compare?runs=1,2,3`); one row per board (`/boards`); and
/// the same as JSON under /api/ (runs, one run's record, boards). The
/// store (--db) is only read, never written. See docs/serve.md.
///
/// On start it prints `rtscope serve: listening on http://ADDR:PORT/`
/// on standard error, with the real port (useful with port 0).
///
/// Exit status: 0 stopped by Ctrl-C or SIGTERM; 2 it could not start (a
/// port in use, a non-loopback address without --auth, a bad auth file or
/// store).
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Listen on ADDR:PORT. A bare PORT listens on 127.0.0.1 only; port 0
    /// takes a free one. Any other than a loopback address needs --auth.
    #[arg(
        long = "listen",
        value_name = "ADDR:PORT",
        default_value = "127.0.0.1:8788",
        value_parser = listen
    )]
    pub listen: SocketAddr,

    /// A file holding `bearer TOKEN` (or a bare token) or `basic
    /// USER:PASSWORD`: every request without that Authorization header is
    /// answered 401. Required to listen on a non-loopback address.
    #[arg(long = "auth", value_name = "FILE")]
    pub auth: Option<PathBuf>,

    /// Answer requests whose Host header is NAME (repeatable), beside
    /// localhost, 127.0.0.1, [::1] and the address listened on (any IP
    /// address of this host with 0.0.0.0 or [::]). Other names are
    /// answered 421, so that no web page can reach the store through a
    /// DNS rebinding: give the name users type (e.g. lab.example.com).
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_hosts: Vec<String>,
}

pub fn run(args: &ServeArgs, db: Option<&Path>) -> Result<Exit> {
    let options = ServeOptions {
        store: crate::store::locate(db)?,
        listen: args.listen,
        auth_file: args.auth.clone(),
        allow_hosts: args.allow_hosts.clone(),
    };
    serve::run(&options)?;
    Ok(Exit::Ok)
}
