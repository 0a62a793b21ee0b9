//! A monitor's page in `rtscope serve` as Chromium shows it at 1280 px:
//! it follows the monitor as windows land in the store (no reload: the
//! page's own script, the one its policy allows, over server-sent
//! events), a new window at the top of its table and the plot drawn
//! again; a monitor and host named to be markup stay text; no error; a
//! screenshot before and after (target/artefacts/screenshots/), the one
//! after taller by the new row.

use super::{Browser, png_size};
use crate::serve::{Server, window};
use crate::util::TempDir;
use std::time::Duration;

const WIDTH_PX: u32 = 1280;
/// A monitor's name that would run a script, were it markup.
const NAME: &str = "<img src=x onerror=window.__pwned=1>";

#[test]
fn a_monitor_s_page_gains_a_window_without_a_reload() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let dir = TempDir::new("browser-live");
    let db = dir.join("runs.db");
    let store = rtscope::store::Store::open(&db).unwrap();
    let host = "pi <4>";
    store
        .insert_windows(&[
            window(NAME, host, 0, 60, 40_000),
            window(NAME, host, 1, 60, 55_000),
            window(NAME, host, 0, 120, 61_000),
        ])
        .unwrap();
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    let mut tab = browser.tab();
    tab.set_width(WIDTH_PX);
    // From the list of monitors to the monitor's page, by its link.
    tab.goto(&format!("http://127.0.0.1:{}/monitors", srv.port));
    tab.click("#monitors a");
    tab.wait_load();
    let path: String = tab.eval("location.pathname + location.search");
    assert!(path.starts_with("/monitors/%3Cimg"), "{path}");
    let rows = "document.querySelector('#windows tbody').rows.length";
    assert_eq!(tab.eval::<u32>(rows), 3);
    let title: String = tab.eval("document.querySelector('h1').textContent");
    assert_eq!(title, format!("Monitor {NAME}"));
    assert!(tab.eval::<bool>("document.querySelector('#live-plot').complete && document.querySelector('#live-plot').naturalWidth > 0"));
    // Looked at, not only kept: the page before fits the window, and
    // its height is what the page after must exceed (one row more).
    let scroll: u32 = tab.eval("document.documentElement.scrollWidth");
    assert!(scroll <= WIDTH_PX, "the page is {scroll} px wide");
    let before = png_size(&tab.screenshot("serve_monitor_before"));
    assert_eq!(before.0, WIDTH_PX);
    // A window lands: the page shows it, without loading again.
    tab.eval::<u32>("window.__same_page = 7");
    store
        .insert_windows(&[window(NAME, host, 1, 180, 987_000)])
        .unwrap();
    tab.wait_for(
        "document.getElementById('live').dataset.updates === '1'",
        Duration::from_secs(30),
    );
    assert_eq!(
        tab.eval::<u32>("window.__same_page"),
        7,
        "the page was reloaded"
    );
    assert_eq!(tab.eval::<u32>(rows), 4);
    let top: Vec<String> = tab.eval(
        "[...document.querySelector('#windows tbody').rows[0].cells].map(c => c.textContent)",
    );
    assert_eq!(
        top,
        [
            "2026-01-01 00:03:00",
            host,
            "CPU 1",
            "60000",
            "0",
            "493.5",
            "987.0"
        ]
    );
    let status: String = tab.eval("document.getElementById('live-status').textContent");
    assert!(status.contains("2026-01-01 00:03:00"), "{status}");
    // The plot is drawn again, with the new window in it.
    let src: String = tab.eval("document.querySelector('#live-plot').src");
    assert!(src.contains("v="), "{src}");
    tab.wait_for(
        "document.querySelector('#live-plot').complete && document.querySelector('#live-plot').naturalWidth > 0",
        Duration::from_secs(10),
    );
    // The names stayed text: no script ran, no element was made of them.
    assert_eq!(tab.eval::<String>("typeof window.__pwned"), "undefined");
    assert_eq!(
        tab.eval::<u32>("document.querySelectorAll('main img').length"),
        1
    );
    let scroll: u32 = tab.eval("document.documentElement.scrollWidth");
    assert!(scroll <= WIDTH_PX, "the page is {scroll} px wide");
    assert_eq!(tab.errors(), Vec::<String>::new());
    // The new row's height (the page grows by it, to a pixel's rounding).
    let row_px: u32 = tab.eval(
        "Math.floor(document.querySelector('#windows tbody').rows[0].getBoundingClientRect().height)",
    );
    assert!(row_px > 0);
    let after = png_size(&tab.screenshot("serve_monitor_after"));
    assert_eq!(after.0, WIDTH_PX);
    assert!(
        after.1 + 1 >= before.1 + row_px,
        "the screenshot after ({after:?}) is not a {row_px} px row taller than before ({before:?})"
    );
}
