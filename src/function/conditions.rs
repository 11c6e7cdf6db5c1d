//! Conditions the function sets on the XR and, through Crossplane, on its
//! claim (Crossplane 1.17 and later; earlier versions ignore them): what a
//! claim's owner can read with `kubectl describe` and wait for with
//! `kubectl wait --for=condition=KeysReady`. A `Fatal` result alone reaches
//! neither the claim nor its owner.

/// Whether the request passes validation and the platform's policy.
pub const REQUEST_VALID: &str = "RequestValid";
/// Whether the LiteLLMInstance the composed resources use is ready.
pub const INSTANCE_READY: &str = "InstanceReady";
/// Whether every key the XR asks for is ready (its Secret holds the key).
pub const KEYS_READY: &str = "KeysReady";

/// One condition for the XR and its claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XrCondition {
    pub type_: &'static str,
    pub status: bool,
    pub reason: &'static str,
    pub message: String,
}

impl XrCondition {
    fn new(type_: &'static str, status: bool, reason: &'static str, message: String) -> Self {
        Self {
            type_,
            status,
            reason,
            message,
        }
    }
}

/// The condition of a request that cannot be composed: `message`, the
/// Fatal result's (every problem, each naming its field: the XR's own
/// fields and the policy's rules only).
pub fn invalid(message: String) -> XrCondition {
    XrCondition::new(REQUEST_VALID, false, "InvalidRequest", message)
}

/// Where the instance stands, as the function sees it.
pub enum InstanceState<'a> {
    /// Observed, with its `status.ready`.
    Observed { ready: bool },
    /// Rendered by this function and not observed yet.
    Creating,
    /// Referenced, and not supplied by Crossplane: `fetched` when it
    /// looked and found none, else not asked for yet.
    NotSupplied {
        namespace: &'a str,
        name: &'a str,
        fetched: bool,
    },
}

impl InstanceState<'_> {
    /// Why a referenced instance is missing, for the condition and the
    /// Warning result; `None` when it is not.
    pub fn explain(&self) -> Option<String> {
        let InstanceState::NotSupplied {
            namespace,
            name,
            fetched,
        } = self
        else {
            return None;
        };
        Some(if *fetched {
            format!(
                "Crossplane found no LiteLLMInstance {namespace}/{name}: create it, or correct \
                 the reference"
            )
        } else {
            format!(
                "Crossplane has not supplied LiteLLMInstance {namespace}/{name} yet: it fetches \
                 what the function asks for and calls it again (Crossplane v2.0 or later; \
                 earlier versions cannot fetch a namespaced resource)"
            )
        })
    }
}

/// The conditions of a composed request: `keys` names each key the XR asks
/// for, and whether it is ready.
pub fn composed<'a>(
    instance: InstanceState<'_>,
    keys: impl ExactSizeIterator<Item = (&'a str, bool)>,
) -> Vec<XrCondition> {
    let instance = match instance {
        InstanceState::Observed { ready: true } => XrCondition::new(
            INSTANCE_READY,
            true,
            "Available",
            "the LiteLLMInstance answers".into(),
        ),
        InstanceState::Observed { ready: false } => XrCondition::new(
            INSTANCE_READY,
            false,
            "Unavailable",
            "the LiteLLMInstance is not ready".into(),
        ),
        InstanceState::Creating => XrCondition::new(
            INSTANCE_READY,
            false,
            "Creating",
            "the LiteLLMInstance has not been observed yet".into(),
        ),
        missing @ InstanceState::NotSupplied { .. } => XrCondition::new(
            INSTANCE_READY,
            false,
            "InstanceNotFound",
            missing.explain().unwrap_or_default(),
        ),
    };
    let total = keys.len();
    let waiting: Vec<&str> = keys
        .filter(|(_, ready)| !ready)
        .map(|(name, _)| name)
        .collect();
    let keys = if waiting.is_empty() {
        let message = match total {
            0 => "the XR asks for no keys".to_string(),
            1 => "the key is ready".to_string(),
            n => format!("all {n} keys are ready"),
        };
        XrCondition::new(KEYS_READY, true, "Available", message)
    } else {
        XrCondition::new(
            KEYS_READY,
            false,
            "Creating",
            format!(
                "{} of {total} keys ready; waiting for {}",
                total - waiting.len(),
                waiting.join(", ")
            ),
        )
    };
    vec![
        XrCondition::new(
            REQUEST_VALID,
            true,
            "Valid",
            "the request passes validation and policy".into(),
        ),
        instance,
        keys,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::function::compose::Outcome;
    use crate::function::error::Problem;

    #[test]
    fn keys_ready_names_the_keys_still_waiting() {
        let conditions = composed(
            InstanceState::Observed { ready: true },
            [("a", true), ("b", false), ("c", false)].into_iter(),
        );
        assert_eq!(
            conditions[2],
            XrCondition::new(
                KEYS_READY,
                false,
                "Creating",
                "1 of 3 keys ready; waiting for b, c".into()
            )
        );
        assert!(conditions[1].status);
        let conditions = composed(InstanceState::Creating, [("a", true)].into_iter());
        assert_eq!(
            (conditions[2].status, conditions[1].reason),
            (true, "Creating")
        );
        let none = composed(InstanceState::Creating, std::iter::empty::<(&str, bool)>());
        assert!(none[2].status, "no keys asked for: nothing to wait for");
    }

    #[test]
    fn an_invalid_request_names_every_field() {
        let condition = invalid(Outcome::fatal_message(&[
            Problem::new("spec.keys[1].name", "duplicate key name \"a\""),
            Problem::new("spec.budget.maxBudget", "exceeds the policy"),
        ]));
        assert_eq!((condition.type_, condition.status), (REQUEST_VALID, false));
        assert!(condition.message.contains("spec.keys[1].name"));
        assert!(condition.message.contains("spec.budget.maxBudget"));
    }
}
