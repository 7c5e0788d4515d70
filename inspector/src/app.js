// The inspector once signed in: the chat list beside the open chat, which
// the address names (see routes.js).
import { h, replace } from "./dom.js";
import { parseRoute, chatHref } from "./routes.js";
import { mountChatList } from "./views/chats.js";
import { mountChat, TABS } from "./views/chat.js";

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
    const route = parseRoute(TABS.map((t) => t.id));
    const chatId = route.chatId;
    const tab = route.tab ?? TABS[0].id;
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
