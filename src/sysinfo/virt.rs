//! Virtualization: whether the system runs under a hypervisor, and which,
//! from the CPU's `hypervisor` flag, `/sys/hypervisor/type`, the DMI
//! vendor and product names and the device tree.

use super::SysRoot;

/// "none" on bare metal, else the hypervisor's name when known, or "vm".
pub fn virtualization(root: &SysRoot) -> String {
    if let Some(t) = root.read("/sys/hypervisor/type")
        && !t.is_empty()
    {
        return t;
    }
    let dmi = ["sys_vendor", "product_name", "bios_vendor"]
        .iter()
        .filter_map(|f| root.read(&format!("/sys/class/dmi/id/{f}")))
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    for (needle, name) in [
        ("kvm", "kvm"),
        ("qemu", "qemu"),
        ("vmware", "vmware"),
        ("virtualbox", "virtualbox"),
        ("innotek", "virtualbox"),
        ("microsoft corporation", "hyperv"),
        ("xen", "xen"),
        ("amazon ec2", "kvm"),
        ("google compute engine", "kvm"),
        ("bochs", "qemu"),
        ("parallels", "parallels"),
        ("firecracker", "firecracker"),
    ] {
        if dmi.contains(needle) {
            return name.into();
        }
    }
    let cpuinfo = root.read("/proc/cpuinfo").unwrap_or_default();
    let hypervisor_flag = cpuinfo.lines().any(|l| {
        (l.starts_with("flags") || l.starts_with("Features"))
            && l.split_whitespace().any(|w| w == "hypervisor")
    });
    if root.exists("/proc/device-tree/hypervisor") || hypervisor_flag {
        return "vm".into();
    }
    "none".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn detects() {
        let t = FakeTree::new(&[("/proc/cpuinfo", "flags\t: fpu vme\n")]);
        assert_eq!(virtualization(&t.root()), "none");
        t.write("/proc/cpuinfo", "flags\t: fpu hypervisor vme\n");
        assert_eq!(virtualization(&t.root()), "vm");
        t.write("/sys/class/dmi/id/sys_vendor", "QEMU\n");
        assert_eq!(virtualization(&t.root()), "qemu");
        t.write("/sys/hypervisor/type", "xen\n");
        assert_eq!(virtualization(&t.root()), "xen");
    }
}
