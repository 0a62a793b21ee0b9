//! Which rtscope binary a board runs, and putting it there: the board's
//! architecture (`uname -m`) picks ELF files for that machine: the one
//! named by `--binary`, else this one (the version the user runs) when it
//! is built for that machine, then static and then dynamic builds under
//! `target/<triple>/release/`. The first that runs there (`--version`) is
//! kept; it is copied into the board's cache as `bin/rtscope-<sha256
//! prefix>` only when that file is not there yet, so a board holds one
//! copy per build.
//!
//! Reads local files only; the copy goes through the [`Link`].

use super::RemoteError;
use super::ssh::{Link, quote};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A machine as `uname -m` names it, with Rust's name and ELF's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arch {
    /// Rust's `target_arch` (`std::env::consts::ARCH`).
    pub rust: &'static str,
    /// ELF `e_machine`.
    pub elf: u16,
    /// Target triples a build for it is found under, static ones first.
    pub triples: &'static [&'static str],
    /// The make target of rtscope's checkout that builds it (docs/arm.md).
    pub make: Option<&'static str>,
}

const ARCHES: &[(&[&str], Arch)] = &[
    (
        &["x86_64", "amd64"],
        Arch {
            rust: "x86_64",
            elf: 62,
            triples: &["x86_64-unknown-linux-musl", "x86_64-unknown-linux-gnu"],
            make: Some("make static (on an x86_64 machine)"),
        },
    ),
    (
        &["aarch64", "arm64"],
        Arch {
            rust: "aarch64",
            elf: 183,
            triples: &["aarch64-unknown-linux-musl", "aarch64-unknown-linux-gnu"],
            make: Some("make static-arm64"),
        },
    ),
    (
        &["armv7l", "armv7", "armv8l", "armhf", "arm"],
        Arch {
            rust: "arm",
            elf: 40,
            triples: &[
                "armv7-unknown-linux-musleabihf",
                "armv7-unknown-linux-gnueabihf",
            ],
            make: Some("make static-armhf"),
        },
    ),
    (
        &["riscv64"],
        Arch {
            rust: "riscv64",
            elf: 243,
            triples: &[
                "riscv64gc-unknown-linux-musl",
                "riscv64gc-unknown-linux-gnu",
            ],
            make: None,
        },
    ),
    (
        &["i686", "i586", "i386"],
        Arch {
            rust: "x86",
            elf: 3,
            triples: &["i686-unknown-linux-musl", "i686-unknown-linux-gnu"],
            make: None,
        },
    ),
];

impl Arch {
    /// How to build rtscope for this architecture, in words.
    pub fn how_to_build(&self) -> String {
        let triple = self.triples[self.triples.len() - 1];
        match self.make {
            Some(make) => format!("`{make}` in rtscope's checkout builds {triple} (docs/arm.md)"),
            None => format!(
                "build rtscope for {triple} (`cargo build --release --target {triple}` with a cross linker; docs/arm.md)"
            ),
        }
    }

    /// The architecture `uname -m` printed.
    pub fn of_uname(m: &str) -> Option<Arch> {
        ARCHES
            .iter()
            .find(|(names, _)| names.contains(&m.trim()))
            .map(|(_, a)| *a)
    }
}

/// What an ELF file is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elf {
    pub machine: u16,
    /// No program interpreter: runs without the board's C library.
    pub is_static: bool,
}

impl Elf {
    /// Read the header and program headers of `path` (`None`: not an
    /// ELF executable rtscope can read).
    pub fn read(path: &Path) -> Option<Elf> {
        let bytes = read_head(path)?;
        Elf::parse(&bytes)
    }

    fn parse(b: &[u8]) -> Option<Elf> {
        if b.len() < 52 || &b[..4] != b"\x7fELF" {
            return None;
        }
        let wide = match b[4] {
            1 => false,
            2 => true,
            _ => return None,
        };
        let le = b[5] == 1;
        let u16_at = |o: usize| -> Option<u16> {
            let s: [u8; 2] = b.get(o..o + 2)?.try_into().ok()?;
            Some(if le {
                u16::from_le_bytes(s)
            } else {
                u16::from_be_bytes(s)
            })
        };
        let u32_at = |o: usize| -> Option<u32> {
            let s: [u8; 4] = b.get(o..o + 4)?.try_into().ok()?;
            Some(if le {
                u32::from_le_bytes(s)
            } else {
                u32::from_be_bytes(s)
            })
        };
        let u64_at = |o: usize| -> Option<u64> {
            let s: [u8; 8] = b.get(o..o + 8)?.try_into().ok()?;
            Some(if le {
                u64::from_le_bytes(s)
            } else {
                u64::from_be_bytes(s)
            })
        };
        let machine = u16_at(18)?;
        let (phoff, phentsize, phnum) = if wide {
            (
                u64_at(32)? as usize,
                u16_at(54)? as usize,
                u16_at(56)? as usize,
            )
        } else {
            (
                u32_at(28)? as usize,
                u16_at(42)? as usize,
                u16_at(44)? as usize,
            )
        };
        const PT_INTERP: u32 = 3;
        let mut is_static = true;
        for i in 0..phnum {
            if u32_at(phoff + i * phentsize)? == PT_INTERP {
                is_static = false;
            }
        }
        Some(Elf { machine, is_static })
    }
}

/// The first 64 KiB of `path` (the ELF and program headers sit there).
fn read_head(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut buf)
        .ok()?;
    Some(buf)
}

/// A binary that may run on a board.
#[derive(Clone, Debug)]
pub struct Chosen {
    pub path: PathBuf,
    pub elf: Elf,
}

/// The binaries to try on a board of `arch`, best first: `explicit`
/// (`--binary`) alone when given; else this binary (the version the user
/// runs), then static builds, then dynamic ones under `target/`. The
/// error says how to build one.
pub fn choose(
    arch: Arch,
    uname: &str,
    explicit: Option<&Path>,
) -> Result<Vec<Chosen>, RemoteError> {
    if let Some(p) = explicit {
        let elf = Elf::read(p).ok_or_else(|| {
            RemoteError::Usage(format!("--binary {}: not an ELF executable", p.display()))
        })?;
        if elf.machine != arch.elf {
            return Err(RemoteError::Usage(format!(
                "--binary {} is not built for the board's {uname}: {}",
                p.display(),
                arch.how_to_build()
            )));
        }
        return Ok(vec![Chosen {
            path: p.to_path_buf(),
            elf,
        }]);
    }
    let mut found: Vec<Chosen> = candidates(arch)
        .iter()
        .filter_map(|p| {
            Some(Chosen {
                path: p.clone(),
                elf: Elf::read(p)?,
            })
        })
        .filter(|c| c.elf.machine == arch.elf)
        .collect();
    // Stable: this binary stays first, static builds before dynamic ones.
    let me = std::env::current_exe().ok();
    found.sort_by_key(|c| (Some(&c.path) != me.as_ref(), !c.elf.is_static));
    if found.is_empty() {
        return Err(RemoteError::Usage(format!(
            "no rtscope binary for the board's {uname} at hand: {}; or name one with --binary FILE",
            arch.how_to_build()
        )));
    }
    Ok(found)
}

/// Where builds for `arch` are looked for: this binary, then
/// `target/<triple>/release/rtscope` in the `target/` this binary is in
/// (target/release/rtscope or target/<triple>/release/rtscope, the static
/// build) and under the current directory.
fn candidates(arch: Arch) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let me = std::env::current_exe().ok();
    if let Some(me) = &me {
        out.push(me.clone());
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    // .../target/release/rtscope → .../target, and
    // .../target/<triple>/release/rtscope → .../target.
    if let Some(m) = &me {
        let up = m.ancestors().skip(2).take(2);
        roots.extend(up.map(Path::to_path_buf));
    }
    roots.push(PathBuf::from("target"));
    for root in roots {
        for triple in arch.triples {
            let p = root.join(triple).join("release").join("rtscope");
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `bytes` are an rtscope that answers a workstation: it holds
/// the name of the hidden command a remote run starts.
fn is_rtscope(bytes: &[u8]) -> bool {
    const MARK: &[u8] = b"__measure-settings";
    bytes.windows(MARK.len()).any(|w| w == MARK)
}

/// Put the first of `choices` that runs on the board into its
/// `dir/bin` (unless it is there), and give its path on the board.
pub fn install(
    link: &Link,
    dir: &str,
    choices: &[Chosen],
    board: &str,
) -> Result<String, RemoteError> {
    let mut last = None;
    for c in choices {
        match install_one(link, dir, c, board) {
            Ok(p) => return Ok(p),
            Err(e @ RemoteError::Link(_)) => return Err(e),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| RemoteError::Usage("no rtscope binary to send".into())))
}

/// Put `chosen` into the board's `dir/bin` unless it is there, and check
/// that it runs there. Returns its path on the board.
fn install_one(
    link: &Link,
    dir: &str,
    chosen: &Chosen,
    board: &str,
) -> Result<String, RemoteError> {
    let bytes = std::fs::read(&chosen.path)
        .map_err(|e| RemoteError::Local(format!("cannot read {}: {e}", chosen.path.display())))?;
    if !is_rtscope(&bytes) {
        return Err(RemoteError::Usage(format!(
            "{} is not an rtscope binary that runs remote commands (of this version or later)",
            chosen.path.display()
        )));
    }
    let hash = hex(&Sha256::digest(&bytes));
    let target = format!("{dir}/bin/rtscope-{}", &hash[..16]);
    let q = quote(&target);
    let present = link.run(&format!("test -x {q}"), b"", Duration::from_secs(30))?;
    if present.link_failed() {
        return Err(RemoteError::link(board, &present));
    }
    if !present.ok() {
        let script = format!(
            "set -e; mkdir -p {bin}; t={q}.part.$$; cat > \"$t\"; chmod 755 \"$t\"; mv -f \"$t\" {q}",
            bin = quote(&format!("{dir}/bin"))
        );
        let sent = link.run(&script, &bytes, Duration::from_secs(600))?;
        if !sent.ok() {
            return Err(RemoteError::Board(format!(
                "cannot copy rtscope to {board}:{target}: {}",
                sent.last_error()
            )));
        }
    }
    let runs = link.run(&format!("{q} --version"), b"", Duration::from_secs(30))?;
    if !runs.ok() || !runs.stdout_text().starts_with("rtscope ") {
        let hint = if chosen.elf.is_static {
            "is the board's kernel too old for it?".to_string()
        } else {
            format!(
                "{} is linked against this machine's C library: build a static one with `make static`, or name one with --binary FILE",
                chosen.path.display()
            )
        };
        // A binary that does not run there is not kept there.
        let _ = link.run(&format!("rm -f {q}"), b"", Duration::from_secs(30));
        return Err(RemoteError::Board(format!(
            "rtscope does not run on {board} ({}): {hint}",
            runs.last_error()
        )));
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_rtscope_is_sent() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert!(is_rtscope(&me));
        assert!(!is_rtscope(&std::fs::read("/bin/sh").unwrap()));
    }

    #[test]
    fn uname_names_map_to_elf_machines() {
        assert_eq!(Arch::of_uname("x86_64\n").unwrap().elf, 62);
        assert_eq!(Arch::of_uname("aarch64").unwrap().rust, "aarch64");
        assert_eq!(Arch::of_uname("armv7l").unwrap().elf, 40);
        assert!(Arch::of_uname("sparc64").is_none());
    }

    #[test]
    fn this_binary_reads_as_an_elf_of_this_machine() {
        let me = std::env::current_exe().unwrap();
        let elf = Elf::read(&me).unwrap();
        let arch = Arch::of_uname(std::env::consts::ARCH).unwrap();
        assert_eq!(elf.machine, arch.elf);
        assert!(Elf::read(Path::new("/etc/hostname")).is_none());
        // /bin/sh is dynamically linked on Debian.
        assert_eq!(
            Elf::read(Path::new("/bin/sh")).map(|e| e.is_static),
            Some(false)
        );
    }

    #[test]
    fn a_binary_for_another_machine_is_refused_with_how_to_build_one() {
        // `uname -m` of this test's own machine, and of another one.
        let (mine, other, make) = match std::env::consts::ARCH {
            "aarch64" => ("aarch64", "x86_64", "make static (on an x86_64 machine)"),
            "arm" => ("armv7l", "aarch64", "make static-arm64"),
            a => (a, "aarch64", "make static-arm64"),
        };
        let board = Arch::of_uname(other).unwrap();
        let me = std::env::current_exe().unwrap();
        let e = choose(board, other, Some(&me)).unwrap_err().to_string();
        let here = Arch::of_uname(mine).unwrap();
        let first = &choose(here, mine, None).unwrap()[0];
        assert_eq!(first.path, me, "this binary is tried first");
        assert!(e.contains(other) && e.contains(make), "{e}");
        let riscv = Arch::of_uname("riscv64").unwrap();
        let e = choose(riscv, "riscv64", None).unwrap_err().to_string();
        assert!(
            e.contains("riscv64gc-unknown-linux-gnu") && e.contains("--binary FILE"),
            "{e}"
        );
    }
}
