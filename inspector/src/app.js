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
  /** @type {string | null | undefined} the chat shown; undefined before the first route */
  let openId;

  const list = mountChatList(nav, api, { hrefFor: (id) => chatHref(id) });

  function placeholder() {
    replace(
      content,
      h(
        "div",
        { class: "empty-state", "data-testid": "no-chat" },
        h("h2", null, "No chat open"),
        h(
          "p",
          null,
          "Pick a chat in the list on the left: type part of its id in “Search chats” to narrow the list, then open it. " +
            "You see its messages and what recapd made of them, what it injects and why, its running recap, and the jobs writing its recaps.",
        ),
        h(
          "p",
          null,
          "Each view of a chat has an address of its own, ",
          h("code", null, "#/chat/<chat id>/<view>"),
          ", to bookmark or share; the views are ",
          TABS.map((t, i) => [i ? ", " : "", h("code", null, t.id)]),
          ". An address without a view opens the timeline.",
        ),
        h(
          "p",
          { class: "muted" },
          "An empty list means this tenant has no chat yet: a chat appears once a client sends recapd its messages (a chat_changed event) or imports a chat file (ImportChat).",
        ),
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
        chats: list,
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
