//! What the watch caches hold per object, counted by a global allocator
//! that tallies every allocation of this test binary: a team and a key as
//! they are in the steady state (Ready, Synced, their LiteLLM objects
//! observed), cached packed ([`Tolerant`]) against the same objects held
//! as parsed structs, which is what the caches held before.
//!
//! One test in the binary, so that nothing else allocates while it counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

use litellm_crossplane::api::{LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::provider::watch::tolerant::Tolerant;
use serde_json::{json, Value};

struct Counting;

static BYTES: AtomicIsize = AtomicIsize::new(0);
static BLOCKS: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        BLOCKS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        BLOCKS.fetch_sub(1, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        BYTES.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Bytes and allocations live now.
fn live() -> (isize, isize) {
    (
        BYTES.load(Ordering::Relaxed),
        BLOCKS.load(Ordering::Relaxed),
    )
}

/// What `make` keeps alive, per object, over `n` objects.
fn per_object<T>(n: usize, make: impl Fn(usize) -> T) -> (f64, f64) {
    let before = live();
    let kept: Vec<T> = (0..n).map(make).collect();
    let after = live();
    drop(kept);
    let overhead = (n * std::mem::size_of::<T>()) as f64;
    (
        ((after.0 - before.0) as f64 - overhead) / n as f64,
        ((after.1 - before.1) as f64 - 1.0) / n as f64,
    )
}

const CONDITIONS: &str = r#"[
  {"type": "Ready", "status": "True", "reason": "Available",
   "lastTransitionTime": "2026-12-03T09:00:00Z", "observedGeneration": 1},
  {"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
   "lastTransitionTime": "2026-12-03T09:00:00Z", "observedGeneration": 1}
]"#;

fn meta(name: &str, i: usize, external_name: &str) -> Value {
    json!({
        "name": name,
        "namespace": "bench-0123456789",
        "uid": format!("0b6c2a6e-3f0f-4d3e-9d59-{i:012}"),
        "resourceVersion": format!("{}", 100_000 + i),
        "generation": 1,
        "creationTimestamp": "2026-12-03T09:00:00Z",
        "finalizers": ["finalizer.managedresource.crossplane.io"],
        "labels": {"bench-wave": "0"},
        "annotations": {
            "crossplane.io/external-name": external_name,
            "crossplane.io/external-create-pending": "2026-12-03T09:00:00Z",
            "crossplane.io/external-create-succeeded": "2026-12-03T09:00:01Z"
        },
        "managedFields": [{"manager": "provider-litellm", "operation": "Apply",
                           "fieldsV1": {"f:status": {"f:conditions": {}}}}]
    })
}

/// A team as the provider leaves it once Ready.
fn team(i: usize) -> LiteLLMTeam {
    let name = format!("team-{i:04}");
    let id = format!("bench-0123456789.{name}");
    serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMTeam",
        "metadata": meta(&name, i, &id),
        "spec": {"instanceRef": {"name": "proxy"},
                 "forProvider": {"teamAlias": format!("bench team {i}")}},
        "status": {
            "conditions": serde_json::from_str::<Value>(CONDITIONS).unwrap(),
            "observedGeneration": 1,
            "atProvider": {"teamId": id, "teamAlias": format!("bench team {i}"),
                           "spend": "0.0", "createdAt": "2026-12-03T09:00:01Z"}
        }
    }))
    .unwrap()
}

/// A key as the provider leaves it once Ready.
fn key(i: usize) -> LiteLLMVirtualKey {
    let name = format!("key-{i:04}");
    let token = format!("{i:064x}");
    serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMVirtualKey",
        "metadata": meta(&name, i, &token),
        "spec": {"instanceRef": {"name": "proxy"},
                 "forProvider": {"teamRef": {"name": format!("team-{i:04}")}},
                 "writeConnectionSecretToRef": {"name": format!("{name}-connection")}},
        "status": {
            "conditions": serde_json::from_str::<Value>(CONDITIONS).unwrap(),
            "observedGeneration": 1,
            "atProvider": {"token": token, "keyName": "sk-...abcd",
                           "teamId": format!("bench-0123456789.team-{i:04}"),
                           "spend": "0.0", "createdAt": "2026-12-03T09:00:01Z"}
        }
    }))
    .unwrap()
}

#[test]
fn a_cached_team_and_key_take_well_under_their_parsed_structs() {
    const N: usize = 2_000;
    // What the caches held before: each object parsed, in an Arc.
    let (team_struct, team_struct_blocks) = per_object(N, |i| Arc::new(team(i)));
    let (key_struct, key_struct_blocks) = per_object(N, |i| Arc::new(key(i)));
    // What they hold now: the store's Arc of the packed object.
    let (team_packed, team_packed_blocks) = per_object(N, |i| Arc::new(Tolerant::new(team(i))));
    let (key_packed, key_packed_blocks) = per_object(N, |i| Arc::new(Tolerant::new(key(i))));
    println!(
        "bytes (allocations) per object: team {team_struct:.0} ({team_struct_blocks:.1}) parsed, \
         {team_packed:.0} ({team_packed_blocks:.1}) packed; key {key_struct:.0} \
         ({key_struct_blocks:.1}) parsed, {key_packed:.0} ({key_packed_blocks:.1}) packed"
    );
    // The parsed structs still hold labels, owners and managedFields here,
    // which the caches dropped before too: compare against them stripped.
    use litellm_crossplane::provider::watch::cache::strip_managed;
    let (team_stripped, _) = per_object(N, |i| {
        let mut team = team(i);
        strip_managed(&mut team.metadata);
        Arc::new(team)
    });
    let (key_stripped, _) = per_object(N, |i| {
        let mut key = key(i);
        strip_managed(&mut key.metadata);
        Arc::new(key)
    });
    println!(
        "parsed and stripped as the caches kept them: team {team_stripped:.0}, key {key_stripped:.0} bytes"
    );
    // Under a third of the bytes (the JSON is kept compressed), in a
    // quarter of the allocations (each of which the allocator rounds up to
    // its size class). Measured: a key 867 bytes packed against 2,969
    // parsed, a team 746 against 2,827 (1,716 and 1,446 with the JSON kept
    // as text).
    assert!(
        key_packed <= 0.35 * key_stripped,
        "{key_packed} vs {key_stripped}"
    );
    assert!(
        team_packed <= 0.35 * team_stripped,
        "{team_packed} vs {team_stripped}"
    );
    assert!(
        key_packed_blocks <= 10.0,
        "{key_packed_blocks} allocations per key"
    );
    assert!(
        team_packed_blocks <= 10.0,
        "{team_packed_blocks} allocations per team"
    );
    // Reading back gives the object the cache kept.
    let packed = Tolerant::new(key(7));
    let read = packed.read().unwrap();
    assert_eq!(read.metadata.name.as_deref(), Some("key-0007"));
    assert_eq!(
        read.status.as_ref().unwrap().conditions.len(),
        2,
        "the status is kept"
    );
}
