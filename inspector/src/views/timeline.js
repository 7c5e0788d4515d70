// A chat's messages as a timeline, each with what the inclusion pass
// computed (included, excluded and why, hidden by hand or by auto-hide),
// its recap (editable by hand), and the scene breaks with their names and
// scene recaps (views/timeline-scene.js: marking, renaming, scene-recap
// versions). Scene-break detection starts from here (DetectSceneBreaks),
// and a branch of the chat at a message (views/timeline-branch.js).
//
// Read with two calls: InjectionService.GetInclusion (every message's id,
// inclusion, hidden state and tokens, in chat order) and
// MemoryService.ExportChat (the chat as a SillyTavern file: each message's
// speaker, text and recap data, in the same order). The latest injection's
// auto_hidden_count tells auto-hide's prefix from hides made by hand.
import { h, replace, badge, field } from "../dom.js";
import { describeError } from "../api.js";
import { explainExclusion, count, truncate } from "../format.js";
import { notify, showError } from "../notices.js";
import { loadChatFile } from "../chat-file.js";
import { fromMessageData, isVisibleBreak } from "../scene.js";
import { jobButton } from "../job-start.js";
import { sceneItem, markButton } from "./timeline-scene.js";
import { branchAction, canBranch } from "./timeline-branch.js";

const PAGE = 200;
const TEXT_PREVIEW = 600;

/**
 * @param {HTMLElement} panel
 * @param {import("./chat.js").ViewContext} ctx
 * @returns {import("./chat.js").View}
 */
export function mountTimeline(panel, ctx) {
  const { api, chatId, store } = ctx;
  let shownCount = PAGE;
  /** @type {string} */
  let filter = "all";
  /** @type {import("../chat-file.js").TimelineMessage[]} */
  let messages = [];
  let loadSeq = 0;
  // Open edit forms: a refresh waits until they close, so it never throws
  // away what is being written.
  let editing = 0;
  let pendingLoad = false;
  let shownSignature = "";
  /** @type {string | null} a message to show once the messages are read */
  let pendingReveal = null;
  const forms = {
    open() {
      editing += 1;
    },
    close() {
      editing = Math.max(0, editing - 1);
      if (editing === 0 && pendingLoad) load();
    },
  };
  /** @type {import("./timeline-scene.js").SceneEnv} */
  const sceneEnv = {
    ctx,
    forms,
    jobs: new Map(),
    saved: () => {
      pendingLoad = true;
      if (editing === 0) {
        render();
        load();
      }
    },
  };

  /** @type {import("./timeline-branch.js").BranchEnv} */
  const branchEnv = { ctx, forms, made: new Map() };
  const branching = canBranch(ctx);

  const summary = h("p", { class: "muted", role: "status" }, "Reading the messages…");
  const filterSelect = /** @type {HTMLSelectElement} */ (
    h(
      "select",
      { onchange: () => { filter = filterSelect.value; render(); } },
      h("option", { value: "all" }, "All messages"),
      h("option", { value: "included" }, "Included recaps"),
      h("option", { value: "excluded" }, "Excluded recaps"),
      h("option", { value: "hidden" }, "Hidden messages"),
      h("option", { value: "scenes" }, "Scene breaks"),
    )
  );
  const list = h("ol", { class: "timeline", "data-testid": "timeline" });
  /** @type {HTMLElement | null} */
  let lastFocused = null;
  list.addEventListener("focusin", (e) => {
    if (e.target instanceof HTMLElement) lastFocused = e.target;
  });
  const more = h("div", { class: "timeline-more" });
  replace(
    panel,
    h(
      "div",
      { class: "panel-head" },
      h("h3", null, "Timeline"),
      h(
        "div",
        { class: "inline-fields" },
        field("Show", filterSelect),
        api.clients.recap
          ? jobButton(ctx, {
              label: "Detect scene breaks",
              ariaLabel: "Detect scene breaks in the open scene now (a job)",
              doing: "Starting the scene-break detection",
              start: () => api.clients.recap.detectSceneBreaks({ chatId }),
              testid: "detect-breaks",
              className: "",
            })
          : null,
      ),
    ),
    h(
      "p",
      { class: "muted small" },
      "Newest at the bottom. “Included” means the message's recap is in the short-term memory as a refresh would compute it now.",
    ),
    summary,
    more,
    list,
  );

  async function load() {
    if (editing > 0) {
      pendingLoad = true;
      return;
    }
    pendingLoad = false;
    const seq = ++loadSeq;
    try {
      await store.ready;
      const result = await loadChatFile(api, chatId, store.get("auto_recap_scene")?.autoHiddenCount ?? 0);
      if (seq !== loadSeq) return;
      messages = result;
      // Unchanged: keep the page as it is (expanded texts, scroll).
      const signature = JSON.stringify(result);
      if (signature !== shownSignature) {
        shownSignature = signature;
        render();
      }
      if (pendingReveal !== null) reveal(pendingReveal);
    } catch (err) {
      if (seq !== loadSeq) return;
      summary.textContent = `Could not read the messages: ${describeError(err)}`;
    }
  }

  /** @param {import("../chat-file.js").TimelineMessage} m */
  function matches(m) {
    switch (filter) {
      case "included": return m.included;
      case "excluded": return !m.included;
      case "hidden": return m.hidden !== "";
      case "scenes": return m.sceneBreak;
      default: return true;
    }
  }

  function render() {
    const included = messages.filter((m) => m.included).length;
    const hidden = messages.filter((m) => m.hidden).length;
    const scenes = messages.filter((m) => isVisibleBreak(m.data)).length;
    summary.textContent =
      `${count(messages.length, "message")}: ${included} recaps included, ${messages.length - included} excluded, ` +
      `${hidden} hidden, ${count(scenes, "scene break")}.`;
    // Re-rendering drops any open edit form.
    editing = 0;
    const selected = messages.filter(matches);
    const start = Math.max(0, selected.length - shownCount);
    replace(
      more,
      start > 0
        ? h("button", { type: "button", onclick: () => { shownCount += PAGE; render(); } },
            `Show ${Math.min(PAGE, start)} older (${start} not shown)`)
        : null,
    );
    const items = [];
    for (const m of selected.slice(start)) {
      items.push(messageItem(m));
      if (m.sceneBreak) items.push(sceneItem(m, sceneEnv));
    }
    if (items.length === 0) items.push(h("li", { class: "muted" }, messages.length ? "No message matches." : "This chat has no messages."));
    // A keyboard user keeps their place: the button that had the focus
    // (each names its message) has it again, or else its message.
    // (A button disabled while its call runs loses the focus to the page:
    // it stands for the focus then, but not a button the user has left.)
    const active = document.activeElement;
    const focused =
      active instanceof HTMLElement && list.contains(active)
        ? active
        : (active === null || active === document.body) &&
            lastFocused instanceof HTMLButtonElement &&
            lastFocused.disabled &&
            list.contains(lastFocused)
          ? lastFocused
          : null;
    const label = focused?.getAttribute("aria-label") ?? null;
    const item = /** @type {HTMLElement | null | undefined} */ (focused?.closest("[data-message-id]"));
    replace(list, items);
    if (focused) refocus(label, item?.dataset.messageId ?? null);
  }

  /**
   * @param {string | null} label the aria-label of the button to focus
   * @param {string | null} messageId else the item of this message
   */
  function refocus(label, messageId) {
    const button = label ? [...list.querySelectorAll("button")].find((b) => b.getAttribute("aria-label") === label && !b.disabled) : undefined;
    if (button) {
      button.focus({ preventScroll: true });
      return;
    }
    const el = messageId ? [...list.querySelectorAll("[data-message-id]")].find((e) => /** @type {HTMLElement} */ (e).dataset.messageId === messageId) : undefined;
    if (el instanceof HTMLElement) {
      el.tabIndex = -1;
      el.focus({ preventScroll: true });
    }
  }

  /** @param {import("../chat-file.js").TimelineMessage} m */
  function messageItem(m) {
    const badges = [
      m.included
        ? badge("Included", "ok", "Its recap is in the short-term memory")
        : badge(`Excluded: ${explainExclusion(m.reason)}`, m.reason === "no_memory" ? "muted" : "warn", `excluded_reason ${m.reason}`),
      m.hidden === "hand" ? badge("Hidden by hand", "info") : null,
      m.hidden === "auto" ? badge("Hidden by auto-hide", "info", "Inside the prefix auto-hide hides") : null,
    ];
    const role = m.isNarrator ? "narrator" : m.isUser ? "user" : "character";
    const text = h("p", { class: "msg-text" }, truncate(m.text, TEXT_PREVIEW));
    if (m.text.length > TEXT_PREVIEW) {
      const btn = h("button", { type: "button", class: "link small", "aria-expanded": "false" }, "Show all");
      btn.addEventListener("click", () => {
        const open = btn.getAttribute("aria-expanded") === "true";
        text.textContent = open ? truncate(m.text, TEXT_PREVIEW) : m.text;
        btn.setAttribute("aria-expanded", String(!open));
        btn.textContent = open ? "Show all" : "Show less";
      });
      text.append(" ", btn);
    }
    const branch = branching ? branchAction(m, branchEnv) : null;
    return h(
      "li",
      {
        class: `msg ${m.included ? "msg-included" : "msg-excluded"}${m.hidden ? " msg-hidden" : ""}`,
        "data-testid": "message",
        dataset: { messageId: m.id, inclusion: m.included ? "included" : "excluded", hidden: m.hidden || "no", reason: m.reason },
      },
      h(
        "div",
        { class: "msg-head" },
        h("span", { class: "msg-index muted" }, `#${m.index}`),
        h("strong", null, m.name || "(no name)"),
        h("span", { class: "muted small" }, role),
        h("code", { class: "small", title: "Message id" }, m.id),
        h("span", { class: "muted small" }, `${m.tokenCount} tokens`),
        m.swipes > 1 ? h("span", { class: "muted small" }, `swipe ${m.swipeId + 1} of ${m.swipes}`) : null,
        h("span", { class: "msg-actions" }, m.data.scene_break ? null : markButton(m, sceneEnv), branch?.button),
      ),
      h("div", { class: "msg-badges" }, badges),
      text,
      recapBlock(m),
      branch?.box,
    );
  }

  /** @param {import("../chat-file.js").TimelineMessage} m */
  function recapBlock(m) {
    const box = h("div", { class: "msg-recap" });
    let open = false;
    const setOpen = (/** @type {boolean} */ on) => {
      if (on === open) return;
      open = on;
      if (on) forms.open();
      else forms.close();
    };
    const show = () => {
      setOpen(false);
      replace(
        box,
        h("span", { class: "label" }, "Recap"),
        m.data.edited ? badge("edited by hand", "muted") : null,
        m.data.memory ? h("p", { class: "recap-text" }, m.data.memory) : h("p", { class: "recap-text muted" }, "none"),
        h(
          "span",
          { class: "recap-actions" },
          h("button", { type: "button", class: "small", onclick: edit, "aria-label": `Edit the recap of message ${m.id}` }, "Edit"),
          h(
            "button",
            {
              type: "button",
              class: "small",
              onclick: () => save({ exclude: !m.data.exclude }, m.data.exclude ? "no longer excluded" : "excluded by hand"),
              "aria-label": `${m.data.exclude ? "Stop excluding" : "Exclude"} the recap of message ${m.id}`,
            },
            m.data.exclude ? "Stop excluding" : "Exclude",
          ),
        ),
        m.data.error ? h("p", { class: "error-text small recap-error" }, `Last recap attempt failed: ${m.data.error}`) : null,
      );
    };
    const edit = () => {
      setOpen(true);
      const area = /** @type {HTMLTextAreaElement} */ (h("textarea", { rows: "4" }, m.data.memory ?? ""));
      replace(
        box,
        h(
          "form",
          {
            class: "edit-form",
            onsubmit: (/** @type {Event} */ e) => {
              e.preventDefault();
              save({ memory: area.value }, "recap saved (edited by hand)", true);
            },
            onkeydown: (/** @type {KeyboardEvent} */ e) => {
              if (e.key === "Escape") show();
            },
          },
          field(`Recap of message ${m.id}`, area),
          h("div", { class: "row" }, h("button", { type: "submit", class: "primary small" }, "Save recap"), h("button", { type: "button", class: "small", onclick: show }, "Cancel")),
        ),
      );
      area.focus();
    };
    /**
     * @param {Record<string, unknown>} data
     * @param {string} done
     * @param {boolean} [byHand] a hand edit of the memory (SetMessageData
     *   `edit`: the error, reasoning and prefill go, `edited` is set)
     */
    const save = async (data, done, byHand = false) => {
      for (const b of box.querySelectorAll("button")) /** @type {HTMLButtonElement} */ (b).disabled = true;
      try {
        const after = await api.clients.memory.setMessageData({ chatId, messageId: m.id, data, edit: byHand });
        m.data = fromMessageData(after);
        notify(`Message ${m.id}: ${done}. recapd refreshes the chat shortly.`);
        ctx.changed();
        pendingLoad = true;
        show();
        if (editing === 0 && pendingLoad) load();
      } catch (err) {
        showError(`Saving message ${m.id}`, err);
        for (const b of box.querySelectorAll("button")) /** @type {HTMLButtonElement} */ (b).disabled = false;
      }
    };
    show();
    return box;
  }

  load();
  /**
   * Shows a message: every message listed, enough older ones shown, the
   * message scrolled to, marked and focused.
   * @param {string} messageId
   */
  function reveal(messageId) {
    const index = messages.findIndex((m) => m.id === messageId);
    if (index < 0) {
      pendingReveal = messages.length ? null : messageId;
      if (messages.length) notify(`Message ${messageId} is not in this chat now.`);
      return;
    }
    pendingReveal = null;
    const fromEnd = messages.length - index;
    if (filter !== "all" || fromEnd > shownCount) {
      filter = "all";
      filterSelect.value = "all";
      shownCount = Math.max(shownCount, Math.ceil(fromEnd / PAGE) * PAGE);
      render();
    }
    const el = [...list.querySelectorAll('[data-testid="message"]')].find((e) => /** @type {HTMLElement} */ (e).dataset.messageId === messageId);
    if (!(el instanceof HTMLElement)) return;
    for (const old of list.querySelectorAll(".msg-target")) old.classList.remove("msg-target");
    el.classList.add("msg-target");
    el.tabIndex = -1;
    el.scrollIntoView({ block: "center" });
    el.focus({ preventScroll: true });
  }

  return { live: true, refresh: load, reveal };
}
