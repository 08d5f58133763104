// A real headless Chromium (Debian's, driven by playwright-core) for the tests that use the
// service as a person would, through its pages.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Browser,
  type BrowserContextOptions,
  chromium,
  type Page,
  type PageScreenshotOptions,
} from "playwright-core";
import type { App } from "../../src/http/app.js";
import { WEB_ROOT } from "../../src/http/web-page.js";
import { buildTestApp, listenLocally, TEST_PASSWORD, TEST_USERNAME, tokenFor } from "./helpers.js";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/**
 * Whether browser tests can run: false when they can, else the reason to skip. Under CI=true
 * a missing Chromium is an error, never a skip (.ci/run installs it).
 */
export function browserSkipReason(): string | false {
  if (existsSync(CHROMIUM)) return false;
  const reason = `Browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  if (process.env.CI === "true") throw new Error(`${reason}; under CI=true they must run`);
  return reason;
}

/** Where the screenshots of docs/librarians-page.md (and the README) are kept, in the tree. */
export const SCREENSHOTS_DIR = fileURLToPath(new URL("../../docs/screenshots/", import.meta.url));

/**
 * Takes the screenshot `name` of the docs: always, so that the page is rendered as for one,
 * but written to docs/screenshots/ only under SCREENSHOTS=1. Else a test run would rewrite
 * the tracked files with every pixel that differs, and leave the tree changed.
 */
export function screenshot(
  page: Page,
  name: string,
  options: Omit<PageScreenshotOptions, "path"> = {},
): Promise<Buffer> {
  const write = process.env.SCREENSHOTS === "1";
  return page.screenshot(write ? { ...options, path: join(SCREENSHOTS_DIR, name) } : options);
}

/** Headless, in a fresh profile, and with none of Chromium's own calls to other hosts. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A test file's Chromium, and its service serving the page, with a token for its API. */
export interface PageService {
  browser: Browser;
  app: App;
  base: string;
  token: string;
  close(): Promise<void>;
}

export async function openPageService(): Promise<PageService> {
  const browser = await launchChromium();
  const app = await buildTestApp({ webRoot: WEB_ROOT });
  const base = await listenLocally(app);
  const token = await tokenFor(app);
  const close = async () => {
    await browser.close();
    await app.close();
  };
  return { browser, app, base, token, close };
}

/** Signs in on the page's form with the test user's name and password (or other ones). */
export async function signIn(
  page: Page,
  password = TEST_PASSWORD,
  username = TEST_USERNAME,
): Promise<void> {
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** A fresh tab (a session of its own) at `base`, signed in, the catalogue shown. */
export async function signedInPage(
  browser: Browser,
  base: string,
  options: BrowserContextOptions,
): Promise<Page> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  await page.goto(base);
  await signIn(page);
  await page.getByRole("heading", { name: "Books" }).waitFor();
  return page;
}

/** Runs in the page: see atFirstSight. */
const WATCH_FIRST_SIGHT = `(selector, text, read) => {
  window.atFirstSight = new Promise((resolve) => {
    const watch = new MutationObserver(() => {
      if (!document.querySelector(selector)?.textContent?.includes(text)) return;
      watch.disconnect();
      resolve(read());
    });
    watch.observe(document.body, { childList: true, subtree: true, characterData: true });
  });
}`;

/**
 * Watches the page for `text` to appear in the element at `selector`; the answer is the value
 * of the page's `expression` at that very moment, before the page paints again or takes a key:
 * what a person sees, and where their next key goes, as the change shows. Call it before the
 * action that makes the change, and await the answer after.
 */
export async function atFirstSight(
  page: Page,
  selector: string,
  text: string,
  expression: string,
): Promise<() => Promise<unknown>> {
  const args = `${JSON.stringify(selector)}, ${JSON.stringify(text)}, () => (${expression})`;
  await page.evaluate(`(${WATCH_FIRST_SIGHT})(${args})`);
  return () => page.evaluate("window.atFirstSight");
}
