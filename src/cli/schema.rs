//! `rtscope schema`: print the JSON Schema of the run record.

use super::Exit;
use clap::Args;

/// Print the JSON Schema of the run record written by --json.
#[derive(Args, Debug, Clone)]
pub struct SchemaArgs {}

pub fn run(_args: &SchemaArgs) -> anyhow::Result<Exit> {
    out!("{}", crate::record::json_schema());
    Ok(Exit::Ok)
}
