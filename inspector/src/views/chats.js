// The tenant's chats (MemoryService.ListChats, every page): searchable by
// id, with their enabled state, size, revision and last activity, and for a
// branch the chat it is a branch of. The open chat's family (its parent and
// branches) is computed from the same read: `listen` hands it every list read.
import { h, replace, field, badge, timeEl } from "../dom.js";
import { listAll, describeError } from "../api.js";
import { branchNote } from "../family.js";

const MAX_CHATS = 20000;

/**
 * What the list has read, handed to its listeners.
 * @typedef {object} ChatListState
 * @property {any[]} chats the ChatSummary messages read, by chat id
 * @property {boolean} truncated the read stopped at `max` chats
 * @property {number} max the most chats read
 * @property {boolean} loading a read is under way
 * @property {string | null} error why the last read failed
 */

/**
 * @param {HTMLElement} container
 * @param {import("../api.js").Api} api
 * @param {{ hrefFor: (chatId: string) => string }} opts
 */
export function mountChatList(container, api, { hrefFor }) {
  /** @type {any[]} */
  let chats = [];
  let truncated = false;
  /** @type {string | null} */
  let current = null;
  let loading = false;
  // Reads may overlap (a refresh after each edit): only the latest one counts.
  let readSeq = 0;
  /** @type {string | null} */
  let readError = null;
  /** @type {Set<(state: ChatListState) => void>} */
  const listeners = new Set();
  const state = () => ({ chats, truncated, max: MAX_CHATS, loading, error: readError });
  const tell = () => {
    for (const listener of listeners) listener(state());
  };

  const search = /** @type {HTMLInputElement} */ (
    h("input", { type: "search", autocomplete: "off", spellcheck: "false", "data-testid": "chat-search" })
  );
  const status = h("p", { class: "muted small", role: "status" });
  const list = h("ul", { class: "chat-list", "data-testid": "chat-list" });
  const refreshBtn = h("button", { type: "button", class: "small", onclick: () => refresh() }, "Refresh");

  replace(
    container,
    h("div", { class: "sidebar-head" }, h("h2", null, "Chats"), refreshBtn),
    field("Search chats", search),
    status,
    list,
  );
  search.addEventListener("input", () => render());

  function render() {
    const query = search.value.trim().toLowerCase();
    const shown = query ? chats.filter((c) => c.chatId.toLowerCase().includes(query)) : chats;
    const items = shown.slice(0, 500).map((c) => {
      const isCurrent = c.chatId === current;
      const note = branchNote(c);
      return h(
        "li",
        null,
        h(
          "a",
          {
            href: hrefFor(c.chatId),
            class: "chat-link",
            "aria-current": isCurrent ? "page" : undefined,
            dataset: { chatId: c.chatId },
          },
          h("span", { class: "chat-id" }, c.chatId),
          h(
            "span",
            { class: "chat-meta" },
            c.enabled ? badge("enabled", "ok") : badge("disabled", "muted"),
            ` ${c.messageCount} msg · rev ${c.revision} · `,
            timeEl(c.updatedAt, true),
          ),
          note ? h("span", { class: "chat-meta chat-branch-note", "data-testid": "chat-branch-note" }, note) : null,
        ),
      );
    });
    replace(list, items);
    if (loading && chats.length === 0) status.textContent = "Loading chats…";
    else if (chats.length === 0) status.textContent = "No chats yet.";
    else {
      let text = query
        ? `${shown.length} of ${chats.length} chats match.`
        : `${chats.length} chats.`;
      if (shown.length > 500) text += " Showing the first 500: refine the search.";
      if (truncated) text += ` Only the first ${MAX_CHATS} chats were loaded.`;
      status.textContent = text;
    }
  }

  async function refresh() {
    const seq = ++readSeq;
    loading = true;
    render();
    tell();
    try {
      const result = await listAll(
        (pageToken) => api.clients.memory.listChats({ pageSize: 1000, pageToken }),
        "chats",
        MAX_CHATS,
      );
      if (seq !== readSeq) return;
      chats = result.items;
      truncated = result.truncated;
      readError = null;
    } catch (err) {
      if (seq !== readSeq) return;
      readError = describeError(err);
      status.textContent = `Could not list the chats: ${readError}`;
      loading = false;
      tell();
      return;
    }
    loading = false;
    render();
    tell();
  }

  refresh();

  return {
    /** @param {string | null} chatId */
    setCurrent(chatId) {
      current = chatId;
      for (const a of list.querySelectorAll("a.chat-link")) {
        const el = /** @type {HTMLElement} */ (a);
        if (el.dataset.chatId === chatId) el.setAttribute("aria-current", "page");
        else el.removeAttribute("aria-current");
      }
    },
    refresh,
    /**
     * Hands `listener` what the list holds now, then every read's result.
     * @param {(state: ChatListState) => void} listener
     * @returns {() => void} stops listening
     */
    listen(listener) {
      listeners.add(listener);
      listener(state());
      return () => listeners.delete(listener);
    },
    /**
     * Updates one chat's entry from what the open chat learnt (its latest
     * injection), without reading the whole list again.
     * @param {string} chatId
     * @param {{ revision?: bigint, enabled?: boolean }} change
     */
    update(chatId, change) {
      const chat = chats.find((c) => c.chatId === chatId);
      if (!chat) return;
      let changed = false;
      if (change.revision !== undefined && change.revision > chat.revision) {
        chat.revision = change.revision;
        changed = true;
      }
      if (change.enabled !== undefined && change.enabled !== chat.enabled) {
        chat.enabled = change.enabled;
        changed = true;
      }
      if (changed) render();
    },
    dispose() {
      listeners.clear();
      container.replaceChildren();
    },
  };
}
