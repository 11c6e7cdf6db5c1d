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

use serde::Deserialize;

use super::client::{endpoint, Endpoint, Fingerprint, List, Reply};
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
        self.object_permission_id.is_none()
            && !self
                .info
                .metadata
                .as_ref()
                .is_some_and(|m| m.contains_key("team_member_budget_id"))
    }
}

#[derive(Deserialize)]
struct KeyPage {
    #[serde(default)]
    keys: Vec<KeyInfo>,
    #[serde(default)]
    total_count: u64,
}

#[derive(Deserialize)]
struct TeamPage {
    #[serde(default)]
    teams: Vec<TeamRow>,
    #[serde(default)]
    total: u64,
}

#[derive(Deserialize)]
struct TeamRow {
    #[serde(flatten)]
    info: TeamInfo,
    #[serde(default)]
    object_permission_id: Option<String>,
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
    /// Page `page` (from 1) of the keys, `size` (at most [`MAX_PAGE_SIZE`])
    /// a page, sorted by token;
    /// with `team_id`, only that team's keys.
    pub async fn key_page(
        &self,
        team_id: Option<&str>,
        page: u32,
        size: u32,
    ) -> Result<Page<KeyInfo>, Error> {
        let (page, size) = page_arguments(page, size);
        let mut query = vec![
            ("return_full_object", "true"),
            ("sort_by", "token"),
            ("sort_order", "asc"),
            ("page", page.as_str()),
            ("size", size.as_str()),
        ];
        if let Some(team_id) = team_id {
            query.push(("team_id", team_id));
        }
        let reply: Reply = self.get(&KEY_LIST, &query).await?;
        let KeyPage { keys, total_count } = reply.json()?;
        let entries = keys
            .into_iter()
            .map(|mut key| {
                info_form(&mut key.created_at);
                info_form(&mut key.updated_at);
                info_form(&mut key.expires);
                info_form(&mut key.budget_reset_at);
                key
            })
            .collect();
        Ok(Page {
            entries,
            total: total_count,
        })
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
        let (page, size) = page_arguments(page, size);
        let mut query = vec![
            ("sort_by", "team_id"),
            ("sort_order", "asc"),
            ("page", page.as_str()),
            ("page_size", size.as_str()),
        ];
        if let Some(prefix) = id_prefix {
            query.push(("search", prefix));
            query.push(("search_team_id_match", "prefix"));
        }
        let reply: Reply = self.get(&TEAM_LIST, &query).await?;
        let TeamPage { teams, total } = reply.json()?;
        let entries = teams
            .into_iter()
            .map(|row| TeamEntry {
                info: row.info,
                object_permission_id: row.object_permission_id,
            })
            .collect();
        Ok(Page { entries, total })
    }
}

impl Client {
    /// Page `page` (from 1) of `list`, `size` (at most [`MAX_PAGE_SIZE`])
    /// a page, as each entry's id and the fingerprint of what it parsed to:
    /// equal to a [`super::Probe`]'s [`super::Listed`] fingerprint where the
    /// object is as its read found it.
    pub async fn listed_page(
        &self,
        list: List,
        page: u32,
        size: u32,
    ) -> Result<Page<(String, Option<Fingerprint>)>, Error> {
        match list {
            List::Keys => {
                let keys = self.key_page(None, page, size).await?;
                Ok(Page {
                    entries: keys
                        .entries
                        .into_iter()
                        .map(|key| {
                            let fingerprint = key.listed().map(|listed| listed.fingerprint);
                            (key.token, fingerprint)
                        })
                        .collect(),
                    total: keys.total,
                })
            }
        }
    }
}
