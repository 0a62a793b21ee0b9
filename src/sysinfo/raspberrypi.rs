//! Raspberry Pi facts read from files only (never `vcgencmd`): the
//! firmware's throttling and under-voltage state (`get_throttled` in
//! sysfs, the bits of `vcgencmd get_throttled`; else the `rpi_volt` hwmon
//! alarm), and the boot files Raspberry Pi OS keeps in `/boot/firmware/`
//! (bookworm and later) or `/boot/` (before): `config.txt`, read as the
//! firmware applies it to this model, and `cmdline.txt`.

use super::SysRoot;
use std::collections::BTreeMap;

/// The sysfs file of Raspberry Pi OS kernels (Pi 1 to 4).
pub const GET_THROTTLED: &str = "/sys/devices/platform/soc/soc:firmware/get_throttled";

/// One condition the firmware reports, now (bits 0-3) or since boot
/// (bits 16-19).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Throttle {
    UnderVoltage,
    FrequencyCapped,
    Throttled,
    SoftTempLimit,
}

impl Throttle {
    pub const ALL: [Throttle; 4] = [
        Throttle::UnderVoltage,
        Throttle::FrequencyCapped,
        Throttle::Throttled,
        Throttle::SoftTempLimit,
    ];

    /// The bit that says "now"; the "since boot" bit is 16 above it.
    pub fn bit(self) -> u32 {
        match self {
            Throttle::UnderVoltage => 0,
            Throttle::FrequencyCapped => 1,
            Throttle::Throttled => 2,
            Throttle::SoftTempLimit => 3,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Throttle::UnderVoltage => "under-voltage",
            Throttle::FrequencyCapped => "ARM frequency capped",
            Throttle::Throttled => "throttled",
            Throttle::SoftTempLimit => "soft temperature limit",
        }
    }
}

/// The firmware's throttling state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Throttled {
    /// The bit mask (`0x50005`: under-voltage and throttled, now and
    /// since boot).
    pub bits: u32,
    /// False when only the hwmon alarm was readable (under-voltage now).
    pub since_boot_known: bool,
    /// The file it was read from.
    pub source: String,
}

impl Throttled {
    pub fn now(&self) -> Vec<Throttle> {
        Throttle::ALL
            .into_iter()
            .filter(|t| self.bits & (1 << t.bit()) != 0)
            .collect()
    }

    pub fn since_boot(&self) -> Vec<Throttle> {
        Throttle::ALL
            .into_iter()
            .filter(|t| self.bits & (1 << (t.bit() + 16)) != 0)
            .collect()
    }
}

/// The mask as the kernel writes it (`%x`: `50005`), or as vcgencmd does
/// (`throttled=0x50005`): always hexadecimal.
pub fn parse_throttled(text: &str) -> Option<u32> {
    let t = text.trim();
    let t = t.strip_prefix("throttled=").unwrap_or(t);
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    u32::from_str_radix(t, 16).ok()
}

/// The throttling state: [`GET_THROTTLED`], else a `get_throttled` of a
/// firmware device elsewhere under `/sys/devices/platform` (the SoC node
/// is named differently on other models), else the `rpi_volt` hwmon's
/// `in0_lcrit_alarm` (under-voltage now only).
pub fn throttled(root: &SysRoot) -> Option<Throttled> {
    let platform = "/sys/devices/platform";
    let mut candidates = vec![GET_THROTTLED.to_string()];
    for d in root.list(platform) {
        let dir = format!("{platform}/{d}");
        if d.contains("firmware") {
            candidates.push(format!("{dir}/get_throttled"));
        }
        for e in root
            .list(&dir)
            .into_iter()
            .filter(|e| e.contains("firmware"))
        {
            candidates.push(format!("{dir}/{e}/get_throttled"));
        }
    }
    for path in candidates {
        if let Some(bits) = root.read(&path).as_deref().and_then(parse_throttled) {
            return Some(Throttled {
                bits,
                since_boot_known: true,
                source: path,
            });
        }
    }
    for h in root.list("/sys/class/hwmon") {
        let dir = format!("/sys/class/hwmon/{h}");
        if root.read(&format!("{dir}/name")).as_deref() != Some("rpi_volt") {
            continue;
        }
        let source = format!("{dir}/in0_lcrit_alarm");
        if let Some(alarm) = root.read_i64(&source) {
            return Some(Throttled {
                bits: u32::from(alarm != 0),
                since_boot_known: false,
                source,
            });
        }
    }
    None
}

/// `config.txt` as the firmware applies it to one model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PiConfig {
    pub path: String,
    /// Settings that apply, the last one winning: unconditional lines,
    /// lines under `[all]` and under this model's filters (`[pi4]`).
    pub settings: BTreeMap<String, String>,
    /// Sections whose conditions are not the model's (`[HDMI:1]`,
    /// `[gpio4=1]`, `[0x12345678]`, `[tryboot]`, `[EDID=...]`): their lines
    /// were not applied.
    pub skipped_sections: Vec<String>,
}

impl PiConfig {
    /// Read `text` for a board that matches `filters` (from
    /// [`model_filters`]). The firmware's model filters replace each other
    /// and `[all]` clears every condition; `[none]` turns lines off; any
    /// other condition cannot be judged here and its lines are skipped.
    /// `include` lines are not followed.
    pub fn parse(text: &str, path: &str, filters: &[&str]) -> PiConfig {
        let mut c = PiConfig {
            path: path.to_string(),
            ..Default::default()
        };
        let (mut model_ok, mut unknown) = (true, false);
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(section) = line.strip_prefix('[').and_then(|s| s.split_once(']')) {
                let name = section.0.trim().to_lowercase();
                match name.as_str() {
                    "all" => (model_ok, unknown) = (true, false),
                    "none" => model_ok = false,
                    n if MODEL_FILTERS.contains(&n) => model_ok = filters.contains(&n),
                    _ => {
                        unknown = true;
                        let s = format!("[{}]", section.0.trim());
                        if !c.skipped_sections.contains(&s) {
                            c.skipped_sections.push(s);
                        }
                    }
                }
                continue;
            }
            if !model_ok || unknown {
                continue;
            }
            if let Some((k, v)) = line.split_once('=') {
                let value = v.split_whitespace().next().unwrap_or("");
                c.settings.insert(k.trim().to_string(), value.to_string());
            }
        }
        c
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.settings.get(key).map(String::as_str)
    }

    /// A numeric setting (decimal, or hexadecimal with 0x).
    pub fn int(&self, key: &str) -> Option<i64> {
        let v = self.get(key)?;
        match v.strip_prefix("0x") {
            Some(h) => i64::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        }
    }

    /// `force_turbo=1`: the firmware holds the ARM clock at `arm_freq`
    /// whatever the cpufreq governor asks.
    pub fn force_turbo(&self) -> bool {
        self.int("force_turbo").is_some_and(|v| v != 0)
    }
}

/// Every model filter the firmware knows.
pub static MODEL_FILTERS: &[&str] = &[
    "pi0", "pi0w", "pi02", "pi1", "pi2", "pi3", "pi3+", "pi4", "pi400", "pi5", "pi500", "cm1",
    "cm3", "cm3+", "cm4", "cm4s", "cm5",
];

/// The model filters of `config.txt` that match a device-tree model
/// such as "Raspberry Pi 4 Model B Rev 1.4" (`[pi4]`), "Raspberry Pi 400
/// Rev 1.0" (`[pi4]` and `[pi400]`) or "Raspberry Pi Compute Module 4
/// Rev 1.0" (`[pi4]` and `[cm4]`).
pub fn model_filters(model: &str) -> Vec<&'static str> {
    let Some(m) = model.strip_prefix("Raspberry Pi ") else {
        return Vec::new();
    };
    let plus = m.contains(" Plus");
    if let Some(cm) = m.strip_prefix("Compute Module ") {
        return match cm.split_whitespace().next().unwrap_or("") {
            "5" => vec!["pi5", "cm5"],
            "4S" => vec!["pi4", "cm4s"],
            "4" => vec!["pi4", "cm4"],
            "3" if plus => vec!["pi3", "cm3+"],
            "3" => vec!["pi3", "cm3"],
            _ => vec!["pi1", "cm1"],
        };
    }
    if let Some(zero) = m.strip_prefix("Zero") {
        return match zero.split_whitespace().next() {
            Some("2") => vec!["pi0", "pi02"],
            Some("W") => vec!["pi0", "pi0w"],
            _ => vec!["pi0"],
        };
    }
    match m.split_whitespace().next().unwrap_or("") {
        "500" | "500+" => vec!["pi5", "pi500"],
        "5" => vec!["pi5"],
        "400" => vec!["pi4", "pi400"],
        "4" => vec!["pi4"],
        "3" if plus => vec!["pi3", "pi3+"],
        "3" => vec!["pi3"],
        "2" => vec!["pi2"],
        _ => vec!["pi1"],
    }
}

/// A Raspberry Pi's firmware state and boot files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RaspberryPi {
    pub throttled: Option<Throttled>,
    /// Where config.txt and cmdline.txt are: `/boot/firmware` or `/boot`.
    pub boot_dir: Option<String>,
    pub config: Option<PiConfig>,
    /// `cmdline.txt`: the command line the next boot will use (the
    /// firmware adds its own words in front).
    pub cmdline_txt: Option<String>,
}

/// The facts of the Raspberry Pi whose device-tree model is `model`.
/// `/boot/firmware` wins when it holds config.txt: bookworm leaves a
/// `/boot/config.txt` that only says the file has moved.
pub fn raspberry_pi(root: &SysRoot, model: &str) -> RaspberryPi {
    let boot_dir = ["/boot/firmware", "/boot"]
        .into_iter()
        .find(|d| {
            root.exists(&format!("{d}/config.txt")) || root.exists(&format!("{d}/cmdline.txt"))
        })
        .map(String::from);
    let config = boot_dir.as_ref().and_then(|d| {
        let path = format!("{d}/config.txt");
        let text = root.read(&path)?;
        Some(PiConfig::parse(&text, &path, &model_filters(model)))
    });
    let cmdline_txt = boot_dir
        .as_ref()
        .and_then(|d| root.read(&format!("{d}/cmdline.txt")))
        .map(|s| s.lines().next().unwrap_or("").trim().to_string());
    RaspberryPi {
        throttled: throttled(root),
        boot_dir,
        config,
        cmdline_txt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    fn fixture(name: &str) -> SysRoot {
        SysRoot::fixture(name)
    }

    #[test]
    fn throttled_bits_as_the_kernel_and_vcgencmd_write_them() {
        assert_eq!(parse_throttled("50005\n"), Some(0x50005));
        assert_eq!(parse_throttled("throttled=0x50000"), Some(0x50000));
        assert_eq!(parse_throttled("0"), Some(0));
        assert_eq!(parse_throttled("80008"), Some(0x80008), "hex, not decimal");
        assert_eq!(parse_throttled("junk"), None);
        let t = Throttled {
            bits: 0x50005,
            since_boot_known: true,
            source: String::new(),
        };
        assert_eq!(t.now(), vec![Throttle::UnderVoltage, Throttle::Throttled]);
        assert_eq!(
            t.since_boot(),
            vec![Throttle::UnderVoltage, Throttle::Throttled]
        );
    }

    #[test]
    fn a_pi_3_under_raspbian_buster_reads_boot_and_its_under_voltage() {
        let root = fixture("raspberrypi3");
        let pi = raspberry_pi(&root, "Raspberry Pi 3 Model B Rev 1.2");
        assert_eq!(pi.boot_dir.as_deref(), Some("/boot"));
        let t = pi.throttled.unwrap();
        assert_eq!((t.bits, t.source.as_str()), (0x50005, GET_THROTTLED));
        let c = pi.config.unwrap();
        assert_eq!(c.get("dtparam"), Some("audio=on"));
        assert_eq!(
            c.get("max_framebuffers"),
            None,
            "only under [pi4], and this is a Pi 3"
        );
        assert!(!c.force_turbo());
        assert!(
            pi.cmdline_txt
                .unwrap()
                .starts_with("console=serial0,115200")
        );
    }

    #[test]
    fn a_pi_4_under_bookworm_reads_boot_firmware() {
        let root = fixture("raspberrypi4");
        let pi = raspberry_pi(&root, "Raspberry Pi 4 Model B Rev 1.1");
        assert_eq!(pi.boot_dir.as_deref(), Some("/boot/firmware"));
        assert_eq!(pi.throttled.unwrap().bits, 0);
        let c = pi.config.unwrap();
        assert_eq!(c.path, "/boot/firmware/config.txt");
        assert_eq!(c.int("arm_boost"), Some(1));
        assert_eq!(c.get("otg_mode"), None, "only under [cm4]");
        assert_eq!(c.get("dtoverlay"), Some("dwc2"), "[all] again, last wins");
        assert!(c.skipped_sections.is_empty());
    }

    #[test]
    fn sections_apply_to_their_models_only() {
        let text = "arm_freq=1500\n[pi4]\nforce_turbo=1 # hold it\narm_freq=1800\n\
                    [pi3]\narm_freq=1200\n[HDMI:1]\nhdmi_group=2\n[all]\narm_freq_min=600\n\
                    [none]\ngpu_mem=16\n";
        let pi4 = PiConfig::parse(text, "c", &model_filters("Raspberry Pi 4 Model B Rev 1.4"));
        assert!(pi4.force_turbo());
        assert_eq!(pi4.int("arm_freq"), Some(1800));
        assert_eq!(pi4.int("arm_freq_min"), Some(600));
        assert_eq!(pi4.get("hdmi_group"), None);
        assert_eq!(pi4.get("gpu_mem"), None);
        assert_eq!(pi4.skipped_sections, vec!["[HDMI:1]".to_string()]);
        let pi3 = PiConfig::parse(text, "c", &model_filters("Raspberry Pi 3 Model B Rev 1.2"));
        assert!(!pi3.force_turbo());
        assert_eq!(pi3.int("arm_freq"), Some(1200));
    }

    #[test]
    fn model_filters_of_each_family() {
        for (model, want) in [
            ("Raspberry Pi 4 Model B Rev 1.4", vec!["pi4"]),
            ("Raspberry Pi 400 Rev 1.0", vec!["pi4", "pi400"]),
            ("Raspberry Pi Compute Module 4 Rev 1.0", vec!["pi4", "cm4"]),
            ("Raspberry Pi 5 Model B Rev 1.0", vec!["pi5"]),
            ("Raspberry Pi 3 Model B Plus Rev 1.3", vec!["pi3", "pi3+"]),
            ("Raspberry Pi Zero 2 W Rev 1.0", vec!["pi0", "pi02"]),
            ("Raspberry Pi Zero W Rev 1.1", vec!["pi0", "pi0w"]),
            ("Raspberry Pi Model B Plus Rev 1.2", vec!["pi1"]),
            ("Hardkernel ODROID-N2", vec![]),
        ] {
            assert_eq!(model_filters(model), want, "{model}");
        }
    }

    #[test]
    fn other_firmware_nodes_and_the_hwmon_alarm() {
        let t = FakeTree::new(&[(
            "/sys/devices/platform/soc@107c000000/soc@107c000000:firmware/get_throttled",
            "20002\n",
        )]);
        let th = throttled(&t.root()).unwrap();
        assert_eq!(th.now(), vec![Throttle::FrequencyCapped]);
        assert!(th.source.contains("soc@107c000000:firmware"));
        let h = FakeTree::new(&[
            ("/sys/class/hwmon/hwmon0/name", "cpu_thermal\n"),
            ("/sys/class/hwmon/hwmon1/name", "rpi_volt\n"),
            ("/sys/class/hwmon/hwmon1/in0_lcrit_alarm", "1\n"),
        ]);
        let th = throttled(&h.root()).unwrap();
        assert_eq!(th.now(), vec![Throttle::UnderVoltage]);
        assert!(!th.since_boot_known);
        assert_eq!(throttled(&FakeTree::new::<&str, &str>(&[]).root()), None);
    }
}
