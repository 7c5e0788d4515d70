// The bearer token: asked for when a call answers UNAUTHENTICATED, kept
// for this browser tab only (sessionStorage, never localStorage), sent as
// `authorization: Bearer <token>` on every call. The token decides the
// tenant whose chats the page shows.
import { Code, ConnectError } from "@connectrpc/connect";
import { h, field } from "./dom.js";

const KEY = "recapd-inspector-token";

/** @returns {string | null} */
export function getToken() {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

/** @param {string} token */
export function setToken(token) {
  sessionStorage.setItem(KEY, token);
}

export function clearToken() {
  sessionStorage.removeItem(KEY);
}

/** The event a refused call dispatches on `window`. */
export const REFUSED_EVENT = "recapd-inspector:unauthenticated";

/** Tells the page that the server refused the token (see REFUSED_EVENT). */
export function reportRefused() {
  window.dispatchEvent(new CustomEvent(REFUSED_EVENT));
}

/**
 * The interceptor that puts the token on every call, and reports a call
 * the server answers UNAUTHENTICATED (a stream refused later, in its
 * trailers, is reported by whoever reads it: see api.followStream).
 * @returns {import("@connectrpc/connect").Interceptor}
 */
export function authInterceptor() {
  return (next) => async (req) => {
    const token = getToken();
    if (token) req.header.set("authorization", `Bearer ${token}`);
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.Unauthenticated) reportRefused();
      throw err;
    }
  };
}

/**
 * The sign-in form. `tryToken` checks a token against the server and
 * answers null when it is accepted, else the reason it was refused.
 * @param {{ refused?: string, tryToken: (token: string) => Promise<string | null> }} opts
 * @returns {HTMLElement}
 */
export function loginView({ refused, tryToken }) {
  const input = /** @type {HTMLInputElement} */ (
    h("input", {
      type: "password",
      name: "token",
      autocomplete: "off",
      spellcheck: "false",
      required: true,
    })
  );
  const message = h("p", { class: "form-error", role: "alert", "data-testid": "login-error" });
  if (refused) message.textContent = refused;
  const submit = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: "primary" }, "Sign in"));
  const form = h(
    "form",
    {
      class: "login",
      "aria-labelledby": "login-heading",
      onsubmit: async (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        const token = input.value.trim();
        if (!token) return;
        submit.disabled = true;
        message.textContent = "";
        try {
          const reason = await tryToken(token);
          if (reason) {
            message.textContent = reason;
            input.select();
            input.focus();
          }
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h2", { id: "login-heading" }, "Sign in"),
    h(
      "p",
      null,
      "This recapd asks for a bearer token. The token decides whose chats you see. " +
        "It is kept in this tab only, until you sign out or close the tab.",
    ),
    field("Bearer token", input),
    message,
    submit,
  );
  queueMicrotask(() => input.focus());
  return form;
}
