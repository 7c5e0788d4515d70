//! The listener: one connection of its own that `LISTEN`s on the store's
//! channel and turns other replicas' notifications into [`Change`] hints.
//! When the connection drops it reconnects (with backoff) and asks for a
//! resync, since notifications sent meanwhile are lost.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio_postgres::AsyncMessage;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::hint::Hint;
use crate::domain::backoff::Backoff;
use crate::store::Change;

/// Longest wait between two reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Listens until `feed` has no receiver. `listening` is told once the first
/// `LISTEN` is in place. `tls` is the store's connector (the same TLS
/// settings as the pool's).
pub(super) async fn run(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    channel: String,
    replica: String,
    feed: mpsc::UnboundedSender<Change>,
    listening: oneshot::Sender<()>,
) {
    let mut listening = Some(listening);
    // Reconnecting: from 100 ms doubling up to MAX_BACKOFF, no jitter (one
    // listener per replica: nothing to spread), from the start again after
    // a connection that listened.
    let policy = Backoff {
        min: Duration::from_millis(100),
        max: MAX_BACKOFF,
        jitter: 0.0,
    };
    let mut failures = 0u32;
    while !feed.is_closed() {
        match listen_once(
            &config,
            tls.clone(),
            &channel,
            &replica,
            &feed,
            &mut listening,
        )
        .await
        {
            Ok(()) => failures = 0,
            Err(error) => {
                let error = crate::tls_common::with_causes(&error);
                tracing::warn!(%error, "PostgreSQL listener disconnected; reconnecting");
            }
        }
        failures = failures.saturating_add(1);
        tokio::time::sleep(policy.delay(failures, 0.0)).await;
    }
}

/// One connection's life: `LISTEN`, ask for a resync (anything sent while
/// not listening was missed), then forward hints until the connection ends.
async fn listen_once(
    config: &tokio_postgres::Config,
    tls: MakeRustlsConnect,
    channel: &str,
    replica: &str,
    feed: &mpsc::UnboundedSender<Change>,
    listening: &mut Option<oneshot::Sender<()>>,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(tls).await?;
    let (notes, mut received) = mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(note))) => {
                    if notes.send(note).is_err() {
                        return Ok(());
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => return Err(error),
                None => return Ok(()),
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN \"{channel}\""))
        .await?;
    if let Some(ready) = listening.take() {
        let _ = ready.send(());
    }
    let _ = feed.send(Change::Resync);
    tracing::info!(channel, "listening for other replicas' commits");
    while let Some(note) = received.recv().await {
        let hint: Hint = match serde_json::from_str(note.payload()) {
            Ok(hint) => hint,
            Err(error) => {
                tracing::warn!(%error, "unreadable notification; resyncing");
                let _ = feed.send(Change::Resync);
                continue;
            }
        };
        if hint.replica == replica {
            continue;
        }
        for change in hint.into_changes() {
            if feed.send(change).is_err() {
                return Ok(());
            }
        }
    }
    drop(client);
    match driver.await {
        Ok(result) => result,
        Err(_) => Ok(()),
    }
}
