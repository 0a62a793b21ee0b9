//! Shell completions (`rtscope completions`): the bash script, loaded in
//! a non-interactive bash, completes subcommands, flags and values the way
//! a user pressing Tab would see them.

use crate::util::*;
use std::path::Path;

/// What bash offers for `line` (its last word being completed, or an
/// empty word after a trailing blank) with the completion script at
/// `script` loaded: the function `complete -p rtscope` names is called
/// with COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT set, and its
/// COMPREPLY returned.
pub fn bash_complete(script: &Path, line: &str) -> Vec<String> {
    let o = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c"])
        .arg(
            r#"source "$1" || exit 3
            spec=$(complete -p rtscope) || { echo "no completion for rtscope" >&2; exit 3; }
            f=${spec#*-F }; f=${f%% *}
            COMP_LINE=$2
            COMP_POINT=${#COMP_LINE}
            read -ra COMP_WORDS <<< "$COMP_LINE"
            [[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
            COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            "$f" rtscope "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\n' "${COMPREPLY[@]}""#,
        )
        .arg("bash")
        .arg(script)
        .arg(line)
        .output()
        .expect("running bash");
    assert_code(&o, 0);
    stdout(&o).lines().map(str::to_owned).collect()
}

#[test]
fn bash_completes_subcommands_flags_and_shells() {
    let dir = TempDir::new("completions");
    let o = rtscope(dir.path())
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let script = dir.join("rtscope.bash");
    std::fs::write(&script, &o.stdout).unwrap();

    assert_eq!(bash_complete(&script, "rtscope mea"), ["measure"]);
    let all = bash_complete(&script, "rtscope ");
    for sub in [
        "measure",
        "report",
        "runs",
        "serve",
        "doctor",
        "completions",
    ] {
        assert!(all.iter().any(|w| w == sub), "{sub} not in {all:?}");
    }
    assert!(
        !all.iter().any(|w| w.starts_with("__") || w == "man"),
        "hidden offered: {all:?}"
    );
    let tune = bash_complete(&script, "rtscope tune ");
    assert!(tune.iter().any(|w| w == "isolate"), "{tune:?}");
    assert!(!tune.iter().any(|w| w == "hold-dma-latency"), "{tune:?}");
    let doctor = bash_complete(&script, "rtscope doctor --");
    assert!(doctor.iter().any(|w| w == "--strict"), "{doctor:?}");
    assert!(!doctor.iter().any(|w| w == "--sysroot"), "{doctor:?}");
    let serve = bash_complete(&script, "rtscope serve --");
    for flag in ["--listen", "--auth"] {
        assert!(serve.iter().any(|w| w == flag), "{flag} not in {serve:?}");
    }
    let flags = bash_complete(&script, "rtscope measure --jso");
    assert!(flags.iter().any(|w| w == "--json"), "{flags:?}");
    // Flags are offered too; the values are the three shells.
    let mut shells: Vec<String> = bash_complete(&script, "rtscope completions ")
        .into_iter()
        .filter(|w| !w.starts_with('-'))
        .collect();
    shells.sort();
    assert_eq!(shells, ["bash", "fish", "zsh"]);
}

#[test]
fn zsh_and_fish_scripts_are_written_and_an_unknown_shell_is_refused() {
    let dir = TempDir::new("completions-other");
    for (shell, mark) in [("zsh", "#compdef rtscope"), ("fish", "complete -c rtscope")] {
        let o = rtscope(dir.path())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_code(&o, 0);
        assert!(stdout(&o).contains(mark), "{shell}: no {mark}");
    }
    let o = rtscope(dir.path())
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains("tcsh"), "{}", stderr(&o));
}
