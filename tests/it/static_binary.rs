//! The static binary (`make static`) checked for what it claims to be:
//! its ELF has no program interpreter and needs no shared library, and
//! copied alone into an empty root (only /proc, /sys and /dev bound in) it
//! prints its version, runs `doctor`, measures for one second, stores the
//! run and reports on it. The bind mounts live in a private mount
//! namespace (`unshare --mount`) that the kernel tears down when the last
//! process in it exits, so no path (a failed assertion, a panic, a killed
//! test) leaves a mount behind; the test checks that none did.
//!
//! The Makefile names the binary in RTSCOPE_STATIC_BIN; a plain
//! `cargo test` has none and fails, saying so, unless RTSCOPE_ALLOW_SKIP=1
//! (the suite's one skip rule).

use crate::util::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What the ELF file's program headers say about dynamic linking.
#[derive(Debug, Default)]
struct Linking {
    /// A PT_INTERP header: the file asks for a dynamic loader.
    interp: bool,
    /// DT_NEEDED entries in the dynamic section: shared libraries wanted.
    needed: usize,
    /// e_type: 2 (ET_EXEC, static) or 3 (ET_DYN, static-pie or PIE).
    e_type: u16,
}

/// Read the program headers and the dynamic section of a 64-bit
/// little-endian ELF file (every target rtscope is built for here).
fn linking(bytes: &[u8]) -> Result<Linking, String> {
    let u16_at = |o: usize| -> Result<u16, String> {
        bytes
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or_else(|| format!("truncated ELF at byte {o}"))
    };
    let u32_at = |o: usize| -> Result<u32, String> {
        bytes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .ok_or_else(|| format!("truncated ELF at byte {o}"))
    };
    let u64_at = |o: usize| -> Result<u64, String> {
        bytes
            .get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            .ok_or_else(|| format!("truncated ELF at byte {o}"))
    };
    if bytes.get(..4) != Some(b"\x7fELF") {
        return Err("not an ELF file".into());
    }
    if bytes[4] != 2 || bytes[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let mut l = Linking {
        e_type: u16_at(16)?,
        ..Linking::default()
    };
    let phoff = u64_at(32)? as usize;
    let phentsize = u16_at(54)? as usize;
    let phnum = u16_at(56)? as usize;
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        match u32_at(ph)? {
            3 => l.interp = true, // PT_INTERP
            2 => {
                // PT_DYNAMIC: (d_tag, d_val) pairs up to DT_NULL.
                let (off, size) = (u64_at(ph + 8)? as usize, u64_at(ph + 32)? as usize);
                for d in (off..off + size).step_by(16) {
                    match u64_at(d)? {
                        0 => break,         // DT_NULL
                        1 => l.needed += 1, // DT_NEEDED
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Ok(l)
}

/// Mount points at or below `dir` in this process's mount namespace.
fn mounts_under(dir: &Path) -> Vec<String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let dir = dir.to_string_lossy().into_owned();
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        // mountinfo escapes blanks as \040; temp dirs have none.
        .filter(|m| *m == dir || m.starts_with(&format!("{dir}/")))
        .map(str::to_owned)
        .collect()
}

/// An empty root holding the binary as /rtscope and empty /proc, /sys,
/// /dev and /tmp. Removed on drop, unless something is still mounted below
/// it (then it is left alone and named: removing it would recurse into the
/// host's /dev and /sys).
struct EmptyRoot(PathBuf);

impl EmptyRoot {
    fn new(bin: &Path) -> EmptyRoot {
        // Not a TempDir: its drop would remove the directory unchecked.
        let tag = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "rtscope-it-static-root-{}-{tag}",
            std::process::id()
        ));
        std::fs::create_dir(&dir).unwrap();
        let root = EmptyRoot(dir);
        for d in ["proc", "sys", "dev", "tmp"] {
            std::fs::create_dir(root.0.join(d)).unwrap();
        }
        std::fs::copy(bin, root.0.join("rtscope")).unwrap();
        root
    }

    /// Run `/rtscope ARGS` chrooted into the root, with /proc, /sys and
    /// /dev bound in a mount namespace of its own, and a clean environment.
    fn run(&self, args: &[&str]) -> Output {
        let o = Command::new("timeout")
            .args([
                "120",
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "--",
            ])
            .args(["sh", "-ec"])
            .arg(
                r#"r=$1; shift
                for d in proc sys dev; do mount --rbind "/$d" "$r/$d"; done
                exec chroot "$r" /rtscope "$@""#,
            )
            .arg("sh")
            .arg(&self.0)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .env("HOME", "/tmp")
            .output()
            .expect("running timeout/unshare/chroot (coreutils, util-linux)");
        let left = mounts_under(&self.0);
        assert!(left.is_empty(), "mounts left behind: {left:?}");
        o
    }
}

impl Drop for EmptyRoot {
    fn drop(&mut self) {
        let left = mounts_under(&self.0);
        if left.is_empty() {
            let _ = std::fs::remove_dir_all(&self.0);
        } else {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "WARNING: {} left in place: still mounted below it: {left:?}",
                self.0.display()
            );
        }
    }
}

/// The static binary the Makefile built; without it the test fails, or
/// (RTSCOPE_ALLOW_SKIP=1) says SKIP and gets None.
fn static_bin() -> Option<PathBuf> {
    let p = std::env::var_os("RTSCOPE_STATIC_BIN");
    if !require(
        Need::Build,
        p.is_some(),
        "RTSCOPE_STATIC_BIN (`make test` builds the static binary and sets it)",
    ) {
        return None;
    }
    let p = p?;
    let p = PathBuf::from(p);
    assert!(
        p.is_file(),
        "RTSCOPE_STATIC_BIN={} does not exist: run `make static`",
        p.display()
    );
    Some(p)
}

#[test]
fn the_elf_check_sees_a_dynamic_binary() {
    // A system program is dynamically linked (`make test` builds the
    // tests' own binary static, with the shipped one's flags): the check
    // below must see it, or it proves nothing.
    let env = std::path::Path::new("/usr/bin/env");
    let l = linking(&std::fs::read(env).unwrap()).unwrap();
    assert!(l.interp && l.needed > 0, "{}: {l:?}", env.display());
}

#[test]
fn the_static_binary_needs_no_loader_and_no_library() {
    let Some(p) = static_bin() else {
        return;
    };
    let l = linking(&std::fs::read(&p).unwrap()).unwrap();
    assert!(!l.interp, "{} has a PT_INTERP header: {l:?}", p.display());
    assert_eq!(l.needed, 0, "{} needs shared libraries", p.display());
    assert!(matches!(l.e_type, 2 | 3), "{l:?}");
}

#[test]
fn the_static_binary_works_alone_in_an_empty_root() {
    let Some(p) = static_bin() else {
        return;
    };
    if !require_root() {
        return;
    }
    let root = EmptyRoot::new(&p);

    let o = root.run(&["--version"]);
    assert_code(&o, 0);
    assert_eq!(
        stdout(&o).trim(),
        format!("rtscope {}", env!("CARGO_PKG_VERSION"))
    );

    // A command that fails leaves no mount either (run checks).
    let o = root.run(&["measure", "--no-such-flag"]);
    assert_code(&o, 2);

    let o = root.run(&["doctor"]);
    assert_code(&o, 0);
    assert!(!stdout(&o).is_empty());

    {
        let _g = shared_system();
        let o = root.run(&[
            "measure",
            "-D",
            "1s",
            "--db",
            "/tmp/x.db",
            "--json",
            "/tmp/r.json",
        ]);
        assert_code(&o, 0);
    }
    let r = read_json(&root.0.join("tmp/r.json"));
    assert_eq!(r["status"], "complete", "{r}");
    for t in r["threads"].as_array().unwrap() {
        assert!(t["stats"]["samples"].as_u64().unwrap() > 0, "{t}");
    }
    assert!(root.0.join("tmp/x.db").is_file(), "the run was not stored");

    // The stored run (SQLite, bundled) and the file both report.
    let o = root.run(&["report", "--db", "/tmp/x.db", "last", "-o", "/tmp/r.html"]);
    assert_code(&o, 0);
    let html = std::fs::read_to_string(root.0.join("tmp/r.html")).unwrap();
    assert!(html.contains("<html"), "not HTML");
    let o = root.run(&["report", "/tmp/r.json", "-o", "/tmp/f.html"]);
    assert_code(&o, 0);
    assert!(root.0.join("tmp/f.html").is_file());
}
