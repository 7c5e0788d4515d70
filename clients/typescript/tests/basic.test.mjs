// Publish and read, tokens, and follow's errors and deletions, against a
// live recapd, through the installed package.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Code, ConnectError, connect, InjectionPosition, isRetryableFollowError, RefreshTrigger } from "@recapd/client";
import { Recapd, tempDir, tokensFile } from "./lib/server.mjs";
import { collect } from "./lib/collect.mjs";

/** @type {Recapd} */
let open;
/** @type {Recapd} */
let guarded;
let tokensDir;

before(async () => {
  tokensDir = tempDir("recapd-ts-tokens-");
  open = new Recapd();
  guarded = new Recapd({ args: ["--auth-tokens-file", tokensFile(tokensDir.path, { "tenant-a": "secret-a-0123456789", "tenant-b": "secret-b-0123456789" })] });
  await Promise.all([open.start(), guarded.start()]);
});

after(async () => {
  await Promise.all([open?.close(), guarded?.close()]);
  tokensDir?.remove();
});

/** chat_changed with two messages. */
function chatChanged(chatId) {
  return {
    event: {
      chatId,
      kind: {
        case: "chatChanged",
        value: { messages: [{ id: "m1", name: "Alice", text: "Hi!", isUser: true }, { id: "m2", name: "Bob", text: "Hello, Alice." }] },
      },
    },
  };
}

test("Node resolves the package to its gRPC (Node) build", () => {
  assert.match(import.meta.resolve("@recapd/client"), /node_modules\/@recapd\/client\/dist\/node\.js$/);
});

test("publish then read an injection", async () => {
  const recapd = connect({ address: open.address });
  const published = await recapd.events.publish(chatChanged("basic-1"));
  assert.equal(published.revision, 1n);
  const first = await recapd.injections.getInjection({ chatId: "basic-1" });
  assert.equal(first.chatId, "basic-1");
  assert.equal(first.key, "auto_recap_scene");
  assert.equal(first.revision, 1n);
  assert.equal(first.trigger, RefreshTrigger.CHAT_CHANGED);
  assert.equal(first.text, "");

  const added = await recapd.memory.addRunningRecap({ chatId: "basic-1", content: "Alice and Bob met.", sceneCount: 1, newSceneMessageId: "m2" });
  const second = await recapd.injections.getInjection({ chatId: "basic-1" });
  assert.equal(second.revision, 2n);
  assert.equal(second.position, InjectionPosition.BEFORE_PROMPT);
  assert.match(second.text, /Alice and Bob met\./);
  assert.equal(second.runningRecapVersion, added.version);
});

test("an http:// URL address works as host:port does", async () => {
  const recapd = connect({ address: `http://${open.address}` });
  await recapd.events.publish(chatChanged("basic-url"));
  const injection = await recapd.injections.getInjection({ chatId: "basic-url" });
  assert.equal(injection.revision, 1n);
});

test("addresses that cannot work are refused at once", () => {
  assert.throws(() => connect({ address: "" }), TypeError);
  assert.throws(() => connect({ address: "ftp://127.0.0.1:1" }), /http/);
  assert.throws(() => connect({ address: `http://${open.address}`, tls: true }), /tls/);
});

test("errors come back as ConnectError with the server's code", async () => {
  const recapd = connect({ address: open.address });
  await assert.rejects(recapd.injections.getInjection({ chatId: "no-such-chat" }), (error) => {
    assert.ok(error instanceof ConnectError);
    assert.equal(error.code, Code.NotFound);
    return true;
  });
  await assert.rejects(recapd.events.publish({ event: { chatId: "x" } }), (error) => {
    assert.equal(error.code, Code.InvalidArgument);
    assert.match(error.rawMessage, /event\.kind/);
    return true;
  });
});

test("the token is sent on every call", async () => {
  const anonymous = connect({ address: guarded.address });
  await assert.rejects(anonymous.events.publish(chatChanged("auth-1")), (error) => error.code === Code.Unauthenticated);
  const wrong = connect({ address: guarded.address, token: "not-a-token-0123456789" });
  await assert.rejects(wrong.injections.getInjection({ chatId: "auth-1" }), (error) => error.code === Code.Unauthenticated);

  const tenantA = connect({ address: guarded.address, token: "secret-a-0123456789" });
  assert.equal((await tenantA.events.publish(chatChanged("auth-1"))).revision, 1n);
  assert.equal((await tenantA.injections.getInjection({ chatId: "auth-1" })).revision, 1n);
  const listed = await tenantA.memory.listChats({});
  assert.deepEqual(listed.chats.map((c) => c.chatId), ["auth-1"]);
  // Another tenant does not see it: the token is what tells them apart.
  const tenantB = connect({ address: guarded.address, token: "secret-b-0123456789" });
  await assert.rejects(tenantB.injections.getInjection({ chatId: "auth-1" }), (error) => error.code === Code.NotFound);
  // Streams carry it too.
  const stop = new AbortController();
  const followed = collect(tenantA.follow(["auth-1"], { signal: stop.signal }));
  await followed.until((items) => items.length === 1, 10_000, "the snapshot over an authenticated stream");
  stop.abort();
  await followed.finished;
  assert.equal(followed.error, undefined);
});

test("follow throws UNAUTHENTICATED and INVALID_ARGUMENT instead of retrying", async () => {
  let retries = 0;
  const onRetry = () => retries++;
  const anonymous = connect({ address: guarded.address });
  const refused = collect(anonymous.follow(["auth-1"], { onRetry }));
  await refused.finished;
  assert.equal(refused.error?.code, Code.Unauthenticated);

  const recapd = connect({ address: open.address });
  const invalid = collect(recapd.follow(["bad\nid"], { onRetry }));
  await invalid.finished;
  assert.equal(invalid.error?.code, Code.InvalidArgument);
  assert.equal(retries, 0);
});

test("follow yields updates in order, and a deleted chat's last injection", async () => {
  const recapd = connect({ address: open.address });
  await recapd.events.publish(chatChanged("follow-1"));
  const stop = new AbortController();
  const followed = collect(recapd.follow(["follow-1"], { signal: stop.signal }));
  await followed.until((items) => items.length >= 1, 10_000, "the snapshot");
  assert.equal(followed.items[0].revision, 1n);

  await recapd.events.publish({ event: { chatId: "follow-1", kind: { case: "refreshRequested", value: {} } } });
  await followed.until((items) => items.some((i) => i.revision === 2n), 10_000, "revision 2");
  const deleted = await recapd.memory.deleteChat({ chatId: "follow-1" });
  await followed.until((items) => items.some((i) => i.deleted), 10_000, "the deleted injection");
  const last = followed.items.at(-1);
  assert.equal(last.deleted, true);
  assert.equal(last.revision, deleted.revision);
  assert.equal(last.trigger, RefreshTrigger.CHAT_DELETED);
  stop.abort();
  await followed.finished;
  assert.equal(followed.error, undefined);
  assert.deepEqual(followed.items.map((i) => i.revision), [1n, 2n, deleted.revision]);
});

test("leaving a for-await loop ends follow's stream", async () => {
  const recapd = connect({ address: open.address });
  await recapd.events.publish(chatChanged("follow-break"));
  for await (const injection of recapd.follow(["follow-break"])) {
    assert.equal(injection.revision, 1n);
    break;
  }
});

test("which errors follow retries", () => {
  const fromServer = (code) => new ConnectError("from the server", code, new Headers({ "grpc-status": String(code) }));
  const fromClient = (code) => new ConnectError("made by the client", code);
  for (const code of [Code.Unavailable, Code.Aborted]) {
    assert.ok(isRetryableFollowError(fromServer(code)));
    assert.ok(isRetryableFollowError(fromClient(code)));
  }
  for (const code of [Code.Canceled, Code.Internal, Code.Unknown]) {
    assert.ok(isRetryableFollowError(fromClient(code)), `client-made ${Code[code]}`);
    assert.ok(!isRetryableFollowError(fromServer(code)), `server-sent ${Code[code]}`);
  }
  for (const code of [Code.InvalidArgument, Code.Unauthenticated, Code.PermissionDenied, Code.NotFound, Code.ResourceExhausted, Code.DeadlineExceeded]) {
    assert.ok(!isRetryableFollowError(fromClient(code)), Code[code]);
  }
});
