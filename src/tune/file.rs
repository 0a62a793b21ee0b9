//! The common case of a setting: one system file holding one value
//! (sysctl, sysfs). Write, read back and compare; restore only when the
//! value differs from the original. `norm` turns what the file shows into
//! what was written (e.g. `always [madvise] never` → `madvise`).

use super::journal::Change;
use super::{Env, Restored, SettingError};
use crate::units::{format_cpu_list, parse_cpu_mask};

pub type Norm = fn(&str) -> String;

pub fn plain(s: &str) -> String {
    s.trim().to_string()
}

/// A CPU mask compared by its CPUs, not its spelling (`3` = `00000003`);
/// what is no mask is compared as trimmed text.
pub fn mask_norm(s: &str) -> String {
    parse_cpu_mask(s)
        .map(|c| format_cpu_list(&c))
        .unwrap_or_else(|_| s.trim().to_string())
}

pub fn read(env: &Env, path: &str, norm: Norm) -> Option<String> {
    env.read(path).map(|v| norm(&v))
}

/// Write `value` to `path` and check it reads back as `value`.
pub fn set(env: &Env, path: &str, value: &str, norm: Norm) -> Result<(), SettingError> {
    env.write(path, value)?;
    match read(env, path, norm) {
        Some(v) if v == norm(value) => Ok(()),
        Some(read) => Err(SettingError::NotTaken {
            path: path.to_string(),
            value: value.to_string(),
            read,
        }),
        None => Err(SettingError::Unreadable {
            path: path.to_string(),
            value: value.to_string(),
        }),
    }
}

/// Put `original` back into `path` unless it is already there.
pub fn restore(
    env: &Env,
    path: &str,
    original: &str,
    norm: Norm,
) -> Result<Restored, SettingError> {
    match read(env, path, norm) {
        None if !env.root.path(path).exists() => Ok(Restored::Gone),
        Some(v) if v == norm(original) => Ok(Restored::AlreadyOriginal),
        _ => set(env, path, original, norm).map(|_| Restored::Done(None)),
    }
}

/// `Setting::apply` for a one-value file compared as trimmed text.
pub fn apply_plain(env: &Env, c: &Change) -> Result<Option<String>, SettingError> {
    set(env, &c.key, &c.target, plain).map(|_| None)
}

/// `Setting::restore` for a one-value file compared as trimmed text.
pub fn restore_plain(env: &Env, c: &Change) -> Result<Restored, SettingError> {
    restore(env, &c.key, &c.original, plain)
}

/// `Setting::current` for a one-value file compared as trimmed text.
pub fn current_plain(env: &Env, c: &Change) -> Option<String> {
    read(env, &c.key, plain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn set_verify_restore() {
        let t = FakeTree::new(&[("/proc/sys/kernel/timer_migration", "1\n")]);
        let env = Env::new(t.root());
        let p = "/proc/sys/kernel/timer_migration";
        set(&env, p, "0", plain).unwrap();
        assert_eq!(read(&env, p, plain).as_deref(), Some("0"));
        assert_eq!(restore(&env, p, "1", plain), Ok(Restored::Done(None)));
        assert_eq!(restore(&env, p, "1", plain), Ok(Restored::AlreadyOriginal));
        assert_eq!(
            restore(&env, "/proc/irq/99/smp_affinity_list", "0", plain),
            Ok(Restored::Gone)
        );
        assert!(
            env.write("/proc/nonexistent", "1").is_err(),
            "never creates files"
        );
    }
}
