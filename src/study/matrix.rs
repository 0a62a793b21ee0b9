//! The matrix of a study: its cells (one per combination of the
//! dimensions' values), what each asks `measure` for (a table of its
//! options), and the order the runs take in time (each repetition a pass
//! over every cell, shuffled from a recorded seed unless the file says
//! otherwise). Pure: the same file and seed always give the same cells
//! and order.

use super::spec::{CMDLINE_KEY, KERNEL_KEY, Order, Setting, Spec, Value, is_boot_key};
use crate::rng::Rng;

/// One configuration: a value chosen for every dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Row of the matrix (dimensions crossed in file order, the last
    /// varying fastest).
    pub index: usize,
    /// `(key, value)` per dimension, in file order.
    pub choice: Vec<(String, Value)>,
}

impl Cell {
    /// `policy=fifo timer=abs`: how people and reports name the cell.
    pub fn label(&self) -> String {
        if self.choice.is_empty() {
            return "all".into();
        }
        self.choice
            .iter()
            .map(|(k, v)| {
                // An empty value, or one of several words (a kernel
                // command line), is quoted: `cmdline=""`, not `cmdline=`.
                let v = v.to_string();
                if v.is_empty() || v.contains(char::is_whitespace) {
                    format!("{k}={v:?}")
                } else {
                    format!("{k}={v}")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The value this cell gives `key`, if `key` is a dimension.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.choice.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value of `key` for this cell, from the matrix or `[fixed]`.
    fn value_of(&self, key: &str, fixed: &[Setting]) -> Option<String> {
        self.get(key)
            .or_else(|| fixed.iter().find(|s| s.key == key).map(|s| &s.value))
            .map(|v| v.to_string())
    }

    /// The kernel the cell needs (a matrix or a fixed `kernel`), if any.
    pub fn kernel(&self, fixed: &[Setting]) -> Option<String> {
        self.value_of(KERNEL_KEY, fixed)
    }

    /// The kernel arguments the cell's boot needs (a matrix or a fixed
    /// `cmdline`), as written, if the study has a command line.
    pub fn cmdline(&self, fixed: &[Setting]) -> Option<String> {
        self.value_of(CMDLINE_KEY, fixed)
    }

    /// The options of `measure` for this cell, as a table to read into
    /// `measure::Settings`: the fixed ones and the cell's choices (the
    /// kernel and the command line are not options).
    pub fn table(&self, fixed: &[Setting]) -> toml::Table {
        fixed
            .iter()
            .map(|s| (s.key.as_str(), &s.value))
            .chain(self.choice.iter().map(|(k, v)| (k.as_str(), v)))
            .filter(|(k, _)| !is_boot_key(k))
            .map(|(k, v)| (k.to_string(), v.to_toml()))
            .collect()
    }

    /// Whether every `key=value` of `selector` holds for this cell
    /// (values compared as written, `on`/`off` for booleans).
    pub fn matches(&self, selector: &[(String, String)]) -> bool {
        selector
            .iter()
            .all(|(k, v)| self.get(k).is_some_and(|x| x.to_string() == *v))
    }
}

/// Every cell of `spec`, in matrix order.
pub fn cells(spec: &Spec) -> Vec<Cell> {
    let n = spec.cells();
    (0..n)
        .map(|index| {
            let mut rest = index;
            let mut choice = vec![(String::new(), Value::Bool(false)); spec.matrix.len()];
            for (d, dim) in spec.matrix.iter().enumerate().rev() {
                let k = dim.values.len();
                choice[d] = (dim.key.clone(), dim.values[rest % k].clone());
                rest /= k;
            }
            Cell { index, choice }
        })
        .collect()
}

/// One run of the study: a cell's repetition at its place in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Place in the study's order (0 runs first).
    pub position: usize,
    pub cell: usize,
    /// 1-based.
    pub repetition: u32,
}

/// The order of every run of a study of `cells` cells.
pub fn schedule(cells: usize, repetitions: u32, order: Order, seed: u64) -> Vec<Slot> {
    let mut rng = Rng::new(seed);
    let mut pairs: Vec<(usize, u32)> = Vec::with_capacity(cells * repetitions as usize);
    match order {
        Order::Sequential => {
            for c in 0..cells {
                for r in 1..=repetitions {
                    pairs.push((c, r));
                }
            }
        }
        Order::Interleaved | Order::Random => {
            for r in 1..=repetitions {
                let mut pass: Vec<usize> = (0..cells).collect();
                if order == Order::Random {
                    for i in (1..pass.len()).rev() {
                        let j = rng.below_exact(i as u64 + 1) as usize;
                        pass.swap(i, j);
                    }
                }
                pairs.extend(pass.into_iter().map(|c| (c, r)));
            }
        }
    }
    pairs
        .into_iter()
        .enumerate()
        .map(|(position, (cell, repetition))| Slot {
            position,
            cell,
            repetition,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::spec::parse;

    const SEED_000: &str = r#"
name = "seed-000"
duration = "10m"
repetitions = 2
[matrix]
policy = ["other", "fifo", "rr"]
timer = ["itimer", "nanosleep", "abs"]
[fixed]
load = "hell"
threads = 1
"#;

    #[test]
    fn cells_cross_the_dimensions_in_file_order() {
        let spec = parse(SEED_000, "s.toml").unwrap();
        let c = cells(&spec);
        assert_eq!(c.len(), 9);
        assert_eq!(c[0].label(), "policy=other timer=itimer");
        assert_eq!(c[1].label(), "policy=other timer=nanosleep");
        assert_eq!(c[8].label(), "policy=rr timer=abs");
        let s = crate::measure::Settings::from_table(c[4].table(&spec.fixed)).unwrap();
        assert_eq!(
            s.command_line()[2..],
            [
                "--threads",
                "1",
                "--policy",
                "fifo",
                "--timer",
                "nanosleep",
                "--load",
                "hell",
            ]
        );
        assert!(c[4].matches(&[("policy".into(), "fifo".into())]));
        assert!(!c[4].matches(&[("policy".into(), "rr".into())]));
    }

    #[test]
    fn every_repetition_is_a_pass_and_the_seed_fixes_the_order() {
        let a = schedule(9, 3, Order::Random, 42);
        assert_eq!(a, schedule(9, 3, Order::Random, 42));
        assert_ne!(a, schedule(9, 3, Order::Random, 43));
        assert_eq!(a.len(), 27);
        for r in 1..=3u32 {
            let pass: Vec<&Slot> = a.iter().filter(|s| s.repetition == r).collect();
            let mut cells: Vec<usize> = pass.iter().map(|s| s.cell).collect();
            assert!(pass.iter().all(|s| s.position / 9 == (r - 1) as usize));
            cells.sort();
            assert_eq!(cells, (0..9).collect::<Vec<_>>());
        }
        let i = schedule(3, 2, Order::Interleaved, 0);
        let cells: Vec<usize> = i.iter().map(|s| s.cell).collect();
        assert_eq!(cells, [0, 1, 2, 0, 1, 2]);
        let s = schedule(2, 2, Order::Sequential, 0);
        let pairs: Vec<(usize, u32)> = s.iter().map(|s| (s.cell, s.repetition)).collect();
        assert_eq!(pairs, [(0, 1), (0, 2), (1, 1), (1, 2)]);
    }

    #[test]
    fn empty_values_and_command_lines_are_quoted_in_labels() {
        let spec = parse(
            "name = \"x\"\nduration = 5\n[matrix]\ncmdline = [\"\", \"isolcpus=1 nohz_full=1\"]\n",
            "s.toml",
        )
        .unwrap();
        let c = cells(&spec);
        assert_eq!(c[0].label(), "cmdline=\"\"");
        assert_eq!(c[1].label(), "cmdline=\"isolcpus=1 nohz_full=1\"");
    }

    #[test]
    fn a_study_without_matrix_has_one_cell() {
        let spec = parse("name = \"x\"\nduration = 5\n", "s.toml").unwrap();
        let c = cells(&spec);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].label(), "all");
    }
}
