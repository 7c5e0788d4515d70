// followInjections against a scripted InjectionService client (no server):
// the revision filter per chat and injection key across resubscriptions,
// a single chat id given as a string, which errors end it, and an abort
// during the back-off.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Code, ConnectError, followInjections } from "@recapd/client";
import { within } from "./lib/server.mjs";
import { collect } from "./lib/collect.mjs";

const injection = (chatId, key, revision) => ({ chatId, key, revision: BigInt(revision) });
const fromServer = (code) => new ConnectError("sent by the server", code, new Headers({ "grpc-status": String(code) }));

/**
 * An InjectionService client whose n-th `subscribe` yields `script[n].send`
 * and then throws `script[n].error`, ends (`end: true`), or, past the
 * script, waits for the call's signal (as a live stream would).
 */
function scripted(script) {
  const requests = [];
  return {
    requests,
    subscribe(request, options) {
      const step = script[requests.length];
      requests.push(request);
      return (async function* () {
        for (const item of step?.send ?? []) yield item;
        if (step?.error) throw step.error;
        if (step?.end) return;
        await new Promise((resolve) => {
          if (options.signal.aborted) resolve();
          options.signal.addEventListener("abort", resolve, { once: true });
        });
        throw new ConnectError("the operation was aborted", Code.Canceled);
      })();
    },
  };
}

test("follow filters per chat and key across resubscriptions", async () => {
  const client = scripted([
    { send: [injection("chat-a", "auto_recap_scene", 1), injection("chat-a", "auto_recap_messages", 1), injection("chat-a", "auto_recap_recall", 1)], error: new ConnectError("connection reset", Code.Unavailable) },
    // The resubscription's snapshot repeats every key's current injection;
    // then the message tier's revision 2 and the scene's 2.
    { send: [injection("chat-a", "auto_recap_scene", 1), injection("chat-a", "auto_recap_messages", 1), injection("chat-a", "auto_recap_recall", 1), injection("chat-a", "auto_recap_messages", 2), injection("chat-a", "auto_recap_scene", 2)], end: true },
    // An older scene revision (1) after 2 is never yielded; the recall
    // tier's 2 is not hidden by the scene's 3, nor chat b's 1 by chat-a's;
    // an empty key is the scene's (3 again: skipped).
    { send: [injection("chat-a", "auto_recap_scene", 2), injection("chat-a", "auto_recap_scene", 1), injection("chat-a", "auto_recap_messages", 2), injection("chat-a", "auto_recap_scene", 3), injection("chat-a", "auto_recap_recall", 2), injection("b", "auto_recap_scene", 1), injection("chat-a", "", 3), injection("b", "auto_recap_scene", 2)] },
  ]);
  const retries = [];
  const stop = new AbortController();
  const followed = collect(
    followInjections(client, "chat-a", { signal: stop.signal, initialBackoffMs: 1, onRetry: ({ error }) => retries.push(error?.code) }),
  );
  await followed.until((items) => items.some((i) => i.chatId === "b" && i.revision === 2n), 10_000, "chat b's revision 2, the last one");
  stop.abort();
  await within(followed.finished, 10_000, "follow to end after the abort");
  assert.equal(followed.error, undefined);
  assert.deepEqual(
    followed.items.map((i) => `${i.chatId}/${i.key}@${i.revision}`),
    [
      "chat-a/auto_recap_scene@1",
      "chat-a/auto_recap_messages@1",
      "chat-a/auto_recap_recall@1",
      "chat-a/auto_recap_messages@2",
      "chat-a/auto_recap_scene@2",
      "chat-a/auto_recap_scene@3",
      "chat-a/auto_recap_recall@2",
      "b/auto_recap_scene@1",
      "b/auto_recap_scene@2",
    ],
  );
  assert.deepEqual(retries, [Code.Unavailable, undefined]);
  // A string is one chat id, not its characters.
  assert.deepEqual(client.requests.map((r) => r.chatIds), [["chat-a"], ["chat-a"], ["chat-a"]]);
});

test("follow throws a server's error that is not retried, at once", async () => {
  const client = scripted([{ send: [injection("a", "auto_recap_scene", 1)], error: fromServer(Code.Internal) }]);
  let retries = 0;
  const followed = collect(followInjections(client, ["a"], { initialBackoffMs: 1, onRetry: () => retries++ }));
  await within(followed.finished, 10_000, "follow to throw");
  assert.equal(followed.error?.code, Code.Internal);
  assert.equal(retries, 0);
  assert.equal(client.requests.length, 1);
});

test("an abort during the back-off ends follow at once", async () => {
  const always = { subscribe: () => (async function* () { throw new ConnectError("down", Code.Unavailable); })() };
  const stop = new AbortController();
  const followed = collect(followInjections(always, ["a"], { signal: stop.signal, initialBackoffMs: 60_000, maxBackoffMs: 60_000, onRetry: () => setTimeout(() => stop.abort(), 50) }));
  await within(followed.finished, 5_000, "follow to end when aborted in its back-off");
  assert.equal(followed.error, undefined);
  assert.deepEqual(followed.items, []);
});
