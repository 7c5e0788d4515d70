// routes.js: the page's addresses.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chatHref, parseRoute } from "../../src/routes.js";

const at = (hash) => {
  globalThis.location = { hash };
};
const TABS = ["timeline", "jobs"];

test("a chat's address and back, with ids that need escaping", () => {
  for (const id of ["plain", "with space/and slash", "ünïcode #1", "%41"]) {
    at(chatHref(id, "jobs"));
    assert.deepEqual(parseRoute(TABS), { chatId: id, tab: "jobs" });
  }
});

test("no chat, an unknown view, a malformed id", () => {
  at("");
  assert.deepEqual(parseRoute(TABS), { chatId: null, tab: null });
  at("#/chat/abc/nope");
  assert.deepEqual(parseRoute(TABS), { chatId: "abc", tab: null });
  at("#/chat/%E0%A4%A");
  assert.deepEqual(parseRoute(TABS), { chatId: null, tab: null });
});
