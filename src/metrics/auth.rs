//! `--metrics-auth FILE`: what a scraper must send. The file holds one
//! line: `bearer TOKEN`, `basic USER:PASSWORD`, or a bare token (bearer).
//! Blank lines and `#` comments are ignored. Checks are made in constant
//! time over the expected header value.

use super::MetricsError;
use std::path::Path;

/// Why the credentials file's text is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("it is empty: write `bearer TOKEN` or `basic USER:PASSWORD`")]
    Empty,
    #[error("it has more than one line: write one `bearer TOKEN` or `basic USER:PASSWORD`")]
    ManyLines,
    #[error("a token has no spaces: write `bearer TOKEN` or `basic USER:PASSWORD`")]
    Spaces,
    #[error(
        "`{0}` has nothing after it: write `bearer TOKEN` or `basic USER:PASSWORD` (an empty token is refused)"
    )]
    SchemeAlone(String),
    #[error("the token or USER:PASSWORD must be printable ASCII without spaces")]
    NotPrintable,
    #[error("basic needs USER:PASSWORD")]
    NoColon,
}

/// The credentials the endpoint expects.
#[derive(Clone, PartialEq, Eq)]
pub struct Auth {
    /// The whole expected `Authorization` header value.
    expected: String,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Auth(..)")
    }
}

/// The largest credentials file read: its one line is a token or a user
/// and password, a few hundred bytes.
pub const AUTH_MAX_BYTES: u64 = 64 << 10;

/// The text of the credentials file `path` (of `--auth` and
/// `--metrics-auth`): a regular file of at most [`AUTH_MAX_BYTES`], read
/// with that cap; anything else (`/dev/zero`, a FIFO, a directory, a
/// large file) is refused unread, with why.
pub fn read_credentials(path: &Path) -> Result<String, String> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it ({e})"))?;
    let t = meta.file_type();
    let kind = if t.is_dir() {
        "a directory"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        ""
    };
    let what = "give a file holding one line, `bearer TOKEN` or `basic USER:PASSWORD`";
    if !kind.is_empty() {
        return Err(format!("not a regular file but {kind}: {what}"));
    }
    let bytes = crate::input::read_limited(path, AUTH_MAX_BYTES, "a credentials file").map_err(
        |e| match e {
            crate::input::InputError::TooLarge { size, limit, .. } => {
                format!("{size}, above the {limit} a credentials file may be: {what}")
            }
            crate::input::InputError::Read { source, .. } => format!("cannot read it ({source})"),
            // Refused above, before reading; said in input's words if the
            // file changed kind since.
            e @ (crate::input::InputError::NotAFile { .. }
            | crate::input::InputError::NoWriter { .. }) => format!("{e}: {what}"),
        },
    )?;
    String::from_utf8(bytes).map_err(|_| format!("not text (UTF-8): {what}"))
}

impl Auth {
    /// Read the credentials from `path`.
    pub fn from_file(path: &Path) -> Result<Auth, MetricsError> {
        let err = |why: String| MetricsError::AuthFile {
            path: path.to_path_buf(),
            why,
        };
        let text = read_credentials(path).map_err(err)?;
        Auth::parse(&text).map_err(|e| err(e.to_string()))
    }

    /// Parse the file's text.
    pub fn parse(text: &str) -> Result<Auth, AuthError> {
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let line = match lines.as_slice() {
            [one] => *one,
            [] => return Err(AuthError::Empty),
            _ => return Err(AuthError::ManyLines),
        };
        let (kind, rest) = match line.split_once(char::is_whitespace) {
            Some((k, r)) if k.eq_ignore_ascii_case("bearer") || k.eq_ignore_ascii_case("basic") => {
                (k.to_ascii_lowercase(), r.trim())
            }
            Some(_) => return Err(AuthError::Spaces),
            // `bearer` or `basic` alone (a trailing space is trimmed) is
            // a scheme whose credentials were left out, not a token.
            None if line.eq_ignore_ascii_case("bearer") || line.eq_ignore_ascii_case("basic") => {
                return Err(AuthError::SchemeAlone(line.to_string()));
            }
            None => ("bearer".to_string(), line),
        };
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(AuthError::NotPrintable);
        }
        let expected = if kind == "basic" {
            if !rest.contains(':') {
                return Err(AuthError::NoColon);
            }
            format!("Basic {}", base64(rest.as_bytes()))
        } else {
            format!("Bearer {rest}")
        };
        Ok(Auth { expected })
    }

    /// True for `basic USER:PASSWORD` credentials (a browser asks for
    /// them when challenged), false for a bearer token.
    pub fn is_basic(&self) -> bool {
        self.expected.starts_with("Basic ")
    }

    /// Whether the request's `Authorization` header value grants access.
    pub fn allows(&self, header: Option<&str>) -> bool {
        let Some(h) = header else { return false };
        let h = h.trim();
        // The scheme is case-insensitive; the credentials are not.
        let (scheme, cred) = h.split_once(' ').unwrap_or((h, ""));
        let (want_scheme, want_cred) = self.expected.split_once(' ').unwrap_or(("", ""));
        let same_scheme = scheme.eq_ignore_ascii_case(want_scheme);
        same_scheme & constant_time_eq(cred.trim().as_bytes(), want_cred.as_bytes())
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() ^ b.len()) as u8 | ((a.len() != b.len()) as u8);
    for (i, y) in b.iter().enumerate() {
        let x = a.get(i).copied().unwrap_or(0);
        diff |= x ^ y;
    }
    diff == 0
}

/// Standard base64 with padding (RFC 4648).
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                out.push(T[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn tokens_and_basic_credentials() {
        let a = Auth::parse("# comment\ns3cret\n").unwrap();
        assert!(a.allows(Some("Bearer s3cret")));
        assert!(a.allows(Some("bearer s3cret")));
        assert!(!a.allows(Some("Bearer s3cre")));
        assert!(!a.allows(Some("Bearer s3cretx")));
        assert!(!a.allows(Some("Basic s3cret")));
        assert!(!a.allows(None));
        let b = Auth::parse("basic prom:pw").unwrap();
        assert!(b.allows(Some("Basic cHJvbTpwdw==")));
        assert!(!b.allows(Some("Bearer cHJvbTpwdw==")));
        assert!(Auth::parse("").is_err());
        assert!(Auth::parse("a\nb").is_err());
        assert!(Auth::parse("basic nocolon").is_err());
        assert!(Auth::parse("weird scheme").is_err());
    }

    #[test]
    fn a_scheme_without_credentials_is_refused() {
        for bare in ["bearer ", "Bearer", "BEARER\n", "basic", "Basic  \n# c"] {
            let e = Auth::parse(bare).unwrap_err();
            assert!(e.to_string().contains("nothing after it"), "{bare:?}: {e}");
        }
        // A token that merely starts with the word is a token.
        assert!(
            Auth::parse("bearertoken")
                .unwrap()
                .allows(Some("Bearer bearertoken"))
        );
    }
}
