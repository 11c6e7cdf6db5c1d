//! `google.protobuf.Struct` / `Value` / `ListValue` straight to and from
//! `serde_json`, as prost messages.
//!
//! The SDK's types decode a Struct into maps of boxed protobuf values, which
//! the function then converts to JSON, and back again on the way out: two
//! allocation-heavy trees per object. These types read and write the same
//! wire format with a single JSON tree. Nesting goes through
//! `prost::encoding::message`, so prost's recursion limit still applies.

use bytes::{Buf, BufMut};
use prost::encoding::{self, DecodeContext, WireType};
use prost::{DecodeError, Message};
use serde_json::{Map, Number, Value};

use super::keep::Keep;

/// A `google.protobuf.Struct`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JsonStruct(pub Map<String, Value>);

/// A `google.protobuf.Value`.
#[derive(Clone, Debug, Default, PartialEq)]
struct JsonValue(Value);

/// A `google.protobuf.ListValue`.
#[derive(Clone, Debug, Default, PartialEq)]
struct JsonList(Vec<Value>);

/// One `map<string, Value>` entry of a Struct.
#[derive(Clone, Debug, Default, PartialEq)]
struct JsonEntry {
    key: String,
    value: JsonValue,
}

/// Field numbers of `google.protobuf.Value`'s `kind`.
mod kind {
    pub const NULL: u32 = 1;
    pub const NUMBER: u32 = 2;
    pub const STRING: u32 = 3;
    pub const BOOL: u32 = 4;
    pub const STRUCT: u32 = 5;
    pub const LIST: u32 = 6;
}

/// Numbers are doubles on the wire; integral ones that fit come back as
/// integers, as the SDK converts them.
fn number(n: f64) -> Value {
    const SAFE_INT: f64 = (1i64 << 53) as f64;
    if n.fract() == 0.0 && n.abs() <= SAFE_INT {
        return Value::Number(Number::from(n as i64));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// A message to encode, borrowed from the JSON tree.
///
/// Every nested message is prefixed by its length. Asking each level for
/// its length (as prost's generated code does) measures a leaf once per
/// level above it; a JSON object is three protobuf levels deep, so that
/// grows quickly. Instead one pass records the length of every nested
/// message in the order encoding meets them, and a second pass writes.
#[derive(Clone, Copy)]
enum Node<'a> {
    Value(&'a Value),
    Struct(&'a Map<String, Value>),
    List(&'a [Value]),
    Entry(&'a str, &'a Value),
}

impl Node<'_> {
    /// The body length, recording nested lengths in `lens` (pre-order).
    fn measure(self, lens: &mut Vec<usize>) -> usize {
        match self {
            Node::Value(value) => match value {
                // A null is an explicit enum field; its zero must still be
                // written so the oneof is set.
                Value::Null => encoding::key_len(kind::NULL) + 1,
                Value::Bool(_) => encoding::key_len(kind::BOOL) + 1,
                Value::Number(_) => encoding::key_len(kind::NUMBER) + 8,
                Value::String(s) => encoding::string::encoded_len(kind::STRING, s),
                Value::Object(map) => nested(kind::STRUCT, Node::Struct(map), lens),
                Value::Array(items) => nested(kind::LIST, Node::List(items), lens),
            },
            Node::Struct(map) => map
                .iter()
                .map(|(key, value)| nested(1, Node::Entry(key, value), lens))
                .sum(),
            Node::List(items) => items.iter().map(|v| nested(1, Node::Value(v), lens)).sum(),
            Node::Entry(key, value) => {
                encoding::key_len(1)
                    + encoding::encoded_len_varint(key.len() as u64)
                    + key.len()
                    + nested(2, Node::Value(value), lens)
            }
        }
    }

    /// Writes the body, taking nested lengths in the order `measure` recorded them.
    fn write(self, lens: &mut std::slice::Iter<'_, usize>, buf: &mut impl BufMut) {
        match self {
            Node::Value(value) => match value {
                Value::Null => encoding::int32::encode(kind::NULL, &0, buf),
                Value::Bool(b) => encoding::bool::encode(kind::BOOL, b, buf),
                Value::Number(n) => {
                    encoding::double::encode(kind::NUMBER, &n.as_f64().unwrap_or(0.0), buf)
                }
                Value::String(s) => encoding::string::encode(kind::STRING, s, buf),
                Value::Object(map) => write_nested(kind::STRUCT, Node::Struct(map), lens, buf),
                Value::Array(items) => write_nested(kind::LIST, Node::List(items), lens, buf),
            },
            Node::Struct(map) => {
                for (key, value) in map {
                    write_nested(1, Node::Entry(key, value), lens, buf);
                }
            }
            Node::List(items) => {
                for value in items {
                    write_nested(1, Node::Value(value), lens, buf);
                }
            }
            Node::Entry(key, value) => {
                encoding::encode_key(1, WireType::LengthDelimited, buf);
                encoding::encode_varint(key.len() as u64, buf);
                buf.put_slice(key.as_bytes());
                write_nested(2, Node::Value(value), lens, buf);
            }
        }
    }

    fn body_len(self) -> usize {
        self.measure(&mut Vec::new())
    }

    fn encode_body(self, buf: &mut impl BufMut) {
        let mut lens = Vec::new();
        self.measure(&mut lens);
        self.write(&mut lens.iter(), buf);
    }
}

/// Measures `node` as field `tag`, recording its body length first.
fn nested(tag: u32, node: Node<'_>, lens: &mut Vec<usize>) -> usize {
    let slot = lens.len();
    lens.push(0);
    let len = node.measure(lens);
    lens[slot] = len;
    encoding::key_len(tag) + encoding::encoded_len_varint(len as u64) + len
}

fn write_nested(
    tag: u32,
    node: Node<'_>,
    lens: &mut std::slice::Iter<'_, usize>,
    buf: &mut impl BufMut,
) {
    // Both passes walk the same tree in the same order.
    let len = *lens.next().expect("every nested message was measured");
    encoding::encode_key(tag, WireType::LengthDelimited, buf);
    encoding::encode_varint(len as u64, buf);
    node.write(lens, buf);
}

/// Encodes `map` as a `google.protobuf.Struct` in one measuring and one
/// writing pass, into a buffer of exactly the right size.
pub fn encode_struct(map: &Map<String, Value>) -> Vec<u8> {
    let (len, lens) = measure_struct(map);
    let mut buf = Vec::with_capacity(len);
    write_struct(map, &lens, &mut buf);
    buf
}

/// The encoded length of `map` as a `google.protobuf.Struct`, and the
/// lengths of its nested messages for [`write_struct`].
pub fn measure_struct(map: &Map<String, Value>) -> (usize, Vec<usize>) {
    let mut lens = Vec::with_capacity(64);
    let len = Node::Struct(map).measure(&mut lens);
    (len, lens)
}

/// Writes `map` as a `google.protobuf.Struct` body, with the lengths
/// [`measure_struct`] recorded for it.
pub fn write_struct(map: &Map<String, Value>, lens: &[usize], buf: &mut impl BufMut) {
    Node::Struct(map).write(&mut lens.iter(), buf)
}

impl Message for JsonStruct {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        Node::Struct(&self.0).encode_body(buf)
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != 1 {
            return encoding::skip_field(wire_type, tag, buf, ctx);
        }
        let mut entry = JsonEntry::default();
        encoding::message::merge(wire_type, &mut entry, buf, ctx)?;
        // As for any protobuf map, a repeated key keeps the last value.
        self.0.insert(entry.key, entry.value.0);
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        Node::Struct(&self.0).body_len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

impl Message for JsonEntry {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        Node::Entry(&self.key, &self.value.0).encode_body(buf)
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => encoding::string::merge(wire_type, &mut self.key, buf, ctx),
            2 => encoding::message::merge(wire_type, &mut self.value, buf, ctx),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        Node::Entry(&self.key, &self.value.0).body_len()
    }

    fn clear(&mut self) {
        *self = JsonEntry::default();
    }
}

impl Message for JsonValue {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        Node::Value(&self.0).encode_body(buf)
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        self.0 = match tag {
            kind::NULL => {
                let mut ignored = 0i32;
                encoding::int32::merge(wire_type, &mut ignored, buf, ctx)?;
                Value::Null
            }
            kind::NUMBER => {
                let mut n = 0f64;
                encoding::double::merge(wire_type, &mut n, buf, ctx)?;
                number(n)
            }
            kind::STRING => {
                let mut s = String::new();
                encoding::string::merge(wire_type, &mut s, buf, ctx)?;
                Value::String(s)
            }
            kind::BOOL => {
                let mut b = false;
                encoding::bool::merge(wire_type, &mut b, buf, ctx)?;
                Value::Bool(b)
            }
            kind::STRUCT => {
                let mut s = JsonStruct::default();
                encoding::message::merge(wire_type, &mut s, buf, ctx)?;
                Value::Object(s.0)
            }
            kind::LIST => {
                let mut l = JsonList::default();
                encoding::message::merge(wire_type, &mut l, buf, ctx)?;
                Value::Array(l.0)
            }
            _ => return encoding::skip_field(wire_type, tag, buf, ctx),
        };
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        Node::Value(&self.0).body_len()
    }

    fn clear(&mut self) {
        self.0 = Value::Null;
    }
}

impl Message for JsonList {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        Node::List(&self.0).encode_body(buf)
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != 1 {
            return encoding::skip_field(wire_type, tag, buf, ctx);
        }
        let mut value = JsonValue::default();
        encoding::message::merge(wire_type, &mut value, buf, ctx)?;
        self.0.push(value.0);
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        Node::List(&self.0).body_len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// Decodes a `google.protobuf.Value` keeping only what `keep` asks for.
fn merge_kept(
    keep: &'static Keep,
    wire_type: WireType,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<Value, DecodeError> {
    if let Keep::All = keep {
        let mut value = JsonValue::default();
        encoding::message::merge(wire_type, &mut value, buf, ctx)?;
        return Ok(value.0);
    }
    let mut value = Kept {
        keep,
        value: Value::Null,
    };
    encoding::message::merge(wire_type, &mut value, buf, ctx)?;
    Ok(value.value)
}

/// A `google.protobuf.Value` (or, by its tags, a `Struct` entry list or a
/// `ListValue`) decoded under a [`Keep::Keys`].
#[derive(Debug)]
struct Kept {
    keep: &'static Keep,
    value: Value,
}

/// One `Struct` entry under a [`Keep::Keys`]: its value decoded only when
/// its key is kept.
#[derive(Debug)]
struct KeptEntry {
    keep: &'static Keep,
    key: String,
    value: Option<Value>,
    /// Whether `value` was decoded under the keep of the key it now has;
    /// a value met before its key (or without one: an empty key is not
    /// written at all) is decoded whole and pruned once the entry ends.
    pruned: bool,
}

impl KeptEntry {
    /// The entry's value as kept, once the whole entry is read: `None`
    /// when its key is not kept.
    fn finish(self) -> Option<(String, Value)> {
        let keep = self.keep.child(&self.key)?;
        let value = self.value?;
        let value = match self.pruned {
            true => value,
            false => keep.prune(&value),
        };
        Some((self.key, value))
    }
}

/// A `Struct` or `ListValue` body under a [`Keep::Keys`].
#[derive(Debug)]
struct KeptBody {
    keep: &'static Keep,
    list: bool,
    value: Value,
}

impl Message for Kept {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        Node::Value(&self.value).encode_body(buf)
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            kind::STRUCT | kind::LIST => {
                let mut body = KeptBody {
                    keep: self.keep,
                    list: tag == kind::LIST,
                    value: if tag == kind::LIST {
                        Value::Array(Vec::new())
                    } else {
                        Value::Object(Map::new())
                    },
                };
                encoding::message::merge(wire_type, &mut body, buf, ctx)?;
                self.value = body.value;
                Ok(())
            }
            // Scalars: as decoded in full.
            _ => {
                let mut value = JsonValue::default();
                value.merge_field(tag, wire_type, buf, ctx)?;
                self.value = value.0;
                Ok(())
            }
        }
    }

    fn encoded_len(&self) -> usize {
        Node::Value(&self.value).body_len()
    }

    fn clear(&mut self) {
        self.value = Value::Null;
    }
}

impl Message for KeptBody {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        match &self.value {
            Value::Object(map) => Node::Struct(map).encode_body(buf),
            Value::Array(items) => Node::List(items).encode_body(buf),
            _ => {}
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != 1 {
            return encoding::skip_field(wire_type, tag, buf, ctx);
        }
        if self.list {
            // Each element kept as the list is.
            let item = merge_kept(self.keep, wire_type, buf, ctx)?;
            if let Value::Array(items) = &mut self.value {
                items.push(item);
            }
            return Ok(());
        }
        let mut entry = KeptEntry {
            keep: self.keep,
            key: String::new(),
            value: None,
            pruned: false,
        };
        encoding::message::merge(wire_type, &mut entry, buf, ctx)?;
        if let (Value::Object(map), Some((key, value))) = (&mut self.value, entry.finish()) {
            // As for any protobuf map, a repeated key keeps the last value.
            map.insert(key, value);
        }
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        match &self.value {
            Value::Object(map) => Node::Struct(map).body_len(),
            Value::Array(items) => Node::List(items).body_len(),
            _ => 0,
        }
    }

    fn clear(&mut self) {
        self.value = Value::Null;
    }
}

impl Message for KeptEntry {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if let Some(value) = &self.value {
            Node::Entry(&self.key, value).encode_body(buf)
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => {
                encoding::string::merge(wire_type, &mut self.key, buf, ctx)?;
                // A value read under another key's keep is pruned again
                // when the entry ends ([`KeptEntry::finish`]).
                self.pruned = false;
                Ok(())
            }
            2 if self.key.is_empty() => {
                // Before its key: decoded whole, kept or dropped at the end.
                self.value = Some(merge_kept(&Keep::All, wire_type, buf, ctx)?);
                self.pruned = false;
                Ok(())
            }
            2 => match self.keep.child(&self.key) {
                Some(keep) => {
                    self.value = Some(merge_kept(keep, wire_type, buf, ctx)?);
                    self.pruned = true;
                    Ok(())
                }
                None => {
                    self.value = None;
                    encoding::skip_field(wire_type, tag, buf, ctx)
                }
            },
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        self.value
            .as_ref()
            .map(|value| Node::Entry(&self.key, value).body_len())
            .unwrap_or(0)
    }

    fn clear(&mut self) {
        self.key.clear();
        self.value = None;
    }
}

/// A `google.protobuf.Struct` of which only the `apiVersion`,
/// `metadata.name` and `status` fields are decoded, and of `status` only
/// what the function reads ([`super::compose::OBSERVED_STATUS`]); the value
/// of every other field is skipped unread.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusOnly {
    /// `apiVersion` when it is a string.
    pub api_version: Option<String>,
    /// `metadata.name` when it is a string: Crossplane keeps an observed
    /// composed resource's name, so the function refers to it by that name.
    pub name: Option<String>,
    pub status: Option<Value>,
}

const STATUS: &str = "status";
const API_VERSION: &str = "apiVersion";
const METADATA: &str = "metadata";

/// What is kept of an observed object's `metadata`.
static OBSERVED_METADATA: Keep = Keep::Keys(&[("name", &Keep::All)]);

/// What is kept of an observed object.
static OBSERVED_OBJECT: Keep = Keep::Keys(&[
    (API_VERSION, &Keep::All),
    (METADATA, &OBSERVED_METADATA),
    (STATUS, &super::compose::OBSERVED_STATUS),
]);

impl StatusOnly {
    /// The kept object, as JSON.
    fn object(&self) -> Map<String, Value> {
        let mut object = Map::new();
        if let Some(api_version) = &self.api_version {
            object.insert(API_VERSION.into(), Value::String(api_version.clone()));
        }
        if let Some(name) = &self.name {
            let metadata = Map::from_iter([("name".to_string(), Value::String(name.clone()))]);
            object.insert(METADATA.into(), Value::Object(metadata));
        }
        if let Some(status) = &self.status {
            object.insert(STATUS.into(), status.clone());
        }
        object
    }
}

impl Message for StatusOnly {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        Node::Struct(&self.object()).encode_body(buf)
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != 1 {
            return encoding::skip_field(wire_type, tag, buf, ctx);
        }
        let mut entry = KeptEntry {
            keep: &OBSERVED_OBJECT,
            key: String::new(),
            value: None,
            pruned: false,
        };
        encoding::message::merge(wire_type, &mut entry, buf, ctx)?;
        let text = |value: Value| match value {
            Value::String(text) => Some(text),
            _ => None,
        };
        // As for any protobuf map, a repeated key keeps the last value.
        match entry.finish() {
            Some((key, value)) if key == STATUS => self.status = Some(value),
            Some((key, value)) if key == API_VERSION => self.api_version = text(value),
            Some((key, mut value)) if key == METADATA => {
                self.name = value.get_mut("name").map(Value::take).and_then(text)
            }
            _ => {}
        }
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        Node::Struct(&self.object()).body_len()
    }

    fn clear(&mut self) {
        *self = StatusOnly::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use function_sdk_rust::resource::{json_to_struct, struct_to_json};
    use proptest::prelude::*;
    use serde_json::json;

    /// JSON as it survives protobuf: numbers are doubles.
    fn arbitrary_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|n| json!(n)),
            (-1e9f64..1e9).prop_map(|f| number(f)),
            ".{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map(".{0,6}", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => Map::from_iter([("v".to_string(), other)]),
        }
    }

    proptest! {
        #[test]
        fn reads_what_the_sdk_writes(value in arbitrary_json()) {
            let map = object(value);
            let bytes = json_to_struct(&map).encode_to_vec();
            prop_assert_eq!(JsonStruct::decode(bytes.as_slice()).unwrap().0, map);
        }

        #[test]
        fn writes_what_the_sdk_reads(value in arbitrary_json()) {
            let map = object(value);
            let ours = JsonStruct(map.clone());
            let bytes = ours.encode_to_vec();
            prop_assert_eq!(bytes.len(), ours.encoded_len());
            prop_assert_eq!(&bytes, &encode_struct(&map));
            let theirs = pbjson_types::Struct::decode(bytes.as_slice()).unwrap();
            prop_assert_eq!(struct_to_json(&theirs), Value::Object(map));
        }

        #[test]
        fn status_only_reads_the_status_and_nothing_else(value in arbitrary_json(), status in arbitrary_json()) {
            let mut map = object(value);
            map.insert("status".into(), status.clone());
            let bytes = json_to_struct(&map).encode_to_vec();
            let kept = crate::function::compose::OBSERVED_STATUS.prune(&status);
            prop_assert_eq!(StatusOnly::decode(bytes.as_slice()).unwrap().status, Some(kept));
        }

        #[test]
        fn a_kept_status_is_what_the_function_reads_of_it(
            extra in arbitrary_json(),
            ready in any::<bool>(),
            endpoint in ".{0,12}",
        ) {
            let status = json!({
                "conditions": [{"type": "Ready", "status": "True", "reason": "Available", "message": extra.clone()},
                               {"type": "Synced", "status": "False", "lastTransitionTime": "2026-12-01T00:00:00Z"}],
                "atProvider": {"teamId": "t-1", "spend": 1.5, "other": extra.clone()},
                "ready": ready, "endpoint": endpoint, "gatewayEndpoint": "http://gw", "other": extra,
            });
            let map = object(json!({"apiVersion": "v", "status": status}));
            let bytes = json_to_struct(&map).encode_to_vec();
            let kept = StatusOnly::decode(bytes.as_slice()).unwrap().status.unwrap();
            prop_assert_eq!(kept, json!({
                "conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}],
                "atProvider": {"teamId": "t-1"},
                "ready": ready, "endpoint": endpoint, "gatewayEndpoint": "http://gw",
            }));
        }

        #[test]
        fn status_only_reads_a_string_api_version(value in arbitrary_json(), api_version in ".{0,12}") {
            let mut map = object(value);
            map.insert("apiVersion".into(), Value::String(api_version.clone()));
            let bytes = json_to_struct(&map).encode_to_vec();
            prop_assert_eq!(StatusOnly::decode(bytes.as_slice()).unwrap().api_version, Some(api_version));
        }

        #[test]
        fn status_only_reads_the_name_and_no_other_metadata(
            value in arbitrary_json(),
            extra in arbitrary_json(),
            name in "[a-z0-9.-]{0,20}",
        ) {
            let mut map = object(value);
            map.insert("metadata".into(), json!({"name": name.clone(), "managedFields": [extra.clone()],
                                                 "labels": {"a": "b"}, "uid": "u"}));
            let bytes = json_to_struct(&map).encode_to_vec();
            let decoded = StatusOnly::decode(bytes.as_slice()).unwrap();
            prop_assert_eq!(decoded.name.as_deref(), Some(name.as_str()));
            // And it encodes back as what it kept.
            let again = StatusOnly::decode(decoded.encode_to_vec().as_slice()).unwrap();
            prop_assert_eq!(again, decoded);
        }
    }

    #[test]
    fn nesting_beyond_prosts_recursion_limit_is_an_error_not_a_crash() {
        let mut value = json!(1);
        for _ in 0..200 {
            value = json!({ "a": value });
        }
        let bytes = JsonStruct(object(value)).encode_to_vec();
        assert!(JsonStruct::decode(bytes.as_slice()).is_err());
    }
}
