// The catalogue live, in a real headless Chromium: two librarians of their own accounts, each in
// a tab. What one saves shows in the other's table within a second, marked; the conflict box
// names who saved first; a delete is undone from its notice, an older one from Recently
// deleted; a book's history says who did what. Under SCREENSHOTS=1 it writes these to
// docs/screenshots/ at both sizes, light and dark.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Locator, Page } from "playwright-core";
import type { Account } from "../../src/client/client.js";
import type { Book } from "../../src/rules/book.js";
import {
  browserSkipReason,
  openPageService,
  type PageService,
  screenshot,
  signIn,
} from "../support/browser.js";
import { describe } from "../support/describe.js";
import { call } from "../support/helpers.js";

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const LEFT_HAND = { title: "The Left Hand of Darkness", author: "Ursula K. Le Guin", year: 1969 };

describe("the catalogue live, in Chromium", { skip: browserSkipReason() }, () => {
  let served: PageService;
  let ana: Page;
  let ben: Page;
  /** A call to the service's API, as the built-in administrator. */
  const api = <T>(method: string, url: string, body?: unknown) =>
    call<T>(served.app, method, url, {
      token: served.token,
      ...(body === undefined ? {} : { body }),
    });

  /** A librarian's account, and a tab signed in with it. */
  async function librarian(name: string): Promise<Page> {
    const password = `${name} has a long password`;
    const added = await api<Account>("POST", "/accounts", { name, role: "librarian", password });
    assert.equal(added.status, 201, added.raw);
    return tab(name);
  }

  /** A tab of its own (a session of its own), signed in as `name`, following the log. */
  async function tab(name: string): Promise<Page> {
    const password = `${name} has a long password`;
    const page = await (await served.browser.newContext({ viewport: DESKTOP })).newPage();
    await page.goto(served.base);
    await signIn(page, password, name);
    // Following the change log: what others change from now on shows.
    await page.locator(".catalogue[data-following]").waitFor({ state: "attached" });
    return page;
  }

  before(async () => {
    served = await openPageService();
    for (const year of [1966, 1967, 1968]) {
      await api("POST", "/book", { title: `Rocannon's World ${year}`, author: "Le Guin", year });
    }
    [ana, ben] = [await librarian("ana"), await librarian("ben")];
  });
  after(() => served?.close());

  const row = (page: Page, id: number) => page.locator(`tr[data-book="${id}"]`);
  /** Waits until the focus is on a control within `within`. */
  const focusIn = (within: Locator) => within.locator(":focus").waitFor({ timeout: 5_000 });
  /** A book added, then deleted on ben's page (Delete, then its confirmation): its id. */
  async function deletedByBen(book: typeof LEFT_HAND): Promise<number> {
    const { id } = (await api<Book>("POST", "/book", book)).body.data as Book;
    await row(ben, id).waitFor();
    await ben.getByRole("button", { name: `Delete “${book.title}”` }).click();
    const dialog = ben.getByRole("dialog", { name: "Delete this book?" });
    await dialog.getByRole("button", { name: "Delete", disabled: false }).click();
    await row(ben, id).waitFor({ state: "detached" });
    return id;
  }

  /**
   * The screenshots `name`-desktop, -desktop-dark, -phone and -phone-dark of what the page
   * shows, `inView` scrolled into view at each size; the page is left at the desktop's, light.
   */
  async function shoot(page: Page, name: string, inView?: Locator) {
    for (const [size, viewport] of [
      ["desktop", DESKTOP],
      ["phone", PHONE],
    ] as const) {
      await page.setViewportSize(viewport);
      await page.evaluate("window.scrollTo(0, 0)");
      await inView?.scrollIntoViewIfNeeded();
      for (const colorScheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme });
        await screenshot(page, `${name}-${size}${colorScheme === "dark" ? "-dark" : ""}.png`);
      }
    }
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: "light" });
  }

  async function edit(page: Page, title: string, field: string, value: string) {
    await page.getByRole("button", { name: `Edit “${title}”` }).click();
    const dialog = page.getByRole("dialog", { name: "Edit book" });
    await dialog.getByRole("button", { name: "Save" }).waitFor();
    await dialog.getByLabel(field).fill(value);
    return dialog;
  }

  test("a book another librarian adds, then edits, shows in the table within a second, marked", async () => {
    const { id } = (await api<Book>("POST", "/book", LEFT_HAND)).body.data as Book;
    await row(ben, id).waitFor();
    await row(ana, id).waitFor();
    assert.equal(await row(ben, id).getAttribute("class"), "live");

    // The mark stays, not fading, for the screenshots.
    await ben.emulateMedia({ reducedMotion: "reduce" });
    const dialog = await edit(ana, LEFT_HAND.title, "Year", "1970");
    await dialog.getByRole("button", { name: "Save" }).click();
    // Within a second of the Save: the feed reads the log at once after a write.
    await row(ben, id).locator("td.col-year").getByText("1970").waitFor({ timeout: 1000 });
    assert.equal(await row(ben, id).getAttribute("class"), "live");
    await ben.getByText("ana changed “The Left Hand of Darkness”.").waitFor({ state: "attached" });
    await shoot(ben, "live", row(ben, id));
    await ben.emulateMedia({ reducedMotion: "no-preference" });
  });

  test("another tab of the same account is another librarian; this tab's own save is not marked", async () => {
    const other = await tab("ana");
    const listed = (await api<Book[]>("GET", "/books?q=Rocannon&sort=year")).body.data as Book[];
    const { id } = listed[1] as Book;
    const dialog = await edit(other, "Rocannon's World 1967", "Author", "Ursula K. Le Guin");
    await dialog.getByRole("button", { name: "Save" }).click();
    await row(ana, id).getByText("Ursula K. Le Guin").waitFor({ timeout: 1000 });
    assert.equal(await row(ana, id).getAttribute("class"), "live");
    await row(other, id).getByText("Ursula K. Le Guin").waitFor();
    assert.equal(await row(other, id).getAttribute("class"), null);
    await other.context().close();
  });

  test("a book added that the page shown does not hold is counted, and shown on asking", async () => {
    await ben.getByRole("searchbox").fill("Rocannon");
    await ben.getByText("3 books match “Rocannon”").waitFor();
    const book = { title: "The Dispossessed", author: "Ursula K. Le Guin", year: 1974 };
    const { id } = (await api<Book>("POST", "/book", book)).body.data as Book;
    const notice = ben.getByText("1 new book, not on this page: “The Dispossessed”.");
    await notice.getByRole("button", { name: "Show it" }).click();
    // Not a match of the search: the search is cleared, as for a book just added.
    await row(ben, id).waitFor();
    assert.equal(await ben.getByRole("searchbox").inputValue(), "");
    await notice.waitFor({ state: "detached" });
  });

  test("the conflict box names who saved first, and when", async () => {
    const book = { ...LEFT_HAND, title: "The Word for World Is Forest", year: 1972 };
    const { id } = (await api<Book>("POST", "/book", book)).body.data as Book;
    await row(ben, id).waitFor();
    const theirs = await edit(ben, book.title, "Title", "The Word for World");
    const mine = await edit(ana, book.title, "Year", "1976");
    await mine.getByRole("button", { name: "Save" }).click();
    await mine.waitFor({ state: "detached" });
    await theirs.getByRole("button", { name: "Save" }).click();
    await theirs.getByText("ana saved this book just now, while you were editing it.").waitFor();
    await shoot(ben, "who-saved");
    await theirs.getByRole("button", { name: "Keep theirs" }).click();
  });

  test("a delete is undone from its notice; a book's history says who did what", async () => {
    const book = { ...LEFT_HAND, title: "The Lathe of Heaven", year: 1971 };
    const id = await deletedByBen(book);
    await row(ana, id).waitFor({ state: "detached" });
    const undo = ben.getByRole("button", { name: "Undo" });
    assert.equal(await ben.evaluate("document.activeElement?.textContent"), "Undo", "focus on it");
    // What ben did is shown already: nothing is counted as new.
    assert.equal(await ben.locator(".new-books").count(), 0);
    await shoot(ben, "undo");
    await undo.press("Enter");
    await row(ben, id).waitFor();
    await row(ana, id).waitFor();
    // The keyboard goes on from the row brought back, Undo being gone.
    await focusIn(row(ben, id));
    assert.equal((await api<Book>("GET", `/book/${id}`)).body.data?.year, 1971);

    await api("PUT", `/book/${id}`, { year: 1972 });
    await ana.getByRole("button", { name: `History of “${book.title}”` }).click();
    const history = ana.getByRole("dialog", { name: `History of “${book.title}”` });
    const entries = history.locator("li");
    await entries.nth(3).waitFor();
    assert.deepEqual(
      (await entries.allInnerTexts()).map((text) => text.replace(/\s+/g, " ")),
      [
        "librarian edited it just now Year 1971 → to 1972",
        "ben brought it back just now “The Lathe of Heaven” by Ursula K. Le Guin (1971)",
        "ben deleted it just now",
        "librarian added it just now “The Lathe of Heaven” by Ursula K. Le Guin (1971)",
      ],
    );
    assert.equal(await ana.locator(".new-books").count(), 0, "the book back is on the page");
    await shoot(ana, "history");
    await history.getByRole("button", { name: "Close" }).click();
  });

  test("a book deleted earlier is brought back from Recently deleted", async () => {
    const book = { ...LEFT_HAND, title: "Always Coming Home", year: 1985 };
    const { id } = (await api<Book>("POST", "/book", book)).body.data as Book;
    await row(ben, id).waitFor();
    const count = await ben.locator("#book-count").innerText();
    await api("DELETE", `/book/${id}`);
    await row(ben, id).waitFor({ state: "detached" });
    // Counted at once, not only once the page is asked again.
    assert.equal(
      await ben.locator("#book-count").innerText(),
      `${Number.parseInt(count, 10) - 1} books`,
    );
    await ben.getByRole("button", { name: "Recently deleted" }).click();
    const dialog = ben.getByRole("dialog", { name: "Recently deleted" });
    const bringBack = dialog.getByRole("button", { name: `Bring back “${book.title}”` });
    await bringBack.waitFor();
    // The Lathe of Heaven, deleted then brought back above, is not listed.
    assert.equal(await dialog.locator("li").count(), 1);
    await dialog.getByText("librarian deleted it just now").waitFor();
    await shoot(ben, "recently-deleted");
    await bringBack.press("Enter");
    await dialog.waitFor({ state: "detached" });
    await row(ben, id).waitFor();
    await focusIn(row(ben, id));
    assert.equal((await api("GET", `/book/${id}`)).status, 200);
  });

  test("Escape on Undo leaves the focus on the rows, where the book was", async () => {
    await deletedByBen({ ...LEFT_HAND, title: "A", year: 1968 });
    await ben.getByRole("button", { name: "Undo" }).press("Escape");
    await ben.getByRole("button", { name: "Undo" }).waitFor({ state: "detached" });
    await focusIn(ben.locator("tbody tr").first());
  });
});
