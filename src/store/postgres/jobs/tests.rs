use super::*;
use crate::domain::jobs::{JobKind, JobState};
use crate::domain::time::UnixMicros;

fn job(id: &str, fence: u64, state: JobState, updated_us: i64) -> Job {
    let mut job = Job::new(
        id.into(),
        ChatKey::untenanted("c"),
        JobKind::MessageRecap,
        "m".into(),
        UnixMicros(0),
        false,
    );
    job.fence = fence;
    job.state = state;
    job.updated_us = UnixMicros(updated_us);
    job
}

fn write(job: &Job, expect_fence: Option<u64>) -> Write {
    Write::Job {
        job: job.clone(),
        expect_fence,
    }
}

fn rows(jobs: &[Job]) -> HashMap<String, Stored> {
    jobs.iter().map(|j| (j.id.clone(), Stored::of(j))).collect()
}

fn fenced(groups: &[Vec<Write>], stored: &[Job]) -> Option<String> {
    match follow_fences(groups, rows(stored)) {
        Ok(()) => None,
        Err(StoreError::Fenced(id)) => Some(id),
        Err(other) => panic!("{other:?}"),
    }
}

#[test]
fn a_fence_is_checked_against_the_row_as_the_batch_left_it() {
    let stored = [job("a", 1, JobState::Running, 0)];
    let claimed = job("a", 2, JobState::Running, 5);
    let finished = job("a", 2, JobState::Succeeded, 6);
    // The row's own fence.
    assert_eq!(fenced(&[vec![write(&finished, Some(1))]], &stored), None);
    assert_eq!(
        fenced(&[vec![write(&finished, Some(2))]], &stored),
        Some("a".into())
    );
    // A claim earlier in the batch moved it on: the new runner's result
    // passes, the old runner's does not.
    let batch = [
        vec![write(&claimed, Some(1))],
        vec![write(&finished, Some(2))],
    ];
    assert_eq!(fenced(&batch, &stored), None);
    let late = [
        vec![write(&claimed, Some(1))],
        vec![write(&finished, Some(1))],
    ];
    assert_eq!(fenced(&late, &stored), Some("a".into()));
    // A job the database does not have (and no group created).
    let ghost = job("ghost", 0, JobState::Pending, 0);
    assert_eq!(
        fenced(&[vec![write(&ghost, Some(0))]], &stored),
        Some("ghost".into())
    );
    let created = [vec![write(&ghost, None)], vec![write(&ghost, Some(0))]];
    assert_eq!(fenced(&created, &stored), None);
}

#[test]
fn a_purge_earlier_in_the_batch_removes_what_a_fence_expects() {
    let stored = [
        job("old", 3, JobState::Failed, 10),
        job("open", 3, JobState::Running, 10),
    ];
    let purge = Write::PurgeJobs {
        finished_before_us: UnixMicros(11),
    };
    let retried = |id: &str| write(&job(id, 4, JobState::Pending, 20), Some(3));
    assert_eq!(
        fenced(&[vec![purge.clone()], vec![retried("old")]], &stored),
        Some("old".into())
    );
    assert_eq!(fenced(&[vec![purge], vec![retried("open")]], &stored), None);
}

#[test]
fn a_deletion_earlier_in_the_batch_removes_its_chats_jobs() {
    let mine = job("mine", 3, JobState::Running, 10);
    let mut elsewhere = job("elsewhere", 3, JobState::Running, 10);
    elsewhere.chat = ChatKey::untenanted("other");
    let delete = Write::DeleteChat {
        chat: mine.chat.clone(),
        tombstone: crate::store::Tombstone::default(),
    };
    let result = |j: &Job| write(&job(&j.id, 3, JobState::Succeeded, 20), Some(3));
    let stored = [mine.clone(), elsewhere.clone()];
    assert_eq!(
        fenced(&[vec![delete.clone()], vec![result(&mine)]], &stored),
        Some("mine".into())
    );
    assert_eq!(
        fenced(&[vec![delete.clone()], vec![result(&elsewhere)]], &stored),
        None
    );
    // The result committed before the deletion passes (the deletion
    // then removes it).
    assert_eq!(
        fenced(&[vec![result(&mine)], vec![delete.clone()]], &stored),
        None
    );
    // The deletion locks its chat's jobs with the others, in one
    // statement.
    let (sql, params) =
        lock_jobs(&[vec![delete.clone()], vec![result(&elsewhere)]]).expect("locks");
    assert_eq!(sql, LOCK_JOBS_AND_DELETED);
    assert_eq!(params.len(), 3);
    assert_eq!(
        format!("{:?}", params[2]),
        format!("{:?}", vec![mine.chat.id.clone()])
    );
    assert_eq!(
        lock_jobs(&[vec![delete]]).map(|(sql, _)| sql),
        Some(LOCK_JOBS_AND_DELETED)
    );
}

#[test]
fn a_batch_locks_each_job_it_writes_once_in_id_order() {
    let groups = [
        vec![write(&job("b", 0, JobState::Pending, 0), None)],
        vec![
            write(&job("a", 0, JobState::Pending, 0), Some(0)),
            write(&job("b", 0, JobState::Pending, 0), None),
        ],
    ];
    let (sql, params) = lock_jobs(&groups).expect("the batch writes jobs");
    assert_eq!(sql, LOCK_JOBS);
    assert_eq!(format!("{:?}", params[0]), format!("{:?}", vec!["a", "b"]));
    assert!(
        lock_jobs(&[vec![Write::PurgeJobs {
            finished_before_us: UnixMicros(0)
        }]])
        .is_none()
    );
}

#[test]
fn the_state_codes_written_into_the_sql_are_the_domains() {
    // The statements and migration 4's partial index name PENDING as 1
    // and RUNNING as 2.
    assert_eq!(JobState::Pending.code(), 1);
    assert_eq!(JobState::Running.code(), 2);
    assert_eq!(terminal_codes(), [3, 4, 5, 6]);
}
