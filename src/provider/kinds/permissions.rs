//! The `objectPermission` of teams and keys, written once for both: the
//! `LiteLLMMCPServer`s and `LiteLLMVectorStore`s it names (references,
//! joins), what is sent, what is
//! drift and what a tenant may not ask for.

use crate::api::common::LocalRef;
use crate::api::mcp_server::ObjectPermission;
use crate::litellm;
use crate::provider::managed::diff::{same_set, Diff};
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::joins::{join, Join, Joins};

/// The prefix of a tenant's MCP access groups: its namespace and a `/`.
pub fn group_prefix(namespace: &str) -> String {
    format!("{namespace}/")
}

/// `objectPermission.mcpServerRefs` of a team or key: the field of its
/// reference.
pub const MCP_SERVER_REFS: &str = "objectPermission.mcpServerRefs";
/// `objectPermission.vectorStoreRefs` of a team or key: the field of its
/// reference.
pub const VECTOR_STORE_REFS: &str = "objectPermission.vectorStoreRefs";
/// The field of the drift of a team's or key's `objectPermission`.
pub const OBJECT_PERMISSION: &str = "objectPermission";

/// The `LiteLLMMCPServer`s and `LiteLLMVectorStore`s a team's or key's
/// `objectPermission` names, to resolve before anything is written.
pub fn permission_references(permission: Option<&ObjectPermission>) -> Vec<Reference> {
    let names = |refs: Option<&Vec<LocalRef>>| -> Vec<String> {
        refs.into_iter().flatten().map(|r| r.name.clone()).collect()
    };
    let mut references = Vec::new();
    let servers = names(permission.and_then(|p| p.mcp_server_refs.as_ref()));
    if !servers.is_empty() {
        references.push(Reference::McpServers {
            field: MCP_SERVER_REFS,
            names: servers,
        });
    }
    let stores = names(permission.and_then(|p| p.vector_store_refs.as_ref()));
    if !stores.is_empty() {
        references.push(Reference::VectorStores {
            field: VECTOR_STORE_REFS,
            names: stores,
        });
    }
    references
}

/// The MCP servers a team or key joins (by reference and by raw id): their
/// deletion waits for it, and their becoming Ready wakes it.
pub fn permission_joins(permission: Option<&ObjectPermission>) -> Vec<Join> {
    let Some(permission) = permission else {
        return Vec::new();
    };
    let by_ref = permission
        .mcp_server_refs
        .iter()
        .flatten()
        .filter_map(|r| join(Joins::McpServer, Some(r), None));
    let by_id = permission
        .mcp_servers
        .iter()
        .flatten()
        .filter_map(|id| join(Joins::McpServer, None, Some(id)));
    let stores_by_ref = permission
        .vector_store_refs
        .iter()
        .flatten()
        .filter_map(|r| join(Joins::VectorStore, Some(r), None));
    let stores_by_id = permission
        .vector_stores
        .iter()
        .flatten()
        .filter_map(|id| join(Joins::VectorStore, None, Some(id)));
    by_ref
        .chain(by_id)
        .chain(stores_by_ref)
        .chain(stores_by_id)
        .collect()
}

/// What a team or key sends as `object_permission`: the servers of the
/// resolved references and the raw ids, the access groups and vector
/// stores, every list whole (LiteLLM merges by field, so `[]` clears one).
/// `None` when `objectPermission` is unset.
pub fn permission_request(
    permission: Option<&ObjectPermission>,
    refs: &Resolved,
) -> Option<litellm::ObjectPermission> {
    let permission = permission?;
    let mut mcp_servers: Vec<String> = refs.ids(MCP_SERVER_REFS).unwrap_or_default().to_vec();
    mcp_servers.extend(permission.mcp_servers.iter().flatten().cloned());
    let mut vector_stores: Vec<String> = refs.ids(VECTOR_STORE_REFS).unwrap_or_default().to_vec();
    vector_stores.extend(permission.vector_stores.iter().flatten().cloned());
    Some(litellm::ObjectPermission {
        mcp_servers,
        mcp_access_groups: permission.mcp_access_groups.clone().unwrap_or_default(),
        vector_stores,
    })
}

/// Marks `objectPermission` when it is set and the live one differs in
/// any list (compared as sets).
pub fn permission_diff(
    diff: &mut Diff,
    permission: Option<&ObjectPermission>,
    refs: &Resolved,
    live: Option<&litellm::ObjectPermission>,
) {
    let Some(want) = permission_request(permission, refs) else {
        return;
    };
    let empty = litellm::ObjectPermission::default();
    let have = live.unwrap_or(&empty);
    let same = same_set(Some(&want.mcp_servers), &have.mcp_servers)
        && same_set(Some(&want.mcp_access_groups), &have.mcp_access_groups)
        && same_set(Some(&want.vector_stores), &have.vector_stores);
    if !same {
        diff.mark(OBJECT_PERMISSION);
    }
}

/// Why a team's or key's `objectPermission` in `namespace` must not be
/// written: outside the LiteLLMInstance's namespace no raw server id (it
/// could be another namespace's server: `mcpServerRefs` name this
/// namespace's), no vector store (LiteLLM records no owner of one), and
/// access groups only of the namespace's prefix (a group of another name
/// may hold other namespaces' servers). Names the field and what the
/// tenant wrote, never another tenant.
pub fn permission_refusal(
    permission: Option<&ObjectPermission>,
    namespace: &str,
    instance_namespace: &str,
) -> Option<String> {
    const WHERE: &str = "outside the LiteLLMInstance's namespace";
    let permission = permission?;
    if namespace == instance_namespace {
        return None;
    }
    if permission
        .mcp_servers
        .as_ref()
        .is_some_and(|s| !s.is_empty())
    {
        return Some(format!(
            "forProvider.objectPermission.mcpServers: raw MCP server ids are refused {WHERE}, \
             since they could name another namespace's server; name this namespace's \
             LiteLLMMCPServers in mcpServerRefs"
        ));
    }
    if permission
        .vector_stores
        .as_ref()
        .is_some_and(|s| !s.is_empty())
    {
        return Some(format!(
            "forProvider.objectPermission.vectorStores: vector store ids are refused {WHERE}: \
             a raw id could name another namespace's vector store; name this namespace's \
             LiteLLMVectorStores in vectorStoreRefs"
        ));
    }
    let own = group_prefix(namespace);
    for group in permission.mcp_access_groups.iter().flatten() {
        if !group.starts_with(&own) {
            return Some(format!(
                "forProvider.objectPermission.mcpAccessGroups: {group:?} must start with \
             {own:?} {WHERE}: a group of another name may hold other namespaces' servers"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::LocalRef;

    fn permission() -> ObjectPermission {
        ObjectPermission {
            mcp_server_refs: Some(vec![LocalRef {
                name: "github".into(),
            }]),
            mcp_servers: None,
            mcp_access_groups: Some(vec!["ns/dev".into()]),
            vector_store_refs: None,
            vector_stores: None,
        }
    }

    #[test]
    fn vector_stores_by_reference_are_resolved_joined_and_sent_with_raw_ids() {
        let by_ref = ObjectPermission {
            vector_store_refs: Some(vec![LocalRef {
                name: "handbook".into(),
            }]),
            vector_stores: Some(vec!["vs-raw".into()]),
            ..permission()
        };
        let references = permission_references(Some(&by_ref));
        let Some(Reference::VectorStores { field, names }) = references.last() else {
            panic!("{references:?}")
        };
        assert_eq!(
            (*field, names.as_slice()),
            (VECTOR_STORE_REFS, &["handbook".to_owned()][..])
        );
        let refs = Resolved::default()
            .with_ids(MCP_SERVER_REFS, vec!["ns.github".into()])
            .with_ids(VECTOR_STORE_REFS, vec!["ns.handbook".into()]);
        let sent = permission_request(Some(&by_ref), &refs).unwrap();
        assert_eq!(sent.vector_stores, ["ns.handbook", "vs-raw"]);
        let joins = permission_joins(Some(&by_ref));
        assert!(joins
            .iter()
            .any(|j| j.names(Joins::VectorStore, "handbook", "ns.handbook")));
        assert!(joins
            .iter()
            .any(|j| j.names(Joins::VectorStore, "anything", "vs-raw")));
        assert!(!joins
            .iter()
            .any(|j| j.names(Joins::McpServer, "handbook", "ns.handbook")));
        // A tenant names its own by reference; raw ids stay the platform's.
        let tenant_refs = ObjectPermission {
            vector_stores: None,
            ..by_ref.clone()
        };
        assert_eq!(
            permission_refusal(Some(&tenant_refs), "ns", "platform"),
            None
        );
        let why = permission_refusal(Some(&by_ref), "ns", "platform").unwrap();
        assert!(why.contains("objectPermission.vectorStores") && why.contains("vectorStoreRefs"));
    }

    #[test]
    fn an_object_permission_sends_resolved_servers_and_every_list_whole() {
        let refs = Resolved::default().with_ids(MCP_SERVER_REFS, vec!["ns.github".into()]);
        let sent = permission_request(Some(&permission()), &refs).unwrap();
        assert_eq!(sent.mcp_servers, ["ns.github"]);
        assert_eq!(sent.mcp_access_groups, ["ns/dev"]);
        assert!(sent.vector_stores.is_empty(), "[] clears it in LiteLLM");
        assert_eq!(permission_request(None, &refs), None, "unset: left alone");
        let platform = ObjectPermission {
            mcp_servers: Some(vec!["from-config".into()]),
            vector_stores: Some(vec!["vs-1".into()]),
            ..permission()
        };
        let sent = permission_request(Some(&platform), &refs).unwrap();
        assert_eq!(sent.mcp_servers, ["ns.github", "from-config"]);
        assert_eq!(sent.vector_stores, ["vs-1"]);
        let [Reference::McpServers { field, names }] = &permission_references(Some(&platform))[..]
        else {
            panic!()
        };
        assert_eq!(
            (*field, names.as_slice()),
            (MCP_SERVER_REFS, &["github".to_owned()][..])
        );
        assert!(permission_references(None).is_empty());
        let joins = permission_joins(Some(&platform));
        assert!(joins[0].names(Joins::McpServer, "github", "ns.github"));
        assert!(joins[1].names(Joins::McpServer, "anything", "from-config"));
        assert!(!joins[0].names(Joins::Team, "github", "ns.github"));
    }

    #[test]
    fn object_permission_diff_table() {
        let refs = Resolved::default().with_ids(MCP_SERVER_REFS, vec!["ns.github".into()]);
        let live = |servers: &[&str], groups: &[&str], stores: &[&str]| litellm::ObjectPermission {
            mcp_servers: servers.iter().map(|s| s.to_string()).collect(),
            mcp_access_groups: groups.iter().map(|s| s.to_string()).collect(),
            vector_stores: stores.iter().map(|s| s.to_string()).collect(),
        };
        let cases = [
            (
                "as sent",
                Some(live(&["ns.github"], &["ns/dev"], &[])),
                false,
            ),
            ("never set in LiteLLM", None, true),
            (
                "a server removed in the UI",
                Some(live(&[], &["ns/dev"], &[])),
                true,
            ),
            (
                "a server added in the UI",
                Some(live(&["ns.github", "other"], &["ns/dev"], &[])),
                true,
            ),
            (
                "a group removed",
                Some(live(&["ns.github"], &[], &[])),
                true,
            ),
            (
                "a vector store added",
                Some(live(&["ns.github"], &["ns/dev"], &["vs"])),
                true,
            ),
        ];
        for (case, have, drifts) in cases {
            let mut diff = Diff::new();
            permission_diff(&mut diff, Some(&permission()), &refs, have.as_ref());
            assert_eq!(diff.has(OBJECT_PERMISSION), drifts, "{case}");
            let mut unset = Diff::new();
            permission_diff(&mut unset, None, &refs, have.as_ref());
            assert!(unset.is_empty(), "{case}: unset is never compared");
        }
    }

    #[test]
    fn a_tenants_object_permission_names_only_its_own() {
        let with = |change: &dyn Fn(&mut ObjectPermission)| {
            let mut p = permission();
            change(&mut p);
            p
        };
        let cases = [
            ("references and own groups", permission(), None),
            (
                "a raw server id",
                with(&|p| p.mcp_servers = Some(vec!["team-b.github".into()])),
                Some("forProvider.objectPermission.mcpServers: "),
            ),
            (
                "a vector store",
                with(&|p| p.vector_stores = Some(vec!["vs-1".into()])),
                Some("forProvider.objectPermission.vectorStores: "),
            ),
            (
                "another group",
                with(&|p| p.mcp_access_groups = Some(vec!["engineering".into()])),
                Some("forProvider.objectPermission.mcpAccessGroups: "),
            ),
            (
                "empty lists",
                with(&|p| {
                    p.mcp_servers = Some(Vec::new());
                    p.vector_stores = Some(Vec::new());
                }),
                None,
            ),
        ];
        for (case, p, want) in cases {
            match (want, permission_refusal(Some(&p), "ns", "platform")) {
                (None, None) => {}
                (Some(prefix), Some(message)) => {
                    assert!(message.starts_with(prefix), "{case}: {message}");
                    assert!(!message.contains("team-b"), "{case}: {message}");
                }
                (want, got) => panic!("{case}: want {want:?}, got {got:?}"),
            }
            assert_eq!(
                permission_refusal(Some(&p), "platform", "platform"),
                None,
                "{case}: the platform's namespace may name anything"
            );
        }
    }
}
