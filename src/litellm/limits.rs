//! Spend and rate limits on the wire: the same fields, under the same
//! names, in the bodies and answers of `/team/*`, `/key/*`, `/budget/*` and
//! `/user/*`.

use serde::Serialize;

/// The limits of a create or update body, flattened into it; unset fields
/// are not sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LimitsRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_budget: Option<f64>,
    /// Sending it restarts the budget period, also with an unchanged value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_duration: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpm_limit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpm_limit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_parallel_requests: Option<i64>,
}

/// The limits a live object reports, borrowed from it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveLimits<'a> {
    pub max_budget: Option<f64>,
    pub budget_duration: Option<&'a str>,
    pub tpm_limit: Option<i64>,
    pub rpm_limit: Option<i64>,
    pub max_parallel_requests: Option<i64>,
}

/// A LiteLLM object with limits. The answers keep them as plain fields
/// (decoded on every poll: no `#[serde(flatten)]`, which buffers the whole
/// object first), and this reads them as one.
pub trait Limited {
    fn limits(&self) -> LiveLimits<'_>;
}

/// Implements [`Limited`] for an answer type with the five limit fields.
macro_rules! limited {
    ($($info:ty),*) => {$(
        impl $crate::litellm::Limited for $info {
            fn limits(&self) -> $crate::litellm::LiveLimits<'_> {
                $crate::litellm::LiveLimits {
                    max_budget: self.max_budget,
                    budget_duration: self.budget_duration.as_deref(),
                    tpm_limit: self.tpm_limit,
                    rpm_limit: self.rpm_limit,
                    max_parallel_requests: self.max_parallel_requests,
                }
            }
        }
    )*};
}

limited!(
    super::TeamInfo,
    super::KeyInfo,
    super::BudgetInfo,
    super::UserInfo
);
