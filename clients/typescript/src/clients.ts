// The part of the client that is the same in Node and in browsers: the
// per-service clients over a transport, the bearer-token interceptor and
// the address rules.
import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import {
  EventService,
  InjectionService,
  LorebookService,
  MemoryService,
  PromptService,
  RecallService,
  RecapService,
  SettingsService,
} from "./gen/recap/v1/recap_pb.js";
import { followInjections, type FollowOptions } from "./follow.js";
import type { Injection } from "./gen/recap/v1/recap_pb.js";

/**
 * What `connect()` returns: one client per recapd service (methods in
 * camelCase, each returning a promise, or an async iterable for a server
 * stream), and {@link RecapdClient.follow}.
 */
export interface RecapdClient {
  /** `recap.v1.EventService`: `publish`. */
  readonly events: Client<typeof EventService>;
  /** `recap.v1.MemoryService`: message data, running recaps, chats (import, export, delete, list, branch). */
  readonly memory: Client<typeof MemoryService>;
  /** `recap.v1.SettingsService`: settings, profiles, groups. */
  readonly settings: Client<typeof SettingsService>;
  /** `recap.v1.InjectionService`: `getInjection`, `refresh`, `getInclusion`, `subscribe`. */
  readonly injections: Client<typeof InjectionService>;
  /** `recap.v1.PromptService`: `renderPrompt`. */
  readonly prompts: Client<typeof PromptService>;
  /** `recap.v1.RecapService`: recaps and lore written by recapd, as jobs. */
  readonly recaps: Client<typeof RecapService>;
  /** `recap.v1.LorebookService`: lorebooks and World Info scans. */
  readonly lorebooks: Client<typeof LorebookService>;
  /** `recap.v1.RecallService`: `recall`. */
  readonly recall: Client<typeof RecallService>;
  /**
   * Follows the injections of `chatIds` across disconnects and server
   * restarts; see {@link followInjections}, which this calls with
   * {@link RecapdClient.injections}.
   *
   * @param chatIds the chats to follow (a single string is one chat id);
   *   empty: every chat of the tenant, live updates only (no snapshot, so
   *   updates made while disconnected are not seen).
   * @param options back-off, cancellation and a retry callback.
   */
  follow(chatIds: string | Iterable<string>, options?: FollowOptions): AsyncGenerator<Injection, void, undefined>;
  /** The transport every service client calls through. */
  readonly transport: Transport;
}

/** Options both `connect()` functions (Node and browser) take. */
export interface CommonConnectOptions {
  /**
   * Where recapd listens: a URL (`http://host:port` for plaintext,
   * `https://host:port` for TLS) or `host:port` (plaintext unless `tls` is
   * set).
   */
  address: string;
  /**
   * A bearer token from the server's `--auth-tokens-file`, sent as
   * `authorization: Bearer <token>` on every call. Leave it out when the
   * server runs without authentication.
   */
  token?: string;
  /** More interceptors, run after the one that adds the token. */
  interceptors?: Interceptor[];
  /** A timeout applied to every call that gives none (milliseconds); none by default. */
  defaultTimeoutMs?: number;
}

/**
 * An interceptor that adds `authorization: Bearer <token>` to every call.
 *
 * @param token a token from the server's `--auth-tokens-file`.
 * @returns the interceptor, for a transport's `interceptors`.
 */
export function bearerToken(token: string): Interceptor {
  if (token === "" || /[\r\n]/.test(token)) {
    throw new TypeError("recapd: the token must be non-empty and on one line");
  }
  const value = `Bearer ${token}`;
  return (next) => (request) => {
    request.header.set("authorization", value);
    return next(request);
  };
}

/**
 * The interceptors a connection uses: the token's first (when there is a
 * token), then the caller's.
 *
 * @param options the connect options.
 * @returns the list for the transport.
 */
export function interceptorsFor(options: CommonConnectOptions): Interceptor[] {
  const list: Interceptor[] = [];
  if (options.token !== undefined) list.push(bearerToken(options.token));
  list.push(...(options.interceptors ?? []));
  return list;
}

/**
 * The base URL of recapd for an address given as a URL or as `host:port`.
 *
 * @param address `http://host:port`, `https://host:port` or `host:port`.
 * @param tls whether TLS was asked for (`tls` set); a `host:port` address
 *   then gets `https://`, and an `http://` URL is refused as contradictory.
 * @returns the URL without a trailing slash.
 */
export function baseUrlOf(address: string, tls: boolean): string {
  if (typeof address !== "string" || address.trim() === "") {
    throw new TypeError("recapd: `address` is required (host:port or a URL)");
  }
  const trimmed = address.trim();
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed);
  let url: URL;
  try {
    url = new URL(hasScheme ? trimmed : `${tls ? "https" : "http"}://${trimmed}`);
  } catch {
    throw new TypeError(`recapd: \`address\` ${JSON.stringify(address)} is neither host:port nor a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`recapd: \`address\` must be http://, https:// or host:port, not ${url.protocol}//`);
  }
  if (tls && url.protocol === "http:") {
    throw new TypeError("recapd: `tls` is set but `address` is an http:// URL; use https:// or host:port");
  }
  return url.href.replace(/\/+$/, "");
}

/**
 * Makes the per-service clients over a transport. `connect()` calls this;
 * call it yourself to use a transport of your own making.
 *
 * @param transport a connect-es transport (gRPC or gRPC-Web) to recapd.
 * @returns the clients and `follow`.
 */
export function createRecapdClient(transport: Transport): RecapdClient {
  const injections = createClient(InjectionService, transport);
  return {
    events: createClient(EventService, transport),
    memory: createClient(MemoryService, transport),
    settings: createClient(SettingsService, transport),
    injections,
    prompts: createClient(PromptService, transport),
    recaps: createClient(RecapService, transport),
    lorebooks: createClient(LorebookService, transport),
    recall: createClient(RecallService, transport),
    follow: (chatIds, options) => followInjections(injections, chatIds, options),
    transport,
  };
}
