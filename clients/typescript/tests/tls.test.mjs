// TLS in Node: a recapd serving gRPC over TLS with a self-signed
// certificate (made with openssl), trusted through `tls: { ca }`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Code, connect } from "@recapd/client";
import { Recapd, tempDir } from "./lib/server.mjs";

test("TLS with a private CA, as host:port and as an https:// URL", async (t) => {
  const dir = tempDir("recapd-ts-tls-");
  t.after(() => dir.remove());
  const cert = join(dir.path, "cert.pem");
  const key = join(dir.path, "key.pem");
  const made = spawnSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=recapd.test",
      "-addext", "subjectAltName=DNS:recapd.test,IP:127.0.0.1", "-keyout", key, "-out", cert],
    { encoding: "utf8", timeout: 20_000 },
  );
  assert.equal(made.status, 0, `openssl: ${made.stderr}`);
  const server = new Recapd({ args: ["--tls-cert", cert, "--tls-key", key], healthArgs: ["--tls-ca", cert] });
  t.after(() => server.close());
  await server.start();
  const ca = readFileSync(cert);

  const byHost = connect({ address: server.address, tls: { ca } });
  await byHost.events.publish({ event: { chatId: "tls-1", kind: { case: "refreshRequested", value: {} } } });
  assert.equal((await byHost.injections.getInjection({ chatId: "tls-1" })).revision, 1n);

  const byUrl = connect({ address: `https://${server.address}`, tls: { ca, serverName: "recapd.test" } });
  assert.equal((await byUrl.injections.getInjection({ chatId: "tls-1" })).revision, 1n);

  // The system's roots do not trust the self-signed certificate.
  const untrusted = connect({ address: `https://${server.address}` });
  await assert.rejects(untrusted.injections.getInjection({ chatId: "tls-1" }), (error) => error.code !== Code.Ok && /certificate/i.test(String(error.message) + String(error.cause)));
});
