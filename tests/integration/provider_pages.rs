//! Polls answered by pages of LiteLLM's list routes, against the real
//! proxy and API server: a page's entry of a key or team parses to what
//! its own read did, so one page answers the polls of many, and drift made
//! in LiteLLM, or an object deleted there, is still acted on within one
//! poll interval.

use crate::support;

use std::time::{Duration, Instant};

use kube::api::DeleteParams;
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::litellm::{KeyRequest, LimitsRequest, TeamRequest};
use litellm_crossplane::provider::managed::contract::ManagedKind;
use serde_json::json;
use support::provider::{eventually, is, manifest, wait_for, wait_gone, world_with, Setup, World};

/// The keys' poll interval here: long enough that half of it holds the
/// polls of several keys at once (a sweep answers those due within half
/// their interval), short enough for a test.
const INTERVAL: Duration = Duration::from_secs(4);

/// How late past one interval a change may be acted on, on a loaded
/// machine: a tick, the reconciliation, the write.
const SLACK: Duration = Duration::from_secs(4);

/// How many objects of the kind each test makes.
const COUNT: usize = 20;

/// The provider's `--sync` here: every third poll of a key reconciles in
/// full (two polls from a memo between), so the window below sees many.
const SYNC: Duration = Duration::from_secs(12);

/// A world whose provider reconciles in full every [`SYNC`].
async fn world(prefix: &str) -> Option<World> {
    let setup = Setup {
        sync_period: Some(SYNC),
        ..Setup::default()
    };
    world_with(prefix, setup).await
}

/// Makes [`COUNT`] objects of `K` named `{prefix}{n}`, each with
/// `for_provider(n)` and polled every [`INTERVAL`], and waits until they
/// are Ready: their external names, in order.
async fn ready_polled<K: ManagedKind>(
    world: &World,
    prefix: &str,
    for_provider: impl Fn(usize) -> serde_json::Value,
) -> Vec<String> {
    let api = world.api::<K>();
    for n in 0..COUNT {
        let mut object = manifest::<K>(
            &K::kind(&()),
            &format!("{prefix}{n}"),
            json!({}),
            json!({ "forProvider": for_provider(n) }),
        );
        object.annotations_mut().insert(
            "crossplane.io/poll-interval".into(),
            format!("{}s", INTERVAL.as_secs()),
        );
        world.create(&object).await;
    }
    let mut ids = Vec::new();
    for n in 0..COUNT {
        let object = wait_for(&api, &format!("{prefix}{n}"), "Ready", |o| {
            is(o, "Ready", "True")
        })
        .await;
        ids.push(object.annotations()[EXTERNAL_NAME].clone());
    }
    ids
}

/// Shows that the polls of the world's [`COUNT`] objects of `noun` (read
/// by `read`, listed by `list`: operations as the provider's metrics name
/// them) are answered by pages and cost fewer reads than there are polls.
async fn fewer_reads_than_polls(world: &World, noun: &str, read: &str, list: &str) {
    // Every object's poll answered by a page at least once, on average:
    // the list route's entries fingerprint as the reads' answers do (were
    // they not, every page would be a changed answer and count nothing).
    eventually("polls answered by pages", || async {
        (world.page_polls(noun) >= COUNT as u64).then_some(())
    })
    .await;
    // Over the next three intervals, the polls cost fewer reads than there
    // are polls: pages answer several at once, and the reconciliations in
    // full (every third poll) observe what the page said instead of a read
    // of their own. (How few depends on how many other objects the shared
    // proxy lists; `cargo bench` measures it alone.)
    let reads = || {
        let requests = world.litellm_requests();
        let count = |op: &str| requests.get(op).copied().unwrap_or(0);
        (count(read), count(list))
    };
    let (infos, pages) = reads();
    let (polls, paged) = (world.reconciles(noun), world.page_polls(noun));
    eventually("three intervals of polls", || async {
        (world.reconciles(noun) >= polls + 3 * COUNT as u64).then_some(())
    })
    .await;
    let (infos, pages) = (reads().0 - infos, reads().1 - pages);
    let (polls, paged) = (
        world.reconciles(noun) - polls,
        world.page_polls(noun) - paged,
    );
    eprintln!("{noun}: {polls} polls, {paged} by pages: {infos} reads, {pages} pages");
    assert!(paged < polls, "some polls reconciled in full");
    assert!(
        infos < polls - paged,
        "the {} reconciliations in full made {infos} reads: the pages stood for most",
        polls - paged
    );
    assert!(
        pages > 0 && pages < paged,
        "{pages} pages for {paged} polls"
    );
    assert!(
        infos + pages < polls,
        "{infos} + {pages} reads for {polls} polls"
    );
}

/// Waits until `done` and shows it took at most one poll interval (and
/// [`SLACK`]) from `since`.
async fn within_a_poll<Fut>(what: &str, since: Instant, done: impl Fn() -> Fut)
where
    Fut: std::future::Future<Output = Option<()>>,
{
    eventually(what, done).await;
    let took = since.elapsed();
    assert!(took <= INTERVAL + SLACK, "{what} after {took:?}");
}

async fn delete_all<K: ManagedKind>(world: &World, prefix: &str) {
    let api = world.api::<K>();
    for n in 0..COUNT {
        api.delete(&format!("{prefix}{n}"), &DeleteParams::default())
            .await
            .unwrap();
    }
    for n in 0..COUNT {
        wait_gone(&api, &format!("{prefix}{n}")).await;
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn keys_are_polled_by_pages_and_still_corrected_within_a_poll() {
    let Some(world) = world("pp-keys").await else {
        return;
    };
    let keys = world.api::<LiteLLMVirtualKey>();
    let tokens =
        ready_polled::<LiteLLMVirtualKey>(&world, "k", |_| json!({"maxBudget": "1"})).await;
    fewer_reads_than_polls(&world, "key", "GET /key/info", "GET /key/list").await;

    // Drift made in LiteLLM: seen and corrected within one poll interval.
    let drift = KeyRequest {
        limits: LimitsRequest {
            max_budget: Some(9.0),
            ..LimitsRequest::default()
        },
        ..KeyRequest::default()
    };
    world.litellm.key_update(&tokens[3], &drift).await.unwrap();
    within_a_poll("the drift corrected", Instant::now(), || async {
        let live = world.litellm.key_info(&tokens[3]).await.unwrap().unwrap();
        (live.max_budget == Some(1.0)).then_some(())
    })
    .await;

    // A key deleted in LiteLLM is missing from the pages: read on its own,
    // found gone, and made again, within one poll interval.
    assert!(world.litellm.key_delete(&tokens[5]).await.unwrap());
    within_a_poll("the key made again", Instant::now(), || async {
        let key = keys.get("k5").await.unwrap();
        let token = key.annotations().get(EXTERNAL_NAME)?.clone();
        world.litellm.key_info(&token).await.unwrap().map(|_| ())
    })
    .await;

    delete_all::<LiteLLMVirtualKey>(&world, "k").await;
}

/// Teams as keys: their polls answered by pages of `/v2/team/list`, drift
/// and a deletion made in LiteLLM acted on within one poll interval.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn teams_are_polled_by_pages_and_still_corrected_within_a_poll() {
    let Some(world) = world("pp-teams").await else {
        return;
    };
    let ids = ready_polled::<LiteLLMTeam>(&world, "t", |n| {
        json!({"teamAlias": format!("Paged {n}"), "maxBudget": "1", "metadata": {"n": n.to_string()}})
    })
    .await;
    fewer_reads_than_polls(&world, "team", "GET /team/info", "GET /v2/team/list").await;

    let drift = |team_id: &str, max_budget| TeamRequest {
        team_id: team_id.to_owned(),
        limits: LimitsRequest {
            max_budget: Some(max_budget),
            ..LimitsRequest::default()
        },
        ..TeamRequest::default()
    };
    world
        .litellm
        .team_update(&drift(&ids[3], 9.0))
        .await
        .unwrap();
    within_a_poll("the drift corrected", Instant::now(), || async {
        let live = world.litellm.team_info(&ids[3]).await.unwrap().unwrap();
        (live.max_budget == Some(1.0)).then_some(())
    })
    .await;

    assert!(world.litellm.team_delete(&ids[5]).await.unwrap());
    within_a_poll("the team made again", Instant::now(), || async {
        world.litellm.team_info(&ids[5]).await.unwrap().map(|_| ())
    })
    .await;

    delete_all::<LiteLLMTeam>(&world, "t").await;
}

/// A restarted provider (or a new leader) has no memo of any object's last
/// read. Each up-to-date key's and team's first poll reads nothing of its
/// own: it waits for one sweep of its kind's pages with the others, whose
/// entry then stands for its read when it reconciles in full. The restart
/// costs the routes' pages, not a read an object, and every object is back
/// on its memo polls within one poll interval.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_restarted_provider_reads_pages_not_each_object() {
    let Some(mut world) = world("pp-restart").await else {
        return;
    };
    ready_polled::<LiteLLMVirtualKey>(&world, "k", |_| json!({"maxBudget": "1"})).await;
    ready_polled::<LiteLLMTeam>(
        &world,
        "t",
        |n| json!({"teamAlias": format!("Restarted {n}"), "maxBudget": "1"}),
    )
    .await;
    let on_memos = |world: &World| {
        (0..COUNT).all(|n| {
            world.has_memo::<LiteLLMVirtualKey>(&format!("k{n}"))
                && world.has_memo::<LiteLLMTeam>(&format!("t{n}"))
        })
    };
    eventually("the first provider's memo polls", || async {
        on_memos(&world).then_some(())
    })
    .await;

    let restarted = Instant::now();
    world.restart_provider();
    within_a_poll(
        "every object on its memo polls again",
        restarted,
        || async { on_memos(&world).then_some(()) },
    )
    .await;
    let requests = world.litellm_requests();
    let count = |op: &str| requests.get(op).copied().unwrap_or(0);
    for (noun, read, list) in [
        ("key", "GET /key/info", "GET /key/list"),
        ("team", "GET /team/info", "GET /v2/team/list"),
    ] {
        let (reads, pages) = (count(read), count(list));
        let left = world.polls_left_to_pages(noun);
        eprintln!("{noun}: {left} first polls left to pages; {reads} reads, {pages} pages");
        assert!(
            left >= COUNT as u64,
            "every {noun}'s first poll was left to the pages: {left}"
        );
        assert!(pages > 0, "the {noun}s' pages were read");
        // A first poll that comes after a sweep began, fewer of them than
        // the route's pages (the shared proxy lists other tests' objects),
        // reads on its own: that costs less than another sweep.
        assert!(
            reads + pages < COUNT as u64,
            "{reads} reads of single {noun}s and {pages} pages for {COUNT}: the pages stood for \
             the reads"
        );
    }

    delete_all::<LiteLLMVirtualKey>(&world, "k").await;
    delete_all::<LiteLLMTeam>(&world, "t").await;
}
