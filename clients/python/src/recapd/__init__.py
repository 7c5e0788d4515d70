"""Python client for recapd, the gRPC sidecar that gives chat backends
long-term memory (API package ``recap.v1``).

    import recapd
    from recapd.v1 import recap_pb2 as pb

    with recapd.connect("127.0.0.1:50051", token="...") as client:
        injection = client.injections.GetInjection(pb.GetInjectionRequest(chat_id="alice-1"))
        for injection in client.follow(["alice-1"]):
            ...

- `connect` / `Client`: blocking client; one typed stub per service, the
  bearer token on every call, and `Client.follow`, which follows injections
  across disconnects and server restarts.
- `recapd.aio`: the same on grpc.aio (`recapd.aio.connect`).
- `recapd.v1`: the generated messages (`recap_pb2`) and stubs
  (`recap_pb2_grpc`).
"""

from recapd._client import BearerTokenInterceptor, Client, connect
from recapd._common import (
    DEFAULT_CHANNEL_OPTIONS,
    RETRYABLE_CODES,
    FollowRetriesExhausted,
)

__version__ = "0.1.0"

__all__ = [
    "BearerTokenInterceptor",
    "Client",
    "DEFAULT_CHANNEL_OPTIONS",
    "FollowRetriesExhausted",
    "RETRYABLE_CODES",
    "connect",
    "__version__",
]
