// A chat's settings: its effective values (SettingsService.GetSettings with
// the chat), compared with the tenant's global ones (GetSettings without),
// edited through UpdateSettings (the changed fields as the chat's
// overrides; "Use the global value" names a field in `clear`). Field types
// come from the API's descriptor of recap.v1.Settings, not from this file.
import { ScalarType } from "@bufbuild/protobuf";
import { h, replace, field, uid } from "../dom.js";
import { describeError } from "../api.js";
import { notify, showError } from "../notices.js";
import { mountProfiles } from "./profiles.js";

/** The settings shown, by group (proto field names). */
const GROUPS = [
  ["The running-recap injection", ["position", "depth", "role", "scan", "template"]],
  ["Which message recaps count", ["include_user_messages", "include_system_messages", "include_narrator_messages", "message_length_threshold", "message_recap_context_limit", "auto_hide_scene_count"]],
  ["The message-recap tier", ["message_recaps_enabled", "message_recaps_position", "message_recaps_depth", "message_recaps_role"]],
  ["Recall", ["recall_enabled", "recall_position", "recall_depth", "recall_max_tokens"]],
  ["Recaps written by recapd", ["auto_scene_break_detection", "auto_scene_recap", "auto_running_recap", "auto_message_recaps", "debounce_ms"]],
];

const INT64 = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

/**
 * @param {HTMLElement} panel
 * @param {import("./chat.js").ViewContext} ctx
 * @returns {import("./chat.js").View}
 */
export function mountSettings(panel, ctx) {
  const { api, chatId } = ctx;
  const desc = api.registry.getMessage("recap.v1.Settings");
  const body = h("div", null, h("p", { class: "muted" }, "Reading the settings…"));
  const extras = h("div", { "data-testid": "profiles-panel" });
  /** @type {any} the chat's effective settings, as last read */
  let shown = null;
  /** @type {any} the global settings, as last read */
  let shownGlobal = null;
  /** @type {Array<{ f: any, read: () => unknown }>} the form's controls, as last rendered */
  let formControls = [];
  const profiles = mountProfiles(extras, ctx, {
    inUse: () => shown?.profile,
    formPatch: () => {
      /** @type {Record<string, unknown>} */
      const out = {};
      for (const { f, read } of formControls) {
        const v = read();
        if (v !== undefined && !same(v, shownGlobal?.[f.localName])) out[f.localName] = v;
      }
      return out;
    },
    reload: () => load(),
  });
  replace(
    panel,
    h("div", { class: "panel-head" }, h("h3", null, "Settings")),
    h("p", { class: "muted small" }, "This chat's effective settings (defaults, then the global settings, then the chat's own). Saving sets the changed ones for this chat only; recapd refreshes the chat at once."),
    body,
    extras,
  );

  async function load() {
    try {
      const [chat, global] = await Promise.all([
        api.clients.settings.getSettings({ chatId }),
        api.clients.settings.getSettings({ chatId: "" }),
      ]);
      shown = chat;
      shownGlobal = global;
      render(chat, global);
      await profiles.refresh();
    } catch (err) {
      replace(body, h("p", { class: "error-text" }, `Could not read the settings: ${describeError(err)}`));
    }
  }

  /**
   * @param {any} chat
   * @param {any} global
   */
  function render(chat, global) {
    if (!desc) {
      replace(body, h("p", { class: "muted" }, "This server's API has no Settings message."));
      return;
    }
    /** @type {Array<{ f: any, read: () => unknown }>} */
    const controls = [];
    formControls = controls;
    const groups = GROUPS.map(([title, names]) => {
      const rows = /** @type {string[]} */ (names).map((name) => {
        const f = desc.fields.find((x) => x.name === name);
        if (!f) return null;
        const value = chat[f.localName];
        const made = control(f, value);
        controls.push({ f, read: made.read });
        const differs = !same(value, global[f.localName]);
        return h(
          "div",
          { class: "setting" },
          made.el,
          differs
            ? h(
                "p",
                { class: "hint" },
                `Global: ${show(f, global[f.localName])}. `,
                h("button", { type: "button", class: "link small", onclick: () => save({}, [name]), "aria-label": `Use the global value for ${name.replace(/_/g, " ")}` }, "Use the global value"),
              )
            : null,
        );
      });
      return h("fieldset", null, h("legend", null, title), rows);
    });
    const submit = h("button", { type: "submit", class: "primary" }, "Save changes for this chat");
    replace(
      body,
      h(
        "form",
        {
          class: "settings-form",
          onsubmit: (/** @type {Event} */ e) => {
            e.preventDefault();
            /** @type {Record<string, unknown>} */
            const changes = {};
            for (const { f, read } of controls) {
              const v = read();
              if (v !== undefined && !same(v, chat[f.localName])) changes[f.localName] = v;
            }
            if (Object.keys(changes).length === 0) {
              notify("Nothing changed.");
              return;
            }
            save(changes, []);
          },
        },
        groups,
        submit,
      ),
    );
  }

  /**
   * @param {Record<string, unknown>} settings
   * @param {string[]} clear
   */
  async function save(settings, clear) {
    try {
      await api.clients.settings.updateSettings({ chatId, settings, clear });
      notify(clear.length ? `${clear.join(", ")} now follows the global settings.` : `Saved ${Object.keys(settings).length} settings for this chat.`);
      ctx.changed();
      await load();
    } catch (err) {
      showError("Saving the settings", err);
    }
  }

  /**
   * A labelled control for a field; `read` answers the value to send, or
   * undefined when the input is empty or not valid (left unchanged).
   * @param {any} f a DescField
   * @param {unknown} value
   */
  function control(f, value) {
    const label = `${f.name.replace(/_/g, " ")}`;
    if (f.fieldKind === "enum") {
      const sel = /** @type {HTMLSelectElement} */ (
        h("select", null, f.enum.values.filter((/** @type {any} */ v) => v.number !== 0).map((/** @type {any} */ v) => h("option", { value: String(v.number), selected: v.number === value }, v.localName)))
      );
      return { el: field(label, sel), read: () => Number(sel.value) };
    }
    if (f.scalar === ScalarType.BOOL) {
      const box = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", id: uid("s"), checked: Boolean(value) }));
      return { el: h("div", { class: "switch" }, box, h("label", { for: box.id }, label)), read: () => box.checked };
    }
    if (f.scalar === ScalarType.STRING) {
      const area = /** @type {HTMLTextAreaElement} */ (h("textarea", { rows: "3" }, String(value ?? "")));
      return { el: field(label, area), read: () => area.value };
    }
    const input = /** @type {HTMLInputElement} */ (h("input", { type: "number", inputmode: "numeric", value: value === undefined ? "" : String(value) }));
    const el = field(label, input, value === undefined ? "Not set." : undefined);
    return {
      el,
      read: () => {
        const text = input.value.trim();
        if (text === "" || !/^-?\d+(\.\d+)?$/.test(text)) return undefined;
        if (INT64.has(f.scalar)) return BigInt(text.split(".")[0]);
        return Number(text);
      },
    };
  }

  /**
   * @param {any} f
   * @param {unknown} v
   */
  function show(f, v) {
    if (v === undefined) return "not set";
    if (typeof v === "boolean") return v ? "on" : "off";
    if (f.fieldKind === "enum") return api.enumName(f.enum.typeName, /** @type {number} */ (v));
    if (typeof v === "string") return v.length > 40 ? `“${v.slice(0, 39)}…”` : `“${v}”`;
    return String(v);
  }

  load();
  return { refresh: load };
}

/**
 * @param {unknown} a
 * @param {unknown} b
 */
function same(a, b) {
  return a === b || (typeof a === "bigint" && typeof b === "bigint" && a === b);
}
