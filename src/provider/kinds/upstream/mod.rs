//! What makes the proxy call an upstream, shared by the kinds that do
//! (models, credentials, MCP servers): the `litellm_params` of models and
//! credentials field by field, their secrets and fingerprints
//! ([`params`]), and LiteLLM's provider families with what a tenant must
//! bring and may not give ([`families`]).

pub mod families;
pub mod params;
