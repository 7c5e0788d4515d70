// The inspector once signed in: the chat list beside the open chat, and
// the address (#/chat/<id>/<tab>) saying which chat and view are open, so
// a reload, the back button and a shared link keep the place.
import { h, replace } from "./dom.js";
import { mountChatList } from "./views/chats.js";
import { mountChat, TABS } from "./views/chat.js";

/**
 * @typedef {{ chatId: string | null, tab: string }} Route
 */

/** @returns {Route} */
export function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, "").split("/");
  if (parts[0] !== "chat" || parts.length < 2 || !parts[1]) return { chatId: null, tab: TABS[0].id };
  let chatId;
  try {
    chatId = decodeURIComponent(parts[1]);
  } catch {
    return { chatId: null, tab: TABS[0].id };
  }
  const tab = TABS.some((t) => t.id === parts[2]) ? parts[2] : TABS[0].id;
  return { chatId, tab };
}

/**
 * The address of a chat's view.
 * @param {string} chatId
 * @param {string} [tab]
 */
export function chatHref(chatId, tab) {
  return `#/chat/${encodeURIComponent(chatId)}${tab ? `/${tab}` : ""}`;
}

/**
 * @param {HTMLElement} root
 * @param {import("./api.js").Api} api
 * @returns {{ dispose(): void }}
 */
export function mountApp(root, api) {
  const nav = h("nav", { class: "sidebar", "aria-label": "Chats" });
  const content = h("main", { id: "main", class: "content", tabindex: "-1" });
  replace(root, h("div", { class: "layout" }, nav, content));

  /** @type {ReturnType<typeof mountChat> | null} */
  let chat = null;
  /** @type {string | null} */
  let openId = null;

  const list = mountChatList(nav, api, { hrefFor: (id) => chatHref(id) });

  function placeholder() {
    replace(
      content,
      h(
        "div",
        { class: "empty-state" },
        h("h2", null, "No chat open"),
        h("p", null, "Pick a chat in the list to see its messages, what recapd injects for it and why, and its jobs."),
      ),
    );
  }

  function route() {
    const { chatId, tab } = parseRoute();
    if (chatId !== openId) {
      chat?.dispose();
      chat = null;
      openId = chatId;
      list.setCurrent(chatId);
      if (chatId === null) {
        placeholder();
        return;
      }
      chat = mountChat(content, api, {
        chatId,
        tab,
        onTab: (t) => {
          const href = chatHref(chatId, t);
          if (location.hash !== href) history.replaceState(null, "", href);
        },
        onChanged: () => list.refresh(),
        onInjection: (inj) => list.update(chatId, { revision: inj.revision, enabled: inj.enabled }),
      });
      content.focus({ preventScroll: true });
    } else if (chat) {
      chat.selectTab(tab);
    }
  }

  window.addEventListener("hashchange", route);
  route();

  return {
    dispose() {
      window.removeEventListener("hashchange", route);
      chat?.dispose();
      list.dispose();
      root.replaceChildren();
    },
  };
}
