//! `LiteLLMAccessGroup`: a named set of models and MCP servers that
//! LiteLLM grants to the teams assigned to it (`/v1/access_group`).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{bounds, LocalRef, ManagedFields, ManagedStatus};

/// A LiteLLM access group: the models (`models`) and MCP servers a team
/// assigned to it may use on top of its own (LiteLLM checks a request's
/// model against the team's models, then against the models of the
/// team's access groups).
///
/// LiteLLM chooses the group's id (a UUID): it is the external name once
/// created. The group's name is this resource's `<cluster>/<namespace>/
/// <name>`, chosen before the create and unique in the proxy, so a create
/// whose answer is lost is found by it and never made twice; it is also
/// the ownership marker (LiteLLM keeps no metadata of a group).
///
/// A tenant may own access groups: its models follow the teams' rule
/// (listed, this namespace's own or public names), its MCP servers and
/// teams are this namespace's, by reference (raw ids only in the
/// LiteLLMInstance's namespace).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMAccessGroup",
    plural = "litellmaccessgroups",
    namespaced,
    shortname = "lag",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<AccessGroupObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMAccessGroupSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM access group.
    pub for_provider: AccessGroupParameters,
}

/// The desired state of an access group. Every field is the group's whole
/// setting: an unset list is written empty.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessGroupParameters {
    /// Free text (LiteLLM's UI shows it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_DESCRIPTION_LENGTH))]
    pub description: Option<String>,
    /// Model names the group grants (`access_model_names`). Outside the
    /// LiteLLMInstance's namespace: listed (not empty), each a public model
    /// name or one of this namespace's (`<namespace>/<name>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_MODELS),
        inner(length(min = 1, max = bounds::MAX_MODEL_REF_LENGTH))
    )]
    pub models: Option<Vec<String>>,
    /// LiteLLMMCPServers of this namespace the group grants, by name; each
    /// resolves to its server id once Ready. A server's deletion waits for
    /// the groups that name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_OBJECT_PERMISSIONS))]
    pub mcp_server_refs: Option<Vec<LocalRef>>,
    /// Raw LiteLLM MCP server ids, for servers not managed here: only in the
    /// LiteLLMInstance's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_OBJECT_PERMISSIONS),
        inner(length(min = 1, max = bounds::MAX_ID_LENGTH))
    )]
    pub mcp_server_ids: Option<Vec<String>>,
    /// LiteLLMTeams of this namespace assigned to the group, by name; each
    /// resolves to its team id once Ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_MEMBERS))]
    pub team_refs: Option<Vec<LocalRef>>,
    /// Raw LiteLLM team ids, for teams not managed here: only in the
    /// LiteLLMInstance's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_MEMBERS),
        inner(length(min = 1, max = bounds::MAX_ID_LENGTH))
    )]
    pub team_ids: Option<Vec<String>>,
}

/// An access group as the admin API reports it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessGroupObservation {
    /// LiteLLM's id of the group (the external name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_ID_LENGTH))]
    pub access_group_id: Option<String>,
    /// `<cluster>/<namespace>/<name>` of the resource that owns it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_ACCESS_GROUP_LENGTH))]
    pub access_group_name: Option<String>,
    /// The teams LiteLLM reports attached to the group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_MEMBERS),
        inner(length(max = bounds::MAX_ID_LENGTH))
    )]
    pub assigned_team_ids: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub updated_at: Option<String>,
}
