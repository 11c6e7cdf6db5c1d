//! Field-by-field comparison of `forProvider` with a live LiteLLM object,
//! shared by the kinds' pure diff functions.
//!
//! Only fields the user set are compared: an unset field is left to LiteLLM
//! (or to late initialization), so it can never count as drift.

use serde_json::{Map, Value};

use crate::api::money::Money;
use crate::api::FreeForm;

/// The `forProvider` fields (camelCase, as the user wrote them) that differ
/// from LiteLLM. Names only, never values: values may be sensitive and the
/// list ends up in status messages.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Diff(Vec<&'static str>);

impl Diff {
    pub fn new() -> Self {
        Self::default()
    }

    /// Compares a plain field.
    pub fn field<T: PartialEq + ?Sized>(
        &mut self,
        name: &'static str,
        want: Option<&T>,
        have: Option<&T>,
    ) {
        if let Some(want) = want {
            if have != Some(want) {
                self.0.push(name);
            }
        }
    }

    /// Compares money numerically: `"25.50"` equals LiteLLM's `25.5`. A
    /// desired amount that does not parse (the CRD pattern prevents it)
    /// counts as drift, so it surfaces as an update error naming the field.
    pub fn money(&mut self, name: &'static str, want: Option<&str>, have: Option<f64>) {
        if let Some(want) = want {
            let want = Money::parse(want).ok();
            if want.is_none() || want != have.and_then(Money::from_f64) {
                self.0.push(name);
            }
        }
    }

    /// Compares lists as sets: LiteLLM does not promise to keep the order.
    pub fn set(&mut self, name: &'static str, want: Option<&[String]>, have: &[String]) {
        if let Some(want) = want {
            let mut want = want.to_vec();
            let mut have = have.to_vec();
            want.sort();
            want.dedup();
            have.sort();
            have.dedup();
            if want != have {
                self.0.push(name);
            }
        }
    }

    /// Compares metadata: every key the user set, plus the marker, must be
    /// present with the same value. Keys LiteLLM adds on its own are not
    /// drift.
    pub fn metadata(
        &mut self,
        name: &'static str,
        want: &Map<String, Value>,
        have: Option<&Map<String, Value>>,
    ) {
        let matches = want
            .iter()
            .all(|(key, value)| have.and_then(|have| have.get(key)) == Some(value));
        if !matches {
            self.0.push(name);
        }
    }

    /// Records `name` as differing (once), for comparisons the other
    /// methods do not cover.
    pub fn mark(&mut self, name: &'static str) {
        if !self.has(name) {
            self.0.push(name);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `name` differs.
    pub fn has(&self, name: &str) -> bool {
        self.fields().contains(&name)
    }

    pub fn fields(&self) -> &[&'static str] {
        &self.0
    }
}

/// Late-initializes `slot` from the live value when the user left it unset.
/// Returns whether anything was filled.
pub fn late_init<T>(slot: &mut Option<T>, live: Option<T>) -> bool {
    if slot.is_none() && live.is_some() {
        *slot = live;
        true
    } else {
        false
    }
}

/// A `forProvider` amount for the wire (the CRD pattern guarantees it parses).
pub fn money_f64(text: &str) -> Option<f64> {
    Money::parse(text).ok().map(Money::as_f64)
}

/// A live amount in the decimal-string form of `forProvider`.
pub fn money_string(live: Option<f64>) -> Option<String> {
    live.and_then(Money::from_f64).map(|m| m.to_string())
}

/// Live metadata without the provider's marker and the settings LiteLLM
/// keeps in metadata (`tags`, `model_rpm_limit`, ...: their typed fields
/// say them, see `crate::provider::kinds::access`), for late initialization; `None` when
/// nothing else is there.
pub fn user_metadata(live: Option<&Map<String, Value>>) -> Option<FreeForm> {
    let metadata: FreeForm = live?
        .iter()
        .filter(|(key, _)| key.as_str() != crate::provider::managed::ownership::MARKER_KEY)
        .filter(|(key, _)| !crate::litellm::METADATA_SETTINGS.contains(&key.as_str()))
        .filter(|(key, _)| !crate::litellm::SYSTEM_METADATA.contains(&key.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!metadata.is_empty()).then_some(metadata)
}

/// Whether the lists hold the same entries (unset: none).
pub fn same_set(want: Option<&[String]>, have: &[String]) -> bool {
    let mut want = want.unwrap_or_default().to_vec();
    let mut have = have.to_vec();
    want.sort();
    want.dedup();
    have.sort();
    have.dedup();
    want == have
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_fields_never_differ() {
        let mut diff = Diff::new();
        diff.field::<str>("teamAlias", None, Some("x"));
        diff.money("maxBudget", None, Some(1.0));
        diff.set("models", None, &["a".into()]);
        assert!(diff.is_empty());
    }

    #[test]
    fn table_of_field_comparisons() {
        struct Case {
            want: Option<&'static str>,
            have: Option<&'static str>,
            differs: bool,
        }
        let cases = [
            Case {
                want: Some("a"),
                have: Some("a"),
                differs: false,
            },
            Case {
                want: Some("a"),
                have: Some("b"),
                differs: true,
            },
            Case {
                want: Some("a"),
                have: None,
                differs: true,
            },
            Case {
                want: None,
                have: None,
                differs: false,
            },
        ];
        for case in cases {
            let mut diff = Diff::new();
            diff.field("f", case.want, case.have);
            assert_eq!(
                !diff.is_empty(),
                case.differs,
                "{:?} vs {:?}",
                case.want,
                case.have
            );
        }
    }

    #[test]
    fn money_is_compared_numerically() {
        let cases = [
            ("25.50", Some(25.5), false),
            ("0.3", Some(0.1 + 0.2), false),
            ("100", Some(100.0), false),
            ("100", Some(100.01), true),
            ("100", None, true),
            ("not-money", Some(1.0), true),
        ];
        for (want, have, differs) in cases {
            let mut diff = Diff::new();
            diff.money("maxBudget", Some(want), have);
            assert_eq!(!diff.is_empty(), differs, "{want} vs {have:?}");
        }
    }

    #[test]
    fn lists_are_compared_as_sets() {
        let have = vec!["b".to_owned(), "a".to_owned()];
        let mut diff = Diff::new();
        diff.set("models", Some(&["a".into(), "b".into()]), &have);
        assert!(diff.is_empty());
        diff.set("models", Some(&["a".into()]), &have);
        assert_eq!(diff.fields(), ["models"]);
    }

    #[test]
    fn metadata_ignores_extra_live_keys_but_not_missing_or_changed_ones() {
        let want: Map<String, Value> = [("a".to_owned(), Value::from(1))].into_iter().collect();
        let extra: Map<String, Value> = [
            ("a".to_owned(), Value::from(1)),
            ("litellm".to_owned(), Value::from(2)),
        ]
        .into_iter()
        .collect();
        let changed: Map<String, Value> = [("a".to_owned(), Value::from(2))].into_iter().collect();
        let mut diff = Diff::new();
        diff.metadata("metadata", &want, Some(&extra));
        assert!(diff.is_empty());
        diff.metadata("metadata", &want, Some(&changed));
        diff.metadata("metadata", &want, None);
        assert_eq!(diff.fields(), ["metadata", "metadata"]);
    }

    #[test]
    fn late_init_fills_only_unset_fields() {
        let mut unset: Option<i64> = None;
        assert!(late_init(&mut unset, Some(5)));
        assert_eq!(unset, Some(5));
        let mut set = Some(1);
        assert!(!late_init(&mut set, Some(5)));
        assert_eq!(set, Some(1));
        assert!(!late_init(&mut None::<i64>, None));
    }

    #[test]
    fn user_metadata_drops_the_marker() {
        let live: Map<String, Value> = [
            (
                crate::provider::managed::ownership::MARKER_KEY.to_owned(),
                Value::from("m"),
            ),
            ("env".to_owned(), Value::from("prod")),
        ]
        .into_iter()
        .collect();
        let user = user_metadata(Some(&live)).unwrap();
        assert_eq!(user.len(), 1);
        let only_marker: Map<String, Value> = [(
            crate::provider::managed::ownership::MARKER_KEY.to_owned(),
            Value::from("m"),
        )]
        .into_iter()
        .collect();
        assert_eq!(user_metadata(Some(&only_marker)), None);
        assert_eq!(money_string(Some(25.5)).as_deref(), Some("25.5"));
    }
}
