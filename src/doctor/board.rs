//! The board check: which machine this is (the device tree's model, the
//! cores from /proc/cpuinfo, the architecture), so the findings below are
//! read for the right hardware. Information only.

use super::{Check, Ctx, Status, Verdict};

pub static BOARD: Check = Check {
    id: "board",
    area: "platform",
    title: "board",
    why: "Latency depends on the board as much as on the kernel: its cores, their clock and, on small boards such as a Raspberry Pi, its power supply and cooling.",
    run: board,
};

fn board(ctx: &Ctx) -> Verdict {
    let f = ctx.facts;
    let b = &f.board;
    let machine = if f.uname.machine.is_empty() {
        String::new()
    } else {
        format!(" ({})", f.uname.machine)
    };
    let mut parts = vec![format!("{}{machine}", b.arch.label())];
    if !b.cores.is_empty() {
        parts.push(b.cores_text());
    }
    if let Some(h) = &b.hardware {
        parts.push(format!("Hardware {h}"));
    }
    if let Some(r) = &b.revision {
        parts.push(format!("revision {r}"));
    }
    let found = match &b.model {
        Some(m) => format!("{m}: {}", parts.join(", ")),
        None => format!("{}; no device-tree model", parts.join(", ")),
    };
    Verdict::new(Status::Info, found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::SysRoot;
    use crate::sysinfo::facts::Facts;

    #[test]
    fn names_the_pi_its_cores_and_architecture() {
        let root = SysRoot::fixture("raspberrypi3");
        let f = Facts::gather(&root);
        let v = board(&Ctx {
            facts: &f,
            rt_cpus: vec![3],
        });
        assert_eq!(v.status, Status::Info);
        assert_eq!(
            v.found,
            "Raspberry Pi 3 Model B Rev 1.2: arm (32-bit) (armv7l), 4 × Cortex-A53, Hardware BCM2835, revision a32082"
        );
    }
}
