"""`recapd mcp` driven by the official MCP Python SDK (`mcp` on PyPI), against
a live recapd: the tools listed, each answering from the chat seeded here,
errors as tool errors, the write tool refused without --mcp-allow-writes and
working with it, and the Streamable HTTP listener's token and host rules.

Run by tests/mcp/test.sh (a fresh venv with `mcp` and the repository's
Python client, which seeds the chat). RECAPD_BIN names the recapd binary.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import recapd
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from recapd.v1 import recap_pb2 as pb

BIN = os.environ["RECAPD_BIN"]
TOKEN = "acme-token-0123456789"
# Another tenant's token: given to the HTTP listener as --token, never used
# for a caller that brings its own.
OTHER_TOKEN = "other-token-9876543210"
READ_TOOLS = {"recall", "get_memory", "list_chats", "search_lore", "render_prompt"}
BOOK = json.dumps(
    {
        "entries": {
            "0": {
                "uid": 0,
                "key": ["lighthouse"],
                "content": "The lighthouse has been dark for years.",
                "comment": "Lighthouse",
            }
        }
    }
)
DEADLINE_SECONDS = 20


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_healthy(addr: str) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        if subprocess.run([BIN, "health", "--addr", addr], capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    raise AssertionError(f"recapd at {addr} did not come up")


def seed(addr: str) -> None:
    """The chat the tools read: a tavern story with a running recap and a
    chat book with a lighthouse entry."""
    with recapd.connect(addr, token=TOKEN) as client:
        client.events.Publish(
            pb.PublishRequest(
                event=pb.Event(
                    chat_id="tavern",
                    chat_changed=pb.ChatChanged(
                        messages=[
                            pb.Message(id="m0", name="Ann", is_user=True, text="Where is the old lighthouse keeper?"),
                            pb.Message(id="m1", name="Bob", text="He left the harbour town after the storm."),
                            pb.Message(id="m2", name="Ann", is_user=True, text="Then we sail at dawn."),
                        ]
                    ),
                )
            ),
            timeout=10,
        )
        client.memory.AddRunningRecap(
            pb.AddRunningRecapRequest(chat_id="tavern", content="Ann is looking for the lighthouse keeper."),
            timeout=10,
        )
        client.lorebooks.ImportLorebook(pb.ImportLorebookRequest(name="Harbour", json=BOOK), timeout=10)
        client.settings.UpdateSettings(
            pb.UpdateSettingsRequest(chat_id="tavern", settings=pb.Settings(world_info_chat_book="Harbour")),
            timeout=10,
        )


@asynccontextmanager
async def stdio_session(addr: str, *flags: str):
    params = StdioServerParameters(command=BIN, args=["mcp", "--addr", addr, "--token", TOKEN, *flags])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await asyncio.wait_for(session.initialize(), DEADLINE_SECONDS)
            yield session


async def call(session: ClientSession, tool: str, arguments: dict):
    return await asyncio.wait_for(session.call_tool(tool, arguments), DEADLINE_SECONDS)


def text_of(result) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def answer_of(result) -> dict:
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


async def reads_and_refuses_writes(addr: str) -> None:
    async with stdio_session(addr) as session:
        tools = await asyncio.wait_for(session.list_tools(), DEADLINE_SECONDS)
        names = {tool.name for tool in tools.tools}
        assert names == READ_TOOLS, names
        for tool in tools.tools:
            assert tool.description and len(tool.description) < 200, tool

        found = answer_of(await call(session, "recall", {"chat_id": "tavern", "query": "lighthouse keeper"}))
        assert found["passages"][0]["message_id"] == "m0", found

        memory = answer_of(await call(session, "get_memory", {"chat_id": "tavern"}))
        assert "Ann is looking for the lighthouse keeper." in memory["text"], memory
        assert memory["position"] == "BEFORE_PROMPT" and memory["role"] == "SYSTEM", memory

        chats = answer_of(await call(session, "list_chats", {}))
        assert [c["chat_id"] for c in chats["chats"]] == ["tavern"], chats
        assert chats["chats"][0]["messages"] == 3

        lore = answer_of(await call(session, "search_lore", {"chat_id": "tavern", "text": "Is the lighthouse lit?"}))
        assert [e["content"] for e in lore["entries"]] == ["The lighthouse has been dark for years."], lore
        quiet = answer_of(await call(session, "search_lore", {"chat_id": "tavern", "text": "Nothing about it."}))
        assert quiet["entries"] == [], quiet

        prompt = answer_of(await call(session, "render_prompt", {"chat_id": "tavern"}))
        contents = [m["content"] for m in prompt["messages"]]
        assert any("Ann is looking for the lighthouse keeper." in c for c in contents), contents
        assert contents[-1] == "Then we sail at dawn.", contents

        # Errors are tool errors with the status, never internals.
        missing = await call(session, "get_memory", {"chat_id": "no-such-chat"})
        assert missing.is_error and text_of(missing).startswith("NOT_FOUND: "), text_of(missing)
        bad_mode = await call(session, "render_prompt", {"chat_id": "tavern", "mode": "poem"})
        assert bad_mode.is_error and text_of(bad_mode).startswith("INVALID_ARGUMENT: "), text_of(bad_mode)

        # The write tool does not exist without --mcp-allow-writes.
        try:
            refused = await call(session, "add_memory", {"chat_id": "tavern", "kind": "running_recap", "text": "x"})
        except Exception as error:  # the SDK raises for a JSON-RPC error
            assert "add_memory" in str(error) or "not found" in str(error).lower(), error
        else:
            assert refused.is_error, text_of(refused)
    # Nothing was written: still one running-recap version.
    with recapd.connect(addr, token=TOKEN) as client:
        versions = client.memory.ListRunningRecaps(pb.ListRunningRecapsRequest(chat_id="tavern"), timeout=10)
        assert len(versions.versions) == 1, versions


async def writes_when_allowed(addr: str) -> None:
    async with stdio_session(addr, "--mcp-allow-writes") as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert names == READ_TOOLS | {"add_memory"}, names
        stored = answer_of(
            await call(session, "add_memory", {"chat_id": "tavern", "kind": "running_recap", "text": "They sail at dawn."})
        )
        assert stored["stored"] == "running_recap", stored
        memory = answer_of(await call(session, "get_memory", {"chat_id": "tavern"}))
        assert "They sail at dawn." in memory["text"], memory
        recap = answer_of(
            await call(
                session,
                "add_memory",
                {"chat_id": "tavern", "kind": "message_recap", "message_id": "m1", "text": "Bob says the keeper left."},
            )
        )
        assert recap == {"stored": "message_recap", "message_id": "m1"}, recap
        missing = await call(session, "add_memory", {"chat_id": "tavern", "kind": "message_recap", "text": "x"})
        assert missing.is_error and "message_id" in text_of(missing), text_of(missing)
    with recapd.connect(addr, token=TOKEN) as client:
        data = client.memory.GetMessageData(pb.GetMessageDataRequest(chat_id="tavern", message_id="m1"), timeout=10)
        assert data.memory == "Bob says the keeper left.", data


def raw_post(url: str, headers: dict) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE_SECONDS) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


async def over_http(addr: str, tokens_file: Path) -> None:
    port = free_port()
    server = subprocess.Popen(
        [
            BIN,
            "mcp",
            "--addr",
            addr,
            "--token",
            OTHER_TOKEN,
            "--mcp-listen",
            f"127.0.0.1:{port}",
            "--auth-tokens-file",
            str(tokens_file),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not _listening(port):
            if time.monotonic() > deadline:
                raise AssertionError("recapd mcp --mcp-listen did not come up")
            time.sleep(0.1)
        # The gRPC listener's rules: no token or an unknown one is refused.
        assert raw_post(url, {}) == 401
        assert raw_post(url, {"Authorization": "Bearer not-a-token-of-the-file"}) == 401
        # A page reaching this port through a name it controls is refused.
        assert raw_post(url, {"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"}) in (400, 403)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=DEADLINE_SECONDS) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await asyncio.wait_for(session.initialize(), DEADLINE_SECONDS)
                    names = {tool.name for tool in (await session.list_tools()).tools}
                    assert names == READ_TOOLS, names
                    found = answer_of(await call(session, "recall", {"chat_id": "tavern", "query": "storm"}))
                    assert found["passages"][0]["message_id"] == "m1", found
                    # The caller's tenant (acme), not --token's.
                    chats = answer_of(await call(session, "list_chats", {}))
                    assert [c["chat_id"] for c in chats["chats"]] == ["tavern"], chats
    finally:
        server.terminate()
        server.wait(timeout=DEADLINE_SECONDS)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        tokens_file = Path(scratch) / "tokens"
        tokens_file.write_text(f"acme {TOKEN}\nother {OTHER_TOKEN}\n")
        port = free_port()
        addr = f"127.0.0.1:{port}"
        server = subprocess.Popen(
            [
                BIN,
                "--listen",
                addr,
                "--metrics-listen",
                "off",
                "--data-dir",
                str(Path(scratch) / "data"),
                "--log-level",
                "warn",
                "--auth-tokens-file",
                str(tokens_file),
            ]
        )
        try:
            wait_healthy(addr)
            seed(addr)
            await reads_and_refuses_writes(addr)
            print("mcp: stdio reads, errors and the refused write: ok")
            await writes_when_allowed(addr)
            print("mcp: writes with --mcp-allow-writes: ok")
            await over_http(addr, tokens_file)
            print("mcp: Streamable HTTP with tokens and hosts: ok")
        finally:
            server.terminate()
            server.wait(timeout=DEADLINE_SECONDS)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
