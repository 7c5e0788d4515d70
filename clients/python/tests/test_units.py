"""Parts of the client that need no server: back-off, revision filter,
argument handling, the stubs' module names."""

from __future__ import annotations

import pickle

import pytest

import recapd
from recapd import _common
from recapd.v1 import recap_pb2 as pb
from recapd.v1 import recap_pb2_grpc


def test_backoff_doubles_to_the_cap_within_the_jitter():
    backoff = _common.Backoff(initial=0.1, maximum=5.0, multiplier=2.0, jitter=0.2)
    nominal = [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    for expected in nominal:
        delay = backoff.next_delay()
        assert expected * 0.8 - 1e-9 <= delay <= min(expected * 1.2, 5.0) + 1e-9, (expected, delay)
    backoff.reset()
    assert backoff.next_delay() <= 0.12 + 1e-9


def test_backoff_refuses_nonsense():
    for arguments in ((0, 1, 2, 0.2), (1, 0.5, 2, 0.2), (0.1, 1, 0.5, 0.2), (0.1, 1, 2, 1.0)):
        with pytest.raises(ValueError):
            _common.Backoff(*arguments)


def test_revision_filter_admits_only_newer_revisions_per_chat_and_key():
    revisions = _common.RevisionFilter({"b": 5, ("a", "auto_recap_messages"): 2})
    offered = [
        ("a", "auto_recap_scene", 1),
        ("a", "auto_recap_scene", 1),
        ("a", "auto_recap_messages", 1),
        ("a", "auto_recap_messages", 3),
        ("a", "auto_recap_scene", 3),
        ("a", "auto_recap_scene", 2),
        ("b", "auto_recap_scene", 5),
        ("b", "auto_recap_scene", 6),
        ("a", "auto_recap_scene", 4),
        ("b", "auto_recap_scene", 6),
    ]
    admitted = [
        (chat, key, revision)
        for chat, key, revision in offered
        if revisions.admit(pb.Injection(chat_id=chat, key=key, revision=revision))
    ]
    # The message tier's revision 3 is its own: the scene key's 1 does not
    # hide it, nor does its 3 hide the scene key's 3.
    assert admitted == [
        ("a", "auto_recap_scene", 1),
        ("a", "auto_recap_messages", 3),
        ("a", "auto_recap_scene", 3),
        ("b", "auto_recap_scene", 6),
        ("a", "auto_recap_scene", 4),
    ]
    assert revisions.last_revisions == {
        ("a", "auto_recap_scene"): 4,
        ("a", "auto_recap_messages"): 3,
        ("b", "auto_recap_scene"): 6,
    }


def test_a_single_chat_id_string_is_one_id():
    assert _common.normalize_chat_ids("alice-1") == ["alice-1"]
    assert _common.normalize_chat_ids(iter(["a", "b"])) == ["a", "b"]


def test_token_header_is_added_unless_the_call_has_one():
    assert _common.metadata_with_token(None, "Bearer t") == [("authorization", "Bearer t")]
    own = [("Authorization", "Bearer mine")]
    assert _common.metadata_with_token(own, "Bearer t") == own


def test_caller_options_override_the_defaults():
    options = dict(_common.channel_options("name", [("grpc.max_reconnect_backoff_ms", 1000)]))
    assert options["grpc.max_reconnect_backoff_ms"] == 1000
    assert options["grpc.ssl_target_name_override"] == "name"
    assert options["grpc.keepalive_time_ms"] == 30_000


def test_tls_ca_accepts_bytes_pem_text_and_paths(tmp_path):
    pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    path = tmp_path / "ca.pem"
    path.write_bytes(pem)
    assert _common.read_tls_ca(pem) == pem
    assert _common.read_tls_ca(pem.decode()) == pem
    assert _common.read_tls_ca(str(path)) == pem
    assert _common.read_tls_ca(path) == pem
    with pytest.raises(OSError):
        recapd.connect("127.0.0.1:1", tls_ca=str(tmp_path / "missing.pem"))


def test_stubs_are_recapd_v1_modules_with_the_canonical_proto_name():
    assert pb.Injection.__module__ == "recapd.v1.recap_pb2"
    assert pb.DESCRIPTOR.name == "recap/v1/recap.proto"
    assert pb.DESCRIPTOR.package == "recap.v1"
    assert recap_pb2_grpc.recap_dot_v1_dot_recap__pb2 is pb
    injection = pb.Injection(chat_id="c", revision=3, deleted=True)
    assert pickle.loads(pickle.dumps(injection)) == injection


def test_the_package_is_typed():
    import importlib.resources

    assert importlib.resources.files("recapd").joinpath("py.typed").is_file()
    assert importlib.resources.files("recapd.v1").joinpath("recap_pb2.pyi").is_file()


def test_runs_against_the_installed_package():
    # test.sh sets this: the tests must exercise what `pip install` put in
    # the virtual environment, not the source tree.
    import os

    if os.environ.get("RECAPD_CLIENT_EXPECT_INSTALLED") != "1":
        pytest.skip("not run by test.sh")
    assert "site-packages" in recapd.__file__, recapd.__file__
