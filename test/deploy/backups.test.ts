// docs/operations.md's backup commands, run as the page writes them, in its order, through
// deploy/book-catalogue, against the service on the example environment file. The machine's
// own folders are never touched: /var/lib/book-catalogue is a folder of the test's,
// /opt/book-catalogue this checkout, and systemctl starts and stops the test's service.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { Book } from "../../src/rules/book.js";
import { DATA_DIR, filledEnvExample, ROOT, readRepositoryFile } from "../support/deploy.js";
import { login, request, type Service, startService } from "../support/service.js";

const PAGE = readRepositoryFile("docs/operations.md");

/** The page's `sudo` lines from "## Backups" to the end of "## Upgrades", in order. */
function commandsOfPage(): string[] {
  const from = PAGE.indexOf("## Backups");
  const to = PAGE.indexOf("## Logs and metrics");
  const blocks = PAGE.slice(from, to).match(/```sh\n[\s\S]*?```/g) ?? [];
  return blocks.flatMap((block) => block.split("\n").filter((line) => line.startsWith("sudo ")));
}

function run(command: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      command,
      args,
      { env: { PATH: process.env.PATH ?? "", ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

const headerOf = (file: string) => JSON.parse(readFileSync(file, "utf8").split("\n")[0] as string);

test("the page's backup, restore and downgrade commands work as written", async () => {
  const data = mkdtempSync(join(tmpdir(), "books-operations-"));
  const { METRICS_PORT: _, ...example } = filledEnvExample(data);
  const settings: Record<string, string> = { ...example, PORT: "0" };
  const envFile = join(data, "book-catalogue.env");
  writeFileSync(
    envFile,
    Object.entries(settings)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  const credentials = {
    username: settings.AUTH_USERNAME as string,
    password: settings.AUTH_PASSWORD as string,
  };
  const wrapper = { BOOK_CATALOGUE_HOME: ROOT, BOOK_CATALOGUE_ENV_FILE: envFile };
  let service: Service | undefined = await startService(settings);
  const outputs: string[] = [];
  try {
    const token = await login(service, credentials);
    const books: Book[] = [];
    for (const title of ["Dune", "Emma", "Ulysses", "Beloved"]) {
      const created = await request<Book>(service, "POST", "/book", token, {
        title,
        author: "A. Author",
        year: 1965,
      });
      books.push(created.body.data as Book);
    }
    await request(service, "DELETE", `/book/${books[1]?.id}`, token);
    const kept = books.filter((_, i) => i !== 1);

    const commands = commandsOfPage();
    assert.ok(commands.length >= 10, commands.join("\n"));
    for (const line of commands) {
      const words = line.replaceAll(DATA_DIR, data).split(" ");
      if (line === "sudo install -m 755 deploy/book-catalogue /usr/local/bin/") continue;
      if (line === "sudo systemctl stop book-catalogue") {
        assert.equal(await service?.stop(), 0);
        service = undefined;
      } else if (line === "sudo systemctl start book-catalogue") {
        service = await startService(settings);
      } else if (words[0] === "sudo" && ["mv", "rm", "mkdir"].includes(words[1] as string)) {
        // Through a shell, for the page's wildcards.
        const done = await run("sh", ["-c", words.slice(1).join(" ")]);
        assert.equal(done.code, 0, `${line}\n${done.stderr}`);
      } else if (line.startsWith("sudo -u book-catalogue book-catalogue ")) {
        const done = await run(
          "sh",
          [join(ROOT, "deploy", "book-catalogue"), ...words.slice(4)],
          wrapper,
        );
        assert.equal(done.code, 0, `${line}\n${done.stderr}`);
        outputs.push(done.stdout);
      } else {
        assert.fail(`a command of the page this test does not know: ${line}`);
      }
    }
    // What each command said, in the page's order.
    const backup = join(data, "backups", "before-upgrade.backup");
    assert.equal(headerOf(backup).books, kept.length);
    assert.match(outputs.join(""), new RegExp(`a complete backup of ${kept.length} books`));
    assert.equal(
      outputs.filter((out) =>
        out.startsWith(`restored ${kept.length} books and 0 accounts from ${backup}`),
      ).length,
      3,
    );
    // After the way back from an upgrade, the service serves the backed-up books, ids and all.
    assert.ok(service, "the page ends with the service started");
    const running: Service = service;
    for (const book of kept) {
      const read = await request<Book>(
        running,
        "GET",
        `/book/${book.id}`,
        await login(running, credentials),
      );
      assert.deepEqual(read.body.data, book);
    }
    const created = await request<Book>(
      running,
      "POST",
      "/book",
      await login(running, credentials),
      {
        title: "After",
        author: "B. Author",
        year: 2026,
      },
    );
    assert.equal((created.body.data as Book).id, (books.at(-1)?.id as number) + 1);
  } finally {
    await service?.stop();
    rmSync(data, { recursive: true, force: true });
  }
});

test("deploy/book-catalogue stops, saying why, without its install or its settings", async () => {
  const wrapper = join(ROOT, "deploy", "book-catalogue");
  const noInstall = await run("sh", [wrapper, "backup", "x.backup"], {
    BOOK_CATALOGUE_HOME: "/nonexistent/install",
  });
  assert.equal(noInstall.code, 2);
  assert.match(
    noInstall.stderr,
    /^book-catalogue: no install at \/nonexistent\/install \(set BOOK_CATALOGUE_HOME/,
  );
  // Without its settings it would back up a catalogue of the current folder: it stops instead.
  const noSettings = await run("sh", [wrapper, "backup", "x.backup"], {
    BOOK_CATALOGUE_HOME: ROOT,
    BOOK_CATALOGUE_ENV_FILE: "/nonexistent/book-catalogue.env",
  });
  assert.equal(noSettings.code, 2);
  assert.match(
    noSettings.stderr,
    /^book-catalogue: cannot read \/nonexistent\/book-catalogue\.env: run as the service's user/,
  );
});
