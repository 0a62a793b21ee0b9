//! The boots a study needs: each cell's kernel (a preemption model or a
//! release) and kernel arguments (`cmdline = "isolcpus=1 nohz_full=1"`),
//! and whether the running system is that boot. A cell counts only on a
//! boot that matches it: the kernel, every argument of the study's
//! command-line dimension as the cell has it (an argument the study
//! varies and the cell lacks must be absent), and what those arguments
//! do taking effect (the CPUs isolcpus and nohz_full took, the model
//! `preempt=` chose). Pure.

use super::matrix::{Cell, Slot};
use super::spec::{Setting, Spec};
use crate::sysinfo::cmdline::{kernel_params, param_name};
use crate::sysinfo::kernel_match::{self, Kernel};
use crate::units::{format_cpu_list, parse_cpu_list};
use thiserror::Error;

/// Arguments a study may not set: the boot loader's and the root's.
const NOT_SETTABLE: &[&str] = &["BOOT_IMAGE", "initrd", "root"];

/// One kernel argument: `name` or `name=value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// The name with `-` written `_` (the kernel takes both).
    pub name: String,
    pub value: Option<String>,
    /// As written.
    pub text: String,
}

/// Why a command line of the study file is refused (each names the
/// argument as written, or its name).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ArgError {
    #[error("'{0}': quotes and backslashes are not taken in a command line here")]
    Quoted(String),
    #[error("'{0}' is not a kernel argument")]
    NotAnArgument(String),
    #[error("{0}= is the boot loader's: the study keeps the one the machine boots with")]
    Loader(String),
    #[error("{0} is given twice")]
    Twice(String),
}

/// How the running boot differs from the one a cell needs.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Mismatch {
    #[error("the kernel is {running}, not {wanted}")]
    Kernel { running: String, wanted: String },
    /// An argument the study varies, which this cell's boot lacks.
    #[error("the command line has {name}, which this boot has not")]
    Extra { name: String },
    #[error("{arg} is not on the command line")]
    Missing { arg: String },
    /// The argument with another value.
    #[error("the command line has {running}, not {arg}")]
    Other { running: String, arg: String },
    /// On the command line, but the kernel shows otherwise (`shown`).
    #[error("{arg} is on the command line but not in effect: {shown} says {effect}")]
    NoEffect {
        arg: String,
        shown: &'static str,
        effect: String,
    },
    #[error("{arg} is on the command line but the preemption model is {model}")]
    Preempt { arg: String, model: String },
}

/// The kernel arguments in `text`, split at white space.
pub fn parse_args(text: &str) -> Result<Vec<Arg>, ArgError> {
    let mut out: Vec<Arg> = Vec::new();
    for t in text.split_whitespace() {
        if t.contains(['"', '\'', '\\']) {
            return Err(ArgError::Quoted(t.to_string()));
        }
        let (name, value) = match t.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (t, None),
        };
        if name.is_empty() || t == "--" {
            return Err(ArgError::NotAnArgument(t.to_string()));
        }
        if NOT_SETTABLE.contains(&name) {
            return Err(ArgError::Loader(name.to_string()));
        }
        let name = param_name(name);
        if out.iter().any(|a| a.name == name) {
            return Err(ArgError::Twice(name));
        }
        out.push(Arg {
            name,
            value,
            text: t.to_string(),
        });
    }
    Ok(out)
}

/// The last value of argument `name` on a running command line (a flag
/// reads as `Some(None)`); arguments after `--` are init's.
fn running_value(cmdline: &str, name: &str) -> Option<Option<String>> {
    kernel_params(cmdline)
        .filter(|(n, _)| n == name)
        .last()
        .map(|(_, v)| v.map(str::to_string))
}

/// The boot one cell needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootNeed {
    /// A kernel requirement (`rt`, `vanilla`, `"6.1*"`), if any.
    pub kernel: Option<String>,
    /// The arguments the cell's boot has.
    pub args: Vec<Arg>,
}

/// A study's boots: the arguments it varies, and each cell's need.
#[derive(Clone, Debug, PartialEq)]
pub struct Boots {
    /// Every argument name some cell's command line sets: on a matching
    /// boot each has exactly the cell's value, or is absent.
    pub managed: Vec<String>,
    /// Per cell, in matrix order.
    pub needs: Vec<BootNeed>,
}

impl BootNeed {
    fn of(cell: &Cell, fixed: &[Setting]) -> BootNeed {
        BootNeed {
            kernel: cell.kernel(fixed),
            args: cell
                .cmdline(fixed)
                .map(|t| parse_args(&t).unwrap_or_default())
                .unwrap_or_default(),
        }
    }

    /// The arguments as written, in order.
    pub fn args_text(&self) -> String {
        let t: Vec<&str> = self.args.iter().map(|a| a.text.as_str()).collect();
        t.join(" ")
    }
}

impl Boots {
    /// The boots of `spec`'s `cells`.
    pub fn of(spec: &Spec, cells: &[Cell]) -> Boots {
        let needs: Vec<BootNeed> = cells.iter().map(|c| BootNeed::of(c, &spec.fixed)).collect();
        let mut managed: Vec<String> = Vec::new();
        for a in needs.iter().flat_map(|n| &n.args) {
            if !managed.contains(&a.name) {
                managed.push(a.name.clone());
            }
        }
        Boots { managed, needs }
    }

    /// Whether the study names any boot at all (a kernel or arguments).
    pub fn any(&self) -> bool {
        self.needs
            .iter()
            .any(|n| n.kernel.is_some() || !n.args.is_empty())
            || !self.managed.is_empty()
    }

    /// How people name a need: `kernel rt, command line "isolcpus=1"`,
    /// `command line without isolcpus, nohz_full`, or `any boot`.
    pub fn label(&self, need: &BootNeed) -> String {
        let mut parts = Vec::new();
        if let Some(k) = &need.kernel {
            parts.push(format!("kernel {k}"));
        }
        if !need.args.is_empty() {
            parts.push(format!("command line \"{}\"", need.args_text()));
        } else if !self.managed.is_empty() {
            parts.push(format!("command line without {}", self.managed.join(", ")));
        }
        if parts.is_empty() {
            return "any boot".into();
        }
        parts.join(", ")
    }

    /// The distinct needs, in the order of `cells` (each with its label).
    pub fn distinct(&self, cells: impl Iterator<Item = usize>) -> Vec<(&BootNeed, String)> {
        let mut out: Vec<(&BootNeed, String)> = Vec::new();
        for c in cells {
            let n = &self.needs[c];
            if !out.iter().any(|(m, _)| *m == n) {
                out.push((n, self.label(n)));
            }
        }
        out
    }

    /// `slots` in the order a round that reboots measures them: those
    /// the running boot (`kernel`) serves first, then each
    /// configuration's, in the order the schedule first needs it (as
    /// [`super::reboot::decide`] takes them with [`Self::distinct`]).
    /// Each group has its configuration's label, `None` for this boot.
    pub fn by_boot<'s>(
        &self,
        slots: &'s [Slot],
        kernel: &Kernel,
    ) -> Vec<(Option<String>, Vec<&'s Slot>)> {
        let (here, rest): (Vec<&Slot>, Vec<&Slot>) = slots
            .iter()
            .partition(|s| self.check(&self.needs[s.cell], kernel).is_ok());
        let mut groups = Vec::new();
        if !here.is_empty() {
            groups.push((None, here));
        }
        for (need, config) in self.distinct(rest.iter().map(|s| s.cell)) {
            let of = rest
                .iter()
                .copied()
                .filter(|s| self.needs[s.cell] == *need)
                .collect();
            groups.push((Some(config), of));
        }
        groups
    }

    /// Whether the running boot is the one `need` asks for: `Err` says
    /// what differs.
    pub fn check(&self, need: &BootNeed, kernel: &Kernel) -> Result<(), Mismatch> {
        if let Some(k) = &need.kernel
            && !kernel_match::satisfies(kernel, k)
        {
            return Err(Mismatch::Kernel {
                running: kernel.describe(),
                wanted: k.clone(),
            });
        }
        for m in &self.managed {
            let wanted = need.args.iter().find(|a| &a.name == m);
            let running = running_value(&kernel.cmdline, m);
            match (wanted, running) {
                (None, None) => {}
                (None, Some(_)) => {
                    return Err(Mismatch::Extra { name: m.clone() });
                }
                (Some(a), None) => {
                    return Err(Mismatch::Missing {
                        arg: a.text.clone(),
                    });
                }
                (Some(a), Some(v)) if v != a.value => {
                    let had = v.map(|v| format!("{m}={v}")).unwrap_or_else(|| m.clone());
                    return Err(Mismatch::Other {
                        running: had,
                        arg: a.text.clone(),
                    });
                }
                (Some(a), Some(_)) => effect(a, kernel)?,
            }
        }
        Ok(())
    }
}

/// Whether an argument on the command line took effect, where the kernel
/// shows it.
fn effect(a: &Arg, kernel: &Kernel) -> Result<(), Mismatch> {
    let value = a.value.as_deref().unwrap_or("");
    let cpus = |shown: &'static str, have: &[usize]| -> Result<(), Mismatch> {
        // isolcpus=[flags,]CPUS: the flags are words, the CPUs the rest.
        let list: Vec<&str> = value
            .split(',')
            .filter(|p| !p.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
            .collect();
        let Ok(want) = parse_cpu_list(&list.join(",")) else {
            return Ok(());
        };
        if want != have {
            let have = if have.is_empty() {
                "no CPU".to_string()
            } else {
                format_cpu_list(have)
            };
            return Err(Mismatch::NoEffect {
                arg: a.text.clone(),
                shown,
                effect: have,
            });
        }
        Ok(())
    };
    match a.name.as_str() {
        "isolcpus" => cpus("/sys/devices/system/cpu/isolated", &kernel.isolated_cpus),
        "nohz_full" => cpus("/sys/devices/system/cpu/nohz_full", &kernel.nohz_full_cpus),
        "preempt" => match kernel_match::model_named(value) {
            Some(m) if !kernel.preemption_model.is(m) => Err(Mismatch::Preempt {
                arg: a.text.clone(),
                model: kernel.preemption_model.to_string(),
            }),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::matrix;
    use crate::study::spec::parse;

    const TWO_BY_TWO: &str = r#"
name = "b"
duration = 5
kernel = ["vanilla", "rt"]
cmdline = ["", "isolcpus=1 nohz_full=1"]
"#;

    fn kernel(model: &str, cmdline: &str, isolated: &[usize], nohz: &[usize]) -> Kernel {
        Kernel {
            cmdline: cmdline.into(),
            isolated_cpus: isolated.to_vec(),
            nohz_full_cpus: nohz.to_vec(),
            ..Kernel::plain("6.1.0-27-amd64", model)
        }
    }

    #[test]
    fn arguments_are_read_and_refused() {
        let a = parse_args("isolcpus=nohz,domain,1 threadirqs  rcu-nocbs=1").unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(
            a[1],
            Arg {
                name: "threadirqs".into(),
                value: None,
                text: "threadirqs".into()
            }
        );
        assert_eq!(a[2].name, "rcu_nocbs");
        assert!(parse_args("").unwrap().is_empty());
        for bad in ["root=/dev/sda", "a=1 a=2", "x=\"a b\"", "--", "=1"] {
            assert!(parse_args(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_cell_counts_only_on_its_boot_with_its_arguments_in_effect() {
        let spec = parse(TWO_BY_TWO, "b.toml").unwrap();
        let cells = matrix::cells(&spec);
        let b = Boots::of(&spec, &cells);
        assert_eq!(b.managed, ["isolcpus", "nohz_full"]);
        assert!(b.any());
        let labels: Vec<String> = b.distinct(0..4).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            labels,
            [
                "kernel vanilla, command line without isolcpus, nohz_full",
                "kernel vanilla, command line \"isolcpus=1 nohz_full=1\"",
                "kernel rt, command line without isolcpus, nohz_full",
                "kernel rt, command line \"isolcpus=1 nohz_full=1\"",
            ]
        );
        let plain = kernel("voluntary", "root=/dev/vda quiet", &[], &[]);
        assert_eq!(b.check(&b.needs[0], &plain), Ok(()));
        let e = b.check(&b.needs[1], &plain).unwrap_err().to_string();
        assert_eq!(e, "isolcpus=1 is not on the command line");
        let e = b.check(&b.needs[2], &plain).unwrap_err().to_string();
        assert!(e.contains("not rt"), "{e}");
        let isol = kernel(
            "voluntary",
            "root=/dev/vda isolcpus=1 nohz_full=1",
            &[1],
            &[1],
        );
        assert_eq!(b.check(&b.needs[1], &isol), Ok(()));
        // Never counted under the label without isolation.
        let e = b.check(&b.needs[0], &isol).unwrap_err().to_string();
        assert_eq!(e, "the command line has isolcpus, which this boot has not");
        // On the command line, not in effect (a kernel without NO_HZ_FULL).
        let half = kernel("voluntary", "isolcpus=1 nohz_full=1", &[1], &[]);
        let e = b.check(&b.needs[1], &half).unwrap_err().to_string();
        assert_eq!(
            e,
            "nohz_full=1 is on the command line but not in effect: /sys/devices/system/cpu/nohz_full says no CPU"
        );
        let other = kernel("voluntary", "isolcpus=0 nohz_full=1", &[0], &[1]);
        let e = b.check(&b.needs[1], &other).unwrap_err().to_string();
        assert_eq!(e, "the command line has isolcpus=0, not isolcpus=1");
    }

    #[test]
    fn flags_and_preempt_take_effect_or_not() {
        let spec = parse(
            "name = \"p\"\nduration = 5\ncmdline = [\"preempt=full isolcpus=domain,managed_irq,1\"]\n",
            "p.toml",
        )
        .unwrap();
        let cells = matrix::cells(&spec);
        let b = Boots::of(&spec, &cells);
        let line = "preempt=full isolcpus=domain,managed_irq,1";
        assert_eq!(
            b.check(&b.needs[0], &kernel("full", line, &[1], &[])),
            Ok(())
        );
        let e = b
            .check(&b.needs[0], &kernel("voluntary", line, &[1], &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("the preemption model is voluntary"), "{e}");
    }

    #[test]
    fn a_study_without_boots_asks_for_none() {
        let spec = parse("name = \"x\"\nduration = 5\n", "x.toml").unwrap();
        let cells = matrix::cells(&spec);
        let b = Boots::of(&spec, &cells);
        assert!(!b.any());
        assert_eq!(b.label(&b.needs[0]), "any boot");
        assert_eq!(
            b.check(&b.needs[0], &kernel("rt", "isolcpus=1", &[1], &[])),
            Ok(())
        );
    }
}
