//! A PostgreSQL connection whose every wait is bounded. The `postgres`
//! client blocks until the server answers, and its `connect_timeout`
//! bounds only the TCP connect: a server that accepts and never answers
//! (hung, stopped with SIGSTOP, overloaded) would hold the caller, and
//! with it the end of a run and its signals, for ever. So the client
//! lives on a thread of its own, which connects, then runs one job at a
//! time; the caller waits for each answer at most a bound (the whole
//! handshake: the URL's `connect_timeout`; each statement:
//! [`PgConn::set_answer_timeout`]). A wait that runs out gives the
//! connection up: its thread is left to finish on its own (or to end with
//! the process), and every later call fails at once until
//! [`PgConn::reconnect`] has opened a new one, which it can do in the
//! background without waiting. The first handshake also ends when the
//! caller's stop flag is set (a signal): a person who gives up on a
//! server that does not answer is not made to wait for the bound. Never
//! called from a measuring thread.

use super::db::{DbError, Row, Value, ValueError};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

/// How long one statement may wait for the server's answer, unless the
/// caller chose another bound.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a new connection is waited for even by a caller that does not
/// wait: a server that is up answers well within it, so a run's next
/// checkpoint reaches a restarted server at once.
const FRESH_WAIT: Duration = Duration::from_millis(250);

/// How often a wait for the handshake looks at the caller's stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

/// The client and its prepared statements, on the connection's thread.
struct Session {
    client: postgres::Client,
    statements: HashMap<String, postgres::Statement>,
}

impl Session {
    /// The prepared statement of `sql` (written with `?N` placeholders),
    /// prepared once per connection.
    fn statement(&mut self, sql: &str) -> Result<postgres::Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let st = self
            .client
            .prepare(&super::db::to_dollar_placeholders(sql))?;
        self.statements.insert(sql.to_string(), st.clone());
        Ok(st)
    }
}

type Job = Box<dyn FnOnce(&mut Session) + Send>;

/// The connection's thread, seen from the caller.
struct Worker {
    jobs: Sender<Job>,
    /// Disconnects when the thread has ended (its client closed).
    ended: Receiver<()>,
    /// The client said its connection is closed (the server went away).
    closed: bool,
}

enum Link {
    Up(Worker),
    /// Connecting in the background since `since`: `ready` says how the
    /// handshake went.
    Connecting {
        worker: Worker,
        ready: Receiver<Result<(), postgres::Error>>,
        since: Instant,
    },
    /// Given up (no answer in time) or never opened.
    Down,
}

/// A PostgreSQL connection, with what it takes to open it again.
pub struct PgConn {
    pub(crate) config: postgres::Config,
    link: Link,
    /// Bound of the whole handshake.
    handshake: Duration,
    /// Bound of each statement.
    answer: Duration,
}

/// Start a thread that connects with `config`, then runs jobs.
fn spawn(
    config: &postgres::Config,
) -> Result<(Worker, Receiver<Result<(), postgres::Error>>), ConnectError> {
    let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
    let (ready_tx, ready_rx) = mpsc::sync_channel(1);
    let (ended_tx, ended_rx) = mpsc::sync_channel::<()>(1);
    let config = config.clone();
    std::thread::Builder::new()
        .name("rtscope-pg".into())
        .spawn(move || {
            let _ended = ended_tx;
            let client = match config.connect(postgres::NoTls) {
                Ok(c) => c,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            let mut session = Session {
                client,
                statements: HashMap::new(),
            };
            if ready_tx.send(Ok(())).is_err() {
                return;
            }
            while let Ok(job) = jobs_rx.recv() {
                job(&mut session);
            }
        })
        .map_err(ConnectError::Thread)?;
    Ok((
        Worker {
            jobs: jobs_tx,
            ended: ended_rx,
            closed: false,
        },
        ready_rx,
    ))
}

/// Why a connection could not be (re)opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot start the connection's thread: {0}")]
    Thread(std::io::Error),
    /// The server refused or could not be reached.
    #[error("{}", error_text(.0))]
    Failed(postgres::Error),
    /// Being opened, not yet done within the wait asked for.
    #[error("connecting again (in the background)")]
    InBackground,
    #[error(
        "the server did not answer the connection's start-up within {} s (it accepts connections but is hung, stopped or overloaded)",
        .0.as_secs_f64()
    )]
    NoAnswer(Duration),
    #[error("the connection's thread ended")]
    ThreadEnded,
    /// The caller's stop flag (a signal) ended the wait.
    #[error("stopped by a signal while waiting for the server's answer")]
    Interrupted,
}

impl PgConn {
    /// Connect with `config`, waiting at most `handshake` for the whole
    /// handshake (TCP connect, start-up, authentication), and no longer
    /// once `stop` is set ([`ConnectError::Interrupted`]); the text of
    /// what went wrong otherwise.
    pub(crate) fn connect(
        config: &postgres::Config,
        handshake: Duration,
        stop: &AtomicBool,
    ) -> Result<PgConn, ConnectError> {
        let mut conn = PgConn {
            config: config.clone(),
            link: Link::Down,
            handshake,
            answer: STATEMENT_TIMEOUT,
        };
        conn.reconnect_or_stop(handshake, stop)?;
        Ok(conn)
    }

    /// How long each later statement may wait for the server's answer.
    pub(crate) fn set_answer_timeout(&mut self, answer: Duration) {
        self.answer = answer;
    }

    /// True when the connection is not usable now (given up, broken, or
    /// still being opened again).
    pub(crate) fn is_lost(&self) -> bool {
        !matches!(&self.link, Link::Up(w) if !w.closed)
    }

    /// Make the connection usable again: nothing to do when it is; else
    /// open a new one (unless one is being opened, for less than the
    /// handshake bound) and wait at most `wait` for it (at least
    /// [`FRESH_WAIT`] for a new one; zero: a later call finds it open).
    pub(crate) fn reconnect(&mut self, wait: Duration) -> Result<(), ConnectError> {
        self.reconnect_or_stop(wait, &AtomicBool::new(false))
    }

    /// [`PgConn::reconnect`], whose wait also ends when `stop` is set
    /// (the connection goes on being opened in the background).
    fn reconnect_or_stop(&mut self, wait: Duration, stop: &AtomicBool) -> Result<(), ConnectError> {
        if let Link::Connecting { since, .. } = &self.link
            && since.elapsed() > self.handshake
        {
            self.link = Link::Down;
        }
        let mut wait = wait;
        if self.is_lost() && !matches!(self.link, Link::Connecting { .. }) {
            wait = wait.max(FRESH_WAIT);
            let (worker, ready) = spawn(&self.config)?;
            self.link = Link::Connecting {
                worker,
                ready,
                since: Instant::now(),
            };
        }
        let Link::Connecting { ready, since, .. } = &self.link else {
            return Ok(());
        };
        let since = *since;
        let left = self.handshake.saturating_sub(since.elapsed()).min(wait);
        let got = if left.is_zero() {
            ready.try_recv().map_err(|e| match e {
                TryRecvError::Empty => RecvTimeoutError::Timeout,
                TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
            })
        } else {
            match wait_ready(ready, left, stop) {
                Some(got) => got,
                None => return Err(ConnectError::Interrupted),
            }
        };
        match got {
            Ok(Ok(())) => {
                let Link::Connecting { worker, .. } = std::mem::replace(&mut self.link, Link::Down)
                else {
                    unreachable!("matched above")
                };
                self.link = Link::Up(worker);
                Ok(())
            }
            Ok(Err(e)) => {
                self.link = Link::Down;
                Err(ConnectError::Failed(e))
            }
            Err(RecvTimeoutError::Timeout) if since.elapsed() < self.handshake => {
                Err(ConnectError::InBackground)
            }
            Err(RecvTimeoutError::Timeout) => {
                self.link = Link::Down;
                Err(ConnectError::NoAnswer(self.handshake))
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.link = Link::Down;
                Err(ConnectError::ThreadEnded)
            }
        }
    }

    /// Run `f` on the connection's thread and wait at most the answer
    /// bound for its result; the connection is given up when it runs out.
    fn call<R: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut Session) -> Result<R, DbError> + Send + 'static,
    ) -> Result<R, DbError> {
        let Link::Up(worker) = &mut self.link else {
            return Err(DbError::Lost);
        };
        if worker.closed {
            return Err(DbError::Lost);
        }
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |s| {
            let r = f(s);
            let _ = tx.send((r, s.client.is_closed()));
        });
        let got = match worker.jobs.send(job) {
            Ok(()) => rx.recv_timeout(self.answer),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        };
        match got {
            Ok((r, closed)) => {
                worker.closed = closed;
                r
            }
            Err(RecvTimeoutError::Timeout) => {
                self.link = Link::Down;
                Err(DbError::NoAnswer(self.answer))
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.link = Link::Down;
                Err(DbError::Lost)
            }
        }
    }

    /// Run one statement; the number of rows it changed.
    pub(crate) fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let sql = sql.to_string();
        let params = params.to_vec();
        self.call(move |s| {
            let st = s.statement(&sql)?;
            Ok(s.client.execute(&st, &pg_params(&params))?)
        })
    }

    /// Every row of a query.
    pub(crate) fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let sql = sql.to_string();
        let params = params.to_vec();
        self.call(move |s| {
            let st = s.statement(&sql)?;
            let rows = s.client.query(&st, &pg_params(&params))?;
            rows.iter().map(pg_row).collect()
        })
    }

    /// Several statements without parameters.
    pub(crate) fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        let sql = sql.to_string();
        self.call(move |s| Ok(s.client.batch_execute(&sql)?))
    }
}

impl Drop for PgConn {
    /// A live connection is closed properly (a short, bounded wait); a
    /// given-up one is left to its thread.
    fn drop(&mut self) {
        if let Link::Up(w) = std::mem::replace(&mut self.link, Link::Down)
            && !w.closed
        {
            let Worker { jobs, ended, .. } = w;
            drop(jobs);
            let _ = ended.recv_timeout(Duration::from_secs(1));
        }
    }
}

/// Wait at most `left` for the handshake's outcome, looking at `stop`
/// every [`STOP_POLL`]; `None` when `stop` was set first.
fn wait_ready(
    ready: &Receiver<Result<(), postgres::Error>>,
    left: Duration,
    stop: &AtomicBool,
) -> Option<Result<Result<(), postgres::Error>, RecvTimeoutError>> {
    let until = Instant::now() + left;
    loop {
        if stop.load(Ordering::SeqCst) {
            return None;
        }
        let now = Instant::now();
        if now >= until {
            return Some(Err(RecvTimeoutError::Timeout));
        }
        match ready.recv_timeout((until - now).min(STOP_POLL)) {
            Err(RecvTimeoutError::Timeout) => {}
            got => return Some(got),
        }
    }
}

fn pg_params(params: &[Value]) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|v| v as &(dyn postgres::types::ToSql + Sync))
        .collect()
}

fn pg_row(r: &postgres::Row) -> Result<Row, DbError> {
    use postgres::types::Type as T;
    let mut vals = Vec::with_capacity(r.len());
    for (i, col) in r.columns().iter().enumerate() {
        let v = match *col.type_() {
            T::INT8 => r.try_get::<_, Option<i64>>(i)?.map(Value::Int),
            T::INT4 => r
                .try_get::<_, Option<i32>>(i)?
                .map(|v| Value::Int(v.into())),
            T::INT2 => r
                .try_get::<_, Option<i16>>(i)?
                .map(|v| Value::Int(v.into())),
            T::BOOL => r
                .try_get::<_, Option<bool>>(i)?
                .map(|v| Value::Int(v.into())),
            T::FLOAT8 => r.try_get::<_, Option<f64>>(i)?.map(Value::Real),
            T::FLOAT4 => r
                .try_get::<_, Option<f32>>(i)?
                .map(|v| Value::Real(v.into())),
            T::TEXT | T::VARCHAR | T::BPCHAR | T::NAME => {
                r.try_get::<_, Option<String>>(i)?.map(Value::Text)
            }
            T::BYTEA => r.try_get::<_, Option<Vec<u8>>>(i)?.map(Value::Blob),
            ref other => {
                return Err(DbError::Type {
                    column: i,
                    detail: ValueError::UnreadType(other.to_string()),
                });
            }
        };
        vals.push(v.unwrap_or(Value::Null));
    }
    Ok(Row(vals))
}

/// The text of a PostgreSQL error: the server's message when there is one.
pub fn error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => crate::text::chain(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener that accepts and never answers: the handshake is given
    /// up after its bound, and opening it again in the background never
    /// waits.
    #[test]
    fn a_server_that_never_answers_is_given_up_in_time() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for s in l.incoming() {
                held.push(s);
            }
        });
        let config: postgres::Config = format!("postgresql://u@127.0.0.1:{port}/x")
            .parse()
            .unwrap();
        let e = PgConn::connect(&config, Duration::from_millis(300), &AtomicBool::new(false))
            .err()
            .unwrap();
        assert!(e.to_string().contains("did not answer"), "{e}");
        // A stop flag set meanwhile ends the wait long before its bound.
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            s.store(true, Ordering::SeqCst);
        });
        let t = Instant::now();
        let e = PgConn::connect(&config, Duration::from_secs(60), &stop)
            .err()
            .unwrap();
        setter.join().unwrap();
        assert!(matches!(e, ConnectError::Interrupted), "{e}");
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
        let mut c = PgConn {
            config,
            link: Link::Down,
            handshake: Duration::from_secs(60),
            answer: STATEMENT_TIMEOUT,
        };
        assert!(c.is_lost());
        let e = c.reconnect(Duration::ZERO).unwrap_err();
        assert!(e.to_string().contains("background"), "{e}");
        assert!(matches!(c.link, Link::Connecting { .. }));
        assert!(matches!(c.batch("SELECT 1"), Err(DbError::Lost)));
    }
}
