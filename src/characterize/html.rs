//! The HTML report of one or more characterizations: one self-contained
//! page (the report's stylesheet inline, no script, no network). With
//! several, first the side-by-side table (seed 001's configurations as
//! columns), then per characterization its head, its tables, the OS-noise
//! figures, the PI verdict and the self-checks. Pure: records in, HTML out.

use super::{Characterization, compare, text};
use std::fmt::Write;

const STYLE: &str = include_str!("../../assets/templates/report.css");

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Rows (header first) as an HTML table; columns after the first are
/// numbers.
fn table(rows: &[Vec<String>], caption: &str) -> String {
    let mut s = String::from("<table>");
    if !caption.is_empty() {
        let _ = write!(s, "<caption>{}</caption>", esc(caption));
    }
    for (i, r) in rows.iter().enumerate() {
        s.push_str("<tr>");
        for (j, c) in r.iter().enumerate() {
            let tag = if i == 0 { "th" } else { "td" };
            let class = if j > 0 { " class=\"num\"" } else { "" };
            let _ = write!(s, "<{tag}{class}>{}</{tag}>", esc(c));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>\n");
    s
}

fn one(c: &Characterization, name: &str) -> String {
    let mut s = String::from("<section>");
    let _ = write!(s, "<h2>{}</h2>", esc(&format!("{name}: {}", c.name())));
    for line in text::head(c).lines() {
        let _ = write!(s, "<p class=\"sub\">{}</p>", esc(line));
    }
    for g in text::groups(c) {
        let _ = write!(s, "<h3>{}</h3>", esc(g.title()));
        s.push_str(&table(&text::group_rows(c, g, " ns"), ""));
        if g == super::Group::Noise {
            s.push_str("<ul>");
            for l in text::noise_lines(c).lines() {
                let _ = write!(s, "<li>{}</li>", esc(l));
            }
            s.push_str("</ul>");
            let x = text::explanations(c);
            if !x.is_empty() {
                let _ = write!(s, "<pre>{}</pre>", esc(x.trim()));
            }
        }
        if g == super::Group::Inversion
            && let Some(v) = &c.pi_verdict
        {
            let _ = write!(s, "<p><strong>{}</strong></p>", esc(&v.text));
        }
    }
    if !c.checks.is_empty() {
        s.push_str("<h3>Self-checks</h3><ul>");
        for k in &c.checks {
            let _ = write!(
                s,
                "<li>{}: {} ({})</li>",
                if k.held { "held" } else { "FAILED" },
                esc(&k.fact),
                esc(&k.bench)
            );
        }
        s.push_str("</ul>");
    }
    s.push_str("<h3>What each row times</h3><ul>");
    let mut seen: Vec<&str> = Vec::new();
    for r in &c.results {
        if !seen.contains(&r.bench.as_str()) {
            seen.push(&r.bench);
            let help = super::find(&r.bench).map(|b| b.measures).unwrap_or("");
            let _ = write!(s, "<li><code>{}</code>: {}</li>", esc(&r.bench), esc(help));
        }
    }
    s.push_str("</ul></section>\n");
    s
}

/// The page; `names[i]` names `cs[i]` (as given on the command line).
pub fn render(cs: &[&Characterization], names: &[String], title: Option<&str>) -> String {
    let title = title.map(str::to_string).unwrap_or_else(|| {
        let n: Vec<String> = cs.iter().map(|c| c.name()).collect();
        format!("Platform characterization: {}", n.join(" vs "))
    });
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}\ntd.num, th.num {{ text-align: right; }}</style></head><body><header class=\"page\"><h1>{}</h1><p class=\"sub\">rtscope characterize: values in nanoseconds (ns); the clock's read cost is subtracted from timed calls.</p></header><main>\n",
        esc(&title),
        esc(&title)
    );
    if cs.len() > 1 {
        s.push_str("<section><h2>Side by side</h2>");
        let labels: Vec<String> = cs
            .iter()
            .enumerate()
            .map(|(i, c)| {
                format!(
                    "{} = {} ({})",
                    (b'A' + (i as u8 % 26)) as char,
                    names.get(i).map(String::as_str).unwrap_or("?"),
                    c.name()
                )
            })
            .collect();
        let _ = write!(s, "<p class=\"sub\">{}</p>", esc(&labels.join("; ")));
        for d in compare::differences(cs) {
            let _ = write!(s, "<p class=\"sub\">note: {}</p>", esc(&d));
        }
        s.push_str(&table(&compare::table_rows(cs), ""));
        s.push_str("</section>\n");
    }
    for (i, c) in cs.iter().enumerate() {
        s.push_str(&one(c, names.get(i).map(String::as_str).unwrap_or("?")));
    }
    s.push_str("</main></body></html>\n");
    s
}
