// The settings view's profiles and group panels. Profiles (ListProfiles,
// PutProfile, DeleteProfile) are named settings patches of the tenant; the
// open chat's own `profile` setting picks one (UpdateSettings on the
// chat). A chat in a group (ChatSummary.group_id, else the group whose
// `chats` list it) shows the group's members, which are disabled
// (SetGroupMembers), and the profile bound to the group (BindProfile).
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { h, replace, field, uid, actionButton } from "../dom.js";
import { describeError } from "../api.js";
import { notify, showError } from "../notices.js";
import { groupOfChat, parsePatch, disabledMembers } from "../profiles.js";

/** The select's value for "follow the group's, character's or global profile" (clears the chat's own). */
const FOLLOW = "\u0000follow";
/** The select's value for "no profile at all" (the chat's own empty value). */
const NONE = "\u0000none";

/**
 * @param {HTMLElement} container
 * @param {import("./chat.js").ViewContext} ctx
 * @param {{ inUse: () => string | undefined, formPatch: () => Record<string, unknown>, reload: () => unknown }} host
 *   `inUse`: the profile the chat's effective settings name; `formPatch`:
 *   the settings form's values that differ from the global ones (a
 *   Settings init); `reload`: reads the whole view again
 */
export function mountProfiles(container, ctx, host) {
  const { api, chatId } = ctx;
  const settingsDesc = api.registry.getMessage("recap.v1.Settings");
  const profilesPart = h("section", { class: "profiles", "aria-label": "Profiles" }, h("p", { class: "muted" }, "Reading the profiles…"));
  const groupPart = h("section", { class: "group-panel", "aria-label": "Group" });
  replace(container, profilesPart, groupPart);
  // What the user changed in the group panel and has not saved yet, kept
  // when the panel is drawn again (a live refresh of the view reads the
  // group anew): the group, each member's box, the profile to bind.
  /** @type {{ groupId: string, members: Map<string, boolean>, bound: string | null }} */
  const pending = { groupId: "", members: new Map(), bound: null };

  async function load() {
    try {
      const [list, groups, summary] = await Promise.all([
        api.clients.settings.listProfiles({}),
        api.clients.settings.listGroups({}),
        summaryGroupId(),
      ]);
      renderProfiles(list);
      renderGroup(groupOfChat(groups.groups, chatId, summary), list.profiles);
    } catch (err) {
      replace(profilesPart, h("p", { class: "error-text" }, `Could not read the profiles and groups: ${describeError(err)}`));
      replace(groupPart);
    }
  }

  /** ChatSummary.group_id of this chat (ListChats), or "" when not found. */
  async function summaryGroupId() {
    try {
      const res = await api.clients.memory?.listChats({ pageSize: 1000 });
      const own = res?.chats?.find((/** @type {any} */ c) => c.chatId === chatId);
      return own?.groupId ?? "";
    } catch {
      return "";
    }
  }

  /** @param {any} settings */
  function settingsJson(settings) {
    if (!settingsDesc || !settings) return "{}";
    return JSON.stringify(toJson(settingsDesc, settings, { registry: api.registry }), null, 2);
  }

  /** @param {any} list ListProfilesResponse */
  function renderProfiles(list) {
    const names = list.profiles.map((/** @type {any} */ p) => p.name);
    const inUse = host.inUse();

    // ---- the chat's own profile
    const choice = /** @type {HTMLSelectElement} */ (
      h(
        "select",
        { "data-testid": "chat-profile" },
        h("option", { value: FOLLOW }, "Follow the group's, character's or global profile"),
        h("option", { value: NONE }, "No profile"),
        names.map((/** @type {string} */ n) => h("option", { value: n, selected: n === inUse }, n)),
      )
    );
    const chatProfile = h(
      "fieldset",
      null,
      h("legend", null, "This chat's profile"),
      h("p", { class: "hint", "data-testid": "profile-in-use" }, inUse ? `In use: ${inUse}.` : "In use: none."),
      field("Profile for this chat", choice),
      actionButton("Set this chat's profile", async () => {
        const v = choice.value;
        try {
          if (v === FOLLOW) await api.clients.settings.updateSettings({ chatId, clear: ["profile"] });
          else await api.clients.settings.updateSettings({ chatId, settings: { profile: v === NONE ? "" : v } });
          notify(v === FOLLOW ? "This chat now follows the bound or global profile." : `This chat's profile is now ${v === NONE ? "none" : v}.`);
          ctx.changed();
          await host.reload();
        } catch (err) {
          showError("Setting the chat's profile", err);
        }
      }),
    );

    // ---- the list
    const rows = list.profiles.map((/** @type {any} */ p) =>
      h(
        "li",
        { class: "profile", "data-testid": "profile", "data-profile": p.name },
        h("h5", null, p.name),
        h("pre", { class: "small" }, settingsJson(p.settings)),
        actionButton(
          "Delete",
          async () => {
            if (!window.confirm(`Delete the profile ${p.name}? Chats and bindings naming it pass it over until a profile of that name exists again.`)) return;
            try {
              await api.clients.settings.deleteProfile({ name: p.name });
              notify(`Deleted the profile ${p.name}.`);
              ctx.changed();
              await host.reload();
            } catch (err) {
              showError("Deleting the profile", err);
            }
          },
          { class: "small", "aria-label": `Delete the profile ${p.name}` },
        ),
      ),
    );

    // ---- create or replace
    const nameInput = /** @type {HTMLInputElement} */ (h("input", { type: "text", autocomplete: "off" }));
    const patch = /** @type {HTMLTextAreaElement} */ (h("textarea", { rows: "6", spellcheck: "false" }));
    const form = h(
      "form",
      {
        class: "profile-form",
        onsubmit: async (/** @type {Event} */ e) => {
          e.preventDefault();
          const name = nameInput.value.trim();
          if (!name) {
            showError("Saving the profile", new Error("the profile needs a name"));
            return;
          }
          const parsed = parsePatch(patch.value);
          if (!parsed.ok) {
            showError("Saving the profile", new Error(parsed.error));
            return;
          }
          try {
            const settings = settingsDesc ? fromJson(settingsDesc, /** @type {any} */ (parsed.value), { registry: api.registry }) : {};
            await api.clients.settings.putProfile({ name, settings });
            notify(`Saved the profile ${name}.`);
            ctx.changed();
            await host.reload();
          } catch (err) {
            showError("Saving the profile", err);
          }
        },
      },
      h("h5", null, "Create or replace a profile"),
      field("Profile name", nameInput),
      field("Profile settings (JSON)", patch, 'Setting names and values, e.g. {"depth": 4, "position": "INJECTION_POSITION_IN_CHAT"}; only these are laid over the global settings.'),
      h(
        "div",
        { class: "row" },
        h(
          "button",
          {
            type: "button",
            onclick: () => {
              if (!settingsDesc) return;
              const values = host.formPatch();
              patch.value = JSON.stringify(toJson(settingsDesc, create(settingsDesc, /** @type {any} */ (values)), { registry: api.registry }), null, 2);
            },
          },
          "Fill from the form's values that differ from the global ones",
        ),
        h("button", { type: "submit", class: "primary" }, "Save the profile"),
      ),
    );

    replace(
      profilesPart,
      h("h4", null, "Profiles"),
      h("p", { class: "muted small" }, "Named settings patches of the tenant. A chat uses its own profile, else its group's, else its character's, else the global one."),
      chatProfile,
      rows.length ? h("ul", { class: "profile-list", "data-testid": "profiles" }, rows) : h("p", { class: "muted" }, "No profiles yet."),
      form,
    );
  }

  /**
   * @param {any} group
   * @param {any[]} profiles
   */
  function renderGroup(group, profiles) {
    if (!group) {
      replace(groupPart);
      return;
    }
    if (pending.groupId !== group.id) {
      pending.groupId = group.id;
      pending.members.clear();
      pending.bound = null;
    }
    /** @type {Map<string, HTMLInputElement>} */
    const boxes = new Map();
    const members = group.members.map((/** @type {string} */ m) => {
      const checked = pending.members.get(m) ?? group.disabledMembers.includes(m);
      const box = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", id: uid("gm"), checked, "data-member": m }));
      box.addEventListener("change", () => pending.members.set(m, box.checked));
      boxes.set(m, box);
      return h("li", { class: "switch" }, box, h("label", { for: box.id }, `Disable ${m}`));
    });
    const shown = pending.bound ?? group.profile;
    const bound = /** @type {HTMLSelectElement} */ (
      h(
        "select",
        { "data-testid": "group-profile" },
        h("option", { value: "" }, "No profile bound"),
        profiles.map((p) => h("option", { value: p.name, selected: p.name === shown }, p.name)),
      )
    );
    bound.addEventListener("change", () => {
      pending.bound = bound.value;
    });
    replace(
      groupPart,
      h("h4", null, `Group ${group.name || group.id}`),
      h("p", { class: "muted small" }, "A disabled member's messages are left out of this group's chats (not of its one-on-one chats)."),
      h(
        "fieldset",
        { "data-testid": "group-members" },
        h("legend", null, "Members"),
        members.length ? h("ul", { class: "plain" }, members) : h("p", { class: "muted" }, "The group has no members."),
        actionButton("Save disabled members", async () => {
          const disabled = disabledMembers(group.members, group.disabledMembers, (m) => Boolean(boxes.get(m)?.checked));
          try {
            await api.clients.settings.setGroupMembers({ groupId: group.id, disabledMembers: disabled });
            pending.members.clear();
            notify(`Saved: ${disabled.length} disabled member${disabled.length === 1 ? "" : "s"} in ${group.name || group.id}.`);
            ctx.changed();
            await load();
          } catch (err) {
            showError("Saving the group's members", err);
          }
        }),
      ),
      h(
        "fieldset",
        null,
        h("legend", null, "The group's profile"),
        field("Profile bound to this group", bound),
        actionButton("Bind to the group", async () => {
          try {
            await api.clients.settings.bindProfile({ target: { case: "groupId", value: group.id }, profile: bound.value });
            pending.bound = null;
            notify(bound.value ? `Bound ${bound.value} to ${group.name || group.id}.` : `Unbound the profile of ${group.name || group.id}.`);
            ctx.changed();
            await host.reload();
          } catch (err) {
            showError("Binding the group's profile", err);
          }
        }),
      ),
    );
  }

  // The settings view calls `refresh` once it has read the settings.
  return { refresh: load };
}
