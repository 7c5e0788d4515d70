//! Where World Info activations run: off the async workers, on at most
//! [`ScanPool::threads`] blocking threads at once, at most
//! [`ScanPool::per_tenant`] of one tenant at once; the others wait in
//! arrival order (tokio's semaphores are fair). A scan takes its tenant's
//! permit first, then a thread's, so a scan waiting for its tenant's turn
//! holds no thread another tenant could use; both are taken before the
//! chat is locked, so a waiting scan never holds the chat.
//!
//! A call that goes away (its client reset the stream, or its deadline
//! passed: tonic drops the call's future) raises its [`CancelOnDrop`]
//! flag, which the running activation reads between key tests.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::domain::ids::Tenant;
use crate::engine::ScanPool;

/// The scan threads and each tenant's share of them.
pub(crate) struct ScanGate {
    /// One permit per scan thread.
    threads: Arc<Semaphore>,
    /// Permits per tenant.
    per_tenant: usize,
    /// Each tenant's permits, while one of its scans holds or waits for
    /// one (an idle tenant's entry is dropped at the next scan of any
    /// tenant, so the map stays as small as the tenants scanning).
    tenants: Mutex<HashMap<Tenant, Arc<Semaphore>>>,
}

/// What one scan holds while it runs: its tenant's permit and a thread's.
/// Shared by the call and its thread, so both are given back only when
/// both are done (a cancelled call's thread still counts until it stops).
pub(crate) struct ScanPermits {
    _tenant: OwnedSemaphorePermit,
    _thread: OwnedSemaphorePermit,
}

impl ScanGate {
    /// A gate with `pool`'s threads and per-tenant share (each at least 1).
    pub(crate) fn new(pool: &ScanPool) -> ScanGate {
        ScanGate {
            threads: Arc::new(Semaphore::new(pool.threads.max(1))),
            per_tenant: pool.per_tenant.max(1),
            tenants: Mutex::new(HashMap::new()),
        }
    }

    /// Waits for `tenant`'s turn, then for a thread.
    pub(crate) async fn enter(&self, tenant: &Tenant) -> ScanPermits {
        let share = {
            let mut tenants = self
                .tenants
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // Only the map holds an idle tenant's semaphore: every holder
            // and waiter of a permit holds a clone of it.
            tenants.retain(|_, share| Arc::strong_count(share) > 1);
            tenants
                .entry(tenant.clone())
                .or_insert_with(|| Arc::new(Semaphore::new(self.per_tenant)))
                .clone()
        };
        let tenant = share
            .acquire_owned()
            .await
            .expect("a tenant's scan semaphore is never closed");
        let thread = self
            .threads
            .clone()
            .acquire_owned()
            .await
            .expect("the scan threads' semaphore is never closed");
        ScanPermits {
            _tenant: tenant,
            _thread: thread,
        }
    }
}

/// Raises its flag when dropped: held by a scan's call, so the flag says
/// "nobody waits for this scan any more" once the call's future is gone.
pub(crate) struct CancelOnDrop(Arc<AtomicBool>);

impl CancelOnDrop {
    /// A guard with its flag down.
    pub(crate) fn new() -> CancelOnDrop {
        CancelOnDrop(Arc::new(AtomicBool::new(false)))
    }

    /// The flag, for the scan's thread.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
