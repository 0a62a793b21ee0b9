//! Passwords out of what is shown and kept: a PostgreSQL URL's password
//! (in `USER:PASSWORD@` and a `password=` query parameter), and the one of
//! a libpq `key=value` connection string, become `***` in messages,
//! listings and recorded command lines. A leaf: it imports
//! nothing of the crate, so the store, the CPU lock, tune's journal and
//! the reports can all use it.

/// `url` without its password (for messages, listings and recorded
/// command lines): the one in `USER:PASSWORD@` and a `password=` query
/// parameter become `***`; so does the value of a `password=` keyword in
/// text that is not a URL (a libpq connection string such as
/// `host=h password=x dbname=y`). Other text comes back unchanged; so
/// does a word that carries a URL after a prefix (`--db=postgresql://…`).
pub fn url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return conninfo(url);
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((auth, host)) => match auth.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => kv.to_string(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// `s` with the value of every libpq `password` keyword (at the start,
/// or after white space or `=`; `password = 'a b'` quoted as libpq
/// quotes) replaced by `***`.
fn conninfo(s: &str) -> String {
    const KEY: &str = "password";
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(at) = s[i..].find(KEY).map(|k| i + k) {
        let word_start = s[..at]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || c == '=');
        let after = &s[at + KEY.len()..];
        let eq = after.trim_start();
        if !word_start || !eq.starts_with('=') {
            out.push_str(&s[i..at + KEY.len()]);
            i = at + KEY.len();
            continue;
        }
        let value = eq[1..].trim_start();
        let value_at = s.len() - value.len();
        let value_len = if let Some(quoted) = value.strip_prefix('\'') {
            // Up to the closing quote; a backslash escapes the next char.
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((k, c)) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '\'' => {
                        end = k + 1;
                        break;
                    }
                    _ => {}
                }
            }
            1 + end
        } else {
            value.find(char::is_whitespace).unwrap_or(value.len())
        };
        out.push_str(&s[i..value_at]);
        out.push_str("***");
        i = value_at + value_len;
    }
    out.push_str(&s[i..]);
    out
}

/// This process's command line with every URL's password replaced by
/// `***`: what runs, journals and lock files keep of it.
pub fn own_command_line() -> Vec<String> {
    command_line(std::env::args())
}

/// A command line with every URL's password replaced by `***`: what is
/// recorded in a run and shown from it.
pub fn command_line<S: AsRef<str>>(words: impl IntoIterator<Item = S>) -> Vec<String> {
    words.into_iter().map(|w| url(w.as_ref())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_replaced_in_urls_and_command_lines() {
        assert_eq!(
            url("postgresql://me:secret@db.lab:5433/rt"),
            "postgresql://me:***@db.lab:5433/rt"
        );
        assert_eq!(url("postgresql://me@h/rt"), "postgresql://me@h/rt");
        assert_eq!(
            url("postgres://me@h/rt?password=secret&sslmode=disable"),
            "postgres://me@h/rt?password=***&sslmode=disable"
        );
        assert_eq!(
            command_line([
                "rtscope",
                "--db=postgresql://u:secret@h/x",
                "--db",
                "postgresql://u:secret@h/x",
                "-D",
                "1s",
            ]),
            [
                "rtscope",
                "--db=postgresql://u:***@h/x",
                "--db",
                "postgresql://u:***@h/x",
                "-D",
                "1s"
            ]
        );
        assert_eq!(url("/var/lib/a:b@c.db"), "/var/lib/a:b@c.db");
    }

    #[test]
    fn passwords_are_replaced_in_libpq_connection_strings() {
        assert_eq!(
            url("host=h password=secret dbname=x"),
            "host=h password=*** dbname=x"
        );
        assert_eq!(
            url(" password = 'a \\' b' user=u"),
            " password = *** user=u"
        );
        assert_eq!(url("--db=password=secret"), "--db=password=***");
        assert_eq!(url("password="), "password=***");
        assert_eq!(url("/tmp/mypassword=x.db"), "/tmp/mypassword=x.db");
        assert_eq!(url("passwords.db"), "passwords.db");
    }
}
