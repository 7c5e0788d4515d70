// @recapd/client for browsers: gRPC-Web over fetch (connect-web's gRPC-Web
// transport, as recapd's inspector uses). Package.json's `browser` and
// `default` export conditions pick this file.
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { baseUrlOf, createRecapdClient, interceptorsFor } from "./clients.js";
export * from "./shared.js";
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
export function connect(options) {
    const transport = createGrpcWebTransport({
        baseUrl: baseUrlOf(options.address, options.tls === true),
        useBinaryFormat: true,
        interceptors: interceptorsFor(options),
        ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
        ...(options.defaultTimeoutMs !== undefined ? { defaultTimeoutMs: options.defaultTimeoutMs } : {}),
    });
    return createRecapdClient(transport);
}
