// The part of the client that is the same in Node and in browsers: the
// per-service clients over a transport, the bearer-token interceptor and
// the address rules.
import { createClient } from "@connectrpc/connect";
import { EventService, InjectionService, LorebookService, MemoryService, PromptService, RecallService, RecapService, SettingsService, } from "./gen/recap/v1/recap_pb.js";
import { followInjections } from "./follow.js";
/**
 * An interceptor that adds `authorization: Bearer <token>` to every call.
 *
 * @param token a token from the server's `--auth-tokens-file`.
 * @returns the interceptor, for a transport's `interceptors`.
 */
export function bearerToken(token) {
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
export function interceptorsFor(options) {
    const list = [];
    if (options.token !== undefined)
        list.push(bearerToken(options.token));
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
export function baseUrlOf(address, tls) {
    if (typeof address !== "string" || address.trim() === "") {
        throw new TypeError("recapd: `address` is required (host:port or a URL)");
    }
    const trimmed = address.trim();
    const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed);
    let url;
    try {
        url = new URL(hasScheme ? trimmed : `${tls ? "https" : "http"}://${trimmed}`);
    }
    catch {
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
export function createRecapdClient(transport) {
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
