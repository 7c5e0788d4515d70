// One chat: its header (enabled switch, latest refresh, its parent and
// branches: views/chat-family.js), the views in tabs, and beside them the
// live injection, which every view shares. Views are
// made the first time their tab is opened; when the chat changes (a new
// injection revision), the open view reads its data again and the others
// do when next opened.
import { h, replace, badge, timeEl, uid } from "../dom.js";
import { describeError } from "../api.js";
import { createInjectionStore } from "../injection-store.js";
import { notify, showError } from "../notices.js";
import { mountLiveInjection } from "./live-injection.js";
import { mountChatFamily } from "./chat-family.js";
import { mountTimeline } from "./timeline.js";
import { mountRunningRecap } from "./running-recap.js";
import { mountInjection } from "./injection.js";
import { mountJobs } from "./jobs.js";
import { mountWorldInfo } from "./world-info.js";
import { mountRecall } from "./recall.js";
import { mountSettings } from "./settings.js";

/**
 * @typedef {object} ViewContext
 * @property {import("../api.js").Api} api
 * @property {string} chatId
 * @property {import("../injection-store.js").InjectionStore} store
 * @property {() => void} changed tells the page the chat changed (an edit)
 * @property {(messageId: string) => void} showMessage opens the timeline at a message
 * @property {(jobId: string) => void} showJob opens the Jobs view at a job
 *
 * @typedef {{ refresh?: () => unknown, dispose?: () => void, live?: boolean, reveal?: (id: string) => void }} View
 *   `reveal` shows a message (the timeline) or a job (the jobs)
 */

/** The views, in tab order; `needs` names the client a view cannot do without. */
export const TABS = [
  { id: "timeline", label: "Timeline", mount: mountTimeline, needs: "memory" },
  { id: "running-recap", label: "Running recap", mount: mountRunningRecap, needs: "memory" },
  { id: "injection", label: "Injection & prompt", mount: mountInjection, needs: "injection" },
  { id: "jobs", label: "Jobs", mount: mountJobs, needs: "recap" },
  { id: "world-info", label: "World Info", mount: mountWorldInfo, needs: "lorebook" },
  { id: "recall", label: "Recall", mount: mountRecall, needs: "recall" },
  { id: "settings", label: "Settings", mount: mountSettings, needs: "settings" },
];

/**
 * @param {HTMLElement} container
 * @param {import("../api.js").Api} api
 * @param {{ chatId: string, tab: string, onTab: (tab: string) => void, onChanged: () => void, onInjection?: (inj: any) => void, chats: import("./chat-family.js").ChatSource }} opts
 *   `chats`: the chat list, whose reads give the chat's family
 */
export function mountChat(container, api, { chatId, tab, onTab, onChanged, onInjection, chats }) {
  const store = createInjectionStore(api, chatId);
  const tabs = TABS.filter((t) => api.clients[/** @type {keyof typeof api.clients} */ (t.needs)]);
  /** @type {ViewContext} */
  const ctx = {
    api,
    chatId,
    store,
    changed: () => onChanged(),
    showMessage: (messageId) => {
      select("timeline", true);
      entries.get("timeline")?.view?.reveal?.(messageId);
    },
    showJob: (jobId) => {
      select("jobs", true);
      entries.get("jobs")?.view?.reveal?.(jobId);
    },
  };

  // ---- header
  const enabledBox = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", id: uid("enabled"), "data-testid": "chat-enabled" }));
  const meta = h("p", { class: "chat-head-meta muted" });
  const family = mountChatFamily(chatId, chats);
  enabledBox.addEventListener("change", async () => {
    const want = enabledBox.checked;
    enabledBox.disabled = true;
    try {
      // Under use_global_toggle_state the switch is the tenant's, not the chat's.
      const settings = await api.clients.settings.getSettings({ chatId });
      if (
        settings.useGlobalToggleState &&
        !window.confirm(
          "This chat follows the global switch (use_global_toggle_state): switching it switches memory for every chat of this tenant. Go on?",
        )
      ) {
        enabledBox.checked = !want;
        return;
      }
      const res = await api.clients.settings.setChatEnabled({ chatId, enabled: want });
      enabledBox.checked = res.enabled;
      notify(`Memory ${res.enabled ? "enabled" : "disabled"} for ${settings.useGlobalToggleState ? "every chat" : chatId}.`);
      onChanged();
    } catch (err) {
      enabledBox.checked = !want;
      showError(`Switching memory ${want ? "on" : "off"}`, err);
    } finally {
      enabledBox.disabled = false;
    }
  });
  const header = h(
    "header",
    { class: "chat-head" },
    h("h2", { class: "chat-title" }, h("span", { class: "visually-hidden" }, "Chat "), h("code", null, chatId)),
    h(
      "div",
      { class: "chat-head-controls" },
      h("div", { class: "switch" }, enabledBox, h("label", { for: enabledBox.id }, "Memory enabled")),
    ),
    meta,
    family.element,
  );

  function renderMeta() {
    const inj = store.get("auto_recap_scene");
    if (!inj) {
      meta.textContent = store.readError() ?? (store.state().startsWith("failed") ? store.state() : "Reading the injection…");
      return;
    }
    if (document.activeElement !== enabledBox) enabledBox.checked = inj.enabled;
    replace(
      meta,
      `Revision ${inj.revision}`,
      inj.revision > 0n ? [" · last refresh ", timeEl(inj.refreshedAt, true), ` (${api.enumName("recap.v1.RefreshTrigger", inj.trigger)})`] : " · never refreshed",
      inj.autoHiddenCount > 0 ? ` · auto-hide hides the first ${inj.autoHiddenCount} messages` : "",
      inj.deleted ? [" · ", badge("deleted", "bad")] : "",
    );
  }

  // ---- tabs
  const tablist = h("div", { role: "tablist", "aria-label": "Views of this chat", class: "tabs" });
  const panels = h("div", { class: "panels" });
  /** @type {Map<string, { button: HTMLElement, panel: HTMLElement, view: View | null, stale: boolean }>} */
  const entries = new Map();
  for (const t of tabs) {
    const button = h("button", {
      type: "button",
      role: "tab",
      id: `tab-${t.id}`,
      "aria-controls": `panel-${t.id}`,
      "aria-selected": "false",
      tabindex: "-1",
      onclick: () => select(t.id, true),
    }, t.label);
    const panel = h("section", { role: "tabpanel", id: `panel-${t.id}`, "aria-labelledby": `tab-${t.id}`, tabindex: "0", hidden: true });
    tablist.append(button);
    panels.append(panel);
    entries.set(t.id, { button, panel, view: null, stale: false });
  }
  tablist.addEventListener("keydown", (e) => {
    const ids = tabs.map((t) => t.id);
    const i = ids.indexOf(current);
    /** @type {Record<string, number>} */
    const moves = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: ids.length - 1 };
    if (!(e.key in moves)) return;
    e.preventDefault();
    const next = ids[(moves[e.key] + ids.length) % ids.length];
    select(next, true);
    entries.get(next)?.button.focus();
  });

  let current = "";
  /**
   * @param {string} id
   * @param {boolean} [user] chosen by the user (the address follows)
   */
  function select(id, user = false) {
    if (!entries.has(id)) id = tabs[0].id;
    if (id === current) return;
    current = id;
    for (const [tid, entry] of entries) {
      const on = tid === id;
      entry.button.setAttribute("aria-selected", String(on));
      entry.button.tabIndex = on ? 0 : -1;
      entry.panel.hidden = !on;
    }
    const entry = /** @type {any} */ (entries.get(id));
    const spec = /** @type {any} */ (tabs.find((t) => t.id === id));
    if (!entry.view) {
      try {
        entry.view = spec.mount(entry.panel, ctx);
      } catch (err) {
        replace(entry.panel, h("p", { role: "alert" }, `This view failed: ${describeError(err)}`));
        entry.view = {};
      }
    } else if (entry.stale) {
      entry.view.refresh?.();
    }
    entry.stale = false;
    if (user) onTab(id);
  }

  // ---- the live injection beside the views
  const aside = h("aside", { class: "live-aside", "aria-labelledby": "live-heading", tabindex: "0" });
  const live = mountLiveInjection(aside, ctx);

  replace(container, h("div", { class: "chat" }, h("div", { class: "chat-main" }, header, tablist, panels), aside));

  // A new revision: the chat changed. The open view reads again (after a
  // short quiet, so a burst makes one read); the others when next opened.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let lastRead = 0;
  /** @type {string | null} */
  let lastSignature = null;
  store.ready.then(() => {
    lastSignature = store.signature();
  });
  const unlisten = store.listen((event) => {
    renderMeta();
    if (event.kind === "injection" && event.injection.key === "auto_recap_scene") onInjection?.(event.injection);
    if (event.kind !== "injection" || lastSignature === null) return;
    const signature = store.signature();
    if (signature === lastSignature) return;
    lastSignature = signature;
    for (const [tid, entry] of entries) {
      if (entry.view && entry.view.live) entry.stale = tid !== current;
    }
    // 400 ms after a change (a burst makes one read), and not more often
    // than every 2 s: a chat refreshed many times a second is not read
    // again at that pace.
    if (timer !== undefined) return;
    const wait = Math.max(400, lastRead + 2000 - Date.now());
    timer = setTimeout(() => {
      timer = undefined;
      lastRead = Date.now();
      const entry = entries.get(current);
      if (entry?.view?.live) entry.view.refresh?.();
    }, wait);
  });
  renderMeta();
  select(tab);

  return {
    /** @param {string} id */
    selectTab: (id) => select(id),
    dispose() {
      clearTimeout(timer);
      unlisten();
      store.dispose();
      live.dispose();
      family.dispose();
      for (const entry of entries.values()) entry.view?.dispose?.();
      container.replaceChildren();
    },
  };
}
