// The timeline's "Branch here" action, as SillyTavern's "Create branch":
// a message's button asks for the new chat's id (prefilled with
// `<chat id>-branch-<message id>`; recapd checks it), calls
// MemoryService.BranchChat, and shows what the new chat holds (messages,
// running-recap versions, chat book) with a link that opens it, or the
// server's error as every other error. The open chat does not change.
import { h, replace, field, formBusy } from "../dom.js";
import { chatHref } from "../routes.js";
import { notify, showError } from "../notices.js";
import { defaultBranchId, describeBranch } from "../family.js";

/**
 * @typedef {object} BranchEnv what the timeline lends its branch actions
 * @property {import("./chat.js").ViewContext} ctx
 * @property {{ open(): void, close(): void }} forms counts the open forms
 *   (the timeline is not read again while one is open)
 * @property {Map<string, any>} made the branch last made at each message
 *   (BranchChat's answer), shown again when the timeline is drawn anew
 */

/**
 * Whether this server has BranchChat (its descriptors name it).
 * @param {import("./chat.js").ViewContext} ctx
 */
export function canBranch(ctx) {
  return typeof ctx.api.clients.memory?.branchChat === "function";
}

/**
 * A message's "Branch here" button and the box below the message where its
 * form, then the branch made, are shown.
 * @param {import("../chat-file.js").TimelineMessage} m
 * @param {BranchEnv} env
 * @returns {{ button: HTMLButtonElement, box: HTMLElement }}
 */
export function branchAction(m, env) {
  const { api, chatId } = env.ctx;
  const box = h("div", { class: "msg-branch", dataset: { messageId: m.id } });
  let open = false;
  const setOpen = (/** @type {boolean} */ on) => {
    if (on === open) return;
    open = on;
    button.setAttribute("aria-expanded", String(on));
    if (on) env.forms.open();
    else env.forms.close();
  };

  /** What was made here last, if anything. */
  const showMade = () => {
    setOpen(false);
    const made = env.made.get(m.id);
    replace(box, made ? madeLine(made) : null);
  };

  const showForm = () => {
    if (open) {
      box.querySelector("input")?.focus();
      return;
    }
    setOpen(true);
    const input = /** @type {HTMLInputElement} */ (
      h("input", { type: "text", value: defaultBranchId(chatId, m.id), autocomplete: "off", spellcheck: "false", "data-testid": "branch-id" })
    );
    replace(
      box,
      h(
        "form",
        {
          class: "edit-form branch-form",
          "data-testid": "branch-form",
          onsubmit: async (/** @type {Event} */ e) => {
            e.preventDefault();
            const form = /** @type {HTMLFormElement} */ (e.currentTarget);
            formBusy(form, true);
            try {
              const made = await api.clients.memory.branchChat({ chatId, messageId: m.id, newChatId: input.value });
              env.made.set(m.id, made);
              showMade();
              // A keyboard user goes on from the link to the new chat.
              box.querySelector("a")?.focus();
              notify(`Chat ${made.chatId} made, a branch of ${chatId} at message ${m.id}: ${describeBranch(made)}.`);
              env.ctx.changed();
            } catch (err) {
              showError(`Branching chat ${chatId} at message ${m.id}`, err);
              formBusy(form, false);
              input.focus();
            }
          },
          onkeydown: (/** @type {KeyboardEvent} */ e) => {
            if (e.key === "Escape") showMade();
          },
        },
        field(
          `New chat id for the branch at message ${m.id}`,
          input,
          "A new chat with this chat's messages up to and including this one, and the memory that goes with them " +
            "(their recaps and scene recaps, the running-recap versions of those scenes, the chat's settings, a copy of its chat book). " +
            "This chat does not change.",
        ),
        h(
          "div",
          { class: "row" },
          h("button", { type: "submit", class: "primary small" }, "Create branch"),
          h("button", { type: "button", class: "small", onclick: showMade }, "Cancel"),
        ),
      ),
    );
    input.focus();
    input.select();
  };

  const button = /** @type {HTMLButtonElement} */ (
    h(
      "button",
      { type: "button", class: "small", "aria-label": `Branch here: a new chat ending at message ${m.id}`, "aria-expanded": "false", onclick: showForm },
      "Branch here",
    )
  );
  showMade();
  return { button, box };
}

/**
 * "Branch <id> made: 5 messages, 1 running-recap version, no chat book. Open it"
 * @param {any} made BranchChat's answer
 */
function madeLine(made) {
  return h(
    "p",
    { class: "branch-made small", role: "status", "data-testid": "branch-result", dataset: { chatId: made.chatId } },
    "Branch ",
    h("code", null, made.chatId),
    ` made: ${describeBranch(made)}. `,
    h(
      "a",
      { href: chatHref(made.chatId, "timeline"), class: "branch-open", "aria-label": `Open the branch ${made.chatId}`, "data-testid": "branch-open" },
      "Open it",
    ),
  );
}
