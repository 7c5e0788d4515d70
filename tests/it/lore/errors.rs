//! GenerateLore's refusals, each with nothing queued: an unknown chat or
//! message, a message that is no visible scene break, a bad id, no LLM;
//! and a second call for a scene whose extraction is under way answers
//! that job.

use std::time::Duration;

use recapd::grpc::pb;
use tonic::Code;

use super::*;
use crate::common::fake_llm::FakeLlm;

async fn try_generate(
    recaps: &mut RecapServiceClient<Channel>,
    chat: &str,
    message: &str,
) -> Result<pb::Job, tonic::Status> {
    recaps
        .generate_lore(pb::GenerateLoreRequest {
            chat_id: chat.into(),
            message_id: message.into(),
        })
        .await
        .map(tonic::Response::into_inner)
}

fn refused(result: Result<pb::Job, tonic::Status>, code: Code, what: &str) {
    let status = result.expect_err(what);
    assert_eq!(status.code(), code, "{what}: {status:?}");
}

#[tokio::test]
async fn generate_lore_refuses_what_is_not_a_visible_scene_break_and_queues_nothing() {
    let script = Script::story(Story::of(&[scene_one()]));
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    open(&mut server, "errs", lore_settings(), story_chat()).await;
    // m5 is a break hidden from auto-hide: not a visible one.
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            edit: false,
            chat_id: "errs".into(),
            message_id: "m5".into(),
            data: Some(pb::MessageData {
                scene_break: Some(true),
                scene_break_visible: Some(false),
                ..Default::default()
            }),
        })
        .await
        .expect("hidden break");

    refused(
        try_generate(&mut recaps, "nobody", "m3").await,
        Code::NotFound,
        "an unknown chat",
    );
    refused(
        try_generate(&mut recaps, "errs", "m99").await,
        Code::NotFound,
        "an unknown message",
    );
    refused(
        try_generate(&mut recaps, "errs", "m3").await,
        Code::FailedPrecondition,
        "a message that is no scene break",
    );
    refused(
        try_generate(&mut recaps, "errs", "m5").await,
        Code::FailedPrecondition,
        "a hidden scene break",
    );
    refused(
        try_generate(&mut recaps, "", "m3").await,
        Code::InvalidArgument,
        "an empty chat id",
    );
    refused(
        try_generate(&mut recaps, "errs", "").await,
        Code::InvalidArgument,
        "an empty message id",
    );
    assert!(jobs_of(&mut recaps, "errs").await.is_empty());
    assert!(llm.requests().is_empty(), "nothing was asked");
    assert_eq!(
        chat_settings(&mut server, "errs")
            .await
            .world_info_chat_book
            .unwrap_or_default(),
        "",
        "no book was made"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_second_call_for_a_scene_under_way_answers_the_same_job() {
    let script = Script::holding(
        Story::of(&[scene_one()]),
        "lore_extract",
        Duration::from_millis(800),
    );
    script.arm();
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    open(&mut server, "twice", lore_settings(), story_chat()).await;
    make_break(&mut server, "twice", "m3").await;
    let first = generate_lore(&mut recaps, "twice", "m3").await;
    assert_eq!(kind(&first), pb::JobKind::LoreExtract);
    assert_eq!(first.message_id, "m3");
    script.wait_held().await;
    let again = generate_lore(&mut recaps, "twice", "m3").await;
    assert_eq!(again.job_id, first.job_id, "the extraction under way");
    let jobs = wait_for_lore(&mut recaps, "twice", 1).await;
    assert_eq!(
        jobs.iter()
            .filter(|j| kind(j) == pb::JobKind::LoreExtract)
            .count(),
        1,
        "{jobs:#?}"
    );
    assert_eq!(prompts_of(&llm.requests(), "lore_extract").len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn without_an_llm_generate_lore_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path()).await;
    let mut recaps = RecapServiceClient::new(server.channel.clone());
    open(&mut server, "plain", lore_settings(), story_chat()).await;
    make_break(&mut server, "plain", "m3").await;
    let status = try_generate(&mut recaps, "plain", "m3")
        .await
        .expect_err("refused without --llm-url");
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains("--llm-url"), "{status:?}");
    assert!(jobs_of(&mut recaps, "plain").await.is_empty());
    server.stop().await;
}
