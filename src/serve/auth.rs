//! `serve --auth FILE`: every request must carry the credentials the
//! file names (`bearer TOKEN`, a bare token, or `basic USER:PASSWORD`),
//! read and compared in constant time by [`crate::metrics::auth`], the
//! same file format as `--metrics-auth`, and read the same way: a
//! regular file of at most 64 KiB, anything else refused unread. A request without them, or with
//! others, is answered 401 before any route runs (with
//! `WWW-Authenticate`, so that a browser asks for basic credentials).

use super::ServeError;
use crate::metrics::Auth;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::path::Path;
use std::sync::Arc;

/// Read the credentials file of `--auth`.
pub fn from_file(path: &Path) -> Result<Auth, ServeError> {
    let err = |why: String| ServeError::AuthFile {
        path: path.to_path_buf(),
        why,
    };
    let text = crate::metrics::auth::read_credentials(path).map_err(err)?;
    Auth::parse(&text).map_err(|e| err(e.to_string()))
}

/// The `WWW-Authenticate` challenge for `auth`.
pub fn challenge(auth: &Auth) -> &'static str {
    if auth.is_basic() {
        "Basic realm=\"rtscope\", charset=\"UTF-8\""
    } else {
        "Bearer realm=\"rtscope\""
    }
}

/// The layer: pass the request on when its `Authorization` header grants
/// access, else answer 401.
pub async fn require(State(auth): State<Arc<Auth>>, req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if auth.allows(given) {
        return next.run(req).await;
    }
    (
        StatusCode::UNAUTHORIZED,
        [
            (header::WWW_AUTHENTICATE, challenge(&auth)),
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
        ],
        "401 unauthorized: this rtscope serve asks for credentials (see its --auth file)\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_get_a_basic_challenge() {
        assert!(challenge(&Auth::parse("basic u:p").unwrap()).starts_with("Basic "));
        assert!(challenge(&Auth::parse("bearer t").unwrap()).starts_with("Bearer "));
    }

    #[test]
    fn a_bad_file_is_refused_naming_the_flag() {
        let e = from_file(Path::new("/nonexistent/rtscope-auth")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--auth /nonexistent/rtscope-auth: cannot read it"),
            "{e}"
        );
    }

    #[test]
    fn a_device_a_directory_and_a_large_file_are_refused_unread() {
        let e = from_file(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(
            e.starts_with("--auth /dev/zero: not a regular file but a device"),
            "{e}"
        );
        let e = from_file(Path::new("/")).unwrap_err().to_string();
        assert!(e.contains("not a regular file but a directory"), "{e}");
        let d = std::env::temp_dir().join(format!("rtscope-auth-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let big = d.join("big");
        std::fs::write(&big, "x".repeat(70 << 10)).unwrap();
        let e = from_file(&big).unwrap_err().to_string();
        assert!(
            e.contains("70 KiB, above the 64 KiB a credentials file may be"),
            "{e}"
        );
        let ok = d.join("ok");
        std::fs::write(&ok, "bearer t\n").unwrap();
        assert!(from_file(&ok).is_ok());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
