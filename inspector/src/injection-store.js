// A chat's injections, kept up to date while the chat is open: each tier
// read once with InjectionService.GetInjection (which also answers where a
// never-refreshed tier would go), then followed live through
// InjectionService.Subscribe (server stream over gRPC-Web), which pushes
// every refresh of the chat.
import { followStream, describeError, isNotFound } from "./api.js";

/** The injection keys recapd has, in the order the page shows them. */
export const TIERS = [
  { key: "auto_recap_scene", label: "Running recap" },
  { key: "auto_recap_messages", label: "Message recaps" },
  { key: "auto_recap_recall", label: "Recall" },
];

/**
 * @typedef {object} InjectionStore
 * @property {(key: string) => any | undefined} get the latest Injection of a tier
 * @property {() => string} state "connecting", "live", "reconnecting" or "failed"
 * @property {() => string | null} readError why the chat's injection could not be read, if it could not
 * @property {(fn: (event: { kind: "injection" | "state", injection?: any }) => void) => () => void} listen
 * @property {() => string} signature the revisions of every tier: changes when the chat is refreshed
 * @property {Promise<void>} ready settles once every tier was read once
 * @property {() => void} dispose
 */

/**
 * @param {import("./api.js").Api} api
 * @param {string} chatId
 * @returns {InjectionStore}
 */
export function createInjectionStore(api, chatId) {
  const controller = new AbortController();
  /** @type {Map<string, any>} */
  const tiers = new Map();
  /** @type {Set<(event: any) => void>} */
  const listeners = new Set();
  let state = "connecting";
  /** @type {string | null} */
  let stateError = null;
  /** @type {string | null} */
  let readError = null;

  /** @param {any} event */
  function emit(event) {
    for (const fn of listeners) {
      try {
        fn(event);
      } catch (err) {
        console.error(err);
      }
    }
  }

  /**
   * Keeps an injection unless an equal or newer revision of its tier is
   * already held (Subscribe and GetInjection may cross).
   * @param {any} inj
   */
  function accept(inj) {
    const old = tiers.get(inj.key);
    if (old && old.revision > inj.revision) return;
    if (old && old.revision === inj.revision && old.text === inj.text && old.deleted === inj.deleted) return;
    tiers.set(inj.key, inj);
    emit({ kind: "injection", injection: inj });
  }

  async function readAll() {
    await Promise.all(
      TIERS.map(async ({ key }) => {
        try {
          accept(await api.clients.injection.getInjection({ chatId, key }, { signal: controller.signal }));
          if (key === "auto_recap_scene" && readError) {
            readError = null;
            emit({ kind: "state" });
          }
        } catch (err) {
          if (controller.signal.aborted) return;
          // A server without a tier answers INVALID_ARGUMENT for its key:
          // the tier is simply not shown.
          if (key === "auto_recap_scene") {
            readError = isNotFound(err)
              ? "recapd does not know this chat (NOT_FOUND): no event has named it, or it was deleted."
              : `Could not read the injection: ${describeError(err)}`;
            emit({ kind: "state" });
          }
        }
      }),
    );
  }

  followStream(
    (options) => api.clients.injection.subscribe({ chatIds: [chatId] }, options),
    {
      signal: controller.signal,
      onMessage: (inj) => {
        if (inj.chatId === chatId) accept(inj);
      },
      onOpen: () => {
        // Re-read after each (re)connection: a refresh may have been missed.
        readAll();
      },
      onState: (s, err) => {
        state = s;
        stateError = err ? describeError(err) : null;
        emit({ kind: "state" });
      },
    },
  );
  const ready = readAll();

  return {
    get: (key) => tiers.get(key),
    state: () => (stateError && state !== "live" ? `${state}: ${stateError}` : state),
    readError: () => readError,
    listen(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    signature: () => TIERS.map(({ key }) => String(tiers.get(key)?.revision ?? "")).join("/"),
    ready,
    dispose() {
      controller.abort();
      listeners.clear();
    },
  };
}
