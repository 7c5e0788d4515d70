// A chat's family, apart from the page: the chat it is a branch of and
// the chats branched from it, as ListChats' summaries tell them
// (ChatSummary.parent_chat_id, parent_message_id: a chat's branches are
// the chats naming it as parent); the chat list's "branch of" note; and
// the "Branch here" action's rules (the new chat's default id, BranchChat's
// answer in words).
import { count } from "./format.js";

/**
 * @typedef {object} FamilyMember
 * @property {string} chatId
 * @property {string} messageId the message the branch was made at; "" when
 *   not recorded (an imported SillyTavern branch file)
 *
 * @typedef {object} ChatFamily
 * @property {boolean} known whether the chat itself is among the chats read
 * @property {(FamilyMember & { listed: boolean }) | null} parent the chat this
 *   one is a branch of (`messageId`: where), null when it is none or not
 *   known; `listed`: whether the parent is among the chats read (a deleted
 *   parent is still named by its branches)
 * @property {FamilyMember[]} branches the chats branched from this one, by id
 * @property {boolean} incomplete the chats read were cut: a parent or
 *   branch past the cut is missing
 */

/**
 * A chat's parent and branches among the chats read from ListChats.
 * @param {Array<{ chatId: string, parentChatId?: string, parentMessageId?: string }>} chats
 * @param {string} chatId
 * @param {boolean} [truncated] the list was cut before its end
 * @returns {ChatFamily}
 */
export function chatFamily(chats, chatId, truncated = false) {
  const self = chats.find((c) => c.chatId === chatId);
  const parentId = self?.parentChatId ?? "";
  const parent = parentId
    ? { chatId: parentId, messageId: self?.parentMessageId ?? "", listed: chats.some((c) => c.chatId === parentId) }
    : null;
  const branches = chats
    .filter((c) => c.chatId !== chatId && (c.parentChatId ?? "") === chatId)
    .map((c) => ({ chatId: c.chatId, messageId: c.parentMessageId ?? "" }))
    .sort((a, b) => (a.chatId < b.chatId ? -1 : a.chatId > b.chatId ? 1 : 0));
  return { known: self !== undefined, parent, branches, incomplete: truncated };
}

/**
 * The chat list's note for a branch ("branch of X"), or "" for a chat that
 * is none.
 * @param {{ parentChatId?: string }} chat
 */
export function branchNote(chat) {
  return chat.parentChatId ? `branch of ${chat.parentChatId}` : "";
}

/**
 * The id "Branch here" offers for the new chat: `<chat id>-branch-<message id>`.
 * recapd checks it (and says ALREADY_EXISTS for a chat that exists).
 * @param {string} chatId
 * @param {string} messageId
 */
export function defaultBranchId(chatId, messageId) {
  return `${chatId}-branch-${messageId}`;
}

/**
 * BranchChat's answer in words: "5 messages, 1 running-recap version, chat
 * book “X”" (or "no chat book").
 * @param {{ messageCount: number, runningRecapCount: number, chatBook: string }} answer
 */
export function describeBranch(answer) {
  const book = answer.chatBook ? `chat book “${answer.chatBook}”` : "no chat book";
  return `${count(answer.messageCount, "message")}, ${count(answer.runningRecapCount, "running-recap version")}, ${book}`;
}
