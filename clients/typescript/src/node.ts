// @recapd/client for Node: real gRPC over HTTP/2 (connect-node's gRPC
// transport). Package.json's `node` export condition picks this file.
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { SecureClientSessionOptions } from "node:http2";
import { baseUrlOf, createRecapdClient, interceptorsFor, type CommonConnectOptions, type RecapdClient } from "./clients.js";

export * from "./shared.js";

/** TLS settings for Node: whom to trust, and the name to check. */
export interface NodeTlsOptions {
  /**
   * PEM certificates to trust instead of the system's roots: the CA that
   * signed the server's certificate, or a self-signed certificate itself.
   */
  ca?: string | Buffer | Array<string | Buffer>;
  /** The name the server's certificate must carry, when it is not the address's host. */
  serverName?: string;
  /** A client certificate chain (PEM), for servers behind a proxy that asks for one. */
  cert?: string | Buffer;
  /** The client certificate's key (PEM). */
  key?: string | Buffer;
}

/** Options of {@link connect} in Node. */
export interface NodeConnectOptions extends CommonConnectOptions {
  /**
   * TLS: `true` (or an object) dials `host:port` over TLS; an `https://`
   * address does too. `ca` trusts a private CA or a self-signed
   * certificate. Not allowed with an `http://` address.
   */
  tls?: boolean | NodeTlsOptions;
  /**
   * How often an HTTP/2 PING checks that the connection is alive, in
   * milliseconds, so a stream on a dead connection fails (and `follow`
   * subscribes again). Default 15000.
   */
  pingIntervalMs?: number;
}

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
export function connect(options: NodeConnectOptions): RecapdClient {
  const tls = options.tls ?? false;
  const baseUrl = baseUrlOf(options.address, tls !== false);
  const nodeOptions: SecureClientSessionOptions = {};
  if (typeof tls === "object") {
    if (tls.ca !== undefined) nodeOptions.ca = tls.ca;
    if (tls.serverName !== undefined) nodeOptions.servername = tls.serverName;
    if (tls.cert !== undefined) nodeOptions.cert = tls.cert;
    if (tls.key !== undefined) nodeOptions.key = tls.key;
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
