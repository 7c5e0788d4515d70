"""recapd's API, package ``recap.v1``, generated from proto/recap/v1/recap.proto.

- `recapd.v1.recap_pb2`: the messages and enums (``Event``, ``Injection``...).
- `recapd.v1.recap_pb2_grpc`: the service stubs (``EventServiceStub``...).

Do not edit the generated modules: run ``clients/python/scripts/generate.py``.
"""
