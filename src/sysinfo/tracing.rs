//! Which ftrace tracers are selected now: `current_tracer` at the top
//! level of tracefs and in each of its instances. Read only where tracefs
//! is already mounted (the mounts table says where): merely opening
//! `/sys/kernel/debug/tracing` would mount it, and reading facts never
//! changes the system. Tracing state outlives an unmount, so with tracefs
//! unmounted what is selected is unknown, not "nothing".

use super::SysRoot;

/// A tracer other than `nop` selected somewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selected {
    pub tracer: String,
    /// "the top level" or "instance NAME".
    pub place: String,
    /// Its `current_tracer` file (`/sys/kernel/tracing/current_tracer`).
    pub file: String,
}

/// What the tracers are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Tracers {
    /// tracefs is not mounted: which tracer is selected is unknown.
    #[default]
    NotMounted,
    /// Mounted there, but `current_tracer` cannot be read (not root).
    Unreadable(String),
    /// Read: every tracer selected other than `nop` (none: all idle).
    Read(Vec<Selected>),
}

/// The mount points of tracefs in a mounts table (`/proc/self/mounts`);
/// spaces in mount points are written `\040`.
pub fn tracefs_mounts(mounts: &str) -> Vec<String> {
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_src, target, fstype) = (f.next()?, f.next()?, f.next()?);
            (fstype == "tracefs").then(|| target.replace("\\040", " "))
        })
        .collect()
}

/// The tracers selected below `root`, read from the first tracefs mount
/// whose `current_tracer` is readable.
pub fn tracers(root: &SysRoot) -> Tracers {
    let mounts = tracefs_mounts(&root.read("/proc/self/mounts").unwrap_or_default());
    let Some(first) = mounts.first() else {
        return Tracers::NotMounted;
    };
    for m in &mounts {
        if let Some(top) = root.read(&format!("{m}/current_tracer")) {
            return Tracers::Read(selected(root, m, &top));
        }
    }
    Tracers::Unreadable(first.clone())
}

/// The top level's tracer (already read) and each instance's, `nop` left
/// out.
fn selected(root: &SysRoot, mount: &str, top: &str) -> Vec<Selected> {
    let mut found = vec![Selected {
        tracer: top.to_string(),
        place: "the top level".into(),
        file: format!("{mount}/current_tracer"),
    }];
    for name in root.list(&format!("{mount}/instances")) {
        let file = format!("{mount}/instances/{name}/current_tracer");
        if let Some(tracer) = root.read(&file) {
            let place = format!("instance {name}");
            found.push(Selected {
                tracer,
                place,
                file,
            });
        }
    }
    found.retain(|s| !s.tracer.is_empty() && s.tracer != "nop");
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn tracers_are_read_only_where_tracefs_is_mounted() {
        let t = FakeTree::new(&[("/sys/kernel/tracing/current_tracer", "nop\n")]);
        assert_eq!(tracers(&t.root()), Tracers::NotMounted);
        t.write(
            "/proc/self/mounts",
            "sysfs /sys sysfs rw 0 0\ntracefs /sys/kernel/tracing tracefs rw 0 0\n",
        );
        assert_eq!(tracers(&t.root()), Tracers::Read(vec![]));
        t.write("/sys/kernel/tracing/instances/a/current_tracer", "nop\n");
        t.write(
            "/sys/kernel/tracing/instances/b/current_tracer",
            "function_graph\n",
        );
        t.write("/sys/kernel/tracing/current_tracer", "wakeup_rt\n");
        assert_eq!(
            tracers(&t.root()),
            Tracers::Read(vec![
                Selected {
                    tracer: "wakeup_rt".into(),
                    place: "the top level".into(),
                    file: "/sys/kernel/tracing/current_tracer".into(),
                },
                Selected {
                    tracer: "function_graph".into(),
                    place: "instance b".into(),
                    file: "/sys/kernel/tracing/instances/b/current_tracer".into(),
                },
            ])
        );
        let u = FakeTree::new(&[(
            "/proc/self/mounts",
            "nodev /mnt/my\\040trace tracefs rw 0 0\n",
        )]);
        assert_eq!(
            tracers(&u.root()),
            Tracers::Unreadable("/mnt/my trace".into())
        );
    }
}
