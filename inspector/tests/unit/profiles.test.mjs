import { test } from "node:test";
import assert from "node:assert/strict";
import { groupOfChat, parsePatch, disabledMembers } from "../../src/profiles.js";

const groups = [
  { id: "g1", chats: ["a", "b"] },
  { id: "g2", chats: ["c"] },
];

test("groupOfChat: the summary's group first, else the group listing the chat", () => {
  assert.equal(groupOfChat(groups, "c", "g1")?.id, "g1");
  assert.equal(groupOfChat(groups, "c")?.id, "g2");
  assert.equal(groupOfChat(groups, "c", "unknown")?.id, "g2");
  assert.equal(groupOfChat(groups, "z"), undefined);
});

test("parsePatch: an object, empty for none, errors in words", () => {
  assert.deepEqual(parsePatch("  "), { ok: true, value: {} });
  assert.deepEqual(parsePatch('{"depth": 3}'), { ok: true, value: { depth: 3 } });
  const bad = parsePatch("{depth");
  assert.equal(bad.ok, false);
  assert.match(/** @type {any} */ (bad).error, /not JSON/);
  assert.equal(parsePatch("[1]").ok, false);
  assert.equal(parsePatch("null").ok, false);
  assert.equal(parsePatch('{"profile": "x"}').ok, false);
});

test("disabledMembers: ticked members in order, unknown keys kept", () => {
  const ticked = new Set(["bob.png"]);
  assert.deepEqual(disabledMembers(["amy.png", "bob.png"], ["amy.png", "ghost.png"], (m) => ticked.has(m)), ["bob.png", "ghost.png"]);
  assert.deepEqual(disabledMembers(["amy.png"], [], () => false), []);
});
