// Load generation: wrk where installed (it outruns the server), autocannon otherwise. One
// description of each scenario's requests drives both, so they cannot drift apart.
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import autocannon from "autocannon";

/** What a scenario sends. Ids are drawn from 1..readIds, which no scenario deletes. */
export type Traffic =
  | { kind: "get-random"; readIds: number }
  | { kind: "list" }
  | { kind: "create" }
  | { kind: "update-random"; readIds: number }
  /** Each run deletes from its own block of ids, so a later run never deletes a deleted book. */
  | { kind: "mix"; readIds: number; deletableFrom: number; block: number; blockSize?: number }
  | { kind: "token"; username: string; password: string }
  /** GET of one of these paths, drawn at random each time. */
  | { kind: "paths"; paths: readonly string[] };

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers that were not 2xx, and socket errors: a correct run has none. */
  non2xx: number;
  errors: number;
}

export interface LoadOptions {
  url: string;
  traffic: Traffic;
  token: string;
  connections: number;
  seconds: number;
  /**
   * How long one request may take before the generator counts it an error (a timeout): by
   * default each generator's own (wrk 2 s, autocannon 10 s).
   */
  timeoutSeconds?: number;
}

/** Ids a run may delete: plenty for 2.5 % of one run's requests. */
export const DELETE_BLOCK = 25_000;

const firstDelete = (traffic: Traffic) =>
  traffic.kind === "mix"
    ? traffic.deletableFrom + traffic.block * (traffic.blockSize ?? DELETE_BLOCK) - 1
    : 0;

export const NEW_BOOK = '{"title":"The Dispossessed","author":"Ursula K. Le Guin","year":1974}';

export function hasWrk(): boolean {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
    return true;
  } catch (error) {
    // wrk prints its version and exits 1; only a missing binary is ENOENT.
    return (error as { code?: string }).code !== "ENOENT";
  }
}

export async function runLoad(options: LoadOptions, generator: "wrk" | "autocannon") {
  return generator === "wrk" ? runWrk(options) : runAutocannon(options);
}

function luaRequest(traffic: Traffic): string {
  switch (traffic.kind) {
    case "get-random":
      return `return wrk.format("GET", "/book/" .. math.random(${traffic.readIds}))`;
    case "list":
      return `return wrk.format("GET", "/books")`;
    case "create":
      return `return wrk.format("POST", "/book", nil, '${NEW_BOOK}')`;
    case "update-random":
      return `return wrk.format("PUT", "/book/" .. math.random(${traffic.readIds}), nil,
        '{"year":' .. math.random(1900, 2024) .. '}')`;
    case "mix":
      // 80 % reads, 15 % updates, 2.5 % creates, 2.5 % deletes of ids no one reads.
      return `local r = math.random(1000)
      if r <= 800 then return wrk.format("GET", "/book/" .. math.random(${traffic.readIds}))
      elseif r <= 950 then return wrk.format("PUT", "/book/" .. math.random(${traffic.readIds}),
        nil, '{"year":' .. math.random(1900, 2024) .. '}')
      elseif r <= 975 then return wrk.format("POST", "/book", nil, '${NEW_BOOK}')
      else next_delete = next_delete + 1; return wrk.format("DELETE", "/book/" .. next_delete) end`;
    case "token":
      return `return wrk.format("POST", "/token", nil,
        '${JSON.stringify({ username: traffic.username, password: traffic.password })}')`;
    case "paths":
      return `return wrk.format("GET", paths[math.random(#paths)])`;
  }
}

async function runWrk(options: LoadOptions): Promise<LoadResult> {
  const { traffic } = options;
  const dir = mkdtempSync(join(tmpdir(), "bench-wrk-"));
  const script = join(dir, "scenario.lua");
  writeFileSync(
    script,
    `wrk.headers["Authorization"] = os.getenv("BENCH_TOKEN")
wrk.headers["Content-Type"] = "application/json"
math.randomseed(os.time())
next_delete = ${firstDelete(traffic)}
paths = {${traffic.kind === "paths" ? traffic.paths.map((path) => JSON.stringify(path)).join(",") : ""}}
request = function()
  ${luaRequest(traffic)}
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCH_RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"non2xx":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout))
end
`,
  );
  try {
    const { stdout } = await promisify(execFile)(
      "wrk",
      [
        "-t1",
        `-c${options.connections}`,
        `-d${options.seconds}s`,
        ...(options.timeoutSeconds === undefined ? [] : [`--timeout=${options.timeoutSeconds}s`]),
        "--latency",
        "-s",
        script,
        options.url,
      ],
      { env: { ...process.env, BENCH_TOKEN: options.token } },
    );
    const line = /BENCH_RESULT (.*)/.exec(stdout)?.[1];
    if (line === undefined) throw new Error(`wrk printed no result:\n${stdout}`);
    const raw = JSON.parse(line);
    return {
      rps: raw.requests / (raw.duration_us / 1e6),
      p50Ms: raw.p50_us / 1000,
      p99Ms: raw.p99_us / 1000,
      non2xx: raw.non2xx,
      errors: raw.errors,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runAutocannon(options: LoadOptions): Promise<LoadResult> {
  const { traffic } = options;
  let nextDelete = firstDelete(traffic);
  const random = (max: number) => 1 + Math.floor(Math.random() * max);
  const yearChange = () => JSON.stringify({ year: 1900 + random(124) });
  type Request = { method: "GET" | "POST" | "PUT" | "DELETE"; path: string; body?: string };
  const next = (): Request => {
    switch (traffic.kind) {
      case "get-random":
        return { method: "GET", path: `/book/${random(traffic.readIds)}` };
      case "list":
        return { method: "GET", path: "/books" };
      case "create":
        return { method: "POST", path: "/book", body: NEW_BOOK };
      case "update-random":
        return { method: "PUT", path: `/book/${random(traffic.readIds)}`, body: yearChange() };
      case "mix": {
        const r = random(1000);
        if (r <= 800) return { method: "GET", path: `/book/${random(traffic.readIds)}` };
        if (r <= 950) {
          return { method: "PUT", path: `/book/${random(traffic.readIds)}`, body: yearChange() };
        }
        if (r <= 975) return { method: "POST", path: "/book", body: NEW_BOOK };
        nextDelete += 1;
        return { method: "DELETE", path: `/book/${nextDelete}` };
      }
      case "token":
        return {
          method: "POST",
          path: "/token",
          body: JSON.stringify({ username: traffic.username, password: traffic.password }),
        };
      case "paths":
        return { method: "GET", path: traffic.paths[random(traffic.paths.length) - 1] as string };
    }
  };
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    ...(options.timeoutSeconds === undefined ? {} : { timeout: options.timeoutSeconds }),
    // Headers of their own for each request: autocannon adds a body's Content-Length to the
    // headers it is given, and a GET that inherits a PUT's would wait for a body never sent.
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          headers: { authorization: options.token, "content-type": "application/json" },
          ...next(),
        }),
      },
    ],
  });
  return {
    rps: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}
