//! Group commit: every write group waiting when the store becomes free goes
//! into the same transaction, and all of them are acknowledged together. One
//! fsync then covers many callers instead of one.

use std::sync::Arc;
use std::thread;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use crate::store::{Store, StoreError, Write};
use crate::telemetry;

/// Most groups put into one transaction.
const MAX_GROUPS_PER_COMMIT: usize = 4096;

struct Request {
    writes: Vec<Write>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// Handle to the committer thread; cheap to clone. The thread ends once
/// every handle is dropped and the queue is drained.
#[derive(Clone)]
pub struct Committer {
    queue: mpsc::UnboundedSender<Request>,
}

impl Committer {
    /// Starts the committer thread over `store`.
    pub fn start(
        store: Arc<dyn Store>,
    ) -> Result<(Committer, thread::JoinHandle<()>), std::io::Error> {
        let (queue, requests) = mpsc::unbounded_channel();
        let thread = thread::Builder::new()
            .name("recapd-commit".into())
            .spawn(move || run(store, requests))?;
        Ok((Committer { queue }, thread))
    }

    /// Commits one group of writes; resolves once it is durable. A group is
    /// all-or-nothing.
    pub async fn commit(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        if writes.is_empty() {
            return Ok(());
        }
        let (done, answer) = oneshot::channel();
        self.queue
            .send(Request { writes, done })
            .map_err(|_| StoreError::Closed)?;
        answer.await.unwrap_or(Err(StoreError::Closed))
    }
}

fn run(store: Arc<dyn Store>, mut requests: mpsc::UnboundedReceiver<Request>) {
    let mut batch: Vec<Request> = Vec::new();
    while let Some(first) = requests.blocking_recv() {
        batch.push(first);
        while batch.len() < MAX_GROUPS_PER_COMMIT {
            match requests.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let groups: Vec<Vec<Write>> = batch
            .iter_mut()
            .map(|r| std::mem::take(&mut r.writes))
            .collect();
        let started = Instant::now();
        let committed = store.commit(&groups);
        metrics::histogram!(telemetry::COMMIT_DURATION).record(started.elapsed().as_secs_f64());
        metrics::histogram!(telemetry::COMMIT_BATCH).record(groups.len() as f64);
        match committed {
            Ok(()) => {
                for request in batch.drain(..) {
                    let _ = request.done.send(Ok(()));
                }
            }
            Err(error) if batch.len() == 1 => {
                if let Some(request) = batch.pop() {
                    let _ = request.done.send(Err(error));
                }
            }
            Err(_) => {
                // One bad group must not fail the others: retry each alone.
                for (request, group) in batch.drain(..).zip(groups) {
                    let result = store.commit(std::slice::from_ref(&group));
                    let _ = request.done.send(result);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::settings::SettingsPatch;
    use crate::store::{ChatSettings, StoredChat};
    use std::sync::Mutex;

    /// Records each transaction's group count; fails groups naming "bad".
    #[derive(Default)]
    struct Recorder {
        transactions: Mutex<Vec<usize>>,
    }

    impl Store for Recorder {
        fn commit(&self, groups: &[Vec<Write>]) -> Result<(), StoreError> {
            let bad = groups
                .iter()
                .flatten()
                .any(|w| matches!(w, Write::DeleteMessage { chat_id, .. } if chat_id == "bad"));
            if bad {
                return Err(StoreError::Database("refused".into()));
            }
            self.transactions.lock().unwrap().push(groups.len());
            Ok(())
        }
        fn load_chat(&self, _: &str) -> Result<Option<StoredChat>, StoreError> {
            Ok(None)
        }
        fn load_chat_settings(&self, _: &str) -> Result<Option<ChatSettings>, StoreError> {
            Ok(None)
        }
        fn all_chat_settings(&self) -> Result<Vec<(String, ChatSettings)>, StoreError> {
            Ok(vec![])
        }
        fn load_global_settings(&self) -> Result<Vec<(String, SettingsPatch)>, StoreError> {
            Ok(vec![])
        }
        fn chat_ids(&self) -> Result<Vec<String>, StoreError> {
            Ok(vec![])
        }
        fn chats_needing_refresh(&self) -> Result<Vec<String>, StoreError> {
            Ok(vec![])
        }
    }

    fn delete(chat: &str) -> Vec<Write> {
        vec![Write::DeleteMessage {
            chat_id: chat.into(),
            message_id: "m".into(),
        }]
    }

    #[tokio::test]
    async fn a_failing_group_fails_alone() {
        let store = Arc::new(Recorder::default());
        let (committer, thread) = Committer::start(store.clone()).unwrap();
        let results = tokio::join!(
            committer.commit(delete("a")),
            committer.commit(delete("bad")),
            committer.commit(delete("c")),
        );
        assert!(results.0.is_ok());
        assert!(matches!(results.1, Err(StoreError::Database(_))));
        assert!(results.2.is_ok());
        drop(committer);
        thread.join().unwrap();
        let committed: usize = store.transactions.lock().unwrap().iter().sum();
        assert_eq!(committed, 2);
    }
}
