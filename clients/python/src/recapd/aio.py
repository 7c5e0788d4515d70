"""The asyncio client: `recapd.aio.connect` and `AsyncClient`, on grpc.aio.

Same as the blocking client, but every RPC is awaited and `follow` is an
async generator::

    async with recapd.aio.connect("127.0.0.1:50051") as client:
        injection = await client.injections.GetInjection(
            pb.GetInjectionRequest(chat_id="alice-1"))
        async for injection in client.follow(["alice-1"]):
            ...

Create the client inside a running event loop (in a coroutine) and use it
from that loop only, as grpc.aio requires.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Callable, Optional, Tuple, Union

import grpc
import grpc.aio

from recapd import _common
from recapd._common import RETRYABLE_CODES, FollowRetriesExhausted, TlsCa
from recapd.v1 import recap_pb2, recap_pb2_grpc

__all__ = ["AsyncClient", "connect"]


class _TokenDetails:
    """Builds call details carrying the bearer token (shared by the four
    interceptor kinds below)."""

    def __init__(self, token: str) -> None:
        self._header_value = f"Bearer {token}"

    def with_token(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        """`details` with ``authorization: Bearer <token>`` added to its metadata."""
        metadata = grpc.aio.Metadata(
            *_common.metadata_with_token(
                list(details.metadata) if details.metadata is not None else None,
                self._header_value,
            )
        )
        return grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )


class _UnaryUnaryToken(grpc.aio.UnaryUnaryClientInterceptor):
    """Attaches the token to unary calls."""

    def __init__(self, details: _TokenDetails) -> None:
        self._details = details

    async def intercept_unary_unary(self, continuation: Callable[..., Any], client_call_details: grpc.aio.ClientCallDetails, request: Any) -> Any:
        """Forward the call with the token attached."""
        return await continuation(self._details.with_token(client_call_details), request)


class _UnaryStreamToken(grpc.aio.UnaryStreamClientInterceptor):
    """Attaches the token to server-streaming calls."""

    def __init__(self, details: _TokenDetails) -> None:
        self._details = details

    async def intercept_unary_stream(self, continuation: Callable[..., Any], client_call_details: grpc.aio.ClientCallDetails, request: Any) -> Any:
        """Forward the call with the token attached."""
        return await continuation(self._details.with_token(client_call_details), request)


class _StreamUnaryToken(grpc.aio.StreamUnaryClientInterceptor):
    """Attaches the token to client-streaming calls."""

    def __init__(self, details: _TokenDetails) -> None:
        self._details = details

    async def intercept_stream_unary(self, continuation: Callable[..., Any], client_call_details: grpc.aio.ClientCallDetails, request_iterator: Any) -> Any:
        """Forward the call with the token attached."""
        return await continuation(self._details.with_token(client_call_details), request_iterator)


class _StreamStreamToken(grpc.aio.StreamStreamClientInterceptor):
    """Attaches the token to bidirectional calls."""

    def __init__(self, details: _TokenDetails) -> None:
        self._details = details

    async def intercept_stream_stream(self, continuation: Callable[..., Any], client_call_details: grpc.aio.ClientCallDetails, request_iterator: Any) -> Any:
        """Forward the call with the token attached."""
        return await continuation(self._details.with_token(client_call_details), request_iterator)


def bearer_token_interceptors(token: str) -> list[grpc.aio.ClientInterceptor]:
    """One interceptor per call kind, each adding ``authorization: Bearer
    <token>`` (grpc.aio files an interceptor under its first matching kind
    only, so one object implementing all four would miss streams)."""
    details = _TokenDetails(token)
    return [
        _UnaryUnaryToken(details),
        _UnaryStreamToken(details),
        _StreamUnaryToken(details),
        _StreamStreamToken(details),
    ]


class AsyncClient:
    """A grpc.aio connection to recapd: one channel and a stub per service.

    The attributes are the same generated stubs as `recapd.Client`'s, bound
    to an aio channel, so every RPC returns an awaitable (server streams an
    async iterable). Errors are `grpc.aio.AioRpcError` (a `grpc.RpcError`).

    Attributes:
        events, memory, settings, injections, prompts, recaps, lorebooks,
        recall: the stubs of EventService, MemoryService, SettingsService,
        InjectionService, PromptService, RecapService, LorebookService and
        RecallService.

    Use as an async context manager, or await `close` when done.
    """

    events: recap_pb2_grpc.EventServiceStub
    memory: recap_pb2_grpc.MemoryServiceStub
    settings: recap_pb2_grpc.SettingsServiceStub
    injections: recap_pb2_grpc.InjectionServiceStub
    prompts: recap_pb2_grpc.PromptServiceStub
    recaps: recap_pb2_grpc.RecapServiceStub
    lorebooks: recap_pb2_grpc.LorebookServiceStub
    recall: recap_pb2_grpc.RecallServiceStub

    def __init__(self, channel: grpc.aio.Channel) -> None:
        """Wrap an existing aio channel (`connect` builds one for you). The
        client owns it from now on: `close` closes it."""
        self._channel = channel
        self._closed = asyncio.Event()
        self.events = recap_pb2_grpc.EventServiceStub(channel)
        self.memory = recap_pb2_grpc.MemoryServiceStub(channel)
        self.settings = recap_pb2_grpc.SettingsServiceStub(channel)
        self.injections = recap_pb2_grpc.InjectionServiceStub(channel)
        self.prompts = recap_pb2_grpc.PromptServiceStub(channel)
        self.recaps = recap_pb2_grpc.RecapServiceStub(channel)
        self.lorebooks = recap_pb2_grpc.LorebookServiceStub(channel)
        self.recall = recap_pb2_grpc.RecallServiceStub(channel)

    @property
    def channel(self) -> grpc.aio.Channel:
        """The underlying grpc.aio channel."""
        return self._channel

    async def close(self) -> None:
        """Close the channel: open calls are cancelled, running `follow`
        generators end (without an error), later calls fail. Idempotent."""
        self._closed.set()
        await self._channel.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _sleep_unless_closed(self, delay: float) -> bool:
        """Wait `delay` seconds; True if the client was closed meanwhile."""
        try:
            await asyncio.wait_for(self._closed.wait(), timeout=delay)
        except asyncio.TimeoutError:
            return False
        return True

    async def follow(
        self,
        chat_ids: Union[str, Iterable[str]],
        *,
        initial_backoff: float = 0.1,
        max_backoff: float = 5.0,
        backoff_multiplier: float = 2.0,
        jitter: float = 0.2,
        max_retries: Optional[int] = None,
        retry_codes: Iterable[grpc.StatusCode] = RETRYABLE_CODES,
        last_revisions: Optional[Mapping[Union[str, Tuple[str, str]], int]] = None,
    ) -> AsyncIterator[recap_pb2.Injection]:
        """Async-iterate the injections of `chat_ids` as they change, across
        disconnects and server restarts.

        Exactly `recapd.Client.follow` (same arguments, defaults, retried
        codes, revision guarantees and errors), as an async generator::

            async for injection in client.follow(["alice-1"]):
                print(injection.revision, injection.text)

        Breaking out of the loop, ``aclose()``, cancelling the task or
        closing the client cancels the subscription.
        """
        ids = _common.normalize_chat_ids(chat_ids)
        settings = _common.FollowSettings.build(
            initial_backoff, max_backoff, backoff_multiplier, jitter, max_retries, retry_codes
        )
        revisions = _common.RevisionFilter(last_revisions)
        request = recap_pb2.SubscribeRequest(chat_ids=ids)
        failures = 0
        while not self._closed.is_set():
            started = time.monotonic()
            delivered = False
            last_error: Optional[grpc.RpcError] = None
            call = self.injections.Subscribe(request)
            try:
                async for injection in call:
                    delivered = True
                    if revisions.admit(injection):
                        yield injection
            except grpc.RpcError as error:
                if self._closed.is_set():
                    return
                if error.code() not in settings.retry_codes:  # type: ignore[attr-defined]
                    raise
                last_error = error
            except asyncio.CancelledError:
                # A closed channel cancels its calls; that ends follow
                # quietly. A cancelled task propagates.
                if self._closed.is_set():
                    return
                raise
            finally:
                call.cancel()
            if self._closed.is_set():
                return
            if delivered or time.monotonic() - started >= settings.backoff.maximum:
                settings.backoff.reset()
                failures = 0
            failures += 1
            if settings.max_retries is not None and failures > settings.max_retries:
                raise FollowRetriesExhausted(failures, last_error) from last_error
            delay = settings.backoff.next_delay()
            _common.log_retry(len(ids), last_error, delay, failures)
            if await self._sleep_unless_closed(delay):
                return


def connect(
    target: str,
    token: Optional[str] = None,
    tls_ca: Optional[TlsCa] = None,
    *,
    tls: bool = False,
    tls_server_name: Optional[str] = None,
    options: Optional[Sequence[tuple[str, Any]]] = None,
) -> AsyncClient:
    """Open a grpc.aio client to the recapd at `target`.

    The arguments are those of `recapd.connect`. Call it inside a running
    event loop; the result is an async context manager::

        async with recapd.aio.connect("127.0.0.1:50051", token=TOKEN) as client:
            ...
    """
    _common.check_connect_arguments(token, tls_ca, tls, tls_server_name)
    credentials = _common.channel_credentials(tls_ca, tls)
    channel_options = _common.channel_options(tls_server_name, options)
    interceptors = bearer_token_interceptors(token) if token is not None else None
    if credentials is None:
        channel = grpc.aio.insecure_channel(target, options=channel_options, interceptors=interceptors)
    else:
        channel = grpc.aio.secure_channel(
            target, credentials, options=channel_options, interceptors=interceptors
        )
    return AsyncClient(channel)
