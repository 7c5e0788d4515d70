//! A chat's first recall index build off the async workers, and how many
//! such builds run and wait at once (see [`off_the_workers`]).

use std::sync::{Condvar, Mutex, PoisonError};

/// The messages from which a chat's first index build leaves the async
/// workers (see [`off_the_workers`]): below, the build is too short to
/// be worth the hand-over (2,000 messages take about 25 ms).
pub(super) const OFF_WORKER_MESSAGES: usize = 500;

/// How many index builds [`off_the_workers`] runs at once, and how many
/// wait for their turn.
static BUILDS: Builds = Builds {
    counts: Mutex::new(BuildCounts {
        running: 0,
        waiting: 0,
    }),
    freed: Condvar::new(),
};

/// How many builds may wait for their turn off the workers, per worker:
/// each holds a thread while it waits (the runtime gives its worker's
/// tasks to another), so past this a build runs on its worker as before
/// rather than add a thread.
const WAITING_PER_WORKER: usize = 4;

/// Runs `build` (a chat's first index build: every message cut, tokenized
/// and stemmed) so that it does not hold an async worker: on a
/// multi-thread runtime the worker hands its other tasks to another
/// thread meanwhile ([`tokio::task::block_in_place`]); elsewhere (a
/// current-thread runtime, no runtime) it runs as it is. Otherwise a build
/// stalls every task queued behind it on its worker: after recall is
/// turned on for many chats, the index jobs of the chats already built
/// could send no request until every chat's build was done. At most as
/// many builds as the runtime has workers run at once (the others wait
/// their turn, off the workers too, at most [`WAITING_PER_WORKER`] a
/// worker; past that a build runs on its worker): the CPU the builds take
/// stays what `--workers` gives, the threads they hold stay bounded, and
/// the first chats' builds end first, so that their index jobs start
/// while the others build.
pub(super) fn off_the_workers<T>(build: impl FnOnce() -> T) -> T {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return build();
    };
    if runtime.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return build();
    }
    let most = runtime.metrics().num_workers().max(1);
    if !BUILDS.queue(most.saturating_mul(WAITING_PER_WORKER)) {
        return build();
    }
    tokio::task::block_in_place(|| {
        let _turn = BUILDS.take(most);
        build()
    })
}

/// The index builds running and waiting for their turn, and a signal when
/// one ends.
struct Builds {
    counts: Mutex<BuildCounts>,
    freed: Condvar,
}

/// [`Builds`]' counts.
struct BuildCounts {
    running: usize,
    waiting: usize,
}

impl Builds {
    fn counts(&self) -> std::sync::MutexGuard<'_, BuildCounts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one more build waiting for its turn, unless `most` wait
    /// already (false: the caller builds where it is). A build counted
    /// here must then [`Builds::take`] its turn.
    fn queue(&self, most: usize) -> bool {
        let mut counts = self.counts();
        let room = counts.waiting < most;
        counts.waiting += usize::from(room);
        room
    }

    /// Waits (blocking the thread) until fewer than `most` builds run, and
    /// counts one more (and one fewer waiting) until the turn returned is
    /// dropped.
    fn take(&'static self, most: usize) -> BuildTurn {
        let mut counts = self.counts();
        while counts.running >= most {
            counts = self
                .freed
                .wait(counts)
                .unwrap_or_else(PoisonError::into_inner);
        }
        counts.running += 1;
        counts.waiting = counts.waiting.saturating_sub(1);
        BuildTurn(self)
    }
}

/// One running build's place in [`Builds`], given back when dropped (a
/// build that panics gives it back too).
struct BuildTurn(&'static Builds);

impl Drop for BuildTurn {
    fn drop(&mut self) {
        let mut counts = self.0.counts();
        counts.running = counts.running.saturating_sub(1);
        drop(counts);
        // Every waiter: runtimes of different sizes may share the count,
        // and the one woken must be one that may run now.
        self.0.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_past_the_waiting_cap_stay_where_they_are_and_turns_come_back() {
        let builds: &'static Builds = Box::leak(Box::new(Builds {
            counts: Mutex::new(BuildCounts {
                running: 0,
                waiting: 0,
            }),
            freed: Condvar::new(),
        }));
        assert!(builds.queue(2) && builds.queue(2));
        assert!(!builds.queue(2), "a third waiter past a cap of two");
        let turn = builds.take(1);
        assert!(builds.queue(2), "a waiter that took its turn makes room");
        drop(turn);
        let counts = builds.counts();
        assert_eq!((counts.running, counts.waiting), (0, 2));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_build_off_the_workers_lets_the_worker_run_the_other_tasks() {
        let built = tokio::spawn(async {
            let (ran, heard) = std::sync::mpsc::channel();
            // Queued on the runtime's one worker, which runs this task: it
            // runs during the build only if the build left the worker.
            tokio::spawn(async move { ran.send(()) });
            off_the_workers(|| heard.recv_timeout(std::time::Duration::from_secs(10)))
        });
        let heard = built.await.expect("the task ends");
        assert!(heard.is_ok(), "the other task did not run during the build");
    }
}
