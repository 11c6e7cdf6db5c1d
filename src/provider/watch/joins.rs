//! What a resource's LiteLLM object joins (a team, a budget, a credential,
//! ...): a fact the caches keep of every resource, by which a deletion
//! finds the resources that still use an object and a change finds the
//! resources to look at again.

use crate::api::common::LocalRef;

/// The kinds of object a resource can join.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Joins {
    Team,
    Budget,
    /// A `LiteLLMCredential`, which a `LiteLLMModel` uses by its name.
    Credential,
    /// A `LiteLLMUser`, whom a key belongs to (`userRef`/`userId`).
    User,
    /// A `LiteLLMMCPServer`, which a team or key names in its
    /// `objectPermission`.
    McpServer,
    /// A `LiteLLMVectorStore`, which a team or key names in its
    /// `objectPermission`.
    VectorStore,
    /// A `LiteLLMOrganization`, which a team belongs to
    /// (`organizationRef`/`organizationId`).
    Organization,
    /// A `LiteLLMModel`, whose public model name a fallback rule is for
    /// (`modelRef`).
    Model,
}

/// The fields of a kind's CRD by which the API server selects the
/// resources that join an object (its `selectableFields`, paths without
/// the leading dot): the name of the reference to a resource of the same
/// namespace, and the raw id. What `ManagedKind::join_fields` gives for
/// the joins a kind can be asked about that way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinFields {
    pub reference: &'static str,
    pub id: &'static str,
}

/// One object a resource's LiteLLM object joins: by reference to a
/// resource of its namespace, or by raw id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    pub what: Joins,
    /// The name of the resource of the same namespace it references.
    pub resource: Option<String>,
    /// The raw LiteLLM id it names.
    pub id: Option<String>,
}

/// The join of a resource that names a `what` by a reference to a resource
/// of its namespace (`resource`), or by raw id, if it names one: what
/// `ManagedKind::joins` returns for each such field. A key joins its team
/// by `teamRef`/`teamId` and its budget by `budgetRef`/`budgetId`; a model
/// joins its credential by `credential_ref: Option<LocalRef>`
/// (`spec.forProvider.litellmParams.credentialRef`): `join(Joins::Credential,
/// params.litellm_params.credential_ref.as_ref(), None)`.
pub fn join(what: Joins, resource: Option<&LocalRef>, id: Option<&str>) -> Option<Join> {
    (resource.is_some() || id.is_some()).then(|| Join {
        what,
        resource: resource.map(|r| r.name.clone()),
        id: id.map(str::to_owned),
    })
}

impl Join {
    /// Whether this join names the resource `name` whose external name is
    /// `id`.
    pub fn names(&self, what: Joins, name: &str, id: &str) -> bool {
        self.what == what
            && (self.resource.as_deref() == Some(name) || self.id.as_deref() == Some(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_that_names_nothing_joins_nothing() {
        let web = LocalRef { name: "web".into() };
        assert_eq!(join(Joins::Team, None, None), None);
        assert_eq!(
            join(Joins::Credential, Some(&web), None),
            Some(Join {
                what: Joins::Credential,
                resource: Some("web".into()),
                id: None,
            })
        );
        let by_id = join(Joins::Budget, None, Some("c/ns/b")).unwrap();
        assert!(by_id.names(Joins::Budget, "other", "c/ns/b"));
        assert!(!by_id.names(Joins::Credential, "other", "c/ns/b"));
    }

    #[test]
    fn a_join_names_a_resource_by_reference_or_by_id() {
        let by_ref = Join {
            what: Joins::Team,
            resource: Some("web".into()),
            id: None,
        };
        assert!(by_ref.names(Joins::Team, "web", "ns.web"));
        assert!(!by_ref.names(Joins::Budget, "web", "ns.web"));
        assert!(!by_ref.names(Joins::Team, "api", "ns.api"));
        let by_id = Join {
            what: Joins::Budget,
            resource: None,
            id: Some("c/ns/b".into()),
        };
        assert!(by_id.names(Joins::Budget, "anything", "c/ns/b"));
        assert!(!by_id.names(Joins::Budget, "b", "c/ns/other"));
    }
}
