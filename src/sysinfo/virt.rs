//! Virtualization: whether the system runs under a hypervisor, and which,
//! from the CPU's `hypervisor` flag, `/sys/hypervisor/type`, the DMI
//! vendor and product names and the device tree (qemu's ARM `virt`
//! machine, a `hypervisor` node).

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
    // qemu's `-M virt` ARM machine says so in its device tree.
    if root
        .read("/proc/device-tree/compatible")
        .is_some_and(|c| c.contains("linux,dummy-virt"))
    {
        return "qemu".into();
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

    #[test]
    fn qemu_virt_arm_machine_from_the_device_tree() {
        // As the arm64 lab guest's kernel writes it (NUL-terminated).
        let t = FakeTree::new(&[("/proc/cpuinfo", "Features\t: fp asimd\n")]);
        assert_eq!(virtualization(&t.root()), "none");
        t.write("/proc/device-tree/compatible", "linux,dummy-virt\0");
        assert_eq!(virtualization(&t.root()), "qemu");
    }
}
