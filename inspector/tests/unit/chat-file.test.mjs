// chat-file.js: ExportChat's lines lined up with GetInclusion's messages.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadChatFile } from "../../src/chat-file.js";

const enc = (lines) => new TextEncoder().encode(lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
const inc = (id, over = {}) => ({ messageId: id, included: false, hidden: false, tokenCount: 3, excludedReason: "no_memory", ...over });

/** An api whose ExportChat and GetInclusion answer the given sequences. */
function fakeApi(exports, inclusions) {
  let e = 0;
  let i = 0;
  return {
    clients: {
      memory: { exportChat: async () => ({ jsonl: enc(exports[Math.min(e++, exports.length - 1)]) }) },
      injection: { getInclusion: async () => ({ messages: inclusions[Math.min(i++, inclusions.length - 1)] }) },
    },
  };
}

test("a file with a header: the lines after it are the messages, ids by position", async () => {
  const api = fakeApi(
    [[
      { chat_metadata: {} },
      { name: "Ann", is_user: true, mes: "Hi", extra: {} },
      { name: "Bob", mes: "Hello", extra: { auto_recap_memory: { memory: "Bob greets.", scene_break: true, scene_break_name: "Meeting", scene_recap_memory: "They meet." } } },
    ]],
    [[inc("m0"), inc("m1", { included: true, excludedReason: "" })]],
  );
  const out = await loadChatFile(api, "c", 0);
  assert.equal(out.length, 2);
  assert.deepEqual([out[0].id, out[0].name, out[0].isUser, out[0].text], ["m0", "Ann", true, "Hi"]);
  assert.equal(out[1].included, true);
  assert.equal(out[1].sceneBreak, true);
  assert.equal(out[1].data.memory, "Bob greets.");
  assert.equal(out[1].data.scene_break_name, "Meeting");
  assert.equal(out[1].data.scene_recap_memory, "They meet.");
});

test("a file without a header; ids from extra.recapd_message_id", async () => {
  const api = fakeApi(
    [[{ mes: "x", extra: { recapd_message_id: "a", type: "narrator" } }, { mes: "y", extra: { recapd_message_id: "b" } }]],
    [[inc("a"), inc("b")]],
  );
  const out = await loadChatFile(api, "c", 0);
  assert.deepEqual(out.map((m) => m.id), ["a", "b"]);
  assert.equal(out[0].isNarrator, true);
});

test("hidden inside auto-hide's prefix is auto-hidden, after it hidden by hand", async () => {
  const lines = [{ chat_metadata: {} }, { mes: "0" }, { mes: "1" }, { mes: "2" }];
  const api = fakeApi([lines], [[inc("m0", { hidden: true }), inc("m1", { hidden: true }), inc("m2", { hidden: true })]]);
  const out = await loadChatFile(api, "c", 2);
  assert.deepEqual(out.map((m) => m.hidden), ["auto", "auto", "hand"]);
});

test("reads again when the two answers do not line up, then falls back to the inclusion alone", async () => {
  // First the file has one message more (the chat changed in between), then they agree.
  const api = fakeApi(
    [[{ mes: "0" }, { mes: "1" }, { mes: "2" }], [{ mes: "0" }, { mes: "1" }]],
    [[inc("m0"), inc("m1")]],
  );
  const out = await loadChatFile(api, "c", 0);
  assert.deepEqual(out.map((m) => m.text), ["0", "1"]);

  // Never agreeing: the messages come from GetInclusion, without their texts.
  const never = fakeApi([[{ mes: "0", extra: { recapd_message_id: "zz" } }]], [[inc("m0")]]);
  const fallback = await loadChatFile(never, "c", 0);
  assert.equal(fallback.length, 1);
  assert.equal(fallback[0].id, "m0");
  assert.match(fallback[0].text, /unavailable/);
});

test("scene-recap versions and the shown index come from the file; absent ones read as none", async () => {
  const api = fakeApi(
    [[
      { mes: "a", extra: { auto_recap_memory: { scene_break: true, scene_recap_memory: "two", scene_recap_versions: ["one", "two", 3], scene_recap_current_index: 1 } } },
      { mes: "b", extra: { auto_recap_memory: { scene_break: true, scene_recap_memory: "old", scene_recap_current_index: "1" } } },
    ]],
    [[inc("m0"), inc("m1")]],
  );
  const out = await loadChatFile(api, "c", 0);
  assert.deepEqual(out[0].data.scene_recap_versions, ["one", "two", ""]);
  assert.equal(out[0].data.scene_recap_current_index, 1);
  assert.deepEqual(out[1].data.scene_recap_versions, []);
  assert.equal(out[1].data.scene_recap_current_index, undefined);
});
