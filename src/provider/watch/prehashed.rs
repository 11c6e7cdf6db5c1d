//! Maps keyed by a hash the process keyed itself (an object's id in the
//! metrics, a fingerprint of a LiteLLM answer): the key is already as
//! spread and as unpredictable as a second hash would make it, so the map
//! uses it as its hash, where the standard map would hash the eight bytes
//! again with SipHash on every poll.
//!
//! Only for keys no one outside the process can choose: a tenant names
//! its objects, but not the keyed hash of that name, so it cannot make
//! keys collide. A key that is not such a hash (a name, a count) takes the
//! standard map.

use std::hash::{BuildHasherDefault, Hasher};

/// [`std::collections::HashMap`] keyed by a keyed hash.
pub type Map<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<KeyedHash>>;

/// [`std::collections::HashSet`] of keyed hashes.
pub type Set<K> = std::collections::HashSet<K, BuildHasherDefault<KeyedHash>>;

/// The hasher of [`Map`]: the last `u64` written is the hash.
#[derive(Default, Clone, Copy)]
pub struct KeyedHash(u64);

impl Hasher for KeyedHash {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }

    /// Anything but one `u64` (not what these maps are for) is folded in
    /// with FxHash's step, so that it still hashes, if poorly.
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*byte)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyed_hash_is_its_own_hash_and_the_map_works() {
        use std::hash::BuildHasher;
        let build = BuildHasherDefault::<KeyedHash>::default();
        assert_eq!(build.hash_one(0xdead_beef_u64), 0xdead_beef);
        let mut map: Map<u64, &str> = Map::default();
        let keyed = std::collections::hash_map::RandomState::new();
        let ids: Vec<u64> = (0..1000).map(|i| keyed.hash_one(i)).collect();
        for id in &ids {
            map.insert(*id, "x");
        }
        assert_eq!(map.len(), 1000);
        assert!(ids.iter().all(|id| map.contains_key(id)));
        assert!(!map.contains_key(&keyed.hash_one(1000)));
    }
}
