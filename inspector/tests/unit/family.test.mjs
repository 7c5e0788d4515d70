// family.js: a chat's parent and branches from ListChats, the chat list's
// note, the branch's default id and BranchChat's answer in words.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chatFamily, branchNote, defaultBranchId, describeBranch } from "../../src/family.js";

/** ChatSummary-like entries, as protobuf-es gives them (unset strings are ""). */
const chat = (chatId, parentChatId = "", parentMessageId = "") => ({ chatId, parentChatId, parentMessageId });

const CHATS = [
  chat("main"),
  chat("main-branch-m4", "main", "m4"),
  chat("a-branch", "main", "m1"),
  chat("imported", "main"),
  chat("grandchild", "main-branch-m4", "m2"),
  chat("orphan", "deleted-parent", "m9"),
  chat("other"),
];

test("a chat's branches are the chats naming it as parent, by id, with where each was made", () => {
  const family = chatFamily(CHATS, "main");
  assert.equal(family.known, true);
  assert.equal(family.parent, null);
  assert.deepEqual(family.branches, [
    { chatId: "a-branch", messageId: "m1" },
    { chatId: "imported", messageId: "" },
    { chatId: "main-branch-m4", messageId: "m4" },
  ]);
  assert.equal(family.incomplete, false);
});

test("a branch names its parent and the message; a branch of a branch has both a parent and branches", () => {
  const family = chatFamily(CHATS, "main-branch-m4");
  assert.deepEqual(family.parent, { chatId: "main", messageId: "m4", listed: true });
  assert.deepEqual(family.branches, [{ chatId: "grandchild", messageId: "m2" }]);
});

test("an imported branch file names its parent without a message", () => {
  assert.deepEqual(chatFamily(CHATS, "imported").parent, { chatId: "main", messageId: "", listed: true });
});

test("a parent no longer listed is still named, marked unlisted", () => {
  const family = chatFamily(CHATS, "orphan");
  assert.deepEqual(family.parent, { chatId: "deleted-parent", messageId: "m9", listed: false });
  assert.deepEqual(family.branches, []);
});

test("a chat not among those read: no parent, its branches all the same, and a cut list says so", () => {
  const family = chatFamily([chat("b", "unlisted", "m1")], "unlisted", true);
  assert.equal(family.known, false);
  assert.equal(family.parent, null);
  assert.deepEqual(family.branches, [{ chatId: "b", messageId: "m1" }]);
  assert.equal(family.incomplete, true);
});

test("summaries without the parent fields (an older server) have no family", () => {
  const family = chatFamily([{ chatId: "x" }, { chatId: "y" }], "x");
  assert.deepEqual([family.parent, family.branches], [null, []]);
  assert.equal(branchNote({ chatId: "x" }), "");
});

test("a chat naming itself as parent is not its own branch", () => {
  const family = chatFamily([chat("self", "self", "m0")], "self");
  assert.deepEqual(family.branches, []);
});

test("the chat list's note", () => {
  assert.equal(branchNote(chat("main-branch-m4", "main", "m4")), "branch of main");
  assert.equal(branchNote(chat("main")), "");
});

test("the default id of a branch", () => {
  assert.equal(defaultBranchId("tavern-1", "m4"), "tavern-1-branch-m4");
  assert.equal(defaultBranchId("Bob - 2024", "msg 7"), "Bob - 2024-branch-msg 7");
});

test("BranchChat's answer in words", () => {
  assert.equal(
    describeBranch({ chatId: "b", messageCount: 5, runningRecapCount: 1, chatBook: "" }),
    "5 messages, 1 running-recap version, no chat book",
  );
  assert.equal(
    describeBranch({ chatId: "b", messageCount: 1, runningRecapCount: 0, chatBook: "Lore of b" }),
    "1 message, 0 running-recap versions, chat book “Lore of b”",
  );
});
