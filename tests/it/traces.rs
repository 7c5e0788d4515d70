//! OpenTelemetry traces from the real binary to a collector stand-in
//! (`common::otlp_collector`): a call's server span under the caller's
//! `traceparent`, the commit it waited for, a scene recap job's attempt
//! linked to the call that queued it with its LLM request as a client span
//! carrying the GenAI conventions' usage, no chat text or id unless the
//! flags ask, HTTP as well as gRPC, the sampler honoured, and a collector
//! that is down changing no answer.

use std::time::Duration;

use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use recapd::grpc::pb;
use recapd::grpc::pb::recall_service_client::RecallServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;

use crate::common::fake_llm::{FakeLlm, Reply};
use crate::common::otlp_collector::{Collector, int, new_traceparent, text};
use crate::common::process::{Recapd, metric, run_recapd, scrape};
use crate::common::{Server, chat_changed, free_port, message_sent};
use crate::recap_jobs::{open_chat, recapd_with_llm, story, story_chat};

/// A request carrying `traceparent`.
fn traced<T>(message: T, traceparent: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("traceparent", traceparent.parse().expect("ASCII"));
    request
}

/// recapd exporting to `collector` over `protocol`, with `extra` flags.
fn traced_recapd(
    dir: &std::path::Path,
    collector: &Collector,
    protocol: &str,
    extra: &[&str],
) -> Recapd {
    let mut command = Recapd::command(dir);
    command
        .args([
            "--otlp-endpoint",
            collector.url(),
            "--otlp-protocol",
            protocol,
        ])
        .args(extra);
    Recapd::start_with(command, dir)
}

fn publish(chat: &str, kind: pb::event::Kind) -> pb::PublishRequest {
    pb::PublishRequest {
        event: Some(pb::Event {
            chat_id: chat.into(),
            kind: Some(kind),
        }),
    }
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|span| span.name == name).collect()
}

/// A recapd writing recaps with `llm` (the fake) and exporting over
/// OTLP/gRPC to `collector`, with `extra` flags; its clients, and its
/// data directory (kept as long as it runs).
async fn recapd_with_llm_traced(
    collector: &Collector,
    llm: &FakeLlm,
    extra: &[&str],
) -> (
    Recapd,
    Server,
    RecapServiceClient<tonic::transport::Channel>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut args = vec![
        "--otlp-endpoint",
        collector.url(),
        "--otlp-protocol",
        "grpc",
    ];
    args.extend_from_slice(extra);
    let recapd = recapd_with_llm(dir.path(), dir.path(), &llm.url(), &args);
    let server = Server::clients(recapd.channel().await);
    let recaps = RecapServiceClient::new(server.channel.clone());
    (recapd, server, recaps, dir)
}

/// The attempt of a scene recap job linked to the trace `trace_id` (the
/// call that queued it), and the fake LLM's request under it.
async fn attempt_and_its_llm_request(collector: &Collector, trace_id: &[u8]) -> (Span, Span) {
    let attempt = collector
        .wait_for("the scene recap's attempt", |spans| {
            named(spans, "job scene_recap")
                .into_iter()
                .find(|span| span.links.iter().any(|link| link.trace_id == trace_id))
                .cloned()
        })
        .await;
    let chat = collector
        .wait_for("the attempt's LLM request", |spans| {
            spans
                .iter()
                .find(|span| span.parent_span_id == attempt.span_id && span.name == "chat fake")
                .cloned()
        })
        .await;
    (attempt, chat)
}

#[tokio::test]
async fn a_calls_span_is_the_child_of_its_traceparent_and_its_commit_is_in_the_trace() {
    let collector = Collector::start_grpc().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = Recapd::command(dir.path());
    command
        .args([
            "--otlp-endpoint",
            collector.url(),
            "--otlp-protocol",
            "grpc",
        ])
        // The traces-only variable wins over the general one.
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=general")
        .env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-api-key=for-traces");
    let recapd = Recapd::start_with(command, dir.path());
    let mut server = Server::clients(recapd.channel().await);
    let (traceparent, trace_id, caller_span) = new_traceparent();
    server
        .events
        .publish(traced(
            publish("traced-chat", message_sent("m1", "hello there")),
            &traceparent,
        ))
        .await
        .expect("published");

    let call = collector
        .wait_for("the Publish span", |spans| {
            named(spans, "recap.v1.EventService/Publish")
                .into_iter()
                .find(|span| span.trace_id == trace_id)
                .cloned()
        })
        .await;
    assert_eq!(
        call.parent_span_id, caller_span,
        "the caller's span is its parent"
    );
    assert_eq!(call.kind, SpanKind::Server as i32);
    assert_eq!(text(&call, "rpc.system").as_deref(), Some("grpc"));
    assert_eq!(
        text(&call, "rpc.service").as_deref(),
        Some("recap.v1.EventService")
    );
    assert_eq!(text(&call, "rpc.method").as_deref(), Some("Publish"));
    assert_eq!(int(&call, "rpc.grpc.status_code"), Some(0));

    // The commit the call waited for: in the call's trace, under its span.
    let commit = collector
        .wait_for("the Publish's commit", |spans| {
            named(spans, "store.commit")
                .into_iter()
                .find(|span| span.trace_id == trace_id)
                .cloned()
        })
        .await;
    assert_eq!(commit.parent_span_id, call.span_id);
    assert!(int(&commit, "recapd.commit.groups").is_some_and(|n| n >= 1));
    assert!(
        collector
            .service_names()
            .iter()
            .all(|name| name == "recapd")
    );

    // A call without a traceparent starts a trace of its own; a refused
    // call's span carries its code.
    let refused = server
        .events
        .publish(publish("", message_sent("m2", "no chat")))
        .await;
    assert_eq!(
        refused.expect_err("no chat id").code(),
        tonic::Code::InvalidArgument
    );
    let refused = collector
        .wait_for("the refused Publish", |spans| {
            named(spans, "recap.v1.EventService/Publish")
                .into_iter()
                .find(|span| int(span, "rpc.grpc.status_code") == Some(3))
                .cloned()
        })
        .await;
    assert!(refused.parent_span_id.is_empty(), "a root span");
    assert_ne!(refused.trace_id, trace_id);
    let keys = collector.header_values("x-api-key");
    assert!(
        !keys.is_empty() && keys.iter().all(|key| key == "for-traces"),
        "every export carries the operator's header as gRPC metadata: {keys:?}"
    );
}

#[tokio::test]
async fn a_scene_recap_job_links_to_the_call_and_its_llm_span_carries_the_usage() {
    let collector = Collector::start_grpc().await;
    let llm = FakeLlm::start(story).await;
    let (_recapd, mut server, mut recaps, _dir) =
        recapd_with_llm_traced(&collector, &llm, &[]).await;
    open_chat(&mut server, "story", story_chat(8, &[])).await;
    let (traceparent, trace_id, _) = new_traceparent();
    let job = recaps
        .generate_scene_recap(traced(
            pb::GenerateSceneRecapRequest {
                chat_id: "story".into(),
                message_id: "m5".into(),
            },
            &traceparent,
        ))
        .await
        .expect("queued")
        .into_inner();
    assert!(!job.job_id.is_empty());

    // The attempt runs later, in a trace of its own linked to the call.
    let call = collector
        .wait_for("the GenerateSceneRecap span", |spans| {
            named(spans, "recap.v1.RecapService/GenerateSceneRecap")
                .into_iter()
                .find(|span| span.trace_id == trace_id)
                .cloned()
        })
        .await;
    let (attempt, chat) = attempt_and_its_llm_request(&collector, &trace_id).await;
    assert_eq!(attempt.links.len(), 1);
    assert_eq!(
        attempt.links[0].span_id, call.span_id,
        "linked to the call's own span"
    );
    assert!(attempt.parent_span_id.is_empty(), "a trace of its own");
    assert_eq!(
        text(&attempt, "recapd.job.kind").as_deref(),
        Some("scene_recap")
    );
    assert_eq!(int(&attempt, "recapd.job.attempt"), Some(1));
    assert_eq!(
        text(&attempt, "gen_ai.operation.name").as_deref(),
        Some("update_memory")
    );
    assert_eq!(chat.trace_id, attempt.trace_id);
    assert_eq!(chat.kind, SpanKind::Client as i32);
    assert_eq!(
        text(&chat, "gen_ai.operation.name").as_deref(),
        Some("chat")
    );
    assert_eq!(text(&chat, "gen_ai.request.model").as_deref(), Some("fake"));
    assert_eq!(
        text(&chat, "gen_ai.response.model").as_deref(),
        Some("fake")
    );
    assert_eq!(text(&chat, "server.address").as_deref(), Some("127.0.0.1"));
    let port = llm
        .url()
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next()?.parse().ok());
    assert_eq!(int(&chat, "server.port"), port);
    // The fake's usage: the words of the prompt it was sent, and of the
    // answer it gave.
    let seen = llm.requests();
    let request = seen.first().expect("the LLM was asked");
    let Reply::Answer(answer) = story(request) else {
        panic!("the story script answers");
    };
    assert_eq!(
        int(&chat, "gen_ai.usage.input_tokens"),
        Some(request.prompt.split_whitespace().count() as i64)
    );
    assert_eq!(
        int(&chat, "gen_ai.usage.output_tokens"),
        Some(answer.split_whitespace().count() as i64)
    );
    assert!(
        format!("{:?}", chat.attributes).contains("gen_ai.response.finish_reasons"),
        "finish reasons: {:?}",
        chat.attributes
    );
}

/// The words only the chat holds, and the chat's id.
const SECRET_WORD: &str = "quokkamarmalade";
const SECRET_CHAT: &str = "private-chat-of-ann";

/// A chat whose every message and the recall query hold [`SECRET_WORD`],
/// recapped by the fake LLM; returns once the recap's LLM span arrived.
async fn secret_chat_traced(
    collector: &Collector,
    extra: &[&str],
) -> (Recapd, FakeLlm, tempfile::TempDir) {
    let llm = FakeLlm::start(story).await;
    let (recapd, mut server, mut recaps, dir) =
        recapd_with_llm_traced(collector, &llm, extra).await;
    let mut messages = story_chat(8, &[]);
    for message in &mut messages {
        message.text = format!("{} {SECRET_WORD}", message.text);
    }
    open_chat(&mut server, SECRET_CHAT, messages).await;
    recaps
        .generate_scene_recap(pb::GenerateSceneRecapRequest {
            chat_id: SECRET_CHAT.into(),
            message_id: "m5".into(),
        })
        .await
        .expect("queued");
    RecallServiceClient::new(server.channel.clone())
        .recall(pb::RecallRequest {
            chat_id: SECRET_CHAT.into(),
            query: format!("where is the {SECRET_WORD}"),
            ..Default::default()
        })
        .await
        .expect("recall answers");
    collector
        .wait_for(
            "the recap's attempt, its LLM request and the recall",
            |spans| {
                (!named(spans, "chat fake").is_empty()
                    && !named(spans, "search_memory").is_empty()
                    && !named(spans, "job scene_recap").is_empty())
                .then_some(())
            },
        )
        .await;
    // What the attempt committed and pushed after it: until nothing new
    // arrives for a second.
    let mut seen = 0;
    while collector.spans().len() != seen {
        seen = collector.spans().len();
        tokio::time::sleep(Duration::from_millis(1000)).await;
    }
    (recapd, llm, dir)
}

#[tokio::test]
async fn spans_hold_no_chat_text_or_id_unless_the_flags_ask() {
    let collector = Collector::start_grpc().await;
    let _kept = secret_chat_traced(&collector, &[]).await;
    let everything = collector.everything();
    assert!(
        everything.contains("gen_ai.usage.input_tokens"),
        "the spans arrived"
    );
    assert!(
        !everything.contains(SECRET_WORD),
        "chat text in a span: {everything}"
    );
    assert!(
        !everything.contains(SECRET_CHAT),
        "a chat id in a span: {everything}"
    );

    // With --trace-content and --trace-chat-ids both are there: the
    // check above could fail.
    let collector = Collector::start_grpc().await;
    let _kept = secret_chat_traced(&collector, &["--trace-content", "--trace-chat-ids"]).await;
    let spans = collector.spans();
    let chat = named(&spans, "chat fake")[0];
    assert!(text(chat, "gen_ai.input.messages").is_some_and(|m| m.contains(SECRET_WORD)));
    assert!(text(chat, "gen_ai.output.messages").is_some());
    let recall = named(&spans, "search_memory")[0];
    assert!(text(recall, "recapd.recall.query").is_some_and(|q| q.contains(SECRET_WORD)));
    assert_eq!(text(recall, "recapd.chat.id").as_deref(), Some(SECRET_CHAT));
}

#[tokio::test]
async fn the_sampler_is_honoured() {
    // parentbased_always_off: nothing that starts here is kept, a sampled
    // caller's trace is.
    let collector = Collector::start_grpc().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let recapd = traced_recapd(
        dir.path(),
        &collector,
        "grpc",
        &["--traces-sampler", "parentbased_always_off"],
    );
    let mut server = Server::clients(recapd.channel().await);
    server
        .events
        .publish(publish("untraced", message_sent("m1", "hello")))
        .await
        .expect("published");
    let (traceparent, trace_id, _) = new_traceparent();
    server
        .events
        .publish(traced(
            publish("traced", message_sent("m1", "hello")),
            &traceparent,
        ))
        .await
        .expect("published");
    collector
        .wait_for("the sampled caller's span", |spans| {
            spans.iter().find(|span| span.trace_id == trace_id).cloned()
        })
        .await;
    // Given time, nothing else arrives: every span is of the caller's
    // trace, or of a trace linked to it (its debounced refresh's).
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let spans = collector.spans();
    let mut kept = vec![&trace_id];
    kept.extend(
        spans
            .iter()
            .filter(|span| span.links.iter().any(|link| link.trace_id == trace_id))
            .map(|span| &span.trace_id),
    );
    assert!(spans.iter().all(|span| kept.contains(&&span.trace_id)));
    assert_eq!(named(&spans, "recap.v1.EventService/Publish").len(), 1);
}

#[tokio::test]
async fn a_failures_error_id_is_on_its_span() {
    // Recall with a query while the embeddings endpoint is down: UNAVAILABLE
    // with an error id, which the call's span carries.
    let collector = Collector::start_grpc().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let dead = format!("http://127.0.0.1:{}/v1", free_port());
    let recapd = traced_recapd(
        dir.path(),
        &collector,
        "grpc",
        &[
            "--embedding-url",
            &dead,
            "--embedding-model",
            "m",
            "--embedding-max-attempts",
            "1",
        ],
    );
    let mut server = Server::clients(recapd.channel().await);
    server
        .publish("c", chat_changed(story_chat(3, &[])))
        .await
        .expect("published");
    let failed = RecallServiceClient::new(server.channel.clone())
        .recall(pb::RecallRequest {
            chat_id: "c".into(),
            query: "anything".into(),
            ..Default::default()
        })
        .await
        .expect_err("the endpoint is down");
    assert_eq!(failed.code(), tonic::Code::Unavailable);
    let id = recapd::grpc::status::error_id(&failed)
        .expect("an error id")
        .to_owned();
    let span = collector
        .wait_for("the failed Recall's span", |spans| {
            named(spans, "recap.v1.RecallService/Recall")
                .first()
                .map(|s| (*s).clone())
        })
        .await;
    assert_eq!(text(&span, "recapd.error.id"), Some(id));
    assert_eq!(int(&span, "rpc.grpc.status_code"), Some(14));
    assert_eq!(
        span.status.as_ref().map(|s| s.code),
        Some(opentelemetry_proto::tonic::trace::v1::status::StatusCode::Error as i32)
    );
}

#[tokio::test]
async fn a_sampled_calls_job_and_debounced_refresh_are_kept_whatever_the_sampler() {
    // parentbased_always_off keeps nothing that starts here; a job's attempt
    // and a debounced refresh start traces of their own, and are kept
    // because the call they link to was sampled.
    let collector = Collector::start_grpc().await;
    let llm = FakeLlm::start(story).await;
    let sampler = ["--traces-sampler", "parentbased_always_off"];
    let (_recapd, mut server, mut recaps, _dir) =
        recapd_with_llm_traced(&collector, &llm, &sampler).await;
    open_chat(&mut server, "story", story_chat(8, &[])).await;
    server
        .update_settings(
            "story",
            pb::Settings {
                debounce_ms: Some(300),
                ..Default::default()
            },
        )
        .await;
    let (first, first_trace, _) = new_traceparent();
    let (second, second_trace, _) = new_traceparent();
    for (traceparent, id) in [(&first, "m8"), (&second, "m9")] {
        server
            .events
            .publish(traced(
                publish("story", message_sent(id, "and then")),
                traceparent,
            ))
            .await
            .expect("published");
    }
    let debounced = collector
        .wait_for("the debounced refresh", |spans| {
            named(spans, "debounced_refresh")
                .first()
                .map(|s| (*s).clone())
        })
        .await;
    let linked: Vec<&Vec<u8>> = debounced.links.iter().map(|link| &link.trace_id).collect();
    assert_eq!(
        linked,
        vec![&first_trace, &second_trace],
        "both events that owed it"
    );
    let (traceparent, trace_id, _) = new_traceparent();
    recaps
        .generate_scene_recap(traced(
            pb::GenerateSceneRecapRequest {
                chat_id: "story".into(),
                message_id: "m5".into(),
            },
            &traceparent,
        ))
        .await
        .expect("queued");
    attempt_and_its_llm_request(&collector, &trace_id).await;
}

mod export;
