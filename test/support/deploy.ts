// The files under deploy/ as the tests read them: the example environment file and the
// systemd unit, parsed as systemd parses these simple forms; the topology's settings files.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const ENV_EXAMPLE = "deploy/book-catalogue.env.example";
export const UNIT = "deploy/systemd/book-catalogue.service";
export const NGINX_SITE = "deploy/nginx/book-catalogue.conf";
export const HAPROXY_CFG = "deploy/haproxy/book-catalogue.cfg";
export const PGBOUNCER_INI = "deploy/pgbouncer/pgbouncer.ini";
export const POSTGRESQL_CONF = "deploy/postgresql/book-catalogue.conf";

/** A repository file's text. */
export const readRepositoryFile = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** `KEY=VALUE` lines; `#` comments and blank lines skipped, as systemd's EnvironmentFile. */
export function parseEnvFile(text: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.indexOf("=");
    if (at <= 0) throw new Error(`not KEY=VALUE: ${line}`);
    settings[line.slice(0, at)] = line.slice(at + 1);
  }
  return settings;
}

/** The service's data folder on a production machine, as the deploy files name it. */
export const DATA_DIR = "/var/lib/book-catalogue";

/**
 * The example environment file with its blanks filled as an operator would: a secret from
 * `openssl rand -base64 48`, as the file says, and a password; the data folder (the
 * database, the backups) is `dataDir`, so a test never writes to this machine's.
 */
export function filledEnvExample(dataDir: string): Record<string, string> {
  const settings = parseEnvFile(readRepositoryFile(ENV_EXAMPLE));
  for (const [name, value] of Object.entries(settings)) {
    settings[name] = value.replaceAll(DATA_DIR, dataDir);
  }
  const secret = execFileSync("openssl", ["rand", "-base64", "48"], { encoding: "utf8" }).trim();
  return { ...settings, SECRET_TOKEN: secret, AUTH_PASSWORD: "deploy-test-password-7c2a" };
}

/** A unit file's `Key=value` lines of one section, each key with every value it was given. */
export function unitSection(text: string, section: string): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  let current = "";
  for (const line of text.split("\n").map((l) => l.trim())) {
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith("[")) {
      current = line.slice(1, -1);
      continue;
    }
    if (current !== section) continue;
    const at = line.indexOf("=");
    const key = line.slice(0, at);
    keys.set(key, [...(keys.get(key) ?? []), line.slice(at + 1)]);
  }
  return keys;
}

/** The one value of a unit's key; the test fails if it is missing or given twice. */
export function unitValue(keys: Map<string, string[]>, key: string): string {
  const values = keys.get(key) ?? [];
  if (values.length !== 1) throw new Error(`${key}= appears ${values.length} times`);
  return values[0] as string;
}

/** A unit's command line as systemd splits it: words, and single-quoted words whole. */
export function unitCommand(keys: Map<string, string[]>, key = "ExecStart"): [string, ...string[]] {
  const words = [...unitValue(keys, key).matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
  return words as [string, ...string[]];
}

/**
 * The PATH an operator's shell has: this one without the node_modules/.bin folders that npm
 * (and the suite's own install) put first, so the machine's own Node is the one found.
 */
export function machinePath(): string {
  return (process.env.PATH ?? "")
    .split(delimiter)
    .filter((folder) => !folder.includes("/node_modules/"))
    .join(delimiter);
}

/** `key = value` lines of a postgresql.conf or one section of an ini; comments dropped. */
export function settingsOf(text: string, section?: string): Record<string, string> {
  const settings: Record<string, string> = {};
  let current: string | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\s[#;].*$/, "").trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    if (line.startsWith("[")) {
      current = line.slice(1, -1);
      continue;
    }
    if (section !== undefined && current !== section) continue;
    const at = line.indexOf("=");
    settings[line.slice(0, at).trim()] = line
      .slice(at + 1)
      .trim()
      .replace(/^'(.*)'$/, "$1");
  }
  return settings;
}

/**
 * deploy/haproxy/book-catalogue.cfg as written, but for these lines: the address it listens
 * on, the three servers' addresses and the stats socket's path. Each must be there.
 */
export function haproxyConfig(listen: number, servers: number[], socket: string): string {
  const replacements: [string, string][] = [
    ["bind :80", `bind 127.0.0.1:${listen}`],
    ["/run/haproxy/admin.sock", socket],
    ...servers.map((port, i): [string, string] => [`10.0.0.1${i + 1}:8080`, `127.0.0.1:${port}`]),
  ];
  let cfg = readRepositoryFile(HAPROXY_CFG);
  for (const [from, to] of replacements) {
    if (!cfg.includes(from)) throw new Error(`${HAPROXY_CFG} no longer has ${from}`);
    cfg = cfg.replaceAll(from, to);
  }
  return cfg;
}
