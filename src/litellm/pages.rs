//! Keys and teams read by pages from LiteLLM's list routes, sorted by their
//! ids: the reads that observing many objects with few requests is built
//! on (`docs/litellm-api.md`, "List routes, for observing by pages").
//!
//! Measured on LiteLLM 1.108.7 (`tests/integration/litellm_pages.rs`):
//! - `GET /key/list?return_full_object=true&sort_by=token&sort_order=asc`
//!   pages by `page` and `size` (at most [`MAX_PAGE_SIZE`]; more is 422)
//!   and answers `total_count`. An entry is the key's row with its hashed
//!   `token`, its budget row and object permission: every field
//!   [`KeyInfo`] reads. Its timestamps end in `Z` where `/key/info`'s end in
//!   `+00:00`, so they are rewritten here to `/key/info`'s form. Deleted keys
//!   are not listed (`/key/info` answers them with `status: deleted`, which
//!   [`Client::key_info`] reads as no key).
//! - `GET /v2/team/list?sort_by=team_id&sort_order=asc` pages by `page` and
//!   `page_size` (at most [`MAX_PAGE_SIZE`]) and answers `total`. An entry
//!   is the team's row without what `/team/info` adds: the object
//!   permission (only its id), the member defaults (their budget id is in
//!   `metadata.team_member_budget_id`) and the members' budgets
//!   ([`TeamEntry::complete`] says whether the entry stands for the team).
//!   Its timestamps are in `/team/info`'s form (`Z`) already.
//!
//! Both page by offset: an object deleted on an earlier page while the
//! pages are read makes a later one be skipped, one created repeats one.
//! Whoever reads by pages reads an object missing from them on its own,
//! and takes only that read's answer for its absence.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::client::{endpoint, Endpoint, Fingerprint, List, Listed, Reply};
use super::{Client, Error, KeyInfo, TeamInfo};

/// The largest page both routes serve.
pub const MAX_PAGE_SIZE: u32 = 100;

const KEY_LIST: Endpoint = endpoint!(GET "/key/list");
const TEAM_LIST: Endpoint = endpoint!(GET "/v2/team/list");

/// One page of a list route.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub entries: Vec<T>,
    /// How many objects the route counted, over all pages, when it answered.
    pub total: u64,
}

/// A team as `/v2/team/list` reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct TeamEntry {
    pub info: TeamInfo,
    /// The id of its object permission, which the entry does not carry.
    pub object_permission_id: Option<String>,
}

impl TeamEntry {
    /// Whether the entry says all [`TeamInfo`] would: the team has no
    /// object permission and no member defaults, which only `/team/info`
    /// reports. The members' budgets in the team are never in the entry.
    pub fn complete(&self) -> bool {
        self.object_permission_id.is_none() && !self.info.names_member_defaults()
    }
}

/// A page of keys as the route sent it: each entry's text, parsed only
/// where wanted ([`Client::listed_page_for`]), and the count of all.
#[derive(Deserialize)]
struct RawKeyPage<'a> {
    #[serde(default, borrow)]
    keys: Vec<&'a RawValue>,
    #[serde(default)]
    total_count: u64,
}

/// A page of teams, as [`RawKeyPage`].
#[derive(Deserialize)]
struct RawTeamPage<'a> {
    #[serde(default, borrow)]
    teams: Vec<&'a RawValue>,
    #[serde(default)]
    total: u64,
}

/// A page's entries as the route sent them, and its count of all.
struct RawPage<'a> {
    entries: Vec<&'a RawValue>,
    total: u64,
}

/// A key entry's id, read without the rest.
#[derive(Deserialize)]
struct KeyHead<'a> {
    #[serde(default, borrow)]
    token: Cow<'a, str>,
}

/// A team entry's id and what says whether it is complete, read without the
/// rest.
#[derive(Deserialize)]
struct TeamHead<'a> {
    #[serde(default, borrow)]
    team_id: Cow<'a, str>,
    #[serde(default, borrow)]
    object_permission_id: Option<Cow<'a, str>>,
}

/// An entry's id, and a team's object permission id (a key's is `None`).
struct Head<'a> {
    id: Cow<'a, str>,
    object_permission_id: Option<Cow<'a, str>>,
}

impl List {
    fn endpoint(self) -> &'static Endpoint {
        match self {
            List::Keys => &KEY_LIST,
            List::Teams => &TEAM_LIST,
        }
    }

    /// The page of text `text`.
    fn raw_page(self, text: &str) -> Result<RawPage<'_>, serde_json::Error> {
        Ok(match self {
            List::Keys => {
                let page: RawKeyPage = serde_json::from_str(text)?;
                RawPage {
                    entries: page.keys,
                    total: page.total_count,
                }
            }
            List::Teams => {
                let page: RawTeamPage = serde_json::from_str(text)?;
                RawPage {
                    entries: page.teams,
                    total: page.total,
                }
            }
        })
    }

    /// The head of the entry of text `text`.
    fn head_of(self, text: &str) -> Result<Head<'_>, serde_json::Error> {
        Ok(match self {
            List::Keys => Head {
                id: serde_json::from_str::<KeyHead>(text)?.token,
                object_permission_id: None,
            },
            List::Teams => {
                let head: TeamHead = serde_json::from_str(text)?;
                Head {
                    id: head.team_id,
                    object_permission_id: head.object_permission_id,
                }
            }
        })
    }
}

fn key_of(text: &str) -> Result<KeyInfo, serde_json::Error> {
    let mut key: KeyInfo = serde_json::from_str(text)?;
    info_form(&mut key.created_at);
    info_form(&mut key.updated_at);
    info_form(&mut key.expires);
    info_form(&mut key.budget_reset_at);
    Ok(key)
}

fn team_of(text: &str) -> Result<TeamEntry, serde_json::Error> {
    team_with(text, List::Teams.head_of(text)?.object_permission_id)
}

/// The team of entry `text`, whose object permission id was read already.
fn team_with(
    text: &str,
    object_permission_id: Option<Cow<'_, str>>,
) -> Result<TeamEntry, serde_json::Error> {
    Ok(TeamEntry {
        info: serde_json::from_str(text)?,
        object_permission_id: object_permission_id.map(Cow::into_owned),
    })
}

/// A key list entry's timestamp (`2026-12-06T23:47:54.846000Z`) in the form
/// `/key/info` answers (`...846000+00:00`).
fn info_form(timestamp: &mut Option<String>) {
    if let Some(text) = timestamp {
        if let Some(utc) = text.strip_suffix('Z') {
            *text = format!("{utc}+00:00");
        }
    }
}

/// `page` from 1 and `size` from 1 to [`MAX_PAGE_SIZE`], as the routes
/// take them: what is outside is brought in.
fn page_arguments(page: u32, size: u32) -> (String, String) {
    (
        page.max(1).to_string(),
        size.clamp(1, MAX_PAGE_SIZE).to_string(),
    )
}

impl Client {
    /// Page `page` (from 1) of `list`, `size` a page, sorted by id; with
    /// `filter`, only the keys of that team, or the teams whose id starts
    /// with it (or whose alias contains it: LiteLLM searches both).
    async fn page_reply(
        &self,
        list: List,
        filter: Option<&str>,
        page: u32,
        size: u32,
    ) -> Result<Reply, Error> {
        let (page, size) = page_arguments(page, size);
        let mut query = match list {
            List::Keys => vec![
                ("return_full_object", "true"),
                ("sort_by", "token"),
                ("sort_order", "asc"),
                ("page", page.as_str()),
                ("size", size.as_str()),
            ],
            List::Teams => vec![
                ("sort_by", "team_id"),
                ("sort_order", "asc"),
                ("page", page.as_str()),
                ("page_size", size.as_str()),
            ],
        };
        if let Some(filter) = filter {
            match list {
                List::Keys => query.push(("team_id", filter)),
                List::Teams => {
                    query.push(("search", filter));
                    query.push(("search_team_id_match", "prefix"));
                }
            }
        }
        self.get(list.endpoint(), &query).await
    }

    /// Every entry of a page, parsed by `parse`.
    async fn parsed_page<T>(
        &self,
        list: List,
        filter: Option<&str>,
        page: u32,
        size: u32,
        parse: fn(&str) -> Result<T, serde_json::Error>,
    ) -> Result<Page<T>, Error> {
        let reply = self.page_reply(list, filter, page, size).await?;
        let decode = |err| Error::decode(reply.op, &err);
        let raw = list.raw_page(reply.text()?).map_err(decode)?;
        let entries = raw
            .entries
            .iter()
            .map(|entry| parse(entry.get()).map_err(decode))
            .collect::<Result<_, _>>()?;
        Ok(Page {
            entries,
            total: raw.total,
        })
    }

    /// Page `page` (from 1) of the keys, `size` (at most [`MAX_PAGE_SIZE`])
    /// a page, sorted by token;
    /// with `team_id`, only that team's keys.
    pub async fn key_page(
        &self,
        team_id: Option<&str>,
        page: u32,
        size: u32,
    ) -> Result<Page<KeyInfo>, Error> {
        self.parsed_page(List::Keys, team_id, page, size, key_of)
            .await
    }

    /// Page `page` (from 1) of the teams, `size` (at most [`MAX_PAGE_SIZE`])
    /// a page, sorted by team id;
    /// with `id_prefix`, only teams whose id starts with it (or whose alias
    /// contains it: LiteLLM searches both).
    pub async fn team_page(
        &self,
        id_prefix: Option<&str>,
        page: u32,
        size: u32,
    ) -> Result<Page<TeamEntry>, Error> {
        self.parsed_page(List::Teams, id_prefix, page, size, team_of)
            .await
    }
}

/// An entry of a list route's page ([`Client::listed_page`]).
#[derive(Debug, Clone)]
pub struct ListedEntry {
    /// The object's id, as its read knows it.
    pub id: String,
    /// The fingerprint of its text as the route sent it (see
    /// [`super::Listed::entry`]).
    pub text: Fingerprint,
    /// The fingerprint of what it parsed to: a [`super::Listed`]'s where the
    /// object is as its read found it; `None` where the entry cannot say
    /// all the read would (a team's object permission or member defaults),
    /// or was not parsed ([`ListedEntry::known`]).
    pub fingerprint: Option<Fingerprint>,
    /// The object it stands for; `None` where it was not parsed.
    object: Option<Kept>,
}

impl ListedEntry {
    /// The entry of `object`, under `id`, of text `text`, fingerprinted as
    /// it parsed.
    fn of(id: String, text: Fingerprint, object: Kept) -> Self {
        ListedEntry {
            id,
            text,
            fingerprint: object.fingerprint(),
            object: Some(object),
        }
    }

    /// Whether it was left unparsed, its text being the one its caller
    /// knew ([`Client::listed_page_for`]): the object is as it was then.
    pub fn known(&self) -> bool {
        self.object.is_none()
    }
}

/// What a caller of [`Client::listed_page_for`] wants of a page.
pub trait Wants {
    /// The id of the object whose entry the caller knows to be of text
    /// `text` (a [`ListedEntry::text`] it was given before), and so knows
    /// what it parses to.
    fn known(&self, text: Fingerprint) -> Option<&str>;

    /// Whether it wants the entry of `id`, if not known by its text.
    fn wanted(&self, id: &str) -> bool;
}

/// Every entry, each parsed ([`Client::listed_page`]).
struct Every;

impl Wants for Every {
    fn known(&self, _: Fingerprint) -> Option<&str> {
        None
    }

    fn wanted(&self, _: &str) -> bool {
        true
    }
}

/// What pages said of objects, by route and id, when each was asked, and
/// where each is listed as that (the probe of the read it stands for).
type KeptEntries = HashMap<(List, Box<str>), (Kept, Asked, Listed)>;

/// What a page (or a poll's read) said of one object, kept for its next
/// read.
#[derive(Debug, Clone)]
pub(super) enum Kept {
    Key(KeyInfo),
    Team(TeamInfo),
}

impl Kept {
    /// Its route.
    fn list(&self) -> List {
        match self {
            Kept::Key(_) => List::Keys,
            Kept::Team(_) => List::Teams,
        }
    }

    /// The fingerprint of what it parsed to, where it is listed as a whole
    /// (see [`super::Listed`]).
    pub(super) fn fingerprint(&self) -> Option<Fingerprint> {
        match self {
            Kept::Key(key) => key.listed(),
            Kept::Team(team) => team.listed(),
        }
        .map(|listed| listed.fingerprint)
    }
}

/// A page of a list route and when it was asked ([`Client::prefetch`]).
#[derive(Debug, Clone)]
pub struct Listing {
    /// The entries wanted ([`Client::listed_page_for`]).
    pub page: Page<ListedEntry>,
    /// How many entries the route sent, wanted or not.
    pub sent: usize,
    pub asked: Asked,
}

/// When a page was asked, against this client's writes: an entry of it
/// may answer a read only if no write through the client was under way
/// then or began since.
#[derive(Debug, Clone, Copy)]
pub struct Asked {
    at: Instant,
    /// The writes begun by then; `None` where one was under way.
    writes: Option<u64>,
}

/// How long a page's entry may stand for a read of its object: about as
/// long as a reconciliation waits for its turn on a busy provider.
pub const PREFETCH_FRESH: Duration = Duration::from_secs(5);

/// Entries kept beyond this many are dropped when stale.
const PREFETCH_PRUNE: usize = 1024;

/// Entries of pages a sweep read, each kept for the next read of its object
/// through the same proxy's client, which it then answers instead: the
/// reconciliation a sweep hands an object to (its entry changed, or its memo
/// answered its polls) observes what the page said a moment before rather
/// than read the object again. What that reconciliation sees is the object
/// as the page found it, as if its read had been made when the page was:
/// no older than [`PREFETCH_FRESH`], and never across a write of this
/// client's (any write to the proxy under way when the page was asked, or
/// begun since, and the entry answers nothing).
#[derive(Default)]
pub(crate) struct Prefetched {
    objects: Mutex<KeptEntries>,
    writes_begun: AtomicU64,
    writes_under_way: AtomicU64,
}

/// A write through the client, under way until dropped.
pub(crate) struct Writing<'a>(&'a Prefetched);

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.0.writes_under_way.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Prefetched {
    /// A write begins (see [`Writing`]).
    pub(crate) fn writing(&self) -> Writing<'_> {
        self.writes_under_way.fetch_add(1, Ordering::SeqCst);
        self.writes_begun.fetch_add(1, Ordering::SeqCst);
        Writing(self)
    }

    pub(super) fn asked(&self) -> Asked {
        let begun = self.writes_begun.load(Ordering::SeqCst);
        let clear = self.writes_under_way.load(Ordering::SeqCst) == 0;
        Asked {
            at: Instant::now(),
            writes: clear.then_some(begun),
        }
    }

    /// Whether an entry of a page asked `asked` may still answer a read.
    fn stands(&self, asked: &Asked) -> bool {
        asked.at.elapsed() < PREFETCH_FRESH
            && asked.writes == Some(self.writes_begun.load(Ordering::SeqCst))
    }

    /// Keeps `object` (`id`, listed as `listed`), read as `asked`, for
    /// its next read; `false` where it cannot stand for one (see
    /// [`Prefetched`]). `listed` is what the probe of that read then
    /// carries: the fingerprint `object` parsed to, and for a page's entry
    /// the fingerprint of its text ([`Listed::entry`]), so the next sweep
    /// need not parse an entry of the same text.
    pub(super) fn keep(&self, id: String, object: Kept, listed: Listed, asked: Asked) -> bool {
        if !self.stands(&asked) {
            return false;
        }
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        if objects.len() >= PREFETCH_PRUNE {
            objects.retain(|_, (_, asked, _)| asked.at.elapsed() < PREFETCH_FRESH);
        }
        objects.insert((listed.list, id.into_boxed_str()), (object, asked, listed));
        true
    }

    /// What a page said of `id` on `list`, and where it is listed as that,
    /// taken, if it still stands.
    fn take(&self, list: List, id: &str) -> Option<(Kept, Listed)> {
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        if objects.is_empty() {
            return None;
        }
        let (object, asked, listed) = objects.remove(&(list, Box::from(id)))?;
        drop(objects);
        self.stands(&asked).then_some((object, listed))
    }

    /// The key kept for `token`, taken, if it still stands, and where it
    /// is listed as that.
    pub(super) fn take_key(&self, token: &str) -> Option<(KeyInfo, Listed)> {
        match self.take(List::Keys, token)? {
            (Kept::Key(key), listed) => Some((key, listed)),
            (Kept::Team(_), _) => None,
        }
    }

    /// The team kept for `team_id`, taken, if it still stands, and where
    /// it is listed as that.
    pub(super) fn take_team(&self, team_id: &str) -> Option<(TeamInfo, Listed)> {
        match self.take(List::Teams, team_id)? {
            (Kept::Team(team), listed) => Some((team, listed)),
            (Kept::Key(_), _) => None,
        }
    }
}

impl Client {
    /// Page `page` (from 1) of `list`, `size` (at most [`MAX_PAGE_SIZE`])
    /// a page, each entry with its id and the fingerprint of what it
    /// parsed to: equal to a [`super::Probe`]'s [`super::Listed`]
    /// fingerprint where the object is as its read found it.
    pub async fn listed_page(&self, list: List, page: u32, size: u32) -> Result<Listing, Error> {
        self.listed_page_for(list, page, size, &Every).await
    }

    /// [`Client::listed_page`] with only what `wants` wants: an entry whose
    /// text it knows is left unparsed, under the id it knows it by; of the
    /// others, only those of ids it wants are parsed. An entry costs a hash
    /// of its text, and one not known by it a read of its id too: a sweep
    /// parses only what changed.
    pub async fn listed_page_for(
        &self,
        list: List,
        page: u32,
        size: u32,
        wants: &impl Wants,
    ) -> Result<Listing, Error> {
        let asked = self.prefetched().asked();
        let reply = self.page_reply(list, None, page, size).await?;
        let decode = |err| Error::decode(reply.op, &err);
        let raw = list.raw_page(reply.text()?).map_err(decode)?;
        let sent = raw.entries.len();
        let mut entries = Vec::with_capacity(sent);
        for entry in raw.entries {
            let text = entry.get();
            let fingerprint = Fingerprint::of_entry(text);
            if let Some(id) = wants.known(fingerprint) {
                entries.push(ListedEntry {
                    id: id.to_owned(),
                    text: fingerprint,
                    fingerprint: None,
                    object: None,
                });
                continue;
            }
            let head = list.head_of(text).map_err(decode)?;
            if !wants.wanted(&head.id) {
                continue;
            }
            let id = head.id.into_owned();
            entries.push(match list {
                List::Keys => {
                    ListedEntry::of(id, fingerprint, Kept::Key(key_of(text).map_err(decode)?))
                }
                List::Teams => {
                    let team = team_with(text, head.object_permission_id).map_err(decode)?;
                    let complete = team.complete();
                    let mut listed = ListedEntry::of(id, fingerprint, Kept::Team(team.info));
                    if !complete {
                        listed.fingerprint = None;
                    }
                    listed
                }
            });
        }
        Ok(Listing {
            page: Page {
                entries,
                total: raw.total,
            },
            sent,
            asked,
        })
    }

    /// Keeps `entry` of a page asked `asked` for the next read of its
    /// object through this proxy's clients ([`Client::key_info_probed`],
    /// [`Client::team_info_probed`] without the members' budgets), which it
    /// answers if it still stands then (see [`Prefetched`]). `false` where
    /// it cannot stand for a read: it does not say all the read would, or
    /// a write began since the page was asked.
    pub fn prefetch(&self, entry: ListedEntry, asked: Asked) -> bool {
        let (Some(object), Some(fingerprint)) = (entry.object, entry.fingerprint) else {
            return false;
        };
        let listed = Listed {
            list: object.list(),
            fingerprint,
            entry: Some(entry.text),
        };
        self.prefetched().keep(entry.id, object, listed, asked)
    }
}
