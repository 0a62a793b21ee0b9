//! A small client of the Chrome DevTools protocol for tests that look at
//! pages the way a person does: Debian's Chromium, headless, driven over
//! a websocket (one per tab), synchronously. It owns the browser's
//! process and temporary profile, which go when the [`Browser`] is
//! dropped, a failed test included; every call has a deadline and its
//! error names what was asked. It never decides what a page should show:
//! the tests (here, `report`, and the web view's) assert that.
//!
//! ```ignore
//! let Some(browser) = Browser::start() else { return }; // SKIP without chromium
//! let mut tab = browser.tab();
//! tab.set_width(1280);
//! tab.goto(&url);
//! let w: u32 = tab.eval("document.documentElement.scrollWidth");
//! tab.click("a.run");
//! tab.wait_load();
//! tab.screenshot("my_test"); // target/artefacts/screenshots/my_test.png
//! assert_eq!(tab.errors(), Vec::<String>::new());
//! ```

mod live;
mod report;
mod serve;
mod study;

use crate::util::{Need, TempDir, exclusive_system, require};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::io::{ErrorKind, Read as _};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, RwLockWriteGuard};
use std::time::{Duration, Instant};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

/// How long one call may take, page loads included.
pub const CALL_LIMIT: Duration = Duration::from_secs(30);
/// How long Chromium may take to open its DevTools port.
const START_LIMIT: Duration = Duration::from_secs(30);
/// The window, until a tab sets its own size.
const WINDOW: (u32, u32) = (1280, 900);

/// A call that failed: what was asked, and why.
#[derive(Debug)]
pub struct CdpError {
    pub asked: String,
    pub why: String,
}

impl std::fmt::Display for CdpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.asked, self.why)
    }
}

impl std::error::Error for CdpError {}

/// What a call asked, for its error: the method and its parameters, cut
/// to a readable length.
fn asked(method: &str, params: &Value) -> String {
    let p = params.to_string();
    let p = match p.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &p[..at]),
        None => p,
    };
    format!("{method} {p}")
}

/// One websocket to the browser or to one of its pages: numbered
/// requests, answered in turn, with the events that came meanwhile kept.
struct Socket {
    ws: WebSocket<TcpStream>,
    next_id: u64,
}

impl Socket {
    fn connect(port: u16, path: &str) -> Result<Socket, String> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let stream = TcpStream::connect_timeout(&addr, CALL_LIMIT)
            .map_err(|e| format!("connecting to {addr}: {e}"))?;
        stream
            .set_write_timeout(Some(CALL_LIMIT))
            .map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(CALL_LIMIT))
            .map_err(|e| e.to_string())?;
        // Screenshots of long pages come as one message of many MB.
        let config = WebSocketConfig::default()
            .max_message_size(Some(512 << 20))
            .max_frame_size(None);
        let url = format!("ws://127.0.0.1:{port}{path}");
        let (ws, _) = tungstenite::client::client_with_config(url.as_str(), stream, Some(config))
            .map_err(|e| format!("websocket handshake with {url}: {e}"))?;
        Ok(Socket { ws, next_id: 1 })
    }

    /// The next message, or `None` when `deadline` passed first.
    fn receive(&mut self, deadline: Instant) -> Result<Option<Value>, String> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.ws
                .get_mut()
                .set_read_timeout(Some(left))
                .map_err(|e| e.to_string())?;
            match self.ws.read() {
                Ok(Message::Text(t)) => {
                    return serde_json::from_str(t.as_str())
                        .map(Some)
                        .map_err(|e| format!("an answer that is not JSON ({e}): {t}"));
                }
                Ok(_) => continue,
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
                {
                    return Ok(None);
                }
                Err(e) => return Err(format!("the websocket: {e}")),
            }
        }
    }

    /// Send `method` and wait for its answer; every event that comes
    /// before it goes to `events`.
    fn call(
        &mut self,
        method: &str,
        params: Value,
        limit: Duration,
        events: &mut Vec<Value>,
    ) -> Result<Value, CdpError> {
        let fail = |why: String| CdpError {
            asked: asked(method, &params),
            why,
        };
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"id": id, "method": method, "params": params});
        self.ws
            .send(Message::text(request.to_string()))
            .map_err(|e| fail(format!("sending: {e}")))?;
        let deadline = Instant::now() + limit;
        loop {
            let Some(m) = self.receive(deadline).map_err(&fail)? else {
                return Err(fail(format!("no answer within {limit:?}")));
            };
            if m.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(e) = m.get("error") {
                    return Err(fail(format!("refused: {e}")));
                }
                return Ok(m.get("result").cloned().unwrap_or(Value::Null));
            }
            if m.get("method").is_some() {
                events.push(m);
            }
        }
    }
}

/// Headless Chromium, started for one test: its DevTools port, the
/// browser-wide socket that opens and closes tabs, and what goes when it
/// is dropped (the process group, the profile).
///
/// A running Chromium keeps both CPUs busy: it holds [`exclusive_system`]
/// from [`Browser::start`] to its drop, as a load does, so no measuring
/// test runs beside it. Do not hold `shared_system` or `exclusive_system`
/// yourself while starting one (the lock is not reentrant).
pub struct Browser {
    child: Child,
    port: u16,
    socket: Mutex<Socket>,
    /// Its profile (`profile/`) and what it printed (`stderr`), removed
    /// once it is gone.
    #[allow(dead_code)]
    dir: TempDir,
    // Last: let go once the browser is gone.
    _system: RwLockWriteGuard<'static, ()>,
}

impl Browser {
    /// Start Chromium with a fresh profile and a 1280×900 window. `None`
    /// when it is not installed and `RTSCOPE_ALLOW_SKIP=1` (a SKIP line
    /// is printed); without that, the test fails saying what it needs.
    #[track_caller]
    pub fn start() -> Option<Browser> {
        let installed = Command::new("chromium")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        if !require(
            Need::Tool,
            installed,
            "Debian's chromium (scripts/install-deps.sh installs it)",
        ) {
            return None;
        }
        let system = exclusive_system();
        let dir = TempDir::new("browser");
        let profile = dir.join("profile");
        let log = dir.join("stderr");
        let child = Command::new("chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-port=0",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            // Its own process group: the drop ends its helpers with it.
            .process_group(0)
            .spawn()
            .expect("chromium starts");
        let mut starting = Partial {
            child: Some(child),
            dir: Some(dir),
        };
        let (port, path) = starting.devtools_port(&profile, &log);
        let socket = Socket::connect(port, &path)
            .unwrap_or_else(|e| panic!("Chromium's DevTools: {e}\n{}", tail(&log)));
        let (child, dir) = starting.take();
        Some(Browser {
            child,
            port,
            socket: Mutex::new(socket),
            dir,
            _system: system,
        })
    }

    /// A new tab (`Target.createTarget`) showing about:blank, with page
    /// events, script errors and the console's errors collected. Each
    /// has its own socket: tabs may be used side by side from threads.
    pub fn tab(&self) -> Tab<'_> {
        let target = self
            .call("Target.createTarget", json!({"url": "about:blank"}))
            .unwrap_or_else(|e| panic!("{e}"));
        let id = target["targetId"]
            .as_str()
            .unwrap_or_else(|| panic!("Target.createTarget gave no targetId: {target}"))
            .to_string();
        let socket = Socket::connect(self.port, &format!("/devtools/page/{id}"))
            .unwrap_or_else(|e| panic!("the tab {id}: {e}"));
        let mut tab = Tab {
            browser: self,
            id,
            socket,
            events: Vec::new(),
            loads: 0,
            errors: Vec::new(),
            width: WINDOW.0,
        };
        for method in ["Page.enable", "Runtime.enable", "Log.enable"] {
            tab.call(method, json!({}))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        tab
    }

    /// A browser-wide call (`Target.*`, `Browser.*`).
    pub fn call(&self, method: &str, params: Value) -> Result<Value, CdpError> {
        let mut socket = self.socket.lock().unwrap_or_else(|e| e.into_inner());
        socket.call(method, params, CALL_LIMIT, &mut Vec::new())
    }

    /// What Chromium printed on standard error so far (its last lines).
    #[allow(dead_code)] // for tests that need it in a failure message
    pub fn stderr(&self) -> String {
        tail(&self.dir.join("stderr"))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Politely first (it flushes and ends its helpers), then for sure.
        let _ = self
            .socket
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .call(
                "Browser.close",
                json!({}),
                Duration::from_secs(5),
                &mut Vec::new(),
            );
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        kill_group(&mut self.child);
    }
}

/// SIGKILL to `child`'s process group (its helpers too), then reap it.
fn kill_group(child: &mut Child) {
    use rustix::process::{Pid, Signal, kill_process_group};
    if let Some(pid) = Pid::from_raw(child.id() as i32) {
        let _ = kill_process_group(pid, Signal::KILL);
    }
    let _ = child.wait();
}

/// A browser being started: killed and its profile removed when the
/// start fails half-way (a panic), handed over whole when it succeeds.
struct Partial {
    child: Option<Child>,
    dir: Option<TempDir>,
}

impl Partial {
    /// The port and browser path Chromium writes to
    /// `<profile>/DevToolsActivePort` once it listens.
    fn devtools_port(&mut self, profile: &Path, log: &Path) -> (u16, String) {
        let file = profile.join("DevToolsActivePort");
        let start = Instant::now();
        loop {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next())
                && let Ok(port) = port.trim().parse::<u16>()
                && path.starts_with("/devtools/browser/")
            {
                return (port, path.trim().to_string());
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "chromium exited ({status}) before opening its DevTools port\n{}",
                    tail(log)
                );
            }
            if start.elapsed() > START_LIMIT {
                panic!(
                    "chromium did not write {} within {START_LIMIT:?}\n{}",
                    file.display(),
                    tail(log)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn take(&mut self) -> (Child, TempDir) {
        (self.child.take().unwrap(), self.dir.take().unwrap())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            kill_group(c);
        }
    }
}

/// The last 40 lines of a file (Chromium's standard error), headed.
fn tail(path: &Path) -> String {
    let mut text = String::new();
    let _ = std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text));
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(40);
    format!("--- chromium's stderr\n{}", lines[from..].join("\n"))
}

/// One tab of a [`Browser`], closed when dropped. Its methods fail the
/// test, saying what was asked, when the browser refuses or does not
/// answer within [`CALL_LIMIT`]; [`Tab::call`] returns the error instead.
pub struct Tab<'b> {
    browser: &'b Browser,
    id: String,
    socket: Socket,
    /// Events not yet looked at.
    events: Vec<Value>,
    /// Load events since the last navigation or click.
    loads: usize,
    /// Script exceptions and console errors, as text, in order.
    errors: Vec<String>,
    width: u32,
}

impl Tab<'_> {
    /// Any DevTools method of the page (`Page.*`, `Runtime.*`, ...).
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, CdpError> {
        self.call_within(method, params, CALL_LIMIT)
    }

    fn call_within(
        &mut self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, CdpError> {
        let r = self.socket.call(method, params, limit, &mut self.events);
        self.note_events();
        r
    }

    /// Take what the events say: loads counted, errors kept.
    fn note_events(&mut self) {
        for e in std::mem::take(&mut self.events) {
            let p = &e["params"];
            match e["method"].as_str().unwrap_or_default() {
                "Page.loadEventFired" => self.loads += 1,
                "Runtime.exceptionThrown" => {
                    let d = &p["exceptionDetails"];
                    let what = d["exception"]["description"]
                        .as_str()
                        .or(d["text"].as_str())
                        .unwrap_or("an exception");
                    self.errors.push(format!(
                        "uncaught: {what} ({}:{})",
                        d["url"].as_str().unwrap_or("?"),
                        d["lineNumber"]
                    ));
                }
                "Runtime.consoleAPICalled"
                    if matches!(p["type"].as_str(), Some("error" | "assert")) =>
                {
                    let args: Vec<String> = p["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|a| match &a["value"] {
                            Value::String(s) => s.clone(),
                            Value::Null => a["description"].as_str().unwrap_or("").to_string(),
                            v => v.to_string(),
                        })
                        .collect();
                    self.errors.push(format!(
                        "console.{}: {}",
                        p["type"].as_str().unwrap_or("error"),
                        args.join(" ")
                    ));
                }
                "Log.entryAdded" if p["entry"]["level"] == "error" => {
                    self.errors.push(format!(
                        "{}: {} ({})",
                        p["entry"]["source"].as_str().unwrap_or("log"),
                        p["entry"]["text"].as_str().unwrap_or(""),
                        p["entry"]["url"].as_str().unwrap_or("")
                    ));
                }
                _ => {}
            }
        }
    }

    /// Wait up to `limit` for `done` to hold, reading events meanwhile.
    fn wait_events(&mut self, what: &str, limit: Duration, done: impl Fn(&Tab<'_>) -> bool) {
        let deadline = Instant::now() + limit;
        while !done(self) {
            match self.socket.receive(deadline) {
                Ok(Some(m)) => {
                    if m.get("method").is_some() {
                        self.events.push(m);
                        self.note_events();
                    }
                }
                Ok(None) => panic!("{what}: not within {limit:?}"),
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }

    /// Open `url` and wait for its load event (`Page.navigate`, then
    /// `Page.loadEventFired`); a page that cannot be had fails the test.
    #[track_caller]
    pub fn goto(&mut self, url: &str) {
        self.loads = 0;
        let r = self
            .call("Page.navigate", json!({"url": url}))
            .unwrap_or_else(|e| panic!("{e}"));
        if let Some(e) = r.get("errorText") {
            panic!("Page.navigate {url}: {e}");
        }
        self.wait_load_within(&format!("the load of {url}"), CALL_LIMIT);
    }

    /// Wait for the next page's load event since the last [`Tab::goto`]
    /// or [`Tab::click`] (one that already came counts).
    #[track_caller]
    pub fn wait_load(&mut self) {
        self.wait_load_within("a page load after the click", CALL_LIMIT);
    }

    fn wait_load_within(&mut self, what: &str, limit: Duration) {
        self.wait_events(what, limit, |t| t.loads > 0);
        self.loads = 0;
    }

    /// The value of a script (an expression; a promise is awaited),
    /// as `T`. A script that throws fails the test with its exception.
    #[track_caller]
    pub fn eval<T: DeserializeOwned>(&mut self, js: &str) -> T {
        self.try_eval(js).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Tab::eval`], returning what went wrong instead.
    pub fn try_eval<T: DeserializeOwned>(&mut self, js: &str) -> Result<T, CdpError> {
        let fail = |why: String| CdpError {
            asked: format!("Runtime.evaluate {js}"),
            why,
        };
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
        )?;
        if let Some(d) = r.get("exceptionDetails") {
            let what = d["exception"]["description"]
                .as_str()
                .or(d["text"].as_str())
                .unwrap_or("an exception");
            return Err(fail(format!("threw {what}")));
        }
        let v = r["result"].get("value").cloned().unwrap_or(Value::Null);
        serde_json::from_value(v.clone())
            .map_err(|e| fail(format!("{v} is not what was asked: {e}")))
    }

    /// Poll `js` (a boolean expression) until it is true; fail after
    /// `limit` with its last value or error. Errors while a page loads
    /// (no document yet) count as false.
    #[track_caller]
    pub fn wait_for(&mut self, js: &str, limit: Duration) {
        let start = Instant::now();
        loop {
            let last = match self.try_eval::<Value>(js) {
                Ok(Value::Bool(true)) => return,
                Ok(v) => v.to_string(),
                Err(e) => e.why,
            };
            assert!(
                start.elapsed() < limit,
                "waiting for {js}: not within {limit:?} (last: {last})"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Click the first element that matches `selector` with the mouse,
    /// at its centre once scrolled into view (`Input.dispatchMouseEvent`):
    /// the test fails when there is none, or when another element covers
    /// it there. A navigation it starts is waited for by
    /// [`Tab::wait_load`].
    #[track_caller]
    pub fn click(&mut self, selector: &str) {
        let sel = serde_json::to_string(selector).unwrap();
        let at: Value = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return 'no element matches'; \
             e.scrollIntoView({{block: 'center', inline: 'center'}}); \
             const r = e.getBoundingClientRect(); const x = r.left + r.width / 2, y = r.top + r.height / 2; \
             const top = document.elementFromPoint(x, y); \
             if (top !== e && !e.contains(top)) return 'covered by ' + (top ? top.outerHTML.slice(0, 120) : 'nothing'); \
             return [x, y]; }})()"
        ));
        let (x, y) = match &at {
            Value::Array(xy) => (xy[0].as_f64().unwrap(), xy[1].as_f64().unwrap()),
            other => panic!("click {selector}: {}", other.as_str().unwrap_or("?")),
        };
        self.loads = 0;
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .unwrap_or_else(|e| panic!("click {selector}: {e}"));
        }
    }

    /// Lay the page out `width_px` wide (and 900 px high), as a window
    /// that size shows it (`Emulation.setDeviceMetricsOverride`).
    #[track_caller]
    pub fn set_width(&mut self, width_px: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width_px, "height": WINDOW.1, "deviceScaleFactor": 1, "mobile": false}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        self.width = width_px;
    }

    /// Send these headers with every request of this tab (e.g.
    /// `Authorization`), `Network.setExtraHTTPHeaders`.
    #[track_caller]
    pub fn set_headers(&mut self, headers: &[(&str, &str)]) {
        let map: serde_json::Map<String, Value> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(*v)))
            .collect();
        self.call("Network.enable", json!({}))
            .and_then(|_| self.call("Network.setExtraHTTPHeaders", json!({"headers": map})))
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Script exceptions and console errors (`console.error`, resources
    /// that failed to load) since the tab opened, each as a line.
    #[track_caller]
    pub fn errors(&mut self) -> Vec<String> {
        // A round trip: whatever the page reported before it has come.
        let _: Value = self.eval("0");
        self.errors.clone()
    }

    /// The whole page as a PNG (`Page.captureScreenshot`, beyond the
    /// window), as wide as the page lays out (the tab's width, or more
    /// when it scrolls sideways), saved as
    /// `target/artefacts/screenshots/<name>.png`; its path.
    #[track_caller]
    pub fn screenshot(&mut self, name: &str) -> PathBuf {
        use base64::Engine as _;
        let size: (f64, f64) = self.eval(
            "[Math.max(document.documentElement.scrollWidth, innerWidth), \
              Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)]",
        );
        let shot = self
            .call_within(
                "Page.captureScreenshot",
                json!({
                    "format": "png",
                    "captureBeyondViewport": true,
                    "clip": {"x": 0, "y": 0, "width": size.0, "height": size.1, "scale": 1},
                }),
                2 * CALL_LIMIT,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap_or_default())
            .unwrap_or_else(|e| panic!("Page.captureScreenshot gave no PNG: {e}"));
        let dir = artefacts().join("screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }

    /// The width the tab lays pages out at.
    #[allow(dead_code)] // for the web view's tests
    pub fn width(&self) -> u32 {
        self.width
    }
}

impl Drop for Tab<'_> {
    fn drop(&mut self) {
        let _ = self
            .browser
            .call("Target.closeTarget", json!({"targetId": self.id}));
    }
}

/// Where tests leave what a person may want to look at after the run
/// (kept after the run): `$CARGO_TARGET_DIR/artefacts`, else `target/artefacts`
/// of the checkout.
pub fn artefacts() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("artefacts")
}

/// The width and height of a PNG file, from its header.
pub fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        path.display()
    );
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

/// The harness itself, on a page it makes: a script's value, a click
/// that navigates, headers, errors collected, a screenshot.
#[test]
fn a_tab_evaluates_clicks_and_sees_script_errors() {
    let dir = TempDir::new("browser-self");
    std::fs::write(
        dir.join("b.html"),
        "<!doctype html><title>b</title><p id=here>second page</p>",
    )
    .unwrap();
    std::fs::write(
        dir.join("a.html"),
        "<!doctype html><title>a</title><body style='margin:0'>\
         <a id=next href='b.html' style='display:block;margin-top:1500px'>next</a>\
         <button id=broken onclick='console.error(\"said so\"); nosuch()'>broken</button>",
    )
    .unwrap();
    let Some(browser) = Browser::start() else {
        return;
    };
    let mut tab = browser.tab();
    tab.set_width(800);
    tab.goto(&format!("file://{}", dir.join("a.html").display()));
    assert_eq!(tab.eval::<String>("document.title"), "a");
    assert_eq!(tab.eval::<u32>("innerWidth"), 800);
    assert_eq!(tab.errors(), Vec::<String>::new());
    // A script that throws is an error naming the script.
    let e = tab.try_eval::<Value>("nosuch.x").unwrap_err();
    assert!(e.to_string().contains("nosuch.x"), "{e}");
    // The button's handler throws and logs: both collected.
    tab.click("#broken");
    let errors = tab.errors();
    assert!(
        errors.iter().any(|e| e.contains("console.error: said so")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("nosuch is not defined")),
        "{errors:?}"
    );
    // The full page, beyond the window's 900 px.
    let shot = tab.screenshot("browser_self_test");
    let (w, h) = png_size(&shot);
    assert_eq!(w, 800);
    assert!(h > 1500, "{h} px high");
    // A link below the fold, clicked with the mouse: the next page.
    tab.click("#next");
    tab.wait_load();
    tab.wait_for("document.title === 'b'", Duration::from_secs(10));
    assert_eq!(
        tab.eval::<String>("document.getElementById('here').textContent"),
        "second page"
    );
    // A second tab beside it sends the headers it is given.
    let mut other = browser.tab();
    let server = EchoServer::start();
    other.set_headers(&[("Authorization", "Bearer t0ken")]);
    other.goto(&format!("http://127.0.0.1:{}/", server.port));
    assert_eq!(other.eval::<String>("document.title"), "Bearer t0ken");
    // A missing element fails the test, named.
    let missed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| other.click("#none")));
    assert!(missed.is_err());
}

/// An HTTP server on loopback that answers every request with a page
/// whose title is the request's `Authorization` header; stopped on drop.
struct EchoServer {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EchoServer {
    fn start() -> EchoServer {
        use std::io::{BufRead as _, Write as _};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut reader = std::io::BufReader::new(&stream);
                let mut auth = String::new();
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    if let Some((k, v)) = line.split_once(':')
                        && k.eq_ignore_ascii_case("authorization")
                    {
                        auth = v.trim().to_string();
                    }
                    line.clear();
                }
                let body = format!("<!doctype html><title>{auth}</title>");
                let _ = write!(
                    &stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        EchoServer {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
