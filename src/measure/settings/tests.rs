use super::*;

/// Every field set, to a value other than its default (a new field must
/// be added here: the literal has no `..`).
fn every_field() -> Settings {
    Settings {
        affinity: Some(vec![0, 1]),
        threads: Some(2),
        main_affinity: Some(vec![0]),
        interval_ns: Some(250_000),
        distance_ns: Some(1_500),
        policy: Some(Policy::Rr),
        priority: Some(80),
        priospread: true,
        dl_runtime_ns: Some(100_000),
        dl_deadline_ns: Some(500_000),
        dl_period_ns: Some(1_000_000),
        timer: Some(TimerMethod::Nanosleep),
        clock: Some(Clock::Realtime),
        duration_ns: Some(90_000_000_000),
        loops: Some(1000),
        warmup_ns: Some(1_000_000_000),
        window_ns: Some(2_000_000_000),
        no_omission_correction: true,
        no_mlock: true,
        latency_us: Some(5),
        no_dma_latency: true,
        break_ns: Some(300_000),
        tracemark: true,
        max_latency_ns: Some(200_000),
        deadline_ns: Some(500_000),
        histogram: Some(100),
        histofall: Some(200),
        histfile: Some("h.txt".into()),
        json: Some("r.json".into()),
        isolate: Some(vec![1]),
        explain_ns: Some(50_000),
        explain_events: Some(EventSet::Full),
        no_save: true,
        force: true,
        label: Some("a label".into()),
        host: Some("board".into()),
        tags: vec![("a".into(), "1".into()), ("b".into(), "2".into())],
        checkpoint_ns: Some(30_000_000_000),
        load: LoadSettings {
            load: Some("hell".into()),
            load_file: Some("l.toml".into()),
            load_cpus: Some(vec![0, 2, 3]),
            load_dir: Some("/tmp".into()),
        },
        db: Some("s.db".into()),
    }
}

fn read(text: &str) -> Result<Settings, SettingsError> {
    Settings::from_table(toml::from_str(text).unwrap())
}

#[test]
fn keys_are_the_fields_and_read_back_what_they_write() {
    let all = every_field();
    let table = all.to_table();
    let mut written: Vec<&str> = table.keys().map(String::as_str).collect();
    let mut keys = KEYS.to_vec();
    written.sort();
    keys.sort();
    assert_eq!(
        written, keys,
        "every field's key (#[serde]) must be its option's long name (#[arg]); db alone has no option"
    );
    assert_eq!(Settings::from_table(table).unwrap(), all);
    assert!(Settings::default().to_table().is_empty());
}

/// What `measure`'s flags make of `words` (after `rtscope measure`).
fn from_flags(words: &[String]) -> Result<Settings, clap::Error> {
    use clap::FromArgMatches;
    let line = std::iter::once("measure").chain(words.iter().map(String::as_str));
    Settings::from_arg_matches(&options().try_get_matches_from(line)?)
}

/// A flag and its key cannot go out of step: the command line written
/// from every key (each `--KEY VALUE`) is read back by the flags into the
/// same settings, so each key is its option's long name and each value
/// reads the same from a flag as from a file.
#[test]
fn the_flags_read_back_the_command_line_of_every_key() {
    let mut s = every_field();
    // One of each pair the flags refuse together.
    s.histofall = None;
    s.no_dma_latency = false;
    s.no_save = false;
    s.load.load_file = None;
    s.db = None;
    let words = s.command_line();
    let read = from_flags(&words[2..]).unwrap_or_else(|e| panic!("{words:?}: {e}"));
    assert_eq!(read, s, "{words:?}");
    // And the other of each pair.
    let t = Settings {
        histofall: Some(200),
        no_dma_latency: true,
        no_save: true,
        load: LoadSettings {
            load_file: Some("l.toml".into()),
            ..LoadSettings::default()
        },
        ..Settings::default()
    };
    let read = from_flags(&t.command_line()[2..]).unwrap();
    assert_eq!((read.histofall, read.no_dma_latency), (Some(200), true));
    assert_eq!((read.no_save, read.load), (true, t.load));
    // A flag refused with its opposite, as the request refuses the keys.
    let both = ["--latency", "5", "--no-dma-latency"].map(String::from);
    assert!(from_flags(&both).is_err());
}

/// Without flags, the defaults `--help` shows, given as values (an
/// opposite flag drops them); a file leaves them out.
#[test]
fn the_flags_give_the_defaults_they_show() {
    let d = from_flags(&[]).unwrap();
    assert_eq!(d.interval_ns, Some(1_000_000));
    assert_eq!(d.distance_ns, Some(0));
    assert_eq!(d.policy, Some(Policy::Fifo));
    assert_eq!(d.clock, Some(Clock::Monotonic));
    assert_eq!((d.warmup_ns, d.window_ns), (Some(0), Some(1_000_000_000)));
    assert_eq!(d.latency_us, Some(0));
    assert_eq!(d.checkpoint_ns, Some(DEFAULT_CHECKPOINT_NS));
    assert_eq!((d.explain_ns, d.explain_events), (None, None));
    let words = ["--no-dma-latency", "--no-save", "--explain"].map(String::from);
    let o = from_flags(&words).unwrap();
    assert_eq!((o.latency_us, o.checkpoint_ns), (None, None));
    assert_eq!(o.explain_ns, Some(DEFAULT_EXPLAIN_NS));
    assert_eq!(o.explain_events, Some(EventSet::Lean));
    assert_eq!(
        from_flags(&d.command_line()[2..]).unwrap(),
        d,
        "the defaults written out read back"
    );
}

/// An option's alias (cyclictest's spelling) is read as its key in a file.
#[test]
fn aliases_read_as_their_key() {
    assert!(ALIASES.contains(&("mainaffinity", "main-affinity")));
    let table = every_field().to_table();
    for (alias, key) in ALIASES.iter() {
        let value = table[*key].clone();
        let by_alias =
            Settings::from_table(toml::Table::from_iter([(alias.to_string(), value.clone())]));
        let by_key = Settings::from_table(toml::Table::from_iter([(key.to_string(), value)]));
        assert_eq!(by_alias, by_key, "{alias} = {key}");
        assert!(Settings::has_key(alias) && Settings::has_key(key));
    }
}

#[test]
fn the_command_line_names_every_key_in_order() {
    let words = every_field().command_line();
    assert_eq!(words[..2], ["rtscope", "measure"]);
    let flags: Vec<&str> = words.iter().filter_map(|w| w.strip_prefix("--")).collect();
    let mut once = flags.clone();
    once.dedup();
    let want: Vec<&str> = KEYS.iter().copied().filter(|k| *k != "db").collect();
    assert_eq!(once, want);
    let line = words.join(" ");
    assert!(
        line.contains("--interval 250us --distance 1500ns --policy rr"),
        "{line}"
    );
    assert!(line.contains("--tag a=1 --tag b=2"), "{line}");
    assert!(line.contains("--load-cpus 0,2-3"), "{line}");
    assert!(!line.contains("s.db"), "{line}");
}

#[test]
fn defaults_are_measure_s() {
    let r = Settings::default().request().unwrap();
    assert_eq!(
        format!("{:?}", r.config),
        format!("{:?}", Settings::default().config())
    );
    let d = MeasureConfig::default();
    let c = r.config;
    assert_eq!(
        (
            c.interval_ns,
            c.policy,
            c.timer,
            c.window_ns,
            c.dma_latency_us
        ),
        (
            d.interval_ns,
            d.policy,
            d.timer,
            d.window_ns,
            d.dma_latency_us
        )
    );
    assert!(c.lock_memory && c.omission_correction);
    assert_eq!(r.checkpoint_ns, Some(DEFAULT_CHECKPOINT_NS));
    assert_eq!(r.explain_events, EventSet::Lean);
    assert_eq!(r.command_line, ["rtscope", "measure"]);
    assert!(r.store.is_none() && r.outputs.histogram.is_none());
}

#[test]
fn values_read_as_people_write_them() {
    let s = read(
        "interval = 1000\ndistance = \"2ms\"\nduration = 5\nwindow = \"500ms\"\n\
         policy = \"RR\"\nisolate = false\naffinity = true\nthreads = 1\nexplain = true\n\
         tag = [\"a=1\", \"b = 2\"]\nno-mlock = true\nclock = 1\npriority = \"70\"\n\
         mainaffinity = 0\nload-cpus = \"0-1\"\n",
    )
    .unwrap();
    assert_eq!(s.interval_ns, Some(1_000_000));
    assert_eq!(s.distance_ns, Some(2_000_000));
    assert_eq!(s.duration_ns, Some(5_000_000_000));
    assert_eq!(s.window_ns, Some(500_000_000));
    assert_eq!(s.policy, Some(Policy::Rr));
    assert_eq!((s.isolate, s.affinity), (None, None));
    assert_eq!(s.threads, Some(1));
    assert_eq!(s.explain_ns, Some(DEFAULT_EXPLAIN_NS));
    assert_eq!(s.tags[1], ("b".to_string(), "2".to_string()));
    assert!(s.no_mlock);
    assert_eq!(s.clock, Some(Clock::Realtime));
    assert_eq!(s.priority, Some(70));
    assert_eq!(s.main_affinity, Some(vec![0]));
    assert_eq!(s.load.load_cpus, Some(vec![0, 1]));
    let t = read("tag = \"k=v\"\n").unwrap();
    assert_eq!(t.tags, [("k".to_string(), "v".to_string())]);
}

#[test]
fn mistakes_are_refused_with_the_flags_words() {
    let says = |text: &str, want: &str| {
        let e = read(text).unwrap_err().to_string();
        assert!(e.contains(want), "{text:?}: wanted {want:?} in {e:?}");
    };
    says("policy = \"fast\"\n", "unknown policy 'fast'");
    says("timer = \"soon\"\n", "unknown timer 'soon'");
    says("interval = \"often\"\n", "'often' is not a duration");
    says("isolate = true\n", "takes a value");
    says("threads = -1\n", "'-1' is not a whole number");
    says("tag = \"novalue\"\n", "tag 'novalue' is not KEY=VALUE");
    says("host = \"\"\n", "is not a host name");
    says("speed = 3\n", "unknown field `speed`");
    says("db = \"mysql://x/y\"\n", "SQLite file");
    let refused = |text: &str, want: &str| {
        let e = read(text).unwrap().request().unwrap_err().to_string();
        assert!(e.contains(want), "{text:?}: wanted {want:?} in {e:?}");
    };
    refused(
        "latency = 5\nno-dma-latency = true\n",
        "the argument '--latency <US>' cannot be used with '--no-dma-latency'",
    );
    refused("histogram = 5\nhistofall = 5\n", "cannot be used with");
    refused("tag = [\"a=1\", \"a=2\"]\n", "--tag a is given twice");
    refused(
        "explain-events = \"full\"\n",
        "--explain-events needs --explain",
    );
}

/// The load keys read into [`LoadSettings`] (flattened into the
/// settings), and the load asked for carries them.
#[test]
fn the_load_keys_read_into_the_load_settings() {
    let s = read("load = \"hell\"\nload-cpus = \"0\"\n").unwrap();
    assert_eq!(s.load.load.as_deref(), Some("hell"));
    let load = s.load.request();
    assert_eq!(load.spec.as_deref(), Some("hell"));
    assert_eq!(load.cpus, Some(vec![0]));
    assert_eq!((load.file, load.dir), (None, None));
    assert_eq!(s.request().unwrap().load.cpus, Some(vec![0]));
    let both = read("load = \"hell\"\nload-file = \"l.toml\"\n").unwrap();
    let e = both.request().unwrap_err().to_string();
    let want = "the argument '--load <PROFILE[:K=V]...>' cannot be used with '--load-file <FILE>'";
    assert!(e.contains(want), "{e}");
}

/// A key that is no setting is refused naming it and listing the keys
/// (with the aliases, as serde's `deny_unknown_fields` did), also beside
/// the load's keys, which the settings read through a flattened struct.
#[test]
fn an_unknown_key_is_refused_naming_it() {
    let e = read("speed = 3\n").unwrap_err().to_string();
    assert!(
        e.starts_with(
            "unknown field `speed`, expected one of `affinity`, `threads`, `main-affinity`, `mainaffinity`, `interval`, "
        ),
        "{e}"
    );
    assert!(
        e.ends_with("`checkpoint`, `load`, `load-file`, `load-cpus`, `load-dir`, `db`"),
        "{e}"
    );
    for key in KEYS.iter() {
        assert!(e.contains(&format!("`{key}`")), "{key}: {e}");
    }
    let e = read("load = \"hell\"\nload-cpu = \"0\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("unknown field `load-cpu`, expected one of"),
        "{e}"
    );
}

#[test]
fn the_request_carries_every_setting() {
    let mut s = every_field();
    s.histofall = None;
    s.no_dma_latency = false;
    s.no_save = false;
    s.load.load_file = None;
    let r = s.request().unwrap();
    assert_eq!(r.config.cpus, Some(vec![0, 1]));
    assert_eq!(r.config.dma_latency_us, Some(5));
    assert_eq!(r.checkpoint_ns, Some(30_000_000_000));
    assert_eq!(r.isolate, Some(vec![1]));
    assert_eq!(r.load.spec.as_deref(), Some("hell"));
    assert_eq!(r.outputs.histogram.as_ref().map(|h| h.rows), Some(100));
    assert_eq!(r.explain_above_ns, Some(50_000));
    assert_eq!(r.store, Some(PathBuf::from("s.db")));
    assert_eq!(r.tags.len(), 2);
    assert!(r.force_shared_cpus);
    assert_eq!(r.deadline_ns, Some(500_000));
}

#[test]
fn a_deadline_reads_as_the_interval_does_and_is_never_zero() {
    assert_eq!(read("deadline = 250\n").unwrap().deadline_ns, Some(250_000));
    assert_eq!(
        read("deadline = \"2ms\"\n").unwrap().deadline_ns,
        Some(2_000_000)
    );
    let e = read("deadline = 0\n").unwrap_err().to_string();
    assert!(e.contains("deadline '0' is 0"), "{e}");
    let e = read("deadline = \"soon\"\n").unwrap_err().to_string();
    assert!(e.contains("'soon' is not a duration"), "{e}");
    assert!(e.contains("--deadline takes a time"), "{e}");
    let words = Settings {
        deadline_ns: Some(500_000),
        ..Settings::default()
    }
    .command_line();
    assert_eq!(words[2..], ["--deadline", "500us"]);
}

#[test]
fn a_path_that_is_not_text_is_written_lossily() {
    use std::os::unix::ffi::OsStrExt;
    let s = Settings {
        json: Some(PathBuf::from(std::ffi::OsStr::from_bytes(b"r\xff.json"))),
        ..Settings::default()
    };
    let words = s.command_line();
    assert_eq!(words[2], "--json");
    assert!(words[3].starts_with('r') && words[3].ends_with(".json"));
    assert_eq!(s.request().unwrap().outputs.json, s.json);
}

/// A label or tag value a record could not be read back with (a control
/// character, more than record::TEXT_MAX_BYTES) is refused before anything
/// is measured, in a file as on the command line.
#[test]
fn labels_and_tag_values_a_record_cannot_keep_are_refused() {
    assert_eq!(
        parse::label("PREEMPT_RT, CPU 1").unwrap(),
        "PREEMPT_RT, CPU 1"
    );
    let e = parse::label("a\u{1b}]0;title\u{7}")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("label \"a\\u{1b}]0;title\\u{7}\" is not a text"),
        "{e}"
    );
    let long = "x".repeat(crate::record::TEXT_MAX_BYTES + 1);
    let e = parse::label(&long).unwrap_err().to_string();
    assert!(e.contains("(4097 bytes)"), "{e}");
    assert!(parse::tag("k=v\u{7}").is_err());
    assert_eq!(parse::tag("load=hackbench").unwrap().1, "hackbench");
    let e = read("label = \"a\\u001b[2J\"").unwrap_err();
    assert!(e.to_string().contains("is not a text a run keeps"), "{e}");
}
