// The topology's files as shipped: haproxy accepts deploy/haproxy/book-catalogue.cfg with its
// addresses filled in, and pgbouncer runs deploy/pgbouncer/pgbouncer.ini with its addresses
// and paths in a folder of the test's own, letting in the admin user of a SCRAM secret written
// as the file's comment says and no one with a wrong password. npm run topology runs them all
// under load (docs/topology.md).
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import pg from "pg";
import {
  HAPROXY_CFG,
  haproxyConfig,
  PGBOUNCER_INI,
  readRepositoryFile,
  settingsOf,
} from "../support/deploy.js";
import { describe } from "../support/describe.js";
import { freePort } from "../support/service.js";

const HAPROXY = process.env.HAPROXY_PATH || "/usr/sbin/haproxy";
const PGBOUNCER = process.env.PGBOUNCER_PATH || "/usr/sbin/pgbouncer";
const missing =
  !existsSync(HAPROXY) || !existsSync(PGBOUNCER)
    ? "haproxy or pgbouncer is not installed (apt-get install haproxy pgbouncer)"
    : false;
if (missing && process.env.CI === "true") throw new Error(`CI=true: ${missing}`);

test(`haproxy -c accepts ${HAPROXY_CFG}`, { skip: missing }, () => {
  const dir = mkdtempSync(join(tmpdir(), "books-haproxy-"));
  try {
    const path = join(dir, "haproxy.cfg");
    writeFileSync(path, haproxyConfig(8080, [8081, 8082, 8083], join(dir, "admin.sock")));
    const checked = spawnSync(HAPROXY, ["-c", "-f", path], { encoding: "utf8" });
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
    assert.match(checked.stdout, /Configuration file is valid/);
    // No warning either: a setting haproxy ignores would not do what the file says.
    assert.doesNotMatch(checked.stdout + checked.stderr, /WARNING/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A role's secret as PostgreSQL stores it (pg_authid.rolpassword), SCRAM-SHA-256. */
function scramSecret(password: string): string {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password, salt, 4096, 32, "sha256");
  const hmac = (text: string) => createHmac("sha256", salted).update(text).digest();
  const stored = createHash("sha256").update(hmac("Client Key")).digest("base64");
  const server = hmac("Server Key").toString("base64");
  return `SCRAM-SHA-256$4096:${salt.toString("base64")}$${stored}:${server}`;
}

describe(`pgbouncer on ${PGBOUNCER_INI}`, { skip: missing }, () => {
  const PASSWORD = "pgbouncer-admin-password-3f1a";
  let dir: string;
  let port: number;
  let pgbouncer: ChildProcess | undefined;
  const log = () => readFileSync(join(dir, "pgbouncer.log"), "utf8");

  /** The shipped file, with only where it listens and where its files are replaced. */
  function iniForTest(): string {
    const replacements: [string, string][] = [
      ["listen_addr = 0.0.0.0", "listen_addr = 127.0.0.1"],
      ["listen_port = 6432", `listen_port = ${port}`],
      ["unix_socket_dir = /var/run/postgresql", "unix_socket_dir ="],
      ["/var/log/postgresql/pgbouncer.log", join(dir, "pgbouncer.log")],
      ["/var/run/postgresql/pgbouncer.pid", join(dir, "pgbouncer.pid")],
      ["/etc/pgbouncer/userlist.txt", join(dir, "userlist.txt")],
    ];
    let ini = readRepositoryFile(PGBOUNCER_INI);
    for (const [from, to] of replacements) {
      assert.ok(ini.includes(from), `${PGBOUNCER_INI} no longer has ${from}`);
      ini = ini.replaceAll(from, to);
    }
    return ini;
  }

  const adminQuery = async (password: string, sql: string) => {
    const client = new pg.Client({
      connectionString: `postgres://pgbouncer:${password}@127.0.0.1:${port}/pgbouncer`,
      connectionTimeoutMillis: 5_000,
    });
    await client.connect();
    try {
      return (await client.query(sql)).rows as Record<string, string>[];
    } finally {
      await client.end();
    }
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "books-pgbouncer-"));
    port = await freePort();
    writeFileSync(join(dir, "pgbouncer.ini"), iniForTest());
    writeFileSync(join(dir, "userlist.txt"), `"pgbouncer" "${scramSecret(PASSWORD)}"\n`);
    // pgbouncer refuses to run as root: as root it becomes postgres, which must own its files.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"]).toString());
      for (const path of [dir, join(dir, "pgbouncer.ini"), join(dir, "userlist.txt")]) {
        chownSync(path, id("-u"), id("-g"));
      }
    }
    const args = [...(asRoot ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")];
    pgbouncer = spawn(PGBOUNCER, args, { stdio: "ignore" });
    const deadline = Date.now() + 10_000;
    while (!(await adminQuery(PASSWORD, "SHOW VERSION").catch(() => undefined))) {
      assert.equal(
        pgbouncer.exitCode,
        null,
        `pgbouncer exited: ${existsSync(join(dir, "pgbouncer.log")) ? log() : ""}`,
      );
      assert.ok(Date.now() < deadline, "pgbouncer did not let the admin in within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  after(async () => {
    if (pgbouncer && pgbouncer.exitCode === null) {
      const exited = new Promise((resolve) => pgbouncer?.once("exit", resolve));
      pgbouncer.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test("it runs the file's settings: transaction mode, SCRAM", async () => {
    const config = new Map(
      (await adminQuery(PASSWORD, "SHOW CONFIG")).map((row) => [row.key, row.value]),
    );
    const shipped = settingsOf(readRepositoryFile(PGBOUNCER_INI), "pgbouncer");
    assert.equal(config.get("pool_mode"), "transaction");
    assert.equal(config.get("auth_type"), "scram-sha-256");
    for (const key of ["default_pool_size", "max_client_conn", "query_wait_timeout"]) {
      assert.equal(config.get(key), shipped[key], key);
    }
    assert.doesNotMatch(log(), /WARNING|ERROR|FATAL/);
  });

  test("a wrong password is refused", async () => {
    await assert.rejects(adminQuery("wrong", "SHOW VERSION"), /SASL authentication failed/);
  });
});
