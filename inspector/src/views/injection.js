// The injection as it is placed: every tier (running recap, message recaps,
// recall) with its position, depth, role and the refresh that made it,
// followed live (the chat's Subscribe stream); and a preview of the whole
// prompt SillyTavern would build with it (PromptService.RenderPrompt, a dry
// run: it never advances World Info's timed effects), made again at each
// refresh.
import { h, replace, field, badge, timeEl, uid } from "../dom.js";
import { describeError } from "../api.js";
import { TIERS } from "../injection-store.js";
import { placement, truncate, count } from "../format.js";

/**
 * @param {HTMLElement} panel
 * @param {import("./chat.js").ViewContext} ctx
 * @returns {import("./chat.js").View}
 */
export function mountInjection(panel, ctx) {
  const { api, chatId, store } = ctx;
  const tiersBox = h("div", { class: "tiers", "data-testid": "injection-tiers" });
  const promptBox = h("div", { class: "prompt-preview", "data-testid": "prompt-preview", "aria-busy": "true" });

  const modeSel = /** @type {HTMLSelectElement} */ (
    h(
      "select",
      null,
      h("option", { value: "2" }, "Chat completion"),
      h("option", { value: "1" }, "Text completion"),
    )
  );
  const story = /** @type {HTMLInputElement} */ (h("input", { type: "text", value: "[story string: character card and system prompt]" }));
  modeSel.addEventListener("change", () => renderPrompt());
  story.addEventListener("change", () => renderPrompt());

  const headingId = uid("prompt-heading");
  replace(
    panel,
    h("div", { class: "panel-head" }, h("h3", null, "Injection")),
    h("p", { class: "muted small" }, "Where each of recapd's injections goes, updated live at every refresh; their texts are beside, and placed in the prompt below."),
    tiersBox,
    h("div", { class: "panel-head" }, h("h3", { id: headingId }, "Prompt preview")),
    h(
      "p",
      { class: "muted small" },
      "RenderPrompt with the chat's stored transcript: the prompt SillyTavern would build, recapd's injections and World Info placed. A dry run: nothing is written.",
    ),
    h("div", { class: "inline-fields" }, field("Mode", modeSel), field("Story string", story)),
    promptBox,
  );

  function renderTiers() {
    const rows = TIERS.map(({ key, label }) => {
      const inj = store.get(key);
      if (!inj) return null;
      const never = inj.revision === 0n && !inj.text;
      return h(
        "tr",
        { "data-testid": `injection-tier-${key}` },
        h(
          "th",
          { scope: "row" },
          label,
          inj.runningRecapVersion !== undefined ? h("span", { class: "small muted" }, ` · version ${inj.runningRecapVersion}`) : null,
          h("br"),
          h("code", { class: "small muted" }, key),
        ),
        h(
          "td",
          null,
          never ? h("span", { class: "muted" }, "never refreshed (off, or nothing yet)")
            : inj.text ? placement(api, inj)
            : h("span", { class: "muted" }, "nothing: the text is empty"),
          inj.text && inj.scan ? h("span", { class: "small muted" }, " · World Info scans it") : null,
          !inj.enabled && !never ? [" ", badge("chat disabled", "warn")] : null,
        ),
        h("td", null, String(inj.revision)),
        h(
          "td",
          { class: "small" },
          never ? "—" : [api.enumName("recap.v1.RefreshTrigger", inj.trigger), h("br"), timeEl(inj.refreshedAt, true)],
        ),
        h("td", null, String(inj.tokenCount)),
      );
    });
    if (!rows.some(Boolean)) {
      replace(tiersBox, h("p", { class: "muted" }, "Reading the injection…"));
      return;
    }
    replace(
      tiersBox,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "data" },
          h("caption", { class: "visually-hidden" }, "recapd's injections for this chat, one per tier"),
          h("thead", null, h("tr", null, ["Tier", "Goes", "Revision", "Last refresh", "Tokens"].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", null, rows),
        ),
      ),
    );
  }

  let promptSeq = 0;
  async function renderPrompt() {
    if (!api.clients.prompt) {
      replace(promptBox, h("p", { class: "muted" }, "This server has no PromptService: no preview."));
      promptBox.removeAttribute("aria-busy");
      return;
    }
    const seq = ++promptSeq;
    promptBox.setAttribute("aria-busy", "true");
    try {
      const res = await api.clients.prompt.renderPrompt({
        chatId,
        mode: Number(modeSel.value),
        storyString: story.value,
        dryRun: true,
      });
      if (seq !== promptSeq) return;
      replace(promptBox, promptView(res));
    } catch (err) {
      if (seq !== promptSeq) return;
      replace(promptBox, h("p", { role: "alert" }, `Could not render the prompt: ${describeError(err)}`));
    } finally {
      if (seq === promptSeq) promptBox.removeAttribute("aria-busy");
    }
  }

  /** @param {any} res */
  function promptView(res) {
    const tierTexts = new Map();
    for (const { key, label } of TIERS) {
      const inj = store.get(key);
      if (inj?.text) tierTexts.set(inj.text.trim(), label);
    }
    const wiTexts = (res.worldInfo?.activated ?? []).map((/** @type {any} */ e) => e.content.trim()).filter(Boolean);
    const storyText = story.value.trim();
    /** @param {any} m */
    const source = (m) => {
      if (m.messageId) return { kind: "history", label: `message ${m.messageId}` };
      const content = m.content.trim();
      for (const [text, label] of tierTexts) {
        if (content.includes(text)) return { kind: "recapd", label: `recapd: ${label}` };
      }
      if (wiTexts.some((t) => content.includes(t))) return { kind: "part", label: "World Info" };
      if (storyText && content.includes(storyText)) return { kind: "part", label: "story string" };
      return { kind: "part", label: "prompt part" };
    };
    const msgs = res.messages.map((/** @type {any} */ m, /** @type {number} */ i) => ({ m, i, src: source(m) }));
    // A long history is shortened around what is not history.
    const keep = new Set();
    const historyCount = msgs.filter((x) => x.src.kind === "history").length;
    msgs.forEach((x) => {
      if (historyCount <= 30 || x.src.kind !== "history" || x.i >= msgs.length - 6) {
        for (let d = -2; d <= 2; d++) keep.add(x.i + d);
      }
    });
    const items = [];
    let skipped = 0;
    for (const x of msgs) {
      if (!keep.has(x.i)) {
        skipped++;
        continue;
      }
      if (skipped) items.push(h("li", { class: "pm-skip muted small" }, `… ${count(skipped, "history message")} …`));
      skipped = 0;
      const isHistory = x.src.kind === "history";
      items.push(
        h(
          "li",
          { class: `pm pm-${x.src.kind}` },
          h(
            "div",
            { class: "pm-head small" },
            h("strong", null, api.enumName("recap.v1.InjectionRole", x.m.role)),
            x.m.name ? ` ${x.m.name}` : "",
            " · ",
            x.src.kind === "recapd" ? badge(x.src.label, "ok") : h("span", { class: "muted" }, x.src.label),
          ),
          h("pre", { class: isHistory ? "pm-content pm-content-short" : "pm-content", tabindex: isHistory ? undefined : "0" }, isHistory ? truncate(x.m.content, 200) : x.m.content),
        ),
      );
    }
    if (skipped) items.push(h("li", { class: "pm-skip muted small" }, `… ${count(skipped, "history message")} …`));
    const wi = res.worldInfo?.activated?.length ?? 0;
    return [
      res.text ? [h("h4", null, "Text"), h("pre", { class: "pm-content", tabindex: "0" }, res.text)] : null,
      h("h4", null, `Messages (${res.messages.length})`),
      h("ol", { class: "prompt-messages" }, items),
      h("p", { class: "small muted" }, res.worldInfo ? `World Info: ${wi} ${wi === 1 ? "entry" : "entries"} activated (see the World Info view).` : ""),
    ];
  }

  const unlisten = store.listen((event) => {
    if (event.kind === "injection") renderTiers();
  });
  renderTiers();
  store.ready.then(() => renderPrompt());

  return {
    live: true,
    refresh: () => renderPrompt(),
    dispose: unlisten,
  };
}
