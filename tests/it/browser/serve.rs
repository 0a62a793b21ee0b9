//! `rtscope serve` as a person uses it, in Chromium at 1280 px: a store
//! of runs made with the binary (`rtscope import` of run records), the
//! real server on a loopback port, and the pages clicked through: a run
//! opened from the list and the list again by going back, three runs
//! ticked and compared, the boards and their last runs. Hostile labels,
//! tags and host names stay text in the live DOM (no script runs, no
//! element made of them, no page wider than the window, no table
//! scrolling within it: the verdict column stays in view with long
//! labels, hosts and kernels); with `--auth`
//! a tab without credentials gets a 401 and one with them the list. No
//! page logs an error, and a screenshot of each kind of page is kept
//! (target/artefacts/screenshots/serve_*.png).

use super::{Browser, Tab, png_size, report::OVERFLOW_JS};
use crate::serve::{Server, run};
use crate::util::{TempDir, assert_code, rtscope};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The laptop screen the pages must fit.
const WIDTH_PX: u32 = 1280;
/// A label that is a script, were it not escaped.
const HOSTILE_LABEL: &str = "<script>window.__pwned=1</script>";
/// A tag whose value has both quotes and a tag in it.
const QUOTED_TAG: (&str, &str) = ("note", "say \"hi\" & 'bye' <b>");

/// A host name of 4 096 characters (the longest a record keeps:
/// rtscope::record::TEXT_MAX_BYTES), an element were it not escaped.
fn long_host() -> String {
    let n = rtscope::record::TEXT_MAX_BYTES;
    let h = format!("<x>{}", "h".repeat(n - 3));
    assert_eq!(h.chars().count(), n);
    h
}

/// One stored run: what the pages should show of it.
struct Stored {
    id: i64,
    label: String,
    host: String,
}

/// `rtscope --db DB import` of these runs (label, host), written as run
/// records in `dir`, the first two with a tag; the store's path and the
/// runs with the ids the store gave them (from `rtscope runs --json`'s
/// rows, matched by label).
fn store(dir: &TempDir, runs: &[(&str, &str)]) -> (PathBuf, Vec<Stored>) {
    store_edited(dir, runs, |_, _| ())
}

/// [`store`], each record changed by `edit` (its index, the record)
/// before it is written.
fn store_edited(
    dir: &TempDir,
    runs: &[(&str, &str)],
    edit: impl Fn(usize, &mut rtscope::record::RunRecord),
) -> (PathBuf, Vec<Stored>) {
    let db = dir.join("runs.db");
    let mut files = Vec::new();
    for (i, (label, host)) in runs.iter().enumerate() {
        let seed = i as u64 + 1;
        let mut r = run(seed, label, host, seed, 40_000 + 60_000 * seed);
        match i {
            0 => r.tags.insert("kernel".into(), "vanilla".into()),
            1 => r.tags.insert(QUOTED_TAG.0.into(), QUOTED_TAG.1.into()),
            _ => None,
        };
        edit(i, &mut r);
        let f = dir.join(&format!("run-{seed}.json"));
        std::fs::write(&f, serde_json::to_vec(&r).unwrap()).unwrap();
        files.push(f);
    }
    let o = rtscope(dir.path())
        .arg("--db")
        .arg(&db)
        .arg("import")
        .args(&files)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let stored = ids(dir, &db, runs);
    (db, stored)
}

/// The runs (label, host) with their ids in the store at `db`.
fn ids(dir: &TempDir, db: &Path, runs: &[(&str, &str)]) -> Vec<Stored> {
    let srv = Server::start(dir, db, &["--listen", "127.0.0.1:0"]);
    let api = srv.get("/api/runs").json();
    let rows = api["runs"].as_array().unwrap();
    assert_eq!(rows.len(), runs.len(), "{api}");
    runs.iter()
        .map(|(label, host)| {
            let row = rows
                .iter()
                .find(|r| r["label"] == *label)
                .unwrap_or_else(|| panic!("{label} is not stored: {api}"));
            assert_eq!(row["host"], *host);
            Stored {
                id: row["id"].as_i64().unwrap(),
                label: label.to_string(),
                host: host.to_string(),
            }
        })
        .collect()
}

/// `s` as a JavaScript string literal.
fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// The page in `tab` scrolls neither sideways nor within a table (a
/// report's rule: what a person must see is in the window); else the
/// test fails naming what sticks out.
#[track_caller]
fn assert_fits(tab: &mut Tab<'_>, what: &str) {
    let (scroll, inner): (u32, u32) =
        tab.eval("[document.documentElement.scrollWidth, innerWidth]");
    assert_eq!(inner, WIDTH_PX, "{what}: the window");
    let over: Vec<String> = tab.eval(OVERFLOW_JS);
    if scroll > inner || !over.is_empty() {
        panic!(
            "{what}: the page is {scroll} px wide at {inner} px; what sticks out:\n{}",
            over.join("\n")
        );
    }
}

/// No script error, console error or failed load in `tab` so far.
#[track_caller]
fn assert_no_errors(tab: &mut Tab<'_>, what: &str) {
    assert_eq!(tab.errors(), Vec::<String>::new(), "{what}: errors");
}

/// The page's path and query, as the browser shows it.
fn at(tab: &mut Tab<'_>) -> String {
    tab.eval("location.pathname + location.search")
}

/// The `<h1>` of the page.
fn heading(tab: &mut Tab<'_>) -> String {
    tab.eval("document.querySelector('h1').textContent")
}

/// The ids of the list's rows, in order, as their checkboxes hold them.
fn listed(tab: &mut Tab<'_>) -> Vec<i64> {
    tab.eval("[...document.querySelectorAll('#runs input.pick')].map(i => Number(i.value))")
}

/// Keep a screenshot of the page as `name`.png, as wide as the window.
fn keep(tab: &mut Tab<'_>, name: &str) {
    let shot = tab.screenshot(name);
    assert_eq!(png_size(&shot).0, WIDTH_PX, "{}", shot.display());
}

/// Runs of plain labels on two boards (newest last).
const PLAIN: [(&str, &str); 5] = [
    ("baseline", "board-a"),
    ("isolcpus 1", "board-b"),
    ("rt tuned", "board-a"),
    ("rpi 4", "board-c"),
    ("rt tuned, irq threads", "board-b"),
];

#[test]
fn a_person_opens_a_run_goes_back_compares_three_and_opens_a_boards_last_run() {
    let dir = TempDir::new("browser-serve");
    let (db, runs) = store(&dir, &PLAIN);
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    let Some(browser) = Browser::start() else {
        return;
    };
    let mut tab = browser.tab();
    tab.set_width(WIDTH_PX);

    // The list: every run, newest first.
    tab.goto(&srv.url("/"));
    assert_eq!(heading(&mut tab), "Stored runs");
    let newest_first: Vec<i64> = runs.iter().rev().map(|r| r.id).collect();
    assert_eq!(listed(&mut tab), newest_first);
    assert_fits(&mut tab, "the list");
    keep(&mut tab, "serve_list");

    // A run's id, clicked: its report, under the bar back to the list.
    let third = &runs[2];
    tab.click(&format!("#run-{} a[href='/runs/{}']", third.id, third.id));
    tab.wait_load();
    assert_eq!(at(&mut tab), format!("/runs/{}", third.id));
    assert_eq!(
        heading(&mut tab),
        format!("rtscope report: {}", third.label)
    );
    let section: String = tab.eval("document.querySelector('section.run h2').textContent");
    assert_eq!(section, third.label);
    let facts: String = tab.eval("document.querySelector('section.run').textContent");
    assert!(facts.contains(&third.host), "the run's host in\n{facts}");
    assert!(
        tab.eval::<bool>("!!document.querySelector('nav#serve-nav a[href=\"/\"]')"),
        "the bar's link to the list"
    );
    assert_fits(&mut tab, "a run");
    keep(&mut tab, "serve_run");

    // Back in the history: the list again, as it was.
    let _: serde_json::Value = tab.eval("history.back()");
    tab.wait_for(
        "location.pathname === '/' && document.querySelectorAll('#runs input.pick').length > 0",
        Duration::from_secs(20),
    );
    assert_eq!(heading(&mut tab), "Stored runs");
    assert_eq!(listed(&mut tab), newest_first);

    // Three boxes ticked with the mouse, compared.
    let picked = [&runs[0], &runs[2], &runs[4]];
    // A box left ticked by the history is unticked first: only these three.
    let _: serde_json::Value =
        tab.eval("document.querySelectorAll('input.pick').forEach(i => i.checked = false)");
    for r in picked {
        tab.click(&format!("input.pick[value='{}']", r.id));
    }
    let ticked: Vec<i64> =
        tab.eval("[...document.querySelectorAll('input.pick:checked')].map(i => Number(i.value))");
    let mut want: Vec<i64> = picked.iter().map(|r| r.id).collect();
    want.sort();
    let mut got = ticked.clone();
    got.sort();
    assert_eq!(got, want, "the boxes ticked");
    tab.click("#compare");
    tab.wait_load();
    let address = at(&mut tab);
    let mut compared: Vec<i64> = address
        .strip_prefix("/compare?runs=")
        .unwrap_or_else(|| panic!("not the comparison: {address}"))
        .split(',')
        .map(|id| id.parse().unwrap())
        .collect();
    compared.sort();
    assert_eq!(compared, want, "{address}");
    assert_eq!(heading(&mut tab), "rtscope report: 3 runs compared");
    let mut sections: Vec<String> =
        tab.eval("[...document.querySelectorAll('section.run h2')].map(h => h.textContent)");
    sections.sort();
    let mut labels: Vec<String> = picked.iter().map(|r| r.label.clone()).collect();
    labels.sort();
    assert_eq!(sections, labels, "the runs compared");
    let table: String = tab.eval("document.querySelector('section#comparison').textContent");
    for r in picked {
        assert!(table.contains(&r.label), "{} in the comparison", r.label);
    }
    for r in [&runs[1], &runs[3]] {
        assert!(!table.contains(&r.label), "{} is not ticked", r.label);
    }
    assert_fits(&mut tab, "the comparison");
    keep(&mut tab, "serve_compare");

    // The boards: one row per host, with its runs and its newest run.
    tab.goto(&srv.url("/boards"));
    assert_eq!(heading(&mut tab), "Boards");
    let rows: Vec<(String, u32, i64)> = tab.eval(
        "[...document.querySelectorAll('#boards tbody tr')].map(r => \
           [r.cells[0].title, Number(r.cells[1].textContent), Number(r.cells[2].textContent)])",
    );
    let mut hosts: Vec<&str> = runs.iter().map(|r| r.host.as_str()).collect();
    hosts.sort();
    hosts.dedup();
    assert_eq!(rows.len(), hosts.len(), "{rows:?}");
    for host in &hosts {
        let of_host: Vec<&Stored> = runs.iter().filter(|r| r.host == *host).collect();
        let newest = of_host.last().unwrap().id;
        assert!(
            rows.contains(&(host.to_string(), of_host.len() as u32, newest)),
            "{host}: {} runs, the last {newest}, in {rows:?}",
            of_host.len()
        );
    }
    assert_fits(&mut tab, "the boards");
    keep(&mut tab, "serve_boards");
    // The last run of board-b, clicked: its page.
    let row = rows.iter().position(|r| r.0 == "board-b").unwrap() + 1;
    let last = runs.iter().rfind(|r| r.host == "board-b").unwrap();
    tab.click(&format!(
        "#boards tbody tr:nth-child({row}) td:nth-child(3) a"
    ));
    tab.wait_load();
    assert_eq!(at(&mut tab), format!("/runs/{}", last.id));
    assert_eq!(heading(&mut tab), format!("rtscope report: {}", last.label));

    assert_no_errors(&mut tab, "the list, a run, the comparison, the boards");
}

/// Runs that fill every column: long labels, hosts and kernel
/// releases, each with tags and a deadline (the verdict's longest line).
const WIDE: [(&str, &str); 6] = [
    (
        "isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3, irq threads pinned to CPU 0, hackbench load",
        "lab-bench-board-with-a-long-name-04.example.internal",
    ),
    (
        "PREEMPT_RT 6.1 with the governor at performance and every C-state off",
        "lab-bench-board-with-a-long-name-07.example.internal",
    ),
    (
        "baseline_without_any_tuning_whatsoever_and_no_spaces_in_its_label",
        "lab-bench-board-with-a-long-name-04.example.internal",
    ),
    (
        "rt tuned, stress-ng --cpu 4 --io 2 --vm 1 on the other CPUs",
        "rpi4-in-the-cabinet-by-the-door",
    ),
    (
        "rpi 4",
        "lab-bench-board-with-a-long-name-07.example.internal",
    ),
    (
        "a label of many words that a person wrote to say what this run was about",
        "rpi4-in-the-cabinet-by-the-door",
    ),
];

/// Every page of `rtscope serve` shows its whole width at 1280 px, the
/// key column (the verdict) in view: the page never scrolls sideways,
/// nor does a table within it, however long the labels, hosts and
/// kernel releases are (the report pages' rule).
#[test]
fn every_page_shows_its_verdict_column_whole_at_1280_px() {
    let dir = TempDir::new("browser-serve-wide");
    let (db, runs) = store_edited(&dir, &WIDE, |i, r| {
        r.fingerprint.kernel_release =
            format!("6.1.{i}-rt-2026-11-20-custom-build-with-a-long-localversion");
        r.limits.deadline_ns = Some(if i % 2 == 0 { 50_000 } else { 500_000 });
        r.tags.insert(
            "load".into(),
            "hackbench-and-stress-ng-on-all-other-cpus".into(),
        );
    });
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    let Some(browser) = Browser::start() else {
        return;
    };
    let mut tab = browser.tab();
    tab.set_width(WIDTH_PX);
    let board = &runs[0].host;
    let pages = [
        ("/".to_string(), Some("#runs")),
        ("/?sort=worst".to_string(), Some("#runs")),
        ("/boards".to_string(), Some("#boards")),
        (format!("/boards/{board}"), Some("#board-runs")),
        (format!("/runs/{}", runs[0].id), None),
        (format!("/compare?runs={},{}", runs[0].id, runs[1].id), None),
    ];
    for (page, table) in &pages {
        tab.goto(&srv.url(page));
        assert_fits(&mut tab, page);
        if let Some(t) = table {
            // The verdict, the last column but the boards' monitors, is
            // in the window.
            let (right, text): (f64, String) = tab.eval(&format!(
                "(() => {{ const c = [...document.querySelectorAll('{t} tbody tr:first-child td.verdict-cell')][0]; \
                   const r = c.getBoundingClientRect(); return [r.right, c.textContent]; }})()"
            ));
            assert!(
                right <= WIDTH_PX as f64,
                "{page}: the verdict '{text}' ends at {right} px"
            );
            assert!(
                text.contains("deadline"),
                "{page}: the verdict reads '{text}'"
            );
        }
    }
    keep(&mut tab, "serve_wide_compare");
    tab.goto(&srv.url("/"));
    keep(&mut tab, "serve_wide_list");
    assert_no_errors(&mut tab, "the pages of long values");
}

#[test]
fn hostile_labels_tags_and_hosts_stay_text_in_the_live_page() {
    let dir = TempDir::new("browser-serve-hostile");
    let host = long_host();
    let (db, runs) = store(
        &dir,
        &[
            ("baseline", "board-a"),
            (HOSTILE_LABEL, "board-b"),
            ("isolated", &host),
        ],
    );
    let (plain, hostile, long) = (&runs[0], &runs[1], &runs[2]);
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    let Some(browser) = Browser::start() else {
        return;
    };
    let mut tab = browser.tab();
    tab.set_width(WIDTH_PX);
    let tag = format!("{}={}", QUOTED_TAG.0, QUOTED_TAG.1);
    let escaped = |s: &str| {
        s.replace('%', "%25")
            .replace('<', "%3C")
            .replace('>', "%3E")
            .replace('"', "%22")
            .replace('\'', "%27")
            .replace('&', "%26")
            .replace('=', "%3D")
            .replace(' ', "%20")
    };
    // (page, texts its text shows whole, texts a cell's tooltip holds)
    let pages: Vec<(String, Vec<&str>, Vec<&str>)> = vec![
        ("/".into(), vec![HOSTILE_LABEL], vec![host.as_str()]),
        (
            format!("/?label={}", escaped(HOSTILE_LABEL)),
            vec![HOSTILE_LABEL],
            vec![],
        ),
        (
            format!("/?tag={}", escaped(&tag)),
            vec![HOSTILE_LABEL],
            vec![],
        ),
        (
            "/?sort=worst".into(),
            vec![HOSTILE_LABEL],
            vec![host.as_str()],
        ),
        ("/boards".into(), vec![HOSTILE_LABEL], vec![host.as_str()]),
        (
            format!("/runs/{}", hostile.id),
            vec![HOSTILE_LABEL, tag.as_str()],
            vec![],
        ),
        (format!("/runs/{}", long.id), vec![host.as_str()], vec![]),
        (
            format!("/compare?runs={},{},{}", plain.id, hostile.id, long.id),
            vec![HOSTILE_LABEL, host.as_str(), tag.as_str()],
            vec![],
        ),
    ];
    for (page, shown, tooltips) in &pages {
        tab.goto(&srv.url(page));
        assert_eq!(
            tab.eval::<String>("typeof window.__pwned"),
            "undefined",
            "{page}: the label ran"
        );
        let made: Vec<String> = tab.eval(
            "[...document.querySelectorAll('script, x, b')].map(e => e.outerHTML.slice(0, 80))",
        );
        assert_eq!(
            made,
            Vec::<String>::new(),
            "{page}: elements made of values"
        );
        let text: String = tab.eval("document.body.textContent");
        for s in shown {
            assert!(
                text.contains(s),
                "{page}: '{}' not shown as text",
                &s[..s.len().min(60)]
            );
        }
        for s in tooltips {
            let titled: bool = tab.eval(&format!(
                "[...document.querySelectorAll('[title]')].some(e => e.title === {})",
                js(s)
            ));
            assert!(
                titled,
                "{page}: no tooltip holds '{}'",
                &s[..s.len().min(60)]
            );
        }
        assert_fits(&mut tab, page);
    }
    // The form shows the filters given as they were typed.
    tab.goto(&srv.url(&format!("/?tag={}", escaped(&tag))));
    assert_eq!(listed(&mut tab), [hostile.id]);
    assert_eq!(
        tab.eval::<String>("document.querySelector('#filters input[name=tag]').value"),
        tag
    );
    tab.goto(&srv.url(&format!("/?label={}", escaped(HOSTILE_LABEL))));
    assert_eq!(listed(&mut tab), [hostile.id]);
    assert_eq!(
        tab.eval::<String>("document.querySelector('#filters input[name=label]').value"),
        HOSTILE_LABEL
    );
    assert_no_errors(&mut tab, "the pages of hostile values");
}

#[test]
fn with_auth_a_tab_without_credentials_gets_401_and_one_with_them_the_list() {
    let dir = TempDir::new("browser-serve-auth");
    let (db, runs) = store(&dir, &PLAIN[..2]);
    let token = dir.join("token");
    std::fs::write(&token, "bearer br0wser-t0ken\n").unwrap();
    let srv = Server::start(
        &dir,
        &db,
        &["--listen", "127.0.0.1:0", "--auth", token.to_str().unwrap()],
    );
    let Some(browser) = Browser::start() else {
        return;
    };
    let status = "performance.getEntriesByType('navigation')[0].responseStatus";

    let mut none = browser.tab();
    for page in ["/", "/boards", &format!("/runs/{}", runs[0].id)] {
        none.goto(&srv.url(page));
        assert_eq!(none.eval::<u16>(status), 401, "{page}");
        let text: String = none.eval("document.body.textContent");
        assert!(text.contains("401 unauthorized"), "{page}: {text}");
        assert!(!text.contains(&runs[0].label), "{page}: a run shown");
        assert_eq!(
            none.eval::<u32>("document.querySelectorAll('table').length"),
            0
        );
    }

    let mut tab = browser.tab();
    tab.set_width(WIDTH_PX);
    tab.set_headers(&[("Authorization", "Bearer br0wser-t0ken")]);
    tab.goto(&srv.url("/"));
    assert_eq!(tab.eval::<u16>(status), 200);
    assert_eq!(heading(&mut tab), "Stored runs");
    assert_eq!(listed(&mut tab), [runs[1].id, runs[0].id]);
    // Its links carry them too.
    tab.click(&format!(
        "#run-{} a[href='/runs/{}']",
        runs[0].id, runs[0].id
    ));
    tab.wait_load();
    assert_eq!(tab.eval::<u16>(status), 200);
    assert_eq!(
        heading(&mut tab),
        format!("rtscope report: {}", runs[0].label)
    );
    assert_no_errors(&mut tab, "the list and a run, with credentials");
}
