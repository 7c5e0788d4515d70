"""A small recapd client: opens a chat, publishes messages, adds a running
recap and prints each injection it receives from Subscribe.

Stubs come from proto/ with grpcio-tools (see examples/python/README.md):

    python -m grpc_tools.protoc -I proto --python_out=examples/python/gen \
        --grpc_python_out=examples/python/gen proto/recap/v1/recap.proto

Usage: python recap_client.py [HOST:PORT]   (default 127.0.0.1:50051)
Exits 1 if what it receives is not what recapd promises.
"""

import os
import sys
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402
from recap.v1 import recap_pb2 as pb  # noqa: E402
from recap.v1 import recap_pb2_grpc as rpc  # noqa: E402


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def main():
    addr = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051"
    chat = f"python-example-{uuid.uuid4().hex[:8]}"
    channel = grpc.insecure_channel(addr)
    events = rpc.EventServiceStub(channel)
    memory = rpc.MemoryServiceStub(channel)
    settings = rpc.SettingsServiceStub(channel)
    injections = rpc.InjectionServiceStub(channel)

    # Refresh this chat at once after every message (the default waits 300 ms).
    settings.UpdateSettings(
        pb.UpdateSettingsRequest(chat_id=chat, settings=pb.Settings(debounce_ms=0))
    )

    # Open the chat with its transcript: an immediate refresh (revision 1).
    opened = events.Publish(
        pb.PublishRequest(
            event=pb.Event(
                chat_id=chat,
                chat_changed=pb.ChatChanged(
                    messages=[
                        pb.Message(id="m1", name="Alice", text="Hi Bob!", is_user=True),
                        pb.Message(id="m2", name="Bob", text="Hello, Alice."),
                    ]
                ),
            )
        )
    )
    check(opened.revision == 1, f"chat_changed gives revision 1, got {opened.revision}")

    # Subscribe: the current injection first, then one per refresh.
    stream = injections.Subscribe(pb.SubscribeRequest(chat_ids=[chat], max_updates=3))
    received = [next(stream)]

    events.Publish(
        pb.PublishRequest(
            event=pb.Event(
                chat_id=chat,
                message_sent=pb.MessageSent(
                    message=pb.Message(id="m3", name="Alice", text="Shall we go?", is_user=True)
                ),
            )
        )
    )
    version = memory.AddRunningRecap(
        pb.AddRunningRecapRequest(chat_id=chat, content="Alice and Bob met and set off.", scene_count=1)
    )
    check(version.version == 0, "the first running-recap version is 0")

    received.extend(stream)  # max_updates=3 ends the stream after the third
    for injection in received:
        print(
            f"revision {injection.revision} "
            f"trigger {pb.RefreshTrigger.Name(injection.trigger)} "
            f"position {pb.InjectionPosition.Name(injection.position)} "
            f"tokens {injection.token_count}: {injection.text!r}"
        )

    check([i.revision for i in received] == [1, 2, 3], "revisions 1, 2, 3")
    triggers = [pb.RefreshTrigger.Name(i.trigger) for i in received]
    check(
        triggers == ["REFRESH_TRIGGER_CHAT_CHANGED", "REFRESH_TRIGGER_MESSAGE_SENT", "REFRESH_TRIGGER_RUNNING_RECAP_CHANGED"],
        f"triggers in order, got {triggers}",
    )
    last = received[-1]
    check("Alice and Bob met and set off." in last.text, "the recap is in the injection")
    check(last.text.startswith("# Story Memory"), "the default template wraps it")
    check(last.position == pb.INJECTION_POSITION_BEFORE_PROMPT, "default position BEFORE_PROMPT")
    check(injections.GetInjection(pb.GetInjectionRequest(chat_id=chat)).revision == 3, "GetInjection agrees")
    print("python example: OK")


if __name__ == "__main__":
    main()
