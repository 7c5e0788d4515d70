"""What the blocking and the asyncio clients share: channel settings, TLS,
the bearer token, the back-off of `follow` and its revision bookkeeping."""

from __future__ import annotations

import dataclasses
import logging
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Optional, Tuple, Union

import grpc

from recapd.v1 import recap_pb2

logger = logging.getLogger("recapd")

#: What `tls_ca` accepts: a path to a PEM file, or the PEM itself (bytes, or a
#: str that starts with ``-----BEGIN``).
TlsCa = Union[str, bytes, "os.PathLike[str]"]

#: Channel options set by `connect` (each can be overridden through its
#: ``options`` argument):
#:
#: - reconnect back-off of the channel itself from 100 ms up to 5 s (gRPC's
#:   default grows to 120 s, which would keep `follow` failing fast long
#:   after a restarted server is back);
#: - HTTP/2 keepalive pings every 30 s while a call is open, the connection
#:   dropped when one is not answered within 10 s, with no cap on pings
#:   between data frames: a `follow` stream over a connection that died
#:   silently (a network partition, a NAT timeout) fails within ~40 s and
#:   is resubscribed instead of waiting forever.
DEFAULT_CHANNEL_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 5000),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 0),
)

#: Status codes after which `follow` subscribes again (with back-off) instead
#: of raising. A stream that ends with OK (the server shutting down) is
#: resubscribed too.
#:
#: - ``UNAVAILABLE``: the server died, is restarting, or is unreachable; or
#:   loading a named chat failed in its store. Nothing was lost: the next
#:   subscription starts with each chat's current injection.
#: - ``RESOURCE_EXHAUSTED``: the server's ``--max-subscribers`` or
#:   ``--max-subscribers-per-connection`` streams are open. Slots free up
#:   as other streams close (after a restart, clients resubscribing at once
#:   can briefly exceed the limit), so it is retried, but logged at WARNING
#:   on every attempt: a client that opens too many streams sees it. Pass
#:   ``retry_codes`` without it, or ``max_retries``, to raise instead.
#:
#: Everything else raises at once: ``INVALID_ARGUMENT`` (a bad chat id, more
#: than 1000 ids), ``UNAUTHENTICATED`` (no or unknown token),
#: ``PERMISSION_DENIED``, ``NOT_FOUND``, ``INTERNAL`` (stored data could not
#: be read: retrying would meet it again), ``UNIMPLEMENTED`` (not a recapd
#: server), ``CANCELLED``, and so on.
RETRYABLE_CODES: frozenset[grpc.StatusCode] = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED}
)

AUTHORIZATION_HEADER = "authorization"


class FollowRetriesExhausted(Exception):
    """`follow` gave up: ``max_retries`` resubscriptions in a row (after a
    first failed subscription) failed with a retryable code or ended
    without delivering anything; ``attempts`` counts them all.

    ``last_error`` is the last subscription's `grpc.RpcError`, or None when it
    ended cleanly (status OK); it is also the exception's ``__cause__``.
    """

    def __init__(self, attempts: int, last_error: Optional[grpc.RpcError]) -> None:
        self.attempts = attempts
        self.last_error = last_error
        if last_error is None:
            what = "the stream ended (status OK)"
        else:
            what = f"{last_error.code().name}: {last_error.details()}"  # type: ignore[attr-defined]
        super().__init__(f"follow gave up after {attempts} failed subscriptions; last: {what}")


def read_tls_ca(tls_ca: TlsCa) -> bytes:
    """The PEM bytes `tls_ca` names: bytes as they are, a str beginning with
    ``-----BEGIN`` as PEM text, anything else as the path of a PEM file."""
    if isinstance(tls_ca, bytes):
        return tls_ca
    if isinstance(tls_ca, str) and tls_ca.lstrip().startswith("-----BEGIN"):
        return tls_ca.encode("ascii")
    with open(tls_ca, "rb") as pem_file:
        return pem_file.read()


def channel_credentials(tls_ca: Optional[TlsCa], tls: bool) -> Optional[grpc.ChannelCredentials]:
    """TLS credentials trusting `tls_ca` (or the system roots when only `tls`
    is set); None for a plaintext channel."""
    if tls_ca is not None:
        return grpc.ssl_channel_credentials(root_certificates=read_tls_ca(tls_ca))
    if tls:
        return grpc.ssl_channel_credentials()
    return None


def channel_options(
    tls_server_name: Optional[str], options: Optional[Sequence[tuple[str, Any]]]
) -> list[tuple[str, Any]]:
    """DEFAULT_CHANNEL_OPTIONS, then the TLS name override, then the caller's
    `options` (a later entry with the same key wins)."""
    merged: dict[str, Any] = dict(DEFAULT_CHANNEL_OPTIONS)
    if tls_server_name is not None:
        merged["grpc.ssl_target_name_override"] = tls_server_name
    for key, value in options or ():
        merged[key] = value
    return list(merged.items())


def check_connect_arguments(
    token: Optional[str], tls_ca: Optional[TlsCa], tls: bool, tls_server_name: Optional[str]
) -> None:
    """Refuse argument combinations `connect` cannot honour (ValueError)."""
    if token is not None and (not token or any(c in token for c in "\r\n")):
        raise ValueError("token must be a non-empty string without line breaks")
    if tls_server_name is not None and tls_ca is None and not tls:
        raise ValueError("tls_server_name needs TLS: give tls_ca or tls=True")


def metadata_with_token(
    metadata: Optional[Iterable[tuple[str, Union[str, bytes]]]], header_value: str
) -> list[tuple[str, Union[str, bytes]]]:
    """`metadata` plus ``authorization: <header_value>``, unless the call
    already carries its own ``authorization`` (a per-call override)."""
    entries = list(metadata or ())
    if any(key.lower() == AUTHORIZATION_HEADER for key, _ in entries):
        return entries
    entries.append((AUTHORIZATION_HEADER, header_value))
    return entries


def normalize_chat_ids(chat_ids: Union[str, Iterable[str]]) -> list[str]:
    """`chat_ids` as a list; a single str is one chat id (not its letters)."""
    if isinstance(chat_ids, str):
        return [chat_ids]
    return list(chat_ids)


@dataclasses.dataclass
class Backoff:
    """Exponential back-off with jitter between resubscriptions.

    The n-th consecutive delay is ``min(initial * multiplier**(n-1), maximum)``,
    then multiplied by a random factor in ``[1 - jitter, 1 + jitter]`` (and
    capped at ``maximum`` again), so that clients that lost the same server
    do not all come back in the same instant.
    """

    initial: float = 0.1
    maximum: float = 5.0
    multiplier: float = 2.0
    jitter: float = 0.2
    _current: float = dataclasses.field(default=0.0, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.initial <= 0 or self.maximum < self.initial:
            raise ValueError("back-off needs 0 < initial_backoff <= max_backoff")
        if self.multiplier < 1:
            raise ValueError("backoff_multiplier must be >= 1")
        if not 0 <= self.jitter < 1:
            raise ValueError("jitter must be in [0, 1)")

    def reset(self) -> None:
        """Start again from `initial` (after a healthy subscription)."""
        self._current = 0.0

    def next_delay(self) -> float:
        """The delay before the next attempt, in seconds; grows each call."""
        if self._current == 0.0:
            self._current = self.initial
        else:
            self._current = min(self._current * self.multiplier, self.maximum)
        spread = random.uniform(1 - self.jitter, 1 + self.jitter)
        return min(self._current * spread, self.maximum)


#: The key of the running-recap injection, the one every chat has; a
#: chat id alone in `last_revisions` stands for it.
SCENE_KEY = "auto_recap_scene"


class RevisionFilter:
    """Remembers the highest revision yielded per chat and injection key
    and admits only newer ones, so `follow` never yields a revision twice
    nor goes back, across resubscriptions (whose first messages repeat
    each chat's current injections). Each key (``auto_recap_scene``, and
    the message and recall tiers when on) counts its own revisions."""

    def __init__(
        self, last_revisions: Optional[Mapping[Union[str, Tuple[str, str]], int]] = None
    ) -> None:
        self._last: dict[Tuple[str, str], int] = {
            (seen if isinstance(seen, tuple) else (seen, SCENE_KEY)): revision
            for seen, revision in (last_revisions or {}).items()
        }

    def admit(self, injection: recap_pb2.Injection) -> bool:
        """True, and remember it, when `injection` is newer than every
        revision of its chat and key seen so far."""
        seen = (injection.chat_id, injection.key or SCENE_KEY)
        if injection.revision <= self._last.get(seen, 0):
            return False
        self._last[seen] = injection.revision
        return True

    @property
    def last_revisions(self) -> dict[Tuple[str, str], int]:
        """A copy of the highest revision yielded per (chat id, key)."""
        return dict(self._last)


@dataclasses.dataclass
class FollowSettings:
    """The knobs of `follow`, checked once; see `Client.follow`."""

    backoff: Backoff
    max_retries: Optional[int]
    retry_codes: frozenset[grpc.StatusCode]

    @classmethod
    def build(
        cls,
        initial_backoff: float,
        max_backoff: float,
        backoff_multiplier: float,
        jitter: float,
        max_retries: Optional[int],
        retry_codes: Iterable[grpc.StatusCode],
    ) -> "FollowSettings":
        """Validate the arguments of `follow` (ValueError) and bundle them."""
        if max_retries is not None and max_retries < 0:
            raise ValueError("max_retries must be None or >= 0")
        return cls(
            backoff=Backoff(initial_backoff, max_backoff, backoff_multiplier, jitter),
            max_retries=max_retries,
            retry_codes=frozenset(retry_codes),
        )


def log_retry(chat_count: int, error: Optional[grpc.RpcError], delay: float, attempt: int) -> None:
    """Log one resubscription of `follow`: WARNING for RESOURCE_EXHAUSTED
    (a limit someone should look at), INFO otherwise."""
    if error is None:
        reason = "the stream ended (server shutting down?)"
        level = logging.INFO
    else:
        code = error.code()  # type: ignore[attr-defined]
        reason = f"{code.name}: {error.details()}"  # type: ignore[attr-defined]
        level = logging.WARNING if code == grpc.StatusCode.RESOURCE_EXHAUSTED else logging.INFO
    logger.log(
        level,
        "follow (%d chat ids): %s; subscribing again in %.2f s (attempt %d)",
        chat_count,
        reason,
        delay,
        attempt,
    )
