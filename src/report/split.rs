//! What an imported run measured, when it is not simply a wake-up
//! latency per thread: the quantity (a busy-loop gap, OS noise), rtla
//! timerlat's contexts per CPU (IRQ, thread, user, kept apart) and rtla
//! osnoise's counts per CPU. Plain lines shared by `runs show`, the HTML
//! report's facts and `compare`; nothing for runs that have none of it.

use crate::record::{LatencyStats, Quantity, RunRecord, ThreadRecord};
use crate::units::us_cell_f;

/// `min / avg / max` of `s` in µs, `-` where unknown, and its count.
fn mam(s: &LatencyStats) -> String {
    format!(
        "min/avg/max {}/{}/{} µs ({} samples)",
        us_cell_f(s.min_ns.map(|v| v as f64)),
        us_cell_f(s.avg_ns),
        us_cell_f(s.max_ns.map(|v| v as f64)),
        s.samples
    )
}

fn where_(t: &ThreadRecord) -> String {
    match t.cpu {
        Some(c) => format!("CPU {c}"),
        None => format!("thread {}", t.index),
    }
}

/// The quantity, when the run's numbers are not a timer wake-up latency.
pub fn quantity_line(rec: &RunRecord) -> Option<String> {
    match Quantity::of(rec) {
        Quantity::WakeupLatency => None,
        q => Some(q.describe().to_string()),
    }
}

/// One line per thread that has contexts or noise counts.
pub fn lines(rec: &RunRecord) -> Vec<String> {
    rec.threads.iter().filter_map(thread_line).collect()
}

fn thread_line(t: &ThreadRecord) -> Option<String> {
    if let Some(ctx) = t.context {
        let mut parts = vec![format!(
            "{} (the latency shown) {}",
            ctx.name(),
            mam(&t.stats)
        )];
        parts.extend(
            t.contexts
                .iter()
                .map(|c| format!("{} {}", c.context.name(), mam(&c.stats))),
        );
        return Some(format!("{}: {}", where_(t), parts.join("; ")));
    }
    let n = t.noise.as_ref()?;
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    Some(format!(
        "{}: runtime {}, noise {} µs ({:.5} % of the CPU left), max noise in a period {} µs, max single {} µs; interference counts HW {}, NMI {}, IRQ {}, softirq {}, thread {}",
        where_(t),
        crate::units::fmt_duration(n.runtime_ns),
        us_cell_f(Some(n.noise_ns as f64)),
        n.cpu_available_pct,
        us_cell_f(Some(n.max_noise_ns as f64)),
        us_cell_f(t.stats.max_ns.map(|v| v as f64)),
        n.hw,
        n.nmi,
        opt(n.irq),
        opt(n.softirq),
        opt(n.thread)
    ))
}

/// The warning `compare` gives when A and B measure different things, or
/// the same timer in different contexts.
pub fn compare_warning(a: &RunRecord, b: &RunRecord) -> Option<String> {
    let (qa, qb) = (Quantity::of(a), Quantity::of(b));
    if qa != qb {
        return Some(format!(
            "A measures {}, B measures {}: different quantities, the ratios below compare unlike things",
            qa.describe(),
            qb.describe()
        ));
    }
    let ctx = |r: &RunRecord| {
        let mut c: Vec<&str> = r
            .threads
            .iter()
            .map(|t| t.context.map_or("wake-up", |c| c.name()))
            .collect();
        c.dedup();
        c.join("+")
    };
    let (ca, cb) = (ctx(a), ctx(b));
    let irq = |c: &str| c.contains("irq");
    (ca != cb && (irq(&ca) || irq(&cb))).then(|| {
        format!("A's latency is taken in context {ca}, B's in {cb}: an IRQ latency is earlier than any thread's wake-up")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ContextRecord, HistogramRecord, LatencyContext, synthetic};

    #[test]
    fn contexts_noise_and_quantities_are_said() {
        let mut r = synthetic(&[vec![2000, 4000]]);
        assert!(lines(&r).is_empty() && quantity_line(&r).is_none());
        r.threads[0].context = Some(LatencyContext::Thread);
        r.threads[0].contexts.push(ContextRecord {
            context: LatencyContext::Irq,
            stats: LatencyStats {
                samples: 2,
                min_ns: Some(1000),
                max_ns: Some(1500),
                ..Default::default()
            },
            histogram: HistogramRecord::empty(),
        });
        let l = lines(&r);
        assert_eq!(
            l[0],
            "CPU 0: thread (the latency shown) min/avg/max 2.0/3.0/4.0 µs (2 samples); irq min/avg/max 1.0/-/1.5 µs (2 samples)"
        );
        let mut b = synthetic(&[vec![1000]]);
        assert!(compare_warning(&r, &b).is_none());
        b.threads[0].context = Some(LatencyContext::Irq);
        assert!(compare_warning(&r, &b).unwrap().contains("IRQ latency"));
        b.quantity = Some(Quantity::BusyLoopGap);
        assert!(compare_warning(&r, &b).unwrap().contains("busy-loop gap"));
        assert!(quantity_line(&b).unwrap().contains("oslat"));
    }
}
