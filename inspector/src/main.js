// Entry point: loads the API's descriptors, signs in when the server asks
// for a token, then shows the inspector.
import { connect, describeError, isUnauthenticated } from "./api.js";
import { authInterceptor, clearToken, getToken, loginView, setToken, REFUSED_EVENT } from "./auth.js";
import { h, replace } from "./dom.js";
import { notify } from "./notices.js";
import { mountApp } from "./app.js";

const root = /** @type {HTMLElement} */ (document.getElementById("app"));
const signOut = /** @type {HTMLButtonElement} */ (document.getElementById("sign-out"));

/** @type {import("./api.js").Api} */
let api;
/** @type {{ dispose(): void } | null} */
let app = null;

/** The server refused the token while the inspector was shown. */
function onRefused() {
  if (!app) return;
  clearToken();
  showLogin("The server no longer accepts the token (UNAUTHENTICATED). Sign in again.");
}

/**
 * Resolves when the server accepts the current token (or needs none);
 * rejects with the call's error otherwise (UNAUTHENTICATED for a token it
 * refuses).
 */
async function probe() {
  await api.clients.memory.listChats({ pageSize: 1 });
}

/** @param {string} [refused] */
function showLogin(refused) {
  app?.dispose();
  app = null;
  signOut.hidden = true;
  document.title = "Sign in · recapd inspector";
  replace(
    root,
    h(
      "main",
      { id: "main", class: "login-main", tabindex: "-1" },
      loginView({
        refused,
        tryToken: async (token) => {
          setToken(token);
          try {
            await probe();
          } catch (err) {
            clearToken();
            if (isUnauthenticated(err)) {
              return "Refused: the server does not accept this token (UNAUTHENTICATED). Check it and try again.";
            }
            return `The server could not be reached: ${describeError(err)}`;
          }
          showApp();
          return null;
        },
      }),
    ),
  );
}

function showApp() {
  app?.dispose();
  signOut.hidden = !getToken();
  document.title = "recapd inspector";
  app = mountApp(root, api);
}

/** @param {unknown} err */
function showFatal(err) {
  replace(
    root,
    h(
      "main",
      { id: "main", class: "login-main", tabindex: "-1" },
      h("h2", null, "The inspector cannot start"),
      h("p", { role: "alert" }, describeError(err)),
      h("button", { type: "button", onclick: () => start() }, "Try again"),
    ),
  );
}

async function start() {
  try {
    if (!api) api = await connect([authInterceptor()]);
    await probe();
  } catch (err) {
    if (isUnauthenticated(err)) {
      const hadToken = Boolean(getToken());
      clearToken();
      showLogin(hadToken ? "The saved token was refused (UNAUTHENTICATED). Sign in again." : undefined);
      return;
    }
    showFatal(err);
    return;
  }
  showApp();
}

window.addEventListener(REFUSED_EVENT, onRefused);

signOut.addEventListener("click", () => {
  clearToken();
  notify("Signed out.");
  showLogin();
});

start();
