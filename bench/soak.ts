// npm run soak [-- --seconds N] [--generator wrk|autocannon]: what a new user does, checked
// end to end on this checkout and this Node. `npm start` on a new embedded catalogue;
// /health; a book created and read back; N seconds (60 unless told) of mixed load, 80 %
// reads, 15 % updates, 2.5 % creates and 2.5 % deletes over 50 connections; then SIGTERM to
// npm, which must exit 0 with no native abort. Prints what it saw; exits 1 if any step fails.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../src/store/open.js";
import { startService } from "../test/support/service.js";
import { numberedBooks, seedBooks } from "./catalogue.js";
import { DELETE_BLOCK, hasWrk, runLoad } from "./load.js";

const option = (name: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const SECONDS = Number(option("--seconds") ?? 60);
// wrk where installed, as the benchmark does, unless told.
const generator = option("--generator") ?? (hasWrk() ? "wrk" : "autocannon");
if (!Number.isInteger(SECONDS) || SECONDS < 1 || SECONDS > 3600) {
  console.error(
    "usage: npm run soak [-- --seconds N] [--generator wrk|autocannon], N from 1 to 3600",
  );
  process.exit(2);
}
if (generator !== "wrk" && generator !== "autocannon") {
  console.error(`soak: --generator is wrk or autocannon, not ${generator}`);
  process.exit(2);
}
const READ_IDS = 10_000;
// Far more books to delete than any run on these machines reaches (2.5 % of 60,000 a second).
const DELETABLE = Math.max(DELETE_BLOCK, SECONDS * 1_500);
const NATIVE_ABORT = /Assertion failed|Segmentation fault|core dumped|FATAL ERROR|native stack/i;

const work = mkdtempSync(join(tmpdir(), "book-soak-"));
const path = join(work, "books.db");
await (await openStore({ db: { kind: "sqlite", path }, pgPoolSize: 1 })).close();
await seedBooks({ kind: "sqlite", path }, numberedBooks(READ_IDS + DELETABLE));

// As a user starts it: `npm start`, the development credentials.
const started = Date.now();
// In a process group of its own: a failure kills npm and the server it started together (a
// SIGKILL to npm alone leaves the server running).
const service = await startService(
  { HOST: "127.0.0.1", PORT: "0", DB_URL: `sqlite:${path}` },
  { ownGroup: true },
);
const { url, output } = service;

function fail(step: string): never {
  console.error(`soak: ${step}\n--- the service wrote:\n${output().slice(-4000)}`);
  process.kill(-(service.process.pid as number), "SIGKILL");
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
}

const health = await fetch(`${url}/health`);
if (health.status !== 200) fail(`/health answered ${health.status}`);
const startMs = Date.now() - started;

const token = await fetch(`${url}/token`, {
  method: "POST",
  body: JSON.stringify({ username: "admin", password: "password" }),
})
  .then((answer) => answer.json() as Promise<{ data: { token: string } }>)
  .then((envelope) => envelope.data.token);
const book = { title: "The Left Hand of Darkness", author: "Ursula K. Le Guin", year: 1969 };
const created = await fetch(`${url}/book`, {
  method: "POST",
  headers: { authorization: token },
  body: JSON.stringify(book),
});
const { data: stored } = (await created.json()) as { data: { id: number } };
const read = await fetch(`${url}/book/${stored.id}`, { headers: { authorization: token } });
const { data: readBack } = (await read.json()) as { data: unknown };
if (
  created.status !== 201 ||
  JSON.stringify(readBack) !== JSON.stringify({ id: stored.id, ...book })
) {
  fail(`a created book did not read back: ${created.status}, ${JSON.stringify(readBack)}`);
}

const load = await runLoad(
  {
    url,
    token,
    connections: 50,
    seconds: SECONDS,
    // A request is an error past 10 s, not wrk's 2: a machine busy with other work may hold
    // one for a few seconds, which is slow, not lost.
    timeoutSeconds: 10,
    traffic: { kind: "mix", readIds: READ_IDS, deletableFrom: READ_IDS + 1, block: 0 },
  },
  generator,
);
if (load.non2xx > 0 || load.errors > 0) {
  fail(`mixed load: ${load.non2xx} answers not 2xx, ${load.errors} socket errors`);
}

const stopping = Date.now();
const code = await service.stop("SIGTERM");
const stopMs = Date.now() - stopping;
rmSync(work, { recursive: true, force: true });
if (NATIVE_ABORT.test(output())) fail("the output shows a native abort");
if (code !== 0) fail(`SIGTERM: exit code ${code}`);
if (!output().includes('"msg":"stopped"')) {
  fail("the service did not say it stopped");
}
console.log(
  `soak on Node ${process.version}: npm start answered /health in ${startMs} ms; a book was ` +
    `created and read back; ${SECONDS} s of mixed load from ${generator}, ` +
    `${Math.round(load.rps * SECONDS).toLocaleString("en")} requests ` +
    `(${Math.round(load.rps).toLocaleString("en")}/s, p99 ${load.p99Ms.toFixed(1)} ms), all 2xx; ` +
    `SIGTERM: exit 0 in ${stopMs} ms, no native abort.`,
);
