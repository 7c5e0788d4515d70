"""The blocking client against a live recapd: calls, `follow` across a
kill -9 and a clean shutdown, errors that must raise, closing."""

from __future__ import annotations

import grpc
import pytest

import recapd
from recapd import _common
from recapd.v1 import recap_pb2 as pb

from conftest import EVENT_TIMEOUT, free_port
from support import (
    FollowRecorder,
    assert_each_chat_strictly_increasing,
    chat_changed,
    refresh_requested,
    run_with_timeout,
)

# Short back-off so that reconnecting does not dominate the test's runtime.
FAST = dict(initial_backoff=0.05, max_backoff=0.5)


def test_publish_then_get_injection(shared_server):
    with recapd.connect(shared_server.address) as client:
        published = client.events.Publish(chat_changed("sync-first"), timeout=EVENT_TIMEOUT)
        assert published.revision == 1
        client.memory.AddRunningRecap(
            pb.AddRunningRecapRequest(chat_id="sync-first", content="Alice and Bob met."),
            timeout=EVENT_TIMEOUT,
        )
        injection = client.injections.GetInjection(
            pb.GetInjectionRequest(chat_id="sync-first"), timeout=EVENT_TIMEOUT
        )
    assert injection.chat_id == "sync-first"
    assert injection.revision == 2
    assert "Alice and Bob met." in injection.text
    assert injection.trigger == pb.REFRESH_TRIGGER_RUNNING_RECAP_CHANGED
    assert not injection.deleted


def test_every_service_attribute_is_its_stub(shared_server):
    with recapd.connect(shared_server.address) as client:
        expected = {
            "events": "EventServiceStub",
            "memory": "MemoryServiceStub",
            "settings": "SettingsServiceStub",
            "injections": "InjectionServiceStub",
            "prompts": "PromptServiceStub",
            "recaps": "RecapServiceStub",
            "lorebooks": "LorebookServiceStub",
            "recall": "RecallServiceStub",
        }
        for attribute, stub in expected.items():
            assert type(getattr(client, attribute)).__name__ == stub
        # One call through a service other than the injection ones.
        settings = client.settings.GetSettings(pb.GetSettingsRequest(), timeout=EVENT_TIMEOUT)
        assert settings.debounce_ms >= 0


def test_follow_survives_kill9_and_clean_restart(make_server, monkeypatch):
    server = make_server()
    # Count the injections follow drops as already seen, to prove that the
    # resubscription's snapshot did repeat one and that it was skipped.
    skipped: list[tuple[str, int]] = []
    admit = _common.RevisionFilter.admit

    def counting_admit(self, injection):
        admitted = admit(self, injection)
        if not admitted:
            skipped.append((injection.chat_id, injection.revision))
        return admitted

    monkeypatch.setattr(_common.RevisionFilter, "admit", counting_admit)

    client = recapd.connect(server.address)
    call = dict(timeout=EVENT_TIMEOUT, wait_for_ready=True)
    # Events before following.
    assert client.events.Publish(chat_changed("story"), **call).revision == 1
    assert client.events.Publish(chat_changed("probe"), **call).revision == 1

    recorder = FollowRecorder(client.follow(["story", "probe"], **FAST))
    recorder.wait_for_revision("story", 1)
    recorder.wait_for_revision("probe", 1)
    assert client.events.Publish(refresh_requested("story"), **call).revision == 2
    recorder.wait_for_revision("story", 2)

    # kill -9: the stream fails with UNAVAILABLE; follow retries until the
    # server is back on the same port and data dir.
    server.kill9()
    server.start()
    # A refresh of the probe chat shows that follow has subscribed again;
    # that subscription began with story's current revision (2), again.
    probe_revision = client.events.Publish(refresh_requested("probe"), **call).revision
    assert probe_revision == 2
    recorder.wait_for_revision("probe", probe_revision)
    assert ("story", 2) in skipped, f"the resubscription's snapshot was not skipped: {skipped}"
    # Revisions survive the restart: the next refresh of story is 3.
    assert client.events.Publish(refresh_requested("story"), **call).revision == 3
    recorder.wait_for_revision("story", 3)

    # A clean shutdown ends the stream with OK: follow subscribes again too.
    assert server.terminate() == 0
    server.start()
    probe_revision = client.events.Publish(refresh_requested("probe"), **call).revision
    recorder.wait_for_revision("probe", probe_revision)
    assert client.events.Publish(refresh_requested("story"), **call).revision == 4
    recorder.wait_for_revision("story", 4)

    # A deleted chat's last injection is yielded, flagged deleted.
    client.memory.DeleteChat(pb.DeleteChatRequest(chat_id="probe"), **call)
    recorder.wait_for_revision("probe", probe_revision + 1, deleted=True)

    client.close()
    recorder.join()
    assert recorder.error is None, recorder.error
    assert recorder.revisions("story") == [1, 2, 3, 4]
    assert recorder.revisions("probe") == [1, 2, 3, 4]
    assert_each_chat_strictly_increasing(recorder.records)


def test_follow_raises_invalid_argument_at_once(shared_server):
    with recapd.connect(shared_server.address) as client:
        injections = client.follow(["ok-chat", ""], **FAST)
        with pytest.raises(grpc.RpcError) as raised:
            run_with_timeout(lambda: next(injections), 10, "follow with an empty chat id")
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "chat_ids" in raised.value.details()


def test_follow_gives_up_after_max_retries():
    # Nothing listens on this port: every subscription fails UNAVAILABLE.
    with recapd.connect(f"127.0.0.1:{free_port()}") as client:
        injections = client.follow(["c"], initial_backoff=0.01, max_backoff=0.05, max_retries=3)
        with pytest.raises(recapd.FollowRetriesExhausted) as raised:
            run_with_timeout(lambda: next(injections), 20, "follow with max_retries against no server")
    assert raised.value.attempts == 4
    assert raised.value.last_error is not None
    assert raised.value.last_error.code() == grpc.StatusCode.UNAVAILABLE


def test_follow_skips_revisions_given_as_seen(shared_server):
    with recapd.connect(shared_server.address) as client:
        client.events.Publish(chat_changed("seen-before"), timeout=EVENT_TIMEOUT)
        latest = client.events.Publish(refresh_requested("seen-before"), timeout=EVENT_TIMEOUT).revision
        recorder = FollowRecorder(
            client.follow("seen-before", last_revisions={"seen-before": latest}, **FAST)
        )
        newer = client.events.Publish(refresh_requested("seen-before"), timeout=EVENT_TIMEOUT).revision
        recorder.wait_for_revision("seen-before", newer)
    recorder.join()
    assert recorder.revisions("seen-before") == [newer]


def test_close_ends_a_waiting_follow():
    # No server: follow is between attempts when the client closes.
    client = recapd.connect(f"127.0.0.1:{free_port()}")
    recorder = FollowRecorder(client.follow(["c"], initial_backoff=1.0, max_backoff=1.0))
    client.close()
    recorder.join(timeout=10)
    assert recorder.error is None
    assert recorder.records == []


def test_connect_refuses_tls_server_name_without_tls():
    with pytest.raises(ValueError):
        recapd.connect("127.0.0.1:1", tls_server_name="recapd.internal")
    with pytest.raises(ValueError):
        recapd.connect("127.0.0.1:1", token="")
