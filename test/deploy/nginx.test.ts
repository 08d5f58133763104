// Debian's nginx in front of the service, with the repository's site file as written but for
// the certificate paths, the listen ports and the upstream port: HTTPS through to a book, the
// redirect from HTTP, the client's address as the login limit sees it, the body limit, and
// nginx's own answers in the envelope. The service runs on the example environment file.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { connect } from "node:tls";
import { loadConfig } from "../../src/config.js";
import { filledEnvExample, NGINX_SITE, readRepositoryFile } from "../support/deploy.js";
import { describe } from "../support/describe.js";
import {
  makeCertificate,
  missingNginx as missing,
  type Nginx,
  SERVER_NAME,
  siteForTest,
  startNginx,
} from "../support/nginx.js";
import { freePort, type Service, startService } from "../support/service.js";

const LOGIN_MAX_FAILURES = 3;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

describe("the service behind nginx with TLS", { skip: missing }, () => {
  let dir: string;
  let service: Service | undefined;
  let nginx: Nginx | undefined;
  let ca: Buffer;
  const ports = { https: 0, http: 0, upstream: 0, metrics: 0 };

  /** One request over HTTPS to nginx, on a connection of its own from `localAddress`. */
  function viaHttps(
    method: string,
    path: string,
    options: { localAddress?: string; headers?: Record<string, string>; body?: string } = {},
  ): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port: ports.https,
          servername: SERVER_NAME,
          ca,
          method,
          path,
          agent: false,
          localAddress: options.localAddress ?? "127.0.0.1",
          headers: { host: SERVER_NAME, ...options.headers },
          timeout: 10_000,
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => {
            body += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in 10 s`)));
      req.on("error", reject);
      req.end(options.body);
    });
  }

  const login = (password: string, localAddress: string, headers: Record<string, string> = {}) =>
    viaHttps("POST", "/token", {
      localAddress,
      headers,
      body: JSON.stringify({ username: "librarian", password }),
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "books-nginx-"));
    // nginx's workers run as nobody when the test runs as root: they must reach the temp folders.
    chmodSync(dir, 0o755);
    ca = makeCertificate(dir);

    ports.metrics = await freePort();
    // The example environment file as an operator fills it in; only the port, the data folder
    // and a lower login limit differ, so the test neither collides nor waits.
    service = await startService({
      ...filledEnvExample(dir),
      PORT: "0",
      METRICS_PORT: String(ports.metrics),
      LOGIN_MAX_FAILURES: String(LOGIN_MAX_FAILURES),
      // nginx, which TRUST_PROXY names, is not one client: its connections are not counted.
      MAX_CONNECTIONS_PER_CLIENT: "1",
    });
    ports.upstream = Number(new URL(service.url).port);
    ports.https = await freePort();
    ports.http = await freePort();
    nginx = await startNginx(dir, siteForTest(ports, dir), { httpsPort: ports.https, ca });
  });

  after(async () => {
    await service?.stop();
    await nginx?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("HTTPS with the site's certificate, through to a created book and back", async () => {
    const token = JSON.parse((await login("deploy-test-password-7c2a", "127.0.0.1")).body).data
      .token as string;
    const book = { title: "The Dispossessed", author: "Ursula K. Le Guin", year: 1974 };
    const created = await viaHttps("POST", "/book", {
      headers: { authorization: token, "content-type": "application/json" },
      body: JSON.stringify(book),
    });
    assert.equal(created.status, 201, created.body);
    const { id } = JSON.parse(created.body).data as { id: number };
    const read = await viaHttps("GET", `/book/${id}`, { headers: { authorization: token } });
    assert.equal(read.status, 200);
    assert.deepEqual(JSON.parse(read.body), {
      status: 200,
      message: "Book retrieved successfully",
      data: { id, ...book },
    });
    assert.equal(read.headers["strict-transport-security"], "max-age=31536000");
    assert.ok(read.headers["x-request-id"], "the service's own answer");
  });

  test("HTTP/2 is offered to clients that ask for it", async () => {
    const socket = connect({
      host: "127.0.0.1",
      port: ports.https,
      servername: SERVER_NAME,
      ca,
      ALPNProtocols: ["h2", "http/1.1"],
    });
    await new Promise((resolve, reject) =>
      socket.once("secureConnect", resolve).once("error", reject),
    );
    assert.equal(socket.alpnProtocol, "h2");
    socket.destroy();
  });

  test("plain HTTP is sent to the same address over HTTPS", async () => {
    const answer = await new Promise<Answer>((resolve, reject) => {
      httpRequest(
        {
          host: "127.0.0.1",
          port: ports.http,
          path: "/books?limit=5",
          headers: { host: SERVER_NAME },
        },
        (res) => {
          res.resume();
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: "" }),
          );
        },
      )
        .on("error", reject)
        .end();
    });
    assert.equal(answer.status, 301);
    assert.equal(answer.headers.location, `https://${SERVER_NAME}/books?limit=5`);
  });

  test("the login limit counts the address nginx saw; X-Forwarded-For from a client changes nothing", async () => {
    const statuses = async (from: string, headers?: Record<string, string>) =>
      (await login("wrong", from, headers)).status;
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) assert.equal(await statuses("127.0.0.2"), 401);
    assert.equal(await statuses("127.0.0.2"), 429);
    // Another client is counted apart, even when it names the exhausted one.
    assert.equal(await statuses("127.0.0.3"), 401);
    assert.equal(await statuses("127.0.0.3", { "x-forwarded-for": "127.0.0.2" }), 401);
    // Also from the address TRUST_PROXY trusts: nginx overwrote the header, not appended to it.
    assert.equal(await statuses("127.0.0.1", { "x-forwarded-for": "127.0.0.2" }), 401);
    // The exhausted one cannot escape by naming another address, however it writes it.
    assert.equal(await statuses("127.0.0.2", { "x-forwarded-for": "127.0.0.9" }), 429);
    assert.equal(await statuses("127.0.0.2", { "x-forwarded-for": "127.0.0.9, 127.0.0.1" }), 429);
    const limited = await login("deploy-test-password-7c2a", "127.0.0.2");
    assert.equal(limited.status, 429, "even the right password, as without the proxy");
    assert.ok(limited.headers["retry-after"]);
  });

  test("20 requests at once through nginx, over as many connections to the service as it opens: all answered", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => viaHttps("GET", "/ready")));
    assert.deepEqual(
      answers.map((answer) => answer.headers["x-request-id"] !== undefined && answer.status),
      Array(20).fill(200),
    );
  });

  test("nginx lets go of an idle connection to the service before the service closes it", () => {
    const upstream = /^upstream book_catalogue \{([^}]*)\}/m.exec(readRepositoryFile(NGINX_SITE));
    const nginxSeconds = Number(/^\s*keepalive_timeout (\d+)s;$/m.exec(upstream?.[1] ?? "")?.[1]);
    const serviceSeconds = loadConfig(filledEnvExample(dir)).keepAliveTimeoutMs / 1000;
    assert.ok(
      nginxSeconds < serviceSeconds,
      `nginx ${nginxSeconds} s, the service ${serviceSeconds} s`,
    );
  });

  test("a body at the service's limit reaches it; one byte more is refused by nginx, in the envelope", async () => {
    const limit = 64 * 1024;
    const atLimit = await viaHttps("POST", "/book", { body: "x".repeat(limit) });
    assert.equal(atLimit.status, 401, "the service answered: no token");
    assert.ok(atLimit.headers["x-request-id"]);
    const over = await viaHttps("POST", "/book", { body: "x".repeat(limit + 1) });
    assert.equal(over.status, 413);
    assert.equal(over.headers["x-request-id"], undefined, "nginx answered");
    assert.deepEqual(JSON.parse(over.body), {
      status: 413,
      message: "Payload too large",
      data: null,
    });
    assert.match(over.headers["content-type"] ?? "", /^application\/json/);
  });

  test("metrics on the example file's METRICS_PORT count the requests nginx passed on", async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text();
    assert.match(
      metrics,
      /^book_catalogue_http_requests_total\{[^}]*route="\/book\/:id"[^}]*\} 1$/m,
    );
  });

  test("with the service stopped, nginx answers 503 in the envelope", async () => {
    assert.equal(await service?.stop(), 0);
    service = undefined;
    const answer = await viaHttps("GET", "/ready");
    assert.equal(answer.status, 503);
    assert.deepEqual(JSON.parse(answer.body), {
      status: 503,
      message: "Service unavailable",
      data: null,
    });
  });
});
