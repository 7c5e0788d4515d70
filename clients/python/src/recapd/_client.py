"""The blocking client: `connect` and `Client`."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Callable, Optional, Tuple, Union

import grpc

from recapd import _common
from recapd._common import RETRYABLE_CODES, FollowRetriesExhausted, TlsCa
from recapd.v1 import recap_pb2, recap_pb2_grpc


class _CallDetails(
    collections.namedtuple(
        "_CallDetails",
        ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression"),
    ),
    grpc.ClientCallDetails,
):
    """A grpc.ClientCallDetails that can be built (the grpc class is abstract)."""


class BearerTokenInterceptor(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """Adds ``authorization: Bearer <token>`` to every call of a channel.

    An interceptor rather than call credentials: gRPC sends call credentials
    only over TLS (or `grpc.local_channel_credentials`, which only reaches
    local addresses), and recapd is often run in plaintext on a private
    network. A call that passes its own ``authorization`` metadata keeps it.

    For channels of your own (``grpc.intercept_channel(channel,
    BearerTokenInterceptor(token))``); `connect` does not use it: grpcio
    (1.85) crashes the process when a call goes through an intercepted
    channel after that channel was closed, so never call such a channel
    after closing it.
    """

    def __init__(self, token: str) -> None:
        self._header_value = f"Bearer {token}"

    def _with_token(self, details: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        return _CallDetails(
            details.method,
            details.timeout,
            _common.metadata_with_token(details.metadata, self._header_value),
            details.credentials,
            getattr(details, "wait_for_ready", None),
            getattr(details, "compression", None),
        )

    def intercept_unary_unary(self, continuation: Callable[..., Any], client_call_details: grpc.ClientCallDetails, request: Any) -> Any:
        """Forward a unary call with the token attached."""
        return continuation(self._with_token(client_call_details), request)

    def intercept_unary_stream(self, continuation: Callable[..., Any], client_call_details: grpc.ClientCallDetails, request: Any) -> Any:
        """Forward a server-streaming call with the token attached."""
        return continuation(self._with_token(client_call_details), request)

    def intercept_stream_unary(self, continuation: Callable[..., Any], client_call_details: grpc.ClientCallDetails, request_iterator: Any) -> Any:
        """Forward a client-streaming call with the token attached."""
        return continuation(self._with_token(client_call_details), request_iterator)

    def intercept_stream_stream(self, continuation: Callable[..., Any], client_call_details: grpc.ClientCallDetails, request_iterator: Any) -> Any:
        """Forward a bidirectional call with the token attached."""
        return continuation(self._with_token(client_call_details), request_iterator)


class _TokenCall:
    """A multi-callable of the real channel that adds ``authorization:
    Bearer <token>`` to each call's metadata (unless the call has its own).
    Shared by the four call kinds below."""

    def __init__(self, inner: Any, header_value: str) -> None:
        self._inner = inner
        self._header_value = header_value

    def _invoke(
        self,
        function: Callable[..., Any],
        request: Any,
        timeout: Optional[float],
        metadata: Any,
        credentials: Optional[grpc.CallCredentials],
        wait_for_ready: Optional[bool],
        compression: Optional[grpc.Compression],
    ) -> Any:
        return function(
            request,
            timeout=timeout,
            metadata=_common.metadata_with_token(metadata, self._header_value),
            credentials=credentials,
            wait_for_ready=wait_for_ready,
            compression=compression,
        )

    def __call__(self, request: Any, timeout: Optional[float] = None, metadata: Any = None, credentials: Optional[grpc.CallCredentials] = None, wait_for_ready: Optional[bool] = None, compression: Optional[grpc.Compression] = None) -> Any:
        """Make the call, with the token."""
        return self._invoke(self._inner, request, timeout, metadata, credentials, wait_for_ready, compression)


class _TokenResponseCall(_TokenCall):
    """`_TokenCall` for the kinds with one response (``with_call``, ``future``)."""

    def with_call(self, request: Any, timeout: Optional[float] = None, metadata: Any = None, credentials: Optional[grpc.CallCredentials] = None, wait_for_ready: Optional[bool] = None, compression: Optional[grpc.Compression] = None) -> Any:
        """Make the call, with the token; the response and the call."""
        return self._invoke(self._inner.with_call, request, timeout, metadata, credentials, wait_for_ready, compression)

    def future(self, request: Any, timeout: Optional[float] = None, metadata: Any = None, credentials: Optional[grpc.CallCredentials] = None, wait_for_ready: Optional[bool] = None, compression: Optional[grpc.Compression] = None) -> Any:
        """Start the call, with the token; a future of the response."""
        return self._invoke(self._inner.future, request, timeout, metadata, credentials, wait_for_ready, compression)


class _TokenUnaryUnary(_TokenResponseCall, grpc.UnaryUnaryMultiCallable):
    """A unary call with the token."""


class _TokenUnaryStream(_TokenCall, grpc.UnaryStreamMultiCallable):
    """A server-streaming call with the token."""


class _TokenStreamUnary(_TokenResponseCall, grpc.StreamUnaryMultiCallable):
    """A client-streaming call with the token."""


class _TokenStreamStream(_TokenCall, grpc.StreamStreamMultiCallable):
    """A bidirectional call with the token."""


class _TokenChannel(grpc.Channel):
    """A channel whose calls all carry ``authorization: Bearer <token>``.

    What `connect` uses instead of ``grpc.intercept_channel`` with
    `BearerTokenInterceptor`: an intercepted channel looks each method up
    on the real channel again at every call, and grpcio (1.85) crashes the
    process (a segmentation fault in ``get_registered_call_handle``) when
    that happens after `close`, so a call made after (or while) the client
    closes would kill the program. Here each method is looked up once, when
    the stubs are made, and a call after `close` raises ValueError as on a
    plain channel.
    """

    def __init__(self, channel: grpc.Channel, token: str) -> None:
        self._channel = channel
        self._header_value = f"Bearer {token}"

    def subscribe(self, callback: Callable[[grpc.ChannelConnectivity], None], try_to_connect: bool = False) -> None:
        """Watch the real channel's connectivity."""
        self._channel.subscribe(callback, try_to_connect=try_to_connect)

    def unsubscribe(self, callback: Callable[[grpc.ChannelConnectivity], None]) -> None:
        """Stop watching the real channel's connectivity."""
        self._channel.unsubscribe(callback)

    def unary_unary(self, method: str, request_serializer: Any = None, response_deserializer: Any = None, _registered_method: Optional[bool] = False) -> grpc.UnaryUnaryMultiCallable:
        """A unary method of the real channel, with the token."""
        return _TokenUnaryUnary(
            self._channel.unary_unary(method, request_serializer, response_deserializer, _registered_method),  # type: ignore[call-arg]
            self._header_value,
        )

    def unary_stream(self, method: str, request_serializer: Any = None, response_deserializer: Any = None, _registered_method: Optional[bool] = False) -> grpc.UnaryStreamMultiCallable:
        """A server-streaming method of the real channel, with the token."""
        return _TokenUnaryStream(
            self._channel.unary_stream(method, request_serializer, response_deserializer, _registered_method),  # type: ignore[call-arg]
            self._header_value,
        )

    def stream_unary(self, method: str, request_serializer: Any = None, response_deserializer: Any = None, _registered_method: Optional[bool] = False) -> grpc.StreamUnaryMultiCallable:
        """A client-streaming method of the real channel, with the token."""
        return _TokenStreamUnary(
            self._channel.stream_unary(method, request_serializer, response_deserializer, _registered_method),  # type: ignore[call-arg]
            self._header_value,
        )

    def stream_stream(self, method: str, request_serializer: Any = None, response_deserializer: Any = None, _registered_method: Optional[bool] = False) -> grpc.StreamStreamMultiCallable:
        """A bidirectional method of the real channel, with the token."""
        return _TokenStreamStream(
            self._channel.stream_stream(method, request_serializer, response_deserializer, _registered_method),  # type: ignore[call-arg]
            self._header_value,
        )

    def close(self) -> None:
        """Close the real channel."""
        self._channel.close()

    def __enter__(self) -> "_TokenChannel":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class Client:
    """A connection to recapd: one gRPC channel and a stub per service.

    Each attribute is the generated stub of one service of ``recap.v1``;
    call its RPCs with the request messages of `recapd.v1.recap_pb2`::

        client.events.Publish(pb.PublishRequest(event=...))

    Every RPC accepts grpc's usual keyword arguments (``timeout=``,
    ``metadata=``, ``wait_for_ready=``) and raises `grpc.RpcError` on
    failure (``err.code()``, ``err.details()``).

    Attributes:
        events: EventService (Publish).
        memory: MemoryService (message data, running recaps, chats).
        settings: SettingsService (settings, profiles, groups).
        injections: InjectionService (GetInjection, Refresh, Subscribe...).
        prompts: PromptService (RenderPrompt).
        recaps: RecapService (recap and lore jobs).
        lorebooks: LorebookService (World Info).
        recall: RecallService (Recall).

    Use as a context manager, or call `close` when done.
    """

    events: recap_pb2_grpc.EventServiceStub
    memory: recap_pb2_grpc.MemoryServiceStub
    settings: recap_pb2_grpc.SettingsServiceStub
    injections: recap_pb2_grpc.InjectionServiceStub
    prompts: recap_pb2_grpc.PromptServiceStub
    recaps: recap_pb2_grpc.RecapServiceStub
    lorebooks: recap_pb2_grpc.LorebookServiceStub
    recall: recap_pb2_grpc.RecallServiceStub

    def __init__(self, channel: grpc.Channel) -> None:
        """Wrap an existing channel (`connect` builds one for you). The
        client owns it from now on: `close` closes it."""
        self._channel = channel
        self._closed = threading.Event()
        self.events = recap_pb2_grpc.EventServiceStub(channel)
        self.memory = recap_pb2_grpc.MemoryServiceStub(channel)
        self.settings = recap_pb2_grpc.SettingsServiceStub(channel)
        self.injections = recap_pb2_grpc.InjectionServiceStub(channel)
        self.prompts = recap_pb2_grpc.PromptServiceStub(channel)
        self.recaps = recap_pb2_grpc.RecapServiceStub(channel)
        self.lorebooks = recap_pb2_grpc.LorebookServiceStub(channel)
        self.recall = recap_pb2_grpc.RecallServiceStub(channel)

    @property
    def channel(self) -> grpc.Channel:
        """The underlying gRPC channel (for other services, e.g. grpc.health.v1)."""
        return self._channel

    def close(self) -> None:
        """Close the channel: open calls are cancelled, running `follow`
        generators end (without an error), later calls fail. Idempotent."""
        self._closed.set()
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def follow(
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
    ) -> Iterator[recap_pb2.Injection]:
        """Yield the injections of `chat_ids` as they change, for as long as
        you iterate, across disconnects and server restarts.

        It calls InjectionService.Subscribe, which sends each named chat's
        current injection, then one per refresh. When the stream ends (status
        OK: the server is shutting down) or fails with a code in
        `retry_codes` (UNAVAILABLE: the server died or cannot be reached;
        RESOURCE_EXHAUSTED: the subscriber limit; see `recapd.RETRYABLE_CODES`),
        it subscribes again after a back-off delay. Any other error is raised
        as the `grpc.RpcError` it is (INVALID_ARGUMENT, UNAUTHENTICATED,
        PERMISSION_DENIED, NOT_FOUND, INTERNAL...).

        Per chat id and injection key (each tier counts its own revisions)
        it never yields a revision it already yielded, nor an older one:
        the current injection that a new subscription repeats is skipped. Updates of a chat made while disconnected are not replayed
        one by one; the chat's latest injection arrives on resubscribing.
        (Revisions count per store, so this assumes the server comes back
        with the same data directory or database.) A deleted chat's last
        injection (``deleted`` true, empty text) is yielded like any other;
        the generator goes on (a later event re-creates the chat with higher
        revisions).

        Args:
            chat_ids: The chats to follow (a single str is one id). Ids of
                chats that have no events yet are accepted; their injections
                start with their first refresh. Empty: every chat of the
                token's tenant, live updates only (no current injections;
                refreshes made while disconnected are missed).
            initial_backoff: Seconds before the first resubscription after a
                failure (default 0.1).
            max_backoff: The longest delay, in seconds (default 5.0).
            backoff_multiplier: Each consecutive failure multiplies the delay
                by this (default 2.0: 0.1, 0.2, 0.4 ... 5 s).
            jitter: Each delay is multiplied by a random factor in
                [1 - jitter, 1 + jitter] (default 0.2), capped at
                `max_backoff`. The delay starts again from
                `initial_backoff` after a subscription that delivered a
                message or stayed open for `max_backoff` seconds.
            max_retries: Give up when this many resubscriptions in a row
                failed or ended without delivering anything (after the
                subscription that failed first: ``max_retries + 1`` in
                all), raising `recapd.FollowRetriesExhausted`. None (the
                default): never give up on retryable failures.
            retry_codes: The status codes that are retried (default
                `recapd.RETRYABLE_CODES`: UNAVAILABLE, RESOURCE_EXHAUSTED).
            last_revisions: Revisions already seen (e.g. saved before a
                restart of your program), per (chat id, injection key), or
                per chat id for the running recap's key
                ``auto_recap_scene``: nothing at or below them is yielded.

        Yields:
            `recapd.v1.recap_pb2.Injection` messages, in increasing revision
            order per chat.

        Closing the generator (``break``, ``.close()``) or the client
        cancels the subscription and ends it quietly.
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
            call: Any = None
            try:
                call = self.injections.Subscribe(request)
                for injection in call:
                    delivered = True
                    if revisions.admit(injection):
                        yield injection
            except grpc.RpcError as error:
                if self._closed.is_set():
                    return
                if error.code() not in settings.retry_codes:  # type: ignore[attr-defined]
                    raise
                last_error = error
            except ValueError:
                # "Cannot invoke RPC: Channel closed!" (raised by Subscribe,
                # or by the first read through an intercepted channel):
                # close() raced us.
                if self._closed.is_set():
                    return
                raise
            finally:
                if call is not None:
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
            if self._closed.wait(delay):
                return


def connect(
    target: str,
    token: Optional[str] = None,
    tls_ca: Optional[TlsCa] = None,
    *,
    tls: bool = False,
    tls_server_name: Optional[str] = None,
    options: Optional[Sequence[tuple[str, Any]]] = None,
) -> Client:
    """Open a client to the recapd at `target` (``host:port``).

    Connecting is lazy: a server that is down is not an error here, only
    in the calls made while it is down (UNAVAILABLE).

    Args:
        target: ``host:port`` of recapd's ``--listen`` (any gRPC target
            string works, e.g. ``dns:///recapd.internal:50051``).
        token: A bearer token of the server's ``--auth-tokens-file``; sent as
            ``authorization: Bearer <token>`` with every call. Over plaintext
            it travels in the clear: use TLS beyond loopback or a private
            network.
        tls_ca: Use TLS, trusting these PEM certificates: a path to a file, or
            the PEM itself as bytes (or a str starting with ``-----BEGIN``).
            The CA that signed the server's certificate, or a self-signed
            certificate itself. None (the default): plaintext, unless `tls`.
        tls: Use TLS trusting the system's root certificates (ignored when
            `tls_ca` is given).
        tls_server_name: The name the server's certificate must carry when it
            is not the host of `target`.
        options: Extra gRPC channel options; they override
            `recapd.DEFAULT_CHANNEL_OPTIONS` key by key.

    Returns:
        A `Client`; use it as a context manager or call `close`.

    Raises:
        ValueError: an empty token, or `tls_server_name` without TLS.
        OSError: `tls_ca` names a file that cannot be read.
    """
    _common.check_connect_arguments(token, tls_ca, tls, tls_server_name)
    credentials = _common.channel_credentials(tls_ca, tls)
    channel_options = _common.channel_options(tls_server_name, options)
    if credentials is None:
        channel = grpc.insecure_channel(target, options=channel_options)
    else:
        channel = grpc.secure_channel(target, credentials, options=channel_options)
    if token is not None:
        channel = _TokenChannel(channel, token)
    return Client(channel)
