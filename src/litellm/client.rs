//! The HTTP client and the one path every request takes.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderValue, AUTHORIZATION, RETRY_AFTER};
use reqwest::{Certificate, Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use url::Url;

use super::pacing::Pacing;
use super::{Error, Secret};

/// The most of a response body the client reads: 1 MiB. The admin API's
/// answers are a few kilobytes (a model with LiteLLM's cost map for it, the
/// largest, was 8 KiB on 1.108.7); they grow past that only with what was
/// written into an object (a team's metadata, its keys), so a longer one
/// comes from such an object or from a proxy (or something in between)
/// that misbehaves, and reading it whole would let one proxy take the
/// provider's memory. The body is read as it arrives and reading stops at
/// the limit ([`Error::ResponseTooLarge`]).
pub const MAX_RESPONSE_BODY: usize = 1024 * 1024;

/// Called after every request with the operation (`"POST /team/new"`), the
/// HTTP status (0 when no response arrived) and the elapsed time, so the
/// provider can export latency metrics without this layer knowing about them.
pub type Observer = Arc<dyn Fn(&'static str, u16, Duration) + Send + Sync>;

/// How to reach one LiteLLM proxy.
pub struct ClientConfig {
    /// Base URL of the admin API, e.g. `http://litellm.ns.svc:4000`.
    pub endpoint: String,
    pub master_key: Secret,
    /// Extra trusted root certificate(s), PEM, for a proxy behind a private CA.
    pub ca_pem: Option<Vec<u8>>,
    /// Applies to connecting and, separately, to each whole request.
    pub timeout: Duration,
}

impl fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConfig")
            .field("endpoint", &self.endpoint)
            .field("master_key", &self.master_key)
            .field("ca_pem", &self.ca_pem.as_ref().map(|pem| pem.len()))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// LiteLLM admin API client. Cloning is cheap: one reference count (the
/// connection pool, endpoint and credentials are shared).
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
    /// Its requests give way to others ([`Client::background`]).
    background: bool,
}

#[derive(Clone)]
struct Shared {
    http: reqwest::Client,
    base: Url,
    /// `Bearer <master key>`, marked sensitive so HTTP internals never log it;
    /// `None` for a client of the public routes only ([`Client::public`]).
    auth: Option<HeaderValue>,
    observer: Option<Observer>,
    /// Shared by every client of one proxy ([`Client::with_pacing`]).
    pacing: Option<Arc<Pacing>>,
    /// Entries of list pages kept for the next read of their object, and
    /// this client's writes they are checked against
    /// ([`Client::prefetch`]).
    prefetched: Arc<super::pages::Prefetched>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.shared.base.as_str())
            .field(
                "master_key",
                &self.shared.auth.as_ref().map(|_| "<redacted>"),
            )
            .field("observer", &self.shared.observer.is_some())
            .finish()
    }
}

/// One admin API route. `name` ("POST /team/new") identifies the operation in
/// errors, traces and the observer; it never contains ids or secrets.
pub(super) struct Endpoint {
    pub(super) method: Method,
    pub(super) path: &'static str,
    pub(super) name: &'static str,
    /// Health probes are public; not sending the master key there means it
    /// never travels to an endpoint that does not need it.
    pub(super) authenticated: bool,
}

/// Declares an [`Endpoint`]: `endpoint!(POST "/team/new")`, or with `public`
/// for a route that takes no credentials.
macro_rules! endpoint {
    ($method:ident $path:literal) => {
        $crate::litellm::client::Endpoint {
            method: reqwest::Method::$method,
            path: $path,
            name: concat!(stringify!($method), " ", $path),
            authenticated: true,
        }
    };
    ($method:ident $path:literal public) => {
        $crate::litellm::client::Endpoint {
            authenticated: false,
            ..endpoint!($method $path)
        }
    };
}
pub(super) use endpoint;

/// One read of an object, kept to be made again: a GET of one route with
/// one query parameter (`/team/info?team_id=…`), the shape of every
/// `*_info` read a poll makes.
#[derive(Clone)]
pub struct Read {
    endpoint: &'static Endpoint,
    param: &'static str,
    value: Box<str>,
}

impl fmt::Debug for Read {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The value is an id (a team id, a key's hashed token), never a
        // secret; shown by its length all the same, as ids go to logs only
        // where the caller chooses.
        f.debug_struct("Read")
            .field("op", &self.endpoint.name)
            .field("param", &self.param)
            .field("value_len", &self.value.len())
            .finish()
    }
}

impl Read {
    pub(super) fn new(endpoint: &'static Endpoint, param: &'static str, value: &str) -> Self {
        Self {
            endpoint,
            param,
            value: value.into(),
        }
    }
}

/// What an answer was, in 64 bits: a keyed hash of its status and body
/// (SipHash with this process's random keys, so no one can choose two
/// answers that look alike to it). Two equal fingerprints of the same
/// [`Read`] mean the proxy answered byte for byte the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint(u64);

impl Fingerprint {
    fn of(status: StatusCode, body: &[u8]) -> Self {
        Self(keyed_hash((status.as_u16(), body)))
    }

    /// The fingerprint of what an answer parsed to: its canonical JSON
    /// (objects' keys sorted), so that two routes that report the same
    /// object in different bytes (an info route and a list route) have the
    /// same one where they parse to the same value. `None` where it does
    /// not serialize (not for the types listed here).
    pub(super) fn of_parsed<T: Serialize>(parsed: &T) -> Option<Self> {
        let bytes = serde_json::to_vec(parsed).ok()?;
        Some(Self(keyed_hash(("parsed", bytes.as_slice()))))
    }

    /// The fingerprint of no answer ([`Probe::unread`]): of its own domain,
    /// so no answer's fingerprint equals it but by a collision of the keyed
    /// hash.
    fn unread() -> Self {
        Self(keyed_hash("unread"))
    }

    /// The fingerprint of a list entry's text as the route sent it: equal
    /// where the proxy listed the object byte for byte the same, which
    /// makes it parse to the same too.
    pub(super) fn of_entry(text: &str) -> Self {
        Self(keyed_hash(("entry", text.as_bytes())))
    }
}

/// SipHash with this process's random keys.
fn keyed_hash(value: impl std::hash::Hash) -> u64 {
    use std::hash::BuildHasher;
    static KEYS: std::sync::OnceLock<std::hash::RandomState> = std::sync::OnceLock::new();
    KEYS.get_or_init(std::hash::RandomState::new)
        .hash_one(value)
}

/// A list route that answers for many objects of a kind in pages
/// ([`Client::listed_page`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum List {
    /// `/key/list`, by hashed token.
    Keys,
    /// `/v2/team/list`, by team id.
    Teams,
}

/// Where a [`Probe`]'s object is listed: its list route, and the
/// fingerprint of what its read parsed to ([`Fingerprint::of_parsed`]),
/// which is the fingerprint of its list entry while the object is as the
/// read found it. The object's id in the list is the read's value.
#[derive(Clone, Copy, Debug)]
pub struct Listed {
    pub list: List,
    pub fingerprint: Fingerprint,
    /// The fingerprint of the text of the list entry last found to parse
    /// to `fingerprint` ([`Probe::found_listed_as`]), once one was: an
    /// entry of the same text is the same without being parsed.
    pub entry: Option<Fingerprint>,
}

/// What a read made again found ([`Client::reread`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reread {
    /// The object is as the probe's read found it.
    Same,
    /// Another answer (a missing object included). `kept`: it stands for
    /// the object's next read through this proxy's clients (see
    /// `pages::Prefetched`), so the reconciliation that observes it next
    /// reads nothing.
    Changed { kept: bool },
}

/// A read and the fingerprint of its answer: whether the object is still
/// as it was then takes the read again and no parsing ([`Client::probe`]).
#[derive(Clone, Debug)]
pub struct Probe {
    pub read: Read,
    pub fingerprint: Fingerprint,
    /// Where the object is listed too, if it is.
    pub listed: Option<Listed>,
}

impl Probe {
    /// The probe of a kept answer (a page's entry, or a poll's read:
    /// `pages::Prefetched`) that stands for `read`: compared by what it
    /// parsed to, `listed`.
    pub(super) fn of_kept(read: Read, listed: Listed) -> Self {
        Probe {
            read,
            fingerprint: listed.fingerprint,
            listed: Some(listed),
        }
    }

    /// The probe of `read`, of an object listed on `list`, before the read
    /// is made: it stands for no answer. A memo of it is spent, so only a
    /// page's entry of the object (which then stands for the read) or the
    /// read itself answers it: what a restarted provider leaves to a sweep
    /// of pages instead of reading each object on its own.
    pub(super) fn unread(read: Read, list: List) -> Self {
        let fingerprint = Fingerprint::unread();
        Probe {
            read,
            fingerprint,
            listed: Some(Listed {
                list,
                fingerprint,
                entry: None,
            }),
        }
    }

    /// Whether this is the probe of a read not made yet ([`Probe::unread`]).
    pub fn is_unread(&self) -> bool {
        self.fingerprint == Fingerprint::unread()
    }

    /// The object's id, as its read and its list route know it.
    pub fn id(&self) -> &str {
        &self.read.value
    }

    /// The text of the list entry that stands for this probe's answer, as
    /// far as it is known ([`Listed::entry`]).
    pub fn listed_entry(&self) -> Option<Fingerprint> {
        self.listed.and_then(|listed| listed.entry)
    }

    /// A list entry of text `entry` was found to parse to this probe's
    /// answer: the next one of that text need not be parsed.
    pub fn found_listed_as(&mut self, entry: Fingerprint) {
        if let Some(listed) = &mut self.listed {
            listed.entry = Some(entry);
        }
    }
}

/// A complete response, whatever its status.
pub(super) struct Reply {
    pub(super) op: &'static str,
    pub(super) status: StatusCode,
    body: Vec<u8>,
    /// `Retry-After` of a 429 or 503.
    retry_after: Option<Duration>,
}

impl Reply {
    /// The body of a success response; any other status is an error.
    pub(super) fn json<T: DeserializeOwned>(&self) -> Result<T, Error> {
        if self.status.is_success() {
            self.decode()
        } else {
            Err(self.error())
        }
    }

    /// Like [`Reply::json`], with 404 meaning "no such object".
    pub(super) fn json_or_none<T: DeserializeOwned>(&self) -> Result<Option<T>, Error> {
        if self.status == StatusCode::NOT_FOUND {
            Ok(None)
        } else {
            self.json().map(Some)
        }
    }

    /// For deletes: success means deleted, 404 means already gone.
    pub(super) fn found(&self) -> Result<bool, Error> {
        match self.status {
            s if s.is_success() => Ok(true),
            StatusCode::NOT_FOUND => Ok(false),
            _ => Err(self.error()),
        }
    }

    /// The body of a success response as text; any other status is an
    /// error.
    pub(super) fn text(&self) -> Result<&str, Error> {
        if !self.status.is_success() {
            return Err(self.error());
        }
        std::str::from_utf8(&self.body).map_err(|_| Error::Decode {
            op: self.op,
            detail: "the body is not UTF-8".into(),
        })
    }

    /// The body, whatever the status (health probes answer 503 with JSON).
    pub(super) fn decode<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_slice(&self.body).map_err(|err| Error::decode(self.op, &err))
    }

    /// The [`Probe`] of this answer to `read`.
    pub(super) fn probe(&self, read: Read) -> Probe {
        Probe {
            read,
            fingerprint: Fingerprint::of(self.status, &self.body),
            listed: None,
        }
    }

    /// A short, key-free excerpt of the body.
    pub(super) fn detail(&self) -> String {
        super::error::body_detail(&self.body)
    }

    pub(super) fn error(&self) -> Error {
        self.throttled()
            .unwrap_or_else(|| Error::from_status(self.op, self.status, &self.body))
    }

    /// A 429 or 503 with `Retry-After`: the proxy asks for a pause. Checked
    /// on every answer, so nothing is built for any other.
    fn throttled(&self) -> Option<Error> {
        let retry_after = self.retry_after?;
        if !matches!(self.status.as_u16(), 429 | 503) {
            return None;
        }
        match Error::from_status(self.op, self.status, &self.body) {
            Error::Retryable { op, detail } => Some(Error::Throttled {
                op,
                detail,
                asked: retry_after,
                retry_after,
            }),
            _ => None,
        }
    }

    /// For the operations whose "already exists" status is ambiguous, once the
    /// caller has confirmed the object exists.
    pub(super) fn conflict(&self) -> Error {
        Error::Conflict {
            op: self.op,
            detail: self.detail(),
        }
    }
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Self, Error> {
        let mut auth = HeaderValue::try_from(format!("Bearer {}", config.master_key.expose()))
            .map_err(|_| {
                Error::Config("the master key contains characters not allowed in a header".into())
            })?;
        auth.set_sensitive(true);
        Self::build(
            &config.endpoint,
            Some(auth),
            config.ca_pem.as_deref(),
            config.timeout,
        )
    }

    /// A client without credentials, for the public health probes of a proxy
    /// whose master key is not at hand (or not needed). Admin operations fail
    /// at once with [`Error::Config`], before any request is sent.
    pub fn public(endpoint: &str, ca_pem: Option<&[u8]>, timeout: Duration) -> Result<Self, Error> {
        Self::build(endpoint, None, ca_pem, timeout)
    }

    fn build(
        endpoint: &str,
        auth: Option<HeaderValue>,
        ca_pem: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Self, Error> {
        let endpoint = endpoint.trim_end_matches('/');
        let base = Url::parse(endpoint)
            .map_err(|err| Error::Config(format!("endpoint {endpoint:?}: {err}")))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(Error::Config(format!(
                "endpoint {endpoint:?} is not an http(s) URL"
            )));
        }
        let mut builder = reqwest::Client::builder()
            .connect_timeout(timeout)
            .timeout(timeout)
            // A redirect could carry the master key to another host; the admin
            // API never redirects, so one is reported instead of followed.
            .redirect(reqwest::redirect::Policy::none());
        if let Some(pem) = ca_pem {
            let certs = Certificate::from_pem_bundle(pem)
                .map_err(|err| Error::Config(format!("CA bundle: {err}")))?;
            if certs.is_empty() {
                return Err(Error::Config("CA bundle holds no certificate".into()));
            }
            builder = builder.tls_certs_merge(certs);
        }
        let http = builder
            .build()
            .map_err(|err| Error::Config(format!("HTTP client: {err}")))?;
        Ok(Self {
            shared: Arc::new(Shared {
                http,
                base,
                auth,
                observer: None,
                pacing: None,
                prefetched: Arc::default(),
            }),
            background: false,
        })
    }

    /// Reports every request to `observer` (see [`Observer`]).
    pub fn with_observer(mut self, observer: Observer) -> Self {
        Arc::make_mut(&mut self.shared).observer = Some(observer);
        self
    }

    /// The same client, its requests giving way to those of other clients
    /// of the proxy (see [`Pacing::acquire`]): for polls of objects that are
    /// up to date, so that a burst of new objects is not slowed down by
    /// them.
    pub fn background(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            background: true,
        }
    }

    /// The entries of list pages kept for reads ([`Client::prefetch`]).
    pub(super) fn prefetched(&self) -> &super::pages::Prefetched {
        &self.shared.prefetched
    }

    /// Whether `other` is a client of the same proxy, made by the same
    /// [`Client::new`] (a [`Client::background`] one included).
    pub fn same_proxy(&self, other: &Client) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Whether the proxy is busy with requests that are not background ones
    /// (see [`Pacing::busy`]): waiting, or one started within `within`.
    pub fn busy(&self, within: Duration) -> bool {
        self.shared.pacing.as_ref().is_some_and(|p| p.busy(within))
    }

    /// Shares `pacing` with every other client of the same proxy: a burst
    /// of work queues here instead of pushing the proxy past its timeouts,
    /// and a `Retry-After` holds every request to it until it has passed.
    pub fn with_pacing(mut self, pacing: Arc<Pacing>) -> Self {
        Arc::make_mut(&mut self.shared).pacing = Some(pacing);
        self
    }

    /// The admin API base URL, without a trailing `/`.
    pub fn endpoint(&self) -> &str {
        self.shared.base.as_str().trim_end_matches('/')
    }

    pub(super) async fn get(
        &self,
        endpoint: &Endpoint,
        query: &[(&str, &str)],
    ) -> Result<Reply, Error> {
        let url = self.url(endpoint.path.split('/'), query);
        self.send::<()>(endpoint, url, None).await
    }

    /// The answer to `read`, whatever its status.
    pub(super) async fn read(&self, read: &Read) -> Result<Reply, Error> {
        self.get(read.endpoint, &[(read.param, &read.value)]).await
    }

    /// Makes `read` again and fingerprints the answer without parsing it:
    /// equal to the fingerprint of an earlier answer ([`Probe`]) where the
    /// object has not changed since. A found object and a missing one (404)
    /// are answers; any other status is the error it stands for, as every
    /// other read reports it.
    pub async fn probe(&self, read: &Read) -> Result<Fingerprint, Error> {
        let reply = self.read(read).await?;
        if reply.status.is_success() || reply.status == StatusCode::NOT_FOUND {
            Ok(Fingerprint::of(reply.status, &reply.body))
        } else {
            Err(reply.error())
        }
    }

    /// Makes the read of `probe` again: whether the object is as it was
    /// then, the same answer byte for byte ([`Client::probe`]), or, for a
    /// listed object, the same as its read and its list entry parse to
    /// ([`Listed`]), whichever route read it last. Any other answer, a
    /// missing object included, is [`Reread::Changed`]; a listed object's
    /// new answer is kept for its next read, as a page's entry is
    /// (`pages::Prefetched`).
    pub async fn reread(&self, probe: &Probe) -> Result<Reread, Error> {
        match probe.listed {
            Some(Listed {
                list, fingerprint, ..
            }) => {
                let asked = self.prefetched().asked();
                let found = match list {
                    List::Keys => self.key_listed(probe).await?.map(super::pages::Kept::Key),
                    List::Teams => self.team_listed(probe).await?.map(super::pages::Kept::Team),
                };
                let Some(object) = found else {
                    return Ok(Reread::Changed { kept: false });
                };
                Ok(match object.fingerprint() {
                    Some(now) if now == fingerprint => Reread::Same,
                    Some(now) => {
                        let listed = Listed {
                            list,
                            fingerprint: now,
                            entry: None,
                        };
                        Reread::Changed {
                            kept: self.prefetched().keep(
                                probe.id().to_owned(),
                                object,
                                listed,
                                asked,
                            ),
                        }
                    }
                    None => Reread::Changed { kept: false },
                })
            }
            None => Ok(if self.probe(&probe.read).await? == probe.fingerprint {
                Reread::Same
            } else {
                Reread::Changed { kept: false }
            }),
        }
    }

    pub(super) async fn post<B: Serialize + ?Sized>(
        &self,
        endpoint: &Endpoint,
        body: &B,
    ) -> Result<Reply, Error> {
        let url = self.url(endpoint.path.split('/'), &[]);
        self.send(endpoint, url, Some(body)).await
    }

    /// `segments` are percent-encoded here, so ids may hold any character.
    pub(super) fn url<'a>(
        &self,
        segments: impl IntoIterator<Item = &'a str>,
        query: &[(&str, &str)],
    ) -> Url {
        let mut url = self.shared.base.clone();
        url.path_segments_mut()
            .expect("checked in Client::new: the base URL can have a path")
            .pop_if_empty()
            .extend(segments.into_iter().filter(|s| !s.is_empty()));
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    /// The single request path: send, read the body (at most
    /// [`MAX_RESPONSE_BODY`]), trace, observe. Only transport failures and
    /// over-long bodies are errors here; statuses are for the caller.
    pub(super) async fn send<B: Serialize + ?Sized>(
        &self,
        endpoint: &Endpoint,
        url: Url,
        body: Option<&B>,
    ) -> Result<Reply, Error> {
        let mut request = self.shared.http.request(endpoint.method.clone(), url);
        if endpoint.authenticated {
            let auth = self.shared.auth.clone().ok_or_else(|| {
                Error::Config(format!(
                    "{} needs the master key, and this client was built without one",
                    endpoint.name
                ))
            })?;
            request = request.header(AUTHORIZATION, auth);
        }
        if let Some(body) = body {
            request = request.json(body);
        }

        if let Some(error) = self
            .shared
            .pacing
            .as_ref()
            .and_then(|p| p.paused(endpoint.name))
        {
            return Err(error);
        }
        // Held until the body is read.
        let permit = match &self.shared.pacing {
            Some(pacing) => Some(pacing.acquire(self.background, endpoint.name).await?),
            None => None,
        };
        // Entries of pages asked before this write ends answer no read.
        let _writing = (endpoint.method != Method::GET).then(|| self.shared.prefetched.writing());
        let started = Instant::now();
        let (status, outcome) = match request.send().await {
            Ok(response) => {
                let status = response.status();
                let retry_after = response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(parse_retry_after);
                let body = read_body(endpoint.name, response, MAX_RESPONSE_BODY)
                    .await
                    .map(|body| Reply {
                        op: endpoint.name,
                        status,
                        body,
                        retry_after,
                    });
                (status.as_u16(), body)
            }
            Err(err) => (0, Err(Error::transport(endpoint.name, err))),
        };
        let elapsed = started.elapsed();

        tracing::debug!(
            method = %endpoint.method,
            path = endpoint.path,
            status,
            elapsed_ms = elapsed.as_millis() as u64,
            "litellm admin request"
        );
        if let Some(observer) = &self.shared.observer {
            observer(endpoint.name, status, elapsed);
        }
        if let Some(pacing) = &self.shared.pacing {
            match &outcome {
                // No answer, or not all of it: a timeout, a failed
                // connection (transport errors are the retryable ones here;
                // statuses are the caller's).
                Err(Error::Retryable { .. }) => pacing.unanswered(),
                // An answer too large to read: the proxy (or something
                // between) has more than the client takes.
                Err(_) => pacing.answered(elapsed, true),
                Ok(reply) => {
                    let congested = match reply.throttled() {
                        Some(Error::Throttled { asked, detail, .. }) => {
                            pacing.throttled(asked, &detail);
                            true
                        }
                        _ => false,
                    };
                    pacing.answered(elapsed, congested);
                }
            }
        }
        drop(permit);
        outcome
    }
}

/// The longest `Retry-After` honoured; a longer one is cut to it.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

/// `Retry-After` in seconds (the form LiteLLM and most proxies send) or as
/// an HTTP date, at most [`MAX_RETRY_AFTER`]; `None` for anything else.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    let delay = if let Ok(seconds) = value.parse::<u64>() {
        Duration::from_secs(seconds)
    } else {
        let at = httpdate_to_unix(value)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs();
        Duration::from_secs(at.saturating_sub(now))
    };
    Some(delay.min(MAX_RETRY_AFTER))
}

/// Seconds since the epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37
/// GMT`), the HTTP date form servers must send.
fn httpdate_to_unix(text: &str) -> Option<u64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as i64
        + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let clock: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [hour, minute, second] = clock.as_slice() else {
        return None;
    };
    // Days from civil (Howard Hinnant's algorithm).
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hour * 3600 + minute * 60 + second).ok()
}

/// Reads the body of `response` as it arrives, keeping at most `limit`
/// bytes: an announced length over the limit is refused before a byte is
/// read, and a body that grows past it (chunked, or without a length) is
/// dropped at the chunk that crosses the limit, which also closes the
/// connection instead of reading the rest.
async fn read_body(
    op: &'static str,
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, Error> {
    let too_large = || Error::ResponseTooLarge { op, limit };
    let announced = response.content_length();
    if announced.is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::with_capacity(announced.map_or(0, |length| length as usize));
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|err| Error::transport(op, err))?
    {
        if chunk.len() > limit - body.len() {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(endpoint: &str) -> ClientConfig {
        ClientConfig {
            endpoint: endpoint.into(),
            master_key: Secret::new("sk-master-very-secret"),
            ca_pem: None,
            timeout: Duration::from_secs(5),
        }
    }

    #[test]
    fn debug_never_shows_the_master_key() {
        let config = config("http://127.0.0.1:4000/");
        assert!(!format!("{config:?}").contains("very-secret"));
        let client = Client::new(config).unwrap();
        let debug = format!("{client:?}");
        assert!(!debug.contains("very-secret"), "{debug}");
        assert!(debug.contains("127.0.0.1:4000"), "{debug}");
    }

    #[test]
    fn trims_the_endpoint_and_encodes_path_and_query() {
        let client = Client::new(config("http://proxy:4000/admin//")).unwrap();
        assert_eq!(client.endpoint(), "http://proxy:4000/admin");
        let url = client.url(["model", "a b/c", "update"], &[("key_alias", "x&y=z")]);
        assert_eq!(
            url.as_str(),
            "http://proxy:4000/admin/model/a%20b%2Fc/update?key_alias=x%26y%3Dz"
        );
        let root = Client::new(config("http://proxy:4000")).unwrap();
        assert_eq!(
            root.url("/team/new".split('/'), &[]).as_str(),
            "http://proxy:4000/team/new"
        );
    }

    #[test]
    fn rejects_bad_configuration_without_quoting_the_key() {
        for endpoint in ["not a url", "ftp://proxy", "mailto:x@y"] {
            assert!(matches!(
                Client::new(config(endpoint)),
                Err(Error::Config(_))
            ));
        }
        let mut bad_key = config("http://proxy");
        bad_key.master_key = Secret::new("sk-line\nbreak");
        let err = Client::new(bad_key).unwrap_err().to_string();
        assert!(!err.contains("sk-line"), "{err}");
        let mut bad_ca = config("https://proxy");
        bad_ca.ca_pem = Some(b"not a certificate".to_vec());
        assert!(matches!(Client::new(bad_ca), Err(Error::Config(_))));
    }

    #[tokio::test]
    async fn a_public_client_refuses_admin_calls_without_sending_them() {
        let calls = Arc::new(std::sync::Mutex::new(0));
        let counted = Arc::clone(&calls);
        // Port 9 is closed: a request that went out would be Retryable.
        let public = Client::public("http://127.0.0.1:9", None, Duration::from_secs(5))
            .unwrap()
            .with_observer(Arc::new(move |_, _, _| *counted.lock().unwrap() += 1));
        let err = public.team_info("t").await.unwrap_err();
        assert!(
            matches!(&err, Error::Config(text) if text.contains("GET /team/info")),
            "{err}"
        );
        assert_eq!(*calls.lock().unwrap(), 0);
        assert!(public.liveliness().await.unwrap_err().is_retryable());
        assert_eq!(*calls.lock().unwrap(), 1);
    }

    #[test]
    fn endpoint_names_combine_method_and_path() {
        let private = endpoint!(POST "/team/new");
        assert_eq!(private.name, "POST /team/new");
        assert!(private.authenticated);
        let public = endpoint!(GET "/health/liveliness" public);
        assert_eq!(public.name, "GET /health/liveliness");
        assert!(!public.authenticated);
    }
}
