//! The study file (TOML): what a study crosses and how long each cell
//! runs, read with the line of every key so that a mistake is reported
//! as `FILE:LINE: key 'K': ...`. Knows the file's shape (`name`,
//! `duration`, `repetitions`, `order`, `seed`, `kernel`, `[matrix]`,
//! `[fixed]`), not what `measure` accepts: [`super::check`] reads option
//! names and values into `measure::Settings`. Touches nothing.

use crate::units::parse_duration_ns;
use std::collections::BTreeMap;
use std::fmt;
use thiserror::Error;

/// Largest number of cells × repetitions a study may hold.
pub const MAX_POSITIONS: usize = 100_000;
/// Largest number of repetitions of one cell.
pub const MAX_REPETITIONS: u32 = 1000;

/// A mistake in a study file: where, which key, what is wrong.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{file}:{line}: {}{message}", key.as_ref().map(|k| format!("key '{k}': ")).unwrap_or_default())]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub key: Option<String>,
    pub message: String,
}

/// One option value, as the file writes it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    /// The option given several times (`tag = ["a=1", "b=2"]` in
    /// `[fixed]`, or one matrix value that is itself a list).
    List(Vec<Value>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(true) => f.write_str("on"),
            Value::Bool(false) => f.write_str("off"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Text(s) => f.write_str(s),
            Value::List(v) => {
                let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                f.write_str(&parts.join("+"))
            }
        }
    }
}

impl Value {
    /// The value as TOML, for reading it into `measure::Settings`.
    pub fn to_toml(&self) -> toml::Value {
        match self {
            Value::Bool(b) => toml::Value::Boolean(*b),
            Value::Int(i) => toml::Value::Integer(*i),
            Value::Float(x) => toml::Value::Float(*x),
            Value::Text(s) => toml::Value::String(s.clone()),
            Value::List(v) => toml::Value::Array(v.iter().map(Value::to_toml).collect()),
        }
    }
}

/// One option set to one value (a `[fixed]` entry, or a cell's choice).
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub key: String,
    pub value: Value,
    pub line: usize,
}

/// One dimension of the matrix: an option and the values it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Dimension {
    pub key: String,
    pub values: Vec<Value>,
    pub line: usize,
}

/// How the cells are laid out in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Each repetition is one pass over all cells, shuffled from the seed.
    Random,
    /// Each repetition is one pass over all cells, in matrix order.
    Interleaved,
    /// Each cell's repetitions one after the other (time and
    /// configuration are confounded: for quick looks only).
    Sequential,
}

impl Order {
    pub fn name(self) -> &'static str {
        match self {
            Order::Random => "random",
            Order::Interleaved => "interleaved",
            Order::Sequential => "sequential",
        }
    }

    fn parse(s: &str) -> Option<Order> {
        Some(match s {
            "random" => Order::Random,
            "interleaved" => Order::Interleaved,
            "sequential" => Order::Sequential,
            _ => return None,
        })
    }
}

/// The name of the kernel dimension (a key that is not an option of
/// `measure`).
pub const KERNEL_KEY: &str = "kernel";
/// The name of the command-line dimension: the kernel arguments a boot
/// needs (`"isolcpus=1 nohz_full=1"`, `""` for none of the study's).
pub const CMDLINE_KEY: &str = "cmdline";

/// Whether `key` names the boot (kernel or command line), not an option
/// of `measure`.
pub fn is_boot_key(key: &str) -> bool {
    key == KERNEL_KEY || key == CMDLINE_KEY
}

/// How a study may reboot the machine (`rtscope study FILE --reboot`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RebootSpec {
    /// `reboot = true`: the file allows `--reboot` without a question.
    pub allowed: bool,
    /// `max-reboots`: at most this many reboots per round.
    pub max: Option<u32>,
    /// `boot-method`: kexec, grub or hook (default: the first available).
    pub method: Option<String>,
    /// `boot-hook`: the program that arranges a one-time boot (method hook).
    pub hook: Option<String>,
}

/// The boot methods a study file may name.
pub const BOOT_METHODS: &[&str] = &["kexec", "grub", "hook"];

/// A study file, read and checked for shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub name: String,
    pub description: Option<String>,
    pub duration_ns: u64,
    pub repetitions: u32,
    pub order: Order,
    /// The seed of the random order; `None`: drawn when the study starts,
    /// then recorded.
    pub seed: Option<u64>,
    /// Dimensions in the file's order (a top-level `kernel` list is the
    /// last one).
    pub matrix: Vec<Dimension>,
    pub fixed: Vec<Setting>,
    /// How it may reboot the machine.
    pub reboot: RebootSpec,
}

impl Spec {
    /// Number of configurations (product of the dimensions' sizes).
    pub fn cells(&self) -> usize {
        self.matrix.iter().map(|d| d.values.len()).product()
    }

    /// Where `key` is set in this file, matrix first.
    pub fn line_of(&self, key: &str) -> Option<usize> {
        self.matrix
            .iter()
            .find(|d| d.key == key)
            .map(|d| d.line)
            .or_else(|| self.fixed.iter().find(|s| s.key == key).map(|s| s.line))
    }
}

/// Line (1-based) of byte `offset` in `text`.
fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The lines of the keys, from the parser's spans: top-level keys under
/// `""`, table keys under their table's name.
fn key_lines(text: &str) -> BTreeMap<(String, String), usize> {
    let mut out = BTreeMap::new();
    let Ok(root) = toml::de::DeTable::parse(text) else {
        return out;
    };
    for (k, v) in root.get_ref() {
        let name = k.get_ref().to_string();
        out.insert((String::new(), name.clone()), line_at(text, k.span().start));
        if let toml::de::DeValue::Table(t) = v.get_ref() {
            for (k2, _) in t {
                out.insert(
                    (name.clone(), k2.get_ref().to_string()),
                    line_at(text, k2.span().start),
                );
            }
        }
    }
    out
}

/// Reads one study file, keeping its name for messages.
struct Reader<'a> {
    file: &'a str,
    lines: BTreeMap<(String, String), usize>,
}

impl Reader<'_> {
    fn line(&self, table: &str, key: &str) -> usize {
        self.lines
            .get(&(table.to_string(), key.to_string()))
            .copied()
            .unwrap_or(1)
    }

    fn err(&self, table: &str, key: &str, message: impl Into<String>) -> SpecError {
        let shown = if table.is_empty() {
            key.to_string()
        } else {
            format!("{table}.{key}")
        };
        SpecError {
            file: self.file.to_string(),
            line: self.line(table, key),
            key: Some(shown),
            message: message.into(),
        }
    }

    fn value(&self, table: &str, key: &str, v: &toml::Value) -> Result<Value, SpecError> {
        Ok(match v {
            toml::Value::Boolean(b) => Value::Bool(*b),
            toml::Value::Integer(i) => Value::Int(*i),
            toml::Value::Float(x) => Value::Float(*x),
            toml::Value::String(s) => Value::Text(s.clone()),
            toml::Value::Array(items) => Value::List(
                items
                    .iter()
                    .map(|x| match x {
                        toml::Value::Array(_) | toml::Value::Table(_) => Err(self.err(
                            table,
                            key,
                            "a value inside a list must be a string, a number or a boolean",
                        )),
                        x => self.value(table, key, x),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            toml::Value::Datetime(_) => {
                return Err(self.err(table, key, "a date is not an option value"));
            }
            toml::Value::Table(_) => {
                return Err(self.err(table, key, "a table is not an option value"));
            }
        })
    }

    fn dimension(&self, table: &str, key: &str, v: &toml::Value) -> Result<Dimension, SpecError> {
        let values = match self.value(table, key, v)? {
            Value::List(items) => items,
            _ => {
                return Err(self.err(
                    table,
                    key,
                    format!("a matrix entry is a list of values, e.g. {key} = [\"a\", \"b\"] (a single value belongs in [fixed])"),
                ));
            }
        };
        if values.is_empty() {
            return Err(self.err(table, key, "the list of values is empty"));
        }
        for (i, a) in values.iter().enumerate() {
            if values[..i].contains(a) {
                return Err(self.err(table, key, format!("value '{a}' is listed twice")));
            }
        }
        Ok(Dimension {
            key: normalize(key),
            values,
            line: self.line(table, key),
        })
    }
}

/// Option names are written with `-` or `_` (`load_cpus` = `load-cpus`).
fn normalize(key: &str) -> String {
    key.replace('_', "-")
}

/// The top-level keys as read, before the checks across keys.
struct Top {
    name: Option<String>,
    description: Option<String>,
    duration_ns: Option<u64>,
    repetitions: u32,
    order: Order,
    seed: Option<u64>,
    matrix: Vec<Dimension>,
    fixed: Vec<Setting>,
    kernel: Option<Dimension>,
    cmdline: Option<Dimension>,
    reboot: RebootSpec,
}

impl Reader<'_> {
    fn text(&self, key: &str, v: &toml::Value, what: &str) -> Result<String, SpecError> {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| self.err("", key, format!("{what} must be a string")))
    }

    fn duration(&self, key: &str, v: &toml::Value) -> Result<u64, SpecError> {
        let ns = match v {
            toml::Value::String(s) => parse_duration_ns(s)
                .map_err(|e| self.err("", key, format!("{e} (e.g. \"10m\", \"1h\")")))?,
            toml::Value::Integer(s) if *s > 0 => (*s as u64).saturating_mul(1_000_000_000),
            _ => {
                return Err(self.err(
                    "",
                    key,
                    "the duration of a cell is a time such as \"10m\" (a bare number: seconds)",
                ));
            }
        };
        if ns < 1_000_000_000 {
            return Err(self.err("", key, "each cell must run for at least 1s"));
        }
        Ok(ns)
    }

    fn whole(
        &self,
        key: &str,
        v: &toml::Value,
        lo: i64,
        hi: i64,
        what: &str,
    ) -> Result<i64, SpecError> {
        match v.as_integer() {
            Some(n) if n >= lo && n <= hi => Ok(n),
            _ => Err(self.err("", key, what.to_string())),
        }
    }

    /// `[matrix]` or `[fixed]` into `top`.
    fn table(&self, top: &mut Top, key: &str, v: &toml::Value) -> Result<(), SpecError> {
        let Some(t) = v.as_table() else {
            return Err(self.err("", key, format!("[{key}] must be a table")));
        };
        for (k, x) in t {
            if key == "matrix" {
                top.matrix.push(self.dimension(key, k, x)?);
            } else {
                top.fixed.push(Setting {
                    key: normalize(k),
                    value: self.value(key, k, x)?,
                    line: self.line(key, k),
                });
            }
        }
        Ok(())
    }

    /// One top-level key into `top`.
    fn top_key(&self, top: &mut Top, key: &str, v: &toml::Value) -> Result<(), SpecError> {
        match key {
            "name" => {
                let n = self.text(key, v, "the study's name")?;
                check_name(&n).map_err(|m| self.err("", key, m.to_string()))?;
                top.name = Some(n);
            }
            "description" => top.description = Some(self.text(key, v, "the description")?),
            "duration" => top.duration_ns = Some(self.duration(key, v)?),
            "repetitions" => {
                let what =
                    format!("repetitions must be a whole number from 1 to {MAX_REPETITIONS}");
                top.repetitions = self.whole(key, v, 1, i64::from(MAX_REPETITIONS), &what)? as u32;
            }
            "order" => {
                let s = self.text(key, v, "the order")?;
                top.order = Order::parse(&s).ok_or_else(|| {
                    let m = format!("unknown order '{s}': use random, interleaved or sequential");
                    self.err("", key, m)
                })?;
            }
            "seed" => {
                let what = "the seed must be a whole number ≥ 0";
                top.seed = Some(self.whole(key, v, 0, i64::MAX, what)? as u64);
            }
            KERNEL_KEY => top.kernel = Some(self.dimension("", key, &one_or_list(v))?),
            CMDLINE_KEY => top.cmdline = Some(self.dimension("", key, &one_or_list(v))?),
            "reboot" => {
                top.reboot.allowed = v
                    .as_bool()
                    .ok_or_else(|| self.err("", key, "reboot is true or false"))?;
            }
            "max-reboots" | "max_reboots" => {
                let what = "max-reboots must be a whole number from 1 to 1000";
                top.reboot.max = Some(self.whole(key, v, 1, 1000, what)? as u32);
            }
            "boot-method" | "boot_method" => {
                let m = self.text(key, v, "the boot method")?;
                if !BOOT_METHODS.contains(&m.as_str()) {
                    let why = format!("unknown boot method '{m}': use kexec, grub or hook");
                    return Err(self.err("", key, why));
                }
                top.reboot.method = Some(m);
            }
            "boot-hook" | "boot_hook" => {
                let h = self.text(key, v, "the boot hook")?;
                if !h.starts_with('/') {
                    let why = "the boot hook is a program's absolute path (it runs from a systemd unit after each boot)";
                    return Err(self.err("", key, why));
                }
                top.reboot.hook = Some(h);
            }
            "matrix" | "fixed" => self.table(top, key, v)?,
            _ => {
                return Err(self.err(
                    "",
                    key,
                    "unknown key: a study file has name, description, duration, repetitions, order, seed, kernel, cmdline, reboot, max-reboots, boot-method, boot-hook, [matrix] and [fixed] (options of measure go in [matrix] or [fixed])",
                ));
            }
        }
        Ok(())
    }

    /// The checks across keys, and the spec.
    fn finish(&self, mut top: Top) -> Result<Spec, SpecError> {
        let missing = |k: &str| SpecError {
            file: self.file.to_string(),
            line: 1,
            key: Some(k.to_string()),
            message: format!("missing: a study file needs {k}"),
        };
        let name = top.name.take().ok_or_else(|| missing("name"))?;
        let duration_ns = top.duration_ns.ok_or_else(|| missing("duration"))?;
        // toml's table is sorted by key: put the dimensions back in the
        // file's order, which is the order of the report's columns.
        top.matrix.sort_by_key(|d| d.line);
        top.fixed.sort_by_key(|s| s.line);
        for (key, dim) in [
            (KERNEL_KEY, top.kernel.take()),
            (CMDLINE_KEY, top.cmdline.take()),
        ] {
            let Some(d) = dim else { continue };
            if top.matrix.iter().any(|m| m.key == key) {
                let m = format!("{key} is given both at the top and in [matrix]: keep one");
                return Err(self.err("", key, m));
            }
            top.matrix.push(d);
        }
        if top.reboot.method.as_deref() == Some("hook") && top.reboot.hook.is_none() {
            let m = "boot-method = \"hook\" needs boot-hook = \"/path/to/program\"";
            return Err(self.err("", "boot-method", m));
        }
        for s in &top.fixed {
            if let Some(d) = top.matrix.iter().find(|d| d.key == s.key) {
                return Err(SpecError {
                    file: self.file.to_string(),
                    line: s.line,
                    key: Some(format!("fixed.{}", s.key)),
                    message: format!(
                        "{} is also a dimension of [matrix] (line {}): keep one",
                        s.key, d.line
                    ),
                });
            }
        }
        let spec = Spec {
            name,
            description: top.description,
            duration_ns,
            repetitions: top.repetitions,
            order: top.order,
            seed: top.seed,
            matrix: top.matrix,
            fixed: top.fixed,
            reboot: top.reboot,
        };
        let runs = spec.cells().saturating_mul(spec.repetitions as usize);
        if runs > MAX_POSITIONS {
            return Err(SpecError {
                file: self.file.to_string(),
                line: 1,
                key: None,
                message: format!(
                    "{} cells × {} repetitions is more than {MAX_POSITIONS} runs",
                    spec.cells(),
                    spec.repetitions
                ),
            });
        }
        Ok(spec)
    }
}

/// Read a study file's text; `file` names it in messages.
pub fn parse(text: &str, file: &str) -> Result<Spec, SpecError> {
    let root: toml::Table = toml::from_str(text).map_err(|e: toml::de::Error| SpecError {
        file: file.to_string(),
        line: e.span().map(|s| line_at(text, s.start)).unwrap_or(1),
        key: None,
        message: e.message().trim().to_string(),
    })?;
    let r = Reader {
        file,
        lines: key_lines(text),
    };
    let mut top = Top {
        name: None,
        description: None,
        duration_ns: None,
        repetitions: 1,
        order: Order::Random,
        seed: None,
        matrix: Vec::new(),
        fixed: Vec::new(),
        kernel: None,
        cmdline: None,
        reboot: RebootSpec::default(),
    };
    for (key, v) in &root {
        r.top_key(&mut top, key, v)?;
    }
    r.finish(top)
}

/// A top-level `kernel = "rt"` is a dimension of one value.
fn one_or_list(v: &toml::Value) -> toml::Value {
    match v {
        toml::Value::Array(_) => v.clone(),
        other => toml::Value::Array(vec![other.clone()]),
    }
}

/// Why a study's name is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("a study's name is 1 to 100 characters")]
    Length,
    #[error("'{0}': a study's name holds letters, digits and - _ . + only")]
    Characters(String),
}

/// A study's name: what `study status NAME` and reports use.
pub fn check_name(n: &str) -> Result<(), NameError> {
    if n.is_empty() || n.len() > 100 {
        return Err(NameError::Length);
    }
    if !n
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
    {
        return Err(NameError::Characters(n.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> SpecError {
        parse(text, "s.toml").unwrap_err()
    }

    #[test]
    fn a_whole_file_reads_in_file_order() {
        let s = parse(
            "name = \"n\"\nduration = \"1m\"\nrepetitions = 3\norder = \"interleaved\"\nseed = 5\n\
             kernel = \"rt\"\n[matrix]\ntimer = [\"abs\", \"rel\"]\npolicy = [\"fifo\"]\n\
             [fixed]\nno_mlock = true\ntag = [\"a=1\", \"b=2\"]\n",
            "s.toml",
        )
        .unwrap();
        assert_eq!(
            (s.duration_ns, s.repetitions, s.order, s.seed),
            (60_000_000_000, 3, Order::Interleaved, Some(5))
        );
        let keys: Vec<&str> = s.matrix.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(keys, ["timer", "policy", "kernel"]);
        assert_eq!(s.matrix[0].line, 8);
        assert_eq!(s.fixed[0].key, "no-mlock");
        // As measure's settings: a flag for true, the option once per
        // list item, nothing for false.
        let read = |pairs: Vec<(String, toml::Value)>| {
            crate::measure::Settings::from_table(pairs.into_iter().collect())
                .unwrap()
                .command_line()
        };
        let fixed = s.fixed.iter().map(|f| (f.key.clone(), f.value.to_toml()));
        assert_eq!(
            read(fixed.collect())[2..],
            ["--no-mlock", "--tag", "a=1", "--tag", "b=2"]
        );
        let off = vec![("isolate".to_string(), Value::Bool(false).to_toml())];
        assert_eq!(read(off), ["rtscope", "measure"]);
        assert_eq!(s.cells(), 2);
    }

    /// The deadline is a measure setting: `[fixed]` gives every run
    /// one, `[matrix]` crosses several, 0 is refused with its line.
    #[test]
    fn a_deadline_is_a_setting_of_every_cell() {
        let s = parse(
            "name = \"n\"\nduration = \"1m\"\n[matrix]\ndeadline = [\"500us\", 2000]\n\
             [fixed]\ninterval = \"1ms\"\n",
            "s.toml",
        )
        .unwrap();
        let deadlines: Vec<Option<u64>> = crate::study::matrix::cells(&s)
            .iter()
            .map(|c| {
                crate::measure::Settings::from_table(c.table(&s.fixed))
                    .unwrap()
                    .deadline_ns
            })
            .collect();
        assert_eq!(deadlines, [Some(500_000), Some(2_000_000)]);
        let zero = parse(
            "name = \"n\"\nduration = \"1m\"\n[fixed]\ndeadline = 0\n",
            "s.toml",
        )
        .unwrap();
        let e = crate::study::check::check(&zero, "s.toml").unwrap_err();
        assert_eq!(
            (e.line, e.key.as_deref()),
            (4, Some("fixed.deadline")),
            "{e}"
        );
        assert!(e.message.contains("deadline '0' is 0"), "{e}");
    }

    #[test]
    fn mistakes_name_line_and_key() {
        let e = refused("name = \"n\"\nduration = \"1m\"\n\n[matrix]\npolicy = \"fifo\"\n");
        assert_eq!((e.line, e.key.as_deref()), (5, Some("matrix.policy")));
        assert!(e.message.contains("[fixed]"), "{e}");
        let e =
            refused("name = \"n\"\nduration = \"1m\"\n[matrix]\npolicy = [\"fifo\", \"fifo\"]\n");
        assert!(e.message.contains("listed twice"), "{e}");
        let e = refused(
            "name = \"n\"\nduration = \"1m\"\nkernel = [\"rt\"]\n[matrix]\nkernel = [\"none\"]\n",
        );
        assert_eq!(e.key.as_deref(), Some("kernel"));
        let e = refused(
            "name = \"n\"\nduration = \"1m\"\n[matrix]\nload = [\"hell\"]\n[fixed]\nload = \"idle\"\n",
        );
        assert_eq!((e.line, e.key.as_deref()), (6, Some("fixed.load")));
        let e = refused("duration = \"1m\"\n");
        assert_eq!(e.key.as_deref(), Some("name"));
        let e = refused("name = \"a b\"\nduration = 1\n");
        assert_eq!((e.line, e.key.as_deref()), (1, Some("name")));
        let e = refused("name = \"n\"\nduration = \"500ms\"\n");
        assert!(e.message.contains("at least 1s"), "{e}");
        let e = refused("name = \"n\"\nduration = 1\nrepetitions = 0\n");
        assert_eq!(e.line, 3);
        let e = refused("name = \"n\"\nduration = 1\norder = \"shuffled\"\n");
        assert!(e.message.contains("unknown order"), "{e}");
        let e = refused(
            "name = \"n\"\nduration = 1\nrepetitions = 1000\n[matrix]\na = [1,2,3,4,5,6,7,8,9,10,11]\nb = [1,2,3,4,5,6,7,8,9,10]\n",
        );
        assert!(e.message.contains("more than"), "{e}");
        assert_eq!(
            e.to_string(),
            "s.toml:1: 110 cells × 1000 repetitions is more than 100000 runs"
        );
    }
}
