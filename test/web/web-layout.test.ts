// No control of the librarian's page has its content cut off: every button, label, input,
// sort heading and pager part fits its box, on a desktop and a phone, light and dark, with
// enough books to page, the pager at the bottom in view, and a dialog open; the header's
// links and buttons each keep to one line; no focus ring in the table is cut by its cell. Under SCREENSHOTS=1 it writes the screenshot of a
// phone in dark mode to docs/screenshots/.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Browser } from "playwright-core";
import type { App } from "../../src/http/app.js";
import { WEB_ROOT } from "../../src/http/web-page.js";
import { browserSkipReason, launchChromium, screenshot, signIn } from "../support/browser.js";
import { describe } from "../support/describe.js";
import { buildTestApp, call, listenLocally, tokenFor } from "../support/helpers.js";
import { brokenHeaderLines, cutFocusRings, overflowing } from "../support/layout.js";

const SIZES = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
};
const SCHEMES = ["light", "dark"] as const;

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
          assert.deepEqual(await brokenHeaderLines(page), [], "header controls broken over lines");
          // Sorted by year, so every heading's arrow is shown once.
          await page.getByRole("button", { name: /^Year/ }).click();
          await page.locator('table[aria-busy="false"]').waitFor();
          problems.push(...(await overflowing(page)));
          assert.deepEqual(await cutFocusRings(page), [], "focus rings cut by their cells");
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
