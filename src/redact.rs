//! Passwords out of what is shown and kept: a PostgreSQL URL's password
//! (in `USER:PASSWORD@` and a `password=` query parameter) becomes `***`
//! in messages, listings and recorded command lines. A leaf: it imports
//! nothing of the crate, so the store, the CPU lock, tune's journal and
//! the reports can all use it.

/// `url` without its password (for messages, listings and recorded
/// command lines): the one in `USER:PASSWORD@` and a `password=` query
/// parameter become `***`. Text that is not a URL comes back unchanged;
/// so does a word that carries a URL after a prefix (`--db=postgresql://…`).
pub fn url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
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
}
