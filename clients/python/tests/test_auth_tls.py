"""The bearer token and TLS against a live recapd: a server with a tokens
file refuses calls without the token and answers with it (unary calls and
streams, blocking and asyncio); a TLS server answers a client trusting its
CA, given as a path or as bytes."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import pathlib
import subprocess
import sys

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

import recapd
import recapd.aio
from recapd.v1 import recap_pb2 as pb

from conftest import EVENT_TIMEOUT
from support import chat_changed, run_with_timeout

TOKEN = "py-client-token-0123456789abcdef"
OTHER_TOKEN = "py-client-other-tenant-token-42"


def write_tokens_file(directory: pathlib.Path) -> pathlib.Path:
    """A --auth-tokens-file with two tenants."""
    path = directory / "tokens"
    path.write_text(f"tenant-a {TOKEN}\ntenant-b {OTHER_TOKEN}\n")
    return path


def write_certificates(directory: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    """A CA and a server certificate it signed for 127.0.0.1 and localhost;
    returns (ca.pem, server.pem, server.key)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "recapd-client test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_path = directory / "ca.pem"
    cert_path = directory / "server.pem"
    key_path = directory / "server.key"
    ca_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(server_cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_path, cert_path, key_path


@pytest.fixture(scope="module")
def auth_server(recapd_bin, tmp_path_factory):
    """A plaintext server with a tokens file."""
    from conftest import RecapdServer

    work = tmp_path_factory.mktemp("recapd-auth")
    server = RecapdServer(recapd_bin, work, ("--auth-tokens-file", str(write_tokens_file(work))))
    server.start()
    yield server
    server.stop()


def assert_unauthenticated(call, what: str) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        call()
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED, what


def test_server_with_tokens_refuses_calls_without_the_token(auth_server):
    with recapd.connect(auth_server.address) as anonymous:
        assert_unauthenticated(
            lambda: anonymous.events.Publish(chat_changed("auth-chat"), timeout=EVENT_TIMEOUT),
            "Publish without a token",
        )
    with recapd.connect(auth_server.address, token="not-a-known-token-at-all") as stranger:
        assert_unauthenticated(
            lambda: stranger.injections.GetInjection(
                pb.GetInjectionRequest(chat_id="auth-chat"), timeout=EVENT_TIMEOUT
            ),
            "GetInjection with an unknown token",
        )


def test_token_is_sent_with_unary_calls_and_streams(auth_server):
    with recapd.connect(auth_server.address, token=TOKEN) as client:
        assert client.events.Publish(chat_changed("auth-chat"), timeout=EVENT_TIMEOUT).revision == 1
        injection = client.injections.GetInjection(
            pb.GetInjectionRequest(chat_id="auth-chat"), timeout=EVENT_TIMEOUT
        )
        assert injection.revision == 1
        # The server stream carries the token too.
        first = run_with_timeout(lambda: next(client.follow(["auth-chat"])), EVENT_TIMEOUT, "follow with a token")
        assert (first.chat_id, first.revision) == ("auth-chat", 1)
        # A call's own authorization metadata wins over the client's token:
        # the other tenant has no such chat.
        with pytest.raises(grpc.RpcError) as raised:
            client.injections.GetInjection(
                pb.GetInjectionRequest(chat_id="auth-chat"),
                timeout=EVENT_TIMEOUT,
                metadata=[("authorization", f"Bearer {OTHER_TOKEN}")],
            )
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        # The other ways to make a unary call carry it too.
        _, call = client.injections.GetInjection.with_call(
            pb.GetInjectionRequest(chat_id="auth-chat"), timeout=EVENT_TIMEOUT
        )
        assert call.code() == grpc.StatusCode.OK
        future = client.injections.GetInjection.future(
            pb.GetInjectionRequest(chat_id="auth-chat"), timeout=EVENT_TIMEOUT
        )
        assert future.result(timeout=EVENT_TIMEOUT).revision == 1


def test_calls_after_close_raise_rather_than_crash(auth_server):
    # grpcio crashes the process (SIGSEGV) on a call through a closed
    # grpc.intercept_channel; the client with a token must raise ValueError
    # as a plain channel does. Run in a child process so that a crash is a
    # failure of this test, not of the whole session.
    script = f"""
import recapd
from recapd.v1 import recap_pb2 as pb
client = recapd.connect({auth_server.address!r}, token={TOKEN!r})
client.close()
for name, call in (
    ("unary", lambda: client.injections.GetInjection(pb.GetInjectionRequest(chat_id="c"), timeout=5)),
    ("stream", lambda: list(client.injections.Subscribe(pb.SubscribeRequest(chat_ids=["c"]), timeout=5))),
):
    try:
        call()
    except ValueError:
        print(name, "ValueError")
print("follow", list(client.follow(["c"])))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr}"
    assert result.stdout.split("\n")[:3] == ["unary ValueError", "stream ValueError", "follow []"], result.stdout


def test_follow_without_the_token_raises_instead_of_retrying(auth_server):
    with recapd.connect(auth_server.address) as anonymous:
        injections = anonymous.follow(["auth-chat"], initial_backoff=0.05, max_backoff=0.5)
        with pytest.raises(grpc.RpcError) as raised:
            run_with_timeout(lambda: next(injections), 10, "follow without a token")
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_aio_token_is_sent_with_unary_calls_and_streams(auth_server):
    async def scenario() -> None:
        async with recapd.aio.connect(auth_server.address, token=TOKEN) as client:
            await client.events.Publish(chat_changed("aio-auth-chat"), timeout=EVENT_TIMEOUT)
            async for injection in client.follow(["aio-auth-chat"]):
                assert (injection.chat_id, injection.revision) == ("aio-auth-chat", 1)
                break
        async with recapd.aio.connect(auth_server.address) as anonymous:
            with pytest.raises(grpc.RpcError) as raised:
                await anonymous.injections.GetInjection(
                    pb.GetInjectionRequest(chat_id="aio-auth-chat"), timeout=EVENT_TIMEOUT
                )
            assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
            with pytest.raises(grpc.RpcError) as raised:
                async for _ in anonymous.follow(["aio-auth-chat"]):
                    pass
            assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED

    asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.fixture(scope="module")
def tls_server(recapd_bin, tmp_path_factory):
    """A TLS server with a tokens file; yields (server, ca.pem path)."""
    from conftest import RecapdServer

    work = tmp_path_factory.mktemp("recapd-tls")
    ca_path, cert_path, key_path = write_certificates(work)
    server = RecapdServer(
        recapd_bin,
        work,
        (
            "--tls-cert", str(cert_path),
            "--tls-key", str(key_path),
            "--auth-tokens-file", str(write_tokens_file(work)),
        ),
        health_args=("--tls-ca", str(ca_path)),
    )
    server.start()
    yield server, ca_path
    server.stop()


def test_tls_with_ca_as_path_or_bytes_and_token(tls_server):
    server, ca_path = tls_server
    with recapd.connect(server.address, token=TOKEN, tls_ca=str(ca_path)) as client:
        assert client.events.Publish(chat_changed("tls-chat"), timeout=EVENT_TIMEOUT).revision == 1
    with recapd.connect(server.address, token=TOKEN, tls_ca=ca_path.read_bytes()) as client:
        injection = client.injections.GetInjection(pb.GetInjectionRequest(chat_id="tls-chat"), timeout=EVENT_TIMEOUT)
        assert injection.revision == 1
        first = run_with_timeout(lambda: next(client.follow(["tls-chat"])), EVENT_TIMEOUT, "follow over TLS")
        assert first.revision == 1
    # Over TLS, the token is still required.
    with recapd.connect(server.address, tls_ca=ca_path) as anonymous:
        assert_unauthenticated(
            lambda: anonymous.injections.GetInjection(pb.GetInjectionRequest(chat_id="tls-chat"), timeout=EVENT_TIMEOUT),
            "TLS call without a token",
        )
    # A plaintext client cannot talk to the TLS server.
    with recapd.connect(server.address, token=TOKEN) as plaintext:
        with pytest.raises(grpc.RpcError) as raised:
            plaintext.injections.GetInjection(pb.GetInjectionRequest(chat_id="tls-chat"), timeout=5)
        assert raised.value.code() == grpc.StatusCode.UNAVAILABLE


def test_aio_tls(tls_server):
    server, ca_path = tls_server

    async def scenario() -> pb.Injection:
        async with recapd.aio.connect(server.address, token=TOKEN, tls_ca=ca_path) as client:
            await client.events.Publish(chat_changed("aio-tls-chat"), timeout=EVENT_TIMEOUT)
            return await client.injections.GetInjection(
                pb.GetInjectionRequest(chat_id="aio-tls-chat"), timeout=EVENT_TIMEOUT
            )

    injection = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert injection.revision == 1
