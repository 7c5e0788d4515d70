// The page's only way to recapd: its public gRPC API over gRPC-Web, on the
// page's own origin. No generated code: the API's descriptors come from
// /recap.v1.binpb (a FileDescriptorSet recapd serves), and each service's
// client is made from its DescService.
import { fromBinary, createFileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { reportRefused } from "./auth.js";

/** The services the page uses, by the name it calls them. */
const SERVICES = {
  memory: "recap.v1.MemoryService",
  settings: "recap.v1.SettingsService",
  injection: "recap.v1.InjectionService",
  prompt: "recap.v1.PromptService",
  recap: "recap.v1.RecapService",
  lorebook: "recap.v1.LorebookService",
  recall: "recap.v1.RecallService",
};

/**
 * @typedef {object} Api
 * @property {import("@bufbuild/protobuf").FileRegistry} registry
 * @property {Record<keyof typeof SERVICES, any>} clients a client per
 *   service; undefined for a service this server's descriptors do not have
 * @property {(typeName: string, n: number) => string} enumName
 * @property {(typeName: string) => import("@bufbuild/protobuf").DescEnumValue[]} enumValues
 */

/**
 * Fetches the API's descriptors and makes the clients.
 * @param {import("@connectrpc/connect").Interceptor[]} interceptors
 * @returns {Promise<Api>}
 */
export async function connect(interceptors) {
  const response = await fetch("/recap.v1.binpb", { credentials: "same-origin" });
  if (!response.ok) {
    throw new Error(`could not load the API's descriptors (/recap.v1.binpb: HTTP ${response.status})`);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
  const transport = createGrpcWebTransport({
    baseUrl: location.origin,
    useBinaryFormat: true,
    interceptors,
  });
  /** @type {Record<string, any>} */
  const clients = {};
  for (const [key, typeName] of Object.entries(SERVICES)) {
    const service = registry.getService(typeName);
    if (service) clients[key] = createClient(service, transport);
  }
  return {
    registry,
    clients: /** @type {any} */ (clients),
    enumName: (typeName, n) => enumName(registry, typeName, n),
    enumValues: (typeName) => {
      const desc = registry.getEnum(typeName);
      return desc ? desc.values.filter((v) => v.number !== 0) : [];
    },
  };
}

/**
 * An enum number's name without its prefix (JOB_STATE_PENDING → PENDING),
 * through the registry; an unknown number shows as `UNKNOWN(n)`.
 * @param {import("@bufbuild/protobuf").FileRegistry} registry
 * @param {string} typeName e.g. "recap.v1.JobState"
 * @param {number} n
 */
function enumName(registry, typeName, n) {
  const desc = registry.getEnum(typeName);
  const value = desc?.value[n];
  if (!value) return `UNKNOWN(${n})`;
  return value.localName;
}

/**
 * The gRPC status code name of an error (e.g. "UNAUTHENTICATED").
 * @param {unknown} err
 */
export function codeName(err) {
  const code = ConnectError.from(err).code;
  const name = Code[code] ?? String(code);
  return name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/**
 * "CODE: message", for showing an error to the user.
 * @param {unknown} err
 */
export function describeError(err) {
  if (err instanceof ConnectError) {
    return `${codeName(err)}: ${err.rawMessage || "(no message)"}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** @param {unknown} err */
export function isUnauthenticated(err) {
  return err instanceof ConnectError && err.code === Code.Unauthenticated;
}

/**
 * A feature this server does not have or has not configured: the section
 * says so briefly instead of failing.
 * @param {unknown} err
 */
export function isFeatureMissing(err) {
  return (
    err instanceof ConnectError &&
    (err.code === Code.Unimplemented || err.code === Code.FailedPrecondition)
  );
}

/** @param {unknown} err */
export function isNotFound(err) {
  return err instanceof ConnectError && err.code === Code.NotFound;
}

/** @param {unknown} err */
export function isCanceled(err) {
  return (
    (err instanceof ConnectError && err.code === Code.Canceled) ||
    (err instanceof Error && err.name === "AbortError")
  );
}

/**
 * Reads every page of a paged List RPC.
 * @template T
 * @param {(pageToken: string) => Promise<{ nextPageToken: string } & Record<string, any>>} call
 * @param {string} field the repeated field holding the items
 * @param {number} [max] stop after this many items
 * @returns {Promise<{ items: T[], truncated: boolean }>}
 */
export async function listAll(call, field, max = 10000) {
  /** @type {T[]} */
  const items = [];
  let token = "";
  for (;;) {
    const page = await call(token);
    items.push(...page[field]);
    token = page.nextPageToken;
    if (!token) return { items, truncated: false };
    if (items.length >= max) return { items, truncated: true };
  }
}

/**
 * Runs a server stream until `signal` aborts, calling `onMessage` for each
 * message; when the stream ends or fails it is opened again after a pause
 * (1 s, doubling up to 30 s). `onState` is told "connecting", "live" (the
 * server answered the call's headers), "reconnecting", or "failed" with the
 * error for a stream that cannot work (refused token, feature missing),
 * which is not retried. `onOpen` runs each time the stream (re)opens, so a
 * caller can re-read the state it may have missed meanwhile.
 * @template M
 * @param {(options: { signal: AbortSignal, onHeader: () => void }) => AsyncIterable<M>} open
 * @param {{ signal: AbortSignal, onMessage: (m: M) => void, onState?: (state: string, err?: unknown) => void, onOpen?: () => void }} opts
 */
export async function followStream(open, { signal, onMessage, onState, onOpen }) {
  let delay = 1000;
  while (!signal.aborted) {
    try {
      onState?.("connecting");
      const stream = open({
        signal,
        onHeader: () => {
          delay = 1000;
          onState?.("live");
          onOpen?.();
        },
      });
      for await (const message of stream) onMessage(message);
      if (signal.aborted) return;
      onState?.("reconnecting");
    } catch (err) {
      if (signal.aborted || isCanceled(err)) return;
      if (isUnauthenticated(err) || isFeatureMissing(err)) {
        onState?.("failed", err);
        if (isUnauthenticated(err)) reportRefused();
        return;
      }
      onState?.("reconnecting", err);
    }
    await sleep(delay, signal);
    delay = Math.min(delay * 2, 30000);
  }
}

/**
 * @param {number} ms
 * @param {AbortSignal} signal
 */
function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve(undefined);
    }, { once: true });
  });
}
