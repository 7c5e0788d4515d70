// Recall: the passages of the chat's history that match its current moment
// (RecallService.Recall with an empty query, as the recall tier sees it),
// or a query typed here.
import { h, replace, field, badge, messageLink } from "../dom.js";
import { describeError, isFeatureMissing } from "../api.js";

/**
 * @param {HTMLElement} panel
 * @param {import("./chat.js").ViewContext} ctx
 * @returns {import("./chat.js").View}
 */
export function mountRecall(panel, ctx) {
  const { api, chatId } = ctx;
  const query = /** @type {HTMLInputElement} */ (h("input", { type: "search", autocomplete: "off" }));
  const out = h("div", { "data-testid": "recall-hits" }, h("p", { class: "muted" }, "Searching…"));
  replace(
    panel,
    h("div", { class: "panel-head" }, h("h3", null, "Recall")),
    h("p", { class: "muted small" }, "The passages of the chat's history recall finds. With an empty query: for the chat's current moment, as the recall tier sees it."),
    h(
      "form",
      {
        class: "inline-fields",
        role: "search",
        onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          load();
        },
      },
      field("Query (empty: the current moment)", query),
      h("button", { type: "submit" }, "Search"),
    ),
    out,
  );

  let seq = 0;
  async function load() {
    const mine = ++seq;
    out.setAttribute("aria-busy", "true");
    try {
      const res = await api.clients.recall.recall({ chatId, query: query.value, limit: 20 });
      if (mine !== seq) return;
      replace(out, hitsView(res));
    } catch (err) {
      if (mine !== seq) return;
      replace(
        out,
        h("p", { class: isFeatureMissing(err) ? "muted" : "error-text" }, isFeatureMissing(err) ? "Recall is not available on this server." : `Recall failed: ${describeError(err)}`),
      );
    } finally {
      if (mine === seq) out.removeAttribute("aria-busy");
    }
  }

  /** @param {any} res */
  function hitsView(res) {
    const mode = res.usedVectors ? "keyword and vector search, fused" : "keyword search alone";
    if (res.hits.length === 0) return h("p", { class: "muted" }, `No passage found (${mode}).`);
    return [
      h("p", { class: "small muted" }, `${res.hits.length} passages, best first (${mode}).`),
      h(
        "ol",
        { class: "hits" },
        res.hits.map((/** @type {any} */ hit) =>
          h(
            "li",
            { class: "hit" },
            h(
              "div",
              { class: "small" },
              badge(`score ${hit.score.toFixed(3)}`, "info"),
              ` keyword ${hit.keywordScore.toFixed(2)}`,
              hit.vectorScore !== undefined ? ` · vector ${hit.vectorScore.toFixed(3)}` : "",
              ` · ${hit.tokens} tokens · `,
              hit.sceneRecap ? "scene recap of " : "message ",
              !hit.chatId || hit.chatId === chatId ? messageLink(ctx.showMessage, hit.messageId) : h("code", null, hit.messageId),
              hit.part ? ` (part ${hit.part + 1})` : "",
              hit.chatId && hit.chatId !== chatId ? [" · from chat ", h("code", null, hit.chatId)] : "",
            ),
            h("p", { class: "hit-text" }, hit.text),
          ),
        ),
      ),
    ];
  }

  load();
  return { live: true, refresh: load };
}
