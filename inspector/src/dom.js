// A small DOM helper: elements built from JavaScript, never from HTML
// strings (so no text is ever parsed as markup), and no inline styles in
// markup (the page's Content-Security-Policy forbids them).

/**
 * @typedef {Record<string, unknown>} Attrs
 * Keys: `class`, `text`, `dataset` (object), `on<event>` (a listener, e.g.
 * `onclick`), boolean attributes (`disabled`, `hidden`, ...: true sets,
 * false/undefined leaves out), anything else as an attribute.
 */

/**
 * Makes an element.
 * @param {string} tag
 * @param {Attrs | null} [attrs]
 * @param {...unknown} children Nodes, strings, numbers, nested arrays of
 *   them; null, undefined and false are skipped
 * @returns {HTMLElement}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") el.className = String(value);
      else if (key === "text") el.textContent = String(value);
      else if (key === "dataset") Object.assign(el.dataset, value);
      else if (key.startsWith("on") && typeof value === "function") {
        el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
      } else if (key === "value" && "value" in el) {
        /** @type {HTMLInputElement} */ (el).value = String(value);
      } else if (key === "checked" && "checked" in el) {
        /** @type {HTMLInputElement} */ (el).checked = Boolean(value);
      } else if (key === "style") {
        throw new Error("inline style attributes are forbidden by the CSP; use a class");
      } else el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

/**
 * Appends children (nested arrays flattened; null/false skipped).
 * @param {Node} parent
 * @param {unknown[]} children
 */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * Replaces an element's children.
 * @param {Element} el
 * @param {...unknown} children
 * @returns {Element}
 */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let idCounter = 0;
/**
 * A document-unique id for label/aria wiring.
 * @param {string} prefix
 */
export function uid(prefix) {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/**
 * A labelled form control: `<div class="field"><label for=…>…</label>control</div>`.
 * @param {string} label
 * @param {HTMLElement} control gets an id if it has none
 * @param {string} [hint] a description, linked with aria-describedby
 */
export function field(label, control, hint) {
  if (!control.id) control.id = uid("f");
  const parts = [h("label", { for: control.id }, label), control];
  if (hint) {
    const hintEl = h("p", { class: "hint", id: uid("hint") }, hint);
    control.setAttribute("aria-describedby", hintEl.id);
    parts.push(hintEl);
  }
  return h("div", { class: "field" }, parts);
}

/**
 * A status badge (text always present: colour is never the only cue).
 * @param {string} text
 * @param {string} kind one of ok, warn, bad, info, muted
 * @param {string} [title]
 */
export function badge(text, kind, title) {
  return h("span", { class: `badge badge-${kind}`, title }, text);
}

/**
 * Formats a google.protobuf.Timestamp (or undefined) in the reader's
 * locale; `short`: the time of day alone when it is today.
 * @param {{ seconds: bigint, nanos: number } | undefined} ts
 * @param {boolean} [short]
 */
export function formatTime(ts, short = false) {
  if (!ts) return "—";
  const date = new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6));
  const time = { hour: "2-digit", minute: "2-digit", second: "2-digit" };
  if (short && date.toDateString() === new Date().toDateString()) {
    return date.toLocaleTimeString(undefined, /** @type {any} */ (time));
  }
  return date.toLocaleString(undefined, /** @type {any} */ ({ year: "numeric", month: "short", day: "numeric", ...time }));
}

/**
 * A timestamp as an ISO string for `<time datetime>`.
 * @param {{ seconds: bigint, nanos: number } | undefined} ts
 */
export function isoTime(ts) {
  if (!ts) return "";
  return new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6)).toISOString();
}

/**
 * `<time>` element for a timestamp (the full date and time in its title).
 * @param {{ seconds: bigint, nanos: number } | undefined} ts
 * @param {boolean} [short] the time of day alone when it is today
 */
export function timeEl(ts, short = false) {
  return ts ? h("time", { datetime: isoTime(ts), title: formatTime(ts) }, formatTime(ts, short)) : h("span", null, "—");
}

/**
 * A button that shows its own busy state and reports failures.
 * @param {string} label
 * @param {() => Promise<unknown>} action
 * @param {Attrs} [attrs]
 */
export function actionButton(label, action, attrs = {}) {
  const btn = /** @type {HTMLButtonElement} */ (h("button", { type: "button", ...attrs }, label));
  btn.addEventListener("click", async () => {
    if (btn.disabled) return;
    btn.disabled = true;
    btn.setAttribute("aria-busy", "true");
    try {
      await action();
    } finally {
      btn.disabled = false;
      btn.removeAttribute("aria-busy");
    }
  });
  return btn;
}

/**
 * Disables a form's buttons while its change is sent (and marks it busy).
 * @param {HTMLElement} form
 * @param {boolean} on
 */
export function formBusy(form, on) {
  for (const b of form.querySelectorAll("button")) /** @type {HTMLButtonElement} */ (b).disabled = on;
  if (on) form.setAttribute("aria-busy", "true");
  else form.removeAttribute("aria-busy");
}

/**
 * A message id that opens the timeline at that message.
 * @param {(messageId: string) => void} showMessage
 * @param {string} messageId
 */
export function messageLink(showMessage, messageId) {
  return h(
    "button",
    {
      type: "button",
      class: "link msg-link",
      title: "Show it in the timeline",
      "aria-label": `Message ${messageId}: show it in the timeline`,
      onclick: () => showMessage(messageId),
    },
    h("code", null, messageId),
  );
}
