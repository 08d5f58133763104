import type { Config } from "../config.js";
import { VERSION } from "../version.js";

/**
 * Outside production, one plain line for people on standard error, where the JSON log lines
 * on standard output do not bury it: where the page, the docs and the API are.
 */
export function greet(config: Config, port: number): void {
  if (config.production) return;
  const local = ["0.0.0.0", "::", "127.0.0.1", "::1"].includes(config.host);
  const host = local ? "localhost" : config.host.includes(":") ? `[${config.host}]` : config.host;
  const base = `http://${host}:${port}`;
  process.stderr.write(
    `Book catalogue ${VERSION} ready: the page at ${base}/, the API docs at ${base}/docs, the API at ${base}/books (Ctrl-C stops it)\n`,
  );
}
