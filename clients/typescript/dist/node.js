// @recapd/client for Node: real gRPC over HTTP/2 (connect-node's gRPC
// transport). Package.json's `node` export condition picks this file.
import { createGrpcTransport } from "@connectrpc/connect-node";
import { baseUrlOf, createRecapdClient, interceptorsFor } from "./clients.js";
export * from "./shared.js";
/**
 * Connects to recapd over gRPC (HTTP/2). The connection is made on the
 * first call, kept, and made again when it breaks; it does not keep the
 * process alive while no call is open.
 *
 * @param options address, token, TLS.
 * @returns a client per service, and `follow`.
 * @example
 * const recapd = connect({ address: "127.0.0.1:50051", token: process.env.RECAPD_TOKEN });
 * const injection = await recapd.injections.getInjection({ chatId: "alice-1" });
 */
export function connect(options) {
    const tls = options.tls ?? false;
    const baseUrl = baseUrlOf(options.address, tls !== false);
    const nodeOptions = {};
    if (typeof tls === "object") {
        if (tls.ca !== undefined)
            nodeOptions.ca = tls.ca;
        if (tls.serverName !== undefined)
            nodeOptions.servername = tls.serverName;
        if (tls.cert !== undefined)
            nodeOptions.cert = tls.cert;
        if (tls.key !== undefined)
            nodeOptions.key = tls.key;
    }
    const transport = createGrpcTransport({
        baseUrl,
        interceptors: interceptorsFor(options),
        nodeOptions,
        pingIntervalMs: options.pingIntervalMs ?? 15_000,
        ...(options.defaultTimeoutMs !== undefined ? { defaultTimeoutMs: options.defaultTimeoutMs } : {}),
    });
    return createRecapdClient(transport);
}
