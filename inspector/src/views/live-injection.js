// Beside every view: what recapd injects for the chat right now, each tier
// with its place, followed live (InjectionService.Subscribe through the
// chat's injection store).
import { h, replace, badge, timeEl } from "../dom.js";
import { TIERS } from "../injection-store.js";
import { placement } from "../format.js";
import { notify } from "../notices.js";

/**
 * @param {HTMLElement} container
 * @param {import("./chat.js").ViewContext} ctx
 */
export function mountLiveInjection(container, { api, store }) {
  const state = h("span", { class: "stream-state", "data-testid": "stream-state" });
  const body = h("div", { class: "live-tiers" });
  replace(
    container,
    h("div", { class: "live-head" }, h("h2", { id: "live-heading" }, "Injected now"), state),
    body,
  );

  function renderState() {
    const s = store.state();
    if (s === "live") replace(state, badge("live", "ok", "Following every refresh (Subscribe)"));
    else if (s.startsWith("failed")) replace(state, badge("not live", "bad", s));
    else replace(state, badge(s.split(":")[0] + "…", "info", s));
  }

  function render() {
    const items = [];
    for (const { key, label } of TIERS) {
      const inj = store.get(key);
      if (!inj) continue;
      // A tier that is off and was never used is not worth the room.
      if (key !== "auto_recap_scene" && inj.revision === 0n && !inj.text) continue;
      items.push(
        h(
          "section",
          { class: "tier", "data-testid": `live-tier-${key}`, "aria-label": `${label} tier` },
          h("h3", null, label, " ", h("span", { class: "muted small" }, `rev ${inj.revision}`)),
          h("p", { class: "small muted" }, inj.text ? placement(api, inj) : "nothing injected", inj.text ? ` · ${inj.tokenCount} tokens` : ""),
          inj.text ? h("pre", { class: "tier-text", "data-testid": "live-injection-text" }, inj.text) : null,
          inj.revision > 0n ? h("p", { class: "small muted" }, "Refreshed ", timeEl(inj.refreshedAt, true)) : null,
        ),
      );
    }
    if (items.length === 0) items.push(h("p", { class: "muted" }, store.readError() ? "Nothing to show." : "Reading…"));
    replace(body, items);
  }

  /** @type {Map<string, bigint>} */
  const seen = new Map();
  const unlisten = store.listen((event) => {
    if (event.kind === "state") {
      renderState();
      render();
    }
    else {
      render();
      const inj = event.injection;
      const before = seen.get(inj.key);
      seen.set(inj.key, inj.revision);
      // Announce refreshes, not the first read of each tier.
      if (before !== undefined && before !== inj.revision) {
        notify(`Injection updated: ${inj.key}, revision ${inj.revision}.`);
      }
    }
  });
  renderState();
  render();

  return { dispose: unlisten };
}
