"""Helpers shared by the tests: events to publish, a recorder of what
`follow` yields, and bounded waits."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterator
from typing import Optional, TypeVar

from recapd.v1 import recap_pb2 as pb

from conftest import EVENT_TIMEOUT

T = TypeVar("T")


def chat_changed(chat_id: str) -> pb.PublishRequest:
    """A chat_changed event opening `chat_id` with a two-message transcript
    (an immediate refresh: the answer carries its revision)."""
    return pb.PublishRequest(
        event=pb.Event(
            chat_id=chat_id,
            chat_changed=pb.ChatChanged(
                messages=[
                    pb.Message(id="m1", name="Alice", text="Hi!", is_user=True),
                    pb.Message(id="m2", name="Bob", text="Hello, Alice."),
                ]
            ),
        )
    )


def refresh_requested(chat_id: str) -> pb.PublishRequest:
    """A refresh_requested event: one immediate refresh, the next revision."""
    return pb.PublishRequest(
        event=pb.Event(chat_id=chat_id, refresh_requested=pb.RefreshRequested())
    )


def run_with_timeout(function: Callable[[], T], timeout: float, what: str) -> T:
    """Run `function` in a worker thread; AssertionError if it takes longer
    than `timeout` seconds (the thread is left behind, daemonic)."""
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = executor.submit(function)
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        raise AssertionError(f"{what} did not finish within {timeout} s") from None
    finally:
        executor.shutdown(wait=False)


Record = tuple[str, int, bool]  # (chat_id, revision, deleted)


class FollowRecorder:
    """Iterates a `follow` generator in a thread and records each injection
    as (chat_id, revision, deleted), so the test can wait for updates."""

    def __init__(self, injections: Iterator[pb.Injection]) -> None:
        self.records: list[Record] = []
        self.error: Optional[BaseException] = None
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._consume, args=(injections,), daemon=True)
        self._thread.start()

    def _consume(self, injections: Iterator[pb.Injection]) -> None:
        try:
            for injection in injections:
                with self._changed:
                    self.records.append((injection.chat_id, injection.revision, injection.deleted))
                    self._changed.notify_all()
        except BaseException as error:  # recorded for the test to assert on
            with self._changed:
                self.error = error
                self._changed.notify_all()

    def wait_for(self, wanted: Callable[[list[Record]], bool], what: str, timeout: float = EVENT_TIMEOUT) -> None:
        """Block until `wanted(records)` holds; AssertionError after `timeout`
        or when follow raised."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not wanted(self.records):
                if self.error is not None:
                    raise AssertionError(f"follow raised while waiting for {what}: {self.error!r}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"follow did not yield {what} within {timeout} s; got {self.records}")
                self._changed.wait(remaining)

    def wait_for_revision(self, chat_id: str, revision: int, deleted: bool = False) -> None:
        """Block until follow yielded `revision` of `chat_id`."""
        self.wait_for(lambda records: (chat_id, revision, deleted) in records, f"{chat_id} revision {revision}")

    def join(self, timeout: float = EVENT_TIMEOUT) -> None:
        """Wait for the follow thread to end; AssertionError if it does not."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise AssertionError(f"follow did not end within {timeout} s")

    def revisions(self, chat_id: str) -> list[int]:
        """The revisions yielded for `chat_id`, in order."""
        return [revision for chat, revision, _ in self.records if chat == chat_id]


def assert_each_chat_strictly_increasing(records: list[Record]) -> None:
    """No chat's revision yielded twice or after a higher one."""
    last: dict[str, int] = {}
    for chat_id, revision, _ in records:
        assert revision > last.get(chat_id, 0), f"{chat_id} revision {revision} after {last.get(chat_id)}: {records}"
        last[chat_id] = revision
