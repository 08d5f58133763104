// npm run bench:followers: what idle change streams cost. The service on SQLite, then 1,000
// followers of GET /changes as Server-Sent Events, idle: the server's memory (RSS) before and
// after, and its CPU while they wait, then one write reaching every one of them.
import { join } from "node:path";
import { cpuMs, login, rssMb, startService, WORK } from "./harness.js";

const FOLLOWERS = Number(process.env.FOLLOWERS ?? 1000);
const IDLE_MS = 10_000;

const service = await startService(`sqlite:${join(WORK, "followers.db")}`, 1, {
  CHANGES_STREAMS: String(FOLLOWERS),
  CHANGES_STREAMS_PER_CLIENT: String(FOLLOWERS),
  MAX_CONNECTIONS: String(FOLLOWERS + 100),
  MAX_CONNECTIONS_PER_CLIENT: String(FOLLOWERS + 100),
  MAX_REQUESTS_IN_FLIGHT_PER_CLIENT: String(FOLLOWERS + 100),
});
const pid = service.child.pid as number;
try {
  const token = await login(service.url);
  const stop = new AbortController();
  const before = rssMb(pid, "VmRSS");
  let received = 0;
  await Promise.all(
    Array.from({ length: FOLLOWERS }, async () => {
      const answer = await fetch(`${service.url}/changes`, {
        headers: { authorization: token, accept: "text/event-stream" },
        signal: stop.signal,
      });
      if (answer.status !== 200) throw new Error(`a stream was refused: ${answer.status}`);
      void (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of answer.body as AsyncIterable<Uint8Array>) {
          if (decoder.decode(chunk).includes("event: create")) received++;
        }
      })().catch(() => {});
    }),
  );
  const cpuBefore = cpuMs(pid);
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const idleCpu = cpuMs(pid) - cpuBefore;
  const after = rssMb(pid, "VmRSS");
  const started = Date.now();
  await fetch(`${service.url}/book`, {
    method: "POST",
    headers: { authorization: token, "content-type": "application/json" },
    body: JSON.stringify({ title: "Dune", author: "Frank Herbert", year: 1965 }),
  }).then((answer) => answer.text());
  while (received < FOLLOWERS && Date.now() - started < 10_000) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  console.log(
    `| ${FOLLOWERS} idle followers | RSS ${before.toFixed(0)} → ${after.toFixed(0)} MB (+${(after - before).toFixed(0)} MB) | CPU idle ${(idleCpu / (IDLE_MS / 1000)).toFixed(1)} ms/s | one write reached ${received} in ${Date.now() - started} ms |`,
  );
  stop.abort();
} finally {
  await service.stop();
}
