// No control of the librarian's page has its content cut off: every button, label, input,
// sort heading and pager part fits its box, on a desktop and a phone, light and dark, with
// enough books to page, the pager at the bottom in view, and a dialog open; the header's
// links and buttons each keep to one line. Under SCREENSHOTS=1 it writes the screenshot of a
// phone in dark mode to docs/screenshots/.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { App } from "../../src/http/app.js";
import { WEB_ROOT } from "../../src/http/web-page.js";
import { browserSkipReason, launchChromium, screenshot, signIn } from "../support/browser.js";
import { describe } from "../support/describe.js";
import { buildTestApp, call, listenLocally, tokenFor } from "../support/helpers.js";

const SIZES = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
};
const SCHEMES = ["light", "dark"] as const;

// What a librarian reads or clicks; a table cell may end in "…" on purpose (its title shows
// it whole), so cells are not among them.
const CONTROLS = [
  "button",
  "label",
  "input",
  "th",
  ".count",
  "nav.pages",
  "nav.pages *",
  ".tools > *",
  ".tool-buttons",
].join(", ");

// Run in the page: each shown control whose content is wider (or, when it clips, taller) than
// its box, described.
const FIND_OVERFLOWING = `(selector) => {
  const found = [];
  for (const element of document.querySelectorAll(selector)) {
    const style = getComputedStyle(element);
    const shown =
      element.getClientRects().length > 0 &&
      style.visibility === "visible" &&
      style.display !== "inline" &&
      element.closest(".visually-hidden") === null;
    if (!shown) continue;
    const wide = element.scrollWidth > element.clientWidth;
    const tall = style.overflowY !== "visible" && element.scrollHeight > element.clientHeight;
    if (wide || tall) {
      const text = (element.innerText || element.getAttribute("aria-label") || "").trim();
      found.push(
        element.tagName.toLowerCase() + "." + element.className + " “" + text.slice(0, 40) + "”: " +
          element.scrollWidth + "×" + element.scrollHeight + " in " +
          element.clientWidth + "×" + element.clientHeight,
      );
    }
  }
  return found;
}`;

// Run in the page: the header's links and buttons whose text takes more than one line, each
// with the number of lines (a range over the text has a box for each line it is laid on).
const FIND_BROKEN_LINES = `() => {
  const found = [];
  for (const element of document.querySelectorAll("header a, header button")) {
    const range = document.createRange();
    range.selectNodeContents(element);
    const lines = new Set([...range.getClientRects()].map((box) => Math.round(box.top))).size;
    if (lines !== 1) found.push(element.textContent.trim() + ": " + lines + " lines");
  }
  return found;
}`;

const overflowing = (page: Page) =>
  page.evaluate<string[]>(`(${FIND_OVERFLOWING})(${JSON.stringify(CONTROLS)})`);

describe("nothing cut off, at two sizes and in both colour schemes", {
  skip: browserSkipReason(),
}, () => {
  let browser: Browser;
  let app: App;
  let base: string;

  before(async () => {
    browser = await launchChromium();
    app = await buildTestApp({ webRoot: WEB_ROOT });
    base = await listenLocally(app);
    const token = await tokenFor(app);
    // Three pages, with long titles and authors among them.
    for (let i = 1; i <= 45; i++) {
      const long = i % 5 === 0 ? " and the very long subtitle that goes on and on" : "";
      const body = { title: `Volume ${i}${long}`, author: `Author ${i}${long}`, year: 1900 + i };
      await call(app, "POST", "/book", { token, body });
    }
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  for (const [name, viewport] of Object.entries(SIZES)) {
    for (const colorScheme of SCHEMES) {
      test(`${name}, ${colorScheme}`, async () => {
        const context = await browser.newContext({ viewport, colorScheme });
        try {
          const page = await context.newPage();
          await page.goto(base);
          const problems = await overflowing(page);
          await signIn(page);
          await page.locator("#page-status").getByText("Page 1 of 3").waitFor();
          // Sign out, and every other link and button of the header, on one line each.
          await page.getByRole("button", { name: "Sign out" }).waitFor();
          const broken = await page.evaluate<string[]>(`(${FIND_BROKEN_LINES})()`);
          assert.deepEqual(broken, [], "header controls broken over lines");
          // Sorted by year, so every heading's arrow is shown once.
          await page.getByRole("button", { name: /^Year/ }).click();
          await page.locator('table[aria-busy="false"]').waitFor();
          problems.push(...(await overflowing(page)));
          if (name === "phone" && colorScheme === "dark") {
            await screenshot(page, "catalogue-phone-dark.png");
          }
          await page.evaluate("scrollTo(0, document.documentElement.scrollHeight)");
          problems.push(...(await overflowing(page)));
          await page.getByRole("button", { name: /^Edit/ }).first().click();
          await page.getByRole("dialog").waitFor();
          problems.push(...(await overflowing(page)));
          const wide = await page.evaluate<number>("document.documentElement.scrollWidth");
          assert.ok(wide <= viewport.width, `no sideways scrolling (${wide} px)`);
          assert.deepEqual([...new Set(problems)], []);
        } finally {
          await context.close();
        }
      });
    }
  }
});
