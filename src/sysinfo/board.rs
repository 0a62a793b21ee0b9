//! The board: the CPU architecture (from uname's machine, else from
//! `/proc/cpuinfo`), the device tree's model (`/proc/device-tree/model`,
//! NUL-terminated), and what `/proc/cpuinfo` says on ARM: `Hardware`,
//! `Revision`, `Model` and each processor's `CPU implementer` / `CPU part`
//! (named as cores, e.g. Cortex-A72). Read-only, below a [`SysRoot`]; the
//! board's serial number is not kept.

use super::SysRoot;

/// The instruction set the kernel runs, as far as latency advice goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arch {
    X86,
    /// AArch64 kernel (`aarch64`).
    Arm64,
    /// 32-bit ARM kernel (`armv7l`, `armv6l`), also on ARMv8 cores.
    Arm32,
    RiscV,
    Other,
    #[default]
    Unknown,
}

impl Arch {
    /// From uname's machine; `cpuinfo` decides when the machine is empty.
    pub fn detect(machine: &str, cpuinfo: &str) -> Arch {
        let m = machine.trim();
        match m {
            "" => Arch::from_cpuinfo(cpuinfo),
            "x86_64" | "amd64" | "i386" | "i486" | "i586" | "i686" => Arch::X86,
            "aarch64" | "aarch64_be" | "arm64" => Arch::Arm64,
            _ if m.starts_with("arm") => Arch::Arm32,
            _ if m.starts_with("riscv") => Arch::RiscV,
            _ => Arch::Other,
        }
    }

    /// From the fields `/proc/cpuinfo` has on each architecture: ARM's
    /// `CPU architecture` (8 under a 64-bit kernel), x86's `vendor_id` and
    /// `flags`, RISC-V's `isa`.
    pub fn from_cpuinfo(cpuinfo: &str) -> Arch {
        let value = |key: &str| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        if let Some(a) = value("CPU architecture") {
            let model = value("model name").unwrap_or_default();
            return if a == "8" && !model.starts_with("ARMv7") {
                Arch::Arm64
            } else {
                Arch::Arm32
            };
        }
        if value("vendor_id").is_some() || value("flags").is_some() {
            return Arch::X86;
        }
        if value("isa").is_some_and(|v| v.starts_with("rv")) {
            return Arch::RiscV;
        }
        Arch::Unknown
    }

    pub fn is_arm(self) -> bool {
        matches!(self, Arch::Arm64 | Arch::Arm32)
    }

    pub fn label(self) -> &'static str {
        match self {
            Arch::X86 => "x86",
            Arch::Arm64 => "arm64",
            Arch::Arm32 => "arm (32-bit)",
            Arch::RiscV => "riscv",
            Arch::Other => "other",
            Arch::Unknown => "unknown",
        }
    }
}

/// One kind of CPU core and the CPUs that are one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Core {
    /// `CPU implementer` (0x41 is Arm).
    pub implementer: String,
    /// `CPU part` (0xd08 is a Cortex-A72 from Arm).
    pub part: String,
    pub cpus: Vec<usize>,
}

impl Core {
    /// The core's name when the implementer and part are known.
    pub fn name(&self) -> Option<&'static str> {
        let id = (
            u32::from_str_radix(self.implementer.trim_start_matches("0x"), 16).ok()?,
            u32::from_str_radix(self.part.trim_start_matches("0x"), 16).ok()?,
        );
        CORE_NAMES
            .iter()
            .find(|(i, p, _)| (*i, *p) == id)
            .map(|c| c.2)
    }
}

/// (implementer, part, name) of the cores on common boards.
static CORE_NAMES: &[(u32, u32, &str)] = &[
    (0x41, 0xb76, "ARM1176"),
    (0x41, 0xc05, "Cortex-A5"),
    (0x41, 0xc07, "Cortex-A7"),
    (0x41, 0xc09, "Cortex-A9"),
    (0x41, 0xc0d, "Cortex-A12"),
    (0x41, 0xc0e, "Cortex-A17"),
    (0x41, 0xc0f, "Cortex-A15"),
    (0x41, 0xd03, "Cortex-A53"),
    (0x41, 0xd04, "Cortex-A35"),
    (0x41, 0xd05, "Cortex-A55"),
    (0x41, 0xd07, "Cortex-A57"),
    (0x41, 0xd08, "Cortex-A72"),
    (0x41, 0xd09, "Cortex-A73"),
    (0x41, 0xd0a, "Cortex-A75"),
    (0x41, 0xd0b, "Cortex-A76"),
    (0x41, 0xd0c, "Neoverse-N1"),
    (0x41, 0xd0d, "Cortex-A77"),
    (0x41, 0xd40, "Neoverse-V1"),
    (0x41, 0xd41, "Cortex-A78"),
    (0x41, 0xd44, "Cortex-X1"),
    (0x41, 0xd46, "Cortex-A510"),
    (0x41, 0xd47, "Cortex-A710"),
    (0x41, 0xd48, "Cortex-X2"),
    (0x41, 0xd49, "Neoverse-N2"),
];

/// What the board says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Board {
    pub arch: Arch,
    /// The device tree's model, else cpuinfo's `Model` line
    /// (e.g. "Raspberry Pi 4 Model B Rev 1.4").
    pub model: Option<String>,
    /// cpuinfo's `Hardware` (BCM2835 on every Raspberry Pi since Linux
    /// 4.9 whatever its SoC; absent on recent arm64 kernels).
    pub hardware: Option<String>,
    /// cpuinfo's `Revision` (a Raspberry Pi's revision code, e.g. c03111).
    pub revision: Option<String>,
    /// The kinds of cores, in the order of their first CPU.
    pub cores: Vec<Core>,
}

impl Board {
    pub fn is_raspberry_pi(&self) -> bool {
        self.model
            .as_deref()
            .is_some_and(|m| m.starts_with("Raspberry Pi"))
    }

    /// "4 × Cortex-A72", "4 × Cortex-A55 + 4 × Cortex-A76".
    pub fn cores_text(&self) -> String {
        self.cores
            .iter()
            .map(|c| {
                let name = c
                    .name()
                    .map(String::from)
                    .unwrap_or_else(|| format!("core {}:{}", c.implementer, c.part));
                format!("{} × {name}", c.cpus.len())
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// The board below `root`; `machine` is uname's.
pub fn board(root: &SysRoot, machine: &str) -> Board {
    let cpuinfo = root.read("/proc/cpuinfo").unwrap_or_default();
    let mut b = parse_cpuinfo(&cpuinfo);
    b.arch = Arch::detect(machine, &cpuinfo);
    if let Some(m) = device_tree_model(root) {
        b.model = Some(m);
    }
    b
}

/// `/proc/device-tree/model` without its trailing NUL.
pub fn device_tree_model(root: &SysRoot) -> Option<String> {
    let raw = root.read_bytes("/proc/device-tree/model")?;
    let text = String::from_utf8_lossy(&raw);
    let m = text.trim_end_matches('\0').trim();
    (!m.is_empty()).then(|| m.to_string())
}

/// The board's lines of `/proc/cpuinfo` (ARM's layout: one block per
/// processor, then `Hardware`, `Revision`, `Serial`, `Model`).
pub fn parse_cpuinfo(text: &str) -> Board {
    let mut b = Board::default();
    let mut cpu: Option<usize> = None;
    let mut implementer = String::new();
    let add = |b: &mut Board, cpu: Option<usize>, imp: &str, part: &str| {
        let Some(c) = cpu else { return };
        match b
            .cores
            .iter_mut()
            .find(|k| k.implementer == imp && k.part == part)
        {
            Some(k) => k.cpus.push(c),
            None => b.cores.push(Core {
                implementer: imp.to_string(),
                part: part.to_string(),
                cpus: vec![c],
            }),
        }
    };
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        let some = || (!v.is_empty()).then(|| v.to_string());
        match k.trim() {
            "processor" => cpu = v.parse().ok(),
            "CPU implementer" => implementer = v.to_string(),
            "CPU part" => add(&mut b, cpu, &implementer, v),
            "Hardware" => b.hardware = some(),
            "Revision" => b.revision = some(),
            "Model" => b.model = some(),
            _ => {}
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    fn fixture(name: &str) -> SysRoot {
        SysRoot::fixture(name)
    }

    #[test]
    fn a_raspberry_pi_4_under_a_64_bit_kernel() {
        let b = board(&fixture("raspberrypi4"), "");
        assert_eq!(b.arch, Arch::Arm64, "CPU architecture: 8");
        assert_eq!(b.model.as_deref(), Some("Raspberry Pi 4 Model B Rev 1.1"));
        assert!(b.is_raspberry_pi());
        assert_eq!(b.hardware, None, "no Hardware line on this arm64 kernel");
        assert_eq!(b.revision.as_deref(), Some("c03111"));
        assert_eq!(b.cores_text(), "4 × Cortex-A72");
        assert_eq!(b.cores[0].cpus, vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_raspberry_pi_3_under_a_32_bit_kernel() {
        let b = board(&fixture("raspberrypi3"), "armv7l");
        assert_eq!(b.arch, Arch::Arm32);
        assert_eq!(b.model.as_deref(), Some("Raspberry Pi 3 Model B Rev 1.2"));
        assert_eq!(b.hardware.as_deref(), Some("BCM2835"));
        assert_eq!(b.revision.as_deref(), Some("a32082"));
        assert_eq!(b.cores_text(), "4 × Cortex-A53");
        // The cpuinfo alone says 32-bit too ("CPU architecture: 7").
        let cpuinfo = fixture("raspberrypi3").read("/proc/cpuinfo").unwrap();
        assert_eq!(Arch::from_cpuinfo(&cpuinfo), Arch::Arm32);
    }

    #[test]
    fn architecture_from_machine_or_cpuinfo() {
        assert_eq!(Arch::detect("x86_64", ""), Arch::X86);
        assert_eq!(Arch::detect("aarch64", "flags : fpu"), Arch::Arm64);
        assert_eq!(Arch::detect("armv6l", ""), Arch::Arm32);
        assert_eq!(Arch::detect("riscv64", ""), Arch::RiscV);
        assert_eq!(Arch::detect("", "vendor_id\t: GenuineIntel\n"), Arch::X86);
        assert_eq!(
            Arch::detect("", "processor : 0\nisa : rv64imafdc\n"),
            Arch::RiscV
        );
        // A 32-bit kernel on an ARMv8 core says ARMv7.
        assert_eq!(
            Arch::from_cpuinfo("model name\t: ARMv7 Processor rev 3 (v7l)\nCPU architecture: 8\n"),
            Arch::Arm32
        );
        assert_eq!(Arch::detect("", ""), Arch::Unknown);
        assert!(Arch::Arm32.is_arm() && !Arch::X86.is_arm());
    }

    #[test]
    fn device_tree_model_wins_and_a_pc_has_none() {
        let t = FakeTree::new(&[
            ("/proc/cpuinfo", "processor\t: 0\nModel\t\t: from cpuinfo\n"),
            (
                "/proc/device-tree/model",
                "Raspberry Pi 5 Model B Rev 1.0\0",
            ),
        ]);
        let b = board(&t.root(), "aarch64");
        assert_eq!(b.model.as_deref(), Some("Raspberry Pi 5 Model B Rev 1.0"));
        assert!(b.cores.is_empty() && b.cores_text().is_empty());
        let pc = FakeTree::new(&[(
            "/proc/cpuinfo",
            "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n",
        )]);
        let b = board(&pc.root(), "");
        assert_eq!((b.arch, b.is_raspberry_pi()), (Arch::X86, false));
        assert_eq!(b.model, None);
    }

    #[test]
    fn big_little_cores_and_unknown_parts() {
        let mut text = String::new();
        for (cpu, part) in [(0, "0xd05"), (1, "0xd05"), (2, "0xd0b"), (3, "0xfff")] {
            text += &format!("processor\t: {cpu}\nCPU implementer\t: 0x41\nCPU part\t: {part}\n\n");
        }
        let b = parse_cpuinfo(&text);
        assert_eq!(
            b.cores_text(),
            "2 × Cortex-A55 + 1 × Cortex-A76 + 1 × core 0x41:0xfff"
        );
    }
}
