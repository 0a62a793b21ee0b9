//! rtscope's own run record (`measure --json FILE`, `runs export --json`):
//! stored exactly as it is (same uuid, same source), so a run measured
//! with `--no-save`, or on another machine, joins the store unchanged.

use super::{ImportError, Importer, Source};
use crate::record::{self, ReadError, RunRecord, SCHEMA_NAME};

pub static IMPORTER: Importer = Importer {
    name: "rtscope-run",
    description: "an rtscope run record (measure --json, runs export --json), stored as it is",
    detect,
    parse,
};

fn detect(text: &str) -> u8 {
    let t = text.trim_start();
    if t.starts_with('{') && t.contains(&format!("\"{SCHEMA_NAME}\"")) {
        100
    } else {
        0
    }
}

fn parse(src: &Source) -> Result<RunRecord, ImportError> {
    record::from_json(src.text).map_err(|e| match e {
        ReadError::Json { line, message } => ImportError::at(
            line,
            format!("expected an rtscope run record (see rtscope schema): {message}"),
        ),
        ReadError::Invalid(why) => ImportError::whole(why.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::ImportOptions;
    use std::path::Path;

    #[test]
    fn a_record_comes_back_as_it_was() {
        let rec = crate::record::synthetic(&[vec![1000, 2000]]);
        let text = serde_json::to_string_pretty(&rec).unwrap();
        assert_eq!(detect(&text), 100);
        let o = ImportOptions::default();
        let src = Source {
            path: Path::new("r.json"),
            text: &text,
            modified_unix_ns: None,
            options: &o,
        };
        assert_eq!(parse(&src).unwrap(), rec);
        let broken = text.replace("\"threads\"", "\"thread\"");
        let e = parse(&Source {
            text: &broken,
            ..src
        })
        .unwrap_err();
        assert!(e.line.is_some(), "{e}");
    }
}
