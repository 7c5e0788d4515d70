// follow across a kill -9 of the server and a restart on the same port and
// data directory, then across a clean shutdown (the stream ends normally)
// and a restart: no revision twice, none out of order, and the updates
// after each restart arrive.
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@recapd/client";
import { Recapd, within } from "./lib/server.mjs";
import { collect } from "./lib/collect.mjs";

const CHAT = "restart-1";
// Refreshed only to show that follow has subscribed again: once its new
// revision arrives, the new subscription's snapshot has repeated CHAT's
// current revision, which must have been skipped.
const PROBE = "restart-probe";
const WAIT = 20_000;

test("follow survives kill -9 and a restart, and a clean restart", async (t) => {
  const server = new Recapd();
  t.after(() => server.close());
  await server.start();
  const recapd = connect({ address: server.address });
  const refreshChat = async (chatId) => (await recapd.events.publish({ event: { chatId, kind: { case: "refreshRequested", value: {} } } })).revision;
  const refresh = () => refreshChat(CHAT);

  assert.equal(await refresh(), 1n);
  assert.equal(await refreshChat(PROBE), 1n);
  /** @type {Array<{ code?: number, attempt: number, delayMs: number }>} */
  const retries = [];
  const stop = new AbortController();
  const followed = collect(
    recapd.follow([CHAT, PROBE], {
      signal: stop.signal,
      initialBackoffMs: 50,
      maxBackoffMs: 500,
      onRetry: ({ error, attempt, delayMs }) => retries.push({ code: error?.code, attempt, delayMs }),
    }),
  );
  const has = (revision, chatId = CHAT) => (items) => items.some((i) => i.chatId === chatId && i.revision === revision);
  await followed.until(has(1n), WAIT, "revision 1 (the snapshot)");
  await followed.until(has(1n, PROBE), WAIT, "the probe's revision 1 (the snapshot)");
  assert.equal(await refresh(), 2n);
  assert.equal(await refresh(), 3n);
  await followed.until(has(3n), WAIT, "revision 3");

  // kill -9: the stream breaks; follow retries until the server is back.
  await server.kill();
  await new Promise((resolve) => setTimeout(resolve, 300));
  await server.start();
  const afterKill = retries.length;
  assert.ok(afterKill >= 1, "follow retried after the kill");
  // The probe's revision 2 shows that follow subscribed again: that
  // subscription began with CHAT's revision 3, again (skipped). 5 and 6
  // are published once 4 arrived, so they come live on the new stream.
  assert.equal(await refreshChat(PROBE), 2n);
  await followed.until(has(2n, PROBE), WAIT, "the probe's revision 2, after the restart");
  assert.equal(await refresh(), 4n);
  await followed.until(has(4n), WAIT, "revision 4, after the restart");
  assert.equal(await refresh(), 5n);
  assert.equal(await refresh(), 6n);
  await followed.until(has(6n), WAIT, "revision 6, live after the restart");

  // A clean shutdown ends the stream normally: follow subscribes again.
  await server.stop();
  await server.start();
  assert.equal(await refreshChat(PROBE), 3n);
  await followed.until(has(3n, PROBE), WAIT, "the probe's revision 3, after the clean restart");
  assert.equal(await refresh(), 7n);
  await followed.until(has(7n), WAIT, "revision 7, after a clean restart");
  assert.ok(retries.slice(afterKill).some((r) => r.code === undefined), "the clean shutdown ended the stream normally");

  stop.abort();
  await within(followed.finished, WAIT, "follow to end after the abort");
  assert.equal(followed.error, undefined);
  const revisions = followed.items.filter((i) => i.chatId === CHAT).map((i) => i.revision);
  for (let i = 1; i < revisions.length; i++) {
    assert.ok(revisions[i] > revisions[i - 1], `revisions strictly increase: ${revisions.join(", ")}`);
  }
  assert.deepEqual(revisions, [1n, 2n, 3n, 4n, 5n, 6n, 7n]);
  assert.deepEqual(followed.items.filter((i) => i.chatId === PROBE).map((i) => i.revision), [1n, 2n, 3n]);
  assert.ok(followed.items.every((i) => i.key === "auto_recap_scene"));
  assert.ok(retries.every((r) => r.delayMs <= 500), "waits stay under maxBackoffMs");
});

test("follow started while the server is down waits for it", async (t) => {
  const server = new Recapd();
  t.after(() => server.close());
  await server.start();
  const recapd = connect({ address: server.address });
  await recapd.events.publish({ event: { chatId: CHAT, kind: { case: "refreshRequested", value: {} } } });
  await server.kill();

  let retries = 0;
  const stop = new AbortController();
  const followed = collect(recapd.follow([CHAT], { signal: stop.signal, initialBackoffMs: 50, maxBackoffMs: 300, onRetry: () => retries++ }));
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.ok(retries >= 1, "follow retried while the server was down");
  assert.equal(followed.items.length, 0);
  await server.start();
  await followed.until((items) => items.length === 1, WAIT, "the snapshot once the server is up");
  assert.equal(followed.items[0].revision, 1n);
  stop.abort();
  await within(followed.finished, WAIT, "follow to end after the abort");
  assert.equal(followed.error, undefined);
});
