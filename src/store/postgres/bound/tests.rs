use super::*;

#[tokio::test(start_paused = true)]
async fn work_that_keeps_making_progress_outlives_the_bound() {
    let progress = AtomicU64::new(0);
    let work = async {
        // Three bounds long, a step every half bound.
        for _ in 0..6 {
            tokio::time::sleep(OPERATION_TIMEOUT / 2).await;
            progress.fetch_add(1, Ordering::Relaxed);
        }
        Ok(7)
    };
    assert_eq!(bounded_while_progressing(&progress, work).await.unwrap(), 7);
}

#[tokio::test(start_paused = true)]
async fn work_that_stalls_fails_after_a_bound_without_progress() {
    let progress = AtomicU64::new(0);
    let started = tokio::time::Instant::now();
    let work = async {
        tokio::time::sleep(OPERATION_TIMEOUT / 2).await;
        progress.fetch_add(1, Ordering::Relaxed);
        std::future::pending::<Result<(), StoreError>>().await
    };
    let error = bounded_while_progressing(&progress, work)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("sent nothing"), "{error}");
    assert!(started.elapsed() <= OPERATION_TIMEOUT * 2);
    let plain = bounded(std::future::pending::<Result<(), StoreError>>()).await;
    assert!(plain.is_err());
}
