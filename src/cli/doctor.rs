//! `rtscope doctor`: run the system checks for the CPUs that will run
//! real-time work and print them (text or JSON).

use super::Exit;
use super::cpulist;
use crate::doctor::{self, Ctx, Finding, Status};
use crate::sysinfo::SysRoot;
use crate::sysinfo::facts::Facts;
use crate::units::{CpuList, format_cpu_list};
use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;

/// Check what stands between this system and good real-time latency.
///
/// Each check says ok, info, warn or FAIL, the value found, why it
/// matters, and the fix (a command or a kernel parameter). Nothing is
/// changed; root is not needed (a few values, such as
/// /dev/cpu_dma_latency, are read only as root).
///
/// Exit status: 0 (even with warnings), or with --strict 1 when any check
/// warns or fails; 2 on bad options.
#[derive(Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoctorArgs {
    /// CPUs that will run real-time work. Default: the CPUs isolated by
    /// rtscope tune, else by isolcpus, else nohz_full, else every online CPU.
    #[arg(long, value_name = "CPUS", value_parser = cpulist)]
    pub cpus: Option<CpuList>,

    /// Machine-readable output (JSON) on standard output.
    #[arg(long)]
    pub json: bool,

    /// Exit 1 when any check warns or fails (for scripts and CI).
    #[arg(long)]
    pub strict: bool,

    /// Read the system below this directory instead of / (a copy or a
    /// fake tree of /proc and /sys, for tests).
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysroot: Option<PathBuf>,
}

pub fn run(args: &DoctorArgs) -> Result<Exit> {
    let root = match &args.sysroot {
        Some(d) if !d.is_dir() => bail!("--sysroot {}: not a directory", d.display()),
        Some(d) => SysRoot::at(d),
        None => SysRoot::host(),
    };
    let facts = Facts::gather(&root);
    let (rt_cpus, source) = match &args.cpus {
        Some(c) => {
            let off: Vec<usize> =
                c.0.iter()
                    .copied()
                    .filter(|x| !facts.online.contains(x))
                    .collect();
            if !off.is_empty() {
                bail!(
                    "--cpus {}: CPU {} is not online (online: {})",
                    format_cpu_list(&c.0),
                    format_cpu_list(&off),
                    format_cpu_list(&facts.online)
                );
            }
            (c.0.clone(), "--cpus".to_string())
        }
        None => doctor::default_rt_cpus(&facts),
    };
    let ctx = Ctx {
        facts: &facts,
        rt_cpus,
    };
    let findings = doctor::run(&ctx);
    if args.json {
        print_json(&ctx, &source, &findings)?;
    } else {
        print_text(&ctx, &source, &findings);
    }
    let bad = findings.iter().any(|f| f.status >= Status::Warn);
    Ok(if args.strict && bad {
        Exit::GateFailed
    } else {
        Exit::Ok
    })
}

fn print_text(ctx: &Ctx, source: &str, findings: &[Finding]) {
    let f = ctx.facts;
    let offline = if f.offline.is_empty() {
        String::new()
    } else {
        format!(", CPUs {} offline", format_cpu_list(&f.offline))
    };
    outln!(
        "rtscope doctor: Linux {} ({}), {} CPUs online{offline}; real-time CPUs {} ({source})\n",
        f.uname.release,
        f.uname.machine,
        f.online.len(),
        ctx.rt_list()
    );
    let width = findings.iter().map(|x| x.title.len()).max().unwrap_or(10);
    for x in findings {
        outln!(
            "  {:<4}  {:<width$}  {}",
            x.status.label(),
            x.title,
            x.found
        );
        if x.status >= Status::Warn {
            outln!("  {:<4}  {:<width$}  why: {}", "", "", x.why);
        }
        if let Some(fix) = &x.fix
            && x.status >= Status::Info
        {
            outln!("  {:<4}  {:<width$}  fix: {fix}", "", "");
        }
    }
    let s = doctor::summary(findings);
    outln!(
        "\n{}",
        s.iter()
            .map(|(st, n)| format!("{n} {}", st.label().to_lowercase()))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

fn print_json(ctx: &Ctx, source: &str, findings: &[Finding]) -> Result<()> {
    let f = ctx.facts;
    let s = doctor::summary(findings);
    let v = serde_json::json!({
        "schema": "rtscope.doctor",
        "schema_version": 1,
        "kernel_release": f.uname.release,
        "machine": f.uname.machine,
        "online_cpus": format_cpu_list(&f.online),
        "rt_cpus": ctx.rt_list(),
        "rt_cpus_source": source,
        "checks": findings,
        "summary": s.iter().map(|(st, n)| (st.label().to_lowercase(), *n)).collect::<std::collections::BTreeMap<_, _>>(),
    });
    super::print_json(&v)?;
    Ok(())
}
