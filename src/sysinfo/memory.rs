//! Memory facts that touch latency: swap in use, and transparent huge
//! pages (compaction and khugepaged work).

use super::SysRoot;

pub const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// Active swap areas (`/proc/swaps`), by name.
    pub swaps: Vec<String>,
    /// SwapTotal in kB.
    pub swap_total_kb: Option<u64>,
    /// THP mode in force (always, madvise, never).
    pub thp_enabled: Option<String>,
}

/// The bracketed choice of a sysfs selection file
/// (`always [madvise] never` → `madvise`), or the whole value.
pub fn selected(text: &str) -> String {
    text.split_whitespace()
        .find(|w| w.starts_with('[') && w.ends_with(']'))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .unwrap_or_else(|| text.trim().to_string())
}

pub fn memory(root: &SysRoot) -> Memory {
    let swaps = root
        .read("/proc/swaps")
        .map(|s| {
            s.lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().next().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let swap_total_kb = root.read("/proc/meminfo").and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("SwapTotal:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
    });
    Memory {
        swaps,
        swap_total_kb,
        thp_enabled: root.read(THP_ENABLED).map(|s| selected(&s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_files() {
        assert_eq!(selected("always [madvise] never"), "madvise");
        assert_eq!(selected("[always] madvise never\n"), "always");
        assert_eq!(selected("performance"), "performance");
    }
}
