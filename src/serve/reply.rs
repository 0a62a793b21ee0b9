//! How a request that cannot be answered is answered: 400 (a bad query
//! or reference, with the same words as the CLI), 404 (no such run or
//! page), 500 (the store failed; a short text, never a panic), 503 (the
//! request outlived its deadline). Pages get a small HTML page, the API
//! a JSON object `{"error": TEXT}`.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A request that failed, and why (the text shown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    BadRequest(String),
    NotFound(String),
    Internal(String),
    Timeout(String),
}

impl Failure {
    pub fn status(&self) -> StatusCode {
        match self {
            Failure::BadRequest(_) => StatusCode::BAD_REQUEST,
            Failure::NotFound(_) => StatusCode::NOT_FOUND,
            Failure::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Failure::Timeout(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Failure::BadRequest(t)
            | Failure::NotFound(t)
            | Failure::Internal(t)
            | Failure::Timeout(t) => t,
        }
    }

    /// The answer for the JSON API.
    pub fn json(&self) -> Response {
        let body = serde_json::json!({ "error": self.text() }).to_string();
        (
            self.status(),
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response()
    }

    /// The answer for a page: a small HTML page saying what went wrong,
    /// with a link back to the list.
    pub fn page(&self) -> Response {
        let status = self.status();
        let body = super::pages::error_page(status, self.text());
        (
            status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            body,
        )
            .into_response()
    }
}

impl From<super::query::BadQuery> for Failure {
    fn from(e: super::query::BadQuery) -> Failure {
        Failure::BadRequest(e.0)
    }
}

impl From<crate::store::StoreError> for Failure {
    fn from(e: crate::store::StoreError) -> Failure {
        use crate::store::StoreError as E;
        match e {
            E::NoRun { .. } | E::NoStore { .. } => Failure::NotFound(e.to_string()),
            E::Ambiguous { .. } => Failure::BadRequest(e.to_string()),
            e => Failure::Internal(format!("{e:#}")),
        }
    }
}

impl From<crate::report::page::PageError> for Failure {
    fn from(e: crate::report::page::PageError) -> Failure {
        Failure::Internal(format!("making the page: {e}"))
    }
}

impl From<crate::report::html::ReportError> for Failure {
    fn from(e: crate::report::html::ReportError) -> Failure {
        Failure::Internal(format!("making the report: {e}"))
    }
}

impl From<crate::study::report::ReportError> for Failure {
    fn from(e: crate::study::report::ReportError) -> Failure {
        Failure::Internal(format!("making the study's report: {e}"))
    }
}
