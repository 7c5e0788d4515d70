// format.js: codes and numbers in words.
import { test } from "node:test";
import assert from "node:assert/strict";
import { count, explainExclusion, placement, truncate, wiPlacement } from "../../src/format.js";

const names = {
  "recap.v1.InjectionPosition": { 1: "NONE", 2: "IN_PROMPT", 3: "IN_CHAT", 4: "BEFORE_PROMPT" },
  "recap.v1.InjectionRole": { 1: "SYSTEM", 2: "USER", 3: "ASSISTANT" },
};
const api = { enumName: (type, n) => names[type]?.[n] ?? `UNKNOWN(${n})` };

test("where an injection goes", () => {
  assert.equal(placement(api, { position: 4, depth: 2, role: 1 }), "before the prompt · role SYSTEM");
  assert.equal(placement(api, { position: 3, depth: 2, role: 3 }), "in the chat history at depth 2 · role ASSISTANT");
  assert.equal(placement(api, { position: 1, depth: 0, role: 1 }), "not inserted (position NONE)");
});

test("why a recap is left out; unknown reasons as they are", () => {
  assert.match(explainExclusion("token_limit"), /token budget/);
  assert.match(explainExclusion("disabled_group_member"), /disabled in this chat's group/);
  assert.equal(explainExclusion("something_new"), "something_new");
});

test("where a World Info entry goes", () => {
  assert.equal(wiPlacement(api, { position: 4, depth: 3, role: 2, outletName: "" }), "in the chat at depth 3 · role USER");
  assert.equal(wiPlacement(api, { position: 7, depth: -1, role: 0, outletName: "notes" }), "outlet “notes”");
  assert.equal(wiPlacement(api, { position: -1, depth: -1, role: 0, outletName: "" }), "placed nowhere");
});

test("counts and cuts", () => {
  assert.equal(count(1, "message"), "1 message");
  assert.equal(count(2n, "message"), "2 messages");
  assert.equal(truncate("abcdef", 4), "abc…");
  assert.equal(truncate("abc", 4), "abc");
});
