//! Types shared by every managed kind: references, management policies,
//! Crossplane-style conditions.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Annotation holding the LiteLLM id of the object (Crossplane's external name).
pub const EXTERNAL_NAME: &str = "crossplane.io/external-name";
/// Annotation that stops reconciliation while present and `"true"`.
pub const PAUSED: &str = "crossplane.io/paused";

/// Whether `annotations` pause the object ([`PAUSED`] set to `"true"`).
pub fn paused_by_annotation(annotations: &std::collections::BTreeMap<String, String>) -> bool {
    annotations.get(PAUSED).is_some_and(|v| v == "true")
}
/// Annotation overriding the poll interval (a Go-style duration: `30s`, `5m`).
pub const POLL_INTERVAL: &str = "crossplane.io/poll-interval";

/// The bounds of the CRD fields, so that one object cannot hurt everyone.
///
/// kube-rs decodes a whole list (and so the watch of a kind, for every
/// namespace) or nothing: one object the API server accepted but the Rust
/// types cannot hold stops the provider for all of them. So every integer
/// field has a minimum and a maximum its Rust type holds, every string that
/// becomes a name or an id a maximum length, and every list and free-form
/// map a maximum size, and the API server refuses the rest with a message
/// naming the field. Integer maxima are at most 2^53 - 1: the API server
/// keeps a CRD's `maximum` as a float64, which holds no larger integer
/// exactly.
pub mod bounds {
    /// Tokens or requests per minute (`tpmLimit`, `rpmLimit`, a model's
    /// `tpm`, `rpm`): 2^53 - 1, JavaScript's `Number.MAX_SAFE_INTEGER`.
    /// LiteLLM stores these as BIGINT (team, key, budget) or JSON (model),
    /// and the largest integer every JSON reader (LiteLLM's admin UI too)
    /// reads exactly is still far beyond any real rate.
    pub const MAX_RATE_LIMIT: i64 = (1 << 53) - 1;
    /// `maxParallelRequests`: LiteLLM stores it as a PostgreSQL INTEGER,
    /// and LiteLLM 1.108.7 answers a larger value with HTTP 500 (which
    /// would be retried forever).
    pub const MAX_PARALLEL_REQUESTS: i64 = i32::MAX as i64;
    /// Replicas of a provisioned proxy. Every replica holds its own
    /// connection pool to the one database, which gives out long before a
    /// thousand replicas.
    pub const MAX_REPLICAS: i32 = 1000;
    /// Replica counts the provider reports in status (a Deployment's are
    /// int32).
    pub const MAX_STATUS_REPLICAS: i32 = i32::MAX;
    /// `observedGeneration` in status: a `metadata.generation`, counting one
    /// per spec change.
    pub const MAX_GENERATION: i64 = (1 << 53) - 1;

    /// Names of Kubernetes objects (DNS subdomains), keys of a Secret and
    /// DNS host names.
    pub const MAX_NAME_LENGTH: u32 = 253;
    /// Namespace names (DNS labels) and PostgreSQL identifiers.
    pub const MAX_LABEL_LENGTH: u32 = 63;
    /// `teamAlias`, `keyAlias`: LiteLLM sets no limit; the function's
    /// default key alias `<namespace>/<composite>/<key>` takes up to 571.
    pub const MAX_ALIAS_LENGTH: u32 = 1024;
    /// Raw LiteLLM ids (`teamId`, `budgetId`): a UUID, or an id the provider
    /// chose (`<cluster>/<namespace>/<name>`, up to about 360).
    pub const MAX_ID_LENGTH: u32 = 512;
    /// A public model name (`modelName`).
    pub const MAX_MODEL_NAME_LENGTH: u32 = 256;
    /// An entry of a `models` list: a public model name, possibly behind a
    /// namespace (`<namespace>/<model name>`).
    pub const MAX_MODEL_REF_LENGTH: u32 = MAX_LABEL_LENGTH + 1 + MAX_MODEL_NAME_LENGTH;
    /// The upstream model (`litellmParams.model`), such as
    /// `bedrock/arn:aws:bedrock:...`.
    pub const MAX_UPSTREAM_MODEL_LENGTH: u32 = 512;
    /// URLs (endpoints, `apiBase`).
    pub const MAX_URL_LENGTH: u32 = 2048;
    /// Short words: an API version, a pull policy, a Service type.
    pub const MAX_WORD_LENGTH: u32 = 64;
    /// An image repository, registry included (the distribution spec's
    /// limit for a name).
    pub const MAX_IMAGE_REPOSITORY_LENGTH: u32 = 255;
    /// An image tag (the distribution spec's limit).
    pub const MAX_IMAGE_TAG_LENGTH: u32 = 128;

    /// Entries of a `models` list.
    pub const MAX_MODELS: u32 = 1024;
    /// Namespaces named in `allowedNamespaces.names` (a label selector
    /// admits more).
    pub const MAX_NAMESPACES: u32 = 1024;
    /// Management policies: there are six, so a longer list only repeats.
    pub const MAX_MANAGEMENT_POLICIES: u32 = 6;

    /// Values of a credential, in `values` and in `plainValues` each
    /// (LiteLLM's providers take a dozen at the most; each value from a
    /// Secret has a fingerprint in status, up to [`MAX_FINGERPRINTS`]).
    pub const MAX_CREDENTIAL_VALUES: u32 = MAX_FINGERPRINTS;
    /// A plain credential value (`api_base`, `aws_region_name`, ...).
    pub const MAX_PLAIN_VALUE_LENGTH: u32 = MAX_URL_LENGTH;
    /// A credential's `displayName`: LiteLLM's limit.
    pub const MAX_DISPLAY_NAME_LENGTH: u32 = 255;
    /// A user's `userEmail`: the longest address SMTP carries (RFC 5321's
    /// path limit, less its angle brackets).
    pub const MAX_EMAIL_LENGTH: u32 = 254;

    /// Top-level fields of LiteLLM `metadata` (LiteLLM reads about twenty
    /// well-known ones).
    pub const MAX_METADATA_PROPERTIES: u32 = 64;
    /// Top-level fields of a model's `modelInfo`.
    pub const MAX_MODEL_INFO_PROPERTIES: u32 = 128;
    /// Top-level fields of one proxy-config section of the instance
    /// (`litellmSettings` alone has over a hundred settings).
    pub const MAX_CONFIG_PROPERTIES: u32 = 256;
    /// A model's `timeout` and `streamTimeout`: a day.
    pub const MAX_TIMEOUT_SECONDS: i64 = 86_400;
    /// A model's `maxRetries`.
    pub const MAX_RETRIES: i64 = 100;
    /// A model's routing `tags`.
    pub const MAX_TAGS: u32 = 64;
    /// Members of a team.
    pub const MAX_MEMBERS: u32 = 256;
    /// Secret fingerprints a status records: one per secret field.
    pub const MAX_FINGERPRINTS: u32 = 32;

    /// An MCP server's `description`.
    pub const MAX_DESCRIPTION_LENGTH: u32 = 4096;
    /// Tools an MCP server's `allowedTools` names.
    pub const MAX_TOOLS: u32 = 256;
    /// An MCP access group: a namespace, `/` and a name.
    pub const MAX_ACCESS_GROUP_LENGTH: u32 = MAX_LABEL_LENGTH + 1 + MAX_NAME_LENGTH;
    /// MCP servers, access groups or vector stores one `objectPermission`
    /// names, in each of its lists.
    pub const MAX_OBJECT_PERMISSIONS: u32 = 256;
}

/// A reference to the `LiteLLMInstance` an entity is reconciled against.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceRef {
    /// Name of the LiteLLMInstance.
    #[schemars(length(max = bounds::MAX_NAME_LENGTH))]
    pub name: String,
    /// Namespace of the LiteLLMInstance; defaults to the resource's own. A
    /// reference into another namespace is honoured only when that instance's
    /// `spec.allowedNamespaces` admits this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_LABEL_LENGTH))]
    pub namespace: Option<String>,
}

/// A reference to another resource of this API in the same namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocalRef {
    /// Name of the referenced resource.
    #[schemars(length(max = bounds::MAX_NAME_LENGTH))]
    pub name: String,
}

/// A key in a Secret in the resource's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeySelector {
    /// Name of the Secret.
    #[schemars(length(max = bounds::MAX_NAME_LENGTH))]
    pub name: String,
    /// Key within the Secret.
    #[schemars(length(max = bounds::MAX_NAME_LENGTH))]
    pub key: String,
}

/// Where a resource writes its connection details.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionSecretRef {
    /// Name of the Secret, in the resource's namespace.
    #[schemars(length(max = bounds::MAX_NAME_LENGTH))]
    pub name: String,
}

/// What the provider may do with the LiteLLM object, as Crossplane defines
/// management policies.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, JsonSchema,
)]
pub enum ManagementPolicy {
    /// Everything.
    #[serde(rename = "*")]
    All,
    /// Read the object and report it in `status.atProvider`.
    Observe,
    /// Create the object when it does not exist.
    Create,
    /// Correct drift between `forProvider` and the object.
    Update,
    /// Delete the object when the resource is deleted.
    Delete,
    /// Fill unset optional `forProvider` fields from the object.
    LateInitialize,
}

/// The default management policies: everything.
pub fn default_management_policies() -> Vec<ManagementPolicy> {
    vec![ManagementPolicy::All]
}

/// Whether `policies` allow `wanted`.
pub fn policy_allows(policies: &[ManagementPolicy], wanted: ManagementPolicy) -> bool {
    policies
        .iter()
        .any(|p| *p == ManagementPolicy::All || *p == wanted)
}

/// A status condition in Crossplane's shape.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Type of the condition: `Ready`, `Synced`, or a kind-specific one.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Machine-readable PascalCase reason.
    pub reason: String,
    /// Human-readable message naming the cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the condition last changed status (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// The `metadata.generation` the condition was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = bounds::MAX_GENERATION))]
    pub observed_generation: Option<i64>,
}

/// Finds the condition of type `type_` in `conditions`.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Free-form JSON object (`x-kubernetes-preserve-unknown-fields`), used for
/// LiteLLM `metadata` and for config sections passed through verbatim.
pub type FreeForm = BTreeMap<String, serde_json::Value>;

/// Schema for a free-form object whose fields the API server must keep,
/// unbounded: only for the function's `Input`, which no watch reads. The
/// managed kinds use the bounded schemas below.
pub fn free_form_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}

/// Schema for an optional unbounded free-form object (see
/// [`free_form_schema`]).
pub fn optional_free_form_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut s = free_form_schema(g);
    s.insert("nullable".into(), true.into());
    s
}

/// Schema for an optional free-form object whose fields the API server must
/// keep, with at most `max_properties` top-level fields.
///
/// Measured on Kubernetes 1.36: the API server compiles no CEL rule on such
/// an object (it is a message type with no fields to CEL, so `size()` does
/// not apply, and it cannot be a map of untyped values), so `maxProperties`
/// is the bound; the size of the values is bounded only by the API server's
/// object size limit.
fn optional_free_form(max_properties: u32) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "nullable": true,
        "maxProperties": max_properties,
        "x-kubernetes-preserve-unknown-fields": true
    })
}

/// Schema for optional LiteLLM `metadata`.
pub fn metadata_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    optional_free_form(bounds::MAX_METADATA_PROPERTIES)
}

/// Schema for an optional model `modelInfo`.
pub fn model_info_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    optional_free_form(bounds::MAX_MODEL_INFO_PROPERTIES)
}

/// Schema for an optional proxy-config section of the instance.
pub fn config_section_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    optional_free_form(bounds::MAX_CONFIG_PROPERTIES)
}

/// A per-token price: a decimal string with up to 15 decimals, such as
/// `"0.0000025"` (prices per token are far below a cent).
pub const PRICE_PATTERN: &str = r"^(0|[1-9][0-9]{0,5})(\.[0-9]{1,15})?$";

/// Schema for a per-token price, compared numerically.
pub fn price_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "pattern": PRICE_PATTERN
    })
}

/// Schema for a status's map of secret fingerprints, by field.
pub fn fingerprints_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "nullable": true,
        "maxProperties": bounds::MAX_FINGERPRINTS,
        "additionalProperties": {"type": "string", "maxLength": 64}
    })
}

/// Schema for money: a decimal string such as `"25.50"`, compared numerically.
pub fn money_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "pattern": MONEY_PATTERN
    })
}

/// Schema for a LiteLLM duration such as `30d`, `12h`, `1mo`.
pub fn duration_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "pattern": DURATION_PATTERN
    })
}

/// A fixed interval: a positive count of seconds, minutes, hours or days
/// (no months, whose length varies).
pub const INTERVAL_PATTERN: &str = r"^[1-9][0-9]{0,5}(s|m|h|d)$";

/// Schema for an interval such as `30d` or `12h`.
pub fn interval_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "pattern": INTERVAL_PATTERN
    })
}

/// Seconds of an interval of [`INTERVAL_PATTERN`]; `None` for anything else.
pub fn interval_seconds(text: &str) -> Option<u64> {
    let unit_at = text.find(|c: char| !c.is_ascii_digit())?;
    let (count, unit) = text.split_at(unit_at);
    if count.is_empty() || count.starts_with('0') || count.len() > 6 {
        return None;
    }
    let count: u64 = count.parse().ok()?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86400,
        _ => return None,
    };
    Some(count * seconds)
}

/// The combinations of management policies crossplane-runtime's managed
/// reconciler supports (`defaultSupportedManagementPolicies` in
/// crossplane-runtime v2 `pkg/reconciler/managed/policies.go`); any other
/// set is refused there with a `ReconcileError`, and so it is here.
pub const SUPPORTED_MANAGEMENT_POLICIES: &[&[ManagementPolicy]] = {
    use ManagementPolicy::{All, Create, Delete, LateInitialize, Observe, Update};
    &[
        &[All],
        &[Observe, Create, Update, Delete, LateInitialize],
        &[Observe],
        // Paused.
        &[],
        &[Observe, Create, Update, Delete],
        &[Observe, Create, Update, LateInitialize],
        &[Observe, Create, Update],
        &[Observe, Create, Delete, LateInitialize],
        &[Observe, Create, LateInitialize],
        &[Observe, Create, Delete],
        &[Observe, Create],
        &[Observe, Delete],
        &[Observe, Update],
        &[Observe, Update, LateInitialize],
        &[Observe, LateInitialize],
    ]
};

/// Whether `policies` (as a set: order and repetition do not matter) is a
/// combination Crossplane supports.
pub fn supported_management_policies(policies: &[ManagementPolicy]) -> bool {
    let set: std::collections::BTreeSet<ManagementPolicy> = policies.iter().copied().collect();
    SUPPORTED_MANAGEMENT_POLICIES.iter().any(|supported| {
        supported
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
            == set
    })
}

/// Whether `policies` pause the resource: an explicit empty list, as in
/// Crossplane (an absent field means `["*"]`).
pub fn paused_by_policies(policies: &[ManagementPolicy]) -> bool {
    policies.is_empty()
}

/// A non-negative decimal amount with at most six decimal places, below a
/// billion dollars.
///
/// LiteLLM takes and reports amounts as floats. With at most nine digits
/// before the point an amount has at most 15 significant digits (under
/// 2^53 micro-dollars), so it survives the float on the wire exactly; with
/// more, a value such as `999999999999.999999` comes back as `1e12` and
/// would be "corrected" at every poll, forever.
pub const MONEY_PATTERN: &str = r"^(0|[1-9][0-9]{0,8})(\.[0-9]{1,6})?$";
/// A LiteLLM budget/expiry duration: a positive count of seconds, minutes,
/// hours or days (up to six digits), or of months (up to four digits).
///
/// LiteLLM adds a duration to the current date, and a date past the year
/// 9999 fails there with HTTP 500 (a key's `999999mo` on 1.108.7), which
/// would be retried forever; 999999 days and 9999 months stay well before.
pub const DURATION_PATTERN: &str = r"^([1-9][0-9]{0,5}(s|m|h|d)|[1-9][0-9]{0,3}mo)$";

/// The fields every entity kind's spec shares (Crossplane's managed-resource
/// shape), flattened into each kind's spec.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedFields {
    /// The LiteLLMInstance to reconcile against.
    pub instance_ref: InstanceRef,
    /// What the provider may do with the LiteLLM object. `["*"]` by default;
    /// `["Observe"]` imports an existing object without touching it.
    #[serde(default = "default_management_policies")]
    #[schemars(length(max = bounds::MAX_MANAGEMENT_POLICIES))]
    pub management_policies: Vec<ManagementPolicy>,
    /// Secret (same namespace) to write connection details to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_connection_secret_to_ref: Option<ConnectionSecretRef>,
}

/// The status every entity kind shares: conditions and what LiteLLM reports.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedStatus<O> {
    /// `Ready` and `Synced`, with Crossplane's reasons; one of each type
    /// (a map keyed by `type`, as crossplane-runtime declares them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// The object as LiteLLM reports it. Never holds secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_provider: Option<O>,
    /// The `metadata.generation` this status was written for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = bounds::MAX_GENERATION))]
    pub observed_generation: Option<i64>,
    /// The last `crossplane.io/reconcile-requested-at` token handled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253))]
    pub last_handled_reconcile_at: Option<String>,
}

/// The annotation that asks for a reconciliation now (its value a token
/// of the asker's choosing), as crossplane-runtime names it; the token
/// handled is reported in `status.lastHandledReconcileAt`.
pub const RECONCILE_REQUESTED_AT: &str = "crossplane.io/reconcile-requested-at";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn management_policies_serialize_as_crossplane_spells_them() {
        let json =
            serde_json::to_string(&[ManagementPolicy::All, ManagementPolicy::LateInitialize])
                .unwrap();
        assert_eq!(json, r#"["*","LateInitialize"]"#);
    }

    #[test]
    fn star_allows_everything_and_observe_only_allows_observe() {
        assert!(policy_allows(
            &default_management_policies(),
            ManagementPolicy::Delete
        ));
        let observe = [ManagementPolicy::Observe];
        assert!(policy_allows(&observe, ManagementPolicy::Observe));
        assert!(!policy_allows(&observe, ManagementPolicy::Create));
    }

    #[test]
    fn intervals() {
        assert_eq!(interval_seconds("30d"), Some(30 * 86400));
        assert_eq!(interval_seconds("12h"), Some(43200));
        assert_eq!(interval_seconds("999999d"), Some(999_999 * 86400));
        for bad in ["", "d", "0d", "1mo", "1w", "1000000d", "-1d", "1.5h", "01h"] {
            assert_eq!(interval_seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn supported_combinations_are_crossplanes() {
        use ManagementPolicy::{All, Create, Delete, LateInitialize, Observe, Update};
        for supported in [
            &[All][..],
            &[Observe],
            &[],
            &[LateInitialize, Observe],
            &[Delete, Update, Create, Observe],
            &[Observe, Observe, Update],
        ] {
            assert!(supported_management_policies(supported), "{supported:?}");
        }
        for unsupported in [
            &[Create][..],
            &[Delete],
            &[All, Observe],
            &[Update, Delete],
            &[Observe, Update, Delete],
        ] {
            assert!(
                !supported_management_policies(unsupported),
                "{unsupported:?}"
            );
        }
        assert!(paused_by_policies(&[]));
        assert!(!paused_by_policies(&[Observe]));
    }
}
