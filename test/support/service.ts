// Runs the real `npm start` as a child process, as an operator would.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Envelope } from "../../src/http/envelope.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface Service {
  url: string;
  process: ChildProcess;
  output: () => string;
  /** Sends the signal to `npm start` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** How to start: `npm start` by default. */
export interface StartOptions {
  /**
   * The server itself (`node dist/server/main.js`), which tests that SIGKILL the server need: a
   * SIGKILL to npm would leave its child running.
   */
  direct?: boolean;
  /** Options for Node before the script; implies `direct`. */
  nodeArgs?: string[];
  /** The server itself under `ulimit -n` of this many descriptors; implies `direct`. */
  descriptorLimit?: number;
  /** Another command line altogether (a systemd unit's ExecStart, say). */
  command?: readonly [string, ...string[]];
  /** The folder to start in: this checkout by default. */
  cwd?: string;
  /** Standard output to this descriptor, not captured (only standard error is). */
  stdout?: number;
  /** In a process group of its own, as at a terminal, so a test can signal the whole group. */
  ownGroup?: boolean;
}

export function spawnNpmStart(env: Record<string, string>, options: StartOptions = {}) {
  const direct = options.direct || options.nodeArgs !== undefined;
  const node = [process.execPath, ...(options.nodeArgs ?? []), "dist/server/main.js"];
  const [command, args] =
    options.command !== undefined
      ? [options.command[0], options.command.slice(1)]
      : options.descriptorLimit !== undefined
        ? ["sh", ["-c", `ulimit -n ${options.descriptorLimit} && exec "$@"`, "sh", ...node]]
        : direct
          ? [node[0] as string, node.slice(1)]
          : ["npm", ["start"]];
  // A temporary folder of its own (TMPDIR, unless the test gives one), removed once it has
  // exited: a service killed with SIGKILL leaves its writer's socket folder behind in it.
  const temporary = env.TMPDIR === undefined ? mkdtempSync(join(tmpdir(), "svc-")) : undefined;
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    // Only what npm needs from this environment, so no setting leaks in from the test run.
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...(temporary === undefined ? {} : { TMPDIR: temporary }),
      ...env,
    },
    stdio: ["ignore", options.stdout ?? "pipe", "pipe"],
    detached: options.ownGroup,
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      if (temporary !== undefined) rmSync(temporary, { recursive: true, force: true });
      resolve(code);
    }),
  );
  return { child, output: () => output, exited };
}

/** `npm start` with the environment given; resolves once it listens. */
export async function startService(
  env: Record<string, string>,
  options: StartOptions = {},
): Promise<Service> {
  const { child, output, exited } = spawnNpmStart(env, options);
  const deadline = Date.now() + 30_000;
  let url: string | undefined;
  while (url === undefined) {
    url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output())?.[1];
    if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output()}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`npm start did not listen within 30 s:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    process: child,
    output,
    stop: async (signal = "SIGTERM") => {
      child.kill(signal);
      return exited;
    },
  };
}

/** A port free at the time of asking. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The processes that listen, in the order they began: with WORKERS above 1, the workers. */
export function listeners(service: Service): { pid: number; worker?: number }[] {
  return service
    .output()
    .split("\n")
    .filter((line) => line.includes('"msg":"Server listening at'))
    .map((line) => JSON.parse(line) as { pid: number; worker?: number });
}

/** `npm start` that is expected to fail: its exit code, output and time taken. */
export async function startExpectingFailure(env: Record<string, string>, timeoutMs = 30_000) {
  const started = Date.now();
  const { child, output, exited } = spawnNpmStart(env);
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  return { code, output: output(), ms: Date.now() - started };
}

/** One request to a running service; the answer's body read as the envelope. */
export async function request<T = unknown>(
  service: Service,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
) {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: token ? { authorization: token } : {},
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Envelope<T> };
}

/** A token from a running service; the test fails if the credentials are refused. */
export async function login(
  service: Service,
  credentials: { username: string; password: string },
): Promise<string> {
  const answer = await request<{ token: string }>(
    service,
    "POST",
    "/token",
    undefined,
    credentials,
  );
  assert.equal(answer.status, 200);
  return answer.body.data?.token ?? "";
}

/** SIGKILL to `pid` (a negative one: its group), unless it has exited since it was listed. */
export function killIfAlive(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

export interface ServerWithOutput {
  child: ChildProcess;
  url: string;
  /** Its /metrics, on METRICS_PORT. */
  metrics: string;
  exited: Promise<number | null>;
  /** What it wrote that was captured: standard error, and standard output unless redirected. */
  output: () => string;
}

/**
 * The server itself (`node dist/server/main.js`) with `env`, on ports of its own, and its
 * standard output to the descriptor `stdout` or captured in a pipe (which the test may close);
 * resolves once /ready answers 200 (it serves; /health answers from its start), since its
 * output may never be read.
 */
export async function startWithOutput(
  env: Record<string, string>,
  stdout: number | "pipe",
): Promise<ServerWithOutput> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const { child, output, exited } = spawnNpmStart(
    { ...env, PORT: String(port), METRICS_PORT: String(metricsPort) },
    { direct: true, ...(stdout === "pipe" ? {} : { stdout }) },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    if ((await answered(`${url}/ready`)) === 200) break;
    if (tries === 300 || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`the server did not answer:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const metrics = `http://127.0.0.1:${metricsPort}/metrics`;
  return { child, url, metrics, exited, output };
}

/** The status of a request answered within a second, or undefined. */
export async function answered(url: string, init: RequestInit = {}): Promise<number | undefined> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return undefined;
  }
}
