// The running recap: the current version and the others
// (MemoryService.ListRunningRecaps), the difference between any two, what
// each version changed from the one before (with the scene recap it merged,
// read with GetMessageData), and the edits the API allows: make a version
// current (SelectRunningRecap), add a new version (AddRunningRecap), delete
// one (DeleteRunningRecap, once confirmed), and have recapd rebuild it from
// every scene recap (RegenerateRunningRecap, a job).
import { h, replace, field, timeEl, badge, uid, messageLink, actionButton } from "../dom.js";
import { describeError } from "../api.js";
import { notify, showError } from "../notices.js";
import { renderDiff } from "../diff-view.js";
import { jobButton } from "../job-start.js";

/**
 * @param {HTMLElement} panel
 * @param {import("./chat.js").ViewContext} ctx
 * @returns {import("./chat.js").View}
 */
export function mountRunningRecap(panel, ctx) {
  const { api, chatId } = ctx;
  /** @type {{ currentVersion?: number, versions: any[] }} */
  let data = { versions: [] };
  let loadSeq = 0;
  /** What the page shows of `data`: no new render when it is the same. */
  let shown = "";
  /** @type {Set<number>} versions whose changes are open */
  const openChanges = new Set();

  const currentBox = h("div", { class: "current-recap", "data-testid": "current-recap" });
  const table = h("div", { class: "table-wrap" });
  const compareBox = h("div", { class: "compare", "data-testid": "recap-compare" });
  const addBox = h("div", { class: "add-version" });
  replace(
    panel,
    h(
      "div",
      { class: "panel-head" },
      h("h3", null, "Running recap"),
      api.clients.recap
        ? jobButton(ctx, {
            label: "Regenerate from all scenes",
            ariaLabel: "Regenerate from all scenes: a new running-recap version from every scene recap (a job)",
            doing: "Starting the running recap's regeneration",
            start: () => api.clients.recap.regenerateRunningRecap({ chatId }),
            testid: "regenerate-recap",
            className: "",
          })
        : null,
    ),
    api.clients.recap
      ? h(
          "p",
          { class: "muted small" },
          "Regenerating writes a new current version from the scene recaps in chat order, editing the current one; the newest scenes the setting running_recap_exclude_latest names are held back.",
        )
      : null,
    currentBox,
    h("h4", null, "Versions"),
    table,
    h("h4", null, "Compare two versions"),
    compareBox,
    h("h4", { id: "add-version-heading" }, "Add a version"),
    addBox,
  );

  async function load() {
    const seq = ++loadSeq;
    try {
      const res = await api.clients.memory.listRunningRecaps({ chatId });
      if (seq !== loadSeq) return;
      data = res;
      const signature = JSON.stringify([res.currentVersion, res.versions.map((/** @type {any} */ v) => [v.version, v.content, v.sceneCount, v.newSceneMessageId])]);
      if (signature === shown) return;
      shown = signature;
      render();
    } catch (err) {
      if (seq !== loadSeq) return;
      replace(currentBox, h("p", { role: "alert" }, `Could not read the running recap: ${describeError(err)}`));
    }
  }

  /** @param {number} n */
  const byNumber = (n) => data.versions.find((v) => v.version === n);

  function render() {
    const current = data.currentVersion === undefined ? undefined : byNumber(data.currentVersion);
    if (data.versions.length === 0) {
      replace(currentBox, h("p", { class: "muted" }, "No running recap yet: nothing is injected from it."));
    } else if (!current) {
      replace(currentBox, h("p", null, badge("no current version", "warn"), data.currentVersion === undefined ? " None is selected: nothing is injected." : ` Version ${data.currentVersion} is named current but does not exist: nothing is injected.`));
    } else {
      replace(
        currentBox,
        h("p", null, `Current version: ${current.version}`, h("span", { class: "muted" }, " · added "), timeEl(current.createdAt)),
        h("pre", { class: "recap-content", tabindex: "0" }, current.content || "(empty)"),
      );
    }
    renderTable();
    renderCompare();
    renderAdd(current);
  }

  function renderTable() {
    if (data.versions.length === 0) {
      replace(table);
      return;
    }
    const rows = [...data.versions].reverse().map((v) => {
      const isCurrent = v.version === data.currentVersion;
      const prev = data.versions.filter((o) => o.version < v.version).pop();
      const changes = /** @type {HTMLDetailsElement} */ (h("details", { class: "changes" }, h("summary", null, prev ? `What it changed from version ${prev.version}` : "Its text (the first version)")));
      changes.addEventListener("toggle", () => {
        if (changes.open) openChanges.add(v.version);
        else openChanges.delete(v.version);
        if (!changes.open || changes.dataset.done) return;
        changes.dataset.done = "1";
        changes.append(prev ? renderDiff(prev.content, v.content) : h("pre", { class: "recap-content", tabindex: "0" }, v.content));
        if (v.newSceneMessageId) changes.append(mergedScene(v.newSceneMessageId));
      });
      if (openChanges.has(v.version)) queueMicrotask(() => { changes.open = true; });
      return h(
        "tr",
        { dataset: { version: String(v.version) } },
        h("th", { scope: "row" }, String(v.version), isCurrent ? [" ", badge("current", "ok")] : null),
        h("td", null, timeEl(v.createdAt, true)),
        h("td", null, `${v.sceneCount}`, v.excludedCount ? ` (${v.excludedCount} left out)` : ""),
        h("td", null, v.newSceneMessageId ? messageLink(ctx.showMessage, v.newSceneMessageId) : h("span", { class: "muted" }, "—")),
        h(
          "td",
          null,
          h(
            "span",
            { class: "row" },
            isCurrent
              ? null
              : h("button", { type: "button", class: "small", onclick: () => select(v.version), "aria-label": `Make version ${v.version} current` }, "Make current"),
            actionButton("Delete", () => remove(v.version, isCurrent), { class: "small", "aria-label": `Delete version ${v.version}` }),
          ),
          changes,
        ),
      );
    });
    replace(
      table,
      h(
        "table",
        { class: "data", "data-testid": "recap-versions" },
        h("caption", { class: "visually-hidden" }, "Running-recap versions, newest first"),
        h("thead", null, h("tr", null, h("th", { scope: "col" }, "Version"), h("th", { scope: "col" }, "Added"), h("th", { scope: "col" }, "Scenes"), h("th", { scope: "col" }, "At scene message"), h("th", { scope: "col" }, "Actions"))),
        h("tbody", null, rows),
      ),
    );
  }

  /** @param {string} messageId */
  function mergedScene(messageId) {
    const box = h("div", { class: "merged-scene small" }, h("p", { class: "muted" }, "Reading the scene it merged…"));
    api.clients.memory.getMessageData({ chatId, messageId }).then(
      (/** @type {any} */ d) => replace(
        box,
        h("p", null, h("span", { class: "label" }, "Scene merged "), d.sceneBreakName ? `“${d.sceneBreakName}” ` : "", messageLink(ctx.showMessage, messageId)),
        d.sceneRecapMemory ? h("p", { class: "scene-recap" }, d.sceneRecapMemory) : h("p", { class: "muted" }, "That message has no scene recap now."),
      ),
      (/** @type {unknown} */ err) => replace(box, h("p", { class: "muted" }, `Scene message ${messageId}: ${describeError(err)}`)),
    );
    return box;
  }

  let compareFrom = /** @type {number | undefined} */ (undefined);
  let compareTo = /** @type {number | undefined} */ (undefined);
  function renderCompare() {
    const versions = data.versions;
    if (versions.length < 2) {
      replace(compareBox, h("p", { class: "muted" }, "Needs two versions."));
      return;
    }
    const numbers = versions.map((v) => v.version);
    const to = numbers.includes(/** @type {number} */ (compareTo)) ? compareTo : data.currentVersion ?? numbers[numbers.length - 1];
    const lower = numbers.filter((n) => n < /** @type {number} */ (to));
    const from = numbers.includes(/** @type {number} */ (compareFrom)) && compareFrom !== to ? compareFrom : lower.length ? lower[lower.length - 1] : numbers[0];
    const mk = (/** @type {number | undefined} */ selected) =>
      /** @type {HTMLSelectElement} */ (h("select", null, numbers.map((n) => h("option", { value: String(n), selected: n === selected }, `Version ${n}${n === data.currentVersion ? " (current)" : ""}`))));
    const fromSel = mk(from);
    const toSel = mk(to);
    const out = h("div", { class: "diff-out" });
    const show = () => {
      compareFrom = Number(fromSel.value);
      compareTo = Number(toSel.value);
      const a = byNumber(compareFrom);
      const b = byNumber(compareTo);
      replace(out, a && b ? renderDiff(a.content, b.content) : null);
    };
    fromSel.addEventListener("change", show);
    toSel.addEventListener("change", show);
    replace(compareBox, h("div", { class: "inline-fields" }, field("From", fromSel), field("To", toSel)), out);
    show();
  }

  // A draft being written is never overwritten by a refresh.
  let draftDirty = false;
  /** @param {any} current */
  function renderAdd(current) {
    if (draftDirty) return;
    const area = /** @type {HTMLTextAreaElement} */ (h("textarea", { rows: "6", "data-testid": "new-version-text" }, current?.content ?? ""));
    area.addEventListener("input", () => {
      draftDirty = true;
    });
    const keep = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", id: uid("keep"), checked: Boolean(current) }));
    const submit = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: "primary" }, "Add as the current version"));
    replace(
      addBox,
      h(
        "form",
        {
          class: "edit-form",
          "aria-labelledby": "add-version-heading",
          onsubmit: async (/** @type {Event} */ e) => {
            e.preventDefault();
            submit.disabled = true;
            try {
              const base = keep.checked && current ? current : null;
              const added = await api.clients.memory.addRunningRecap({
                chatId,
                content: area.value,
                sceneCount: base?.sceneCount ?? 0,
                excludedCount: base?.excludedCount ?? 0,
                prevSceneMessageId: base?.prevSceneMessageId ?? "",
                newSceneMessageId: base?.newSceneMessageId ?? "",
              });
              notify(`Version ${added.version} added and made current; recapd refreshed the injection.`);
              compareTo = added.version;
              compareFrom = undefined;
              draftDirty = false;
              ctx.changed();
              await load();
            } catch (err) {
              showError("Adding a running-recap version", err);
            } finally {
              submit.disabled = false;
            }
          },
        },
        field("Text of the new version", area, "AddRunningRecap: the new version becomes current and the injection is refreshed at once. Older versions stay."),
        current
          ? h("div", { class: "switch" }, keep, h("label", { for: keep.id }, `Keep version ${current.version}'s scene count and scene messages`))
          : null,
        submit,
      ),
    );
  }

  /** @param {number} version */
  async function select(version) {
    try {
      const res = await api.clients.memory.selectRunningRecap({ chatId, version });
      data = res;
      shown = "";
      notify(`Version ${version} is now current; recapd refreshed the injection.`);
      ctx.changed();
      render();
    } catch (err) {
      showError(`Making version ${version} current`, err);
    }
  }

  /**
   * Deletes a version once the user confirms it.
   * @param {number} version
   * @param {boolean} isCurrent
   */
  async function remove(version, isCurrent) {
    const others = data.versions.filter((v) => v.version !== version).map((v) => v.version);
    const then = !isCurrent
      ? ""
      : others.length
        ? ` It is the current version: version ${Math.max(...others)} becomes current.`
        : " It is the only version: nothing will be injected from the running recap.";
    if (!window.confirm(`Delete running-recap version ${version}? This cannot be undone.${then}`)) return;
    try {
      const res = await api.clients.memory.deleteRunningRecap({ chatId, version });
      data = res;
      shown = "";
      openChanges.delete(version);
      notify(`Version ${version} deleted; recapd refreshed the injection.`);
      ctx.changed();
      render();
    } catch (err) {
      showError(`Deleting version ${version}`, err);
    }
  }

  load();
  return { live: true, refresh: load };
}
