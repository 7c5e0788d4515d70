// The open chat's family, in its header: the chat it is a branch of (a
// link, with the message it was branched at when recapd knows it) and the
// chats branched from it (links). Computed (family.js) from the chats the
// chat list read (ListChats, every page up to its bound) and drawn again at
// each of its reads, so a branch made from the page shows once the list is
// read again.
import { h, replace } from "../dom.js";
import { chatHref } from "../routes.js";
import { chatFamily } from "../family.js";

/**
 * @typedef {{ listen(listener: (state: import("./chats.js").ChatListState) => void): () => void }} ChatSource
 */

/**
 * @param {string} chatId the open chat
 * @param {ChatSource} source the chat list
 * @returns {{ element: HTMLElement, dispose(): void }}
 */
export function mountChatFamily(chatId, source) {
  const element = h("p", { class: "chat-family small", "data-testid": "chat-family" });
  /** @type {boolean} whether a read has completed */
  let read = false;
  const stop = source.listen((state) => {
    if (state.error && !read) {
      replace(element, h("span", { class: "muted" }, `Could not read the chat's family: ${state.error}`));
      return;
    }
    if (state.loading && !read && state.chats.length === 0) {
      replace(element, h("span", { class: "muted" }, "Reading the chat's family…"));
      return;
    }
    if (!state.loading) read = true;
    const family = chatFamily(state.chats, chatId, state.truncated);
    replace(
      element,
      family.parent ? parentPart(family.parent, family.incomplete) : null,
      branchesPart(family.branches),
      family.incomplete
        ? h("span", { class: "muted", "data-testid": "family-incomplete" }, ` Only the first ${state.max} chats were read: the family may be incomplete.`)
        : null,
    );
  });
  return {
    element,
    dispose() {
      stop();
    },
  };
}

/**
 * "Branch of <parent> at message <id>. "
 * @param {NonNullable<import("../family.js").ChatFamily["parent"]>} parent
 * @param {boolean} incomplete
 */
function parentPart(parent, incomplete) {
  return h(
    "span",
    { "data-testid": "chat-parent", dataset: { chatId: parent.chatId, messageId: parent.messageId } },
    "Branch of ",
    familyLink(parent.chatId, `Parent chat ${parent.chatId}`),
    parent.messageId
      ? [" at message ", h("code", { "data-testid": "chat-parent-message" }, parent.messageId)]
      : h("span", { class: "muted" }, " (imported from a SillyTavern branch file: the message is not recorded)"),
    !parent.listed && !incomplete ? h("span", { class: "muted" }, " (no longer among the chats: deleted?)") : null,
    ". ",
  );
}

/**
 * "Branches: <a> at message <id>, <b>." or "No branches."
 * @param {import("../family.js").FamilyMember[]} branches
 */
function branchesPart(branches) {
  if (branches.length === 0) return h("span", { class: "muted", "data-testid": "chat-branches" }, "No branches.");
  return h(
    "span",
    { "data-testid": "chat-branches" },
    `${branches.length === 1 ? "Branch" : "Branches"}: `,
    branches.map((b, i) => [
      i ? ", " : "",
      familyLink(b.chatId, `Branch ${b.chatId}`),
      b.messageId ? [" at message ", h("code", null, b.messageId)] : "",
    ]),
    ".",
  );
}

/**
 * @param {string} chatId
 * @param {string} label
 */
function familyLink(chatId, label) {
  return h("a", { href: chatHref(chatId), class: "family-link", "aria-label": label, dataset: { chatId } }, h("code", null, chatId));
}
