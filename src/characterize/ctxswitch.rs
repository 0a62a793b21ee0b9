//! Benchmark `ctxswitch`: two SCHED_FIFO threads of the same priority on
//! one CPU bounce a byte through a socket pair (a pipe ping-pong, as
//! lmbench's lat_ctx); the row is half a round trip: one write, one
//! switch, one read.

use super::harness::{Pacer, Samples, Team, all, now};
use super::{Bench, BenchOutcome, CharError, Ctx, Group};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

pub const BENCH: Bench = Bench {
    name: "ctxswitch",
    group: Group::Threads,
    help: "context switch between two FIFO threads on one CPU (socket ping-pong)",
    measures: "half a round trip of one byte between two threads on one CPU: write, switch, read",
    run,
};

fn io(what: &'static str) -> impl Fn(std::io::Error) -> CharError {
    move |err| CharError::Sys {
        what: what.into(),
        err,
    }
}

fn run(ctx: &Ctx) -> Result<BenchOutcome, CharError> {
    let cpu = ctx.cpu();
    let (mut a, mut b) = UnixStream::pair().map_err(io("socketpair"))?;
    let team = &Team::new(2);
    let budget = ctx.per_bench_ns;
    let off = ctx.clock_read_ns;
    let results = std::thread::scope(|s| {
        let echo = s.spawn(|| -> Result<Option<Samples>, CharError> {
            team.start(cpu, ctx.priority)?;
            let mut byte = [0u8; 1];
            // Ends when the other side closes its end.
            while b.read(&mut byte).map_err(io("read"))? == 1 {
                b.write_all(&byte).map_err(io("write"))?;
            }
            Ok(None)
        });
        let ping = s.spawn(move || -> Result<Option<Samples>, CharError> {
            let r = (|| {
                team.start(cpu, ctx.priority)?;
                let mut samples = Samples::new(0);
                let mut byte = [1u8; 1];
                let end = now() + budget;
                let mut pacer = Pacer::new();
                loop {
                    let t0 = now();
                    a.write_all(&byte).map_err(io("write"))?;
                    a.read_exact(&mut byte).map_err(io("read"))?;
                    let t1 = now();
                    samples.record((t1 - t0).saturating_sub(off) / 2);
                    if t1 >= end || ctx.stopped() {
                        break;
                    }
                    // Both threads sleep while the pinger rests.
                    pacer.rest_if_due(t1);
                }
                Ok(Some(samples))
            })();
            drop(a);
            r
        });
        vec![ping.join(), echo.join()]
    });
    let samples = all(results)?
        .remove(0)
        .expect("the pinger returns its samples");
    Ok(BenchOutcome {
        results: vec![samples.result(BENCH.name, "socket ping-pong", cpu, BENCH.measures)],
        checks: vec![],
    })
}
