// With WORKERS above 1 on SQLite, the primary's writer tells every worker of each commit that
// changed books: a stream on one worker shows a write answered by another at once, not at
// the next poll.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { login, startService } from "../support/service.js";
import { openStream } from "../support/sse.js";

const CREDENTIALS = { username: "workers", password: "workers-password" };
const DUNE = { title: "Dune", author: "Frank Herbert", year: 1965 };

test("a write answered by one worker streams from the other within a second", async () => {
  const folder = mkdtempSync(join(tmpdir(), "books-workers-changes-"));
  const service = await startService({
    HOST: "127.0.0.1",
    PORT: "0",
    WORKERS: "2",
    DB_URL: `sqlite:${join(folder, "books.db")}`,
    AUTH_USERNAME: CREDENTIALS.username,
    AUTH_PASSWORD: CREDENTIALS.password,
    LOG_LEVEL: "info",
    // Polls an hour apart: only the primary's word brings the event within the test's wait.
    CHANGES_POLL_SECONDS: "3600",
  });
  try {
    const token = await login(service, CREDENTIALS);
    const stream = openStream(`${service.url}/changes`, token);
    const opened = await stream.opened;
    assert.equal(opened.status, 200);
    const streaming = opened.headers.get("x-request-id")?.split("-")[0];
    // Each write on a connection of its own, until the other worker answers one.
    let other = 0;
    for (let i = 0; i < 50 && other === 0; i++) {
      const answer = await fetch(`${service.url}/book`, {
        method: "POST",
        headers: { authorization: token, connection: "close" },
        body: JSON.stringify({ ...DUNE, year: i }),
      });
      assert.equal(answer.status, 201);
      if (answer.headers.get("x-request-id")?.split("-")[0] !== streaming) other = i + 1;
    }
    assert.ok(other > 0, "the other worker answered a write");
    await stream.until(() => stream.events.length === other, 1_000);
    assert.deepEqual(
      stream.events.map((e) => e.data.book?.year),
      Array.from({ length: other }, (_, i) => i),
    );
    stream.close();
  } finally {
    await service.stop();
    rmSync(folder, { recursive: true, force: true });
  }
});
