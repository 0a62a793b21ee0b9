//! Virtualization check.

use super::{Check, Ctx, Status, Verdict};

pub static VIRTUALIZATION: Check = Check {
    id: "virtualization",
    area: "platform",
    title: "virtualization",
    why: "Under a hypervisor a virtual CPU can be descheduled at any moment for as long as the host decides (often milliseconds): results describe the VM and its host's load, not the hardware.",
    run: virtualization,
};

fn virtualization(ctx: &Ctx) -> Verdict {
    match ctx.facts.virtualization.as_str() {
        "none" => Verdict::new(Status::Ok, "bare metal"),
        v => Verdict::new(
            Status::Warn,
            if v == "vm" {
                "virtual machine (hypervisor not identified)".to_string()
            } else {
                format!("virtual machine ({v})")
            },
        )
        .fix(
            "measure on bare metal for the hardware's latency; in a VM, pin each vCPU to a dedicated, isolated host CPU",
        ),
    }
}
