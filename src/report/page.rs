//! The one renderer of HTML pages. Every page (a run's report, runs
//! compared, a monitor's long-term view, a study, a characterization) is
//! a view that its own module builds (plain strings and tables) and that
//! a minijinja template of assets/templates lays out, with its
//! stylesheet inline. The templates escape every text they show; only
//! figures (SVG made by `plot` and `why_svg`) go in as they are.

use serde::Serialize;
use thiserror::Error;

/// The pages rtscope writes, each one template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Page {
    /// Runs: one run, several compared, or a monitor (`report::html`).
    Report,
    /// A study (`study::report`).
    Study,
    /// One or more characterizations (`characterize::html`).
    Characterization,
    /// A page of `rtscope serve` (`serve::pages`): the runs list, the
    /// boards, an error.
    Serve,
}

const REPORT_CSS: &str = include_str!("../../assets/templates/report.css");

impl Page {
    fn name(self) -> &'static str {
        match self {
            Page::Report => "report.html",
            Page::Study => "study.html",
            Page::Characterization => "characterization.html",
            Page::Serve => "serve.html",
        }
    }

    fn template(self) -> &'static str {
        match self {
            Page::Report => include_str!("../../assets/templates/report.html"),
            Page::Study => include_str!("../../assets/templates/study.html"),
            Page::Characterization => {
                include_str!("../../assets/templates/characterization.html")
            }
            Page::Serve => include_str!("../../assets/templates/serve.html"),
        }
    }

    /// The stylesheet put inline (the template's `style`).
    fn style(self) -> String {
        match self {
            Page::Report => REPORT_CSS.into(),
            Page::Study => {
                format!(
                    "{REPORT_CSS}{}",
                    include_str!("../../assets/templates/study.css")
                )
            }
            Page::Characterization => format!(
                "{REPORT_CSS}\n{}",
                include_str!("../../assets/templates/characterization.css").trim_end()
            ),
            Page::Serve => format!(
                "{REPORT_CSS}\n{}",
                include_str!("../../assets/templates/serve.css").trim_end()
            ),
        }
    }
}

/// A labelled value of a report's fact lists.
#[derive(Serialize, Debug)]
pub struct Pair {
    pub(crate) key: String,
    pub(crate) value: String,
}

pub fn pair(key: &str, value: impl Into<String>) -> Pair {
    Pair {
        key: key.into(),
        value: value.into(),
    }
}

/// A template that would not load or lay its view out (a bug).
#[derive(Debug, Error)]
#[error("template {name}: {detail}")]
pub struct PageError {
    name: &'static str,
    detail: String,
}

/// Lay `view` out as `page`.
pub fn render(page: Page, view: &impl Serialize) -> Result<String, PageError> {
    let name = page.name();
    let fail = |e: minijinja::Error| PageError {
        name,
        detail: format!("{e:#}"),
    };
    let mut env = minijinja::Environment::new();
    env.add_global("style", page.style());
    env.add_template(name, page.template()).map_err(fail)?;
    let tmpl = env.get_template(name).map_err(fail)?;
    tmpl.render(minijinja::value::Serde(view)).map_err(fail)
}
