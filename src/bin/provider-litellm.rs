//! `provider-litellm`: the managed-resource provider (being written).
fn main() {}
