//! What the provider knows of the cluster between reconciliations: the
//! watch caches ([`cache`]), lists that tolerate objects they cannot read
//! ([`tolerant`]), change counting ([`changes`]), memo polls and polls put
//! off ([`polls`], [`timing`]), each kind's reconciliations at once shared
//! out by namespace ([`places`]), the provider's own last writes to each
//! resource and their echoes ([`written`], [`echo`]), and what each
//! resource joins ([`joins`]), and the maps keyed by a hash the process
//! keyed ([`prehashed`]).
//!
//! It answers the engine's questions and imports nothing of the engine,
//! the kinds or the runtime.

pub mod cache;
pub mod changes;
pub mod echo;
pub mod joins;
pub mod places;
pub mod polls;
pub mod prehashed;
pub mod timing;
pub mod tolerant;
pub mod wanted;
pub mod written;
