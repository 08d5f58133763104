// decisions.md "Credentials and secrets" and "DB_URL": what loadConfig accepts and refuses.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ConfigError, describeDb, loadConfig, loadEnvFile } from "../src/config.js";
import { parsePostgresUrl } from "../src/store/postgres/url.js";
import { describe } from "./support/describe.js";

const SECRET = "s".repeat(32);
const PRODUCTION = {
  NODE_ENV: "production",
  AUTH_USERNAME: "librarian",
  AUTH_PASSWORD: "long and unguessable",
  SECRET_TOKEN: SECRET,
  DB_URL: "postgres://app:pw@db.internal:5432/books",
};

function problemsOf(env: NodeJS.ProcessEnv): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems;
  }
  assert.fail("the configuration was accepted");
}

describe("defaults outside production", () => {
  test("admin/password, a random 32-byte secret, sqlite:./data/books.db, 127.0.0.1:8080, with warnings", () => {
    const config = loadConfig({});
    assert.equal(config.username, "admin");
    assert.equal(config.password, "password");
    assert.equal(Buffer.from(config.secret, "base64url").length, 32);
    assert.notEqual(loadConfig({}).secret, config.secret);
    assert.deepEqual(config.db, { kind: "sqlite", path: "./data/books.db" });
    assert.equal(config.port, 8080);
    assert.equal(config.host, "127.0.0.1");
    assert.equal(config.bodyLimit, 64 * 1024);
    assert.equal(config.loginMaxFailures, 10);
    assert.equal(config.loginWindowSeconds, 60);
    assert.equal(config.shutdownTimeoutMs, 10_000);
    assert.equal(config.warnings.length, 2);
    assert.match(config.warnings.join(" "), /AUTH_USERNAME and AUTH_PASSWORD/);
    assert.match(config.warnings.join(" "), /SECRET_TOKEN/);
  });

  test("no warning once credentials and secret are set", () => {
    const config = loadConfig({ AUTH_USERNAME: "a", AUTH_PASSWORD: "b", SECRET_TOKEN: SECRET });
    assert.deepEqual(config.warnings, []);
  });

  test("the development credentials listen on 127.0.0.1 only, unless HOST says otherwise", () => {
    for (const env of [{}, { AUTH_USERNAME: "a" }, { AUTH_PASSWORD: "long and unguessable" }]) {
      const config = loadConfig(env);
      assert.equal(config.host, "127.0.0.1", JSON.stringify(env));
      assert.match(config.warnings.join(" "), /listening on 127\.0\.0\.1 only/);
    }
    const widened = loadConfig({ HOST: "0.0.0.0" });
    assert.equal(widened.host, "0.0.0.0");
    assert.doesNotMatch(widened.warnings.join(" "), /127\.0\.0\.1 only/);
    assert.match(widened.warnings.join(" "), /AUTH_USERNAME and AUTH_PASSWORD/);
    const own = loadConfig({ AUTH_USERNAME: "a", AUTH_PASSWORD: "long and unguessable" });
    assert.equal(own.host, "0.0.0.0");
    assert.equal(loadConfig(PRODUCTION).host, "0.0.0.0");
  });

  test("PORT and HOST are read", () => {
    const config = loadConfig({ PORT: "9090", HOST: "127.0.0.1" });
    assert.equal(config.port, 9090);
    assert.equal(config.host, "127.0.0.1");
  });

  test("the config is frozen", () => {
    assert.ok(Object.isFrozen(loadConfig({})));
  });
});

describe("production", () => {
  test("a complete production environment is accepted", () => {
    const config = loadConfig(PRODUCTION);
    assert.equal(config.production, true);
    assert.deepEqual(config.warnings, []);
  });

  test("AUTH_USERNAME, AUTH_PASSWORD, SECRET_TOKEN and DB_URL are required, all listed at once", () => {
    const problems = problemsOf({ NODE_ENV: "production" });
    for (const name of ["AUTH_USERNAME", "AUTH_PASSWORD", "SECRET_TOKEN", "DB_URL"]) {
      assert.ok(
        problems.some((p) => p.startsWith(`${name} is required`)),
        `${name} in ${problems}`,
      );
    }
  });

  test("an empty variable counts as missing", () => {
    assert.deepEqual(problemsOf({ ...PRODUCTION, AUTH_PASSWORD: "" }), [
      "AUTH_PASSWORD is required when NODE_ENV=production",
    ]);
  });

  test("SECRET_TOKEN shorter than 32 bytes is refused, without echoing it", () => {
    const problems = problemsOf({ ...PRODUCTION, SECRET_TOKEN: "short-secret-value" });
    assert.deepEqual(problems, ["SECRET_TOKEN must be at least 32 bytes long"]);
  });

  test("32 bytes means bytes: 16 two-byte characters are enough", () => {
    assert.ok(loadConfig({ ...PRODUCTION, SECRET_TOKEN: "é".repeat(16) }));
  });
});

describe("DB_URL forms", () => {
  const forms: [string, object][] = [
    ["sqlite:./data/x.db", { kind: "sqlite", path: "./data/x.db" }],
    ["sqlite://./data/x.db", { kind: "sqlite", path: "./data/x.db" }],
    ["sqlite:///var/lib/books.db", { kind: "sqlite", path: "/var/lib/books.db" }],
    ["file:books.db", { kind: "sqlite", path: "books.db" }],
    ["file:///srv/books.db", { kind: "sqlite", path: "/srv/books.db" }],
    ["sqlite::memory:", { kind: "sqlite", path: ":memory:" }],
    ["postgres://u:p@h:5432/d", { kind: "postgres", url: "postgres://u:p@h:5432/d" }],
    ["postgresql://h/d", { kind: "postgres", url: "postgresql://h/d" }],
  ];
  for (const [url, db] of forms) {
    test(`${url} is accepted`, () => {
      assert.deepEqual(loadConfig({ DB_URL: url }).db, db);
    });
  }

  for (const url of ["mysql://root:topsecret@db/books", "books.db", "http://x", "sqlite:"]) {
    test(`${url} is refused with the supported forms listed, and no password`, () => {
      const [problem] = problemsOf({ DB_URL: url });
      assert.match(
        problem ?? "",
        /sqlite:<path>, sqlite:\/\/<path>, file:<path>, sqlite::memory:, postgres:\/\/…, postgresql:\/\/…/,
      );
      assert.ok(!problem?.includes("topsecret"));
    });
  }

  test("describeDb names the host and database, never the password", () => {
    const config = loadConfig({
      DB_URL: "postgres://app:s3cr%40t@db.internal:6543/books?sslmode=require",
    });
    assert.equal(describeDb(config.db), "postgres://app@db.internal:6543/books");
  });

  test("several hosts, for a failover, are accepted and all named, never the password", () => {
    const config = loadConfig({ DB_URL: "postgres://app:s3cret@db1:5432,db2:5433/books" });
    assert.equal(describeDb(config.db), "postgres://app@db1:5432,db2:5433/books");
    assert.deepEqual(parsePostgresUrl("postgres://app:s3cret@db1:5432,db2:5433/books"), {
      hosts: ["postgres://app:s3cret@db1:5432/books", "postgres://app:s3cret@db2:5433/books"],
      description: "postgres://app@db1:5432,db2:5433/books",
      readWrite: true,
    });
  });

  test("a parameter the store would ignore is refused, naming the supported ones", () => {
    const [problem] = problemsOf({ DB_URL: "postgres://u:topsecret@h/d?search_path=x" });
    assert.match(
      problem ?? "",
      /DB_URL parameter search_path is not supported; supported: sslmode,/,
    );
    assert.match(problem ?? "", /options=-c search_path=/);
    assert.ok(!problem?.includes("topsecret"));
    for (const url of ["postgres://h1,,h2/d", "postgres://h/d?target_session_attrs=standby"]) {
      assert.equal(problemsOf({ DB_URL: url }).length, 1, url);
    }
  });

  test("DB_TIMEOUT_SECONDS and DB_PREPARED_STATEMENTS: defaults, and bad values refused", () => {
    const config = loadConfig({ DB_URL: "postgres://h/d" });
    assert.equal(config.dbTimeoutMs, 5_000);
    assert.equal(config.dbPreparedStatements, true);
    const set = loadConfig({ DB_TIMEOUT_SECONDS: "2", DB_PREPARED_STATEMENTS: "false" });
    assert.deepEqual([set.dbTimeoutMs, set.dbPreparedStatements], [2_000, false]);
    assert.deepEqual(problemsOf({ DB_TIMEOUT_SECONDS: "0", DB_PREPARED_STATEMENTS: "no" }), [
      "DB_TIMEOUT_SECONDS must be a whole number from 1 to 600",
      "DB_PREPARED_STATEMENTS must be true or false",
    ]);
  });
});

describe("numbers", () => {
  for (const [name, value] of [
    ["PORT", "http"],
    ["PORT", "70000"],
    ["PORT", "-1"],
    ["BODY_LIMIT_BYTES", "1.5"],
    ["LOGIN_MAX_FAILURES", "0"],
    ["PG_POOL_SIZE", "many"],
    ["WORKERS", "0"],
    ["WORKERS", "all"],
  ] as const) {
    test(`${name}=${value} is refused, naming the variable`, () => {
      const problems = problemsOf({ [name]: value });
      assert.equal(problems.length, 1);
      assert.match(problems[0] ?? "", new RegExp(`^${name} must be a whole number`));
    });
  }

  test("WORKERS: 1 unless set; auto is one per core this process may use", () => {
    assert.equal(loadConfig({}).workers, 1);
    assert.equal(loadConfig({ WORKERS: "3" }).workers, 3);
    assert.equal(loadConfig({ WORKERS: "auto" }).workers, availableParallelism());
  });

  test("LOG_LEVEL must be a pino level", () => {
    assert.match(problemsOf({ LOG_LEVEL: "loud" })[0] ?? "", /^LOG_LEVEL must be one of/);
  });
});

describe(".env", () => {
  test("a .env file adds its settings; the environment's own values win", () => {
    const dir = mkdtempSync(join(tmpdir(), "books-env-"));
    const path = join(dir, ".env");
    writeFileSync(path, "# comment\nPORT=9191\nAUTH_USERNAME=from-file\nLOG_LEVEL='warn'\n");
    const env: NodeJS.ProcessEnv = { AUTH_USERNAME: "from-environment" };
    loadEnvFile(path, env);
    const config = loadConfig(env);
    assert.equal(config.port, 9191);
    assert.equal(config.username, "from-environment");
    assert.equal(config.logLevel, "warn");
    loadEnvFile(join(dir, "absent.env"), env);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("TRUST_PROXY", () => {
  test("unset or false: no proxy is believed", () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: "false" }).trustProxy, false);
  });

  test("the proxies' addresses, without a warning; a hop count is refused", () => {
    const list = loadConfig({ ...PRODUCTION, TRUST_PROXY: "10.0.0.5,10.0.1.0/24" });
    assert.equal(list.trustProxy, "10.0.0.5,10.0.1.0/24");
    assert.deepEqual(list.warnings, []);
    const [problem] = problemsOf({ TRUST_PROXY: "1" });
    assert.match(problem ?? "", /TRUST_PROXY does not take a hop count/);
  });

  test("every address of the list is checked: one line says which one is wrong", () => {
    for (const list of ["0.0.0.0/0", "::/0", "127.0.0.1/0", "10.0.0.5,::/0"]) {
      const [problem] = problemsOf({ TRUST_PROXY: list });
      assert.match(problem ?? "", /would let every client choose its address; list the/, list);
    }
    for (const list of [
      "10.0.0.300",
      "10.0.0.0/33",
      "::1/129",
      "proxy.local",
      "10.0.0.0/8/8",
      ",",
    ]) {
      const [problem] = problemsOf({ TRUST_PROXY: list });
      assert.match(
        problem ?? "",
        /TRUST_PROXY: invalid (IP address|range on address): .*; list the/,
        list,
      );
    }
    const names = "loopback, 10.0.0.0/8, ::1, fd00::/8, 192.168.1.1/32";
    assert.equal(loadConfig({ ...PRODUCTION, TRUST_PROXY: names }).trustProxy, names);
  });

  test("true is refused in production and warned about elsewhere, naming the safe forms", () => {
    const [problem] = problemsOf({ ...PRODUCTION, TRUST_PROXY: "true" });
    assert.match(problem ?? "", /TRUST_PROXY=true lets clients choose their address/);
    assert.match(problem ?? "", /TRUST_PROXY=10\.0\.0\.5,10\.0\.1\.0\/24/);
    const config = loadConfig({ TRUST_PROXY: "true" });
    assert.equal(config.trustProxy, true);
    assert.match(config.warnings.join(" "), /TRUST_PROXY=true lets clients choose/);
  });
});

describe("scheduled backups", () => {
  test("off unless BACKUP_DIR is set; then daily, keeping seven", () => {
    assert.equal(loadConfig({}).backups, undefined);
    assert.deepEqual(loadConfig({ BACKUP_DIR: "/var/backups/books" }).backups, {
      dir: "/var/backups/books",
      intervalSeconds: 86_400,
      keep: 7,
    });
    const set = { BACKUP_DIR: "b", BACKUP_INTERVAL_SECONDS: "3600", BACKUP_KEEP: "30" };
    assert.deepEqual(loadConfig(set).backups, { dir: "b", intervalSeconds: 3600, keep: 30 });
  });

  test("an interval or a count without the folder is refused: no backup would ever run", () => {
    assert.deepEqual(problemsOf({ BACKUP_KEEP: "3" }), [
      "BACKUP_KEEP needs BACKUP_DIR, the folder for the backups",
    ]);
    assert.match(problemsOf({ BACKUP_INTERVAL_SECONDS: "60" })[0] ?? "", /needs BACKUP_DIR/);
  });

  test("bad numbers, and an in-memory catalogue, are refused", () => {
    assert.match(
      problemsOf({ BACKUP_DIR: "b", BACKUP_KEEP: "0" })[0] ?? "",
      /^BACKUP_KEEP must be a whole number from 1 to 10000/,
    );
    assert.match(
      problemsOf({ BACKUP_DIR: "b", BACKUP_INTERVAL_SECONDS: "1h" })[0] ?? "",
      /^BACKUP_INTERVAL_SECONDS must be a whole number/,
    );
    assert.match(
      problemsOf({ BACKUP_DIR: "b", DB_URL: "sqlite::memory:" })[0] ?? "",
      /^BACKUP_DIR needs a database file or PostgreSQL/,
    );
  });
});

describe("the change log's settings", () => {
  const pg = { DB_URL: "postgres://u@db.example/books" };

  test("defaults keep 30 days and a million entries, and poll every second", () => {
    const config = loadConfig({});
    assert.deepEqual(config.changesKept, { days: 30, entries: 1_000_000 });
    assert.equal(config.changesPollMs, 1000);
    assert.equal(config.changesListenUrl, undefined);
    assert.equal(config.changeStreams.perClient, 50);
  });

  test("CHANGES_LISTEN_URL is a postgres:// address, and only with PostgreSQL", () => {
    const url = "postgres://u@db-direct.example/books";
    assert.equal(loadConfig({ ...pg, CHANGES_LISTEN_URL: url }).changesListenUrl, url);
    assert.deepEqual(problemsOf({ CHANGES_LISTEN_URL: url }), [
      "CHANGES_LISTEN_URL is for a PostgreSQL DB_URL: SQLite needs none",
    ]);
    assert.deepEqual(problemsOf({ ...pg, CHANGES_LISTEN_URL: "redis://x" }), [
      "CHANGES_LISTEN_URL must be a postgres:// URL (direct or session-pooled)",
    ]);
    assert.match(
      problemsOf({ CHANGES_KEEP: "0" })[0] ?? "",
      /^CHANGES_KEEP must be a whole number/,
    );
  });
});
