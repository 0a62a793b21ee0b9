//! Load profiles: the TOML vocabulary (built-in profiles are written in
//! it, `--load-file` reads it), the built-in list, and the command-line
//! form `NAME[:option[=value]]...` that adjusts a profile
//! (`hell:steady`, `rt-interference:prio=60,70,80:busy=20ms`,
//! `hell:period=4s:active=2s-3s:cpu.workers=1`).
//!
//! ```toml
//! about = "what this profile is for"
//! [schedule]            # for every part, unless a part says otherwise
//! steady = false        # true: always on
//! period = "30s"        # each part's own period is drawn in period × (1 ± spread)
//! spread = 0.1
//! active = "15s-25s"    # burst length, drawn afresh for every burst
//! [[part]]
//! load = "hackbench"    # a registered load (rtscope load --list)
//! name = "hackbench"    # optional, unique in the profile (default: load)
//! groups = 4            # the load's own options
//! ```
//!
//! Pure: reads no file except the one it is given.

use super::part::{Part, Raw, ValueError, parse_time_with_unit};
use super::schedule::Rhythm;
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;

/// The built-in profiles, in `--list` order: name and TOML text.
pub static BUILTIN: &[(&str, &str)] = &[
    ("cpu", include_str!("profiles/cpu.toml")),
    ("memory", include_str!("profiles/memory.toml")),
    ("io", include_str!("profiles/io.toml")),
    ("fs", include_str!("profiles/fs.toml")),
    ("net", include_str!("profiles/net.toml")),
    ("sched", include_str!("profiles/sched.toml")),
    ("irq", include_str!("profiles/irq.toml")),
    ("hell", include_str!("profiles/hell.toml")),
    ("hackbench", include_str!("profiles/hackbench.toml")),
    ("stress", include_str!("profiles/stress.toml")),
    (
        "rt-interference",
        include_str!("profiles/rt-interference.toml"),
    ),
    ("idle", include_str!("profiles/idle.toml")),
];

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ProfileError {
    #[error(
        "unknown load profile '{name}': use one of {known} (rtscope load --list), or --load-file FILE.toml"
    )]
    Unknown { name: String, known: String },
    #[error("{source_name}: {message}")]
    Invalid {
        source_name: String,
        message: String,
    },
    #[error("could not read load profile {path}: {message}")]
    Read { path: String, message: String },
}

/// Schedule settings a part (or the command line) may set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RhythmOverride {
    pub steady: Option<bool>,
    pub period_ns: Option<u64>,
    pub spread: Option<f64>,
    pub active: Option<(u64, u64)>,
}

impl RhythmOverride {
    pub fn apply(&self, base: Rhythm) -> Rhythm {
        let mut r = base;
        if let Some(s) = self.steady {
            r.steady = s;
        }
        if let Some(p) = self.period_ns {
            r.period_ns = p;
        }
        if let Some(s) = self.spread {
            r.spread = s;
        }
        if let Some((lo, hi)) = self.active {
            r.active_min_ns = lo;
            r.active_max_ns = hi;
        }
        r
    }

    fn merge(&mut self, other: &RhythmOverride) {
        if other.steady.is_some() {
            self.steady = other.steady;
        }
        if other.period_ns.is_some() {
            self.period_ns = other.period_ns;
        }
        if other.spread.is_some() {
            self.spread = other.spread;
        }
        if other.active.is_some() {
            self.active = other.active;
        }
    }

    /// Set one schedule key; `Ok(false)`: not a schedule key.
    fn set(&mut self, key: &str, raw: &Raw) -> Result<bool, ValueError> {
        // A list is the only value with no text.
        let text = || {
            raw.as_text()
                .map_err(|_| format!("{key}: expected one value"))
        };
        match key {
            "steady" | "bursts" => {
                let v = match raw {
                    Raw::Bool(b) => *b,
                    _ => match text()?.as_str() {
                        "true" | "yes" | "on" => true,
                        "false" | "no" | "off" => false,
                        t => return Err(ValueError(format!("{key}: '{t}' is not true or false"))),
                    },
                };
                self.steady = Some(if key == "steady" { v } else { !v });
            }
            "period" => self.period_ns = Some(parse_time_with_unit(&text()?)?),
            "spread" => {
                let t = match raw {
                    Raw::Text(s) => s.clone(),
                    Raw::Int(i) => i.to_string(),
                    Raw::Float(f) => f.to_string(),
                    _ => return Err("spread: expected a fraction such as 0.1".into()),
                };
                let v: f64 = t
                    .trim()
                    .parse()
                    .map_err(|_| format!("spread: '{t}' is not a fraction such as 0.1"))?;
                self.spread = Some(v);
            }
            "active" => self.active = Some(parse_active(&text()?)?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

const SCHEDULE_KEYS: &[&str] = &["steady", "bursts", "period", "spread", "active"];

/// `"15s-25s"`, `"15s..25s"` or `"20s"`.
pub fn parse_active(text: &str) -> Result<(u64, u64), ValueError> {
    let t = text.trim();
    let (lo, hi) = match t.split_once("..").or_else(|| t.split_once('-')) {
        Some((a, b)) => (parse_time_with_unit(a)?, parse_time_with_unit(b)?),
        None => {
            let v = parse_time_with_unit(t)?;
            (v, v)
        }
    };
    if lo == 0 || lo > hi {
        return Err(ValueError(format!(
            "active '{t}': use a time or a range lo-hi with 0 < lo <= hi"
        )));
    }
    Ok((lo, hi))
}

/// One part of a profile, as written.
#[derive(Clone, Debug)]
pub struct ProfilePart {
    pub name: String,
    pub load: &'static Part,
    pub options: BTreeMap<String, Raw>,
    pub rhythm: RhythmOverride,
}

/// A parsed profile.
#[derive(Clone, Debug)]
pub struct Profile {
    pub name: String,
    pub about: String,
    pub rhythm: Rhythm,
    pub parts: Vec<ProfilePart>,
    /// Seed asked for on the command line (`seed=N`).
    pub seed: Option<u64>,
}

impl Profile {
    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Result<Profile, ProfileError> {
        let (n, text) =
            BUILTIN
                .iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| ProfileError::Unknown {
                    name: name.to_string(),
                    known: BUILTIN
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
        Profile::parse(text, n, &format!("built-in profile '{n}'"))
    }

    /// A profile from a TOML file (its name: the `name` key, else the
    /// file's stem).
    pub fn from_file(path: &Path) -> Result<Profile, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|e| ProfileError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "custom".into());
        Profile::parse(&text, &stem, &path.display().to_string())
    }

    /// Parse TOML `text`; `default_name` is used when it has no `name`.
    pub fn parse(text: &str, default_name: &str, source: &str) -> Result<Profile, ProfileError> {
        let src = Source(source);
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| src.bad(e.message().to_string()))?;
        for key in table.keys() {
            if !["name", "about", "schedule", "part"].contains(&key.as_str()) {
                return Err(src.bad(format!(
                    "unknown key '{key}' (a profile has name, about, [schedule] and [[part]])"
                )));
            }
        }
        let name = src
            .text_of(table.get("name"), "name")?
            .unwrap_or_else(|| default_name.to_string());
        if name.is_empty() || name.contains([':', ' ']) {
            return Err(src.bad(format!(
                "profile name '{name}' must be one word without ':'"
            )));
        }
        let about = src
            .text_of(table.get("about"), "about")?
            .unwrap_or_default();
        let rhythm = src.schedule(table.get("schedule"))?.apply(Rhythm::SEEDS);
        let parts_v = table
            .get("part")
            .and_then(|p| p.as_array())
            .ok_or_else(|| src.bad("a profile needs at least one [[part]]".into()))?;
        if parts_v.is_empty() {
            return Err(src.bad("a profile needs at least one [[part]]".into()));
        }
        let mut parts: Vec<ProfilePart> = Vec::new();
        for (i, p) in parts_v.iter().enumerate() {
            let part = src.part(i, p, rhythm, &parts)?;
            parts.push(part);
        }
        Ok(Profile {
            name,
            about,
            rhythm,
            parts,
            seed: None,
        })
    }

    /// Apply command-line adjustments (`steady`, `period=4s`,
    /// `cpu.workers=2`, `workers=1`, `seed=7`).
    pub fn adjust(&mut self, items: &[&str]) -> Result<(), ValueError> {
        for item in items {
            let item = item.trim();
            if !item.is_empty() {
                self.adjust_one(item)?;
            }
        }
        for p in &self.parts {
            p.load
                .check(&p.options)
                .map_err(|e| format!("part '{}': {e}", p.name))?;
            p.rhythm
                .apply(self.rhythm)
                .check()
                .map_err(|e| format!("part '{}': {e}", p.name))?;
        }
        Ok(())
    }

    /// One adjustment: `seed=N`, a schedule key (of the profile or of
    /// one part), or an option (of every part that has it, or of one).
    fn adjust_one(&mut self, item: &str) -> Result<(), ValueError> {
        let (key, raw) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), Raw::Text(v.trim().to_string())),
            None => (item, Raw::Bool(true)),
        };
        let (target, key) = match key.split_once('.') {
            Some((p, k)) => (Some(p), k),
            None => (None, key),
        };
        if target.is_none() && key == "seed" {
            let Raw::Text(t) = &raw else {
                return Err("seed needs a value: seed=N".into());
            };
            self.seed = Some(
                t.parse()
                    .map_err(|_| format!("seed '{t}' is not a whole number"))?,
            );
            return Ok(());
        }
        if SCHEDULE_KEYS.contains(&key) {
            let mut o = RhythmOverride::default();
            o.set(key, &raw)?;
            match target {
                None => {
                    self.rhythm = o.apply(self.rhythm);
                    for p in &mut self.parts {
                        p.rhythm.merge(&o);
                    }
                }
                Some(t) => self.part_mut(t)?.rhythm.merge(&o),
            }
            return Ok(());
        }
        let mut hit = false;
        for p in &mut self.parts {
            if target.is_some_and(|t| t != p.name) {
                continue;
            }
            if p.load.option(key).is_some() {
                p.options.insert(key.to_string(), raw.clone());
                hit = true;
            } else if target.is_some() {
                return Err(ValueError(format!(
                    "part '{}' (load '{}') has no option '{key}' (options: {}; schedule: steady, bursts, period, spread, active)",
                    p.name,
                    p.load.name,
                    p.load.option_names()
                )));
            }
        }
        if let Some(t) = target {
            self.part_mut(t)?;
        }
        if !hit {
            return Err(ValueError(format!(
                "no part of profile '{}' has an option '{key}' (profile options: steady, bursts, period, spread, active, seed; parts: {})",
                self.name,
                self.parts
                    .iter()
                    .map(|p| format!("{} ({})", p.name, p.load.option_names()))
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
        Ok(())
    }

    fn part_mut(&mut self, name: &str) -> Result<&mut ProfilePart, ValueError> {
        let names = self
            .parts
            .iter()
            .map(|p| p.name.clone())
            .collect::<Vec<_>>()
            .join(", ");
        self.parts
            .iter_mut()
            .find(|p| p.name == name)
            .ok_or_else(|| ValueError(format!("profile has no part '{name}' (parts: {names})")))
    }
}

/// Where a profile being parsed comes from, for its error messages.
struct Source<'a>(&'a str);

impl Source<'_> {
    fn bad(&self, message: String) -> ProfileError {
        ProfileError::Invalid {
            source_name: self.0.to_string(),
            message,
        }
    }

    /// An optional string value.
    fn text_of(&self, v: Option<&toml::Value>, what: &str) -> Result<Option<String>, ProfileError> {
        match v {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.bad(format!("'{what}' must be a string"))),
        }
    }

    /// The profile's `[schedule]` table.
    fn schedule(&self, v: Option<&toml::Value>) -> Result<RhythmOverride, ProfileError> {
        let mut top = RhythmOverride::default();
        let Some(s) = v else {
            return Ok(top);
        };
        let s = s
            .as_table()
            .ok_or_else(|| self.bad("[schedule] must be a table".into()))?;
        for (k, v) in s {
            let raw = Raw::from_toml(v).map_err(|e| self.bad(format!("schedule.{k}: {e}")))?;
            if k == "bursts"
                || !top
                    .set(k, &raw)
                    .map_err(|e| self.bad(format!("schedule.{e}")))?
            {
                return Err(self.bad(format!(
                    "unknown schedule key '{k}' (use steady, period, spread, active)"
                )));
            }
        }
        Ok(top)
    }

    /// Part `i` (a `[[part]]` table), its options checked against its
    /// load and its schedule against the profile's `rhythm`; its name
    /// not one of the parts `before` it.
    fn part(
        &self,
        i: usize,
        p: &toml::Value,
        rhythm: Rhythm,
        before: &[ProfilePart],
    ) -> Result<ProfilePart, ProfileError> {
        let t = p
            .as_table()
            .ok_or_else(|| self.bad(format!("part {} must be a table ([[part]])", i + 1)))?;
        let load_name = match t.get("load") {
            Some(toml::Value::String(s)) => s.clone(),
            _ => {
                return Err(self.bad(format!(
                    "part {} needs load = \"...\" (one of {})",
                    i + 1,
                    super::part_names()
                )));
            }
        };
        let load = super::find_part(&load_name).ok_or_else(|| {
            self.bad(format!(
                "part {}: unknown load '{load_name}' (use one of {})",
                i + 1,
                super::part_names()
            ))
        })?;
        let pname = self
            .text_of(t.get("name"), "name")?
            .unwrap_or_else(|| load_name.clone());
        if pname.is_empty() || pname.contains([':', '.', ' ', '=']) {
            return Err(self.bad(format!(
                "part name '{pname}' must be one word without ':', '.', '='"
            )));
        }
        if before.iter().any(|q| q.name == pname) {
            return Err(self.bad(format!(
                "two parts are named '{pname}': give one a name = \"...\""
            )));
        }
        let mut options = BTreeMap::new();
        let mut rh = RhythmOverride::default();
        for (k, v) in t {
            if k == "load" || k == "name" {
                continue;
            }
            let raw =
                Raw::from_toml(v).map_err(|e| self.bad(format!("part '{pname}', {k}: {e}")))?;
            if k != "bursts"
                && rh
                    .set(k, &raw)
                    .map_err(|e| self.bad(format!("part '{pname}', {e}")))?
            {
                continue;
            }
            if load.option(k).is_none() {
                return Err(self.bad(format!(
                    "part '{pname}': load '{load_name}' has no option '{k}' (options: {}; schedule: steady, period, spread, active)",
                    load.option_names()
                )));
            }
            options.insert(k.clone(), raw);
        }
        // Check the options now, so a bad file fails before anything runs.
        load.check(&options)
            .map_err(|e| self.bad(format!("part '{pname}': {e}")))?;
        rh.apply(rhythm)
            .check()
            .map_err(|e| self.bad(format!("part '{pname}': {e}")))?;
        Ok(ProfilePart {
            name: pname,
            load,
            options,
            rhythm: rh,
        })
    }
}

/// Split `NAME[:item]...` into the name and its items.
pub fn split_spec(spec: &str) -> (&str, Vec<&str>) {
    let mut it = spec.split(':');
    let name = it.next().unwrap_or("").trim();
    (name, it.collect())
}

/// The TOML text of a built-in profile (for `rtscope load --print`).
pub fn builtin_text(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_checks() {
        for (name, _) in BUILTIN {
            let p = Profile::builtin(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&p.name, name);
            assert!(!p.about.is_empty(), "{name} has no about");
            assert!(!p.parts.is_empty());
            for part in &p.parts {
                part.load.check(&part.options).unwrap();
                part.rhythm.apply(p.rhythm).check().unwrap();
            }
        }
        let hell = Profile::builtin("hell").unwrap();
        let loads: Vec<&str> = hell.parts.iter().map(|p| p.load.name).collect();
        for l in [
            "cpu",
            "memory",
            "io",
            "fs",
            "net",
            "sched",
            "hackbench",
            "irq",
        ] {
            assert!(loads.contains(&l), "hell lacks {l}");
        }
        assert!(!hell.rhythm.steady);
        // hell presses at least as hard as stress: stress's parts, with
        // the same options, always on; every other part in bursts.
        let stress = Profile::builtin("stress").unwrap();
        for s in &stress.parts {
            let h = hell
                .parts
                .iter()
                .find(|p| p.load.name == s.load.name)
                .unwrap_or_else(|| panic!("hell lacks stress's {}", s.load.name));
            assert_eq!(h.options, s.options, "{}", s.load.name);
            assert!(h.rhythm.apply(hell.rhythm).steady, "{}", s.load.name);
        }
        for h in &hell.parts {
            if !stress.parts.iter().any(|s| s.load.name == h.load.name) {
                assert!(!h.rhythm.apply(hell.rhythm).steady, "{}", h.load.name);
            }
        }
        assert!(Profile::builtin("rt-interference").unwrap().rhythm.steady);
    }

    #[test]
    fn command_line_adjustments() {
        let mut p = Profile::builtin("hell").unwrap();
        p.adjust(&["period=4s", "active=1s-2s", "cpu.workers=2", "seed=9"])
            .unwrap();
        assert_eq!(p.seed, Some(9));
        assert_eq!(p.rhythm.period_ns, 4_000_000_000);
        for part in &p.parts {
            let r = part.rhythm.apply(p.rhythm);
            assert_eq!(r.period_ns, 4_000_000_000);
            assert_eq!(
                (r.active_min_ns, r.active_max_ns),
                (1_000_000_000, 2_000_000_000)
            );
        }
        let cpu = p.parts.iter().find(|q| q.name == "cpu").unwrap();
        assert_eq!(cpu.options.get("workers"), Some(&Raw::Text("2".into())));

        // Options of a list and a duration, read back as the load reads
        // them (its built-in values are 60,70,80 and 17ms); the one left
        // alone keeps its value.
        let mut p = Profile::builtin("rt-interference").unwrap();
        p.adjust(&["prio=50,90", "busy=20ms"]).unwrap();
        let [part] = &p.parts[..] else {
            panic!("{:?}", p.parts)
        };
        let v = part.load.check(&part.options).unwrap();
        assert_eq!(v.priorities("prio"), vec![50, 90]);
        assert_eq!(v.duration_ns("busy"), 20_000_000);
        assert_eq!(v.duration_ns("sleep"), 100_000_000);
        let mut p2 = Profile::builtin("hell").unwrap();
        p2.adjust(&["steady"]).unwrap();
        assert!(p2.parts.iter().all(|q| q.rhythm.apply(p2.rhythm).steady));

        let mut p = Profile::builtin("cpu").unwrap();
        let e = p.adjust(&["prio=50"]).unwrap_err().to_string();
        assert!(
            e.contains("no part of profile 'cpu' has an option 'prio'"),
            "{e}"
        );
        let e = p.adjust(&["nosuch.workers=1"]).unwrap_err().to_string();
        assert!(e.contains("no part 'nosuch'"), "{e}");
        let e = p.adjust(&["workers=many"]).unwrap_err().to_string();
        assert!(e.contains("not a whole number"), "{e}");
        let e = p.adjust(&["period=10"]).unwrap_err().to_string();
        assert!(e.contains("needs a unit"), "{e}");
        let mut p = Profile::builtin("cpu").unwrap();
        let e = p.adjust(&["active=29s-30s"]).unwrap_err().to_string();
        assert!(e.contains("does not leave a rest"), "{e}");
    }

    #[test]
    fn files_are_checked_with_clear_messages() {
        let ok = r#"
            about = "mine"
            [schedule]
            period = "2s"
            active = "1s-1500ms"
            [[part]]
            load = "command"
            argv = ["sleep", "1"]
            [[part]]
            load = "cpu"
            name = "spin"
            workers = 1
            steady = true
        "#;
        let p = Profile::parse(ok, "mine", "mine.toml").unwrap();
        assert_eq!(p.parts.len(), 2);
        assert_eq!(p.parts[1].name, "spin");
        assert_eq!(p.parts[1].rhythm.steady, Some(true));

        let cases = [
            ("[[part]]\nload = \"nope\"", "unknown load 'nope'"),
            ("[[part]]\nload = \"cpu\"\nprio = 3", "has no option 'prio'"),
            ("x = 1\n[[part]]\nload = \"cpu\"", "unknown key 'x'"),
            ("about = \"a\"", "at least one [[part]]"),
            ("[[part]]\nload = \"command\"", "needs option 'argv'"),
            (
                "[[part]]\nload = \"cpu\"\n[[part]]\nload = \"cpu\"",
                "two parts are named 'cpu'",
            ),
            (
                "[schedule]\nperiod = 5\n[[part]]\nload = \"cpu\"",
                "needs a unit",
            ),
            ("[[part]]\nload = \"cpu\"\nworkers = 5000", "outside 0-1024"),
            ("[[part", "profile.toml"),
        ];
        for (text, want) in cases {
            let e = Profile::parse(text, "x", "profile.toml")
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(e.starts_with("profile.toml"), "{e}");
        }
    }

    #[test]
    fn unknown_profiles_list_the_known_ones() {
        let e = Profile::builtin("heaven").unwrap_err().to_string();
        assert!(
            e.contains("unknown load profile 'heaven'") && e.contains("hell"),
            "{e}"
        );
        assert_eq!(
            split_spec("rt-interference:prio=60,70,80:busy=20ms"),
            ("rt-interference", vec!["prio=60,70,80", "busy=20ms"])
        );
    }
}
