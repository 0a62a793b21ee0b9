//! What a request asks for, parsed strictly and without the store: the
//! runs list's query string (the filters of `rtscope runs`, sort and
//! paging), run references (`/runs/{id}`, `/compare?runs=`), and URLs
//! built back for links. Pure: text in, typed values or a 400's message
//! out. A run reference is only ever a number, `last`/`latest` or the
//! start of a uuid, never a path: nothing here names a file.

use crate::store::{Origin, RunFilter, RunState};

/// Runs per page by default, and at most.
pub const PER_PAGE: usize = 50;
pub const MAX_PER_PAGE: usize = 500;
/// Tag filters a list may carry: the store's query grows with each one
/// (nearly a thousand were a 500 from SQLite, its expression too large).
pub const MAX_TAGS: usize = 32;
/// Runs compared at most on one page.
pub const MAX_COMPARED: usize = 16;

/// How the list is ordered (the store orders a page in SQL).
pub use crate::store::runs::RunOrder as Sort;

/// The runs list asked for: which runs, in what order, which page.
#[derive(Clone, Debug, PartialEq)]
pub struct ListQuery {
    pub filter: RunFilter,
    pub sort: Sort,
    /// 1-based.
    pub page: usize,
    pub per_page: usize,
    /// The parameters as given (empty ones left out), for links to other
    /// pages and sorts of the same list, and to fill the form again.
    pub given: Vec<(String, String)>,
}

/// Why a request's query or reference is refused (a 400, its text).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadQuery(pub String);

fn bad(s: impl Into<String>) -> BadQuery {
    BadQuery(s.into())
}

/// The list's parameters, in the order the form shows them.
pub const LIST_KEYS: [&str; 11] = [
    "host", "label", "tag", "state", "origin", "kernel", "since", "until", "sort", "page",
    "per_page",
];

/// Split a raw query string into decoded pairs (`+` is a space, `%XX` a
/// byte; the result must be UTF-8). A malformed escape is refused.
pub fn pairs(raw: Option<&str>) -> Result<Vec<(String, String)>, BadQuery> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    raw.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Ok((decode(k)?, decode(v)?))
        })
        .collect()
}

/// Percent-decode one query component.
pub fn decode(s: &str) -> Result<String, BadQuery> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = b
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| bad("a malformed %-escape in the query string"))?;
                out.push(hex);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    let text = String::from_utf8(out).map_err(|_| bad("the query string is not UTF-8"))?;
    // As in a path ([`path_names`]): no stored text holds a NUL.
    if text.contains('\0') {
        return Err(bad(
            "the query string holds a NUL (%00): no stored text holds one",
        ));
    }
    Ok(text)
}

/// Percent-encode a query component (everything but unreserved
/// characters).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `path?k=v&…` with the values encoded (just `path` without pairs).
pub fn href(path: &str, pairs: &[(String, String)]) -> String {
    if pairs.is_empty() {
        return path.to_string();
    }
    let q: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    format!("{path}?{}", q.join("&"))
}

/// Parse the runs list's query (`now_unix_ns` for `since=7d`): the same
/// filters, and the same messages, as `rtscope runs`. Empty values count
/// as not given (a form's empty fields); an unknown parameter, or one
/// given twice (but `tag`), is refused.
pub fn list_query(pairs: &[(String, String)], now_unix_ns: u64) -> Result<ListQuery, BadQuery> {
    let mut q = ListQuery {
        filter: RunFilter::default(),
        sort: Sort::Date,
        page: 1,
        per_page: PER_PAGE,
        given: Vec::new(),
    };
    let mut tags = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (k, v) in pairs {
        let Some(key) = LIST_KEYS.iter().copied().find(|x| x == k) else {
            return Err(bad(format!(
                "unknown parameter '{k}': the list takes {}",
                LIST_KEYS.join(", ")
            )));
        };
        if v.is_empty() {
            continue;
        }
        if key != "tag" {
            if seen.contains(&key) {
                return Err(bad(format!("'{key}' is given twice")));
            }
            seen.push(key);
        }
        q.given.push((key.to_string(), v.clone()));
        let f = &mut q.filter;
        match key {
            "host" => f.host = Some(v.clone()),
            "label" => f.label = Some(v.clone()),
            "kernel" => f.kernel = Some(v.clone()),
            "tag" if tags.len() == MAX_TAGS => {
                return Err(bad(format!(
                    "more than {MAX_TAGS} tag filters: give at most {MAX_TAGS} (each a run must carry)"
                )));
            }
            "tag" => tags.push(v.clone()),
            "state" => f.state = Some(RunState::parse_named(v).map_err(BadQuery)?),
            "origin" => f.origin = Some(Origin::parse_named(v).map_err(BadQuery)?),
            "since" => {
                let t = crate::units::parse_date_ns(v, now_unix_ns, false);
                f.since_unix_ns = Some(t.map_err(|e| bad(format!("since: {e}")))?);
            }
            "until" => {
                let t = crate::units::parse_date_ns(v, now_unix_ns, true);
                f.until_unix_ns = Some(t.map_err(|e| bad(format!("until: {e}")))?);
            }
            "sort" => {
                q.sort = match v.as_str() {
                    "date" => Sort::Date,
                    "worst" => Sort::Worst,
                    _ => return Err(bad(format!("unknown sort '{v}': use date or worst"))),
                }
            }
            "page" => q.page = number(key, v, 1, usize::MAX)?,
            "per_page" => q.per_page = number(key, v, 1, MAX_PER_PAGE)?,
            _ => unreachable!("every key of LIST_KEYS is handled"),
        }
    }
    q.filter.tags = RunFilter::parse_tags(&tags).map_err(|e| bad(e.to_string()))?;
    Ok(q)
}

fn number(key: &str, v: &str, min: usize, max: usize) -> Result<usize, BadQuery> {
    v.parse::<usize>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| {
            if max == usize::MAX {
                bad(format!(
                    "{key} must be a whole number from {min} (got '{v}')"
                ))
            } else {
                bad(format!(
                    "{key} must be a whole number from {min} to {max} (got '{v}')"
                ))
            }
        })
}

/// A run reference as the store resolves it (an id, `last`/`latest`, or
/// 6 to 32 hex digits of a uuid), or `None`: anything else (a path, a
/// dot, a slash, an empty text) names no run.
pub fn run_ref(s: &str) -> Option<&str> {
    let digits = !s.is_empty() && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit());
    let uuid = (6..=32).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit());
    (digits || uuid || s == "last" || s == "latest").then_some(s)
}

/// The rule every request's path passes before any route (so that each
/// route, and each added later, keeps it): each segment, percent-decoded,
/// must be a text that can name something. `.` and `..` are steps of a
/// path, not names (a browser resolves `/monitors/..` to `/`: no link
/// leads to a run, board, study or monitor so named); a NUL is in no
/// name (PostgreSQL's texts cannot hold one: asking the store was a
/// 500 there); a segment that is not UTF-8 once decoded names nothing.
/// Anything else goes on to its route, which answers 404 for a name of
/// nothing stored (`..%2Fetc%2Fpasswd` is such a name, never a path).
pub fn path_names(path: &str) -> Result<(), BadQuery> {
    for seg in path.split('/') {
        let b = seg.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            let hex = (b[i] == b'%')
                .then(|| b.get(i + 1..i + 3))
                .flatten()
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(x) => {
                    out.push(x);
                    i += 3;
                }
                None => {
                    out.push(b[i]);
                    i += 1;
                }
            }
        }
        let Ok(name) = String::from_utf8(out) else {
            return Err(bad(
                "the address is not UTF-8 once decoded: it names no run, board, study or monitor",
            ));
        };
        if name == "." || name == ".." {
            return Err(bad(format!(
                "'{name}' in the address is a step of a path, not a name: serve shows no run, \
                 board, study or monitor named . or .. (a monitor or host so named: give it \
                 another name, rtscope monitor --name, --host)"
            )));
        }
        if name.contains('\0') {
            return Err(bad(
                "the address holds a NUL (%00): no run, board, study or monitor name holds one",
            ));
        }
    }
    Ok(())
}

/// The runs of `/compare`: `runs=1,2,3` (or `runs` repeated, as a form's
/// checkboxes send them), each a [`run_ref`], at most [`MAX_COMPARED`],
/// in the order given, duplicates dropped. The second value is true when
/// they were not given as the one comma-separated value (the page then
/// redirects to that form).
pub fn compare_refs(pairs: &[(String, String)]) -> Result<(Vec<String>, bool), BadQuery> {
    let mut refs: Vec<String> = Vec::new();
    let mut given = 0;
    for (k, v) in pairs {
        if k != "runs" {
            return Err(bad(format!(
                "unknown parameter '{k}': compare takes runs=ID,ID,…"
            )));
        }
        given += 1;
        for r in v.split(',').map(str::trim).filter(|r| !r.is_empty()) {
            let r = run_ref(r).ok_or_else(|| {
                bad(format!(
                    "'{r}' is not a run reference: give run ids (as the list shows them), last, or the start of a uuid"
                ))
            })?;
            if !refs.iter().any(|x| x == r) {
                refs.push(r.to_string());
            }
        }
    }
    if refs.is_empty() {
        return Err(bad(
            "no runs to compare: tick some in the list, or give runs=ID,ID,…",
        ));
    }
    if refs.len() > MAX_COMPARED {
        return Err(bad(format!(
            "{} runs asked for: at most {MAX_COMPARED} are compared on one page",
            refs.len()
        )));
    }
    Ok((refs, given != 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(raw: &str) -> Vec<(String, String)> {
        pairs(Some(raw)).unwrap()
    }

    #[test]
    fn query_strings_decode_and_encode_back() {
        assert_eq!(
            p("label=a+b%2Fc&tag=k%3Dv&x"),
            [
                ("label".into(), "a b/c".into()),
                ("tag".into(), "k=v".into()),
                ("x".into(), String::new())
            ]
        );
        assert!(pairs(Some("a=%zz")).is_err());
        assert!(pairs(Some("a=%f")).is_err());
        assert!(pairs(Some("a=%ff")).is_err(), "not UTF-8");
        assert!(pairs(Some("host=a%00")).unwrap_err().0.contains("NUL"));
        let odd = "<script>\"&'é x";
        assert_eq!(decode(&encode(odd)).unwrap(), odd);
        assert_eq!(
            href("/", &[("label".into(), "a&b=c".into())]),
            "/?label=a%26b%3Dc"
        );
        assert_eq!(href("/boards", &[]), "/boards");
    }

    #[test]
    fn the_list_takes_the_filters_of_rtscope_runs() {
        const DAY: u64 = 86_400 * 1_000_000_000;
        let q = list_query(
            &p("host=pi&label=rpi*&tag=a=1&tag=b&state=complete&origin=imported&kernel=6.1*&since=2d&until=2025-11-20&sort=worst&page=3&per_page=20"),
            10 * DAY,
        )
        .unwrap();
        assert_eq!(q.filter.host.as_deref(), Some("pi"));
        assert_eq!(q.filter.label.as_deref(), Some("rpi*"));
        assert_eq!(q.filter.kernel.as_deref(), Some("6.1*"));
        assert_eq!(
            q.filter.tags,
            [("a".to_string(), Some("1".to_string())), ("b".into(), None)]
        );
        assert_eq!(q.filter.state, Some(RunState::Complete));
        assert_eq!(q.filter.origin, Some(Origin::Imported));
        assert_eq!(q.filter.since_unix_ns, Some(8 * DAY));
        assert_eq!(q.filter.until_unix_ns, Some(20_413 * DAY));
        assert_eq!((q.sort, q.page, q.per_page), (Sort::Worst, 3, 20));
        assert_eq!(q.given.len(), 12);
        // A form's empty fields are not filters.
        let q = list_query(&p("host=&label=&sort=&page="), 0).unwrap();
        assert_eq!(q.filter, RunFilter::default());
        assert_eq!((q.sort, q.page, q.per_page), (Sort::Date, 1, PER_PAGE));
    }

    #[test]
    fn bad_filters_are_refused_with_the_clis_words() {
        let e = |raw: &str| list_query(&p(raw), 0).unwrap_err().0;
        assert!(
            e("state=gone").contains("unknown state 'gone': use running, complete or interrupted")
        );
        assert!(e("state=imported").contains("'imported' is an origin, not a state"));
        assert!(e("origin=gone").contains("unknown origin 'gone'"));
        assert!(e("since=soon").contains("cannot read the date 'soon'"));
        assert!(e("until=2025-13-01").contains("cannot read the date"));
        assert!(e("tag==v").contains("the key before = is empty"));
        assert!(e("sort=size").contains("unknown sort"));
        assert!(e("per_page=501").contains("from 1 to 500"));
        assert!(e("per_page=0").contains("from 1 to 500"));
        assert!(e("page=0").contains("page must be"));
        assert!(e("page=-1").contains("page must be"));
        assert!(e("host=a&host=b").contains("given twice"));
        assert!(e("path=/etc/passwd").contains("unknown parameter 'path'"));
    }

    #[test]
    fn run_references_are_ids_last_or_uuid_prefixes_never_paths() {
        for ok in ["1", "42", "last", "latest", "abcdef", "0123456789abcdef"] {
            assert_eq!(run_ref(ok), Some(ok));
        }
        for no in [
            "",
            "..",
            "../..",
            "../../etc/passwd",
            "/etc/passwd",
            "1/2",
            "1.json",
            "%2e%2e",
            "abc",
            "-1",
            "1 ",
            "123456789012345678901234567890123",
            &"a".repeat(33),
        ] {
            assert_eq!(run_ref(no), None, "{no:?}");
        }
    }

    #[test]
    fn path_steps_nul_and_bytes_that_are_no_text_name_nothing() {
        for ok in [
            "/",
            "/runs/1",
            "/boards/pi%204",
            "/boards/..%2F..%2Fetc%2Fpasswd",
            "/boards/...",
            "/boards/.hidden",
            "/boards/%zz",
            "/studies/a.b",
        ] {
            assert_eq!(path_names(ok), Ok(()), "{ok}");
        }
        for (no, why) in [
            ("/boards/..", "step of a path"),
            ("/boards/.", "step of a path"),
            ("/monitors/%2e%2E/plot.svg", "step of a path"),
            ("/../etc/passwd", "step of a path"),
            ("/runs/1%00", "NUL"),
            ("/boards/%00", "NUL"),
            ("/boards/%ff", "not UTF-8"),
        ] {
            let e = path_names(no).unwrap_err().0;
            assert!(e.contains(why), "{no}: {e}");
        }
    }

    #[test]
    fn compare_takes_ids_comma_separated_or_repeated() {
        assert_eq!(
            compare_refs(&p("runs=1,2,%203,2")).unwrap(),
            (vec!["1".into(), "2".into(), "3".into()], false)
        );
        assert_eq!(
            compare_refs(&p("runs=1&runs=2")).unwrap(),
            (vec!["1".into(), "2".into()], true)
        );
        assert!(compare_refs(&p("runs=")).is_err());
        assert!(compare_refs(&[]).is_err());
        assert!(
            compare_refs(&p("runs=1,../x"))
                .unwrap_err()
                .0
                .contains("not a run reference")
        );
        assert!(compare_refs(&p("run=1")).is_err());
        let many: Vec<String> = (1..=17).map(|i| i.to_string()).collect();
        let raw = format!("runs={}", many.join(","));
        assert!(compare_refs(&p(&raw)).unwrap_err().0.contains("at most 16"));
    }

    #[test]
    fn at_most_32_tags_are_taken() {
        let tags = |n: usize| -> Vec<(String, String)> {
            (0..n)
                .map(|i| ("tag".to_string(), format!("k{i}=v")))
                .collect()
        };
        assert_eq!(list_query(&tags(32), 0).unwrap().filter.tags.len(), 32);
        let e = list_query(&tags(33), 0).unwrap_err().0;
        assert!(e.contains("more than 32 tag filters"), "{e}");
        let e = list_query(&tags(1000), 0).unwrap_err().0;
        assert!(e.contains("more than 32 tag filters"), "{e}");
    }
}
