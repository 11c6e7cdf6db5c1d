//! Which credentials LiteLLM 1.108.7 reads for each of its provider
//! families, what it falls back on without them, and so what a tenant's
//! model must bring for the proxy never to call the tenant's upstream with
//! the platform's provider keys or cloud identity (docs/tenancy.md).
//!
//! LiteLLM fills every credential a deployment leaves out from the proxy:
//! its module settings (`litellm.api_key`, ...), its environment
//! (`OPENAI_API_KEY`, ...), its files (`~/.aws/credentials`,
//! `GOOGLE_APPLICATION_CREDENTIALS`) and its ambient identity (instance
//! metadata, managed identities, pod identity). A tenant chooses the
//! upstream (`apiBase`), so whatever LiteLLM fills in goes to the tenant.
//!
//! The rules are built from one table, [`FAMILIES`]: for each family the
//! LiteLLM provider names routed through it, the parameter sets that, given
//! from the tenant's own Secrets, pre-empt every fallback, and the
//! fallbacks themselves (for the error text and the docs). For a model
//! outside the platform's namespaces (see `LiteLLMInstance.spec.
//! publicModelNamespaces`):
//!
//! - the family comes from `customLlmProvider`, else from the model's
//!   `<provider>/` prefix, as LiteLLM's `get_llm_provider` takes it; a model
//!   without either, or of a family not in the table, is refused;
//! - one of the family's sets must be given, each secret of it from a
//!   Secret of the tenant's namespace (the model's own references or its
//!   `LiteLLMCredential`'s values), non-empty;
//! - parameters that select the proxy's own identity, its files or another
//!   route ([`refused_param`]) and values LiteLLM dereferences into the
//!   proxy's environment, files or metadata ([`refused_value`]) are refused
//!   wherever a value can be given: typed fields, `additionalParams`, and a
//!   credential's `values` and `plainValues`.
//!
//! Some fallbacks no deployment parameter pre-empts: LiteLLM prefers a few
//! variables of the proxy's environment even to a deployment's own keys
//! ([`Family::overriding`]). The provider cannot see an attached proxy's
//! environment, so those are documented as the platform's part: a proxy
//! that serves tenants must not set them.
//!
//! Every row cites where LiteLLM 1.108.7 reads the family's credentials;
//! paths are relative to the `litellm` package.

use serde_json::Value;

use crate::api::credential::CredentialParameters;
use crate::api::model::ModelParameters;
use crate::provider::kinds::upstream::params;

/// A LiteLLM provider family: the provider names that share one way of
/// finding credentials.
#[derive(Debug)]
pub struct Family {
    /// The family's name in messages and docs.
    pub name: &'static str,
    /// The LiteLLM provider names (`custom_llm_provider`, or the model's
    /// prefix) routed through it.
    pub providers: &'static [&'static str],
    /// The parameter sets that pre-empt every fallback: one of them must be
    /// given whole. A secret parameter (by LiteLLM's naming, see
    /// [`crate::provider::kinds::upstream::params::is_secret_name`]) counts only from a Secret;
    /// a setting may be given in plain.
    pub own: &'static [&'static [&'static str]],
    /// What LiteLLM falls back on without them, in order.
    pub fallbacks: &'static str,
    /// Variables of the proxy's environment LiteLLM prefers even to the
    /// deployment's own credentials: no parameter pre-empts them.
    pub overriding: &'static str,
    /// Substrings of `api_base` that send the family down a path on which
    /// no set pre-empts the proxy's credentials.
    pub refused_api_base: &'static [&'static str],
}

/// The families LiteLLM 1.108.7 routes whose credentials are known here. A
/// provider in none of them is refused for tenants.
pub const FAMILIES: &[Family] = &[
    // main.py:_complete_custom_openai (api_key or litellm.api_key or
    // litellm.openai_key or get_secret("OPENAI_API_KEY")),
    // main.py:_complete_text_completion_openai, main.py:embedding (openai
    // branch), llms/openai/openai.py:_get_openai_client (the SDK reads
    // OPENAI_API_KEY when given none), llms/openai/workload_identity.py
    // (only towards https://*.api.openai.com).
    Family {
        name: "openai",
        providers: &[
            "openai",
            "custom_openai",
            "text-completion-openai",
            "openai_like",
        ],
        own: &[&["api_key"]],
        fallbacks: "litellm.api_key, litellm.openai_key, OPENAI_API_KEY (also read by the OpenAI \
                    SDK), OPENAI_LIKE_API_KEY for openai_like",
        overriding: "OPENAI_ORGANIZATION, OPENAI_ORG_ID, OPENAI_PROJECT_ID (identifiers, no \
                     credentials, which the OpenAI SDK sends as headers on routes where no \
                     parameter replaces them)",
        refused_api_base: &[],
    },
    // llms/litellm_proxy/chat/transformation.py:_get_openai_compatible_provider_info
    // (api_key or LITELLM_PROXY_API_KEY), then main.py:_complete_custom_openai.
    Family {
        name: "litellm_proxy",
        providers: &["litellm_proxy"],
        own: &[&["api_key"]],
        fallbacks: "LITELLM_PROXY_API_KEY, then litellm.api_key, litellm.openai_key, \
                    OPENAI_API_KEY",
        overriding: "",
        refused_api_base: &[],
    },
    // llms/hosted_vllm/chat/transformation.py:_get_openai_compatible_provider_info
    // (api_key or HOSTED_VLLM_API_KEY or "fake-api-key"),
    // router.py:_arefresh_deployment_model_info (sends it to {api_base}/v1/models).
    Family {
        name: "hosted_vllm",
        providers: &["hosted_vllm"],
        own: &[&["api_key"]],
        fallbacks: "HOSTED_VLLM_API_KEY",
        overriding: "",
        refused_api_base: &[],
    },
    // litellm_core_utils/get_llm_provider_logic.py:_get_openai_compatible_provider_info
    // (ollama: api_key or OLLAMA_API_KEY), main.py:_complete_ollama_chat
    // (api_key or litellm.ollama_key or OLLAMA_API_KEY or litellm.api_key).
    Family {
        name: "ollama",
        providers: &["ollama", "ollama_chat"],
        own: &[&["api_key"]],
        fallbacks: "OLLAMA_API_KEY, litellm.ollama_key, litellm.api_key",
        overriding: "",
        refused_api_base: &[],
    },
    // main.py:_complete_huggingface (api_key or litellm.huggingface_key or
    // HF_TOKEN or HUGGINGFACE_API_KEY or litellm.api_key), main.py:embedding.
    Family {
        name: "huggingface",
        providers: &["huggingface"],
        own: &[&["api_key"]],
        fallbacks: "litellm.huggingface_key, HF_TOKEN, HUGGINGFACE_API_KEY, litellm.api_key",
        overriding: "",
        refused_api_base: &[],
    },
    // get_llm_provider_logic.py:_get_openai_compatible_provider_info
    // (together_ai), then main.py:_complete_text_completion_openai and the
    // openai embedding branch of main.py:embedding.
    Family {
        name: "together_ai",
        providers: &["together_ai"],
        own: &[&["api_key"]],
        fallbacks: "TOGETHER_API_KEY, TOGETHER_AI_API_KEY, TOGETHERAI_API_KEY, \
                    TOGETHER_AI_TOKEN, then litellm.api_key, litellm.openai_key, OPENAI_API_KEY",
        overriding: "",
        refused_api_base: &[],
    },
    // main.py:_complete_openrouter, llms/openrouter/responses/transformation.py.
    Family {
        name: "openrouter",
        providers: &["openrouter"],
        own: &[&["api_key"]],
        fallbacks: "litellm.api_key, litellm.openrouter_key, OPENROUTER_API_KEY, OR_API_KEY",
        overriding: "",
        refused_api_base: &[],
    },
    // get_llm_provider_logic.py:_get_openai_compatible_provider_info
    // (deepseek), llms/deepseek/chat/transformation.py.
    Family {
        name: "deepseek",
        providers: &["deepseek"],
        own: &[&["api_key"]],
        fallbacks: "DEEPSEEK_API_KEY",
        overriding: "",
        refused_api_base: &[],
    },
    // llms/xai/common_utils.py:get_api_key, llms/xai/responses/transformation.py,
    // llms/xai/oauth.py (use_xai_oauth, refused: a token file of the host).
    Family {
        name: "xai",
        providers: &["xai"],
        own: &[&["api_key"]],
        fallbacks: "litellm.xai_key, litellm.api_key, XAI_API_KEY",
        overriding: "",
        refused_api_base: &[],
    },
    // get_llm_provider_logic.py:_get_openai_compatible_provider_info (groq),
    // main.py:_complete_groq.
    Family {
        name: "groq",
        providers: &["groq"],
        own: &[&["api_key"]],
        fallbacks: "GROQ_API_KEY, litellm.api_key, litellm.groq_key",
        overriding: "",
        refused_api_base: &[],
    },
    // llms/fireworks_ai/common_utils.py:resolve_fireworks_api_key, then the
    // OpenAI chain on main.py:_complete_text_completion_openai.
    Family {
        name: "fireworks_ai",
        providers: &["fireworks_ai"],
        own: &[&["api_key"]],
        fallbacks: "FIREWORKS_API_KEY, FIREWORKS_AI_API_KEY, FIREWORKSAI_API_KEY, \
                    FIREWORKS_AI_TOKEN, then litellm.api_key, litellm.openai_key, OPENAI_API_KEY",
        overriding: "",
        refused_api_base: &[],
    },
    // llms/mistral/chat/transformation.py:_get_openai_compatible_provider_info,
    // main.py:_complete_mistral.
    Family {
        name: "mistral",
        providers: &["mistral", "codestral", "text-completion-codestral"],
        own: &[&["api_key"]],
        fallbacks: "MISTRAL_AZURE_API_KEY, MISTRAL_API_KEY (CODESTRAL_API_KEY for codestral), \
                    litellm.api_key",
        overriding: "",
        refused_api_base: &[],
    },
    // main.py:_complete_cohere_chat (api_key or litellm.cohere_key or
    // COHERE_API_KEY or CO_API_KEY or litellm.api_key), main.py:embedding.
    Family {
        name: "cohere",
        providers: &["cohere", "cohere_chat"],
        own: &[&["api_key"]],
        fallbacks: "litellm.cohere_key, COHERE_API_KEY, CO_API_KEY, litellm.api_key",
        overriding: "",
        refused_api_base: &[],
    },
    // llms/databricks/common_utils.py:databricks_validate_environment (OAuth
    // M2M from DATABRICKS_CLIENT_ID/SECRET first, posted to the api_base's
    // host), main.py:_complete_databricks, _get_databricks_credentials (the
    // Databricks SDK's default chain).
    Family {
        name: "databricks",
        providers: &["databricks"],
        own: &[&["api_key"]],
        fallbacks: "litellm.api_key, litellm.databricks_key, DATABRICKS_API_KEY, the Databricks \
                    SDK's default credentials (environment, ~/.databrickscfg, cloud identity)",
        overriding: "DATABRICKS_CLIENT_ID with DATABRICKS_CLIENT_SECRET (LiteLLM posts them to \
                     the api_base's host before it looks at api_key)",
        refused_api_base: &[],
    },
    // llms/watsonx/common_utils.py:IBMWatsonXMixin.validate_environment
    // (token or WATSONX_TOKEN, then zen_api_key or WATSONX_ZENAPIKEY, then an
    // IAM exchange of api_key or WATSONX_APIKEY ...), get_api_params
    // (project_id or WATSONX_PROJECT_ID ...).
    Family {
        name: "watsonx",
        providers: &["watsonx", "watsonx_text"],
        own: &[&["token", "project_id"]],
        fallbacks: "WATSONX_TOKEN, WATSONX_ZENAPIKEY, an IAM token for WX_API_KEY, \
                    WATSONX_API_KEY or WATSONX_APIKEY; the project of WATSONX_PROJECT_ID",
        overriding: "",
        refused_api_base: &[],
    },
    // main.py:_complete_azure (api_key or litellm.api_key or litellm.azure_key
    // or AZURE_OPENAI_API_KEY or AZURE_API_KEY),
    // llms/azure/common_utils.py:initialize_azure_sdk_client and
    // get_azure_ad_token (Entra ID from AZURE_TENANT_ID/CLIENT_ID/CLIENT_SECRET,
    // username and password, OIDC, DefaultAzureCredential),
    // _init_azure_client_for_cloudflare_ai_gateway (the Cloudflare path).
    Family {
        name: "azure",
        providers: &["azure", "azure_text"],
        own: &[&["api_key"]],
        fallbacks: "litellm.api_key, litellm.azure_key, AZURE_OPENAI_API_KEY, AZURE_API_KEY, \
                    AZURE_AD_TOKEN, an Entra ID token for AZURE_TENANT_ID, AZURE_CLIENT_ID and \
                    AZURE_CLIENT_SECRET, the proxy's managed or workload identity",
        overriding: "AZURE_OPENAI_AD_TOKEN (read by the OpenAI SDK), AZURE_USERNAME with \
                     AZURE_PASSWORD and AZURE_CLIENT_ID (a token LiteLLM prefers to api_key)",
        refused_api_base: &["gateway.ai.cloudflare.com"],
    },
    // llms/azure_ai/common_utils.py:AzureFoundryModelInfo.get_api_key
    // (api_key or litellm.api_key or AZURE_AI_API_KEY), then
    // BaseAzureLLM.get_azure_ad_token; OpenAI model names on other hosts are
    // sent to azure (llms/azure_ai/chat/transformation.py:_is_azure_openai_model).
    Family {
        name: "azure_ai",
        providers: &["azure_ai"],
        own: &[&["api_key"]],
        fallbacks: "AZURE_AI_API_KEY, litellm.api_key, then the azure family's fallbacks; \
                    embeddings end in litellm.openai_key and OPENAI_API_KEY",
        overriding: "those of the azure family",
        refused_api_base: &["gateway.ai.cloudflare.com"],
    },
    // main.py:_complete_anthropic (api_key or litellm.anthropic_key or
    // litellm.api_key or ANTHROPIC_API_KEY),
    // llms/anthropic/common_utils.py:AnthropicConfig.validate_environment
    // (ANTHROPIC_AUTH_TOKEN, then workload identity federation, which only
    // api.anthropic.com receives).
    Family {
        name: "anthropic",
        providers: &["anthropic", "anthropic_text"],
        own: &[&["api_key"]],
        fallbacks: "litellm.anthropic_key, litellm.api_key, ANTHROPIC_API_KEY, \
                    ANTHROPIC_AUTH_TOKEN, workload identity federation",
        overriding: "",
        refused_api_base: &[],
    },
    // llms/bedrock/base_aws_llm.py:bedrock_bearer_token (api_key or
    // AWS_BEARER_TOKEN_BEDROCK), BaseAWSLLM.get_credentials (every aws_*
    // parameter from its AWS_* variable; web identity, role and profile
    // before keys; else boto3.Session(): environment, shared files and
    // profiles, SSO, credential_process, container and instance metadata).
    // A Bedrock API key (api_key) alone is not enough: rerank and
    // pass-through sign with SigV4 from the default chain.
    Family {
        name: "bedrock",
        providers: &["bedrock"],
        own: &[&["aws_access_key_id", "aws_secret_access_key"]],
        fallbacks: "the AWS_* variables of each parameter, the proxy's AWS profiles and shared \
                    credentials files, SSO, credential_process, its container or instance role",
        overriding: "AWS_BEARER_TOKEN_BEDROCK, AWS_ROLE_NAME, AWS_PROFILE_NAME, \
                     AWS_WEB_IDENTITY_TOKEN, AWS_SESSION_TOKEN (LiteLLM prefers them to a \
                     deployment's keys, or adds them to them)",
        refused_api_base: &[],
    },
    // llms/sagemaker/completion/handler.py:_load_credentials (the bedrock
    // chain, BaseAWSLLM.get_credentials),
    // llms/sagemaker/chat/transformation.py:SagemakerChatConfig.sign_request
    // (never passes api_key, so AWS_BEARER_TOKEN_BEDROCK).
    Family {
        name: "sagemaker",
        providers: &["sagemaker", "sagemaker_chat", "sagemaker_nova"],
        own: &[&["aws_access_key_id", "aws_secret_access_key"]],
        fallbacks: "the AWS_* variables of each parameter, the proxy's AWS profiles and shared \
                    credentials files, SSO, credential_process, its container or instance role",
        overriding: "AWS_BEARER_TOKEN_BEDROCK, AWS_ROLE_NAME, AWS_PROFILE_NAME, \
                     AWS_WEB_IDENTITY_TOKEN, AWS_SESSION_TOKEN",
        refused_api_base: &[],
    },
    // llms/vertex_ai/vertex_llm_base.py:VertexBase.get_vertex_ai_credentials
    // (vertex_credentials or VERTEXAI_CREDENTIALS), load_auth
    // (google.auth.default() without credentials; a string not starting
    // with `{` is read as a file of the host), _credentials_from_json
    // (external_account reads host files, URLs or the AWS chain). api_key
    // is never used for Vertex AI.
    Family {
        name: "vertex_ai",
        providers: &["vertex_ai", "vertex_ai_beta"],
        own: &[&["vertex_credentials"]],
        fallbacks: "VERTEXAI_CREDENTIALS, the proxy's application default credentials \
                    (GOOGLE_APPLICATION_CREDENTIALS, gcloud's, the metadata server)",
        overriding: "",
        refused_api_base: &[],
    },
    // main.py:_complete_vertex_ai_beta for gemini (api_key or
    // GOOGLE_API_KEY or GEMINI_API_KEY or PALM_API_KEY or litellm.api_key),
    // llms/gemini/common_utils.py:get_api_key_from_env; Gemini never uses
    // Google credentials (vertex_llm_base.py:_ensure_access_token).
    Family {
        name: "gemini",
        providers: &["gemini"],
        own: &[&["api_key"]],
        fallbacks: "GOOGLE_API_KEY, GEMINI_API_KEY, PALM_API_KEY, litellm.api_key",
        overriding: "",
        refused_api_base: &[],
    },
    // get_llm_provider_logic.py:_get_openai_compatible_provider_info (each
    // provider's own variable), then main.py:_complete_custom_openai
    // (litellm.api_key, litellm.openai_key, OPENAI_API_KEY).
    Family {
        name: "openai-compatible",
        providers: &[
            "perplexity",
            "deepinfra",
            "nvidia_nim",
            "cerebras",
            "sambanova",
            "anyscale",
            "nebius",
        ],
        own: &[&["api_key"]],
        fallbacks: "the provider's own variable (PERPLEXITYAI_API_KEY, DEEPINFRA_API_KEY, \
                    NVIDIA_NIM_API_KEY, CEREBRAS_API_KEY, SAMBANOVA_API_KEY, ANYSCALE_API_KEY, \
                    NEBIUS_API_KEY), then litellm.api_key, litellm.openai_key, OPENAI_API_KEY",
        overriding: "",
        refused_api_base: &[],
    },
];

/// The family of `provider`.
pub fn family(provider: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.providers.contains(&provider))
}

/// The families whose credentials a deployment of `model` (with
/// `custom_llm_provider`, the model's own or its credential's) may be
/// called with, as LiteLLM's `get_llm_provider` routes it
/// (litellm_core_utils/get_llm_provider_logic.py): `custom_llm_provider`
/// first, else the model's prefix. Besides: `azure/<model>` goes to openai
/// when the model is a Cohere or Mistral one (`is_non_openai_azure_model`,
/// checked before `custom_llm_provider`), and `azure_ai` sends OpenAI model
/// names to azure; either must then satisfy both. The error names the
/// provider it could not place, or says that none is named.
pub fn route(
    model: &str,
    custom_llm_provider: Option<&str>,
) -> Result<Vec<&'static Family>, Unrouted> {
    let prefix = model
        .split_once('/')
        .map(|(prefix, _)| prefix)
        .filter(|p| !p.is_empty());
    let provider = custom_llm_provider
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .or(prefix)
        .ok_or(Unrouted::Unnamed)?;
    let first = family(provider).ok_or_else(|| Unrouted::Unknown(provider.to_owned()))?;
    let mut families = vec![first];
    let mut add = |name: &str| {
        let extra = FAMILIES
            .iter()
            .find(|f| f.name == name)
            .expect("a family of the table");
        if !families.iter().any(|f| f.name == extra.name) {
            families.push(extra);
        }
    };
    if prefix == Some("azure") {
        add("openai");
    }
    if first.name == "azure_ai" {
        add("azure");
    }
    Ok(families)
}

/// Why a model could not be placed in a family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unrouted {
    /// Neither `customLlmProvider` nor a `<provider>/` prefix.
    Unnamed,
    /// A provider no family of the table routes.
    Unknown(String),
}

/// Whether `given` holds one of `family`'s sets whole: each secret of it
/// in `from_secrets`, each setting there or in `plain`.
pub fn satisfied(family: &Family, from_secrets: &[&str], plain: &[&str]) -> bool {
    family.own.iter().any(|set| {
        set.iter().all(|param| {
            from_secrets.contains(param)
                || (!crate::provider::kinds::upstream::params::is_secret_name(param)
                    && plain.contains(param))
        })
    })
}

/// The sets of `family` in words: `api_key`, or `aws_access_key_id and
/// aws_secret_access_key`, joined by `or`.
pub fn sets_in_words(family: &Family) -> String {
    family
        .own
        .iter()
        .map(|set| set.join(" and "))
        .collect::<Vec<_>>()
        .join(", or ")
}

/// The table as the tenancy docs show it (`docs/tenancy.md`, kept equal
/// by `tests/integration/generated.rs`): one row per family.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| family | LiteLLM providers | a tenant's model brings, from its Secrets | \
         LiteLLM's fallbacks without them | the proxy's environment must not set |\n\
         |---|---|---|---|---|\n",
    );
    let code = |items: &[&str]| {
        items
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for family in FAMILIES {
        let sets = family
            .own
            .iter()
            .map(|set| code(set).replace(", ", " and "))
            .collect::<Vec<_>>()
            .join(", or ");
        let overriding = if family.overriding.is_empty() {
            "-"
        } else {
            family.overriding
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            family.name,
            code(family.providers),
            sets,
            family.fallbacks,
            overriding
        ));
    }
    out
}

/// The parameters refused from tenants, with why, as the tenancy docs list
/// them.
pub fn refused_markdown() -> String {
    let mut out = String::new();
    for (name, why) in REFUSED_PARAMS {
        out.push_str(&format!("- `{name}`: {why}.\n"));
    }
    out.push_str(&format!(
        "- LiteLLM's server-owned settings ({}): reserved to the proxy's own identity.\n",
        SERVER_OWNED
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.push_str(&format!(
        "- Any parameter whose name has a part {}: it names a file of the proxy's host.\n",
        FILE_NAME_PARTS
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out
}

/// Parameters a tenant may not set, anywhere, and why: each selects the
/// proxy's own identity, reads its files, or routes the call where the
/// family's sets no longer pre-empt its credentials.
const REFUSED_PARAMS: &[(&str, &str)] = &[
    (
        "aws_profile_name",
        "selects a profile of the proxy's own AWS configuration (even an empty one selects its \
         default profile)",
    ),
    (
        "aws_role_name",
        "LiteLLM assumes a role with the proxy's own AWS identity when it runs as that role, or \
         when the model brings no keys",
    ),
    (
        "aws_web_identity_token",
        "LiteLLM reads it as a pointer (oidc/..., a secret's name) to a token of the proxy; a \
         token itself is never used",
    ),
    (
        "aws_sts_endpoint",
        "receives the proxy's signed role requests and identity tokens",
    ),
    (
        "aws_batch_role_arn",
        "a role for batches, assumed with the proxy's identity",
    ),
    (
        "s3_endpoint_url",
        "receives requests signed with the proxy's AWS identity",
    ),
    (
        "azure_username",
        "LiteLLM completes Azure sign-in settings from the proxy's environment, and a token from \
         them replaces the model's own key",
    ),
    (
        "azure_password",
        "LiteLLM completes Azure sign-in settings from the proxy's environment, and a token from \
         them replaces the model's own key",
    ),
    (
        "tenant_id",
        "LiteLLM completes Azure Entra ID settings from the proxy's environment (AZURE_TENANT_ID, \
         AZURE_CLIENT_ID, AZURE_CLIENT_SECRET), and a token from them replaces the model's own",
    ),
    (
        "client_id",
        "LiteLLM completes Azure Entra ID settings from the proxy's environment (AZURE_TENANT_ID, \
         AZURE_CLIENT_ID, AZURE_CLIENT_SECRET), and a token from them replaces the model's own",
    ),
    (
        "client_secret",
        "LiteLLM completes Azure Entra ID settings from the proxy's environment (AZURE_TENANT_ID, \
         AZURE_CLIENT_ID, AZURE_CLIENT_SECRET), and a token from them replaces the model's own",
    ),
    (
        "azure_scope",
        "sets the audience of the tokens LiteLLM gets with the proxy's Azure identity",
    ),
    (
        "azure_ad_token_provider",
        "selects how LiteLLM gets tokens with the proxy's Azure identity",
    ),
    (
        "use_litellm_proxy",
        "routes the call to LITELLM_PROXY_API_BASE with LITELLM_PROXY_API_KEY of the proxy's \
         environment",
    ),
    (
        "use_in_pass_through",
        "makes the model's credentials those of the proxy's pass-through endpoints, for every \
         caller",
    ),
    (
        "use_xai_oauth",
        "makes LiteLLM use the OAuth token file of the proxy's host",
    ),
    (
        "github_copilot_auth_type",
        "selects the proxy's own GitHub Copilot sign-in",
    ),
    (
        "github_copilot_user_session",
        "selects the proxy's own GitHub Copilot sign-in",
    ),
    (
        "ssl_verify",
        "a certificate bundle by file name is a file of the proxy's host",
    ),
];

/// Settings LiteLLM reserves to the proxy's own identity
/// (types/utils.py:server_owned_wif_litellm_params: Anthropic and OpenAI
/// workload identity federation, OAuth token exchange, GitHub Copilot). The
/// proxy refuses them from anyone but its administrators, and the provider
/// writes as one, so it refuses them from tenants itself.
const SERVER_OWNED: &[&str] = &[
    "anthropic_disable_workload_identity_federation",
    "anthropic_federation_rule_id",
    "anthropic_federation_workspace_id",
    "anthropic_identity_source",
    "anthropic_identity_token",
    "anthropic_identity_token_file",
    "anthropic_issuer_audience",
    "anthropic_issuer_signing_key_ref",
    "anthropic_issuer_subject",
    "anthropic_issuer_ttl_seconds",
    "anthropic_issuer_url",
    "anthropic_keycloak_auth_method",
    "anthropic_keycloak_client_id",
    "anthropic_keycloak_client_secret_ref",
    "anthropic_keycloak_scope",
    "anthropic_keycloak_token_url",
    "anthropic_organization_id",
    "anthropic_service_account_id",
    "openai_identity_provider_id",
    "openai_identity_token_file",
    "openai_service_account_id",
    "token_exchange_audience",
    "token_exchange_endpoint",
    "token_exchange_profile",
    "token_exchange_scope",
];

/// Parts of a parameter name (split at `_` and `-`) that name a file.
const FILE_NAME_PARTS: &[&str] = &["file", "files", "path", "dir", "directory", "filename"];

/// Why a tenant may not set the parameter `name` to `value` (a phrase to
/// follow the field), or `None`.
pub fn refused_param(name: &str, value: &Value) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    if lower == "ssl_verify" && value.is_boolean() {
        return None;
    }
    if let Some((_, why)) = REFUSED_PARAMS.iter().find(|(n, _)| *n == lower) {
        return Some((*why).to_owned());
    }
    if SERVER_OWNED.contains(&lower.as_str()) {
        return Some(
            "LiteLLM reserves this setting to the proxy's own identity (workload identity \
             federation, token exchange)"
                .to_owned(),
        );
    }
    if lower
        .split(['_', '-'])
        .any(|part| FILE_NAME_PARTS.contains(&part))
    {
        return Some("names a file, which LiteLLM would read on the proxy's host".to_owned());
    }
    None
}

/// The prefix by which LiteLLM's `get_secret` fetches a token with the
/// proxy's identity or reads one from its environment or files
/// (secret_managers/main.py:get_secret: `oidc/google/...` asks the metadata
/// server, `oidc/env/<VAR>`, `oidc/env_path/<VAR>`, `oidc/file/<path>`,
/// `oidc/azure/...`).
pub const OIDC_PREFIX: &str = "oidc/";

/// Whether a string LiteLLM may dereference starts with `prefix` (blanks
/// and case forgiven, to refuse rather than guess).
fn starts_with_loosely(value: &str, prefix: &str) -> bool {
    value
        .trim_start()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// Why a tenant may not give `value` for the parameter `name` (a phrase to
/// follow the field; never the value), or `None`. `secret` says it comes
/// from a Secret.
pub fn refused_value(name: &str, value: &str, secret: bool) -> Option<String> {
    if secret && value.trim().is_empty() {
        return Some(
            "the Secret's value is empty, and LiteLLM takes an empty credential for none: it \
             would fall back on the proxy's own"
                .to_owned(),
        );
    }
    if starts_with_loosely(value, OIDC_PREFIX) {
        return Some(format!(
            "a value of the form {OIDC_PREFIX}... makes LiteLLM fetch a token with the proxy's \
             identity, or read one from its environment or files"
        ));
    }
    if name.eq_ignore_ascii_case("vertex_credentials") {
        return vertex_credentials_refusal(value);
    }
    None
}

/// Why a tenant may not give the secret parameter `name` from a Secret:
/// the parameter itself ([`refused_param`]), or, once resolved, its
/// `value` ([`refused_value`]).
pub fn refused_secret(name: &str, value: Option<&str>) -> Option<String> {
    refused_param(name, &Value::Null).or_else(|| value.and_then(|v| refused_value(name, v, true)))
}

/// Why a tenant may not set the plain parameter `name` to `value`: the
/// parameter itself ([`refused_param`]), or one of the value's strings,
/// nested ones included ([`refused_value`]).
pub fn refused_setting(name: &str, value: &Value) -> Option<String> {
    refused_param(name, value).or_else(|| refused_json(name, value))
}

/// The first refusal of [`refused_value`] among the strings of a plain
/// `value` (nested ones included), or `None`.
fn refused_json(name: &str, value: &Value) -> Option<String> {
    match value {
        Value::String(text) => refused_value(name, text, false),
        Value::Array(items) => items.iter().find_map(|v| refused_json(name, v)),
        Value::Object(map) => map.values().find_map(|v| refused_json(name, v)),
        _ => None,
    }
}

/// The service-account types whose JSON carries the credential itself:
/// LiteLLM loads anything else from the proxy's host (a file path), or from
/// wherever an `external_account`'s source points (host files, URLs,
/// metadata, the proxy's AWS identity).
const VERTEX_CREDENTIAL_TYPES: &[&str] = &["service_account", "authorized_user"];

fn vertex_credentials_refusal(value: &str) -> Option<String> {
    let parsed: Option<serde_json::Map<String, Value>> = serde_json::from_str(value.trim()).ok();
    let Some(object) = parsed else {
        return Some(
            "must be a service account's JSON key itself: LiteLLM reads any other value as the \
             name of a file on the proxy's host"
                .to_owned(),
        );
    };
    let kind = object.get("type").and_then(Value::as_str);
    if kind.is_some_and(|k| VERTEX_CREDENTIAL_TYPES.contains(&k)) {
        return None;
    }
    Some(format!(
        "must be a JSON key of type {}: other types (external_account, ...) make LiteLLM read \
         host files, URLs or the proxy's cloud identity",
        VERTEX_CREDENTIAL_TYPES.join(" or ")
    ))
}

/// Why a tenant's model of `family` may not call `api_base`: a path on
/// which no parameter pre-empts the proxy's credentials.
pub fn refused_api_base(family: &Family, api_base: &str) -> Option<String> {
    let lower = api_base.to_ascii_lowercase();
    family
        .refused_api_base
        .iter()
        .find(|needle| lower.contains(*needle))
        .map(|needle| {
            format!(
                "a URL with {needle} sends the {} family down LiteLLM's path that uses the \
                 proxy's own credentials whatever the model brings",
                family.name
            )
        })
}

/// Where a model counts as a tenant's, for messages.
pub const TENANT: &str =
    "outside the LiteLLMInstance's namespace and its spec.publicModelNamespaces";

/// [`family_refusal`] for `params` as written, with `credential` as its
/// `LiteLLMCredential`: its Secret references count as given (its own
/// reconciliation checks their values). What a tenant's credential asks of
/// each model that uses it before a change is written.
pub fn family_refusal_as_written(
    params: &ModelParameters,
    credential: &CredentialParameters,
) -> Option<String> {
    let p = &params.litellm_params;
    let own: Vec<&str> = params::SECRET_PARAMS
        .iter()
        .filter(|s| (s.selector)(p).is_some())
        .map(|s| s.name)
        .collect();
    let plain = params::plain(p);
    let plain: Vec<&str> = plain.keys().map(String::as_str).collect();
    family_refusal(params, &own, &plain, Some(credential))
}

/// Why a tenant's model, with `from_secrets` (the `litellm_params` names
/// its own Secret references give, non-empty) and `plain` (those it sets in
/// plain), and with its `LiteLLMCredential`'s `credential`, does not bring
/// what its family needs: the family is not known, a set is missing, a
/// credential value is one a tenant may not give, or its `api_base` takes
/// a path on which nothing pre-empts the proxy's credentials. Also asked by
/// a tenant's credential for each model that uses it.
pub fn family_refusal(
    params: &ModelParameters,
    from_secrets: &[&str],
    plain: &[&str],
    credential: Option<&CredentialParameters>,
) -> Option<String> {
    let p = &params.litellm_params;
    let by_credential = "litellmParams.credentialRef";
    let mut secrets: Vec<&str> = from_secrets.to_vec();
    let mut settings: Vec<&str> = plain.to_vec();
    if let Some(credential) = credential {
        for value in &credential.values {
            if let Some(why) = refused_secret(&value.name, None) {
                return Some(format!(
                    "{by_credential}: its LiteLLMCredential's values[{}]: {why}",
                    value.name
                ));
            }
            secrets.push(&value.name);
        }
        for (name, value) in &credential.plain_values {
            if let Some(why) = refused_setting(name, &Value::String(value.clone())) {
                return Some(format!(
                    "{by_credential}: its LiteLLMCredential's plainValues.{name}: {why}"
                ));
            }
            settings.push(name);
        }
    }
    let plain_value =
        |name: &str| credential.and_then(|c| c.plain_values.get(name).map(String::as_str));
    // The model's own values fill first; the credential's fill the rest.
    // The model's own provider, else its prefix; a credential's
    // `custom_llm_provider` may fill a model without one, so a model that
    // leaves it to its credential must satisfy both routes.
    let mut providers = vec![(
        p.custom_llm_provider.as_deref(),
        if p.custom_llm_provider.is_some() {
            "litellmParams.customLlmProvider"
        } else {
            "litellmParams.model"
        },
    )];
    if p.custom_llm_provider.is_none() {
        if let Some(filled) = plain_value("custom_llm_provider") {
            providers.push((
                Some(filled),
                "litellmParams.credentialRef (its custom_llm_provider)",
            ));
        }
    }
    let mut routed: Vec<&Family> = Vec::new();
    for (provider, provider_field) in providers {
        match route(&p.model, provider) {
            Ok(found) => {
                for family in found {
                    if !routed.iter().any(|f| f.name == family.name) {
                        routed.push(family);
                    }
                }
            }
            // A model without a prefix whose credential names the
            // provider: the credential's routed decides (none: below).
            Err(Unrouted::Unnamed) => {}
            Err(Unrouted::Unknown(provider)) => {
                return Some(format!(
                    "{provider_field}: the LiteLLM provider {provider:?} is not in the table of \
                     provider families whose credentials are known (see the tenancy docs), so \
                     a model {TENANT} may not use it: LiteLLM might call its upstream with the \
                     proxy's own credentials"
                ))
            }
        }
    }
    if routed.is_empty() {
        return Some(format!(
            "litellmParams.model: a model {TENANT} must name its LiteLLM provider, as \
             <provider>/<model> or in litellmParams.customLlmProvider: which credentials \
             LiteLLM would take from the proxy depends on it"
        ));
    }
    let api_base = p.api_base.as_deref().or_else(|| plain_value("api_base"));
    for family in routed {
        if let Some(why) = api_base.and_then(|base| refused_api_base(family, base)) {
            return Some(format!("litellmParams.apiBase: {why}"));
        }
        if satisfied(family, &secrets, &settings) {
            continue;
        }
        let first = family.own.first().and_then(|set| set.first()).copied();
        let field = first
            .and_then(|name| params::SECRET_PARAMS.iter().find(|s| s.name == name))
            .map_or(by_credential, |s| s.field);
        return Some(format!(
            "{field}: a model of LiteLLM's {} family {TENANT} must bring {} from Secrets of its \
             namespace (its own Secret references, or the values of its LiteLLMCredential), \
             non-empty: without, LiteLLM calls the upstream with the proxy's own ({})",
            family.name,
            sets_in_words(family),
            family.fallbacks
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_provider_is_in_one_family_and_every_family_has_a_set() {
        let mut seen = std::collections::BTreeSet::new();
        for family in FAMILIES {
            assert!(!family.own.is_empty(), "{}", family.name);
            assert!(!family.fallbacks.is_empty(), "{}", family.name);
            for provider in family.providers {
                assert!(seen.insert(*provider), "{provider} twice");
            }
        }
        // The families the tenancy rules name.
        for provider in [
            "openai",
            "azure",
            "azure_ai",
            "anthropic",
            "bedrock",
            "sagemaker",
            "vertex_ai",
            "gemini",
            "mistral",
            "cohere",
            "groq",
            "together_ai",
            "deepseek",
            "xai",
            "openrouter",
            "fireworks_ai",
            "hosted_vllm",
            "ollama",
            "huggingface",
            "watsonx",
            "databricks",
        ] {
            assert!(family(provider).is_some(), "{provider}");
        }
        // Providers that use the proxy's own sign-in or run in its process.
        for provider in ["vllm", "github_copilot", "chatgpt", "bedrock_mantle", "oci"] {
            assert!(family(provider).is_none(), "{provider}");
        }
    }

    #[test]
    fn routes_follow_get_llm_provider() {
        let names = |model: &str, provider: Option<&str>| {
            route(model, provider).map(|fs| fs.iter().map(|f| f.name).collect::<Vec<_>>())
        };
        assert_eq!(names("openai/gpt-4o", None), Ok(vec!["openai"]));
        assert_eq!(names("gpt-4o", Some("groq")), Ok(vec!["groq"]));
        // customLlmProvider wins over the prefix, as in LiteLLM.
        assert_eq!(names("openai/gpt-4o", Some("bedrock")), Ok(vec!["bedrock"]));
        // azure/<cohere or mistral model> goes to openai whatever
        // customLlmProvider says, so both families' rules apply.
        assert_eq!(
            names("azure/command-r-plus", None),
            Ok(vec!["azure", "openai"])
        );
        assert_eq!(
            names("azure/command-r-plus", Some("bedrock")),
            Ok(vec!["bedrock", "openai"])
        );
        assert_eq!(names("dep-1", Some("azure")), Ok(vec!["azure"]));
        assert_eq!(
            names("azure_ai/gpt-4o", None),
            Ok(vec!["azure_ai", "azure"])
        );
        assert_eq!(names("gpt-4o", None), Err(Unrouted::Unnamed));
        assert_eq!(names("/gpt-4o", Some(" ")), Err(Unrouted::Unnamed));
        assert_eq!(
            names("github_copilot/gpt-4o", None),
            Err(Unrouted::Unknown("github_copilot".into()))
        );
    }

    #[test]
    fn a_set_is_met_only_whole_and_secrets_only_from_secrets() {
        let openai = family("openai").unwrap();
        assert!(satisfied(openai, &["api_key"], &[]));
        assert!(!satisfied(openai, &[], &["api_key"]));
        assert!(!satisfied(openai, &["aws_secret_access_key"], &[]));
        let bedrock = family("bedrock").unwrap();
        assert!(!satisfied(bedrock, &["aws_secret_access_key"], &[]));
        assert!(!satisfied(bedrock, &["api_key"], &[]));
        assert!(satisfied(
            bedrock,
            &["aws_access_key_id", "aws_secret_access_key"],
            &[]
        ));
        // A setting (no secret by its name) may be plain.
        let watsonx = family("watsonx").unwrap();
        assert!(satisfied(watsonx, &["token"], &["project_id"]));
        assert!(!satisfied(watsonx, &[], &["token", "project_id"]));
        assert_eq!(
            sets_in_words(bedrock),
            "aws_access_key_id and aws_secret_access_key"
        );
    }

    #[test]
    fn parameters_of_the_proxys_identity_and_files_are_refused() {
        for name in [
            "aws_profile_name",
            "AWS_PROFILE_NAME",
            "aws_role_name",
            "aws_web_identity_token",
            "azure_scope",
            "tenant_id",
            "use_litellm_proxy",
            "anthropic_issuer_url",
            "openai_identity_token_file",
            "ca_bundle_path",
            "credentials_file",
            "token-dir",
        ] {
            assert!(refused_param(name, &json!("x")).is_some(), "{name}");
        }
        assert!(refused_param("ssl_verify", &json!("/etc/ssl/ca.pem")).is_some());
        assert_eq!(refused_param("ssl_verify", &json!(false)), None);
        for name in [
            "api_key",
            "aws_region_name",
            "profile",
            "temperature",
            "tags",
        ] {
            assert_eq!(refused_param(name, &json!("x")), None, "{name}");
        }
    }

    #[test]
    fn values_that_dereference_the_proxy_are_refused_and_never_shown() {
        let cases = [
            ("api_key", "oidc/env/OPENAI_API_KEY", true),
            ("api_key", "  OIDC/google/https://x", true),
            ("api_key", "", true),
            ("api_key", "   ", true),
            (
                "vertex_credentials",
                "/var/run/secrets/google/key.json",
                true,
            ),
            ("vertex_credentials", "{not json", true),
            (
                "vertex_credentials",
                r#"{"type": "external_account", "credential_source": {"file": "/etc/x"}}"#,
                true,
            ),
            ("vertex_credentials", r#"{"private_key": "k"}"#, true),
        ];
        for (name, value, secret) in cases {
            let why = refused_value(name, value, secret);
            let why = why.unwrap_or_else(|| panic!("{name}={value:?} is refused"));
            assert!(
                value.trim().is_empty() || !why.contains(value.trim()),
                "{why}"
            );
        }
        assert_eq!(refused_value("api_key", "sk-tenant", true), None);
        assert_eq!(refused_value("api_base", "", false), None);
        assert_eq!(
            refused_value(
                "vertex_credentials",
                r#"{"type": "service_account", "private_key": "k"}"#,
                true
            ),
            None
        );
        assert!(refused_json("organization", &json!({"a": ["oidc/env/X"]})).is_some());
        assert_eq!(refused_json("organization", &json!({"a": ["org-1"]})), None);
    }

    #[test]
    fn the_cloudflare_path_of_azure_is_refused() {
        let azure = family("azure").unwrap();
        assert!(
            refused_api_base(azure, "https://evil.example/gateway.ai.cloudflare.com/").is_some()
        );
        assert_eq!(refused_api_base(azure, "https://x.openai.azure.com"), None);
        assert_eq!(
            refused_api_base(
                family("openai").unwrap(),
                "https://gateway.ai.cloudflare.com/"
            ),
            None
        );
    }
}
