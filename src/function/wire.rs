//! The `RunFunctionRequest` / `RunFunctionResponse` messages as this
//! function reads and writes them: wire-compatible with
//! `apiextensions.fn.proto.v1` (and the identical v1beta1), but decoding
//! only what the function reads.
//!
//! Decoding `google.protobuf.Struct` dominates the cost of a function
//! (every field is a map entry of boxed values), so: the desired state and
//! context of earlier pipeline steps stay raw bytes and are passed through
//! as they came; of each observed composed resource only its `status` is
//! decoded. Protobuf makes this safe: a map is a repeated field of entry
//! messages, so raw entries can be copied through one by one, and skipping a
//! length-delimited field needs no decoding at all.

use std::collections::HashMap;

use bytes::Bytes;
use function_sdk_rust::proto::v1;
use prost::Message;

use super::structpb::{self, JsonStruct, StatusOnly};

/// `RunFunctionRequest`, tags as in `run_function.proto`. Credentials (7)
/// and required schemas (9) are not read, so prost skips them.
#[derive(Clone, PartialEq, Message)]
pub struct Request {
    #[prost(message, optional, tag = "1")]
    pub meta: Option<v1::RequestMeta>,
    #[prost(message, optional, tag = "2")]
    pub observed: Option<ObservedState>,
    #[prost(message, optional, tag = "3")]
    pub desired: Option<DesiredState>,
    #[prost(message, optional, tag = "4")]
    pub input: Option<JsonStruct>,
    /// Passed through untouched.
    #[prost(bytes = "bytes", optional, tag = "5")]
    pub context: Option<Bytes>,
    #[prost(map = "string, message", tag = "6")]
    pub extra_resources: HashMap<String, JsonResources>,
    #[prost(map = "string, message", tag = "8")]
    pub required_resources: HashMap<String, JsonResources>,
}

/// `State` as observed: the whole XR, and the status of each composed resource.
#[derive(Clone, PartialEq, Message)]
pub struct ObservedState {
    #[prost(message, optional, tag = "1")]
    pub composite: Option<JsonResource>,
    #[prost(map = "string, message", tag = "2")]
    pub resources: HashMap<String, ObservedResource>,
}

/// An observed composed `Resource`, its object decoded down to `status`.
#[derive(Clone, PartialEq, Message)]
pub struct ObservedResource {
    #[prost(message, optional, tag = "1")]
    pub resource: Option<StatusOnly>,
    #[prost(map = "string, bytes", tag = "2")]
    pub connection_details: HashMap<String, Vec<u8>>,
}

/// `State` as desired: the XR decoded (the function merges its status into
/// it), the composed resources as raw map entries.
#[derive(Clone, PartialEq, Message)]
pub struct DesiredState {
    #[prost(message, optional, tag = "1")]
    pub composite: Option<JsonResource>,
    /// Each element is one encoded `map<string, Resource>` entry.
    #[prost(bytes = "bytes", repeated, tag = "2")]
    pub resources: Vec<Bytes>,
}

/// `RunFunctionResponse`, tags as in `run_function.proto`.
#[derive(Clone, PartialEq, Message)]
pub struct Response {
    #[prost(message, optional, tag = "1")]
    pub meta: Option<v1::ResponseMeta>,
    #[prost(message, optional, tag = "2")]
    pub desired: Option<DesiredState>,
    #[prost(message, repeated, tag = "3")]
    pub results: Vec<v1::Result>,
    #[prost(bytes = "bytes", optional, tag = "4")]
    pub context: Option<Bytes>,
    #[prost(message, optional, tag = "5")]
    pub requirements: Option<v1::Requirements>,
    #[prost(message, repeated, tag = "6")]
    pub conditions: Vec<v1::Condition>,
}

/// Just the key of a map entry; prost skips the value unread.
#[derive(Clone, PartialEq, Message)]
struct EntryKey {
    #[prost(string, tag = "1")]
    key: String,
}

/// A `Resource` whose object is decoded straight into JSON.
#[derive(Clone, PartialEq, Message)]
pub struct JsonResource {
    #[prost(message, optional, tag = "1")]
    pub resource: Option<JsonStruct>,
    #[prost(map = "string, bytes", tag = "2")]
    pub connection_details: HashMap<String, Vec<u8>>,
    #[prost(enumeration = "v1::Ready", tag = "3")]
    pub ready: i32,
}

/// `Resources`: what Crossplane fetched for a requirement.
#[derive(Clone, PartialEq, Message)]
pub struct JsonResources {
    #[prost(message, repeated, tag = "1")]
    pub items: Vec<JsonResource>,
}

/// The `RunFunction` codec: prost's, except that a request is decoded from
/// the received message frozen into one [`Bytes`] (no copy). prost then
/// reads a contiguous buffer whose `advance` is a pointer bump, and the
/// pass-through fields ([`Request::context`], [`DesiredState::resources`])
/// become slices of the received bytes instead of copies of them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Codec;

/// Decodes a [`Request`] (see [`Codec`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestDecoder;

impl tonic::codec::Codec for Codec {
    type Encode = Response;
    type Decode = Request;
    type Encoder = tonic_prost::ProstEncoder<Response>;
    type Decoder = RequestDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        tonic_prost::ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        RequestDecoder
    }
}

impl tonic::codec::Decoder for RequestDecoder {
    type Item = Request;
    type Error = tonic::Status;

    fn decode(
        &mut self,
        src: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<Request>, tonic::Status> {
        use bytes::Buf;
        let message = src.copy_to_bytes(src.remaining());
        Request::decode(message)
            .map(Some)
            .map_err(|e| tonic::Status::internal(e.to_string()))
    }
}

/// Encodes a desired composed resource as a raw map entry, written once
/// into a buffer of its exact size.
pub fn resource_entry(
    name: String,
    object: &serde_json::Map<String, serde_json::Value>,
    ready: v1::Ready,
) -> Bytes {
    use prost::encoding::{self, WireType};
    let (struct_len, lens) = structpb::measure_struct(object);
    let ready = ready as i32;
    // `Resource { resource: 1, ready: 3 }`, then the entry `{key: 1, value: 2}`.
    let resource_len = encoding::key_len(1)
        + encoding::encoded_len_varint(struct_len as u64)
        + struct_len
        + if ready != 0 {
            encoding::int32::encoded_len(3, &ready)
        } else {
            0
        };
    let entry_len = encoding::string::encoded_len(1, &name)
        + encoding::key_len(2)
        + encoding::encoded_len_varint(resource_len as u64)
        + resource_len;
    let mut buf = Vec::with_capacity(entry_len);
    encoding::string::encode(1, &name, &mut buf);
    encoding::encode_key(2, WireType::LengthDelimited, &mut buf);
    encoding::encode_varint(resource_len as u64, &mut buf);
    encoding::encode_key(1, WireType::LengthDelimited, &mut buf);
    encoding::encode_varint(struct_len as u64, &mut buf);
    structpb::write_struct(object, &lens, &mut buf);
    if ready != 0 {
        encoding::int32::encode(3, &ready, &mut buf);
    }
    debug_assert_eq!(buf.len(), entry_len);
    buf.into()
}

/// The name of a raw map entry, or `None` if it is not one.
pub fn entry_name(entry: &[u8]) -> Option<String> {
    EntryKey::decode(entry).ok().map(|e| e.key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use function_sdk_rust::resource::json_to_struct;
    use serde_json::json;

    fn resource(value: serde_json::Value) -> v1::Resource {
        v1::Resource {
            resource: Some(json_to_struct(value.as_object().unwrap())),
            ..Default::default()
        }
    }

    #[test]
    fn only_the_status_of_observed_resources_is_decoded() {
        let mut state = v1::State::default();
        state.resources.insert(
            "team".into(),
            resource(json!({"metadata": {"name": "t"}, "spec": {"a": [1, 2]},
                            "status": {"atProvider": {"teamId": "x"}}})),
        );
        let request = v1::RunFunctionRequest {
            observed: Some(state),
            ..Default::default()
        };
        let decoded = Request::decode(request.encode_to_vec().as_slice()).unwrap();
        let team = &decoded.observed.unwrap().resources["team"];
        let status = team.resource.as_ref().unwrap().status.as_ref().unwrap();
        assert_eq!(status, &json!({"atProvider": {"teamId": "x"}}));
    }

    #[test]
    fn desired_state_and_context_pass_through_byte_for_byte() {
        let mut desired = v1::State::default();
        desired
            .resources
            .insert("bucket".into(), resource(json!({"kind": "Bucket"})));
        let request = v1::RunFunctionRequest {
            desired: Some(desired.clone()),
            context: Some(json_to_struct(json!({"k": "v"}).as_object().unwrap())),
            ..Default::default()
        };
        let decoded = Request::decode(request.encode_to_vec().as_slice()).unwrap();
        let response = Response {
            desired: decoded.desired,
            context: decoded.context,
            ..Default::default()
        };
        let back = v1::RunFunctionResponse::decode(response.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back.desired, Some(desired));
        assert_eq!(back.context, request.context);
    }

    #[test]
    fn raw_entries_carry_their_names() {
        let object = json!({"kind": "K"}).as_object().unwrap().clone();
        let entry = resource_entry("key-ci".into(), &object, v1::Ready::True);
        assert_eq!(entry_name(&entry).as_deref(), Some("key-ci"));
        let state = v1::State::decode(
            DesiredState {
                resources: vec![entry],
                ..Default::default()
            }
            .encode_to_vec()
            .as_slice(),
        )
        .unwrap();
        let expected = v1::Resource {
            ready: v1::Ready::True as i32,
            ..resource(json!({"kind": "K"}))
        };
        assert_eq!(state.resources["key-ci"], expected);
    }
}
