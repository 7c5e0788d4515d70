import { type CommonConnectOptions, type RecapdClient } from "./clients.js";
export * from "./shared.js";
/** Options of {@link connect} in a browser. */
export interface BrowserConnectOptions extends CommonConnectOptions {
    /**
     * With a `host:port` address, `true` calls `https://host:port`. The
     * browser checks the certificate against its own trust store.
     */
    tls?: boolean;
    /** A `fetch` to use instead of the global one. */
    fetch?: typeof globalThis.fetch;
}
/**
 * Connects to recapd over gRPC-Web. A page served from another origin than
 * recapd's needs that origin in the server's `--grpc-web-allowed-origins`.
 *
 * @param options address (a URL such as `http://127.0.0.1:50051`), token.
 * @returns a client per service, and `follow`.
 * @example
 * const recapd = connect({ address: "http://127.0.0.1:50051", token });
 * const injection = await recapd.injections.getInjection({ chatId: "alice-1" });
 */
export declare function connect(options: BrowserConnectOptions): RecapdClient;
