// scene.js: scene-recap versions, the scene-break button, MessageData answers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { sceneVersions, breakAction, isVisibleBreak, fromMessageData } from "../../src/scene.js";

test("versions: the shown one, its label, and where previous and next go", () => {
  const v = sceneVersions({ scene_recap_memory: "b", scene_recap_versions: ["a", "b", "c"], scene_recap_current_index: 1 });
  assert.equal(v.label, "Version 2 of 3");
  assert.equal(v.text, "b");
  assert.deepEqual([v.prev, v.next], [0, 2]);

  const first = sceneVersions({ scene_recap_memory: "a", scene_recap_versions: ["a", "b"], scene_recap_current_index: 0 });
  assert.deepEqual([first.label, first.prev, first.next], ["Version 1 of 2", null, 1]);
  const last = sceneVersions({ scene_recap_memory: "b", scene_recap_versions: ["a", "b"], scene_recap_current_index: 1 });
  assert.deepEqual([last.label, last.prev, last.next], ["Version 2 of 2", 0, null]);
});

test("versions: an unset index reads as 0", () => {
  const v = sceneVersions({ scene_recap_memory: "a", scene_recap_versions: ["a", "b"] });
  assert.deepEqual([v.index, v.label, v.prev, v.next], [0, "Version 1 of 2", null, 1]);
});

test("versions: a scene recap stored before versions is its one version", () => {
  const v = sceneVersions({ scene_recap_memory: "only", scene_recap_versions: [] });
  assert.deepEqual(v.versions, ["only"]);
  assert.deepEqual([v.label, v.text, v.prev, v.next], ["Version 1 of 1", "only", null, null]);
});

test("versions: none without a scene recap", () => {
  for (const data of [{}, { scene_recap_memory: "" }, { scene_recap_versions: [] }]) {
    const v = sceneVersions(data);
    assert.deepEqual([v.versions.length, v.label, v.text, v.prev, v.next], [0, "", "", null, null]);
  }
});

test("versions: an index past the list shows the last version; a bad one reads as 0", () => {
  const past = sceneVersions({ scene_recap_versions: ["a", "b"], scene_recap_current_index: 9 });
  assert.deepEqual([past.index, past.text, past.next], [1, "b", null]);
  const bad = sceneVersions({ scene_recap_versions: ["a", "b"], scene_recap_current_index: -1 });
  assert.equal(bad.index, 0);
  const fraction = sceneVersions({ scene_recap_versions: ["a", "b"], scene_recap_current_index: 0.5 });
  assert.equal(fraction.index, 0);
});

test("the scene-break button marks, unmarks by hiding, and marks a hidden break again", () => {
  const none = breakAction({});
  assert.equal(none.action, "mark");
  assert.deepEqual(none.patch, { sceneBreak: true, sceneBreakVisible: true });

  const visible = breakAction({ scene_break: true });
  assert.equal(visible.action, "unmark");
  assert.deepEqual(visible.patch, { sceneBreakVisible: false });
  assert.equal(breakAction({ scene_break: true, scene_break_visible: true }).action, "unmark");

  const hidden = breakAction({ scene_break: true, scene_break_visible: false });
  assert.equal(hidden.action, "mark");
  assert.deepEqual(hidden.patch, { sceneBreakVisible: true });

  // scene_break false is no break, whatever the visibility says.
  assert.deepEqual(breakAction({ scene_break: false, scene_break_visible: false }).patch, { sceneBreak: true, sceneBreakVisible: true });
});

test("a break counts when set and not hidden", () => {
  assert.equal(isVisibleBreak({ scene_break: true }), true);
  assert.equal(isVisibleBreak({ scene_break: true, scene_break_visible: false }), false);
  assert.equal(isVisibleBreak({ scene_break_visible: true }), false);
});

test("a MessageData answer in the file's names; unset fields stay unset", () => {
  const d = fromMessageData({
    memory: "m",
    edited: true,
    sceneBreak: true,
    sceneBreakVisible: false,
    sceneBreakName: "Gate",
    sceneRecapMemory: "b",
    sceneRecapVersions: ["a", "b"],
    sceneRecapCurrentIndex: 1,
  });
  assert.deepEqual(d, {
    memory: "m",
    prefill: undefined,
    exclude: false,
    error: undefined,
    edited: true,
    scene_break: true,
    scene_break_visible: false,
    scene_break_name: "Gate",
    scene_recap_memory: "b",
    scene_recap_versions: ["a", "b"],
    scene_recap_current_index: 1,
  });
  const empty = fromMessageData({ sceneRecapVersions: [] });
  assert.equal(empty.scene_break, false);
  assert.equal(empty.scene_break_visible, undefined);
  assert.equal(empty.scene_recap_current_index, undefined);
});
