//! LiteLLM admin API client (being written).
