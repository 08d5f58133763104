// A refusal the page did not foresee: the service's reason (its Problem-Reason header) is shown
// beside the field it names, as the page's own rules are.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { App } from "../../src/http/app.js";
import type { Book } from "../../src/rules/book.js";
import {
  browserSkipReason,
  openPageService,
  type PageService,
  signedInPage,
  signIn,
} from "../support/browser.js";
import { describe } from "../support/describe.js";
import { call } from "../support/helpers.js";

describe("the service's reason beside the field, in Chromium", {
  skip: browserSkipReason(),
}, () => {
  let browser: Browser;
  let app: App;
  let base: string;
  let token: string;
  let served: PageService | undefined;
  before(async () => {
    served = await openPageService();
    ({ browser, app, base, token } = served);
  });
  after(() => served?.close());

  /**
   * The Add dialog, filled with a title of 500 characters, which the page's rules accept; on
   * its way the title gains one character, as if the service's rules were stricter than this
   * page's (a page older than the service): the service refuses a 501-character title.
   */
  async function refusedTitle(page: Page) {
    await page.route("**/book", async (route) => {
      const sent = route.request().postDataJSON() as Book;
      await route.continue({ postData: JSON.stringify({ ...sent, title: `${sent.title}x` }) });
    });
    await page.getByRole("button", { name: "Add a book" }).first().click();
    const dialog = page.getByRole("dialog", { name: "Add a book" });
    await dialog.getByLabel("Title").fill("x".repeat(500));
    await dialog.getByLabel("Author").fill("Ursula K. Le Guin");
    await dialog.getByLabel("Year").fill("1969");
    await dialog.getByRole("button", { name: "Save" }).click();
    return dialog;
  }

  test("a 501-character title refused by the service: its reason beside Title, focus there", async () => {
    const page = await signedInPage(browser, base, { viewport: { width: 1280, height: 800 } });
    const dialog = await refusedTitle(page);
    const problem = dialog.locator("#book-title-problem");
    await problem.waitFor();
    assert.equal(await problem.innerText(), "The service refused it: at most 500 characters.");
    assert.equal(await dialog.getByLabel("Title").getAttribute("aria-invalid"), "true");
    assert.equal(await page.evaluate("document.activeElement?.id"), "book-title");
    assert.equal(await dialog.getByRole("alert").count(), 0);
    const listed = await call<Book[]>(app, "GET", "/books", { token });
    assert.deepEqual(listed.body.data, []);
    await page.context().close();
  });

  test("on a phone, light and dark, the reason stays beside the field", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const page = await signedInPage(browser, base, {
        viewport: { width: 390, height: 844 },
        colorScheme,
      });
      const dialog = await refusedTitle(page);
      await dialog.locator("#book-title-problem").waitFor();
      const field = await dialog.getByLabel("Title").boundingBox();
      const reason = await dialog.locator("#book-title-problem").boundingBox();
      assert.ok(
        field && reason && reason.y >= field.y + field.height && reason.x + reason.width <= 390,
      );
      await page.context().close();
    }
  });

  test("a refused listing names its reason in the notice above the table", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    // Every listing the page asks for is asked with a page size the service refuses.
    await page.route("**/books?*", (route) => {
      const url = new URL(route.request().url());
      url.searchParams.set("limit", "5000");
      return route.continue({ url: url.href });
    });
    await page.goto(base);
    await signIn(page);
    const notice = page.getByRole("alert");
    await notice.getByText("The service refused", { exact: false }).waitFor();
    assert.match(
      await notice.innerText(),
      /The service refused: Invalid input \(limit: a whole number from 1 to 1000\)\./,
    );
    await context.close();
  });
});
