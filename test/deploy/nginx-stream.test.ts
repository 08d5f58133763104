// GET /changes as Server-Sent Events through Debian's nginx on the repository's site file, with
// every timeout of the site, and nginx's own send_timeout and keepalive_timeout, cut to 3 s so
// the test stays short: a school's 40 pages behind one address, over HTTP/1.1 and HTTP/2, stay
// open while idle past all of them on the service's heartbeat, and a write's event reaches
// every page at once, so nginx buffers none of it. Without the heartbeat, nginx cuts the
// stream at proxy_read_timeout.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { connect as http2Connect } from "node:http2";
import { request as httpsRequest } from "node:https";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { connect as tlsConnect } from "node:tls";
import { loadConfig } from "../../src/config.js";
import { filledEnvExample, NGINX_SITE, readRepositoryFile } from "../support/deploy.js";
import { describe } from "../support/describe.js";
import {
  makeCertificate,
  missingNginx,
  type Nginx,
  SERVER_NAME,
  siteForTest,
  startNginx,
} from "../support/nginx.js";
import { freePort, type Service, startService } from "../support/service.js";

/** Every timeout of the test's copy of the site, and nginx's own, in seconds. */
const TIMEOUT_SECONDS = 3;
/** How long the streams stay idle: past every timeout. */
const IDLE_MS = 5_000;
/** A school's pages behind one address: half over HTTP/1.1, half over HTTP/2. */
const PAGES = 40;
const SCHOOL = "127.0.0.2";

/** The site's timeouts as the test runs them: the copy's, and the http block's for nginx's own. */
function shortTimeouts(site: string): string {
  const timeouts = site.match(/^\s*\w+_timeout \d+s;$/gm) ?? [];
  assert.ok(
    timeouts.some((line) => line.trim().startsWith("proxy_read_timeout ")),
    `${NGINX_SITE} no longer sets proxy_read_timeout`,
  );
  return site.replace(/^(\s*\w+_timeout) \d+s;$/gm, `$1 ${TIMEOUT_SECONDS}s;`);
}
const NGINX_OWN_TIMEOUTS = `send_timeout ${TIMEOUT_SECONDS}s; keepalive_timeout ${TIMEOUT_SECONDS}s;`;

/** The service on the example file, with this heartbeat, behind nginx of its own. */
interface Pair {
  dir: string;
  ca: Buffer;
  httpsPort: number;
  service?: Service;
  nginx?: Nginx;
}

async function startPair(heartbeatSeconds: number, pairs: Pair[]): Promise<Pair> {
  const dir = mkdtempSync(join(tmpdir(), "books-nginx-stream-"));
  // nginx's workers run as nobody when the test runs as root: they must reach the temp folders.
  chmodSync(dir, 0o755);
  const pair: Pair = { dir, ca: makeCertificate(dir), httpsPort: await freePort() };
  pairs.push(pair);
  pair.service = await startService({
    ...filledEnvExample(dir),
    PORT: "0",
    METRICS_PORT: String(await freePort()),
    CHANGES_HEARTBEAT_SECONDS: String(heartbeatSeconds),
  });
  const ports = {
    https: pair.httpsPort,
    http: await freePort(),
    upstream: Number(new URL(pair.service.url).port),
  };
  pair.nginx = await startNginx(dir, shortTimeouts(siteForTest(ports, dir)), {
    httpsPort: ports.https,
    ca: pair.ca,
    http: NGINX_OWN_TIMEOUTS,
  });
  return pair;
}

interface Answer {
  status: number;
  body: string;
}

/** One request over HTTPS to the pair's nginx, on a connection of its own. */
function viaHttps(pair: Pair, method: string, path: string, headers = {}, body?: string) {
  return new Promise<Answer>((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port: pair.httpsPort,
        servername: SERVER_NAME,
        ca: pair.ca,
        method,
        path,
        agent: false,
        headers: { host: SERVER_NAME, ...headers },
        timeout: 10_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in 10 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

async function tokenFrom(pair: Pair): Promise<string> {
  const body = JSON.stringify({ username: "librarian", password: "deploy-test-password-7c2a" });
  const answer = await viaHttps(pair, "POST", "/token", {}, body);
  assert.equal(answer.status, 200, answer.body);
  return JSON.parse(answer.body).data.token as string;
}

/** A page's open stream as it reads it: what came, when it closed, and a way to close it. */
interface Stream {
  status: () => number | undefined;
  text: () => string;
  /** Date.now() when the stream closed, or undefined while it is open. */
  closedAt: () => number | undefined;
  close(): void;
}

/** GET /changes as a stream through the pair's nginx, from `from`, over HTTP/1.1 or HTTP/2. */
function openStream(pair: Pair, token: string, from: string, protocol: "http/1.1" | "h2"): Stream {
  let status: number | undefined;
  let text = "";
  let closedAt: number | undefined;
  const headers = { authorization: token, accept: "text/event-stream" };
  const read = (res: NodeJS.ReadableStream) => {
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      text += chunk;
    });
  };
  const closed = () => {
    closedAt ??= Date.now();
  };
  if (protocol === "http/1.1") {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port: pair.httpsPort,
        servername: SERVER_NAME,
        ca: pair.ca,
        path: "/changes",
        agent: false,
        localAddress: from,
        headers: { host: SERVER_NAME, ...headers },
      },
      (res) => {
        status = res.statusCode;
        read(res);
        res.on("close", closed);
      },
    );
    req.on("error", closed);
    req.end();
    return {
      status: () => status,
      text: () => text,
      closedAt: () => closedAt,
      close: () => req.destroy(),
    };
  }
  const session = http2Connect(`https://${SERVER_NAME}`, {
    createConnection: () =>
      tlsConnect({
        socket: netConnect({ host: "127.0.0.1", port: pair.httpsPort, localAddress: from }),
        servername: SERVER_NAME,
        ca: pair.ca,
        ALPNProtocols: ["h2"],
      }),
  });
  session.on("error", closed);
  const stream = session.request({ ":path": "/changes", ...headers });
  stream.on("response", (answer) => {
    status = Number(answer[":status"]);
  });
  read(stream);
  stream.on("error", closed);
  stream.on("close", closed);
  stream.end();
  return {
    status: () => status,
    text: () => text,
    closedAt: () => closedAt,
    close: () => session.destroy(),
  };
}

/** Waits for `check`, failing with `what` after `ms`. */
async function until(check: () => boolean, ms: number, what: () => string) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the change stream through nginx with TLS", {
  skip: missingNginx,
  concurrency: true,
}, () => {
  const pairs: Pair[] = [];
  const streams: Stream[] = [];
  /** With a heartbeat every second, and with none within the test. */
  let live: Pair;
  let silent: Pair;

  before(async () => {
    [live, silent] = await Promise.all([startPair(1, pairs), startPair(3600, pairs)]);
  });

  after(async () => {
    for (const stream of streams) stream.close();
    for (const pair of pairs) {
      await pair.service?.stop();
      await pair.nginx?.stop();
      rmSync(pair.dir, { recursive: true, force: true });
    }
  });

  test("the service's default heartbeat is at most half the site's proxy_read_timeout", () => {
    const site = readRepositoryFile(NGINX_SITE);
    const readSeconds = Number(/^\s*proxy_read_timeout (\d+)s;$/m.exec(site)?.[1]);
    const heartbeatMs = loadConfig(filledEnvExample(tmpdir())).changeStreams.heartbeatMs;
    assert.ok(
      heartbeatMs * 2 <= readSeconds * 1000,
      `heartbeat ${heartbeatMs / 1000} s, proxy_read_timeout ${readSeconds} s`,
    );
  });

  test(`${PAGES} pages behind one address stay open past every timeout, and get a write's event at once`, async () => {
    const token = await tokenFrom(live);
    for (let i = 0; i < PAGES; i++) {
      streams.push(openStream(live, token, SCHOOL, i % 2 === 0 ? "http/1.1" : "h2"));
    }
    const pages = streams.slice(-PAGES);
    const statuses = () => pages.map((page) => page.status()).join(", ");
    await until(() => pages.every((page) => page.text().includes("retry:")), 5_000, statuses);
    assert.deepEqual(
      pages.map((page) => page.status()),
      Array(PAGES).fill(200),
    );

    await sleep(IDLE_MS);
    assert.deepEqual(
      pages.map((page) => page.closedAt()),
      Array(PAGES).fill(undefined),
      "every page's stream is still open",
    );
    // Each comment reached the pages as it was sent: nothing held back in nginx's buffer.
    for (const page of pages) {
      const heartbeats = page.text().split(": heartbeat\n\n").length - 1;
      assert.ok(heartbeats >= IDLE_MS / 1000 - 2, `${heartbeats} heartbeats in ${IDLE_MS} ms`);
    }

    const written = Date.now();
    const book = { title: "The Left Hand of Darkness", author: "Ursula K. Le Guin", year: 1969 };
    const created = await viaHttps(
      live,
      "POST",
      "/book",
      { authorization: token, "content-type": "application/json" },
      JSON.stringify(book),
    );
    assert.equal(created.status, 201, created.body);
    const { id } = JSON.parse(created.body).data as { id: number };
    const event = new RegExp(`^event: create\ndata: \\{[^\n]*"id":${id},`, "m");
    await until(
      () => pages.every((page) => event.test(page.text())),
      1_000,
      () => `${pages.filter((page) => !event.test(page.text())).length} pages without the event`,
    );
    assert.ok(Date.now() - written <= 1_000);
  });

  test("without the heartbeat, nginx cuts the idle stream at proxy_read_timeout", async () => {
    const stream = openStream(silent, await tokenFrom(silent), "127.0.0.1", "http/1.1");
    streams.push(stream);
    await until(
      () => stream.text().includes("retry:"),
      5_000,
      () => `${stream.status()}`,
    );
    const opened = Date.now();
    await until(
      () => stream.closedAt() !== undefined,
      IDLE_MS,
      () => "the stream is still open",
    );
    const cutAfter = ((stream.closedAt() as number) - opened) / 1000;
    assert.ok(cutAfter >= TIMEOUT_SECONDS - 0.5, `closed after ${cutAfter} s`);
    assert.match(silent.nginx?.output() ?? "", /upstream timed out .* while reading upstream/);
  });
});
