//! What each member of a team gets (`forProvider.teamMember*`): the
//! members' budget and rate limits, and the lifetime of the keys they make.
//!
//! LiteLLM keeps the budget and rate limits in one budget row of the team's
//! (`team_member_budget_table` of `/team/info`, its id under
//! `team_member_budget_id` in the team's metadata, an entry LiteLLM writes
//! and keeps itself), and `team_member_key_duration` in the team's metadata;
//! the latter is Enterprise-only.

use serde_json::Value;

use crate::api::team::TeamMemberDefaults;
use crate::litellm::{MemberDefaultsRequest, TeamInfo};

use crate::provider::managed::diff::{self, money_f64, money_string, Diff};

/// `forProvider` field names, as the user wrote them.
pub const BUDGET: &str = "teamMemberBudget";
pub const BUDGET_DURATION: &str = "teamMemberBudgetDuration";
pub const RPM_LIMIT: &str = "teamMemberRpmLimit";
pub const TPM_LIMIT: &str = "teamMemberTpmLimit";
pub const KEY_DURATION: &str = "teamMemberKeyDuration";

/// Where LiteLLM keeps the key duration: the team's metadata.
const KEY_DURATION_METADATA: &str = "team_member_key_duration";

/// Every default the user set, for a create.
pub fn request(want: &TeamMemberDefaults) -> MemberDefaultsRequest {
    MemberDefaultsRequest {
        team_member_budget: want.team_member_budget.as_deref().and_then(money_f64),
        team_member_budget_duration: want.team_member_budget_duration.clone(),
        team_member_rpm_limit: want.team_member_rpm_limit,
        team_member_tpm_limit: want.team_member_tpm_limit,
        team_member_key_duration: want.team_member_key_duration.clone(),
    }
}

/// As [`request`], but the budget duration only when it drifted: like a
/// team's own `budget_duration`, sending it restarts the members' budget
/// period.
pub fn update_request(want: &TeamMemberDefaults, drift: &Diff) -> MemberDefaultsRequest {
    let mut request = request(want);
    if !drift.has(BUDGET_DURATION) {
        request.team_member_budget_duration = None;
    }
    request
}

/// The Enterprise-only defaults a request sends: (field, LiteLLM name).
pub fn reserved(request: &MemberDefaultsRequest) -> Option<(&'static str, &'static str)> {
    request
        .team_member_key_duration
        .is_some()
        .then_some((KEY_DURATION, KEY_DURATION_METADATA))
}

/// The key duration LiteLLM holds for the team.
fn key_duration(live: &TeamInfo) -> Option<&str> {
    live.metadata
        .as_ref()?
        .get(KEY_DURATION_METADATA)
        .and_then(Value::as_str)
}

/// Records each default the user set that the live team does not hold;
/// money numerically. A team with no members' budget row holds none.
pub fn diff(diff: &mut Diff, want: &TeamMemberDefaults, live: &TeamInfo) {
    let row = live.team_member_budget_table.as_ref();
    diff.money(
        BUDGET,
        want.team_member_budget.as_deref(),
        row.and_then(|r| r.max_budget),
    );
    diff.field(
        BUDGET_DURATION,
        want.team_member_budget_duration.as_deref(),
        row.and_then(|r| r.budget_duration.as_deref()),
    );
    diff.field(
        RPM_LIMIT,
        want.team_member_rpm_limit.as_ref(),
        row.and_then(|r| r.rpm_limit.as_ref()),
    );
    diff.field(
        TPM_LIMIT,
        want.team_member_tpm_limit.as_ref(),
        row.and_then(|r| r.tpm_limit.as_ref()),
    );
    diff.field(
        KEY_DURATION,
        want.team_member_key_duration.as_deref(),
        key_duration(live),
    );
}

/// Fills the defaults the user left unset from the live team; whether any
/// was filled.
pub fn late_init(want: &mut TeamMemberDefaults, live: &TeamInfo) -> bool {
    let row = live.team_member_budget_table.as_ref();
    let changed = [
        diff::late_init(
            &mut want.team_member_budget,
            money_string(row.and_then(|r| r.max_budget)),
        ),
        diff::late_init(
            &mut want.team_member_budget_duration,
            row.and_then(|r| r.budget_duration.clone()),
        ),
        diff::late_init(
            &mut want.team_member_rpm_limit,
            row.and_then(|r| r.rpm_limit),
        ),
        diff::late_init(
            &mut want.team_member_tpm_limit,
            row.and_then(|r| r.tpm_limit),
        ),
        diff::late_init(
            &mut want.team_member_key_duration,
            key_duration(live).map(str::to_owned),
        ),
    ];
    changed.contains(&true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::litellm::MemberDefaults;

    fn set() -> TeamMemberDefaults {
        TeamMemberDefaults {
            team_member_budget: Some("5.00".into()),
            team_member_budget_duration: Some("30d".into()),
            team_member_rpm_limit: Some(7),
            team_member_tpm_limit: Some(70),
            team_member_key_duration: Some("1d".into()),
        }
    }

    fn live() -> TeamInfo {
        TeamInfo {
            metadata: json!({"team_member_budget_id": "b", "team_member_key_duration": "1d"})
                .as_object()
                .cloned(),
            team_member_budget_table: Some(MemberDefaults {
                budget_id: Some("b".into()),
                max_budget: Some(5.0),
                budget_duration: Some("30d".into()),
                rpm_limit: Some(7),
                tpm_limit: Some(70),
            }),
            ..TeamInfo::default()
        }
    }

    #[test]
    fn each_default_is_drift_only_when_set_and_different() {
        let mut same = Diff::new();
        diff(&mut same, &set(), &live());
        assert!(same.is_empty(), "{same:?}");
        let mut unset = Diff::new();
        diff(&mut unset, &TeamMemberDefaults::default(), &live());
        diff(
            &mut unset,
            &TeamMemberDefaults::default(),
            &TeamInfo::default(),
        );
        assert!(unset.is_empty(), "{unset:?}");
        let mut none = Diff::new();
        diff(&mut none, &set(), &TeamInfo::default());
        assert_eq!(
            none.fields(),
            [BUDGET, BUDGET_DURATION, RPM_LIMIT, TPM_LIMIT, KEY_DURATION]
        );
        let mut changed = live();
        if let Some(row) = changed.team_member_budget_table.as_mut() {
            row.max_budget = Some(5.01);
        }
        let mut drift = Diff::new();
        diff(&mut drift, &set(), &changed);
        assert_eq!(drift.fields(), [BUDGET]);
    }

    #[test]
    fn the_budget_duration_is_sent_on_update_only_when_it_drifted() {
        let body = serde_json::to_value(update_request(&set(), &Diff::new())).unwrap();
        assert_eq!(
            body,
            json!({"team_member_budget": 5.0, "team_member_rpm_limit": 7,
                   "team_member_tpm_limit": 70, "team_member_key_duration": "1d"})
        );
        let mut drift = Diff::new();
        drift.mark(BUDGET_DURATION);
        let body = serde_json::to_value(update_request(&set(), &drift)).unwrap();
        assert_eq!(body["team_member_budget_duration"], "30d");
        assert_eq!(
            serde_json::to_value(request(&TeamMemberDefaults::default())).unwrap(),
            json!({})
        );
    }

    #[test]
    fn only_the_key_duration_is_reserved() {
        assert_eq!(
            reserved(&request(&set())),
            Some((KEY_DURATION, "team_member_key_duration"))
        );
        let open = TeamMemberDefaults {
            team_member_key_duration: None,
            ..set()
        };
        assert_eq!(reserved(&request(&open)), None);
    }

    #[test]
    fn late_init_fills_only_what_is_unset() {
        let mut partial = TeamMemberDefaults {
            team_member_budget: Some("9".into()),
            ..TeamMemberDefaults::default()
        };
        assert!(late_init(&mut partial, &live()));
        assert_eq!(
            partial,
            TeamMemberDefaults {
                team_member_budget: Some("9".into()),
                ..set()
            }
        );
        assert!(!late_init(&mut partial, &live()));
        assert!(!late_init(
            &mut TeamMemberDefaults::default(),
            &TeamInfo::default()
        ));
    }
}
