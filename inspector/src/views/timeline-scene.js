// The timeline's scene actions, as the extension's scene-break controls
// offer them: mark a message as a scene break and unmark it, rename its
// scene, write its scene recap by hand (SetMessageData scene_recap_memory:
// recapd keeps it as a new version), go back and forth between the
// versions (SelectSceneRecapVersion), and have recapd write one
// (GenerateSceneRecap, a job).
import { h, replace, field, actionButton, formBusy } from "../dom.js";
import { notify, showError } from "../notices.js";
import { sceneVersions, breakAction, fromMessageData } from "../scene.js";
import { jobButton } from "../job-start.js";

/**
 * @typedef {object} SceneEnv what the timeline lends its scene actions
 * @property {import("./chat.js").ViewContext} ctx
 * @property {{ open(): void, close(): void }} forms counts the open edit
 *   forms (the timeline is not read again while one is open)
 * @property {(m: import("../chat-file.js").TimelineMessage) => void} saved
 *   a message's data changed: show it, then read the chat again
 * @property {Map<string, any>} jobs the scene-recap job last started from
 *   each message's scene, shown again when the timeline is drawn anew
 */

/**
 * Sends a change of a message's data and shows the answer.
 * @param {SceneEnv} env
 * @param {import("../chat-file.js").TimelineMessage} m
 * @param {(memory: any, chatId: string) => Promise<any>} call the RPC, answering MessageData
 * @param {string} done what the announcement says happened
 * @param {string} doing what a failure says was being done
 * @param {() => void} [closeForm] closes the form it came from, before the
 *   timeline shows the change
 * @returns {Promise<boolean>} whether it was saved
 */
async function change(env, m, call, done, doing, closeForm) {
  const { api, chatId } = env.ctx;
  try {
    const after = await call(api.clients.memory, chatId);
    m.data = fromMessageData(after);
    m.sceneBreak = m.data.scene_break === true;
    closeForm?.();
    notify(`Message ${m.id}: ${done}.`);
    env.ctx.changed();
    env.saved(m);
    return true;
  } catch (err) {
    showError(doing, err);
    return false;
  }
}

/**
 * The button of a message that is no scene break: makes it one.
 * @param {import("../chat-file.js").TimelineMessage} m
 * @param {SceneEnv} env
 */
export function markButton(m, env) {
  const act = breakAction(m.data);
  return breakButton(m, env, act);
}

/**
 * @param {import("../chat-file.js").TimelineMessage} m
 * @param {SceneEnv} env
 * @param {import("../scene.js").BreakAction} act
 */
function breakButton(m, env, act) {
  const btn = /** @type {HTMLButtonElement} */ (
    h(
      "button",
      {
        type: "button",
        class: "small",
        "aria-label": `${act.label} at message ${m.id}`,
        onclick: async () => {
          btn.disabled = true;
          const ok = await change(
            env,
            m,
            (memory, chatId) => memory.setMessageData({ chatId, messageId: m.id, data: act.patch }),
            act.done,
            `${act.action === "mark" ? "Marking" : "Unmarking"} the scene break of message ${m.id}`,
          );
          if (!ok) btn.disabled = false;
        },
      },
      act.label,
    )
  );
  return btn;
}

/**
 * A scene break below its message: its name, its scene recap and versions,
 * and their actions. A hidden break (unmarked) shows how to mark it again.
 * @param {import("../chat-file.js").TimelineMessage} m
 * @param {SceneEnv} env
 */
export function sceneItem(m, env) {
  const act = breakAction(m.data);
  const name = m.data.scene_break_name || "(unnamed scene)";
  if (act.action === "mark") {
    return h(
      "li",
      { class: "scene-break scene-break-hidden", "data-testid": "scene-break", dataset: { messageId: m.id, visible: "no" } },
      h("h4", null, "Unmarked scene break: ", name),
      h(
        "p",
        { class: "small muted" },
        "It counts as no break (auto-hide, detection and the running recap leave it out); its name and scene recap are kept.",
      ),
      h("div", { class: "row" }, breakButton(m, env, act)),
    );
  }
  const head = h("div", { class: "scene-head" });
  const body = h("div", { class: "scene-body" });
  let open = false;
  const setOpen = (/** @type {boolean} */ on) => {
    if (on === open) return;
    open = on;
    if (on) env.forms.open();
    else env.forms.close();
  };

  const showHead = () => {
    replace(
      head,
      h("h4", null, "Scene break: ", h("span", { "data-testid": "scene-name" }, name)),
      h(
        "span",
        { class: "scene-actions" },
        h("button", { type: "button", class: "small", onclick: rename, "aria-label": `Rename the scene of message ${m.id}` }, "Rename"),
        breakButton(m, env, act),
      ),
    );
  };

  const rename = () => {
    setOpen(true);
    const input = /** @type {HTMLInputElement} */ (h("input", { type: "text", value: m.data.scene_break_name ?? "", maxlength: "500" }));
    const cancel = () => {
      setOpen(false);
      showHead();
    };
    replace(
      head,
      h(
        "form",
        {
          class: "edit-form inline-fields",
          onsubmit: async (/** @type {Event} */ e) => {
            e.preventDefault();
            const form = /** @type {HTMLFormElement} */ (e.currentTarget);
            formBusy(form, true);
            const ok = await change(
              env,
              m,
              (memory, chatId) => memory.setMessageData({ chatId, messageId: m.id, data: { sceneBreakName: input.value } }),
              "scene renamed",
              `Renaming the scene of message ${m.id}`,
              () => setOpen(false),
            );
            if (!ok) formBusy(form, false);
          },
          onkeydown: (/** @type {KeyboardEvent} */ e) => {
            if (e.key === "Escape") cancel();
          },
        },
        field(`Name of the scene ending at message ${m.id}`, input),
        h("div", { class: "row" }, h("button", { type: "submit", class: "primary small" }, "Save name"), h("button", { type: "button", class: "small", onclick: cancel }, "Cancel")),
      ),
    );
    input.focus();
  };

  const showBody = () => {
    const v = sceneVersions(m.data);
    const select = async (/** @type {number} */ index) =>
      change(
        env,
        m,
        (memory, chatId) => memory.selectSceneRecapVersion({ chatId, messageId: m.id, index }),
        `scene recap version ${index + 1} of ${v.versions.length} shown`,
        `Showing another scene-recap version of message ${m.id}`,
      );
    const versionNav = v.versions.length
      ? h(
          "span",
          { class: "scene-versions" },
          h("span", { "data-testid": "scene-version" }, v.label),
          actionButton("‹ Previous", async () => {
            if (v.prev !== null) await select(v.prev);
          }, {
            class: "small",
            disabled: v.prev === null,
            "aria-label": `Previous version of the scene recap of message ${m.id}`,
          }),
          actionButton("Next ›", async () => {
            if (v.next !== null) await select(v.next);
          }, {
            class: "small",
            disabled: v.next === null,
            "aria-label": `Next version of the scene recap of message ${m.id}`,
          }),
        )
      : null;
    const recap = h("p", { class: "scene-recap", "data-testid": "scene-recap" }, v.text);
    replace(
      body,
      h("div", { class: "scene-recap-head" }, h("span", { class: "label" }, "Scene recap"), versionNav),
      v.text ? recap : h("p", { class: "muted small", "data-testid": "scene-recap" }, "No scene recap yet."),
      h(
        "div",
        { class: "row" },
        h(
          "button",
          { type: "button", class: "small", onclick: edit, "aria-label": `${v.text ? "Edit" : "Write"} the scene recap of message ${m.id}` },
          v.text ? "Edit scene recap" : "Write scene recap",
        ),
        env.ctx.api.clients.recap
          ? jobButton(env.ctx, {
              label: "Generate scene recap",
              ariaLabel: `Generate scene recap of message ${m.id}'s scene (a job)`,
              doing: `Starting the scene recap of message ${m.id}`,
              start: () => env.ctx.api.clients.recap.generateSceneRecap({ chatId: env.ctx.chatId, messageId: m.id }),
              started: env.jobs.get(m.id),
              onStarted: (job) => env.jobs.set(m.id, job),
            })
          : null,
      ),
    );
  };

  const edit = () => {
    setOpen(true);
    const v = sceneVersions(m.data);
    const area = /** @type {HTMLTextAreaElement} */ (h("textarea", { rows: "5" }, v.text));
    const cancel = () => {
      setOpen(false);
      showBody();
    };
    replace(
      body,
      h(
        "form",
        {
          class: "edit-form",
          onsubmit: async (/** @type {Event} */ e) => {
            e.preventDefault();
            const form = /** @type {HTMLFormElement} */ (e.currentTarget);
            formBusy(form, true);
            const ok = await change(
              env,
              m,
              (memory, chatId) => memory.setMessageData({ chatId, messageId: m.id, data: { sceneRecapMemory: area.value } }),
              "scene recap saved as a new version",
              `Saving the scene recap of message ${m.id}`,
              () => setOpen(false),
            );
            if (!ok) formBusy(form, false);
          },
          onkeydown: (/** @type {KeyboardEvent} */ e) => {
            if (e.key === "Escape") cancel();
          },
        },
        field(
          `Scene recap of message ${m.id}`,
          area,
          "Saved as a new version, which becomes the current one; the older versions stay and the arrows go back to them.",
        ),
        h("div", { class: "row" }, h("button", { type: "submit", class: "primary small" }, "Save as a new version"), h("button", { type: "button", class: "small", onclick: cancel }, "Cancel")),
      ),
    );
    area.focus();
  };

  showHead();
  showBody();
  return h("li", { class: "scene-break", "data-testid": "scene-break", dataset: { messageId: m.id, visible: "yes" } }, head, body);
}
