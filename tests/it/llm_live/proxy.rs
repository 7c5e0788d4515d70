//! `llm_structured_output` AUTO against a real endpoint that refuses
//! `json_schema`: a proxy in front of the real server answers 400 to any
//! request with a `json_schema` `response_format`, as OpenAI does for a
//! model without structured outputs, and forwards every other request.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use recapd::grpc::pb;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};

use super::endpoint;
use crate::recap_jobs::{jobs_of, kind, start_with_llm, state};

/// What the proxy saw: each request's `response_format.type` (`None`:
/// none sent) and whether it was forwarded.
type Seen = Arc<Mutex<Vec<(Option<String>, bool)>>>;

/// Starts the proxy in front of `upstream` (`http://HOST:PORT/v1`); returns
/// its base URL and what it sees.
async fn start_proxy(upstream: &str) -> (String, Seen) {
    let upstream_host = upstream
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .expect("an http:// upstream")
        .to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let seen: Seen = Arc::default();
    let shared = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (seen, host) = (shared.clone(), upstream_host.clone());
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    forward(request, seen.clone(), host.clone())
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (format!("http://{addr}/v1"), seen)
}

async fn forward(
    request: Request<Incoming>,
    seen: Seen,
    host: String,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let format = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v["response_format"]["type"].as_str().map(str::to_owned));
    if format.as_deref() == Some("json_schema") {
        seen.lock().push((format, false));
        let refusal = r#"{"error":{"message":"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.","type":"invalid_request_error","param":"response_format","code":null}}"#;
        return Ok(Response::builder()
            .status(StatusCode::BAD_REQUEST)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(refusal.as_bytes())))
            .expect("a valid response"));
    }
    seen.lock().push((format, true));
    let upstream = async {
        let stream = TcpStream::connect(&host).await.ok()?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .ok()?;
        tokio::spawn(connection);
        let mut outgoing = Request::builder()
            .method(parts.method.clone())
            .uri(parts.uri.clone())
            .header("host", host.as_str())
            .header("content-type", "application/json");
        if let Some(auth) = parts.headers.get("authorization") {
            outgoing = outgoing.header("authorization", auth);
        }
        let response = sender
            .send_request(outgoing.body(Full::new(body.clone())).ok()?)
            .await
            .ok()?;
        let status = response.status();
        let bytes = response.into_body().collect().await.ok()?.to_bytes();
        Some((status, bytes))
    };
    let (status, bytes) = upstream
        .await
        .unwrap_or((StatusCode::BAD_GATEWAY, Bytes::from_static(b"upstream failed")));
    Ok(Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(bytes))
        .expect("a valid response"))
}

#[tokio::test]
async fn auto_falls_back_to_json_object_once_on_a_real_endpoint_that_refuses_json_schema() {
    let Some((url, model)) = endpoint() else {
        return;
    };
    let (proxy, seen) = start_proxy(&url).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &proxy, |config| {
        config.llm.llm_model = model.clone();
        config.llm.llm_concurrency = 1;
        config.llm.llm_max_attempts = 3;
        config.llm.llm_timeout = Duration::from_secs(300);
    })
    .await;
    let messages = super::conversation::messages();
    server
        .publish("fallback", crate::common::chat_changed(messages))
        .await
        .expect("chat opened");
    recaps
        .generate_message_recaps(pb::GenerateMessageRecapsRequest {
            chat_id: "fallback".into(),
            message_ids: vec!["m1".into(), "m3".into(), "m8".into()],
        })
        .await
        .expect("message recaps queued");
    let jobs = super::pipeline::wait_until_finished(&mut recaps, "fallback", 3).await;
    for job in &jobs {
        assert_eq!(kind(job), pb::JobKind::MessageRecap);
        assert!(
            state(job) == pb::JobState::Succeeded
                || (state(job) == pb::JobState::Failed && !job.last_error.is_empty()),
            "{job:?}"
        );
        assert!(
            !job.last_error.contains("response_format"),
            "the refusal never reaches a job: {job:?}"
        );
    }
    let seen = seen.lock().clone();
    println!("the proxy saw {seen:?}; jobs: {:#?}", jobs_of(&mut recaps, "fallback").await);
    assert_eq!(
        seen.first(),
        Some(&(Some("json_schema".to_owned()), false)),
        "AUTO tries the schema first"
    );
    assert!(
        seen[1..]
            .iter()
            .all(|(format, forwarded)| format.as_deref() == Some("json_object") && *forwarded),
        "then json_object, remembered for every later request: {seen:?}"
    );
    assert!(seen.len() >= 4, "three jobs answered: {seen:?}");
    server.stop().await;
}
