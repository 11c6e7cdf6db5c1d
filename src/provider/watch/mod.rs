//! What the provider knows of the cluster between reconciliations: the
//! watch caches ([`cache`]), lists that tolerate objects they cannot read
//! ([`tolerant`]), change counting ([`changes`]), memo polls ([`polls`],
//! [`timing`]) and the echoes of the provider's own writes ([`echo`]), and what each
//! resource joins ([`joins`]).
//!
//! It answers the engine's questions and imports nothing of the engine,
//! the kinds or the runtime.

pub mod cache;
pub mod changes;
pub mod echo;
pub mod joins;
pub mod polls;
pub mod timing;
pub mod tolerant;
