//! The `net` load: TCP and UDP over loopback (stress-ng's sock and udp
//! stressors: client/server pairs that connect, send, receive and
//! disconnect). The network stack and its softirqs, without leaving the
//! machine. Ports are chosen per rtscope process so two loads never
//! fight over one.

use super::part::{
    BuildCtx, Kind, OptionDef, Part, STRESS_NG, ValueError, Values, push, stress_ng_base,
};

static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "workers",
        help: "workers of each stressor (sock, udp; 0: one per load CPU)",
        kind: Kind::Count { min: 0, max: 64 },
        default: Some("1"),
    },
    OptionDef {
        name: "port",
        help: "first TCP/UDP port (0: chosen from rtscope's pid, 20000-31999)",
        kind: Kind::Count { min: 0, max: 65000 },
        default: Some("0"),
    },
];

fn build(v: &Values, ctx: &BuildCtx) -> Result<Vec<String>, ValueError> {
    let w = v.workers(ctx);
    let base = match v.count("port") {
        0 => ctx.port_base as u64,
        p if p < 1024 => {
            return Err(ValueError(format!(
                "net: port {p} is privileged: use 1024 or above"
            )));
        }
        p => p,
    };
    if base + 2 * w > 65535 {
        return Err(ValueError(format!(
            "net: ports {base}..{} do not exist",
            base + 2 * w
        )));
    }
    let mut argv = stress_ng_base(ctx);
    push(
        &mut argv,
        &[
            ("--sock", w.to_string()),
            ("--sock-port", base.to_string()),
            ("--udp", w.to_string()),
            ("--udp-port", (base + w).to_string()),
        ],
    );
    Ok(argv)
}

pub static PART: Part = Part {
    name: "net",
    help: "TCP and UDP traffic over loopback (stress-ng --sock --udp)",
    tool: Some(STRESS_NG),
    realtime: false,
    options: OPTIONS,
    build,
};
