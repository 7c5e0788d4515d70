//! Thousands of malformed and hostile requests over a real socket: each gets
//! a clear status, the server stays up, and no chat changes.
//!
//! Requests are sent as raw bytes, so the test can send what no generated
//! client would: random bytes, invalid UTF-8 inside strings, unknown enum
//! numbers, huge and deeply repeated fields, ids with control characters.

use crate::common::*;
use bytes::{Buf, BufMut, Bytes};
use prost::Message as _;
use recapd::grpc::pb;
use tonic::Code;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::Channel;

/// Sends and receives message bodies as they are.
#[derive(Default, Clone)]
struct RawCodec;
struct RawEncoder;
struct RawDecoder;

impl Encoder for RawEncoder {
    type Item = Bytes;
    type Error = tonic::Status;
    fn encode(&mut self, item: Bytes, buf: &mut EncodeBuf<'_>) -> Result<(), Self::Error> {
        buf.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawDecoder {
    type Item = Bytes;
    type Error = tonic::Status;
    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Self::Error> {
        Ok(Some(buf.copy_to_bytes(buf.remaining())))
    }
}

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

const UNARY: [&str; 14] = [
    "/recap.v1.EventService/Publish",
    "/recap.v1.MemoryService/SetMessageData",
    "/recap.v1.MemoryService/GetMessageData",
    "/recap.v1.MemoryService/ClearMemory",
    "/recap.v1.MemoryService/AddRunningRecap",
    "/recap.v1.MemoryService/SelectRunningRecap",
    "/recap.v1.MemoryService/DeleteRunningRecap",
    "/recap.v1.MemoryService/ListRunningRecaps",
    "/recap.v1.SettingsService/GetSettings",
    "/recap.v1.SettingsService/UpdateSettings",
    "/recap.v1.SettingsService/SetChatEnabled",
    "/recap.v1.InjectionService/GetInjection",
    "/recap.v1.InjectionService/Refresh",
    "/recap.v1.InjectionService/GetInclusion",
];

async fn call(channel: &Channel, path: &'static str, body: Bytes) -> Result<Bytes, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let path = tonic::codegen::http::uri::PathAndQuery::from_static(path);
    grpc.unary(tonic::Request::new(body), path, RawCodec)
        .await
        .map(|r| r.into_inner())
}

/// A string field `tag` holding raw `bytes` (possibly not UTF-8).
fn raw_string(tag: u32, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_key(tag, prost::encoding::WireType::LengthDelimited, &mut out);
    prost::encoding::encode_varint(bytes.len() as u64, &mut out);
    out.extend_from_slice(bytes);
    out
}

fn event(chat_id: &str, kind: pb::event::Kind) -> Bytes {
    pb::PublishRequest {
        event: Some(pb::Event {
            chat_id: chat_id.into(),
            kind: Some(kind),
        }),
    }
    .encode_to_vec()
    .into()
}

/// Codes a malformed request may get: each names what is wrong.
fn is_clear(code: Code) -> bool {
    matches!(
        code,
        Code::InvalidArgument
            | Code::NotFound
            | Code::AlreadyExists
            | Code::ResourceExhausted
            | Code::OutOfRange
            | Code::Internal
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_requests_get_clear_codes_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(0).await;
    server
        .publish("victim", chat_changed(vec![message("m1", "hello")]))
        .await
        .unwrap();
    add_recap(&mut server, "victim", "the story").await;
    let before = server.injection("victim").await;
    let channel = server.channel.clone();

    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut codes = std::collections::BTreeMap::new();
    let mut record = |result: Result<Bytes, tonic::Status>, what: &str| match result {
        Ok(_) => *codes.entry("OK".to_owned()).or_insert(0) += 1,
        Err(status) => {
            assert!(is_clear(status.code()), "{what}: unclear {status:?}");
            assert!(
                !status.message().is_empty(),
                "{what}: status without a message"
            );
            // A bad request is the caller's failure, never one of the
            // server's (which would carry an error id).
            assert_eq!(
                recapd::grpc::status::error_id(&status),
                None,
                "{what}: {status:?}"
            );
            *codes.entry(format!("{:?}", status.code())).or_insert(0) += 1;
        }
    };

    // 1. Random bytes to every unary method but UpdateSettings: random
    //    bytes can decode to a valid global settings change (an empty chat
    //    id), which would rightly refresh every chat.
    let targets: Vec<&'static str> = UNARY
        .into_iter()
        .filter(|p| !p.ends_with("UpdateSettings"))
        .collect();
    for i in 0..2800 {
        let len = (next() % 200) as usize;
        let body: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let path = targets[i % targets.len()];
        record(call(&channel, path, body.into()).await, path);
    }
    // 2. Invalid UTF-8 in a string field (chat_id) of every method.
    for path in UNARY {
        let body = raw_string(1, &[0x66, 0xff, 0xfe, 0x80]);
        let status = call(&channel, path, body.into()).await.unwrap_err();
        assert_eq!(
            status.code(),
            Code::Internal,
            "{path}: undecodable protobuf is INTERNAL, as gRPC specifies"
        );
        assert!(
            status.message().contains("UTF-8") || status.message().contains("decode"),
            "{status:?}"
        );
    }
    // 3. Ids with control characters, too long, or empty.
    for bad in [
        "a\u{0}b",
        "tab\tid",
        "line\nbreak",
        "\u{7f}",
        &"x".repeat(257),
        "",
    ] {
        let status = call(
            &channel,
            "/recap.v1.InjectionService/GetInjection",
            pb::GetInjectionRequest {
                chat_id: bad.into(),
                key: None,
            }
            .encode_to_vec()
            .into(),
        )
        .await
        .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{bad:?}");
        let status = call(
            &channel,
            "/recap.v1.EventService/Publish",
            event("ok", message_sent(bad, "x")),
        )
        .await
        .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "message id {bad:?}");
    }
    // 4. Unknown enum numbers in every enum field of Settings.
    for settings in [
        pb::Settings {
            position: Some(77),
            ..Default::default()
        },
        pb::Settings {
            role: Some(-3),
            ..Default::default()
        },
        pb::Settings {
            message_recap_context_type: Some(9),
            ..Default::default()
        },
        pb::Settings {
            tokenizer: Some(1000),
            ..Default::default()
        },
    ] {
        let body = pb::UpdateSettingsRequest {
            chat_id: "victim".into(),
            settings: Some(settings),
            clear: vec![],
        };
        let status = call(
            &channel,
            "/recap.v1.SettingsService/UpdateSettings",
            body.encode_to_vec().into(),
        )
        .await
        .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
    }
    // 5. Huge strings: over the text limit, then over the request limit.
    let status = call(
        &channel,
        "/recap.v1.EventService/Publish",
        event("big", message_sent("m", &"x".repeat(1024 * 1024 + 1))),
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let status = call(
        &channel,
        "/recap.v1.EventService/Publish",
        event("big", message_sent("m", &"x".repeat(5 * 1024 * 1024))),
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted);
    // 6. A deep list: 200,000 messages in one chat_changed (4 MB limit
    //    allows it), and duplicate ids in a long list.
    let many: Vec<pb::Message> = (0..200_000)
        .map(|i| pb::Message {
            id: format!("{i}"),
            ..Default::default()
        })
        .collect();
    record(
        call(
            &channel,
            "/recap.v1.EventService/Publish",
            event("deep", chat_changed(many)),
        )
        .await,
        "deep list",
    );
    let dupes: Vec<pb::Message> = (0..10_000)
        .map(|i| pb::Message {
            id: format!("{}", i % 5000),
            ..Default::default()
        })
        .collect();
    let status = call(
        &channel,
        "/recap.v1.EventService/Publish",
        event("dupes", chat_changed(dupes)),
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), Code::AlreadyExists);
    // 7. An unknown method.
    let status = call(&channel, "/recap.v1.EventService/Nope", Bytes::new())
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unimplemented);

    eprintln!("codes: {codes:?}");
    // The server is up and the victim chat is as it was.
    assert_eq!(server.injection("victim").await, before);
    let data = server
        .memory
        .get_message_data(pb::GetMessageDataRequest {
            swipe_id: None,
            chat_id: "victim".into(),
            message_id: "m1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(data, pb::MessageData::default());
    server.stop().await;
}
