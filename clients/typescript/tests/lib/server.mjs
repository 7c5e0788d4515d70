// Starts and stops a live recapd for the tests: $RECAPD_BIN on a free
// port of 127.0.0.1, with its own data directory. Every wait is bounded.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const BIN = process.env.RECAPD_BIN;
if (!BIN) throw new Error("RECAPD_BIN is not set (the recapd binary to test against)");

/** A free TCP port on 127.0.0.1 (the OS picks one; it is closed again at once). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/** A fresh temporary directory, removed by the returned `remove`. */
export function tempDir(prefix) {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * Writes a tokens file (`TENANT TOKEN` lines).
 * @param {string} dir
 * @param {Record<string, string>} tokens tenant -> token
 */
export function tokensFile(dir, tokens) {
  const path = join(dir, "tokens");
  writeFileSync(path, Object.entries(tokens).map(([tenant, token]) => `${tenant} ${token}\n`).join(""));
  return path;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A recapd the test controls.
 */
export class Recapd {
  /**
   * @param {{ port?: number, dataDir?: string, args?: string[], healthArgs?: string[] }} [options]
   *   `args`: more server options; `healthArgs`: more options for the
   *   `recapd health` probe (TLS flags for a TLS server).
   */
  constructor(options = {}) {
    this.port = options.port;
    this.ownData = options.dataDir === undefined ? tempDir("recapd-ts-data-") : undefined;
    this.dataDir = options.dataDir ?? this.ownData.path;
    this.args = options.args ?? [];
    this.healthArgs = options.healthArgs ?? [];
    /** @type {import("node:child_process").ChildProcess | undefined} */
    this.child = undefined;
    this.stderr = "";
  }

  /** host:port */
  get address() {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts it (on the same port and data directory as before, if started before) and waits until healthy (at most 30 s). */
  async start() {
    this.port ??= await freePort();
    const args = ["--listen", this.address, "--metrics-listen", "off", "--data-dir", this.dataDir, "--log-level", "warn", ...this.args];
    const child = spawn(BIN, args, { stdio: ["ignore", "ignore", "pipe"] });
    this.child = child;
    child.stderr.on("data", (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-20_000);
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`recapd exited at start (${child.exitCode ?? child.signalCode}): ${this.stderr}`);
      }
      const probe = spawnSync(BIN, ["health", "--addr", this.address, ...this.healthArgs], { stdio: "ignore", timeout: 5_000 });
      if (probe.status === 0) return;
      if (Date.now() > deadline) {
        await this.kill();
        throw new Error(`recapd did not become healthy on ${this.address} within 30 s: ${this.stderr}`);
      }
      await sleep(100);
    }
  }

  /** Kills it with SIGKILL and waits until it is gone (at most 10 s). */
  async kill() {
    await this.#stop("SIGKILL");
  }

  /** Stops it with SIGTERM (a clean shutdown) and waits until it is gone (at most 20 s). */
  async stop() {
    await this.#stop("SIGTERM");
  }

  async #stop(signal) {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), signal === "SIGKILL" ? 10_000 : 20_000);
    await gone;
    clearTimeout(timer);
  }

  /** Stops it and removes its data directory (when it made one). */
  async close() {
    await this.kill();
    this.ownData?.remove();
  }
}

/**
 * Rejects after `ms` with a message naming what was awaited.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
export function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
