// npm run bench:page: the librarian's page in Chromium exporting 100,000 books, then
// previewing the import of that file: how long each takes, and the longest gap between the
// page's animation frames meanwhile (how long it froze).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.js";
import { buildApp } from "../src/http/app.js";
import { WEB_ROOT } from "../src/http/web-page.js";
import { openSqliteStore } from "../src/store/sqlite/store.js";
import { launchChromium } from "../test/support/browser.js";
import { numberedBooks, seedBooks } from "./catalogue.js";

const dir = mkdtempSync(join(tmpdir(), "page-measure-"));
const path = join(dir, "books.db");
await openSqliteStore(path).close();
await seedBooks({ kind: "sqlite", path }, numberedBooks(100_000));
const config = loadConfig({
  SECRET_TOKEN: "x".repeat(40),
  AUTH_USERNAME: "a",
  AUTH_PASSWORD: "b",
  DB_URL: `sqlite:${path}`,
  LOG_LEVEL: "silent",
});
const app = await buildApp({ config, store: openSqliteStore(path), webRoot: WEB_ROOT });
await app.listen({ port: 0, host: "127.0.0.1" });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const browser = await launchChromium();
const context = await browser.newContext({ acceptDownloads: true });
const page = await context.newPage();
await page.goto(base);
await page.getByLabel("Username").fill("a");
await page.getByLabel("Password").fill("b");
await page.getByRole("button", { name: "Sign in" }).click();
await page.locator("#book-count").getByText("100,000 books").waitFor();
// The longest gap between animation frames while it works: how long the page froze.
const watch = () =>
  page.evaluate(
    `(() => { window.__gaps = []; let last = performance.now(); const tick = (t) => { window.__gaps.push(t - last); last = t; if (!window.__stop) requestAnimationFrame(tick); }; window.__stop = false; requestAnimationFrame(tick); })()`,
  );
const longest = async () =>
  Number(await page.evaluate(`(window.__stop = true, Math.max(...window.__gaps))`));
await watch();
let started = performance.now();
const download = page.waitForEvent("download");
await page.getByRole("button", { name: "Export CSV" }).click();
const file = await download;
const exportMs = performance.now() - started;
const exportGap = await longest();
const saved = join(dir, "catalogue.csv");
await file.saveAs(saved);
console.log(
  `export 100,000 books as CSV: ${(exportMs / 1000).toFixed(1)} s, longest frame gap ${exportGap.toFixed(0)} ms, ${(readFileSync(saved).length / 1e6).toFixed(1)} MB`,
);
await page.getByRole("button", { name: "Import a file" }).click();
const dialog = page.getByRole("dialog", { name: "Import a file" });
await watch();
started = performance.now();
await dialog.locator('input[type="file"]').setInputFiles(saved);
await dialog.getByText("holds 100,000 rows").waitFor({ timeout: 120_000 });
const previewMs = performance.now() - started;
const previewGap = await longest();
console.log(
  `preview of a 100,000-row file: ${(previewMs / 1000).toFixed(1)} s, longest frame gap ${previewGap.toFixed(0)} ms`,
);
console.log(await dialog.locator(".preview-counts").innerText());
await browser.close();
await app.close();
rmSync(dir, { recursive: true, force: true });
