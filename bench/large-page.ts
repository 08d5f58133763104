// The librarian's page in Chromium over a large catalogue (`npm run bench -- --books N`): how
// long the sign-in form takes to paint, the first page of books after signing in, the count
// of pages (which the Last button waits for), and the last page after Last.
import type { Page } from "playwright-core";
import { launchChromium } from "../test/support/browser.js";
import { PASSWORD, USERNAME } from "./harness.js";

export interface PageTimes {
  /** From the address typed to the sign-in form's first contentful paint. */
  formPaintMs: number;
  /** From Sign in to the first page's rows on screen. */
  firstRowsMs: number;
  /** From Sign in to "Page 1 of M": the Last button enabled. */
  pagesCountedMs: number;
  /** From Last to the last page's rows on screen, and its status line. */
  lastPageMs: number;
  lastStatus: string;
}

const TIMEOUT_MS = 120_000;
const status = (page: Page) => page.locator("#page-status");
const LAST_PAGE = /Page ([\d,]+) of \1:/;

export async function measurePage(url: string): Promise<PageTimes> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(TIMEOUT_MS);
    await page.goto(url);
    await page.getByLabel("Username").waitFor();
    const formPaintMs = Number(
      await page.evaluate(
        `performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? NaN`,
      ),
    );
    await page.getByLabel("Username").fill(USERNAME);
    await page.getByLabel("Password").fill(PASSWORD);
    let started = performance.now();
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("tbody td.col-title").first().waitFor();
    const firstRowsMs = performance.now() - started;
    await status(page)
      .getByText(/^Page 1 of /)
      .waitFor();
    const pagesCountedMs = performance.now() - started;
    started = performance.now();
    await page
      .getByRole("navigation", { name: "Pages, above the table" })
      .getByRole("button", { name: "Last" })
      .click();
    await status(page).getByText(LAST_PAGE).waitFor();
    await page.locator('table[aria-busy="false"]').waitFor();
    const lastPageMs = performance.now() - started;
    const lastStatus = await status(page).innerText();
    return { formPaintMs, firstRowsMs, pagesCountedMs, lastPageMs, lastStatus };
  } finally {
    await browser.close();
  }
}

export function formatPage(times: PageTimes): string {
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  return (
    `the page in Chromium, 1280 × 800: the sign-in form painted at ${ms(times.formPaintMs)}; ` +
    `after Sign in, the first rows at ${ms(times.firstRowsMs)}, "Page 1 of …" (Last enabled) ` +
    `at ${ms(times.pagesCountedMs)}; Last to its rows ${ms(times.lastPageMs)} ("${times.lastStatus}")`
  );
}
