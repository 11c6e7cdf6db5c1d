//! A small fault-injecting HTTP/1.1 reverse proxy in front of the real
//! LiteLLM proxy, for the faults the real proxy cannot produce on demand: a
//! response lost after the write happened, a 5xx, a request that outlives
//! the client's timeout, the proxy going away. Everything not faulted is
//! forwarded unchanged, so every behaviour still comes from the real proxy.
//!
//! It speaks just enough HTTP/1.1 for the LiteLLM client: one request per
//! connection (every answer says `connection: close`, so clients never reuse
//! a connection and a fault hits exactly the request it was armed for),
//! bodies by `content-length`. Plain tokio rather than a server framework,
//! because losing a response means closing a connection without answering,
//! which a request handler cannot express.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use reqwest::{Method, StatusCode};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What happens to a request that matches an armed fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Forward it, then close the connection without answering: the client
    /// sees an error although the upstream performed the write.
    DropResponse,
    /// Answer this status (a 5xx) without forwarding.
    Status(u16),
    /// Hold it for this long (longer than the client's timeout), then
    /// forward it and close without answering: the write lands after the
    /// client gave up, possibly after its retry.
    Stall(Duration),
    /// Answer 200 with a chunked body that never ends (until the client
    /// goes away), without forwarding.
    EndlessBody,
    /// Answer this status (a 4xx) with the request's own body as the error
    /// text, without forwarding: a proxy that echoes what it was sent,
    /// secrets included.
    EchoBody(u16),
    /// Answer this status (429 or 503) with `Retry-After: <seconds>`,
    /// without forwarding: an overloaded proxy asking the client to wait.
    Throttle(u16, u64),
}

/// A fault armed for the next `remaining` requests of one route.
struct Armed {
    route: String,
    fault: Fault,
    remaining: u32,
}

#[derive(Default)]
struct State {
    armed: Vec<Armed>,
    /// Requests that reached the upstream, by route (`"POST /team/new"`).
    forwarded: HashMap<String, u32>,
    /// Faults that fired, by route.
    injected: HashMap<String, u32>,
    /// Stalled requests not yet forwarded.
    stalled: u32,
    refusing: bool,
    /// While set, requests are read and held without an answer.
    silent: bool,
    /// Requests held without an answer right now, and the most there were
    /// since [`FaultProxy::mark`].
    held: u32,
    peak_held: u32,
    /// Requests being forwarded right now, and the most there ever were.
    in_flight: u32,
    peak_in_flight: u32,
    /// When each request of a route arrived, in order.
    arrivals: HashMap<String, Vec<std::time::Instant>>,
}

impl State {
    /// Takes one shot of the first fault armed for `route`.
    fn take_fault(&mut self, route: &str) -> Option<Fault> {
        let armed = self
            .armed
            .iter_mut()
            .find(|a| a.route == route && a.remaining > 0)?;
        armed.remaining -= 1;
        let fault = armed.fault;
        *self.injected.entry(route.to_owned()).or_default() += 1;
        if let Fault::Stall(_) = fault {
            self.stalled += 1;
        }
        Some(fault)
    }
}

/// The running proxy; it stops accepting when dropped.
pub struct FaultProxy {
    url: String,
    state: Arc<Mutex<State>>,
    task: JoinHandle<()>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `"METHOD /path"`: the query is left out so a route names the operation,
/// not the object (key lookups carry a token in the query).
fn route(method: &str, path: &str) -> String {
    format!("{method} {}", path.split('?').next().unwrap_or_default())
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("fault proxy binds a loopback port");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let forwarder = Arc::new(Forwarder {
            upstream: upstream.trim_end_matches('/').to_owned(),
            http: reqwest::Client::builder()
                // Loopback traffic must not take a proxy from the environment.
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(30))
                .build()
                .expect("forwarding client"),
            state: state.clone(),
        });
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                // Connections are served on their own tasks so a stalled one
                // never holds up the others; they end by themselves.
                tokio::spawn(forwarder.clone().serve(stream));
            }
        });
        Self { url, state, task }
    }

    /// The base URL to give the client instead of the real proxy's.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies `fault` to the next `times` requests of `method path`.
    pub fn arm(&self, method: &str, path: &str, fault: Fault, times: u32) {
        self.state().armed.push(Armed {
            route: route(method, path),
            fault,
            remaining: times,
        });
    }

    /// While `true`, every connection is closed as soon as it is accepted,
    /// before a byte is read or forwarded: the proxy is gone for the client.
    pub fn refuse(&self, refusing: bool) {
        self.state().refusing = refusing;
    }

    /// While `true`, every request is read and then held without an
    /// answer until the client gives up and closes the connection: a proxy
    /// that accepts connections and stops answering (a hung process, a
    /// black-holed network path). Requests held when it is lifted stay
    /// unanswered; later ones are forwarded again.
    pub fn silence(&self, silent: bool) {
        self.state().silent = silent;
    }

    /// Requests held without an answer right now.
    pub fn held(&self) -> u32 {
        self.state().held
    }

    /// The most requests held without an answer at the same time since the
    /// last [`FaultProxy::mark`] (or the start).
    pub fn peak_held(&self) -> u32 {
        self.state().peak_held
    }

    /// Starts counting [`FaultProxy::peak_held`] again from what is held
    /// now.
    pub fn mark(&self) {
        let mut state = self.state();
        state.peak_held = state.held;
    }

    /// How many requests of `method path` reached the upstream.
    pub fn forwarded(&self, method: &str, path: &str) -> u32 {
        let route = route(method, path);
        self.state().forwarded.get(&route).copied().unwrap_or(0)
    }

    /// Every route that reached the upstream, with how many requests did.
    pub fn routes(&self) -> BTreeMap<String, u32> {
        let state = self.state();
        state
            .forwarded
            .iter()
            .map(|(r, n)| (r.clone(), *n))
            .collect()
    }

    /// How many requests of `method path` met an armed fault.
    pub fn injected(&self, method: &str, path: &str) -> u32 {
        let route = route(method, path);
        self.state().injected.get(&route).copied().unwrap_or(0)
    }

    /// The most requests this proxy was forwarding at the same time.
    pub fn peak_in_flight(&self) -> u32 {
        self.state().peak_in_flight
    }

    /// How many requests arrived so far, of every route.
    pub fn arrived(&self) -> usize {
        self.state().arrivals.values().map(Vec::len).sum()
    }

    /// When each request of `method path` arrived, in order.
    pub fn arrivals(&self, method: &str, path: &str) -> Vec<std::time::Instant> {
        let route = route(method, path);
        self.state()
            .arrivals
            .get(&route)
            .cloned()
            .unwrap_or_default()
    }

    /// Waits until every stalled request has been forwarded, so assertions
    /// see the effect of the late writes too.
    pub async fn settled(&self) {
        while self.state().stalled > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// One request as read from the client.
struct Request {
    method: String,
    /// Path and query, as sent.
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Headers that describe one hop, not the message; never passed on.
fn hop_by_hop(name: &str) -> bool {
    [
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "host",
        "content-length",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h))
}

/// Reads one request; `Err` names what this proxy cannot parse, `Ok(None)`
/// is a client that closed without sending anything.
async fn read_request(
    reader: &mut BufReader<TcpStream>,
) -> std::io::Result<Result<Option<Request>, &'static str>> {
    let mut line = String::new();
    if reader.read_line(&mut line).await? == 0 {
        return Ok(Ok(None));
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Ok(Err("malformed request line"));
    };
    let (method, target) = (method.to_owned(), target.to_owned());
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        line.clear();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(Err("connection closed inside the headers"));
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Ok(Err("malformed header"));
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("transfer-encoding") {
            return Ok(Err("chunked request bodies are not supported"));
        }
        if name.eq_ignore_ascii_case("content-length") {
            let Ok(parsed) = value.parse() else {
                return Ok(Err("malformed content-length"));
            };
            length = parsed;
        }
        headers.push((name.to_owned(), value.to_owned()));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await?;
    Ok(Ok(Some(Request {
        method,
        target,
        headers,
        body,
    })))
}

async fn respond(
    stream: &mut TcpStream,
    status: StatusCode,
    headers: &[(String, String)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("Unknown")
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.shutdown().await
}

/// Writes a 200 answer whose chunked JSON-looking body never ends; returns
/// when the client stops reading and closes the connection.
async fn endless_body(stream: &mut TcpStream) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    stream.write_all(head.as_bytes()).await?;
    let opening = br#"{"padding":""#;
    stream
        .write_all(format!("{:x}\r\n", opening.len()).as_bytes())
        .await?;
    stream.write_all(opening).await?;
    stream.write_all(b"\r\n").await?;
    let filler = vec![b'x'; 64 * 1024];
    let size = format!("{:x}\r\n", filler.len());
    loop {
        stream.write_all(size.as_bytes()).await?;
        stream.write_all(&filler).await?;
        stream.write_all(b"\r\n").await?;
    }
}

struct Forwarder {
    upstream: String,
    http: reqwest::Client,
    state: Arc<Mutex<State>>,
}

/// The upstream's answer, or why there is none.
type Upstream = Result<(StatusCode, Vec<(String, String)>, Vec<u8>), String>;

impl Forwarder {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn serve(self: Arc<Self>, stream: TcpStream) {
        if self.state().refusing {
            return;
        }
        let mut reader = BufReader::new(stream);
        let request = match read_request(&mut reader).await {
            Ok(Ok(Some(request))) => request,
            Ok(Ok(None)) | Err(_) => return,
            Ok(Err(problem)) => {
                let _ = respond(
                    reader.get_mut(),
                    StatusCode::NOT_IMPLEMENTED,
                    &[],
                    problem.as_bytes(),
                )
                .await;
                return;
            }
        };
        let mut stream = reader.into_inner();
        let route = route(&request.method, &request.target);
        let (silenced, fault) = {
            let mut state = self.state();
            state
                .arrivals
                .entry(route.clone())
                .or_default()
                .push(std::time::Instant::now());
            if state.silent {
                state.held += 1;
                state.peak_held = state.peak_held.max(state.held);
                (true, None)
            } else {
                (false, state.take_fault(&route))
            }
        };
        if silenced {
            // Nothing is answered; the request ends when the client closes
            // the connection (a read of 0 bytes, or an error).
            let mut rest = [0u8; 512];
            while matches!(stream.read(&mut rest).await, Ok(n) if n > 0) {}
            self.state().held -= 1;
            return;
        }
        let reply = match fault {
            None => self.forward(&route, request).await,
            Some(Fault::Status(code)) => {
                let status = StatusCode::from_u16(code).expect("a valid status code");
                let body = format!(r#"{{"error":{{"message":"injected fault: HTTP {code}"}}}}"#);
                let json = [("content-type".to_owned(), "application/json".to_owned())];
                let _ = respond(&mut stream, status, &json, body.as_bytes()).await;
                return;
            }
            // The upstream's answer is discarded: the client gets none.
            Some(Fault::DropResponse) => {
                let _ = self.forward(&route, request).await;
                return;
            }
            Some(Fault::EndlessBody) => {
                let _ = endless_body(&mut stream).await;
                return;
            }
            Some(Fault::EchoBody(code)) => {
                let status = StatusCode::from_u16(code).expect("a valid status code");
                let echoed = String::from_utf8_lossy(&request.body).into_owned();
                let body = serde_json::json!({"detail": format!("cannot handle {echoed}")});
                let json = [("content-type".to_owned(), "application/json".to_owned())];
                let _ = respond(&mut stream, status, &json, body.to_string().as_bytes()).await;
                return;
            }
            Some(Fault::Throttle(code, seconds)) => {
                let status = StatusCode::from_u16(code).expect("a valid status code");
                let body =
                    format!(r#"{{"error":{{"message":"injected: HTTP {code}, slow down"}}}}"#);
                let headers = [
                    ("content-type".to_owned(), "application/json".to_owned()),
                    ("retry-after".to_owned(), seconds.to_string()),
                ];
                let _ = respond(&mut stream, status, &headers, body.as_bytes()).await;
                return;
            }
            Some(Fault::Stall(delay)) => {
                tokio::time::sleep(delay).await;
                let _ = self.forward(&route, request).await;
                self.state().stalled -= 1;
                return;
            }
        };
        let _ = match reply {
            Ok((status, headers, body)) => respond(&mut stream, status, &headers, &body).await,
            Err(problem) => {
                respond(
                    &mut stream,
                    StatusCode::BAD_GATEWAY,
                    &[],
                    problem.as_bytes(),
                )
                .await
            }
        };
    }

    /// Sends `request` to the upstream and reads the whole answer.
    async fn forward(&self, route: &str, request: Request) -> Upstream {
        let method = Method::from_bytes(request.method.as_bytes()).map_err(|e| e.to_string())?;
        let mut outgoing = self
            .http
            .request(method, format!("{}{}", self.upstream, request.target))
            .body(request.body);
        for (name, value) in request.headers.iter().filter(|(n, _)| !hop_by_hop(n)) {
            outgoing = outgoing.header(name, value);
        }
        {
            let mut state = self.state();
            state.in_flight += 1;
            state.peak_in_flight = state.peak_in_flight.max(state.in_flight);
        }
        let response = outgoing.send().await;
        self.state().in_flight -= 1;
        let response = response.map_err(|e| e.to_string())?;
        *self.state().forwarded.entry(route.to_owned()).or_default() += 1;
        let status = response.status();
        let headers = response
            .headers()
            .iter()
            .filter(|(name, _)| !hop_by_hop(name.as_str()))
            .filter_map(|(name, value)| Some((name.to_string(), value.to_str().ok()?.to_owned())))
            .collect();
        let body = response.bytes().await.map_err(|e| e.to_string())?;
        Ok((status, headers, body.to_vec()))
    }
}
