"""recapd.aio against a live recapd: calls, and `follow` as an async
generator across a kill -9 and a restart. Each test runs its own event loop
(asyncio.run), so no pytest plugin is needed."""

from __future__ import annotations

import asyncio

import grpc
import pytest

import recapd
import recapd.aio
from recapd.v1 import recap_pb2 as pb

from conftest import EVENT_TIMEOUT, free_port
from support import assert_each_chat_strictly_increasing, chat_changed, refresh_requested

FAST = dict(initial_backoff=0.05, max_backoff=0.5)


def test_aio_publish_then_get_injection(shared_server):
    async def scenario() -> pb.Injection:
        async with recapd.aio.connect(shared_server.address) as client:
            published = await client.events.Publish(chat_changed("aio-first"), timeout=EVENT_TIMEOUT)
            assert published.revision == 1
            return await client.injections.GetInjection(
                pb.GetInjectionRequest(chat_id="aio-first"), timeout=EVENT_TIMEOUT
            )

    injection = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert injection.chat_id == "aio-first"
    assert injection.revision == 1
    assert injection.trigger == pb.REFRESH_TRIGGER_CHAT_CHANGED


def test_aio_follow_survives_kill9_and_restart(make_server):
    server = make_server()
    call = dict(timeout=EVENT_TIMEOUT, wait_for_ready=True)

    async def scenario() -> list[tuple[str, int, bool]]:
        records: list[tuple[str, int, bool]] = []
        arrived = asyncio.Condition()

        async with recapd.aio.connect(server.address) as client:

            async def consume() -> None:
                async for injection in client.follow(["story", "probe"], **FAST):
                    async with arrived:
                        records.append((injection.chat_id, injection.revision, injection.deleted))
                        arrived.notify_all()

            async def wait_for(chat_id: str, revision: int, deleted: bool = False) -> None:
                async with arrived:
                    await asyncio.wait_for(
                        arrived.wait_for(lambda: (chat_id, revision, deleted) in records),
                        EVENT_TIMEOUT,
                    )

            assert (await client.events.Publish(chat_changed("story"), **call)).revision == 1
            assert (await client.events.Publish(chat_changed("probe"), **call)).revision == 1
            consumer = asyncio.create_task(consume())
            await wait_for("story", 1)
            await wait_for("probe", 1)
            assert (await client.events.Publish(refresh_requested("story"), **call)).revision == 2
            await wait_for("story", 2)

            await asyncio.to_thread(server.kill9)
            await asyncio.to_thread(server.start)
            # Once the probe's refresh arrives, follow has subscribed again
            # (and skipped story's revision 2, which that snapshot repeated).
            probe = (await client.events.Publish(refresh_requested("probe"), **call)).revision
            await wait_for("probe", probe)
            assert (await client.events.Publish(refresh_requested("story"), **call)).revision == 3
            await wait_for("story", 3)

            await client.memory.DeleteChat(pb.DeleteChatRequest(chat_id="story"), **call)
            await wait_for("story", 4, deleted=True)

            assert not consumer.done(), consumer
            consumer.cancel()
            with pytest.raises(asyncio.CancelledError):
                await consumer
        return records

    records = asyncio.run(asyncio.wait_for(scenario(), 120))
    assert [r for c, r, _ in records if c == "story"] == [1, 2, 3, 4]
    assert [r for c, r, _ in records if c == "probe"] == [1, 2]
    assert_each_chat_strictly_increasing(records)


def test_aio_follow_raises_invalid_argument(shared_server):
    async def scenario() -> None:
        async with recapd.aio.connect(shared_server.address) as client:
            async for _ in client.follow([""], **FAST):
                pass

    with pytest.raises(grpc.RpcError) as raised:
        asyncio.run(asyncio.wait_for(scenario(), 10))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_aio_follow_gives_up_after_max_retries():
    async def scenario() -> None:
        async with recapd.aio.connect(f"127.0.0.1:{free_port()}") as client:
            async for _ in client.follow(["c"], initial_backoff=0.01, max_backoff=0.05, max_retries=2):
                pass

    with pytest.raises(recapd.FollowRetriesExhausted) as raised:
        asyncio.run(asyncio.wait_for(scenario(), 20))
    assert raised.value.last_error.code() == grpc.StatusCode.UNAVAILABLE


def test_aio_close_ends_follow():
    async def scenario() -> list[pb.Injection]:
        client = recapd.aio.connect(f"127.0.0.1:{free_port()}")
        received: list[pb.Injection] = []

        async def consume() -> None:
            async for injection in client.follow(["c"], initial_backoff=1.0, max_backoff=1.0):
                received.append(injection)

        consumer = asyncio.create_task(consume())
        await asyncio.sleep(0.2)
        await client.close()
        await asyncio.wait_for(consumer, 10)  # ends by itself, no error
        return received

    assert asyncio.run(asyncio.wait_for(scenario(), 20)) == []


def test_aio_close_ends_a_streaming_follow(shared_server):
    async def scenario() -> list[int]:
        client = recapd.aio.connect(shared_server.address)
        await client.events.Publish(chat_changed("aio-close"), timeout=EVENT_TIMEOUT)
        revisions: list[int] = []
        first = asyncio.Event()

        async def consume() -> None:
            async for injection in client.follow(["aio-close"], **FAST):
                revisions.append(injection.revision)
                first.set()

        consumer = asyncio.create_task(consume())
        await asyncio.wait_for(first.wait(), EVENT_TIMEOUT)
        await client.close()  # the stream is open: follow must end, quietly
        await asyncio.wait_for(consumer, 10)
        return revisions

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == [1]
