//! The Debian package (`make deb`): its control fields, its file list (the
//! binary, one man page per subcommand, completions for bash, zsh and
//! fish, the docs, examples and systemd units when the tree has them), and
//! that it installs with dpkg into an empty root whose binary then runs.
//! Nothing is installed on this system: dpkg gets a root and a database of
//! its own.
//!
//! The Makefile names the package in RTSCOPE_DEB; a plain `cargo test` has
//! none and fails, saying so, unless RTSCOPE_ALLOW_SKIP=1 (the suite's one
//! skip rule).

use crate::util::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn deb() -> Option<PathBuf> {
    let p = std::env::var_os("RTSCOPE_DEB");
    if !require(
        Need::Build,
        p.is_some(),
        "RTSCOPE_DEB (`make test` builds the package with `make deb` and sets it)",
    ) {
        return None;
    }
    let p = p?;
    let p = PathBuf::from(p);
    assert!(
        p.is_file(),
        "RTSCOPE_DEB={} does not exist: run `make deb`",
        p.display()
    );
    Some(p)
}

fn run(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert_code(&o, 0);
    stdout(&o)
}

/// Paths below the source tree's `dir` (relative to it), files only.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out
}

#[test]
fn the_package_holds_every_page_completion_and_doc() {
    let Some(deb) = deb() else {
        return;
    };
    let fields = run(Command::new("dpkg-deb").arg("-f").arg(&deb));
    let field = |name: &str| {
        fields
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")))
            .map(str::to_owned)
    };
    assert_eq!(field("Package").as_deref(), Some("rtscope"));
    assert_eq!(
        field("Version"),
        Some(env!("CARGO_PKG_VERSION").replace('-', "~"))
    );
    let arch = run(Command::new("dpkg").arg("--print-architecture"));
    assert_eq!(field("Architecture").as_deref(), Some(arch.trim()));
    assert!(
        field("Maintainer").is_some_and(|m| m.contains('@')),
        "{fields}"
    );
    assert!(field("Description").is_some(), "{fields}");
    let rec = field("Recommends").unwrap_or_default();
    assert!(
        rec.contains("rt-tests") && rec.contains("stress-ng"),
        "{rec}"
    );
    assert_eq!(field("Depends"), None, "a static binary depends on nothing");

    // `dpkg-deb -c`: tar's long listing; owner is field 2, path the last.
    let listing = run(Command::new("dpkg-deb").arg("-c").arg(&deb));
    let mut files = BTreeSet::new();
    for l in listing.lines() {
        let cols: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(cols.get(1), Some(&"root/root"), "{l}");
        files.insert(cols.last().unwrap().trim_start_matches('.').to_owned());
    }
    let mut want: Vec<String> = [
        "/usr/bin/rtscope",
        "/usr/share/bash-completion/completions/rtscope",
        "/usr/share/zsh/vendor-completions/_rtscope",
        "/usr/share/fish/vendor_completions.d/rtscope.fish",
        "/usr/share/doc/rtscope/README.md",
        "/usr/share/doc/rtscope/copyright",
        // the Raspberry Pi's one-time boot for studies (docs/raspberrypi.md)
        "/usr/share/rtscope/rtscope-tryboot",
    ]
    .map(String::from)
    .into();
    // A man page for every page `rtscope man` writes.
    let dir = TempDir::new("package-man");
    let pages = run(rtscope(dir.path()).arg("man").arg(dir.join("man")));
    assert!(pages.lines().count() > 10, "{pages}");
    for p in pages.lines() {
        let name = Path::new(p).file_name().unwrap().to_string_lossy();
        want.push(format!("/usr/share/man/man1/{name}.gz"));
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in files_below(&src.join("docs")) {
        if f.extension().is_some_and(|e| e == "md") {
            want.push(format!("/usr/share/doc/rtscope/docs/{}", f.display()));
        }
    }
    for f in files_below(&src.join("examples")) {
        want.push(format!("/usr/share/doc/rtscope/examples/{}", f.display()));
    }
    for f in files_below(&src.join("contrib/systemd")) {
        if f.extension().is_some_and(|e| e == "service") {
            want.push(format!("/usr/lib/systemd/system/{}", f.display()));
        }
    }
    let missing: Vec<&String> = want.iter().filter(|w| !files.contains(*w)).collect();
    assert!(missing.is_empty(), "missing {missing:?} in\n{listing}");
    // The installed README's links lead to installed files.
    let broken: Vec<String> = readme_links()
        .into_iter()
        .map(|l| format!("/usr/share/doc/rtscope/{l}"))
        .filter(|l| !files.contains(l) && !files.contains(&format!("{l}/")))
        .collect();
    assert!(
        broken.is_empty(),
        "README links to {broken:?}, not in\n{listing}"
    );
}

/// The relative links of README.md (targets without their `#anchor`).
fn readme_links() -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(src.join("README.md")).unwrap();
    let mut out = BTreeSet::new();
    for part in text.split("](").skip(1) {
        let Some(end) = part.find(')') else { continue };
        let target = part[..end].split('#').next().unwrap_or_default();
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            out.insert(target.to_string());
        }
    }
    out.into_iter().collect()
}

/// Without a package: every README link resolves in the source tree and
/// lies where the package installs files beside the README (docs/,
/// bench/README.md, DEVELOPERS.md), so it resolves once installed too;
/// and the README says where the package puts the examples.
#[test]
fn readme_links_resolve_where_the_package_puts_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    let links = readme_links();
    assert!(links.iter().any(|l| l.starts_with("docs/")), "{links:?}");
    for l in &links {
        assert!(
            src.join(l).exists(),
            "README links to {l}, which does not exist"
        );
        assert!(
            l.starts_with("docs/") || l == "bench/README.md" || l == "DEVELOPERS.md",
            "README links to {l}, which the package does not install beside it"
        );
    }
    let readme = std::fs::read_to_string(src.join("README.md")).unwrap();
    assert!(readme.contains("/usr/share/doc/rtscope/examples/"));
    let script = std::fs::read_to_string(src.join("scripts/make-deb")).unwrap();
    assert!(
        script.contains("\"$doc/docs\" docs/*.md"),
        "scripts/make-deb installs docs/"
    );
}

#[test]
fn the_package_installs_into_an_empty_root_and_runs() {
    let Some(deb) = deb() else {
        return;
    };
    if !require_root() {
        return;
    }
    let root = TempDir::new("package-root");
    // dpkg's database, empty, inside the root.
    let admin = root.join("var/lib/dpkg");
    for d in ["info", "updates", "triggers"] {
        std::fs::create_dir_all(admin.join(d)).unwrap();
    }
    std::fs::write(admin.join("status"), "").unwrap();
    run(Command::new("dpkg")
        .arg(format!("--root={}", root.path().display()))
        .arg(format!("--log={}", root.join("dpkg.log").display()))
        .args(["--force-script-chrootless", "--force-not-root", "-i"])
        .arg(&deb));

    let status = run(Command::new("dpkg-query")
        .arg(format!("--admindir={}", admin.display()))
        .args(["-W", "-f", "${Status} ${Version}", "rtscope"]));
    assert_eq!(
        status,
        format!(
            "install ok installed {}",
            env!("CARGO_PKG_VERSION").replace('-', "~")
        )
    );
    let o = Command::new(root.join("usr/bin/rtscope"))
        .arg("--version")
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(
        stdout(&o).trim(),
        format!("rtscope {}", env!("CARGO_PKG_VERSION"))
    );
    // The installed bash completion completes.
    let offered = crate::completions::bash_complete(
        &root.join("usr/share/bash-completion/completions/rtscope"),
        "rtscope mea",
    );
    assert_eq!(offered, ["measure"]);
    // The man pages are gzip files man can read.
    let page = std::fs::read(root.join("usr/share/man/man1/rtscope-measure.1.gz")).unwrap();
    assert_eq!(page.get(..2), Some(&[0x1f, 0x8b][..]), "not gzip");
}
