//! The ARM builds (`make static-arm64`, `make static-armhf`, their
//! packages: docs/arm.md) checked for what a board needs, here under
//! qemu-user: each is a static, stripped ELF of its machine; it runs
//! `doctor`, measures with SCHED_FIFO, stores and reports; and where the
//! answer depends on nothing but the input (importing every format,
//! reading records and traces, the tail), it gives byte for byte the
//! answer of this machine's build. Runs and stores made by a board are
//! read here, and the other way round. 32-bit armhf (its `time_t`,
//! `long` and `usize`) goes through the same steps.
//!
//! The Makefile names the builds in RTSCOPE_ARM_BINS (`arm64=PATH
//! armhf=PATH`) and the packages in RTSCOPE_ARM_DEBS; a plain `cargo
//! test` has none and fails, saying so, unless RTSCOPE_ALLOW_SKIP=1
//! (the suite's one skip rule); set but empty is the same. `make test
//! ARM_ARCHS=` (ARM left out on purpose) does not run them.

use crate::util::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// One ARM build: its Debian architecture and its file.
struct Build {
    arch: String,
    path: PathBuf,
}

impl Build {
    /// The ELF machine it must be (EM_AARCH64, EM_ARM) and its class.
    fn machine(&self) -> (u16, u8) {
        match self.arch.as_str() {
            "arm64" => (183, 2),
            "armhf" => (40, 1),
            a => panic!("RTSCOPE_ARM_BINS names an unknown architecture {a}"),
        }
    }

    /// qemu-user for this architecture (Debian's qemu-user-static).
    fn qemu(&self) -> &'static str {
        match self.arch.as_str() {
            "arm64" => "qemu-aarch64-static",
            _ => "qemu-arm-static",
        }
    }

    /// `rtscope ARGS` on this build under qemu-user, with the isolated
    /// environment of util::rtscope.
    fn cmd(&self, dir: &Path) -> Command {
        let mut c = Command::new(self.qemu());
        c.arg(&self.path)
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("HOME", dir)
            .env("RTSCOPE_RUN_DIR", dir.join("run"))
            .env_remove("RTSCOPE_DB");
        c
    }

    fn run(&self, dir: &Path, args: &[&str]) -> Output {
        self.cmd(dir).args(args).output().unwrap_or_else(|e| {
            panic!(
                "{}: cannot start {} (make test installs qemu-user-static): {e}",
                self.arch,
                self.qemu()
            )
        })
    }
}

/// `arch=path` words of an environment variable, or the skip rule.
fn named(var: &str) -> Option<Vec<Build>> {
    let v = std::env::var_os(var);
    if !require(
        Need::Build,
        v.is_some(),
        &format!("{var} (`make test` builds the ARM binaries and packages and sets it)"),
    ) {
        return None;
    }
    let v = v?;
    let builds: Vec<Build> = v
        .to_string_lossy()
        .split_whitespace()
        .map(|w| {
            let (arch, path) = w
                .split_once('=')
                .unwrap_or_else(|| panic!("{var}: '{w}' is not ARCH=PATH"));
            let path = PathBuf::from(path);
            assert!(path.exists(), "{var}: {} does not exist", path.display());
            Build {
                arch: arch.to_string(),
                path,
            }
        })
        .collect();
    // Empty: no build named (`make test-arm ARM_ARCHS=`), the same rule
    // as unset.
    if !require(
        Need::Build,
        !builds.is_empty(),
        &format!("ARM builds in {var}, which is set but names none (`make test` names them)"),
    ) {
        return None;
    }
    Some(builds)
}

/// What the ELF file says of itself.
#[derive(Debug, Default)]
struct ElfFacts {
    class: u8,
    machine: u16,
    /// A PT_INTERP header: it asks for a dynamic loader.
    interp: bool,
    /// A PT_DYNAMIC header with DT_NEEDED entries: shared libraries.
    needed: usize,
    /// A .symtab section (SHT_SYMTAB): symbols not stripped.
    symtab: bool,
    /// .debug_* sections: debug information not stripped.
    debug: bool,
}

/// Read an ELF file's header, program headers and section headers,
/// 32- or 64-bit little-endian.
fn elf(bytes: &[u8]) -> ElfFacts {
    assert_eq!(bytes.get(..4), Some(&b"\x7fELF"[..]), "not an ELF file");
    assert_eq!(bytes[5], 1, "not little-endian");
    let wide = bytes[4] == 2;
    let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
    let word = |o: usize| -> usize {
        if wide {
            u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap()) as usize
        } else {
            u32_at(o) as usize
        }
    };
    let mut f = ElfFacts {
        class: bytes[4],
        machine: u16_at(18),
        ..ElfFacts::default()
    };
    // e_phoff, e_shoff, then the sizes and counts
    let (phoff, shoff) = if wide {
        (word(32), word(40))
    } else {
        (word(28), word(32))
    };
    let base = if wide { 54 } else { 42 };
    let (phentsize, phnum) = (u16_at(base) as usize, u16_at(base + 2) as usize);
    let (shentsize, shnum, shstrndx) = (
        u16_at(base + 4) as usize,
        u16_at(base + 6) as usize,
        u16_at(base + 8) as usize,
    );
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        match u32_at(ph) {
            3 => f.interp = true,
            2 => {
                let (off, size, entry) = if wide {
                    (word(ph + 8), word(ph + 32), 16)
                } else {
                    (word(ph + 4), word(ph + 16), 8)
                };
                for d in (off..off + size).step_by(entry) {
                    match word(d) {
                        0 => break,
                        1 => f.needed += 1,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    // Section headers: sh_name, sh_type, ..., sh_offset.
    let section = |i: usize| -> (u32, u32, usize) {
        let sh = shoff + i * shentsize;
        let off = if wide { word(sh + 24) } else { word(sh + 16) };
        (u32_at(sh), u32_at(sh + 4), off)
    };
    if shnum > 0 && shstrndx < shnum {
        let (_, _, names) = section(shstrndx);
        for i in 0..shnum {
            let (name, kind, _) = section(i);
            let start = names + name as usize;
            let end = start + bytes[start..].iter().position(|&b| b == 0).unwrap_or(0);
            let name = String::from_utf8_lossy(&bytes[start..end]);
            f.symtab |= kind == 2;
            f.debug |= name.starts_with(".debug_");
        }
    }
    f
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every file that `import` reads, from the import fixtures (the formats
/// of tests/it/import.rs and tests/it/import_formats.rs).
fn import_fixtures() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for d in ["import", "import-formats"] {
        for e in std::fs::read_dir(fixtures().join(d)).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() && p.extension().is_none_or(|x| x != "md") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// A run record's JSON without what differs between two imports of the
/// same file (the run's uuid).
fn comparable(json: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(json).unwrap();
    v.as_object_mut().unwrap().remove("run_uuid");
    v
}

#[test]
fn arm_builds_are_static_stripped_elfs_of_their_machine() {
    let Some(builds) = named("RTSCOPE_ARM_BINS") else {
        return;
    };
    for b in &builds {
        let bytes = std::fs::read(&b.path).unwrap();
        let f = elf(&bytes);
        let (machine, class) = b.machine();
        assert_eq!((f.machine, f.class), (machine, class), "{}: {f:?}", b.arch);
        assert!(!f.interp && f.needed == 0, "{}: not static: {f:?}", b.arch);
        assert!(!f.symtab && !f.debug, "{}: not stripped: {f:?}", b.arch);
    }
}

#[test]
fn arm_builds_measure_store_and_report_under_qemu_user() {
    let Some(builds) = named("RTSCOPE_ARM_BINS") else {
        return;
    };
    if !require_root() {
        return;
    }
    let host = stdout(
        &rtscope(Path::new("/nonexistent"))
            .arg("--version")
            .output()
            .unwrap(),
    );
    for b in &builds {
        let _g = shared_system();
        let dir = TempDir::new(&format!("arch-{}", b.arch));
        let o = b.run(dir.path(), &["--version"]);
        assert_code(&o, 0);
        assert_eq!(
            stdout(&o),
            host,
            "{}: another version than this build",
            b.arch
        );

        let o = b.run(dir.path(), &["doctor", "--json"]);
        let doctor: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{}: doctor --json: {e}\n{}", b.arch, stderr(&o)));
        assert!(
            doctor["checks"].as_array().is_some_and(|c| !c.is_empty()),
            "{doctor}"
        );

        // One FIFO thread for 2 s, stored on the "board", written as files.
        let db = dir.join("board.db");
        let rec = dir.join("run.json");
        let hist = dir.join("run.hist");
        let o = b.run(
            dir.path(),
            &[
                "--db",
                db.to_str().unwrap(),
                "measure",
                "-D",
                "2s",
                "-t",
                "1",
                "-i",
                "1ms",
                "-q",
                "--json",
                rec.to_str().unwrap(),
                "--histfile",
                hist.to_str().unwrap(),
            ],
        );
        assert_code(&o, 0);
        let run: rtscope::record::RunRecord =
            serde_json::from_slice(&std::fs::read(&rec).unwrap()).unwrap();
        assert_eq!(run.threads.len(), 1, "{}", b.arch);
        let t = &run.threads[0];
        assert!(
            t.stats.samples > 100,
            "{}: {} samples in 2 s at 1 ms",
            b.arch,
            t.stats.samples
        );
        assert!(
            t.stats.max_ns >= t.stats.min_ns && t.stats.min_ns.is_some(),
            "{}",
            b.arch
        );
        assert!(
            std::fs::read_to_string(&hist).unwrap().contains("# Total:"),
            "{}: no cyclictest histogram",
            b.arch
        );

        // The board's store and record read on the workstation (this
        // build), and the board's own report of its store.
        let here = rt(&dir, &db, &["runs", "show", "1"]);
        assert_code(&here, 0);
        assert!(stdout(&here).contains("complete"), "{}", stdout(&here));
        let html = dir.join("here.html");
        assert_code(
            &rtscope(dir.path())
                .args([
                    "report",
                    rec.to_str().unwrap(),
                    "-o",
                    html.to_str().unwrap(),
                ])
                .output()
                .unwrap(),
            0,
        );
        let html = dir.join("board.html");
        let o = b.run(
            dir.path(),
            &[
                "--db",
                db.to_str().unwrap(),
                "report",
                "1",
                "-o",
                html.to_str().unwrap(),
            ],
        );
        assert_code(&o, 0);
        assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));

        // The tail of that record: the same answer on both machines.
        let ours = rtscope(dir.path())
            .args(["tail", rec.to_str().unwrap()])
            .output()
            .unwrap();
        let theirs = b.run(dir.path(), &["tail", rec.to_str().unwrap()]);
        assert_eq!(
            (theirs.status.code(), stdout(&theirs)),
            (ours.status.code(), stdout(&ours)),
            "{}: tail differs from this machine's",
            b.arch
        );
    }
}

#[test]
fn arm_builds_import_every_format_as_this_machine_does() {
    let Some(builds) = named("RTSCOPE_ARM_BINS") else {
        return;
    };
    let files = import_fixtures();
    assert!(files.len() >= 12, "{files:?}");
    for b in &builds {
        let dir = TempDir::new(&format!("arch-import-{}", b.arch));
        let (ours_db, theirs_db) = (dir.join("here.db"), dir.join("board.db"));
        let mut id = 0;
        for f in &files {
            let f = f.to_str().unwrap();
            let ours = rt(&dir, &ours_db, &["import", f]);
            let theirs = b.run(
                dir.path(),
                &["--db", theirs_db.to_str().unwrap(), "import", f],
            );
            assert_eq!(
                theirs.status.code(),
                ours.status.code(),
                "{}: import {f}: {}",
                b.arch,
                stderr(&theirs)
            );
            if ours.status.code() != Some(0) {
                continue;
            }
            id += 1;
            let id = id.to_string();
            let ours = rt(&dir, &ours_db, &["runs", "export", &id, "--json"]);
            let theirs = b.run(
                dir.path(),
                &[
                    "--db",
                    theirs_db.to_str().unwrap(),
                    "runs",
                    "export",
                    &id,
                    "--json",
                ],
            );
            assert_code(&theirs, 0);
            assert_eq!(
                comparable(&theirs.stdout),
                comparable(&ours.stdout),
                "{}: {f} imported otherwise",
                b.arch
            );
            // And the tail of what was imported.
            let ours = rt(&dir, &ours_db, &["tail", &id]);
            let theirs = b.run(
                dir.path(),
                &["--db", theirs_db.to_str().unwrap(), "tail", &id],
            );
            assert_eq!(
                (theirs.status.code(), stdout(&theirs)),
                (ours.status.code(), stdout(&ours)),
                "{}: tail of {f}",
                b.arch
            );
        }
        assert!(id >= 10, "{}: only {id} fixtures imported", b.arch);
    }
}

#[test]
fn arm_builds_explain_traces_as_this_machine_does() {
    let Some(builds) = named("RTSCOPE_ARM_BINS") else {
        return;
    };
    // The x86 traces, and those taken in the arm64 lab guest (a trace/
    // folder per kernel: trace-cmd report's text and tracefs's own).
    let mut traces: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![fixtures().join("explain"), fixtures().join("arm64-guest")];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "trace")
                || p.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|d| d == "trace")
            {
                traces.push(p);
            }
        }
    }
    traces.sort();
    assert!(
        traces
            .iter()
            .any(|t| t.to_string_lossy().contains("arm64-guest")),
        "no trace of the arm64 guest among {traces:?}"
    );
    let dir = TempDir::new("arch-explain");
    for b in &builds {
        for t in &traces {
            let t = t.to_str().unwrap();
            for extra in [&[][..], &["--json"][..]] {
                let args = [&["explain", "--trace", t][..], extra].concat();
                let ours = rtscope(dir.path()).args(&args).output().unwrap();
                let theirs = b.run(dir.path(), &args);
                assert_code(&ours, 0);
                assert_eq!(
                    (theirs.status.code(), stdout(&theirs)),
                    (ours.status.code(), stdout(&ours)),
                    "{}: explain {t} {extra:?}",
                    b.arch
                );
            }
        }
    }
}

#[test]
fn arm_packages_hold_the_arm_build_and_what_this_machines_holds() {
    let Some(debs) = named("RTSCOPE_ARM_DEBS") else {
        return;
    };
    let Some(bins) = named("RTSCOPE_ARM_BINS") else {
        return;
    };
    let host_deb = std::env::var_os("RTSCOPE_DEB");
    if !require(
        Need::Build,
        host_deb.is_some(),
        "RTSCOPE_DEB (`make test` builds the package and sets it)",
    ) {
        return;
    }
    let Some(host_deb) = host_deb else { return };
    let list = |deb: &Path| -> Vec<String> {
        let o = Command::new("dpkg-deb")
            .arg("-c")
            .arg(deb)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let mut names: Vec<String> = stdout(&o)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(5).map(str::to_string))
            .collect();
        names.sort();
        names
    };
    let host_files = list(Path::new(&host_deb));
    let dir = TempDir::new("arch-deb");
    for deb in &debs {
        let field = |f: &str| {
            let o = Command::new("dpkg-deb")
                .args(["-f"])
                .arg(&deb.path)
                .arg(f)
                .output()
                .unwrap();
            stdout(&o).trim().to_string()
        };
        assert_eq!(field("Architecture"), deb.arch);
        assert_eq!(field("Package"), "rtscope");
        assert_eq!(
            list(&deb.path),
            host_files,
            "{}: other files than the host's package",
            deb.arch
        );
        let root = dir.join(&deb.arch);
        let o = Command::new("dpkg-deb")
            .arg("-x")
            .arg(&deb.path)
            .arg(&root)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let bin = bins
            .iter()
            .find(|b| b.arch == deb.arch)
            .expect("a build for each package");
        assert!(
            std::fs::read(root.join("usr/bin/rtscope")).unwrap()
                == std::fs::read(&bin.path).unwrap(),
            "{}: the package's /usr/bin/rtscope is not the {} build",
            deb.arch,
            deb.arch
        );
    }
}
