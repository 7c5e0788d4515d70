// World Info: the books that apply to the chat (its effective settings,
// SettingsService.GetSettings, against LorebookService.ListLorebooks), their
// entries (ExportLorebook, read when a book is opened), and which entries a
// scan of the chat activates now and where they go
// (LorebookService.ScanWorldInfo as a dry run: no timed effect is started,
// advanced or ended).
import { h, replace, badge, timeEl } from "../dom.js";
import { describeError, isFeatureMissing, listAll } from "../api.js";
import { wiPlacement, truncate } from "../format.js";

const MAX_ENTRIES = 300;

/**
 * @param {HTMLElement} panel
 * @param {import("./chat.js").ViewContext} ctx
 * @returns {import("./chat.js").View}
 */
export function mountWorldInfo(panel, ctx) {
  const { api, chatId } = ctx;
  const booksBox = h("div", { "data-testid": "wi-books" }, h("p", { class: "muted" }, "Reading the books…"));
  const scanBox = h("div", { "data-testid": "wi-scan" }, h("p", { class: "muted" }, "Scanning…"));
  const rescan = h("button", { type: "button", class: "small", onclick: () => scan() }, "Scan again");
  replace(
    panel,
    h("div", { class: "panel-head" }, h("h3", null, "World Info")),
    h("h4", null, "Books that apply to this chat"),
    booksBox,
    h("div", { class: "panel-head" }, h("h4", null, "Activated now"), rescan),
    h("p", { class: "muted small" }, "A scan of the chat's stored transcript, as SillyTavern runs it before a generation. A dry run: sticky and cooldown effects are not changed."),
    scanBox,
  );

  async function loadBooks() {
    try {
      const [settings, books] = await Promise.all([
        api.clients.settings.getSettings({ chatId }),
        listAll((pageToken) => api.clients.lorebook.listLorebooks({ pageSize: 1000, pageToken }), "lorebooks"),
      ]);
      /** @type {Map<string, any>} */
      const stored = new Map(books.items.map((/** @type {any} */ b) => [b.name, b]));
      /** @type {Array<[string, string]>} */
      const applied = [];
      if (settings.worldInfoChatBook) applied.push([settings.worldInfoChatBook, "the chat's book"]);
      if (settings.worldInfoPersonaBook) applied.push([settings.worldInfoPersonaBook, "the persona's book"]);
      for (const name of settings.worldInfoCharacterBooks?.values ?? []) applied.push([name, "character book"]);
      for (const name of settings.worldInfoGlobalBooks?.values ?? []) applied.push([name, "global book"]);
      const others = books.items.filter((/** @type {any} */ b) => !applied.some(([n]) => n === b.name));
      replace(
        booksBox,
        applied.length
          ? h("ul", { class: "books" }, applied.map(([name, role]) => bookItem(name, role, stored.get(name))))
          : h("p", { class: "muted" }, "No book applies to this chat (its settings name none)."),
        others.length
          ? h("details", null, h("summary", null, `Other books of this tenant (${others.length})`), h("ul", { class: "books" }, others.map((/** @type {any} */ b) => bookItem(b.name, "not applied", b))))
          : null,
      );
    } catch (err) {
      replace(booksBox, h("p", { class: isFeatureMissing(err) ? "muted" : "error-text" }, isFeatureMissing(err) ? "World Info is not available on this server." : `Could not read the books: ${describeError(err)}`));
    }
  }

  /**
   * @param {string} name
   * @param {string} role
   * @param {any} book
   */
  function bookItem(name, role, book) {
    if (!book) {
      return h("li", null, h("strong", null, name), " · ", role, " · ", badge("not stored: applies nothing", "warn"));
    }
    const details = /** @type {HTMLDetailsElement} */ (h("details", { class: "book" }, h("summary", null, h("strong", null, name), ` · ${role} · ${book.entryCount} entries · updated `, timeEl(book.updatedAt))));
    details.addEventListener("toggle", async () => {
      if (!details.open || details.dataset.done) return;
      details.dataset.done = "1";
      const box = h("div", null, h("p", { class: "muted" }, "Reading the entries…"));
      details.append(box);
      try {
        const res = await api.clients.lorebook.exportLorebook({ name });
        replace(box, entriesTable(JSON.parse(res.json)));
      } catch (err) {
        replace(box, h("p", { class: "error-text" }, `Could not read the book: ${describeError(err)}`));
      }
    });
    return h("li", null, details);
  }

  /** @param {any} file a World Info file */
  function entriesTable(file) {
    const entries = Object.entries(file?.entries ?? {}).filter(([, e]) => e && typeof e === "object");
    if (entries.length === 0) return h("p", { class: "muted" }, "No entries.");
    const rows = entries.slice(0, MAX_ENTRIES).map(([uid, /** @type {any} */ e]) =>
      h(
        "tr",
        null,
        h("th", { scope: "row" }, h("code", null, uid)),
        h("td", null, e.comment || h("span", { class: "muted" }, "—")),
        h("td", null, Array.isArray(e.key) ? e.key.join(", ") : ""),
        h("td", null, [e.constant ? "constant" : null, e.disable ? "disabled" : null, e.selective ? "selective" : null].filter(Boolean).join(", ") || "—"),
        h("td", null, typeof e.position === "number" ? wiPlacement(api, { position: e.position, depth: e.depth ?? -1, role: (e.role ?? 0) + 1, outletName: e.outletName ?? "" }) : "—"),
        h("td", { class: "wrap" }, truncate(String(e.content ?? ""), 240)),
      ),
    );
    return [
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "data" },
          h("thead", null, h("tr", null, ["Uid", "Title", "Keys", "Flags", "Goes", "Content"].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", null, rows),
        ),
      ),
      entries.length > MAX_ENTRIES ? h("p", { class: "muted small" }, `The first ${MAX_ENTRIES} of ${entries.length} entries.`) : null,
    ];
  }

  let scanSeq = 0;
  async function scan() {
    const seq = ++scanSeq;
    scanBox.setAttribute("aria-busy", "true");
    try {
      const res = await api.clients.lorebook.scanWorldInfo({ chatId, dryRun: true });
      if (seq !== scanSeq) return;
      replace(scanBox, scanView(res));
    } catch (err) {
      if (seq !== scanSeq) return;
      replace(scanBox, h("p", { class: isFeatureMissing(err) ? "muted" : "error-text" }, isFeatureMissing(err) ? "World Info scans are not available on this server." : `Could not scan: ${describeError(err)}`));
    } finally {
      if (seq === scanSeq) scanBox.removeAttribute("aria-busy");
    }
  }

  /** @param {any} res */
  function scanView(res) {
    if (res.activated.length === 0) return h("p", { class: "muted" }, "No entry is activated now.");
    const rows = res.activated.map((/** @type {any} */ e) =>
      h(
        "tr",
        null,
        h("td", null, e.book),
        h("th", { scope: "row" }, h("code", null, e.uid)),
        h("td", null, wiPlacement(api, e)),
        h("td", null, String(e.order)),
        h("td", { class: "wrap" }, truncate(e.content, 240)),
      ),
    );
    const places = [
      ["Before the character definitions", res.before],
      ["After the character definitions", res.after],
      ["Above the author's note", res.anTop],
      ["Below the author's note", res.anBottom],
      ...res.depth.map((/** @type {any} */ d) => [`At depth ${d.depth} (${api.enumName("recap.v1.InjectionRole", d.role)})`, d.text]),
      ...res.examplesTop.map((/** @type {string} */ t) => ["Above the example messages", t]),
      ...res.examplesBottom.map((/** @type {string} */ t) => ["Below the example messages", t]),
      ...Object.entries(res.outlets).map(([k, v]) => [`Outlet “${k}”`, v]),
    ].filter(([, text]) => text);
    return [
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "data", "data-testid": "wi-activated" },
          h("caption", { class: "visually-hidden" }, "Activated entries, in order of activation"),
          h("thead", null, h("tr", null, ["Book", "Uid", "Goes", "Order", "Content"].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", null, rows),
        ),
      ),
      places.length
        ? [h("h4", null, "Where they go"), h("dl", { class: "facts wide" }, places.map(([label, text]) => [h("dt", null, label), h("dd", null, h("pre", { class: "tier-text", tabindex: "0" }, text))]))]
        : null,
    ];
  }

  const refresh = () => Promise.all([loadBooks(), scan()]);
  refresh();
  return { live: true, refresh };
}
