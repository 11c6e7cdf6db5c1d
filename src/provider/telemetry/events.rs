//! Kubernetes Events (core `v1`, the kind Crossplane's provider role lets
//! a provider write, and `kubectl describe` shows) about managed
//! resources, with a bounded memory of what was published.
//!
//! kube-runtime's `Recorder` remembers every event it published for six
//! minutes, as a whole `Event` object keyed by another copy of the
//! reference, so that a repeat becomes a series (`series.count`) on the
//! first instead of a new object; and it walks that whole memory on every
//! publish to forget old entries. A burst of new resources (one
//! `CreatedExternalResource` each) made that memory the largest part of the
//! provider's heap after its caches, and the walk a tenth of its CPU
//! (bench notes: git history of docs/provider-benchmark.md). This recorder keeps the same series for
//! the same key (type, action, reason, reporter, the full reference and
//! the related object, as kube-runtime and client-go key events) in a
//! digest of the key and the name of the Event it counts, forgets entries
//! six minutes after their last occurrence, looks for them at most every
//! [`SWEEP_EVERY`], and holds at most [`MAX_SERIES`]: past that, the
//! entries observed longest ago make room. An event whose series was
//! forgotten is published as a new Event, as after kube-runtime's six
//! minutes; nothing is lost but the count.

use std::collections::HashMap;
use std::sync::Mutex;

use k8s_openapi::api::core::v1::{Event as KubeEvent, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, Patch, PatchParams, PostParams};
pub use kube::runtime::events::{Event, EventType};
use sha2::{Digest, Sha256};

/// How long after its last occurrence an event still counts as repeated:
/// kube-runtime's and client-go's.
const SERIES_TTL: SignedDuration = SignedDuration::from_mins(6);

/// Expired series are looked for at most this often.
const SWEEP_EVERY: SignedDuration = SignedDuration::from_secs(30);

/// Series remembered at most (each about 150 bytes).
pub const MAX_SERIES: usize = 4096;

/// Identifies an event's series: a digest of its key.
type Key = [u8; 32];

/// The Event a series counts.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    namespace: String,
    name: String,
    count: i32,
    last: Timestamp,
}

/// The series remembered, bounded by [`MAX_SERIES`].
#[derive(Debug, Default)]
struct Series {
    by_key: HashMap<Key, Seen>,
    swept: Option<Timestamp>,
}

impl Series {
    /// The Event of `key`'s series, if one is remembered and not expired;
    /// forgets expired ones first when a sweep is due.
    fn lookup(&mut self, key: &Key, now: Timestamp) -> Option<Seen> {
        if self.swept.is_none_or(|at| at + SWEEP_EVERY <= now) {
            self.by_key.retain(|_, seen| seen.last + SERIES_TTL > now);
            self.swept = Some(now);
        }
        self.by_key
            .get(key)
            .filter(|seen| seen.last + SERIES_TTL > now)
            .cloned()
    }

    /// `seen` was published (created, or counted) for `key`.
    fn remember(&mut self, key: Key, seen: Seen) {
        if self.by_key.len() >= MAX_SERIES && !self.by_key.contains_key(&key) {
            self.make_room(seen.last);
        }
        self.by_key.insert(key, seen);
    }

    /// Forgets expired series, then, if that is not enough, the half
    /// observed longest ago: at most once every `MAX_SERIES / 2` inserts,
    /// so each costs a constant share.
    fn make_room(&mut self, now: Timestamp) {
        self.by_key.retain(|_, seen| seen.last + SERIES_TTL > now);
        self.swept = Some(now);
        if self.by_key.len() < MAX_SERIES {
            return;
        }
        let mut times: Vec<Timestamp> = self.by_key.values().map(|seen| seen.last).collect();
        let middle = times.len() / 2;
        let (_, median, _) = times.select_nth_unstable(middle);
        let median = *median;
        self.by_key.retain(|_, seen| seen.last > median);
    }
}

/// Publishes events as `controller` (and `instance`, the pod).
pub struct Recorder {
    client: kube::Client,
    controller: String,
    instance: String,
    series: Mutex<Series>,
}

fn reference_parts(reference: &ObjectReference) -> [&str; 7] {
    [
        reference.api_version.as_deref().unwrap_or_default(),
        reference.kind.as_deref().unwrap_or_default(),
        reference.namespace.as_deref().unwrap_or_default(),
        reference.name.as_deref().unwrap_or_default(),
        reference.uid.as_deref().unwrap_or_default(),
        reference.resource_version.as_deref().unwrap_or_default(),
        reference.field_path.as_deref().unwrap_or_default(),
    ]
}

impl Recorder {
    /// The provider's recorder: its controller name, and this replica
    /// (`POD_NAME`, which Crossplane sets) as its instance.
    pub fn for_provider(client: kube::Client) -> Self {
        Self::new(client, "provider-litellm", std::env::var("POD_NAME").ok())
    }

    /// Records an event of `reason` about `regarding`. Events are best
    /// effort: failing to record one must not fail what it describes, so
    /// a failure is only logged.
    pub async fn publish_best_effort<K: kube::Resource<DynamicType = ()>>(
        &self,
        regarding: &K,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        let event = Event {
            type_,
            reason: reason.into(),
            note: Some(note),
            action: reason.into(),
            secondary: None,
        };
        if let Err(err) = self.publish(&event, &regarding.object_ref(&())).await {
            tracing::debug!(error = %err, "publishing an event failed");
        }
    }

    /// `instance` defaults to `controller`, as in kube-runtime.
    pub fn new(
        client: kube::Client,
        controller: impl Into<String>,
        instance: Option<String>,
    ) -> Self {
        let controller = controller.into();
        Self {
            client,
            instance: instance.unwrap_or_else(|| controller.clone()),
            controller,
            series: Mutex::default(),
        }
    }

    fn series(&self) -> std::sync::MutexGuard<'_, Series> {
        self.series.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The series key of `event` about `regarding`: every field that
    /// kube-runtime's and client-go's keys hold, each length-prefixed.
    fn key(&self, event: &Event, regarding: &ObjectReference) -> Key {
        let mut hasher = Sha256::new();
        let type_ = match event.type_ {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        };
        let related = event.secondary.as_ref().map(reference_parts);
        let fields = [
            type_,
            &event.action,
            &event.reason,
            &self.controller,
            &self.instance,
            if related.is_some() { "related" } else { "" },
        ];
        let regarding = reference_parts(regarding);
        for part in fields
            .iter()
            .chain(regarding.iter())
            .chain(related.iter().flatten())
        {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.finalize().into()
    }

    /// Publishes `event` about `regarding`: a new Event, or the next count
    /// of the series of the same event within [`SERIES_TTL`].
    pub async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let key = self.key(event, regarding);
        let repeated = self.series().lookup(&key, now);
        if let Some(mut seen) = repeated {
            seen.count = seen.count.saturating_add(1);
            seen.last = now;
            // As client-go's recorder counts a repeated event.
            let patch = serde_json::json!({
                "count": seen.count,
                "lastTimestamp": Time(now),
                "message": event.note,
            });
            let events: Api<KubeEvent> = Api::namespaced(self.client.clone(), &seen.namespace);
            match events
                .patch(&seen.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {
                    self.series().remember(key, seen);
                    return Ok(());
                }
                // Deleted meanwhile (the API server keeps Events for an
                // hour): a new one starts a new series.
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(err) => return Err(err),
            }
        }
        let namespace = regarding
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned());
        let name = format!(
            "{}.{:x}",
            regarding.name.as_deref().unwrap_or(&self.controller),
            now.as_nanosecond()
        );
        let created = KubeEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            involved_object: regarding.clone(),
            related: event.secondary.clone(),
            message: event.note.clone(),
            count: Some(1),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            source: Some(EventSource {
                component: Some(self.controller.clone()),
                host: None,
            }),
            metadata: ObjectMeta {
                namespace: Some(namespace.clone()),
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            reporting_component: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            type_: Some(
                match event.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            ..KubeEvent::default()
        };
        Api::<KubeEvent>::namespaced(self.client.clone(), &namespace)
            .create(&PostParams::default(), &created)
            .await?;
        self.series().remember(
            key,
            Seen {
                namespace,
                name,
                count: 1,
                last: now,
            },
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(name: &str, last: Timestamp) -> Seen {
        Seen {
            namespace: "ns".into(),
            name: name.into(),
            count: 1,
            last,
        }
    }

    fn key(i: usize) -> Key {
        let mut key = [0; 32];
        key[..8].copy_from_slice(&(i as u64).to_le_bytes());
        key
    }

    #[test]
    fn a_series_lasts_six_minutes_after_its_last_occurrence() {
        let start = Timestamp::from_second(1_000_000).unwrap();
        let mut series = Series::default();
        assert!(series.lookup(&key(1), start).is_none());
        series.remember(key(1), seen("a", start));
        let later = start + SignedDuration::from_mins(5);
        assert_eq!(series.lookup(&key(1), later).unwrap().name, "a");
        series.remember(key(1), seen("a", later));
        // Counted from the last occurrence, not the first.
        let after = start + SignedDuration::from_mins(10);
        assert!(series.lookup(&key(1), after).is_some());
        assert!(series.lookup(&key(1), later + SERIES_TTL).is_none());
        // The sweep forgets it altogether.
        assert!(series.by_key.is_empty());
    }

    #[test]
    fn the_memory_is_bounded_and_keeps_the_latest() {
        let start = Timestamp::from_second(1_000_000).unwrap();
        let mut series = Series::default();
        for i in 0..3 * MAX_SERIES {
            let at = start + SignedDuration::from_millis(i as i64);
            series.remember(key(i), seen(&i.to_string(), at));
            assert!(series.by_key.len() <= MAX_SERIES);
        }
        let now = start + SignedDuration::from_secs(10);
        assert!(series.lookup(&key(3 * MAX_SERIES - 1), now).is_some());
        assert!(series.lookup(&key(0), now).is_none());
    }

    #[tokio::test]
    async fn keys_tell_apart_what_kube_runtime_tells_apart() {
        // A client that is never called: the key needs none.
        let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let recorder = Recorder::new(client, "provider-litellm", None);
        let event = |reason: &str, note: &str| Event {
            type_: EventType::Warning,
            reason: reason.into(),
            note: Some(note.into()),
            action: reason.into(),
            secondary: None,
        };
        let object = |name: &str, rv: &str| ObjectReference {
            kind: Some("LiteLLMTeam".into()),
            namespace: Some("ns".into()),
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            resource_version: Some(rv.into()),
            ..ObjectReference::default()
        };
        let base = recorder.key(&event("CannotObserve", "x"), &object("a", "1"));
        // The note is no part of the key (kube-runtime's and client-go's).
        assert_eq!(
            base,
            recorder.key(&event("CannotObserve", "y"), &object("a", "1"))
        );
        for other in [
            recorder.key(&event("CannotCreate", "x"), &object("a", "1")),
            recorder.key(&event("CannotObserve", "x"), &object("b", "1")),
            recorder.key(&event("CannotObserve", "x"), &object("a", "2")),
        ] {
            assert_ne!(base, other);
        }
        let mut related = event("CannotObserve", "x");
        related.secondary = Some(object("b", "1"));
        assert_ne!(base, recorder.key(&related, &object("a", "1")));
    }
}
