//! A study in `rtscope serve` as Chromium shows it at 1280 px (issue
//! 40): from the studies list to the study's report, a cell of its
//! matrix to that cell's verdict, and the cell's run to the run's own
//! page; the description, markup were it not escaped, stays text; no
//! error; a screenshot of the study's page.

use super::{Browser, png_size};
use crate::serve::{Server, study_of_two_runs};
use crate::util::{TempDir, exclusive_system, require_root};

#[test]
fn a_study_s_cell_leads_to_its_run_s_page() {
    if !require_root() {
        return;
    }
    let dir = TempDir::new("browser-study");
    let db = dir.join("s.db");
    {
        let _g = exclusive_system();
        study_of_two_runs(&dir, &db, "intervals", "<b>which interval</b>");
    }
    let Some(browser) = Browser::start() else {
        return;
    };
    let srv = Server::start(&dir, &db, &["--listen", "127.0.0.1:0"]);
    let mut tab = browser.tab();
    tab.set_width(1280);
    tab.goto(&srv.url("/studies"));
    tab.click("#studies a");
    tab.wait_load();
    assert_eq!(
        tab.eval::<String>("location.pathname"),
        "/studies/intervals"
    );
    let sub: String = tab.eval("document.querySelector('p.sub').textContent");
    assert_eq!(sub, "<b>which interval</b>");
    assert_eq!(
        tab.eval::<u32>("document.querySelectorAll('header b, p.sub b').length"),
        0
    );
    let scroll: u32 = tab.eval("document.documentElement.scrollWidth");
    assert!(scroll <= 1280, "the study's page is {scroll} px wide");
    let shot = tab.screenshot("serve_study");
    assert_eq!(png_size(&shot).0, 1280);
    // The matrix's second cell (interval 2ms) to its verdict, in the page.
    tab.click("#matrix tbody tr:nth-child(2) a");
    let hash: String = tab.eval("location.hash");
    assert!(hash.len() > 1, "no anchor: {hash}");
    let verdict: String = tab.eval(&format!(
        "document.getElementById({}).textContent",
        serde_json::to_string(&hash[1..]).unwrap()
    ));
    assert!(verdict.contains("interval=2ms"), "{verdict}");
    // Its run, by the link in its verdict, to the run's own page.
    tab.click(&format!("[id=\"{}\"] ul.runids a", &hash[1..]));
    tab.wait_load();
    let path: String = tab.eval("location.pathname");
    assert!(path.starts_with("/runs/"), "{path}");
    let body: String = tab.eval("document.body.textContent");
    assert!(
        body.contains("interval=2ms"),
        "the run's page is not the cell's run"
    );
    assert_eq!(tab.errors(), Vec::<String>::new());
}
