use super::*;
use crate::domain::ids::ChatKey;
use std::sync::{Arc, Mutex};

fn delete(chat: &str) -> Vec<Write> {
    vec![Write::DeleteMessage {
        chat: ChatKey::untenanted(chat),
        message_id: "m".into(),
    }]
}

fn names(groups: &[Vec<Write>]) -> Vec<String> {
    groups
        .iter()
        .flatten()
        .filter_map(|w| match w {
            Write::DeleteMessage { chat, .. } => Some(chat.id.clone()),
            _ => None,
        })
        .collect()
}

/// A committer that records each transaction's group count, fails
/// groups naming "bad" and panics on groups naming "panic".
fn recording(
    transactions: Arc<Mutex<Vec<usize>>>,
) -> impl FnMut(&[Vec<Write>]) -> Result<(), StoreError> {
    move |groups| {
        let named = names(groups);
        if named.iter().any(|n| n == "panic") {
            panic!("the store broke");
        }
        if named.iter().any(|n| n == "bad") {
            return Err(StoreError::database("commit", "refused"));
        }
        transactions.lock().unwrap().push(groups.len());
        Ok(())
    }
}

#[tokio::test]
async fn a_failing_group_fails_alone() {
    let transactions = Arc::new(Mutex::new(Vec::new()));
    let (queue, requests) = queue();
    let committer = recording(transactions.clone());
    let thread = std::thread::spawn(move || run_blocking(requests, committer));
    let results = tokio::join!(
        queue.commit(delete("a")),
        queue.commit(delete("bad")),
        queue.commit(delete("c")),
    );
    assert!(results.0.is_ok());
    assert!(matches!(results.1, Err(StoreError::Database { .. })));
    assert!(results.2.is_ok());
    queue.close().await;
    thread.join().unwrap();
    let committed: usize = transactions.lock().unwrap().iter().sum();
    assert_eq!(committed, 2);
}

#[tokio::test]
async fn a_whole_chat_replacement_is_committed_alone() {
    let transactions = Arc::new(Mutex::new(Vec::new()));
    let (queue, requests) = queue();
    let queue = Arc::new(queue);
    let replace = vec![Write::ReplaceChat {
        chat: ChatKey::untenanted("big"),
        content: crate::store::SharedChat(Arc::new(crate::domain::chat::Chat::default())),
    }];
    // Queued before the loop starts, so all three wait together.
    let mut callers = Vec::new();
    for writes in [delete("a"), replace, delete("c"), delete("d")] {
        let queue = queue.clone();
        callers.push(tokio::spawn(async move { queue.commit(writes).await }));
        tokio::task::yield_now().await;
    }
    let committer = recording(transactions.clone());
    let thread = std::thread::spawn(move || run_blocking(requests, committer));
    for caller in callers {
        caller.await.unwrap().unwrap();
    }
    queue.close().await;
    thread.join().unwrap();
    // "a" alone (the replacement is handed back), the replacement
    // alone, then "c" and "d" together.
    assert_eq!(*transactions.lock().unwrap(), vec![1, 1, 2]);
}

#[tokio::test]
async fn a_panicking_commit_fails_its_callers_and_the_loop_goes_on() {
    let transactions = Arc::new(Mutex::new(Vec::new()));
    let (queue, requests) = queue();
    let committer = recording(transactions.clone());
    let thread = std::thread::spawn(move || run_blocking(requests, committer));
    let results = tokio::join!(queue.commit(delete("panic")), queue.commit(delete("ok")));
    assert!(
        matches!(&results.0, Err(StoreError::Panicked(m)) if m == "the store broke"),
        "{:?}",
        results.0
    );
    assert!(results.1.is_ok());
    // Later commits are served as usual.
    queue.commit(delete("later")).await.unwrap();
    queue.close().await;
    assert!(matches!(
        queue.commit(delete("closed")).await,
        Err(StoreError::Closed)
    ));
    thread.join().unwrap();
}

struct Panicky;

#[async_trait::async_trait]
impl BatchCommit for Panicky {
    async fn commit_batch(&self, groups: &[Vec<Write>]) -> Result<(), StoreError> {
        tokio::task::yield_now().await;
        if names(groups).iter().any(|n| n == "panic") {
            panic!("async store broke");
        }
        Ok(())
    }
}

#[tokio::test]
async fn the_async_loop_survives_a_panic_too() {
    let (queue, requests) = queue();
    let task = tokio::spawn(run_async(requests, Panicky));
    assert!(matches!(
        queue.commit(delete("panic")).await,
        Err(StoreError::Panicked(_))
    ));
    queue.commit(delete("ok")).await.unwrap();
    queue.close().await;
    task.await.unwrap();
}
