//! An in-process stand-in of the LiteLLM proxy's admin API (1.108.7) for
//! the team and virtual-key routes the provider calls, fast enough for a
//! benchmark at 10,000 teams and 10,000 keys (the real proxy answers about
//! 65 requests/s).
//!
//! Every answer below was taken from the real proxy of `tests/harness/litellm/`
//! (status, body shape, error wording) and from LiteLLM's own source where a
//! rule is computed (`budget_reset_at`, `expires`, the key checks);
//! `tests/integration/litellm_standin.rs` runs one sequence of client calls
//! against both and compares the results. Routes:
//!
//! * `POST /team/new`, `GET /team/info?team_id=`, `POST /team/update`,
//!   `POST /team/delete` (`{"team_ids": [..]}`; deletes the teams' keys too);
//! * `POST /key/generate`, `GET /key/info?key=`, `POST /key/update`,
//!   `POST /key/delete` (`{"keys": [..]}`), `GET /key/list` (filters
//!   `key_alias`, `team_id`; `page`, `size`);
//! * `GET /health/liveliness`, `GET /health/readiness` (public);
//! * with a licence only ([`StandIn::start_licensed`]; 403 otherwise, as
//!   the open-source proxy answers): `POST /organization/new`,
//!   `GET /organization/info?organization_id=`, `PATCH
//!   /organization/update`, `DELETE /organization/delete`
//!   (`{"organization_ids": [..]}`; deletes the organizations' teams and
//!   their keys too), and `organization_id` on `/team/new` and
//!   `/team/update` (the organization must exist; the team's models and
//!   limits must lie within the organization's); their members,
//!   `POST /organization/member_add`, `PATCH /organization/member_update`,
//!   `DELETE /organization/member_delete`, listed by `/organization/info`;
//! * `POST /user/new`, `GET /user/info?user_id=`, `POST /user/delete`
//!   (`{"user_ids": [..]}`), only as far as organization members need
//!   users: the fields sent are kept and echoed (`user_role` `null` unless
//!   sent), a taken id is 409, a missing user 404 on info and delete, and
//!   a deletion drops the user's organization memberships
//!   (`bulk_user_deletion.py`, `_org_membership_tx_db(tx).delete_many`).
//!
//! Authentication is `Authorization: Bearer <master key>`; a live virtual key
//! is accepted where LiteLLM accepts one (reading keys and its own team).
//!
//! The organization routes are not checked against a real proxy (the one
//! here has no licence): their shapes are those of LiteLLM 1.108.7's own
//! types (`NewOrganizationRequest`, `LiteLLM_OrganizationTableUpdate`,
//! `LiteLLM_OrganizationTableWithMembers`, `DeleteOrganizationRequest` in
//! `proxy/_types.py`) and their rules those of
//! `organization_endpoints.py` and `_check_org_team_limits`
//! (`team_endpoints.py`): an organization keeps its limits in a budget
//! row of its own, `/organization/update` merges `metadata`, raises (500)
//! for a missing organization, a taken id fails (500) on the primary key.
//! The member routes follow `organization_member_add`,
//! `add_member_to_organization`, `organization_member_update` and
//! `organization_member_delete` of `organization_endpoints.py` (1.108.7):
//! a role outside `ROLES_WITHIN_ORG` is 422 (`OrgMember`); `member_add`
//! answers 404 for a missing organization, creates a user it does not know
//! (`get_new_internal_user_defaults`: `internal_user`), and fails with 500
//! for a user already a member (the membership's primary key, re-raised as
//! a `ValueError`); `member_update` answers 400 for a missing organization
//! and 404 for a user who is not a member; `member_delete` of a user who is
//! not a member is Prisma's "record not found", a 500.
//!
//! Not modelled: budgets (a key's `budget_id` is stored as given, with no
//! check that the budget exists), members and users by `user_email`, users'
//! keys and teams, spend (always 0),
//! the many fields LiteLLM returns that the provider never reads.
//!
//! Self-contained (only crates of `Cargo.toml`), so a bench can include it
//! with `#[path = "../tests/support/litellm_standin.rs"] mod litellm_standin;`.

#![allow(dead_code)] // each test binary and bench uses a different part

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, Method, StatusCode};
use axum::response::Response;
use k8s_openapi::jiff::civil::{Date, DateTime, Time};
use k8s_openapi::jiff::tz::TimeZone;
use k8s_openapi::jiff::{Timestamp, ToSpan};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// The operations counted by [`StandIn::requests`], in the client's names.
pub const OPERATIONS: [&str; 23] = [
    "POST /team/new",
    "GET /team/info",
    "POST /team/update",
    "POST /team/delete",
    "POST /key/generate",
    "GET /key/info",
    "POST /key/update",
    "POST /key/delete",
    "GET /key/list",
    "GET /health/liveliness",
    "GET /health/readiness",
    "POST /organization/new",
    "GET /organization/info",
    "PATCH /organization/update",
    "DELETE /organization/delete",
    "POST /organization/member_add",
    "PATCH /organization/member_update",
    "DELETE /organization/member_delete",
    "POST /user/new",
    "GET /user/info",
    "POST /user/delete",
    "GET /v2/team/list",
    "other",
];

/// The largest request body read (LiteLLM itself has no limit; the
/// provider's largest, a team with big metadata, is far under it).
const MAX_REQUEST_BODY: usize = 16 << 20;

/// LiteLLM's `MINIMUM_CUSTOM_KEY_LENGTH`.
const MINIMUM_CUSTOM_KEY_LENGTH: usize = 16;

/// A running stand-in. Dropping it stops the server.
pub struct StandIn {
    /// `http://127.0.0.1:<port>`, without a trailing `/`.
    pub url: String,
    pub master_key: String,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StandIn {
    /// Serves on 127.0.0.1 at a free port, on a task of the current runtime.
    pub async fn start(master_key: &str) -> StandIn {
        Self::serve(master_key, false).await
    }

    /// As [`StandIn::start`], as a proxy with an Enterprise licence: it
    /// takes `tags` and `guardrails` of teams and keys, which the
    /// open-source proxy refuses with 403. The real proxy here has no
    /// licence, so this path is the stand-in's alone, built from LiteLLM's
    /// `prepare_metadata_fields` (`key_management_endpoints.py`): each such
    /// setting is kept in the object's `metadata`.
    pub async fn start_licensed(master_key: &str) -> StandIn {
        Self::serve(master_key, true).await
    }

    async fn serve(master_key: &str, licensed: bool) -> StandIn {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        let state = Arc::new(State {
            master_key: master_key.to_owned(),
            licensed,
            db: RwLock::new(Db::default()),
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
        });
        let serving = Arc::clone(&state);
        let app = axum::Router::new().fallback(move |request: Request| {
            let state = Arc::clone(&serving);
            async move { state.handle(request).await }
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        StandIn {
            url,
            master_key: master_key.to_owned(),
            state,
            task,
        }
    }

    /// Requests received so far by operation (`"POST /team/new"`; `"other"`
    /// for any other route), whatever their answer; operations not called
    /// yet are absent.
    pub fn requests(&self) -> BTreeMap<String, u64> {
        OPERATIONS
            .iter()
            .zip(&self.state.counts)
            .map(|(op, count)| ((*op).to_owned(), count.load(Ordering::Relaxed)))
            .filter(|(_, count)| *count > 0)
            .collect()
    }

    /// Requests received so far, all operations together.
    pub fn requests_total(&self) -> u64 {
        self.state
            .counts
            .iter()
            .map(|count| count.load(Ordering::Relaxed))
            .sum()
    }

    /// Requests that could change state (creates, updates, deletes).
    pub fn writes(&self) -> u64 {
        self.requests()
            .iter()
            .filter(|(op, _)| op.starts_with("POST "))
            .map(|(_, count)| count)
            .sum()
    }

    pub fn len_teams(&self) -> usize {
        self.state.read().teams.len()
    }

    /// Live keys (deleted ones are archived, as LiteLLM does, and not counted).
    pub fn len_keys(&self) -> usize {
        self.state.read().keys.len()
    }
}

struct State {
    master_key: String,
    /// Whether the proxy has an Enterprise licence (see
    /// [`StandIn::start_licensed`]).
    licensed: bool,
    db: RwLock<Db>,
    counts: [AtomicU64; OPERATIONS.len()],
}

#[derive(Default)]
struct Db {
    teams: HashMap<String, Team>,
    /// Live keys by token.
    keys: HashMap<String, Key>,
    /// Deleted keys by token: `/key/info` still answers them, with
    /// `"status": "deleted"`.
    deleted: HashMap<String, (Key, i64)>,
    /// Live keys' tokens by alias (aliases are unique among live keys).
    aliases: HashMap<String, String>,
    /// Live keys' tokens by `team_id`; the team need not exist (LiteLLM
    /// does not check it on `/key/generate`).
    team_keys: HashMap<String, BTreeSet<String>>,
    organizations: HashMap<String, Organization>,
    users: HashMap<String, User>,
}

struct Organization {
    /// The organization's fields except its budget row and the times.
    fields: Map<String, Value>,
    /// `litellm_budget_table`: the limits.
    budget: Map<String, Value>,
    /// `LiteLLM_OrganizationMembership` rows, by user id: the role.
    members: BTreeMap<String, Option<String>>,
    created: i64,
    updated: i64,
}

struct User {
    /// The fields sent (and `user_id`).
    fields: Map<String, Value>,
    created: i64,
    updated: i64,
}

impl User {
    /// `LiteLLM_UserTable` as `/user/info` answers it.
    fn object(&self) -> Map<String, Value> {
        let Value::Object(mut object) = json!({
            "user_alias": null, "user_role": null, "user_email": null, "max_budget": null,
            "spend": 0.0, "models": [], "metadata": {}, "max_parallel_requests": null,
            "tpm_limit": null, "rpm_limit": null, "budget_duration": null,
            "budget_reset_at": null, "teams": [], "organization_memberships": [],
        }) else {
            unreachable!()
        };
        object.extend(self.fields.clone());
        object.insert("created_at".into(), time(self.created, Zulu));
        object.insert("updated_at".into(), time(self.updated, Zulu));
        object
    }
}

struct Team {
    /// Every field LiteLLM reports except the times below.
    fields: Map<String, Value>,
    created: i64,
    updated: i64,
    budget_reset: Option<i64>,
}

#[derive(Clone)]
struct Key {
    /// The `info` fields of `/key/info` except the token, status and times.
    fields: Map<String, Value>,
    created: i64,
    updated: i64,
    settings_updated: Option<i64>,
    budget_reset: Option<i64>,
    /// Microseconds: `/key/generate` reports them, the database keeps
    /// milliseconds.
    expires: Option<i64>,
}

impl Key {
    fn team_id(&self) -> Option<&str> {
        self.fields.get("team_id").and_then(Value::as_str)
    }

    fn alias(&self) -> Option<&str> {
        self.fields.get("key_alias").and_then(Value::as_str)
    }

    /// The `info` object of `/key/info` (times with `+00:00`).
    fn info(&self) -> Map<String, Value> {
        let mut info = self.fields.clone();
        info.insert("expires".into(), opt_time(self.expires.map(ms), Offset));
        info.insert(
            "budget_reset_at".into(),
            opt_time(self.budget_reset, Offset),
        );
        info.insert("created_at".into(), time(self.created, Offset));
        info.insert("updated_at".into(), time(self.updated, Offset));
        info.insert(
            "settings_updated_at".into(),
            opt_time(self.settings_updated, Offset),
        );
        info
    }

    /// A key in `/team/info`'s `keys` (token first, times with `Z`).
    fn in_team(&self, token: &str) -> Map<String, Value> {
        let mut entry = Map::new();
        entry.insert("token".into(), token.into());
        entry.extend(self.fields.clone());
        entry.insert("expires".into(), opt_time(self.expires.map(ms), Zulu));
        entry.insert("budget_reset_at".into(), opt_time(self.budget_reset, Zulu));
        entry.insert("created_at".into(), time(self.created, Zulu));
        entry.insert("updated_at".into(), time(self.updated, Zulu));
        entry.insert(
            "settings_updated_at".into(),
            opt_time(self.settings_updated, Zulu),
        );
        entry
    }
}

/// An error answer: status and body.
type Answer = (StatusCode, Value);

/// Who sent a request.
enum Caller {
    Admin,
    /// A live virtual key, by its team.
    Key {
        team_id: Option<String>,
    },
}

impl State {
    fn read(&self) -> RwLockReadGuard<'_, Db> {
        self.db
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Db> {
        self.db
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    async fn handle(self: Arc<Self>, request: Request) -> Response {
        let (parts, body) = request.into_parts();
        let path = parts.uri.path().to_owned();
        let query = parts.uri.query().unwrap_or("").to_owned();
        let route = ROUTES.iter().find(|route| route.path == path);
        let op = match route {
            Some(route) if route.method == parts.method => route.name,
            _ => "other",
        };
        let index = OPERATIONS
            .iter()
            .position(|o| *o == op)
            .unwrap_or(OPERATIONS.len() - 1);
        self.counts[index].fetch_add(1, Ordering::Relaxed);

        // FastAPI routes before anything else: unknown paths and methods
        // are answered without authentication.
        let Some(route) = route else {
            return reply(StatusCode::NOT_FOUND, &json!({"detail": "Not Found"}));
        };
        if route.method != parts.method {
            return reply(
                StatusCode::METHOD_NOT_ALLOWED,
                &json!({"detail": "Method Not Allowed"}),
            );
        }
        match route.op {
            Op::Liveliness => return reply(StatusCode::OK, &json!("I'm alive!")),
            Op::Readiness => {
                return reply(
                    StatusCode::OK,
                    &json!({"status": "healthy", "db": "connected"}),
                )
            }
            _ => {}
        }
        // The body is parsed before the dependencies (authentication) run:
        // malformed JSON is 422 whatever the credentials.
        let body = if route.method != Method::GET {
            let bytes = match axum::body::to_bytes(body, MAX_REQUEST_BODY).await {
                Ok(bytes) => bytes,
                Err(_) => {
                    return reply(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        &json!({"detail": "request body too large"}),
                    )
                }
            };
            match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(body)) => body,
                Ok(other) => {
                    return reply(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        &json!({"detail": [{
                            "type": "model_attributes_type",
                            "loc": ["body"],
                            "msg": "Input should be a valid dictionary or object to extract fields from",
                            "input": other,
                        }]}),
                    )
                }
                Err(err) => {
                    return reply(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        &json!({"detail": [{
                            "type": "json_invalid",
                            "loc": ["body", err.column()],
                            "msg": "JSON decode error",
                        }]}),
                    )
                }
            }
        } else {
            Map::new()
        };
        let query = parse_query(&query);
        let authorization = parts
            .headers
            .get(header::AUTHORIZATION)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        let answer = self
            .authenticate(authorization.as_deref(), route)
            .and_then(|caller| self.dispatch(route.op, &caller, &query, body));
        match answer {
            Ok(body) => reply(StatusCode::OK, &body),
            Err((status, body)) => reply(status, &body),
        }
    }

    fn authenticate(&self, authorization: Option<&str>, route: &Route) -> Result<Caller, Answer> {
        let auth_error = |message: &str, kind: &str| {
            error(StatusCode::UNAUTHORIZED, message, kind, Value::from("None"))
        };
        let Some(authorization) = authorization.filter(|a| !a.trim().is_empty()) else {
            return Err(auth_error(
                "Authentication Error, No api key passed in.",
                "auth_error",
            ));
        };
        let Some(key) = authorization.strip_prefix("Bearer ") else {
            return Err(auth_error(
                "Authentication Error, Malformed API Key passed in. Ensure Key has `Bearer ` prefix.",
                "auth_error",
            ));
        };
        let key = key.trim();
        if key == self.master_key {
            return Ok(Caller::Admin);
        }
        let team_id = {
            let db = self.read();
            match db.keys.get(&sha256_hex(key)) {
                Some(live) if key.starts_with("sk-") => live.team_id().map(str::to_owned),
                _ => {
                    return Err(error(
                        StatusCode::UNAUTHORIZED,
                        "Authentication Error, Invalid API key provided.",
                        "token_not_found_in_db",
                        Value::from("key"),
                    ))
                }
            }
        };
        if route.method == Method::POST {
            return Err(auth_error(
                &format!(
                    "Authentication Error, Only proxy admin can be used to generate, delete, \
                     update info for new keys/users/teams. Route={}. Your role=unknown. \
                     Your user_id=*******",
                    route.path
                ),
                "auth_error",
            ));
        }
        Ok(Caller::Key { team_id })
    }

    fn dispatch(
        &self,
        op: Op,
        caller: &Caller,
        query: &[(String, String)],
        body: Map<String, Value>,
    ) -> Result<Value, Answer> {
        let now = now_micros();
        match op {
            Op::TeamNew => self.team_new(body, now),
            Op::TeamInfo => self.team_info(caller, param(query, "team_id")),
            Op::TeamUpdate => self.team_update(body, now),
            Op::TeamDelete => self.team_delete(&body, now),
            Op::KeyGenerate => self.key_generate(body, now),
            Op::KeyInfo => self.key_info(param(query, "key")),
            Op::KeyUpdate => self.key_update(body, now),
            Op::KeyDelete => self.key_delete(&body, now),
            Op::KeyList => match caller {
                Caller::Admin => self.key_list(query),
                Caller::Key { .. } => Err(error(
                    StatusCode::FORBIDDEN,
                    "You are not authorized to access this endpoint. No 'user_id' is associated \
                     with your API key.",
                    "bad_request_error",
                    Value::from("user_id"),
                )),
            },
            Op::TeamList => match caller {
                Caller::Admin => self.team_list(query),
                Caller::Key { .. } => Err(error(
                    StatusCode::UNAUTHORIZED,
                    "Only admin users can query all teams/other teams. Your user role=None",
                    "auth_error",
                    Value::from("None"),
                )),
            },
            Op::OrganizationNew
            | Op::OrganizationInfo
            | Op::OrganizationUpdate
            | Op::OrganizationDelete
            | Op::OrganizationMemberAdd
            | Op::OrganizationMemberUpdate
            | Op::OrganizationMemberDelete
                if !self.licensed =>
            {
                Err(detail(
                    StatusCode::FORBIDDEN,
                    json!({"error": UNLICENSED_ORGANIZATIONS}),
                ))
            }
            Op::OrganizationNew => self.organization_new(body, now),
            Op::OrganizationInfo => self.organization_info(param(query, "organization_id")),
            Op::OrganizationUpdate => self.organization_update(body, now),
            Op::OrganizationDelete => self.organization_delete(&body, now),
            Op::OrganizationMemberAdd => self.organization_member_add(&body, now),
            Op::OrganizationMemberUpdate => self.organization_member_update(&body, now),
            Op::OrganizationMemberDelete => self.organization_member_delete(&body),
            Op::UserNew => self.user_new(body, now),
            Op::UserInfo => self.user_info(param(query, "user_id")),
            Op::UserDelete => self.user_delete(&body),
            Op::Liveliness | Op::Readiness => unreachable!("answered before authentication"),
        }
    }

    // ---- users (as far as organization members need them) --------------------

    fn user_new(&self, body: Map<String, Value>, now: i64) -> Result<Value, Answer> {
        for (name, kind) in USER_FIELDS {
            check_type(&body, name, *kind)?;
        }
        let user_id = body
            .get("user_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("{:032x}", now));
        let mut db = self.write();
        if db.users.contains_key(&user_id) {
            return Err(detail(
                StatusCode::CONFLICT,
                json!({"error": format!("User with id={user_id} already exists")}),
            ));
        }
        let mut fields = Map::new();
        fields.insert("user_id".into(), user_id.clone().into());
        set_fields(&mut fields, &body, USER_FIELDS);
        let user = User {
            fields,
            created: ms(now),
            updated: ms(now),
        };
        // `NewUserResponse`: no times, an empty `key` (`auto_create_key`).
        let mut answer = user.object();
        answer.insert("key".into(), "".into());
        answer.insert("created_at".into(), Value::Null);
        answer.insert("updated_at".into(), Value::Null);
        db.users.insert(user_id, user);
        Ok(Value::Object(answer))
    }

    fn user_info(&self, user_id: Option<&str>) -> Result<Value, Answer> {
        let Some(user_id) = user_id else {
            return Err(missing_query("user_id"));
        };
        let db = self.read();
        let Some(user) = db.users.get(user_id) else {
            return Err(detail(
                StatusCode::NOT_FOUND,
                json!({"error": format!("User {user_id} not found")}),
            ));
        };
        Ok(json!({"user_id": user_id, "user_info": user.object(), "keys": [], "teams": []}))
    }

    fn user_delete(&self, body: &Map<String, Value>) -> Result<Value, Answer> {
        let user_ids = string_list(body, "user_ids")?;
        let mut db = self.write();
        for user_id in &user_ids {
            if !db.users.contains_key(user_id) {
                return Err(detail(
                    StatusCode::NOT_FOUND,
                    json!({"error": format!("User not found, passed user_id={user_id}")}),
                ));
            }
        }
        for user_id in &user_ids {
            for organization in db.organizations.values_mut() {
                organization.members.remove(user_id);
            }
            db.users.remove(user_id);
        }
        Ok(json!(user_ids.len()))
    }

    // ---- organization members ---------------------------------------------

    /// The membership row `LiteLLM_OrganizationMembershipTable`.
    fn membership(
        db: &Db,
        organization: &Organization,
        user_id: &str,
        role: Option<&String>,
    ) -> Value {
        let id = organization.fields.get("organization_id").cloned();
        let user = db.users.get(user_id).map(|u| Value::Object(u.object()));
        let email = user.as_ref().and_then(|u| u.get("user_email")).cloned();
        json!({
            "user_id": user_id, "organization_id": id, "user_role": role, "spend": 0.0,
            "budget_id": null, "created_at": time(organization.updated, Zulu),
            "updated_at": time(organization.updated, Zulu), "user": user,
            "litellm_budget_table": null, "user_email": email,
        })
    }

    /// `organization_id` of a member route, or 422 as pydantic says it.
    fn member_organization(body: &Map<String, Value>) -> Result<String, Answer> {
        check_type(body, "organization_id", Kind::Str)?;
        body.get("organization_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| missing_field("organization_id", body))
    }

    /// A role of `ROLES_WITHIN_ORG`, or 422.
    fn member_role(role: Option<&Value>, loc: Value) -> Result<Option<String>, Answer> {
        match role {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(r)) if ROLES_WITHIN_ORG.contains(&r.as_str()) => Ok(Some(r.clone())),
            Some(other) => Err(detail(
                StatusCode::UNPROCESSABLE_ENTITY,
                json!([{"type": "literal_error", "loc": loc,
                        "msg": "Input should be 'org_admin', 'internal_user' or 'internal_user_viewer'",
                        "input": other}]),
            )),
        }
    }

    fn organization_member_add(
        &self,
        body: &Map<String, Value>,
        now: i64,
    ) -> Result<Value, Answer> {
        let organization_id = Self::member_organization(body)?;
        let members: Vec<Map<String, Value>> = match body.get("member") {
            Some(Value::Object(m)) => vec![m.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|i| i.as_object().cloned())
                .collect(),
            _ => return Err(missing_field("member", body)),
        };
        let mut wanted = Vec::new();
        for member in &members {
            let Some(role) =
                Self::member_role(member.get("role"), json!(["body", "member", "role"]))?
            else {
                return Err(missing_field("role", member));
            };
            let Some(user_id) = member.get("user_id").and_then(Value::as_str) else {
                // By `user_email`: not modelled.
                return Err(detail(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    json!([{"type": "value_error", "loc": ["body", "member"],
                            "msg": "Value error, Either user id or user email must be provided",
                            "input": member}]),
                ));
            };
            wanted.push((user_id.to_owned(), role));
        }
        let mut db = self.write();
        if !db.organizations.contains_key(&organization_id) {
            return Err(error(
                StatusCode::NOT_FOUND,
                &format!(
                    "{{'error': 'Organization not found for organization_id={organization_id}'}}"
                ),
                "auth_error",
                Value::from("None"),
            ));
        }
        let mut users = Vec::new();
        let mut memberships = Vec::new();
        for (user_id, role) in wanted {
            if !db.users.contains_key(&user_id) {
                // `get_new_internal_user_defaults`.
                let mut fields = Map::new();
                fields.insert("user_id".into(), user_id.clone().into());
                fields.insert("user_role".into(), "internal_user".into());
                let user = User {
                    fields,
                    created: ms(now),
                    updated: ms(now),
                };
                db.users.insert(user_id.clone(), user);
            }
            let organization = &db.organizations[&organization_id];
            if organization.members.contains_key(&user_id) {
                return Err(error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!(
                        "Authentication Error, Error adding member to organization={organization_id}: \
                         Unique constraint failed on the fields: (`user_id`,`organization_id`)"
                    ),
                    "auth_error",
                    Value::from("None"),
                ));
            }
            let organization = db.organizations.get_mut(&organization_id).expect("checked");
            organization
                .members
                .insert(user_id.clone(), Some(role.clone()));
            organization.updated = ms(now);
            let organization = &db.organizations[&organization_id];
            users.push(Value::Object(db.users[&user_id].object()));
            memberships.push(Self::membership(&db, organization, &user_id, Some(&role)));
        }
        Ok(
            json!({"organization_id": organization_id, "updated_users": users,
                  "updated_organization_memberships": memberships}),
        )
    }

    fn organization_member_update(
        &self,
        body: &Map<String, Value>,
        now: i64,
    ) -> Result<Value, Answer> {
        let organization_id = Self::member_organization(body)?;
        let role = Self::member_role(body.get("role"), json!(["body", "role"]))?;
        let user_id = body
            .get("user_id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut db = self.write();
        let Some(organization) = db.organizations.get_mut(&organization_id) else {
            return Err(detail(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("Organization not found for organization_id={organization_id}")}),
            ));
        };
        let Some(held) = organization.members.get_mut(user_id) else {
            return Err(detail(
                StatusCode::NOT_FOUND,
                json!({"error": format!("Member not found in organization for user_id={user_id}")}),
            ));
        };
        if role.is_some() {
            *held = role;
        }
        let role = held.clone();
        organization.updated = ms(now);
        let organization = &db.organizations[&organization_id];
        Ok(Self::membership(&db, organization, user_id, role.as_ref()))
    }

    fn organization_member_delete(&self, body: &Map<String, Value>) -> Result<Value, Answer> {
        let organization_id = Self::member_organization(body)?;
        let user_id = body
            .get("user_id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut db = self.write();
        let removed = db
            .organizations
            .get_mut(&organization_id)
            .and_then(|o| o.members.remove(user_id));
        let Some(role) = removed else {
            // Prisma's `RecordNotFoundError`, unhandled.
            return Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"error": {"message": "An operation failed because it depends on one or \
                       more records that were required but not found. Record to delete does not \
                       exist.", "type": "None", "param": "None", "code": "500"}}),
            ));
        };
        let organization = &db.organizations[&organization_id];
        Ok(Self::membership(&db, organization, user_id, role.as_ref()))
    }

    // ---- organizations ------------------------------------------------------

    fn organization_new(&self, body: Map<String, Value>, now: i64) -> Result<Value, Answer> {
        check_type(&body, "organization_id", Kind::Str)?;
        for (name, kind) in ORGANIZATION_FIELDS.iter().chain(BUDGET_FIELDS) {
            check_type(&body, name, *kind)?;
        }
        if !body.get("organization_alias").is_some_and(Value::is_string) {
            return Err(missing_field("organization_alias", &body));
        }
        if let Some(duration) = body.get("budget_duration").and_then(Value::as_str) {
            budget_reset_at(duration, now).map_err(bad_duration)?;
        }
        let organization_id = match body.get("organization_id") {
            Some(Value::String(id)) => id.clone(),
            _ => uuid4(),
        };
        let budget_id = uuid4();
        let Value::Object(mut fields) = json!({
            "organization_id": organization_id,
            "organization_alias": null,
            "budget_id": budget_id,
            "metadata": {},
            "models": [],
            "spend": 0.0,
            "model_spend": {},
            "created_by": "default_user_id",
            "updated_by": "default_user_id",
            "object_permission_id": null,
        }) else {
            unreachable!("an object literal")
        };
        set_fields(&mut fields, &body, ORGANIZATION_FIELDS);
        let Value::Object(mut budget) = json!({
            "budget_id": budget_id,
            "soft_budget": null, "max_budget": null, "max_parallel_requests": null,
            "tpm_limit": null, "rpm_limit": null, "tpd_limit": null,
            "model_max_budget": null, "budget_duration": null, "allowed_models": null,
            "temp_budget_increase": null, "temp_budget_expiry": null,
        }) else {
            unreachable!("an object literal")
        };
        set_fields(&mut budget, &body, BUDGET_FIELDS);
        let mut db = self.write();
        if db.organizations.contains_key(&organization_id) {
            // Prisma's unique constraint, through LiteLLM's generic handler.
            return Err(detail(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"error": "Unique constraint failed on the fields: (`organization_id`)"}),
            ));
        }
        let created = ms(now);
        let organization = Organization {
            fields,
            budget,
            members: BTreeMap::new(),
            created,
            updated: created,
        };
        let mut answer = organization.object(&db);
        answer.remove("teams");
        answer.remove("members");
        db.organizations.insert(organization_id, organization);
        Ok(Value::Object(answer))
    }

    fn organization_info(&self, organization_id: Option<&str>) -> Result<Value, Answer> {
        let Some(organization_id) = organization_id else {
            return Err(missing_query("organization_id"));
        };
        let db = self.read();
        match db.organizations.get(organization_id) {
            Some(organization) => Ok(Value::Object(organization.object(&db))),
            None => Err(detail(
                StatusCode::NOT_FOUND,
                json!({"error": "Organization not found"}),
            )),
        }
    }

    fn organization_update(&self, body: Map<String, Value>, now: i64) -> Result<Value, Answer> {
        for (name, kind) in ORGANIZATION_FIELDS.iter().chain(BUDGET_FIELDS) {
            check_type(&body, name, *kind)?;
        }
        let Some(organization_id) = body
            .get("organization_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Err(detail(
                StatusCode::BAD_REQUEST,
                json!({"error": "organization_id is required"}),
            ));
        };
        let organization_id = organization_id.as_str();
        if let Some(duration) = body.get("budget_duration").and_then(Value::as_str) {
            budget_reset_at(duration, now).map_err(bad_duration)?;
        }
        let mut db = self.write();
        let Some(organization) = db.organizations.get_mut(organization_id) else {
            // A ValueError in LiteLLM: its generic 500.
            return Err(detail(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"error": format!(
                    "Organization not found for organization_id={organization_id}"
                )}),
            ));
        };
        let mut body = body;
        // Merged into what is stored (`update_dictionary`), never replaced.
        if let Some(Value::Object(update)) = body.remove("metadata") {
            let metadata = organization
                .fields
                .entry("metadata")
                .or_insert_with(|| json!({}));
            if !metadata.is_object() {
                *metadata = json!({});
            }
            if let Value::Object(stored) = metadata {
                stored.extend(update);
            }
        }
        set_fields(&mut organization.fields, &body, ORGANIZATION_FIELDS);
        // Only the limits sent (a sent null clears one).
        for (name, kind) in BUDGET_FIELDS {
            if let Some(value) = body.get(*name) {
                let mut one = Map::new();
                one.insert((*name).to_owned(), value.clone());
                if value.is_null() {
                    organization.budget.insert((*name).to_owned(), Value::Null);
                } else {
                    set_fields(&mut organization.budget, &one, &[(*name, *kind)]);
                }
            }
        }
        organization.updated = ms(now);
        let organization = &db.organizations[organization_id];
        Ok(Value::Object(organization.object(&db)))
    }

    fn organization_delete(&self, body: &Map<String, Value>, now: i64) -> Result<Value, Answer> {
        let organization_ids = string_list(body, "organization_ids")?;
        let mut db = self.write();
        let mut deleted = Vec::new();
        let deleted_at = ms(now);
        for organization_id in &organization_ids {
            // Its teams (and their keys) go first, then the organization.
            let teams: Vec<String> = db
                .teams
                .iter()
                .filter(|(_, team)| {
                    team.fields.get("organization_id").and_then(Value::as_str)
                        == Some(organization_id.as_str())
                })
                .map(|(id, _)| id.clone())
                .collect();
            for team_id in teams {
                db.teams.remove(&team_id);
                for token in db.team_keys.remove(&team_id).unwrap_or_default() {
                    db.archive(&token, deleted_at);
                }
            }
            let Some(organization) = db.organizations.get(organization_id) else {
                return Err(detail(
                    StatusCode::NOT_FOUND,
                    json!({"error": format!("Organization={organization_id} not found")}),
                ));
            };
            deleted.push(Value::Object(organization.object(&db)));
            db.organizations.remove(organization_id);
        }
        Ok(Value::Array(deleted))
    }

    /// `_check_org_team_limits`: a team of an organization gets no model
    /// and no limit beyond the organization's (`/team/new` answers 400 for
    /// an organization that does not exist, `/team/update` 404).
    fn check_team_in_organization(
        db: &Db,
        body: &Map<String, Value>,
        organization_id: &str,
        missing: StatusCode,
    ) -> Result<(), Answer> {
        let Some(organization) = db.organizations.get(organization_id) else {
            return Err(match missing {
                StatusCode::BAD_REQUEST => wrapped(
                    StatusCode::BAD_REQUEST,
                    "error",
                    &format!("Organization not found for organization_id={organization_id}"),
                    "internal_server_error",
                ),
                status => detail(
                    status,
                    json!({"error": format!(
                        "Organization not found, passed organization_id={organization_id}"
                    )}),
                ),
            });
        };
        let allowed: Vec<&str> = organization
            .fields
            .get("models")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !allowed.is_empty() && !allowed.contains(&"all-proxy-models") {
            let models = body.get("models").and_then(Value::as_array);
            for model in models.into_iter().flatten().filter_map(Value::as_str) {
                if !allowed.contains(&model) {
                    return Err(detail(
                        StatusCode::BAD_REQUEST,
                        json!({"error": format!(
                            "Model '{model}' not in organization's allowed models. Organization \
                             allowed models={allowed:?}. Organization: {organization_id}"
                        )}),
                    ));
                }
            }
        }
        for (field, name) in [
            ("max_budget", "max_budget"),
            ("tpm_limit", "tpm_limit"),
            ("rpm_limit", "rpm_limit"),
        ] {
            let want = body.get(field).and_then(Value::as_f64);
            let limit = organization.budget.get(field).and_then(Value::as_f64);
            if let (Some(want), Some(limit)) = (want, limit) {
                if want > limit {
                    return Err(detail(
                        StatusCode::BAD_REQUEST,
                        json!({"error": format!(
                            "Team {name} ({want}) exceeds organization's {name} ({limit}). \
                             Organization: {organization_id}"
                        )}),
                    ));
                }
            }
        }
        Ok(())
    }

    // ---- teams --------------------------------------------------------------

    fn team_new(&self, mut body: Map<String, Value>, now: i64) -> Result<Value, Answer> {
        check_fields(&body, TEAM_FIELDS)?;
        model_budgets_gate(self.licensed, &body, true)?;
        metadata_settings(self.licensed, &mut body, None)?;
        if let Some(organization_id) = body.get("organization_id").and_then(Value::as_str) {
            Self::check_team_in_organization(
                &self.read(),
                &body,
                organization_id,
                StatusCode::BAD_REQUEST,
            )?;
        }
        let team_id = match body.remove("team_id") {
            Some(Value::String(id)) => id,
            _ => uuid4(),
        };
        let budget_reset = match body.get("budget_duration").and_then(Value::as_str) {
            Some(duration) => Some(budget_reset_at(duration, now).map_err(bad_duration)?),
            None => None,
        };
        let mut fields = team_defaults(&team_id);
        set_fields(&mut fields, &body, TEAM_FIELDS);
        let created = ms(now);
        let mut db = self.write();
        if db.teams.contains_key(&team_id) {
            return Err(wrapped(
                StatusCode::BAD_REQUEST,
                "error",
                &format!("Team id = {team_id} already exists. Please use a different team id."),
                "internal_server_error",
            ));
        }
        let team = Team {
            fields,
            created,
            updated: created,
            budget_reset,
        };
        let answer = Value::Object(team_object(&team));
        db.teams.insert(team_id, team);
        Ok(answer)
    }

    fn team_info(&self, caller: &Caller, team_id: Option<&str>) -> Result<Value, Answer> {
        let Some(team_id) = team_id.filter(|id| !id.is_empty()) else {
            return Err(wrapped(
                StatusCode::UNPROCESSABLE_ENTITY,
                "message",
                "Malformed request. No team id passed in.",
                "auth_error",
            ));
        };
        let db = self.read();
        let Some(team) = db.teams.get(team_id) else {
            return Err(wrapped(
                StatusCode::NOT_FOUND,
                "message",
                &format!("Team not found, passed team id: {team_id}."),
                "auth_error",
            ));
        };
        if let Caller::Key { team_id: own } = caller {
            if own.as_deref() != Some(team_id) {
                return Err(wrapped(
                    StatusCode::FORBIDDEN,
                    "error",
                    &format!(
                        "Team key for team={} not authorized to access this team={team_id}",
                        own.as_deref().unwrap_or("None")
                    ),
                    "auth_error",
                ));
            }
        }
        let mut info = team_object(team);
        info.insert("team_member_budget_table".into(), Value::Null);
        info.insert("model_max_budget_usage".into(), json!({}));
        info.insert("caller_edit_access".into(), json!({"kind": "unrestricted"}));
        let keys: Vec<Value> = db
            .team_keys
            .get(team_id)
            .into_iter()
            .flatten()
            .filter_map(|token| {
                db.keys
                    .get(token)
                    .map(|key| Value::Object(key.in_team(token)))
            })
            .collect();
        Ok(json!({
            "team_id": team_id,
            "team_info": info,
            "keys": keys,
            "team_memberships": [{
                "user_id": "default_user_id",
                "team_id": team_id,
                "budget_id": null,
                "spend": 0.0,
                "total_spend": 0.0,
                "litellm_budget_table": null,
                "budget_source": "none",
            }],
        }))
    }

    fn team_update(&self, mut body: Map<String, Value>, now: i64) -> Result<Value, Answer> {
        check_fields(&body, TEAM_FIELDS)?;
        model_budgets_gate(self.licensed, &body, true)?;
        let Some(team_id) = body
            .get("team_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Err(missing_field("team_id", &body));
        };
        let team_id = team_id.as_str();
        let mut db = self.write();
        let organization_id = body
            .get("organization_id")
            .and_then(Value::as_str)
            .or_else(|| {
                db.teams
                    .get(team_id)
                    .and_then(|t| t.fields.get("organization_id"))
                    .and_then(Value::as_str)
            })
            .map(str::to_owned);
        if let (Some(organization_id), true) = (organization_id, db.teams.contains_key(team_id)) {
            Self::check_team_in_organization(&db, &body, &organization_id, StatusCode::NOT_FOUND)?;
        }
        let Some(team) = db.teams.get_mut(team_id) else {
            return Err(wrapped(
                StatusCode::NOT_FOUND,
                "error",
                &format!("Team not found, passed team_id={team_id}"),
                "internal_server_error",
            ));
        };
        metadata_settings(self.licensed, &mut body, team.fields.get("metadata"))?;
        if let Some(duration) = body.get("budget_duration").and_then(Value::as_str) {
            let stored = team.fields.get("budget_duration").and_then(Value::as_str);
            if !keeps_due_reset(duration, stored, team.budget_reset, now) {
                team.budget_reset = Some(budget_reset_at(duration, now).map_err(bad_duration)?);
            }
        }
        set_fields(&mut team.fields, &body, TEAM_FIELDS);
        team.updated = ms(now);
        Ok(json!({"team_id": team_id, "data": team_object(team)}))
    }

    fn team_delete(&self, body: &Map<String, Value>, now: i64) -> Result<Value, Answer> {
        let team_ids = string_list(body, "team_ids")?;
        if team_ids.is_empty() {
            return Err(detail(
                StatusCode::BAD_REQUEST,
                json!({"error": "No team id passed in"}),
            ));
        }
        let mut db = self.write();
        // Every team is looked up before any is deleted.
        if let Some(missing) = team_ids.iter().find(|id| !db.teams.contains_key(*id)) {
            return Err(detail(
                StatusCode::NOT_FOUND,
                json!({"error": format!("Team not found, passed team_id={missing}")}),
            ));
        }
        let deleted_at = ms(now);
        for team_id in &team_ids {
            db.teams.remove(team_id);
            for token in db.team_keys.remove(team_id).unwrap_or_default() {
                db.archive(&token, deleted_at);
            }
        }
        Ok(json!({"deleted_teams": team_ids}))
    }

    // ---- keys ---------------------------------------------------------------

    fn key_generate(&self, mut body: Map<String, Value>, now: i64) -> Result<Value, Answer> {
        check_fields(&body, KEY_FIELDS)?;
        model_budgets_gate(self.licensed, &body, false)?;
        metadata_settings(self.licensed, &mut body, None)?;
        check_type(&body, "key", Kind::Str)?;
        let alias = body
            .get("key_alias")
            .and_then(Value::as_str)
            .map(str::to_owned);
        check_alias(alias.as_deref())?;
        // Validation that needs no lock first, in LiteLLM's order (the alias
        // check comes before the key format, see below).
        let key = match body.remove("key") {
            Some(Value::String(key)) => Some(key),
            _ => None,
        };
        let budget_reset = match body.get("budget_duration").and_then(Value::as_str) {
            Some(duration) => Some(budget_reset_at(duration, now).map_err(bad_duration)?),
            None => None,
        };
        let expires = match body.get("duration").and_then(Value::as_str) {
            Some(duration) => Some(now + duration_micros(duration, now).map_err(bad_duration)?),
            None => None,
        };

        let mut db = self.write();
        if let Some(alias) = &alias {
            if db.aliases.contains_key(alias) {
                return Err(alias_taken(alias));
            }
        }
        if let Some(key) = &key {
            if !key.starts_with("sk-") {
                let masked = if key.chars().count() > 8 {
                    let chars: Vec<char> = key.chars().collect();
                    let head: String = chars[..4].iter().collect();
                    let tail: String = chars[chars.len() - 4..].iter().collect();
                    format!("{head}****{tail}")
                } else {
                    "****".to_owned()
                };
                return Err(wrapped(
                    StatusCode::BAD_REQUEST,
                    "error",
                    &format!(
                        "Invalid key format. LiteLLM Virtual Key must start with 'sk-'. \
                         Received: {masked}"
                    ),
                    "internal_server_error",
                ));
            }
            if key.chars().count() < MINIMUM_CUSTOM_KEY_LENGTH {
                return Err(wrapped(
                    StatusCode::BAD_REQUEST,
                    "error",
                    &format!(
                        "Invalid key format. LiteLLM Virtual Key must be at least \
                         {MINIMUM_CUSTOM_KEY_LENGTH} characters long."
                    ),
                    "internal_server_error",
                ));
            }
        }
        let key = key.unwrap_or_else(new_key);
        let token = sha256_hex(&key);
        let key_name = key_name(&key);

        // An existing key is upserted with an empty update: 200, nothing
        // changes, and the answer echoes the request.
        if let Some(existing) = db.keys.get(&token) {
            return Ok(generated(
                &body,
                &key,
                &token,
                &key_name,
                existing.created,
                existing.updated,
                expires,
            ));
        }
        let created = ms(now);
        let mut fields = key_defaults(&key_name);
        set_fields(&mut fields, &body, KEY_FIELDS);
        let stored = Key {
            fields,
            created,
            updated: created,
            settings_updated: None,
            budget_reset,
            expires,
        };
        db.insert(token.clone(), stored);
        Ok(generated(
            &body, &key, &token, &key_name, created, created, expires,
        ))
    }

    fn key_info(&self, key: Option<&str>) -> Result<Value, Answer> {
        let not_found = || {
            error(
                StatusCode::NOT_FOUND,
                "Key not found in database",
                "not_found_error",
                Value::from("key"),
            )
        };
        let Some(key) = key.filter(|k| !k.is_empty()) else {
            return Err(not_found());
        };
        let token = token_for(key);
        let db = self.read();
        if let Some(live) = db.keys.get(&token) {
            let mut info = live.info();
            info.insert("status".into(), "active".into());
            return Ok(json!({"key": key, "info": info}));
        }
        if let Some((archived, deleted_at)) = db.deleted.get(&token) {
            let mut info = archived.info();
            info.insert("deleted_at".into(), time(*deleted_at, Offset));
            info.insert("deleted_by".into(), "default_user_id".into());
            info.insert(
                "deleted_by_api_key".into(),
                "litellm_proxy_master_key".into(),
            );
            info.insert("litellm_changed_by".into(), Value::Null);
            info.insert("status".into(), "deleted".into());
            return Ok(json!({"key": key, "info": info}));
        }
        Err(not_found())
    }

    fn key_update(&self, mut body: Map<String, Value>, now: i64) -> Result<Value, Answer> {
        check_fields(&body, KEY_FIELDS)?;
        model_budgets_gate(self.licensed, &body, false)?;
        let Some(key) = body.get("key").and_then(Value::as_str) else {
            return Err(missing_field("key", &body));
        };
        let token = token_for(key);
        let mut db = self.write();
        let Some(existing) = db.keys.get(&token) else {
            return Err(error(
                StatusCode::NOT_FOUND,
                "Key not found.",
                "not_found_error",
                Value::from("key"),
            ));
        };
        if let Some(team_id) = body.get("team_id").and_then(Value::as_str) {
            if !db.teams.contains_key(team_id) {
                return Err(wrapped(
                    StatusCode::NOT_FOUND,
                    "error",
                    &format!(
                        "Team doesn't exist in db. Team={team_id}. Create team via `/team/new` call."
                    ),
                    "auth_error",
                ));
            }
        }
        metadata_settings(self.licensed, &mut body, existing.fields.get("metadata"))?;
        let alias = body.get("key_alias").and_then(Value::as_str);
        if alias != existing.alias() {
            check_alias(alias)?;
        }
        if let Some(alias) = alias {
            if db.aliases.get(alias).is_some_and(|holder| *holder != token) {
                return Err(alias_taken(alias));
            }
        }
        let mut updated = existing.clone();
        if let Some(duration) = body.get("budget_duration").and_then(Value::as_str) {
            let stored = updated
                .fields
                .get("budget_duration")
                .and_then(Value::as_str);
            if !keeps_due_reset(duration, stored, updated.budget_reset, now) {
                updated.budget_reset = Some(budget_reset_at(duration, now).map_err(bad_duration)?);
            }
        }
        if let Some(duration) = body.get("duration").and_then(Value::as_str) {
            updated.expires = Some(now + duration_micros(duration, now).map_err(bad_duration)?);
        }
        set_fields(&mut updated.fields, &body, KEY_FIELDS);
        updated.updated = ms(now);
        updated.settings_updated = Some(ms(now));
        let mut answer = Map::new();
        answer.insert("key".into(), token.clone().into());
        answer.insert("token".into(), token.clone().into());
        answer.extend(updated.info());
        db.insert(token, updated);
        Ok(Value::Object(answer))
    }

    fn key_delete(&self, body: &Map<String, Value>, now: i64) -> Result<Value, Answer> {
        let keys = string_list(body, "keys")?;
        let mut db = self.write();
        let tokens: Vec<String> = keys.iter().map(|key| token_for(key)).collect();
        if !tokens.iter().any(|token| db.keys.contains_key(token)) {
            return Err(wrapped(
                StatusCode::NOT_FOUND,
                "error",
                "No keys found",
                "internal_server_error",
            ));
        }
        let deleted_at = ms(now);
        for token in &tokens {
            db.archive(token, deleted_at);
        }
        Ok(json!({"deleted_keys": keys}))
    }

    fn key_list(&self, query: &[(String, String)]) -> Result<Value, Answer> {
        let page = query_int(query, "page", 1, 1, i64::MAX)?;
        let size = query_int(query, "size", 10, 1, 100)?;
        let db = self.read();
        let mut found: Vec<(&String, &Key)> = match param(query, "key_alias") {
            Some(alias) => db
                .aliases
                .get(alias)
                .and_then(|token| db.keys.get_key_value(token))
                .into_iter()
                .collect(),
            None => db.keys.iter().collect(),
        };
        if let Some(team_id) = param(query, "team_id") {
            found.retain(|(_, key)| key.team_id() == Some(team_id));
        }
        // Newest first, LiteLLM's default order; by token where asked (the
        // observing by pages asks `sort_by=token&sort_order=asc`).
        match (param(query, "sort_by"), param(query, "sort_order")) {
            (Some("token"), Some("desc")) => found.sort_by(|a, b| b.0.cmp(a.0)),
            (Some("token"), _) => found.sort_by(|a, b| a.0.cmp(b.0)),
            _ => found.sort_by(|a, b| b.1.created.cmp(&a.1.created).then(a.0.cmp(b.0))),
        }
        let total = found.len() as i64;
        let skip = usize::try_from((page - 1).saturating_mul(size)).unwrap_or(usize::MAX);
        let page_of = found.into_iter().skip(skip).take(size as usize);
        // `return_full_object=true`: each key's row (times with `Z`), as in
        // `/team/info`'s `keys`; otherwise the tokens.
        let keys: Vec<Value> = if param(query, "return_full_object") == Some("true") {
            page_of
                .map(|(token, key)| Value::Object(key.in_team(token)))
                .collect()
        } else {
            page_of
                .map(|(token, _)| Value::from(token.as_str()))
                .collect()
        };
        Ok(json!({
            "keys": keys,
            "total_count": total,
            "current_page": page,
            "total_pages": (total + size - 1) / size,
        }))
    }

    /// `/v2/team/list`: the teams' rows without what `/team/info` adds
    /// (member defaults, members' budgets), by `page` and `page_size`, in
    /// the order of `sort_by=team_id` where asked (by creation otherwise).
    fn team_list(&self, query: &[(String, String)]) -> Result<Value, Answer> {
        let page = query_int(query, "page", 1, 1, i64::MAX)?;
        let size = query_int(query, "page_size", 10, 1, 100)?;
        let db = self.read();
        let mut found: Vec<(&String, &Team)> = db.teams.iter().collect();
        // `search`: the id by prefix (`search_team_id_match=prefix`) or
        // where it holds it, or the alias holding it, case aside.
        if let Some(search) = param(query, "search").filter(|s| !s.is_empty()) {
            let by_prefix = param(query, "search_team_id_match") == Some("prefix");
            let lower = search.to_lowercase();
            found.retain(|(team_id, team)| {
                let id_matches = if by_prefix {
                    team_id.starts_with(search)
                } else {
                    team_id.contains(search)
                };
                let alias_matches = team
                    .fields
                    .get("team_alias")
                    .and_then(Value::as_str)
                    .is_some_and(|alias| alias.to_lowercase().contains(&lower));
                id_matches || alias_matches
            });
        }
        match (param(query, "sort_by"), param(query, "sort_order")) {
            (Some("team_id"), Some("desc")) => found.sort_by(|a, b| b.0.cmp(a.0)),
            (Some("team_id"), _) => found.sort_by(|a, b| a.0.cmp(b.0)),
            _ => found.sort_by(|a, b| b.1.created.cmp(&a.1.created).then(a.0.cmp(b.0))),
        }
        let total = found.len() as i64;
        let skip = usize::try_from((page - 1).saturating_mul(size)).unwrap_or(usize::MAX);
        let teams: Vec<Value> = found
            .into_iter()
            .skip(skip)
            .take(size as usize)
            .map(|(_, team)| Value::Object(team_object(team)))
            .collect();
        Ok(json!({
            "teams": teams,
            "total": total,
            "page": page,
            "page_size": size,
            "total_pages": (total + size - 1) / size,
        }))
    }
}

impl Db {
    /// Stores a live key under `token`, keeping the alias and team indexes.
    fn insert(&mut self, token: String, key: Key) {
        if let Some(old) = self.keys.remove(&token) {
            self.unindex(&token, &old);
        }
        if let Some(alias) = key.alias() {
            self.aliases.insert(alias.to_owned(), token.clone());
        }
        if let Some(team_id) = key.team_id() {
            self.team_keys
                .entry(team_id.to_owned())
                .or_default()
                .insert(token.clone());
        }
        self.keys.insert(token, key);
    }

    fn unindex(&mut self, token: &str, key: &Key) {
        if let Some(alias) = key.alias() {
            if self.aliases.get(alias).is_some_and(|t| t == token) {
                self.aliases.remove(alias);
            }
        }
        if let Some(team_id) = key.team_id() {
            if let Some(tokens) = self.team_keys.get_mut(team_id) {
                tokens.remove(token);
                if tokens.is_empty() {
                    self.team_keys.remove(team_id);
                }
            }
        }
    }

    /// Moves a live key to the archive of deleted keys.
    fn archive(&mut self, token: &str, deleted_at: i64) {
        if let Some(key) = self.keys.remove(token) {
            self.unindex(token, &key);
            self.deleted.insert(token.to_owned(), (key, deleted_at));
        }
    }
}

// ---- routes -----------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    TeamNew,
    TeamInfo,
    TeamUpdate,
    TeamDelete,
    KeyGenerate,
    KeyInfo,
    KeyUpdate,
    KeyDelete,
    KeyList,
    Liveliness,
    Readiness,
    OrganizationNew,
    OrganizationInfo,
    OrganizationUpdate,
    OrganizationDelete,
    OrganizationMemberAdd,
    OrganizationMemberUpdate,
    OrganizationMemberDelete,
    UserNew,
    UserInfo,
    UserDelete,
    TeamList,
}

struct Route {
    method: Method,
    path: &'static str,
    name: &'static str,
    op: Op,
}

static ROUTES: std::sync::LazyLock<[Route; 22]> = std::sync::LazyLock::new(|| {
    let route = |method: Method, path, name, op| Route {
        method,
        path,
        name,
        op,
    };
    [
        route(Method::POST, "/team/new", OPERATIONS[0], Op::TeamNew),
        route(Method::GET, "/team/info", OPERATIONS[1], Op::TeamInfo),
        route(Method::POST, "/team/update", OPERATIONS[2], Op::TeamUpdate),
        route(Method::POST, "/team/delete", OPERATIONS[3], Op::TeamDelete),
        route(
            Method::POST,
            "/key/generate",
            OPERATIONS[4],
            Op::KeyGenerate,
        ),
        route(Method::GET, "/key/info", OPERATIONS[5], Op::KeyInfo),
        route(Method::POST, "/key/update", OPERATIONS[6], Op::KeyUpdate),
        route(Method::POST, "/key/delete", OPERATIONS[7], Op::KeyDelete),
        route(Method::GET, "/key/list", OPERATIONS[8], Op::KeyList),
        route(
            Method::GET,
            "/health/liveliness",
            OPERATIONS[9],
            Op::Liveliness,
        ),
        route(
            Method::GET,
            "/health/readiness",
            OPERATIONS[10],
            Op::Readiness,
        ),
        route(
            Method::POST,
            "/organization/new",
            OPERATIONS[11],
            Op::OrganizationNew,
        ),
        route(
            Method::GET,
            "/organization/info",
            OPERATIONS[12],
            Op::OrganizationInfo,
        ),
        route(
            Method::PATCH,
            "/organization/update",
            OPERATIONS[13],
            Op::OrganizationUpdate,
        ),
        route(
            Method::DELETE,
            "/organization/delete",
            OPERATIONS[14],
            Op::OrganizationDelete,
        ),
        route(
            Method::POST,
            "/organization/member_add",
            OPERATIONS[15],
            Op::OrganizationMemberAdd,
        ),
        route(
            Method::PATCH,
            "/organization/member_update",
            OPERATIONS[16],
            Op::OrganizationMemberUpdate,
        ),
        route(
            Method::DELETE,
            "/organization/member_delete",
            OPERATIONS[17],
            Op::OrganizationMemberDelete,
        ),
        route(Method::POST, "/user/new", OPERATIONS[18], Op::UserNew),
        route(Method::GET, "/user/info", OPERATIONS[19], Op::UserInfo),
        route(Method::POST, "/user/delete", OPERATIONS[20], Op::UserDelete),
        route(Method::GET, "/v2/team/list", OPERATIONS[21], Op::TeamList),
    ]
});

// ---- fields -----------------------------------------------------------------

#[derive(Clone, Copy)]
enum Kind {
    Str,
    Strs,
    Float,
    Int,
    Bool,
    Object,
}

/// The fields of `/team/new` and `/team/update` that are stored. LiteLLM
/// accepts `max_parallel_requests` and drops it (the team keeps `null`), so
/// it is not here; other unknown fields are ignored as LiteLLM ignores them.
const TEAM_FIELDS: &[(&str, Kind)] = &[
    ("team_alias", Kind::Str),
    ("models", Kind::Strs),
    ("max_budget", Kind::Float),
    ("soft_budget", Kind::Float),
    ("budget_duration", Kind::Str),
    ("tpm_limit", Kind::Int),
    ("rpm_limit", Kind::Int),
    ("blocked", Kind::Bool),
    ("metadata", Kind::Object),
    ("model_max_budget", Kind::Object),
    ("organization_id", Kind::Str),
];

/// The open-source proxy's answer (403, `detail.error`) to every
/// `/organization/*` route.
pub const UNLICENSED_ORGANIZATIONS: &str = "Organizations are only available for LiteLLM \
     Enterprise users. You must be a LiteLLM Enterprise user to use this feature. If you have a \
     license please set `LITELLM_LICENSE` in your env. Get a 7 day trial key here: \
     https://www.litellm.ai/enterprise#trial. \nPricing: https://www.litellm.ai/#pricing";

/// `ROLES_WITHIN_ORG` of `proxy/_types.py`.
const ROLES_WITHIN_ORG: [&str; 3] = ["org_admin", "internal_user", "internal_user_viewer"];

/// The fields of `/user/new` that are kept.
const USER_FIELDS: &[(&str, Kind)] = &[
    ("user_email", Kind::Str),
    ("user_alias", Kind::Str),
    ("user_role", Kind::Str),
    ("models", Kind::Strs),
    ("max_budget", Kind::Float),
    ("budget_duration", Kind::Str),
    ("tpm_limit", Kind::Int),
    ("rpm_limit", Kind::Int),
    ("max_parallel_requests", Kind::Int),
    ("metadata", Kind::Object),
];

/// The organization's own columns of `/organization/new|update`.
const ORGANIZATION_FIELDS: &[(&str, Kind)] = &[
    ("organization_alias", Kind::Str),
    ("models", Kind::Strs),
    ("metadata", Kind::Object),
];

/// The fields of `/organization/new|update` kept in the organization's
/// budget row (`LiteLLM_BudgetTable`).
const BUDGET_FIELDS: &[(&str, Kind)] = &[
    ("max_budget", Kind::Float),
    ("soft_budget", Kind::Float),
    ("budget_duration", Kind::Str),
    ("tpm_limit", Kind::Int),
    ("rpm_limit", Kind::Int),
    ("max_parallel_requests", Kind::Int),
];

impl Organization {
    /// `LiteLLM_OrganizationTableWithMembers`: the columns, the budget row,
    /// the members (with their users) and the teams in it.
    fn object(&self, db: &Db) -> Map<String, Value> {
        let mut object = self.fields.clone();
        let id = object
            .get("organization_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut teams: Vec<(&String, &Team)> = db
            .teams
            .iter()
            .filter(|(_, t)| t.fields.get("organization_id").and_then(Value::as_str) == Some(&id))
            .collect();
        teams.sort_by_key(|(team_id, _)| team_id.as_str());
        object.insert(
            "litellm_budget_table".into(),
            Value::Object(self.budget.clone()),
        );
        let members = self
            .members
            .iter()
            .map(|(user_id, role)| State::membership(db, self, user_id, role.as_ref()))
            .collect();
        object.insert("members".into(), Value::Array(members));
        object.insert(
            "teams".into(),
            Value::Array(
                teams
                    .into_iter()
                    .map(|(_, team)| Value::Object(team_object(team)))
                    .collect(),
            ),
        );
        object.insert("created_at".into(), time(self.created, Zulu));
        object.insert("updated_at".into(), time(self.updated, Zulu));
        object
    }
}

/// The settings of `/key/generate` and `/key/update` that are stored.
const KEY_FIELDS: &[(&str, Kind)] = &[
    ("key_alias", Kind::Str),
    ("team_id", Kind::Str),
    ("budget_id", Kind::Str),
    ("models", Kind::Strs),
    ("max_budget", Kind::Float),
    ("budget_duration", Kind::Str),
    ("tpm_limit", Kind::Int),
    ("rpm_limit", Kind::Int),
    ("max_parallel_requests", Kind::Int),
    ("blocked", Kind::Bool),
    ("metadata", Kind::Object),
    ("model_max_budget", Kind::Object),
];

fn team_defaults(team_id: &str) -> Map<String, Value> {
    let Value::Object(fields) = json!({
        "team_alias": null,
        "team_id": team_id,
        "organization_id": null,
        "admins": [],
        "members": [],
        "members_with_roles": [{"user_id": "default_user_id", "user_email": null, "role": "admin"}],
        "team_member_permissions": [],
        "metadata": {},
        "tpm_limit": null,
        "rpm_limit": null,
        "tpd_limit": null,
        "max_budget": null,
        "soft_budget": null,
        "budget_duration": null,
        "budget_limits": null,
        "models": [],
        "blocked": false,
        "router_settings": {},
        "access_group_ids": [],
        "default_team_member_models": [],
        "spend": 0.0,
        "max_parallel_requests": null,
        "model_id": null,
        "model_spend": {},
        "model_max_budget": {},
        "policies": [],
        "allow_team_guardrail_config": false,
        "litellm_model_table": null,
        "object_permission": null,
        "object_permission_id": null,
    }) else {
        unreachable!("an object literal")
    };
    fields
}

fn team_object(team: &Team) -> Map<String, Value> {
    let mut object = team.fields.clone();
    object.insert("budget_reset_at".into(), opt_time(team.budget_reset, Zulu));
    object.insert("updated_at".into(), time(team.updated, Zulu));
    object.insert("created_at".into(), time(team.created, Zulu));
    object
}

fn key_defaults(key_name: &str) -> Map<String, Value> {
    let Value::Object(fields) = json!({
        "key_name": key_name,
        "key_alias": null,
        "soft_budget_cooldown": false,
        "spend": 0.0,
        "total_spend": 0.0,
        "models": [],
        "aliases": {},
        "config": {},
        "router_settings": {},
        "user_id": null,
        "team_id": null,
        "agent_id": null,
        "project_id": null,
        "permissions": {},
        "max_parallel_requests": null,
        "metadata": {},
        "blocked": null,
        "tpm_limit": null,
        "rpm_limit": null,
        "tpd_limit": null,
        "max_budget": null,
        "budget_duration": null,
    }) else {
        unreachable!("an object literal")
    };
    // In two literals: one would pass `json!`'s recursion limit.
    let Value::Object(more) = json!({
        "allowed_cache_controls": [],
        "allowed_routes": [],
        "key_type": "default",
        "policies": [],
        "access_group_ids": [],
        "model_spend": {},
        "model_max_budget": {},
        "budget_fallbacks": {},
        "budget_id": null,
        "organization_id": null,
        "object_permission_id": null,
        "created_by": "default_user_id",
        "updated_by": "default_user_id",
        "last_active": null,
        "rotation_count": 0,
        "auto_rotate": false,
        "rotation_interval": null,
        "last_rotation_at": null,
        "key_rotation_at": null,
        "budget_limits": null,
        "litellm_budget_table": null,
        "object_permission": null,
    }) else {
        unreachable!("an object literal")
    };
    let mut fields = fields;
    fields.extend(more);
    fields
}

/// `/key/generate`'s answer: the request's settings echoed (not the stored
/// ones: for an existing key they differ), the key, its token and times.
fn generated(
    body: &Map<String, Value>,
    key: &str,
    token: &str,
    key_name: &str,
    created: i64,
    updated: i64,
    expires: Option<i64>,
) -> Value {
    let mut answer = Map::new();
    for (name, default) in [
        ("key_alias", Value::Null),
        ("duration", Value::Null),
        ("models", json!([])),
        ("spend", json!(0.0)),
        ("max_budget", Value::Null),
        ("user_id", Value::Null),
        ("team_id", Value::Null),
        ("max_parallel_requests", Value::Null),
        ("metadata", json!({})),
        ("tpm_limit", Value::Null),
        ("rpm_limit", Value::Null),
        ("budget_duration", Value::Null),
        ("blocked", Value::Null),
        ("budget_id", Value::Null),
    ] {
        let sent = body.get(name).filter(|v| !v.is_null()).cloned();
        let value = match (name, sent) {
            ("max_budget", Some(Value::Number(n))) => json!(n.as_f64()),
            (_, Some(value)) => value,
            (_, None) => default,
        };
        answer.insert(name.into(), value);
    }
    answer.insert("key".into(), key.into());
    answer.insert("key_name".into(), key_name.into());
    answer.insert("key_type".into(), "default".into());
    answer.insert("expires".into(), opt_time(expires, Zulu));
    answer.insert("token_id".into(), token.into());
    answer.insert("token".into(), token.into());
    answer.insert("created_by".into(), "default_user_id".into());
    answer.insert("updated_by".into(), "default_user_id".into());
    answer.insert("created_at".into(), time(created, Zulu));
    answer.insert("updated_at".into(), time(updated, Zulu));
    Value::Object(answer)
}

/// Without a licence, a non-empty `model_max_budget` is refused as LiteLLM
/// 1.108.7 refuses it: 403 on a team, 500 on a key (its check raises inside
/// the handler's catch-all), both naming the licence.
fn model_budgets_gate(licensed: bool, body: &Map<String, Value>, team: bool) -> Result<(), Answer> {
    let set = body
        .get("model_max_budget")
        .is_some_and(|v| !v.is_null() && *v != json!({}));
    if licensed || !set {
        return Ok(());
    }
    if team {
        return Err(wrapped(
            StatusCode::FORBIDDEN,
            "error",
            "Setting model_max_budget on a team is an enterprise feature. You must be a LiteLLM \
             Enterprise user to use this feature.",
            "internal_server_error",
        ));
    }
    Err(error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Invalid model_max_budget: You must have an enterprise license to set model_max_budget. \
         You must be a LiteLLM Enterprise user to use this feature.",
        "internal_server_error",
        Value::Null,
    ))
}

/// 422 for a known field of the wrong JSON type, as pydantic answers it.
/// The settings of teams and keys that LiteLLM keeps in `metadata` and the
/// provider sends (`prepare_metadata_fields`), and those of them only a
/// licensed proxy takes.
const METADATA_SETTINGS: &[&str] = &[
    "tags",
    "guardrails",
    "model_rpm_limit",
    "model_tpm_limit",
    "team_member_key_duration",
];
const ENTERPRISE_SETTINGS: &[&str] = &["tags", "guardrails", "team_member_key_duration"];

/// Moves each setting of [`METADATA_SETTINGS`] in `body` into its
/// `metadata` (the one sent, else the object's `existing` one), as LiteLLM
/// does; without a licence a non-empty Enterprise setting is refused with
/// the real proxy's 403.
fn metadata_settings(
    licensed: bool,
    body: &mut Map<String, Value>,
    existing: Option<&Value>,
) -> Result<(), Answer> {
    let moved: Vec<(&str, Value)> = METADATA_SETTINGS
        .iter()
        .filter_map(|name| Some((*name, body.remove(*name).filter(|v| !v.is_null())?)))
        .collect();
    let truthy = |v: &Value| !matches!(v, Value::Array(a) if a.is_empty()) && *v != json!({});
    if let Some((name, _)) = moved
        .iter()
        .find(|(name, v)| !licensed && ENTERPRISE_SETTINGS.contains(name) && truthy(v))
    {
        return Err(wrapped(
            StatusCode::FORBIDDEN,
            "error",
            &format!(
                "This feature is only available for LiteLLM Enterprise users: {name}. You must \
                 be a LiteLLM Enterprise user to use this feature. If you have a license please \
                 set `LITELLM_LICENSE` in your env. Get a 7 day trial key here: \
                 https://www.litellm.ai/enterprise#trial. \\nPricing: \
                 https://www.litellm.ai/#pricing"
            ),
            "internal_server_error",
        ));
    }
    if moved.is_empty() {
        return Ok(());
    }
    let metadata = body
        .entry("metadata")
        .or_insert_with(|| existing.cloned().unwrap_or_else(|| json!({})));
    if let Value::Object(metadata) = metadata {
        for (name, value) in moved {
            metadata.insert(name.to_owned(), value);
        }
    }
    Ok(())
}

fn check_fields(body: &Map<String, Value>, fields: &[(&str, Kind)]) -> Result<(), Answer> {
    check_type(body, "team_id", Kind::Str)?;
    for (name, kind) in fields {
        check_type(body, name, *kind)?;
    }
    Ok(())
}

fn check_type(body: &Map<String, Value>, name: &str, kind: Kind) -> Result<(), Answer> {
    let Some(value) = body.get(name).filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let (ok, expected, kind_name) = match kind {
        Kind::Str => (value.is_string(), "a valid string", "string_type"),
        Kind::Strs => (
            value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
            "a valid list of strings",
            "list_type",
        ),
        Kind::Float => (value.is_number(), "a valid number", "float_type"),
        Kind::Int => (
            value.is_i64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
            "a valid integer",
            "int_type",
        ),
        Kind::Bool => (value.is_boolean(), "a valid boolean", "bool_type"),
        Kind::Object => (value.is_object(), "a valid dictionary", "dict_type"),
    };
    if ok {
        return Ok(());
    }
    Err(detail(
        StatusCode::UNPROCESSABLE_ENTITY,
        json!([{
            "type": kind_name,
            "loc": ["body", name],
            "msg": format!("Input should be {expected}"),
            "input": value,
        }]),
    ))
}

/// Copies the stored fields that `body` sets (not null: LiteLLM's updates
/// skip `None`) into `fields`; amounts become floats, as LiteLLM stores them.
fn set_fields(fields: &mut Map<String, Value>, body: &Map<String, Value>, known: &[(&str, Kind)]) {
    for (name, kind) in known {
        let Some(value) = body.get(*name).filter(|v| !v.is_null()) else {
            continue;
        };
        let value = match (kind, value) {
            (Kind::Float, Value::Number(n)) => json!(n.as_f64()),
            (Kind::Int, Value::Number(n)) if !n.is_i64() => json!(n.as_f64().map(|f| f as i64)),
            _ => value.clone(),
        };
        fields.insert((*name).to_owned(), value);
    }
}

fn string_list(body: &Map<String, Value>, name: &str) -> Result<Vec<String>, Answer> {
    match body.get(name) {
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => Ok(items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect()),
        Some(other) => Err(detail(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!([{
                "type": "list_type",
                "loc": ["body", name],
                "msg": "Input should be a valid list",
                "input": other,
            }]),
        )),
        None => Err(missing_field(name, body)),
    }
}

/// FastAPI's answer for a required query parameter that is missing.
fn missing_query(name: &str) -> Answer {
    detail(
        StatusCode::UNPROCESSABLE_ENTITY,
        json!([{"type": "missing", "loc": ["query", name], "msg": "Field required", "input": null}]),
    )
}

fn missing_field(name: &str, body: &Map<String, Value>) -> Answer {
    detail(
        StatusCode::UNPROCESSABLE_ENTITY,
        json!([{"type": "missing", "loc": ["body", name], "msg": "Field required", "input": body}]),
    )
}

/// LiteLLM's `_validate_key_alias_format` without a configured pattern:
/// control characters and `..` path segments are refused.
fn check_alias(alias: Option<&str>) -> Result<(), Answer> {
    let Some(alias) = alias else {
        return Ok(());
    };
    if alias.chars().any(char::is_control) || alias.split(['/', '\\']).any(|s| s == "..") {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "Invalid key_alias: must not contain control characters (such as tab or newline) \
             or a \"..\" path segment",
            "bad_request_error",
            Value::from("key_alias"),
        ));
    }
    Ok(())
}

fn alias_taken(alias: &str) -> Answer {
    error(
        StatusCode::BAD_REQUEST,
        &format!(
            "Key with alias '{alias}' already exists. Unique key aliases across all keys are \
             required."
        ),
        "bad_request_error",
        Value::from("key_alias"),
    )
}

fn bad_duration(message: String) -> Answer {
    wrapped(
        StatusCode::INTERNAL_SERVER_ERROR,
        "error",
        &message,
        "internal_server_error",
    )
}

// ---- answers ----------------------------------------------------------------

fn reply(status: StatusCode, body: &Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .expect("a valid response")
}

/// LiteLLM's `ProxyException` body.
fn error(status: StatusCode, message: &str, kind: &str, param: Value) -> Answer {
    (
        status,
        json!({"error": {
            "message": message,
            "type": kind,
            "param": param,
            "code": status.as_str(),
        }}),
    )
}

/// An `HTTPException(detail={key: message})` as LiteLLM's exception handler
/// renders it: the Python dict quoted into the message.
fn wrapped(status: StatusCode, key: &str, message: &str, kind: &str) -> Answer {
    let quoted = if message.contains('\'') {
        format!("\"{message}\"")
    } else {
        format!("'{message}'")
    };
    let param = if kind == "auth_error" {
        Value::from("None")
    } else {
        Value::Null
    };
    error(status, &format!("{{'{key}': {quoted}}}"), kind, param)
}

/// A plain FastAPI `{"detail": ...}` body.
fn detail(status: StatusCode, detail: Value) -> Answer {
    (status, json!({ "detail": detail }))
}

// ---- queries ----------------------------------------------------------------

fn parse_query(query: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn param<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn query_int(
    query: &[(String, String)],
    name: &str,
    default: i64,
    min: i64,
    max: i64,
) -> Result<i64, Answer> {
    let Some(text) = param(query, name) else {
        return Ok(default);
    };
    let invalid = |kind: &str, msg: String| {
        detail(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!([{"type": kind, "loc": ["query", name], "msg": msg, "input": text}]),
        )
    };
    let value: i64 = text.parse().map_err(|_| {
        invalid(
            "int_parsing",
            "Input should be a valid integer, unable to parse string as an integer".into(),
        )
    })?;
    if value < min {
        return Err(invalid(
            "greater_than_equal",
            format!("Input should be greater than or equal to {min}"),
        ));
    }
    if value > max {
        return Err(invalid(
            "less_than_equal",
            format!("Input should be less than or equal to {max}"),
        ));
    }
    Ok(value)
}

// ---- keys and tokens --------------------------------------------------------

fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
    }
    hex
}

/// LiteLLM's `hash_token_if_needed`: keys (`sk-...`) are hashed, anything
/// else is taken for a token.
fn token_for(key_or_token: &str) -> String {
    if key_or_token.starts_with("sk-") {
        sha256_hex(key_or_token)
    } else {
        key_or_token.to_owned()
    }
}

/// `sk-...` and the key's last four characters.
fn key_name(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    let tail: String = chars[chars.len().saturating_sub(4)..].iter().collect();
    format!("sk-...{tail}")
}

/// A key as LiteLLM generates one: `sk-` and `secrets.token_urlsafe(16)`.
fn new_key() -> String {
    const URLSAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bytes = [0u8; 22];
    getrandom::fill(&mut bytes).expect("the OS random number generator");
    let text: String = bytes
        .iter()
        .map(|b| char::from(URLSAFE[usize::from(b & 63)]))
        .collect();
    format!("sk-{text}")
}

/// A random version-4 UUID, LiteLLM's team id when none is given.
fn uuid4() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("the OS random number generator");
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

// ---- times ------------------------------------------------------------------

/// How a time ends: LiteLLM answers `Z` from some routes, `+00:00` from
/// others (Python's `isoformat`), for the same column.
#[derive(Clone, Copy)]
enum Suffix {
    Zulu,
    Offset,
}
use Suffix::{Offset, Zulu};

fn now_micros() -> i64 {
    Timestamp::now().as_microsecond()
}

/// Truncated to milliseconds, the precision the database keeps.
fn ms(micros: i64) -> i64 {
    micros - micros.rem_euclid(1000)
}

fn utc(micros: i64) -> DateTime {
    Timestamp::from_microsecond(micros)
        .expect("a time in jiff's range")
        .to_zoned(TimeZone::UTC)
        .datetime()
}

fn from_utc(datetime: DateTime) -> i64 {
    datetime
        .to_zoned(TimeZone::UTC)
        .expect("a UTC time")
        .timestamp()
        .as_microsecond()
}

/// Python's `isoformat`: microseconds only when there are any.
fn time(micros: i64, suffix: Suffix) -> Value {
    let t = utc(micros);
    let mut text = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let fraction = micros.rem_euclid(1_000_000);
    if fraction != 0 {
        text.push_str(&format!(".{fraction:06}"));
    }
    text.push_str(match suffix {
        Zulu => "Z",
        Offset => "+00:00",
    });
    Value::String(text)
}

fn opt_time(micros: Option<i64>, suffix: Suffix) -> Value {
    micros.map_or(Value::Null, |t| time(t, suffix))
}

/// `(value, unit)` of a duration as LiteLLM's `_parse_duration` reads it
/// (`hourly`, `daily`, `weekly`, `monthly` first become `1h`, `24h`, `7d`,
/// `30d`).
fn parse_duration(duration: &str) -> Option<(i64, String)> {
    let normalized = match duration.trim().to_lowercase().as_str() {
        "hourly" => "1h".to_owned(),
        "daily" => "24h".to_owned(),
        "weekly" => "7d".to_owned(),
        "monthly" => "30d".to_owned(),
        _ => duration.to_owned(),
    };
    let digits: String = normalized
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let unit: String = normalized[digits.len()..]
        .chars()
        .take_while(char::is_ascii_lowercase)
        .collect();
    Some((digits.parse().ok()?, unit))
}

/// LiteLLM's `get_next_standardized_reset_time` in UTC at midnight (the
/// defaults): `1d` the next midnight, `7d` the next Monday, `30d`/`1mo` the
/// first of the next month, other `Nd` N days from today's midnight, `Nh`,
/// `Nm`, `Ns` the next multiple of N within the day.
fn budget_reset_at(duration: &str, now: i64) -> Result<i64, String> {
    let current = utc(now);
    let midnight = current.date().to_datetime(Time::midnight());
    let Some((value, unit)) = parse_duration(duration).filter(|(_, unit)| !unit.is_empty()) else {
        return Ok(from_utc(midnight + 1.day()));
    };
    let days = |n: i64| -> Result<i64, String> {
        Ok(from_utc(match n {
            0 => current,
            1 => midnight + 1.day(),
            7 => {
                let until_monday = (7 - i64::from(current.weekday().to_monday_zero_offset())) % 7;
                let monday = midnight + until_monday.days();
                if monday <= current {
                    monday + 7.days()
                } else {
                    monday
                }
            }
            30 => return month_reset(current),
            n => midnight + n.days(),
        }))
    };
    match unit.as_str() {
        "d" => days(value),
        "w" => days(value * 7),
        "mo" if value == 1 => month_reset(current),
        "mo" => Err("Monthly resets currently only support 1 month intervals".into()),
        "h" | "m" | "s" => {
            if value == 0 {
                return Ok(now);
            }
            let (h, m, s) = (
                i64::from(current.hour()),
                i64::from(current.minute()),
                i64::from(current.second()),
            );
            let next = |x: i64| x + value - x % value;
            let (h, m, s) = match unit.as_str() {
                "h" => (next(h), 0, 0),
                "m" => {
                    let minute = next(m);
                    (h + minute / 60, minute % 60, 0)
                }
                _ => {
                    let second = next(s);
                    let minute = m + second / 60;
                    (h + minute / 60, minute % 60, second % 60)
                }
            };
            let date = if h >= 24 {
                current.date() + 1.day()
            } else {
                current.date()
            };
            let at = Time::new((h % 24) as i8, m as i8, s as i8, 0).map_err(|e| e.to_string())?;
            Ok(from_utc(date.to_datetime(at)))
        }
        _ => Ok(from_utc(midnight + 1.day())),
    }
}

/// The first of the month at midnight, or of the next month once passed.
fn month_reset(current: DateTime) -> Result<i64, String> {
    let first = current
        .date()
        .first_of_month()
        .to_datetime(Time::midnight());
    if first <= current {
        let next: Date = current.date().first_of_month() + 1.month();
        Ok(from_utc(next.to_datetime(Time::midnight())))
    } else {
        Ok(from_utc(first))
    }
}

/// LiteLLM's `keeps_due_budget_reset`: sending the same duration again
/// keeps a reset that is still ahead.
fn keeps_due_reset(requested: &str, stored: Option<&str>, reset: Option<i64>, now: i64) -> bool {
    stored == Some(requested) && reset.is_some_and(|at| at > now)
}

/// LiteLLM's `duration_in_seconds`, in microseconds (`Nmo` counted in
/// calendar months from now).
fn duration_micros(duration: &str, now: i64) -> Result<i64, String> {
    let unsupported = || format!("Unsupported duration unit, passed duration: {duration}");
    let (value, unit) =
        parse_duration(duration).ok_or_else(|| "Invalid duration format".to_owned())?;
    let seconds = match unit.as_str() {
        "s" => value,
        "m" => value * 60,
        "h" => value * 3600,
        "d" => value * 86_400,
        "w" => value * 604_800,
        "mo" => {
            let start = utc(now);
            let end = start
                .checked_add(value.months())
                .map_err(|e| e.to_string())?;
            return Ok(from_utc(end) - from_utc(start));
        }
        _ => return Err(unsupported()),
    };
    Ok(seconds * 1_000_000)
}
