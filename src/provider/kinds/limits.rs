//! Spend and rate limits, for every kind that has them: what is sent, what
//! counts as drift, what is late-initialized. Written once for
//! [`Limits`] (the `forProvider` side) and [`LiveLimits`] (LiteLLM's).

use crate::api::Limits;
use crate::litellm::{LimitsRequest, LiveLimits};

use crate::provider::managed::diff::{self, money_f64, money_string, Diff};

/// `forProvider` field names, as the user wrote them.
pub const MAX_BUDGET: &str = "maxBudget";
pub const BUDGET_DURATION: &str = "budgetDuration";
pub const TPM_LIMIT: &str = "tpmLimit";
pub const RPM_LIMIT: &str = "rpmLimit";
pub const MAX_PARALLEL_REQUESTS: &str = "maxParallelRequests";

/// Every limit the user set, for a create.
pub fn request(limits: &Limits) -> LimitsRequest {
    LimitsRequest {
        max_budget: limits.max_budget.as_deref().and_then(money_f64),
        budget_duration: limits.budget_duration.clone(),
        tpm_limit: limits.tpm_limit,
        rpm_limit: limits.rpm_limit,
        max_parallel_requests: limits.max_parallel_requests,
    }
}

/// The limits for an update: as [`request`], but `budget_duration` only
/// when it drifted, since LiteLLM restarts the budget period (resets the
/// spend) whenever it is sent.
pub fn update_request(limits: &Limits, drift: &Diff) -> LimitsRequest {
    let mut request = request(limits);
    if !drift.has(BUDGET_DURATION) {
        request.budget_duration = None;
    }
    request
}

/// Records the limits the user set that the live object does not match;
/// money numerically.
pub fn diff(diff: &mut Diff, want: &Limits, have: LiveLimits<'_>) {
    diff.money(MAX_BUDGET, want.max_budget.as_deref(), have.max_budget);
    diff.field(
        BUDGET_DURATION,
        want.budget_duration.as_deref(),
        have.budget_duration,
    );
    diff.field(TPM_LIMIT, want.tpm_limit.as_ref(), have.tpm_limit.as_ref());
    diff.field(RPM_LIMIT, want.rpm_limit.as_ref(), have.rpm_limit.as_ref());
    diff.field(
        MAX_PARALLEL_REQUESTS,
        want.max_parallel_requests.as_ref(),
        have.max_parallel_requests.as_ref(),
    );
}

/// Fills the limits the user left unset from the live object; whether any
/// was filled.
pub fn late_init(want: &mut Limits, have: LiveLimits<'_>) -> bool {
    let changed = [
        diff::late_init(&mut want.max_budget, money_string(have.max_budget)),
        diff::late_init(
            &mut want.budget_duration,
            have.budget_duration.map(str::to_owned),
        ),
        diff::late_init(&mut want.tpm_limit, have.tpm_limit),
        diff::late_init(&mut want.rpm_limit, have.rpm_limit),
        diff::late_init(&mut want.max_parallel_requests, have.max_parallel_requests),
    ];
    changed.contains(&true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> Limits {
        Limits {
            max_budget: Some("25.50".into()),
            budget_duration: Some("30d".into()),
            tpm_limit: Some(1000),
            rpm_limit: Some(10),
            max_parallel_requests: Some(2),
        }
    }

    fn live() -> LiveLimits<'static> {
        LiveLimits {
            max_budget: Some(25.5),
            budget_duration: Some("30d"),
            tpm_limit: Some(1000),
            rpm_limit: Some(10),
            max_parallel_requests: Some(2),
        }
    }

    #[test]
    fn each_limit_is_drift_only_when_set_and_different() {
        let mut same = Diff::new();
        diff(&mut same, &set(), live());
        assert!(same.is_empty(), "{same:?}");
        let mut unset = Diff::new();
        diff(&mut unset, &Limits::default(), LiveLimits::default());
        diff(&mut unset, &Limits::default(), live());
        assert!(unset.is_empty(), "{unset:?}");
        let changed = LiveLimits {
            max_budget: Some(25.51),
            budget_duration: Some("1d"),
            tpm_limit: Some(1),
            rpm_limit: None,
            max_parallel_requests: Some(3),
        };
        let mut drift = Diff::new();
        diff(&mut drift, &set(), changed);
        assert_eq!(
            drift.fields(),
            [
                MAX_BUDGET,
                BUDGET_DURATION,
                TPM_LIMIT,
                RPM_LIMIT,
                MAX_PARALLEL_REQUESTS
            ]
        );
    }

    #[test]
    fn late_init_fills_only_what_is_unset() {
        let mut partial = Limits {
            max_budget: Some("5".into()),
            ..Limits::default()
        };
        assert!(late_init(&mut partial, live()));
        assert_eq!(
            partial,
            Limits {
                max_budget: Some("5".into()),
                ..set().with_budget("25.5")
            }
        );
        let mut full = set();
        assert!(!late_init(&mut full, live()));
        assert_eq!(full, set());
    }

    impl Limits {
        fn with_budget(self, budget: &str) -> Limits {
            Limits {
                max_budget: Some(budget.into()),
                ..self
            }
        }
    }

    #[test]
    fn an_update_resends_the_budget_duration_only_when_it_drifted() {
        let mut drift = Diff::new();
        assert_eq!(update_request(&set(), &drift).budget_duration, None);
        assert_eq!(update_request(&set(), &drift).max_budget, Some(25.5));
        drift.mark(BUDGET_DURATION);
        assert_eq!(
            update_request(&set(), &drift).budget_duration.as_deref(),
            Some("30d")
        );
        assert_eq!(request(&set()).budget_duration.as_deref(), Some("30d"));
    }
}
