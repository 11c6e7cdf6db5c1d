//! Crossplane's condition types and reasons, and setting them on a status.

use crate::api::common::Condition;

pub const READY: &str = "Ready";
pub const SYNCED: &str = "Synced";

/// `Ready` reasons of managed resources.
pub mod reason {
    pub const AVAILABLE: &str = "Available";
    pub const CREATING: &str = "Creating";
    pub const DELETING: &str = "Deleting";
    pub const UNAVAILABLE: &str = "Unavailable";
    pub const RECONCILE_SUCCESS: &str = "ReconcileSuccess";
    pub const RECONCILE_ERROR: &str = "ReconcileError";
    pub const RECONCILE_PAUSED: &str = "ReconcilePaused";
}

/// A condition with status `True`/`False`.
pub fn condition(type_: &str, status: bool, reason: &str, message: Option<String>) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: if status { "True" } else { "False" }.to_string(),
        reason: reason.to_string(),
        message,
        last_transition_time: None,
        observed_generation: None,
    }
}

/// Sets `new` in `conditions`, replacing the condition of the same type.
/// The transition time moves only when the status changes, as Kubernetes
/// conventions ask; `now` is RFC 3339.
pub fn set(conditions: &mut Vec<Condition>, mut new: Condition, now: &str) {
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        Some(existing) => {
            new.last_transition_time = if existing.status == new.status {
                existing.last_transition_time.clone()
            } else {
                Some(now.to_string())
            };
            *existing = new;
        }
        None => {
            new.last_transition_time = Some(now.to_string());
            conditions.push(new);
        }
    }
}

/// Whether `conditions` hold `type_` with status `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// Removes the condition of `type_`, if any.
pub fn remove(conditions: &mut Vec<Condition>, type_: &str) {
    conditions.retain(|c| c.type_ != type_);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_moves_only_when_the_status_changes() {
        let mut conditions = Vec::new();
        set(
            &mut conditions,
            condition(READY, false, reason::CREATING, None),
            "t1",
        );
        set(
            &mut conditions,
            condition(READY, false, reason::CREATING, Some("still".into())),
            "t2",
        );
        assert_eq!(conditions[0].last_transition_time.as_deref(), Some("t1"));
        set(
            &mut conditions,
            condition(READY, true, reason::AVAILABLE, None),
            "t3",
        );
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0].last_transition_time.as_deref(), Some("t3"));
        remove(&mut conditions, READY);
        assert!(conditions.is_empty());
    }
}
