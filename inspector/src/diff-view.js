// The difference between two texts, word by word (jsdiff's
// diffWordsWithSpace), as <del>/<ins> marks: struck-through and underlined
// as well as coloured, so colour is never the only cue.
import { diffWordsWithSpace } from "diff";
import { h } from "./dom.js";

/**
 * @param {string} before
 * @param {string} after
 * @returns {HTMLElement}
 */
export function renderDiff(before, after) {
  if (before === after) return h("p", { class: "muted" }, "No difference: the texts are the same.");
  const parts = diffWordsWithSpace(before, after);
  let added = 0;
  let removed = 0;
  const nodes = parts.map((part) => {
    if (part.added) {
      added += 1;
      return h("ins", null, part.value);
    }
    if (part.removed) {
      removed += 1;
      return h("del", null, part.value);
    }
    return part.value;
  });
  return h(
    "figure",
    { class: "diff", "data-testid": "diff" },
    h("figcaption", { class: "small muted" }, `${added} insertions, ${removed} deletions. Removed text is struck through, added text underlined.`),
    h("div", { class: "diff-text", tabindex: "0" }, nodes),
  );
}
