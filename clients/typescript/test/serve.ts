// Runs a real `logbook serve` for the tests: the binary from
// LOGBOOK_TEST_BIN, or built once from this repository into a temporary
// directory; each server gets a data directory the tests remove.

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const listenPrefix = "logbook serve: listening on ";

/** repoRoot returns the repository's root, the nearest folder above this
 * file holding go.mod: the file runs compiled from build/test/ under
 * node --test and as source from test/ under vitest. */
function repoRoot(): string {
  const here = fileURLToPath(import.meta.url);
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "go.mod"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no go.mod above ${here} to build logbook from: set LOGBOOK_TEST_BIN`);
  }
}

let built: { bin: string; dir: string | undefined } | undefined;

/** logbookBin returns the logbook binary, building it on first use. */
export function logbookBin(): string {
  if (!built) {
    const env = process.env["LOGBOOK_TEST_BIN"];
    if (env) {
      built = { bin: env, dir: undefined };
    } else {
      const dir = mkdtempSync(join(tmpdir(), "logbook-ts-bin-"));
      const bin = join(dir, "logbook");
      execFileSync("go", ["build", "-o", bin, "./cmd/logbook"], { cwd: repoRoot(), stdio: "inherit" });
      built = { bin, dir };
    }
  }
  return built.bin;
}

/** removeBin removes a binary logbookBin built. */
export function removeBin(): void {
  if (built?.dir) rmSync(built.dir, { recursive: true, force: true });
  built = undefined;
}

/** freeAddr returns a loopback address with a port free right now, for a
 * server that must come back on the same address. */
export async function freeAddr(): Promise<string> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

/** Server is one running `logbook serve`. */
export class Server {
  readonly addr: string;
  readonly url: string;
  readonly dataDir: string;
  readonly #proc: ChildProcess;
  readonly #exited: Promise<void>;
  stderr = "";

  private constructor(addr: string, dataDir: string, proc: ChildProcess, exited: Promise<void>, stderr: string) {
    this.addr = addr;
    this.url = `http://${addr}`;
    this.dataDir = dataDir;
    this.#proc = proc;
    this.#exited = exited;
    this.stderr = stderr;
    proc.stderr!.on("data", (b: Buffer) => (this.stderr += b.toString()));
  }

  /** start runs serve on addr (default a free port) over dataDir (default a new temporary one), with further args. */
  static async start(o: { addr?: string; dataDir?: string; args?: string[] } = {}): Promise<Server> {
    const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), "logbook-ts-data-"));
    const args = ["serve", "--addr", o.addr ?? "127.0.0.1:0", "--data", dataDir, ...(o.args ?? [])];
    const proc = spawn(logbookBin(), args, { stdio: ["ignore", "ignore", "pipe"] });
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    let log = "";
    const addr = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`logbook serve did not listen within 20 s:\n${log}`)), 20_000);
      const onData = (b: Buffer) => {
        log += b.toString();
        const line = log.split("\n").find((l) => l.startsWith(listenPrefix));
        if (line) {
          clearTimeout(timer);
          proc.stderr!.off("data", onData);
          resolve(line.slice(listenPrefix.length).trim());
        }
      };
      proc.stderr!.on("data", onData);
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`logbook serve exited before listening:\n${log}`));
      });
    });
    return new Server(addr, dataDir, proc, exited, log);
  }

  /** stop ends the server with SIGTERM (it flushes and releases every session) and waits until it is gone. */
  async stop(): Promise<void> {
    if (this.#proc.exitCode === null && this.#proc.signalCode === null) this.#proc.kill("SIGTERM");
    await this.#exited;
  }

  /** kill ends the server with SIGKILL and waits until it is gone. */
  async kill(): Promise<void> {
    if (this.#proc.exitCode === null && this.#proc.signalCode === null) this.#proc.kill("SIGKILL");
    await this.#exited;
  }

  /** removeData removes the data directory. */
  removeData(): void {
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
