//! [`MetricsObserver`]: the engine observer that feeds the endpoint. On
//! the control thread, once a second (and once more when measuring is
//! over, with the exact final counts), it copies each thread's shared
//! statistics, renders the exposition text and publishes it in the
//! [`Feed`] the server reads. It never touches a measuring thread, and
//! keeps the server's thread off the measured CPUs when there are others.

use super::server::Feed;
use super::text::{self, Moment, ThreadMoment};
use crate::engine::build::RecordContext;
use crate::engine::shared::SharedStats;
use crate::engine::{Control, Observer, Plan, RunView};
use crate::units::fmt_duration;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the text is rendered while a run goes on.
pub const PUBLISH_EVERY: Duration = Duration::from_secs(1);

pub struct MetricsObserver {
    feed: Feed,
    moment: Moment,
    stats: Vec<Arc<SharedStats>>,
    last: Option<Instant>,
}

impl MetricsObserver {
    /// An observer of the run `plan`, labelled from `ctx` (host from the
    /// fingerprint's hostname, label, tags, kernel, preemption model).
    /// Until the run starts the endpoint serves the run's info and empty
    /// series.
    pub fn new(feed: Feed, plan: &Plan, ctx: &RecordContext) -> MetricsObserver {
        let fp = &ctx.fingerprint;
        let mut common = vec![
            ("host".to_string(), fp.hostname.clone()),
            ("label".to_string(), ctx.label.clone().unwrap_or_default()),
            ("kernel".to_string(), fp.kernel_release.clone()),
            ("preempt".to_string(), fp.preemption_model.to_string()),
        ];
        for (k, v) in &ctx.tags {
            common.push((text::tag_label(k), v.clone()));
        }
        let info = vec![
            ("run_uuid".to_string(), ctx.run_uuid.clone()),
            ("window".to_string(), fmt_duration(plan.config.window_ns)),
        ];
        let threads = plan
            .threads
            .iter()
            .map(|t| ThreadMoment {
                cpu: t.cpu,
                thread: t.index,
                interval_ns: t.interval_ns,
                hist: crate::histogram::Histogram::latency(),
                sum_ns: 0,
                wakeups: 0,
                missed: 0,
                max_ns: None,
                window_max_ns: None,
            })
            .collect();
        let moment = Moment {
            common,
            info,
            threads,
        };
        feed.publish(text::render(&moment));
        feed.keep_server_on(
            &plan.unmeasured_cpus(&crate::sysinfo::cpu::allowed_cpus().unwrap_or_default()),
        );
        MetricsObserver {
            feed,
            moment,
            stats: Vec::new(),
            last: None,
        }
    }

    fn publish(&mut self) {
        for (t, s) in self.moment.threads.iter_mut().zip(&self.stats) {
            let snap = s.snapshot();
            t.sum_ns = snap.sum_ns;
            t.wakeups = snap.wakeups;
            t.missed = snap.missed;
            t.max_ns = snap.max_ns;
            t.hist = snap.hist;
        }
        self.feed.publish(text::render(&self.moment));
        self.last = Some(Instant::now());
    }
}

impl Observer for MetricsObserver {
    fn started(&mut self, view: &RunView) {
        self.stats = (0..view.thread_count())
            .map(|i| view.stats_handle(i))
            .collect();
        self.publish();
    }

    fn tick(&mut self, view: &RunView) -> Control {
        if self.last.is_none_or(|l| l.elapsed() >= PUBLISH_EVERY) {
            for (i, t) in self.moment.threads.iter_mut().enumerate() {
                if let Some((_, p)) = view.last_window(i) {
                    t.window_max_ns = Some(p.max_ns);
                }
            }
            self.publish();
        }
        Control::Continue
    }

    /// The threads have stopped: the counts are now exact.
    fn ended(&mut self) {
        if !self.stats.is_empty() {
            self.publish();
        }
    }
}
