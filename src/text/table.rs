//! Plain-text tables for the terminal: the first column left-aligned, the
//! others right-aligned (numbers), two spaces between columns, a rule
//! under the header row. Widths count characters, so "µs" aligns.

use std::fmt::Write;

/// Render `rows` (the first one is the header).
pub fn render<R: AsRef<[String]>>(rows: &[R]) -> String {
    let cols = rows.iter().map(|r| r.as_ref().len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.as_ref().get(c))
                .map(|v| v.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let line: Vec<String> = r
            .as_ref()
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c == 0 {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
        if i == 0 {
            let total = widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
            let _ = writeln!(out, "{}", "-".repeat(total));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn aligns_and_rules() {
        let rows = vec![
            vec!["T".to_string(), "max µs".to_string()],
            vec!["all".to_string(), "12.5".to_string()],
        ];
        assert_eq!(
            super::render(&rows),
            "T    max µs\n-----------\nall    12.5\n"
        );
    }
}
