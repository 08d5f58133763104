// The librarian's page at /, used as a person would, in a real headless Chromium: sign in,
// add, find, sort, page, edit, delete, refusals, and the session ending. Under SCREENSHOTS=1
// it writes the screenshots the README shows to docs/screenshots/. Each test has a service
// and catalogue of its own, with the books it needs: any one runs alone, and in any order.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import type { App } from "../../src/http/app.js";
import { WEB_ROOT } from "../../src/http/web-page.js";
import type { Book } from "../../src/rules/book.js";
import { SEARCH_BOUNDS } from "../../src/store/sqlite/listing.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import {
  atFirstSight,
  browserSkipReason,
  launchChromium,
  screenshot,
  signIn,
} from "../support/browser.js";
import { describe } from "../support/describe.js";
import {
  type Answer,
  buildTestApp,
  call,
  listenLocally,
  TEST_PASSWORD,
  TEST_USERNAME,
  tokenFor,
} from "../support/helpers.js";

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const LEFT_HAND = { title: "The Left Hand of Darkness", author: "Ursula K. Le Guin", year: 1969 };

/** A service of one test, on an empty catalogue of its own. */
/** Runs in the page: whether the dialog is open, and has the keyboard's focus. */
const OPEN_WITH_FOCUS = `({
  open: document.querySelector("dialog")?.open,
  focusInside: document.querySelector("dialog")?.contains(document.activeElement),
})`;

interface Running {
  base: string;
  api: <T>(method: string, url: string, body?: unknown) => Promise<Answer<T>>;
}

/** 44 books, "Tales volume 01", "poems volume 02" and on, every third by Italo Calvino. */
async function addVolumes(running: Running) {
  for (let i = 1; i <= 44; i++) {
    await running.api("POST", "/book", {
      title: `${i % 2 ? "Tales" : "poems"} volume ${String(i).padStart(2, "0")}`,
      author: i % 3 ? "Jorge Luis Borges" : "Italo Calvino",
      year: 1900 + i,
    });
  }
}

describe("the librarian's page in Chromium", { skip: browserSkipReason() }, () => {
  let browser: Browser;
  const apps: App[] = [];
  const contexts: BrowserContext[] = [];

  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    for (const app of apps) await app.close();
  });

  /** A service and catalogue for one test, so no test sees another's books. */
  async function fresh(): Promise<Running> {
    const app = await buildTestApp({ webRoot: WEB_ROOT });
    apps.push(app);
    const base = await listenLocally(app);
    const token = await tokenFor(app);
    return {
      base,
      api: <T>(method: string, url: string, body?: unknown) =>
        call<T>(app, method, url, { token, ...(body === undefined ? {} : { body }) }),
    };
  }

  /** A fresh tab (its own sessionStorage) at the page; with `clock`, time it can move on. */
  async function open(
    running: { base: string },
    viewport = DESKTOP,
    options: { clock?: boolean } = {},
  ): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const page = await context.newPage();
    if (options.clock) await page.clock.install();
    await page.goto(running.base);
    return page;
  }

  /** Where an element's top or bottom is on the page (not in the viewport, which scrolls). */
  async function onPage(element: Locator, edge: "top" | "bottom"): Promise<number> {
    const box = await element.boundingBox();
    assert.ok(box, "the element is shown");
    const scrolled = Number(await element.page().evaluate("scrollY"));
    // Whole pixels: scrolling moves boxes by fractions.
    return Math.round(scrolled + box.y + (edge === "bottom" ? box.height : 0));
  }

  const titles = (page: Page) => page.locator("tbody td.col-title").allInnerTexts();
  const pageStatus = (page: Page) => page.locator("#page-status");
  const pager = (page: Page, place: "above" | "below" = "above") =>
    page.getByRole("navigation", { name: `Pages, ${place} the table` });
  const bookCount = (page: Page) => page.locator("#book-count");

  test("sign in: a wrong password is told, the right one opens the catalogue", async () => {
    const page = await open(await fresh());
    await screenshot(page, "sign-in-desktop.png");
    await signIn(page, "not the password");
    await page.getByRole("alert").getByText("The username or password is wrong.").waitFor();
    await signIn(page);
    await page.getByRole("heading", { name: "Books" }).waitFor();
    // The API's interactive docs are one click away, and link back here.
    const docs = page.getByRole("link", { name: "API documentation" });
    assert.equal(await docs.getAttribute("href"), "/docs");
    await page.locator(".empty").getByText("The catalogue is empty.").waitFor();
  });

  test("add a book by keyboard; the contract's rules are shown by the fields first", async () => {
    const running = await fresh();
    const { api } = running;
    const page = await open(running);
    await signIn(page);
    await page.locator(".empty").getByText("The catalogue is empty.").waitFor();
    // The empty catalogue says so at the top, with what to do next.
    await page.locator(".empty").getByRole("button", { name: "Add a book" }).focus();
    // The dialog is open, with the focus in it, the moment it shows: a key pressed at once
    // goes to the dialog, not to the page behind.
    const shown = await atFirstSight(page, "dialog", "Add a book", OPEN_WITH_FOCUS);
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Add a book" });
    await dialog.waitFor();
    assert.deepEqual(await shown(), { open: true, focusInside: true });
    // Nothing typed: Save shows each field's rule and sends nothing.
    await page.keyboard.press("Enter");
    await dialog.getByText("Title is required.").waitFor();
    await dialog.getByText("Author is required.").waitFor();
    await dialog.getByText("Year is required.").waitFor();
    assert.equal(await dialog.getByLabel("Title").getAttribute("aria-invalid"), "true");
    assert.equal(await page.evaluate("document.activeElement?.id"), "book-title");
    await page.keyboard.type("The Left Hand of Darkness");
    await page.keyboard.press("Tab");
    await page.keyboard.type("Ursula K. Le Guin");
    await page.keyboard.press("Tab");
    await page.keyboard.type("19690");
    await page.keyboard.press("Enter");
    await dialog.getByText("Year must be a whole number from -9999 to 9999.").waitFor();
    assert.equal((await api<Book[]>("GET", "/books")).body.data?.length, 0);
    await page.keyboard.press("Backspace");
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "detached" });
    await page.getByRole("status").getByText("Added “The Left Hand of Darkness”.").waitFor();
    await pageStatus(page).getByText("Page 1 of 1: books 1 to 1.").waitFor();
    await bookCount(page).getByText("1 book", { exact: true }).waitFor();
    assert.deepEqual(await titles(page), ["The Left Hand of Darkness"]);
    assert.deepEqual((await api<Book[]>("GET", "/books")).body.data, [{ id: 1, ...LEFT_HAND }]);
  });

  test("a search of one page keeps room for its own rows only, not a whole page's", async () => {
    const running = await fresh();
    await running.api("POST", "/book", LEFT_HAND);
    await addVolumes(running);
    const page = await open(running);
    await signIn(page);
    await pageStatus(page).getByText("Page 1 of 3: books 1 to 20.").waitFor();
    await page.mouse.wheel(0, 2000);
    await page.getByRole("searchbox").fill("Left Hand");
    await pageStatus(page).getByText("Page 1 of 1: books 1 to 1.").waitFor();
    await page.locator('table[aria-busy="false"]').waitFor();
    const gap =
      (await onPage(page.getByRole("button", { name: "Recently deleted" }), "top")) -
      (await onPage(page.locator("tbody tr"), "bottom"));
    assert.ok(gap < 60, `what is below follows the one row (${gap} px below it)`);
  });

  test("a title written right to left reads so, in the table and in its field", async () => {
    const running = await fresh();
    const hebrew = { title: "מה זה? (כרך 2)", author: "אנונימי", year: 2001 };
    await running.api("POST", "/book", hebrew);
    const page = await open(running);
    await signIn(page);
    const cell = page.locator("td.col-title bdi");
    await cell.getByText(hebrew.title).waitFor();
    assert.equal(
      await page.evaluate('getComputedStyle(document.querySelector("td.col-title bdi")).direction'),
      "rtl",
    );
    await page.getByRole("button", { name: `Edit “${hebrew.title}”` }).click();
    const field = page.getByRole("dialog", { name: "Edit book" }).getByLabel("Title");
    assert.equal(await field.inputValue(), hebrew.title);
    assert.equal(
      await page.evaluate('document.querySelector("dialog[open] input").matches(":dir(rtl)")'),
      true,
    );
  });

  test("search, sort and page through the catalogue, with no layout jump", async () => {
    const running = await fresh();
    await running.api("POST", "/book", LEFT_HAND);
    await addVolumes(running);
    const page = await open(running);
    await signIn(page);
    await pageStatus(page).getByText("Page 1 of 3: books 1 to 20.").waitFor();
    await bookCount(page).getByText("45 books", { exact: true }).waitFor();
    const below = pager(page, "below");
    // Where the pager is on the page (not in the viewport, which scrolls to each click).
    const pagerTop = () => onPage(below, "top");
    const pagerAt = await pagerTop();
    // Titles A to Z without regard to case: "poems" before "Tales", "The Left Hand" after.
    const first = await titles(page);
    assert.equal(first[0], "poems volume 02");
    await screenshot(page, "catalogue-desktop.png");

    await pager(page).getByRole("button", { name: "Next" }).click();
    await pageStatus(page).getByText("Page 2 of 3: books 21 to 40.").waitFor();
    await pager(page).getByRole("button", { name: "Next" }).click();
    await pageStatus(page).getByText("Page 3 of 3: books 41 to 45.").waitFor();
    assert.equal(await bookCount(page).innerText(), "45 books", "the count stays while paging");
    assert.equal(await pager(page).getByRole("button", { name: "Next" }).isDisabled(), true);
    // Within a pixel: a page scrolled by the move puts boxes at fractions.
    const moved = (await pagerTop()) - pagerAt;
    assert.ok(Math.abs(moved) <= 1, `the pager stays where it was (moved ${moved} px)`);
    await pager(page).getByRole("button", { name: "Previous" }).click();
    await pageStatus(page).getByText("Page 2 of 3: books 21 to 40.").waitFor();

    const sortedByYear = async (direction: string) => {
      await page.getByRole("button", { name: /^Year/ }).click();
      await page.locator(`th.col-year[aria-sort="${direction}"]`).waitFor();
      await page.locator('table[aria-busy="false"]').waitFor();
      assert.equal(await pageStatus(page).innerText(), "Page 1 of 3: books 1 to 20.");
      return (await page.locator("tbody td.col-year").allInnerTexts()).map(Number);
    };
    const years = (await running.api<Book[]>("GET", "/books")).body.data?.map((b) => b.year) ?? [];
    const ascending = [...years].sort((a, b) => a - b);
    assert.deepEqual(await sortedByYear("ascending"), ascending.slice(0, 20));
    assert.deepEqual(await sortedByYear("descending"), ascending.reverse().slice(0, 20));

    // Word beginnings, in any order, case and accents aside.
    await page.getByRole("searchbox", { name: "Search titles and authors" }).fill("CALV ítalo");
    await pageStatus(page).getByText("Page 1 of 1: books 1 to 14.").waitFor();
    await bookCount(page).getByText("14 books match “CALV ítalo”", { exact: true }).waitFor();
    const authors = await page.locator("tbody td.col-author").allInnerTexts();
    assert.deepEqual(new Set(authors), new Set(["Italo Calvino"]));
    await page.getByRole("searchbox").fill("no such book");
    // Said at the top, where the eye is, with the way back.
    const empty = page.locator(".empty");
    await empty.getByText("No book matches").waitFor();
    const bottom = await onPage(empty, "bottom");
    assert.ok(bottom <= DESKTOP.height, `the message ends ${bottom} px down`);
    await empty.getByRole("button", { name: "Clear the search" }).click();
    await pageStatus(page).getByText("Page 1 of 3: books 1 to 20.").waitFor();
    assert.equal(await page.getByRole("searchbox").inputValue(), "");
  });

  test("edit a book; a refused save shows the service's message", async () => {
    const running = await fresh();
    const { api } = running;
    const { id } = (await api<Book>("POST", "/book", LEFT_HAND)).body.data as Book;
    // Another book, so the page shows one book only once the search is answered.
    await api("POST", "/book", { title: "Ficciones", author: "Borges", year: 1944 });
    const page = await open(running);
    await signIn(page);
    await page.getByRole("searchbox").fill("Left Hand");
    await pageStatus(page).getByText("Page 1 of 1: books 1 to 1.").waitFor();
    await page.getByRole("button", { name: "Edit “The Left Hand of Darkness”" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit book" });
    await dialog.getByLabel("Year").fill("1970");
    await screenshot(page, "edit-desktop.png");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.locator("tbody td.col-year").getByText("1970").waitFor();
    assert.equal((await api<Book>("GET", `/book/${id}`)).body.data?.year, 1970);

    // Someone else deletes the book while it is open here.
    await page.getByRole("button", { name: "Edit “The Left Hand of Darkness”" }).click();
    await dialog.getByLabel("Title").fill("The Dispossessed");
    await api("DELETE", `/book/${id}`);
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.getByRole("alert").getByText("The service refused: Book not found.").waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });

  test("what is typed as the stored book arrives is kept", async () => {
    const running = await fresh();
    const { id } = (await running.api<Book>("POST", "/book", LEFT_HAND)).body.data as Book;
    const page = await open(running, DESKTOP, { clock: true });
    await signIn(page);
    await pageStatus(page).getByText("Page 1 of 1: books 1 to 1.").waitFor();
    // The dialog's read of the stored book is held until the librarian is in the Year field.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(`**/book/${id}`, async (route) => {
      await held;
      await route.continue();
    });
    // Time stands still: a render's effects wait for a frame that does not come.
    await page.clock.pauseAt(Date.now() + 1_000);
    await page.getByRole("button", { name: "Edit “The Left Hand of Darkness”" }).click();
    await page.clock.runFor(100);
    const dialog = page.getByRole("dialog", { name: "Edit book" });
    const year = dialog.getByLabel("Year");
    await year.focus();
    release();
    // The stored book has arrived and is shown; the librarian types before the next frame.
    await dialog.getByRole("button", { name: "Save" }).waitFor();
    await year.fill("1970");
    await page.clock.runFor(100);
    assert.equal(await year.inputValue(), "1970");
    await page.clock.resume();
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.locator("tbody td.col-year").getByText("1970").waitFor();
  });

  test("delete asks first", async () => {
    const running = await fresh();
    const { api } = running;
    const created = (
      await api<Book>("POST", "/book", { title: "Ficciones", author: "Borges", year: 1944 })
    ).body.data as Book;
    // Another book, so the page shows one book only once the search is answered.
    await api("POST", "/book", LEFT_HAND);
    const page = await open(running);
    await signIn(page);
    await page.getByRole("searchbox").fill("Ficciones");
    await pageStatus(page).getByText("Page 1 of 1: books 1 to 1.").waitFor();
    await page.getByRole("button", { name: "Delete “Ficciones”" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this book?" });
    await dialog.getByRole("button", { name: "Keep it" }).click();
    assert.equal((await api("GET", `/book/${created.id}`)).status, 200);
    await page.getByRole("button", { name: "Delete “Ficciones”" }).click();
    await dialog.getByRole("button", { name: "Delete" }).click();
    await page.locator(".empty").getByText("No book matches").waitFor();
    await bookCount(page).getByText("0 books match “Ficciones”", { exact: true }).waitFor();
    assert.equal((await api("GET", `/book/${created.id}`)).status, 404);
  });

  test("a token about to expire, after a reload: the password is asked over the page, an edit kept", async () => {
    const running = await fresh();
    const { id } = (await running.api<Book>("POST", "/book", LEFT_HAND)).body.data as Book;
    const page = await open(running, DESKTOP, { clock: true });
    await signIn(page);
    await pageStatus(page)
      .getByText(/^Page 1/)
      .waitFor();
    // A reload keeps the token (this tab's sessionStorage) but not the password.
    await page.reload();
    await pageStatus(page)
      .getByText(/^Page 1/)
      .waitFor();
    await page.getByRole("button", { name: "Edit “The Left Hand of Darkness”" }).click();
    const editing = page.getByRole("dialog", { name: "Edit book" });
    await editing.getByLabel("Title").fill("The Dispossessed");
    await page.clock.fastForward("14:30");
    const again = page.getByRole("dialog", { name: "Sign in again" });
    await again.getByText("Your session is about to expire.").waitFor();
    assert.equal(await again.getByLabel("Username").inputValue(), TEST_USERNAME);
    // Escape does not take the dialog away; a wrong password is said in it.
    await page.keyboard.press("Escape");
    await again.getByLabel("Password").fill("not the password");
    await again.getByRole("button", { name: "Sign in" }).click();
    await again.getByRole("alert").getByText("The username or password is wrong.").waitFor();
    await screenshot(page, "sign-in-again-desktop.png");
    await again.getByLabel("Password").fill(TEST_PASSWORD);
    await again.getByRole("button", { name: "Sign in" }).click();
    await again.waitFor({ state: "detached" });
    // The edit is as it was left, and saves.
    assert.equal(await editing.getByLabel("Title").inputValue(), "The Dispossessed");
    await editing.getByRole("button", { name: "Save" }).click();
    await editing.waitFor({ state: "detached" });
    assert.equal(
      (await running.api<Book>("GET", `/book/${id}`)).body.data?.title,
      "The Dispossessed",
    );
  });

  test("by keyboard, sign-in leads the focus to the catalogue and Sign out back to the form", async () => {
    const running = await fresh();
    const page = await open(running);
    await page.getByLabel("Username").fill(TEST_USERNAME);
    await page.getByLabel("Password").fill(TEST_PASSWORD);
    await page.keyboard.press("Enter");
    await page.locator(".empty").getByText("The catalogue is empty.").waitFor();
    await page.getByRole("heading", { name: "Books" }).locator(":scope:focus").waitFor();
    await page.getByRole("button", { name: "Sign out" }).press("Enter");
    await page.getByLabel("Username").locator(":scope:focus").waitFor();
  });

  test("asked the password again, Sign out leads back to sign-in", async () => {
    const running = await fresh();
    const page = await open(running, DESKTOP, { clock: true });
    await signIn(page);
    await page.locator(".empty").getByText("The catalogue is empty.").waitFor();
    await page.reload();
    await page.locator(".empty").getByText("The catalogue is empty.").waitFor();
    await page.clock.fastForward("14:30");
    const again = page.getByRole("dialog", { name: "Sign in again" });
    await again.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.getByText("You have signed out.").waitFor();
    // A failed sign-in after it says so alone: the notice of the last one goes.
    await signIn(page, "not the password");
    await page.getByRole("alert").getByText("The username or password is wrong.").waitFor();
    assert.equal(await page.getByText("You have signed out.").count(), 0);
  });

  test("a token the service refuses leads back to sign-in", async () => {
    const running = await fresh();
    await running.api("POST", "/book", LEFT_HAND);
    const page = await open(running);
    await signIn(page);
    await pageStatus(page)
      .getByText(/^Page 1/)
      .waitFor();
    await page.evaluate(
      'sessionStorage.setItem("book-catalogue.token", sessionStorage.getItem("book-catalogue.token") + "x")',
    );
    await page.reload();
    await page.getByText("Your session has ended. Sign in again.").waitFor();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
  });

  test("on a phone: books as cards, every control within the screen", async () => {
    const running = await fresh();
    await addVolumes(running);
    const page = await open(running, PHONE);
    await screenshot(page, "sign-in-phone.png");
    await signIn(page);
    await pageStatus(page)
      .getByText(/^Page 1/)
      .waitFor();
    const scrollWidth = await page.evaluate<number>("document.documentElement.scrollWidth");
    assert.ok(scrollWidth <= PHONE.width, `no sideways scrolling (${scrollWidth} px)`);
    await screenshot(page, "catalogue-phone.png");
    await page.getByRole("button", { name: /^Edit/ }).first().click();
    await page.getByRole("dialog").waitFor();
    await screenshot(page, "edit-phone.png");
  });

  test("too many failed sign-ins are told as such", async () => {
    // A service that locks the username out after two failed sign-ins.
    const strict = await buildTestApp({ webRoot: WEB_ROOT, env: { LOGIN_MAX_FAILURES: "2" } });
    try {
      const page = await open({ base: await listenLocally(strict) });
      for (const attempt of ["wrong 1", "wrong 2"]) {
        await signIn(page, attempt);
        await page.getByText("The username or password is wrong.").waitFor();
        await page.getByRole("button", { name: "Sign in" }).waitFor();
      }
      await signIn(page);
      await page.getByText("Too many failed sign-ins. Wait a minute, then try again.").waitFor();
    } finally {
      await strict.close();
    }
  });
});

describe("a search of very many matches in the page", { skip: browserSkipReason() }, () => {
  test("pages cut short by the search's bound still count on, and Next walks every match", async () => {
    // Bounds small enough that 60 books need several windows of 8 books.
    const store = openSqliteStore(":memory:", { ...SEARCH_BOUNDS, fewMatches: 3, window: 8 });
    const app = await buildTestApp({ store, webRoot: WEB_ROOT });
    const base = await listenLocally(app);
    const token = await tokenFor(app);
    for (let i = 0; i < 60; i++) {
      const title = `${i % 4 === 0 ? "Common" : "Other"} ${String(i).padStart(2, "0")}`;
      await call(app, "POST", "/book", { token, body: { title, author: "Anon", year: 2000 } });
    }
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: DESKTOP });
      await page.goto(base);
      await signIn(page);
      await page.getByRole("searchbox").fill("comm");
      await page.locator("#book-count").getByText("15 books match “comm”").waitFor();
      const seen: string[] = [];
      for (let turn = 0; turn < 20; turn++) {
        await page.locator('table[aria-busy="false"]').waitFor();
        const shown = await page.locator("tbody td.col-title").allInnerTexts();
        const status = await page.locator("#page-status").innerText();
        if (shown.length > 0) {
          const books = `books ${seen.length + 1} to ${seen.length + shown.length}.`;
          // The count tells no page number while pages come short of full.
          assert.match(status, new RegExp(`^Page ${turn + 1}(?: of 1)?: ${books}$`));
        }
        seen.push(...shown);
        const nextButton = page
          .getByRole("navigation", { name: "Pages, above the table" })
          .getByRole("button", { name: "Next" });
        if (await nextButton.isDisabled()) break;
        await nextButton.click();
      }
      const expected = Array.from(
        { length: 15 },
        (_, i) => `Common ${String(i * 4).padStart(2, "0")}`,
      );
      assert.deepEqual(seen, expected);
    } finally {
      await browser.close();
      await app.close();
      await store.close();
    }
  });
});
