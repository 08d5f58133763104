import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { passwordsAt } from "../../src/auth/passwords.js";
import { type Config, loadConfig } from "../../src/config.js";
import { type App, type AppDependencies, buildApp } from "../../src/http/app.js";
import type { Envelope } from "../../src/http/envelope.js";
import { openStore } from "../../src/store/open.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import type { BookStore } from "../../src/store/store.js";
import { pgConnect, testDatabaseUrl } from "./pg.js";
import { type Pgbouncer, pgbouncerSkipReason, startPgbouncer } from "./pgbouncer.js";

export const TEST_SECRET = "test-secret-that-is-at-least-32-bytes-long";
export const TEST_USERNAME = "librarian";
export const TEST_PASSWORD = "correct horse battery staple";

/** A Config as production builds it, from an environment with test values. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    SECRET_TOKEN: TEST_SECRET,
    AUTH_USERNAME: TEST_USERNAME,
    AUTH_PASSWORD: TEST_PASSWORD,
    DB_URL: "sqlite::memory:",
    LOG_LEVEL: "silent",
    ...env,
  });
}

/**
 * Passwords at a cost far below the service's (N=2^10, not 2^17): the suites log in hundreds of
 * times. What the real cost does (its time, an unknown name's) is tested at PASSWORD_COST.
 */
export const TEST_PASSWORDS = passwordsAt({ ln: 10, r: 8, p: 1 });

export async function buildTestApp(
  options: Partial<AppDependencies> & { env?: Record<string, string> } = {},
): Promise<App> {
  const { env, ...deps } = options;
  const config = deps.config ?? testConfig(env);
  const store = deps.store ?? openSqliteStore(":memory:");
  if (process.env.TEST_ACCOUNT_PRESENT === "1") await addPresentAccount(store);
  return buildApp({ passwords: TEST_PASSWORDS, ...deps, config, store });
}

/**
 * With TEST_ACCOUNT_PRESENT=1 (test/http/contract-with-account.test.ts), every app a test builds
 * has an account in its store: the contract must hold whatever accounts exist.
 */
async function addPresentAccount(store: BookStore): Promise<void> {
  const hash =
    "$scrypt$ln=17,r=8,p=1$c29tZSBzYWx0IGJ5dGVz$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  await store.accounts?.create({
    name: "present-account",
    role: "admin",
    passwordHash: hash,
    tokensValidFrom: 0,
  });
}

export interface Answer<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Envelope<T>;
  raw: string;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** A body sent as these exact bytes, not JSON-encoded. */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

/** One request through app.inject, its body parsed as the envelope. */
export async function call<T = unknown>(
  app: App,
  method: string,
  url: string,
  options: CallOptions = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = options.token;
  let payload = options.payload;
  if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await app.inject({
    method: method as "GET",
    url,
    headers,
    ...(payload !== undefined ? { payload } : {}),
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    body: JSON.parse(response.body) as Envelope<T>,
    raw: response.body,
  };
}

/** The app listening on a free loopback port; its base URL. */
export async function listenLocally(app: App): Promise<string> {
  await app.listen({ host: "127.0.0.1", port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

export async function tokenFor(app: App): Promise<string> {
  const answer = await call<{ token: string }>(app, "POST", "/token", {
    body: { username: TEST_USERNAME, password: TEST_PASSWORD },
  });
  if (answer.status !== 200 || !answer.body.data) throw new Error(`login failed: ${answer.raw}`);
  return answer.body.data.token;
}

/** A writable that keeps every log line, for asserting what reached the logs. */
export function captureLogs(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join("") };
}

export { DEFAULT_TEST_DATABASE_URL } from "./pg.js";

export interface OpenedStore {
  store: BookStore;
  /** A DB_URL that reaches the same data, for a second store or a child process. */
  dbUrl: string;
  dispose(): Promise<void>;
}

export interface StoreUnderTest {
  name: "sqlite" | "sqlite file" | "postgres" | "postgres through pgbouncer";
  /** A reason to skip, shown in the test output; false when the store is available. */
  skip: string | false;
  /** A fresh, empty database of this kind, private to the caller. */
  open(): Promise<OpenedStore>;
}

let postgresProbe: Promise<string | false> | undefined;

/**
 * Whether PostgreSQL tests can run: false when they can, else the reason to skip. Under
 * CI=true an unreachable PostgreSQL is an error, never a skip.
 */
export function postgresSkipReason(): Promise<string | false> {
  postgresProbe ??= (async () => {
    const url = testDatabaseUrl();
    try {
      await (await pgConnect(url)).end();
      return false;
    } catch (error) {
      const reason = `PostgreSQL tests skipped: no PostgreSQL at TEST_DATABASE_URL (${(error as { code?: string }).code ?? (error as Error).message})`;
      if (process.env.CI === "true") throw new Error(`${reason}; under CI=true they must run`);
      return reason;
    }
  })();
  return postgresProbe;
}

/** What tests put in DB_URL as its password where none is given; it must never be logged. */
export const TEST_DB_PASSWORD = "db-password-that-must-not-leak";

/**
 * The URL with a search_path, so that a schema of its own holds the caller's tables, and a
 * password when it has none (trust authentication ignores it), so tests can look for leaks.
 */
function withSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("options", `-c search_path=${schema}`);
  if (parsed.password === "") parsed.password = TEST_DB_PASSWORD;
  return parsed.toString();
}

/** Which secrets of a service's environment, and which further ones, appear in its output. */
export function leakedSecrets(output: string, env: Record<string, string>, extra: string[] = []) {
  const dbPassword = env.DB_URL && URL.canParse(env.DB_URL) ? new URL(env.DB_URL).password : "";
  const secrets = [env.AUTH_PASSWORD, env.SECRET_TOKEN, decodeURIComponent(dbPassword), ...extra];
  return secrets.filter((secret): secret is string => !!secret && output.includes(secret));
}

/**
 * SQLite always; PostgreSQL where TEST_DATABASE_URL (or the local default) answers; with
 * `throughPgbouncer`, PostgreSQL again through a pgbouncer in transaction mode; with
 * `sqliteFile`, SQLite on a file too, the production path (the writer's thread, group commit).
 * Each open() gives a database no other test sees: SQLite in memory or in a folder of its own,
 * a fresh PostgreSQL schema (through pgbouncer, which passes no search_path, a fresh database).
 */
export async function storesUnderTest(
  options: { throughPgbouncer?: boolean; sqliteFile?: boolean } = {},
): Promise<StoreUnderTest[]> {
  const pooled: StoreUnderTest[] = options.throughPgbouncer
    ? [
        {
          name: "postgres through pgbouncer",
          skip: (await postgresSkipReason()) || pgbouncerSkipReason(),
          open: openThroughPgbouncer,
        },
      ]
    : [];
  return [
    {
      name: "sqlite",
      skip: false,
      open: async () => ({
        store: openSqliteStore(":memory:"),
        dbUrl: "sqlite::memory:",
        dispose: async () => {},
      }),
    },
    ...(options.sqliteFile ? [sqliteFile] : []),
    {
      name: "postgres",
      skip: await postgresSkipReason(),
      open: async () => {
        const schema = await freshPostgresSchema();
        const db = { kind: "postgres", url: schema.dbUrl } as const;
        const store = await openStore({ db, pgPoolSize: 2 });
        return {
          store,
          dbUrl: schema.dbUrl,
          dispose: async () => {
            await store.close();
            await schema.drop();
          },
        };
      },
    },
    ...pooled,
  ];
}

/** SQLite on a file in a folder of its own, removed with it. */
const sqliteFile: StoreUnderTest = {
  name: "sqlite file",
  skip: false,
  open: async () => {
    const dir = mkdtempSync(join(tmpdir(), "books-store-"));
    const path = join(dir, "books.db");
    const store = openSqliteStore(path);
    return {
      store,
      dbUrl: `sqlite:${path}`,
      dispose: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

let pgbouncer: Promise<Pgbouncer> | undefined;

/** A store on a fresh database through this process's pgbouncer (transaction mode). */
async function openThroughPgbouncer(): Promise<OpenedStore> {
  pgbouncer ??= startPgbouncer({ poolMode: "transaction" });
  const database = await freshPostgresDatabase();
  const url = new URL((await pgbouncer).url(database.name));
  url.password = TEST_DB_PASSWORD;
  const db = { kind: "postgres", url: url.toString() } as const;
  // A store that cannot open must not leave its database behind.
  const store = await openStore({ db, pgPoolSize: 2, dbPreparedStatements: false }).catch(
    async (error) => {
      await database.drop();
      throw error;
    },
  );
  return {
    store,
    dbUrl: url.toString(),
    dispose: async () => {
      await store.close();
      await database.drop();
    },
  };
}

/**
 * An empty PostgreSQL database of its own, for what cannot be told a search_path, and its
 * URL on the test server.
 */
export async function freshPostgresDatabase(): Promise<{
  name: string;
  url: string;
  drop(): Promise<void>;
}> {
  const baseUrl = testDatabaseUrl();
  const name = `test_${randomBytes(6).toString("hex")}`;
  const admin = await pgConnect(baseUrl);
  await admin.script(`CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      // A pooler may still hold server connections to it.
      await admin.script(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** An empty PostgreSQL schema and its DB_URL, for tests that start their own processes. */
export async function freshPostgresSchema(): Promise<{
  name: string;
  dbUrl: string;
  drop(): Promise<void>;
}> {
  const baseUrl = testDatabaseUrl();
  const schema = `test_${randomBytes(6).toString("hex")}`;
  const admin = await pgConnect(baseUrl);
  await admin.script(`CREATE SCHEMA ${schema}`);
  return {
    name: schema,
    dbUrl: withSchema(baseUrl, schema),
    drop: async () => {
      await admin.script(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/**
 * Titles a spreadsheet would run as formulas (OWASP "CSV injection"), and titles that start
 * with a quote of their own: an export and import must give each back exactly.
 */
export const FORMULA_TITLES = [
  '=HYPERLINK("http://x")',
  "+cmd",
  "-2+3+cmd|' /C calc'!A0",
  "@SUM(A1:A9)",
  "\tTabbed",
  "\rReturned",
  "'Tis Pity She's a Whore",
  "'=quoted already",
  "''+two quotes",
];

/** Books 1..count, "Common i" by "Author i": every one matches "comm", one matches "7". */
export const commonBooks = (count: number) =>
  Array.from({ length: count }, (_, k) => ({
    title: `Common ${k + 1}`,
    author: `Author ${k + 1}`,
    year: 1900 + ((k + 1) % 100),
  }));
