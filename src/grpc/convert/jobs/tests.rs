use crate::domain::time::UnixMicros;
use prost_types::Timestamp;

use super::*;
use crate::domain::ids::ChatKey;

fn a_job() -> Job {
    Job::new(
        "job-1".into(),
        ChatKey {
            tenant: crate::domain::ids::Tenant("t".into()),
            id: "chat".into(),
        },
        JobKind::RunningRecap,
        "m7".into(),
        UnixMicros(1_700_000_000_123_456),
        true,
    )
}

#[test]
fn a_job_shows_its_fields_and_millisecond_utc_times() {
    let job = Job {
        state: JobState::Failed,
        attempts: 5,
        last_error: "429 Too Many Requests".into(),
        result: "nothing applied".into(),
        updated_us: UnixMicros(1_700_000_001_999_999),
        ..a_job()
    };
    let wire = pb::Job::from(&job);
    assert_eq!(
        wire,
        pb::Job {
            job_id: "job-1".into(),
            chat_id: "chat".into(),
            kind: pb::JobKind::RunningRecap as i32,
            state: pb::JobState::Failed as i32,
            message_id: "m7".into(),
            attempts: 5,
            last_error: "429 Too Many Requests".into(),
            created_at: Some(Timestamp {
                seconds: 1_700_000_000,
                nanos: 123_000_000
            }),
            updated_at: Some(Timestamp {
                seconds: 1_700_000_001,
                nanos: 999_000_000
            }),
            result: "nothing applied".into(),
            subject: String::new(),
        }
    );
    // Before the epoch, the millisecond is the one below.
    let early = Job {
        created_us: UnixMicros(-1),
        ..a_job()
    };
    assert_eq!(
        pb::Job::from(&early).created_at,
        Some(Timestamp {
            seconds: -1,
            nanos: 999_000_000
        })
    );
}

#[test]
fn kinds_and_states_round_trip_and_unspecified_or_unknown_is_refused_by_name() {
    for kind in JobKind::ALL {
        let wire = pb::JobKind::from(kind) as i32;
        assert_eq!(job_kind("kind", wire).unwrap(), kind);
    }
    for state in JobState::ALL {
        let wire = pb::JobState::from(state) as i32;
        assert_eq!(job_state("state", wire).unwrap(), state);
    }
    for bad in [0, 7, -1] {
        let err = job_states(&[pb::JobState::Running as i32, bad]).unwrap_err();
        assert!(err.to_string().contains("states[1]"), "{err}");
    }
    assert!(
        job_kind("kind", 0)
            .unwrap_err()
            .to_string()
            .contains("UNSPECIFIED")
    );
    assert!(job_kind("kind", 11).is_err());
    assert_eq!(job_states(&[]).unwrap(), []);
}

#[test]
fn page_sizes_default_to_100_and_stop_at_1000() {
    assert_eq!(page_size(0).unwrap(), DEFAULT_PAGE_SIZE);
    assert_eq!(page_size(1).unwrap(), 1);
    assert_eq!(page_size(1000).unwrap(), 1000);
    let err = page_size(1001).unwrap_err();
    assert!(err.to_string().contains("page_size"), "{err}");
    assert!(page_size(u32::MAX).is_err());
}

#[test]
fn a_page_token_names_the_last_jobs_place() {
    let job = Job {
        id: "a:b é".into(),
        created_us: UnixMicros(-42),
        ..a_job()
    };
    let token = page_token(&job);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        page_after(&token).unwrap(),
        Some((UnixMicros(-42), "a:b é".into()))
    );
    assert_eq!(page_after("").unwrap(), None);
    let longest = Job {
        id: "x".repeat(ids::MAX_ID_BYTES),
        created_us: UnixMicros(i64::MIN),
        ..a_job()
    };
    let token = page_token(&longest);
    assert_eq!(token.len(), MAX_TOKEN_CHARS);
    assert_eq!(
        page_after(&token).unwrap(),
        Some((UnixMicros(i64::MIN), longest.id))
    );
}

#[test]
fn a_token_the_server_did_not_give_is_refused() {
    let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    for bad in [
        "zz".to_owned(),
        "abc".to_owned(),
        "é".to_owned(),
        "ABCD".to_owned(),
        hex("no-colon"),
        hex("12x:job"),
        hex("12:"),
        hex("12:a\u{7}b"),
        "ff".repeat(4),
        "0".repeat(MAX_TOKEN_CHARS + 2),
    ] {
        let err = page_after(&bad).unwrap_err();
        assert!(err.to_string().contains("page_token"), "{bad}: {err}");
    }
}

#[test]
fn id_lists_are_checked_by_place_bounded_and_deduplicated_in_order() {
    let ids = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        unique_ids(
            "message_ids",
            ids(&["b", "a", "b", "c", "a"]),
            10,
            ids::check_message_id
        )
        .unwrap(),
        ["b", "a", "c"]
    );
    let err = unique_ids("message_ids", ids(&["a", ""]), 10, ids::check_message_id).unwrap_err();
    assert!(err.to_string().contains("message_ids[1]"), "{err}");
    let err = unique_ids(
        "message_ids",
        ids(&["a", "b", "c"]),
        2,
        ids::check_message_id,
    )
    .unwrap_err();
    assert!(err.to_string().contains("message_ids"), "{err}");
    let err = job_id("").unwrap_err();
    assert!(err.to_string().contains("job_id"), "{err}");
}
