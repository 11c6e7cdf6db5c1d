//! Polls answered by pages of LiteLLM's list routes, against the real
//! proxy and API server: a page's entry of a key parses to what the key's
//! own read did, so one page answers the polls of many keys, and drift
//! made in LiteLLM, or a key deleted there, is still acted on within one
//! poll interval.

use crate::support;

use std::time::{Duration, Instant};

use kube::api::DeleteParams;
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::LiteLLMVirtualKey;
use litellm_crossplane::litellm::{KeyRequest, LimitsRequest};
use serde_json::json;
use support::provider::{eventually, is, manifest, wait_for, wait_gone, world_with, Setup};

/// The keys' poll interval here: long enough that half of it holds the
/// polls of several keys at once (a sweep answers those due within half
/// their interval), short enough for a test.
const INTERVAL: Duration = Duration::from_secs(4);

/// How late past one interval a change may be acted on, on a loaded
/// machine: a tick, the reconciliation, the write.
const SLACK: Duration = Duration::from_secs(4);

const KEYS: usize = 20;

/// The provider's `--sync` here: every third poll of a key reconciles in
/// full (two polls from a memo between), so the window below sees many.
const SYNC: Duration = Duration::from_secs(12);

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn keys_are_polled_by_pages_and_still_corrected_within_a_poll() {
    let setup = Setup {
        sync_period: Some(SYNC),
        ..Setup::default()
    };
    let Some(world) = world_with("pp-keys", setup).await else {
        return;
    };
    let keys = world.api::<LiteLLMVirtualKey>();
    for n in 0..KEYS {
        let mut key = manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            &format!("k{n}"),
            json!({}),
            json!({"forProvider": {"maxBudget": "1"}}),
        );
        key.annotations_mut().insert(
            "crossplane.io/poll-interval".into(),
            format!("{}s", INTERVAL.as_secs()),
        );
        world.create(&key).await;
    }
    let mut tokens = Vec::new();
    for n in 0..KEYS {
        let key = wait_for(&keys, &format!("k{n}"), "key Ready", |k| {
            is(k, "Ready", "True")
        })
        .await;
        tokens.push(key.annotations()[EXTERNAL_NAME].clone());
    }

    // Every key's poll answered by a page at least once, on average: the
    // entries of `/key/list` fingerprint as `/key/info`'s answers do (were
    // they not, every page would be a changed answer and count nothing).
    eventually("polls answered by pages", || async {
        (world.page_polls("key") >= KEYS as u64).then_some(())
    })
    .await;
    // Over the next three intervals, the keys' polls cost fewer reads than
    // there are polls: pages answer several at once, and the
    // reconciliations in full (every third poll) observe what the page
    // said instead of a read of their own. (How few depends on how many
    // other keys the shared proxy lists; `cargo bench` measures it alone.)
    let reads = || {
        let requests = world.litellm_requests();
        let count = |op: &str| requests.get(op).copied().unwrap_or(0);
        (count("GET /key/info"), count("GET /key/list"))
    };
    let (infos, pages) = reads();
    let (polls, paged) = (world.reconciles("key"), world.page_polls("key"));
    eventually("three intervals of polls", || async {
        (world.reconciles("key") >= polls + 3 * KEYS as u64).then_some(())
    })
    .await;
    let (infos, pages) = (reads().0 - infos, reads().1 - pages);
    let (polls, paged) = (
        world.reconciles("key") - polls,
        world.page_polls("key") - paged,
    );
    eprintln!("{polls} polls, {paged} by pages: {infos} key reads, {pages} pages");
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

    // Drift made in LiteLLM: seen and corrected within one poll interval.
    let drift = KeyRequest {
        limits: LimitsRequest {
            max_budget: Some(9.0),
            ..LimitsRequest::default()
        },
        ..KeyRequest::default()
    };
    world.litellm.key_update(&tokens[3], &drift).await.unwrap();
    let drifted = Instant::now();
    eventually("the drift corrected", || async {
        let live = world.litellm.key_info(&tokens[3]).await.unwrap().unwrap();
        (live.max_budget == Some(1.0)).then_some(())
    })
    .await;
    let took = drifted.elapsed();
    assert!(took <= INTERVAL + SLACK, "corrected after {took:?}");

    // A key deleted in LiteLLM is missing from the pages: read on its own,
    // found gone, and made again, within one poll interval.
    assert!(world.litellm.key_delete(&tokens[5]).await.unwrap());
    let deleted = Instant::now();
    eventually("the key made again", || async {
        let key = keys.get("k5").await.unwrap();
        let token = key.annotations().get(EXTERNAL_NAME)?.clone();
        world.litellm.key_info(&token).await.unwrap().map(|_| ())
    })
    .await;
    let took = deleted.elapsed();
    assert!(took <= INTERVAL + SLACK, "made again after {took:?}");

    for n in 0..KEYS {
        keys.delete(&format!("k{n}"), &DeleteParams::default())
            .await
            .unwrap();
    }
    for n in 0..KEYS {
        wait_gone(&keys, &format!("k{n}")).await;
    }
}
