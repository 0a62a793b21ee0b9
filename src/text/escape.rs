//! Escaping text for markup (HTML and SVG content and attributes), for
//! the pieces written outside a template (SVG figures; the templates
//! escape what they lay out themselves).

/// Escape `s` for HTML or SVG content and attributes: `&`, `<`, `>`,
/// `"` and `'` become entities; a control character becomes a space.
pub fn markup(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_characters_become_entities() {
        assert_eq!(
            super::markup("<b a=\"1\">Tom's & co</b>\u{7}"),
            "&lt;b a=&quot;1&quot;&gt;Tom&#39;s &amp; co&lt;/b&gt; "
        );
    }
}
