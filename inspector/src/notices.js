// Announcements: live updates go to a polite aria-live region (read out by
// screen readers, shown in the status line), errors to a visible list of
// notices (role="alert") that stay until dismissed.
import { h } from "./dom.js";
import { describeError } from "./api.js";

/** @param {string} id */
function region(id) {
  return /** @type {HTMLElement} */ (document.getElementById(id));
}

/**
 * A polite announcement of a live change ("Injection updated, revision 7").
 * @param {string} text
 */
export function notify(text) {
  const live = region("live");
  if (!live) return;
  live.textContent = text;
}

/**
 * Shows an error until dismissed; the same text again replaces the older.
 * @param {string} context what was being done ("Saving the recap")
 * @param {unknown} err
 */
export function showError(context, err) {
  const list = region("notices");
  if (!list) return;
  const text = `${context}: ${describeError(err)}`;
  for (const old of list.querySelectorAll(".notice")) {
    if (old.querySelector(".notice-text")?.textContent === text) old.remove();
  }
  const item = h(
    "div",
    { class: "notice notice-error", role: "alert", "data-testid": "error-notice" },
    h("p", { class: "notice-text" }, text),
    h(
      "button",
      {
        type: "button",
        class: "link",
        onclick: () => item.remove(),
      },
      "Dismiss",
    ),
  );
  list.append(item);
  // Keep the last five.
  while (list.children.length > 5) list.firstElementChild?.remove();
}

/** Removes every error shown. */
export function clearErrors() {
  region("notices")?.replaceChildren();
}
