// Debian's nginx of a test's own on the repository's site file: the site as written but for
// what a test machine must change (the certificate, the ports, the upstream), its own
// certificate made with openssl, its own main file, pid and temporary folders in the test's
// folder, in the foreground as a child of the test, and never the machine's /etc/nginx.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { NGINX_SITE, readRepositoryFile } from "./deploy.js";

export const SERVER_NAME = "books.example.org";
const CERTIFICATE = `/etc/letsencrypt/live/${SERVER_NAME}/fullchain.pem`;
const KEY = `/etc/letsencrypt/live/${SERVER_NAME}/privkey.pem`;

/** A command on the PATH, or in /usr/sbin, where Debian puts nginx and a PATH may not look. */
function locate(command: string): string | undefined {
  const found = spawnSync("sh", ["-c", `command -v ${command}`], { encoding: "utf8" });
  if (found.status === 0) return found.stdout.trim();
  return existsSync(`/usr/sbin/${command}`) ? `/usr/sbin/${command}` : undefined;
}
const NGINX = locate("nginx");

/** Why the nginx tests cannot run here, or false; on CI a reason is an error instead. */
export const missingNginx =
  NGINX === undefined || locate("openssl") === undefined
    ? "nginx or openssl is not installed (apt-get install nginx-light openssl)"
    : false;
if (missingNginx && process.env.CI === "true") throw new Error(`CI=true: ${missingNginx}`);

export interface SitePorts {
  https: number;
  http: number;
  upstream: number;
}

/** The site file with only what a test machine must change replaced; each must be there. */
export function siteForTest(ports: SitePorts, dir: string): string {
  const replacements: [string, string][] = [
    [CERTIFICATE, join(dir, "cert.pem")],
    [KEY, join(dir, "key.pem")],
    ["listen 443 ", `listen 127.0.0.1:${ports.https} `],
    ["listen [::]:443 ", `listen [::1]:${ports.https} `],
    ["listen 80;", `listen 127.0.0.1:${ports.http};`],
    ["listen [::]:80;", `listen [::1]:${ports.http};`],
    ["server 127.0.0.1:8080;", `server 127.0.0.1:${ports.upstream};`],
  ];
  let site = readRepositoryFile(NGINX_SITE);
  for (const [from, to] of replacements) {
    assert.ok(site.includes(from), `${NGINX_SITE} no longer has ${from}`);
    site = site.replaceAll(from, to);
  }
  return site;
}

/**
 * What Debian's /etc/nginx/nginx.conf gives a site, with every path inside the test's folder;
 * `http` is more directives for its http block.
 */
export const mainConf = (dir: string, http = "") => `
worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 256; }
http {
  default_type application/octet-stream;
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${http}
  include ${dir}/site.conf;
}
`;

/** A certificate for SERVER_NAME in `dir` (cert.pem, key.pem), as siteForTest names them. */
export function makeCertificate(dir: string): Buffer {
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"],
      ...["-subj", `/CN=${SERVER_NAME}`, "-addext", `subjectAltName=DNS:${SERVER_NAME}`],
      ...["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
    ],
    { stdio: "ignore" },
  );
  return readFileSync(join(dir, "cert.pem"));
}

export interface Nginx {
  process: ChildProcess;
  /** What nginx wrote: its error log goes to standard error. */
  output: () => string;
  /** SIGTERM, and the wait for it to exit. */
  stop(): Promise<void>;
}

/**
 * nginx on `site` and the main file of `dir` (its http block given `http`), in the
 * foreground; resolves once GET /ready over HTTPS on `httpsPort` is 200, which needs the
 * service up behind it.
 */
export async function startNginx(
  dir: string,
  site: string,
  options: { httpsPort: number; ca: Buffer; http?: string },
): Promise<Nginx> {
  writeFileSync(join(dir, "site.conf"), site);
  writeFileSync(join(dir, "nginx.conf"), mainConf(dir, options.http));
  const child = spawn(
    NGINX as string,
    ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const nginx: Nginx = {
    process: child,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited:\n${output}`);
    if ((await readyStatus(options.httpsPort, options.ca)) === 200) return nginx;
    if (Date.now() > deadline) {
      await nginx.stop();
      throw new Error(`nginx did not answer in 10 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** GET /ready over HTTPS, its status, or undefined when nothing answered. */
function readyStatus(port: number, ca: Buffer): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        servername: SERVER_NAME,
        ca,
        path: "/ready",
        agent: false,
        headers: { host: SERVER_NAME },
        timeout: 2_000,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
    req.end();
  });
}
