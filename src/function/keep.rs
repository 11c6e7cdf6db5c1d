//! Which parts of a JSON value the function reads: a [`Keep`], a tree of
//! the keys it keeps. Pure: the domain says what it reads in one
//! (`compose::OBSERVED_STATUS`), and the wire layer (`structpb`) decodes
//! only what it keeps.

use serde_json::Value;

/// Which parts of a JSON value to decode: all of it, or only some keys of
/// an object (a list's elements each kept alike); every other value is
/// skipped on the wire unread, never allocated.
#[derive(Debug)]
pub enum Keep {
    All,
    Keys(&'static [(&'static str, &'static Keep)]),
}

impl Keep {
    /// What `self` keeps of `value`: what decoding it keeps of the same
    /// value encoded.
    pub fn prune(&self, value: &Value) -> Value {
        match (self, value) {
            (Keep::All, value) => value.clone(),
            (Keep::Keys(keys), Value::Object(map)) => Value::Object(
                map.iter()
                    .filter_map(|(k, v)| {
                        let (_, keep) = keys.iter().find(|(name, _)| name == k)?;
                        Some((k.clone(), keep.prune(v)))
                    })
                    .collect(),
            ),
            (keys, Value::Array(items)) => {
                Value::Array(items.iter().map(|v| keys.prune(v)).collect())
            }
            (Keep::Keys(_), scalar) => scalar.clone(),
        }
    }

    /// What a [`Keep::Keys`] keeps of the value under `key` of an object:
    /// `None` when the key is not kept.
    pub fn child(&self, key: &str) -> Option<&'static Keep> {
        match self {
            Keep::All => None,
            Keep::Keys(keys) => keys.iter().find(|(name, _)| *name == key).map(|(_, k)| *k),
        }
    }
}
