// Two librarians edit one book in two Chromium pages: the second save never overwrites the
// first unseen. The page saves with If-Match, and on 412 shows the other save beside what
// this librarian typed, letting them keep either.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { App } from "../../src/http/app.js";
import { WEB_ROOT } from "../../src/http/web-page.js";
import type { Book } from "../../src/rules/book.js";
import { browserSkipReason, launchChromium, screenshot, signedInPage } from "../support/browser.js";
import { describe } from "../support/describe.js";
import { buildTestApp, call, listenLocally, tokenFor } from "../support/helpers.js";

const EARTHSEA = { title: "A Wizard of Earthsea", author: "Ursula K. Le Guin", year: 1968 };

describe("two librarians, one book, in Chromium", { skip: browserSkipReason() }, () => {
  let browser: Browser;
  let app: App;
  let base: string;
  let token: string;
  const api = <T>(method: string, url: string, body?: unknown) =>
    call<T>(app, method, url, { token, ...(body === undefined ? {} : { body }) });

  before(async () => {
    browser = await launchChromium();
    app = await buildTestApp({ webRoot: WEB_ROOT });
    base = await listenLocally(app);
    token = await tokenFor(app);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  /** A librarian of their own (a tab with its own session), signed in, the book found. */
  async function librarian(title: string): Promise<Page> {
    const page = await signedInPage(browser, base, { viewport: { width: 1280, height: 800 } });
    await page.getByRole("searchbox").fill(title);
    await page.getByRole("button", { name: `Edit “${title}”` }).waitFor();
    return page;
  }

  const editDialog = (page: Page) => page.getByRole("dialog", { name: "Edit book" });

  async function startEditing(page: Page, title: string, field: string, value: string) {
    await page.getByRole("button", { name: `Edit “${title}”` }).click();
    const dialog = editDialog(page);
    await dialog.getByRole("button", { name: "Save" }).waitFor();
    await dialog.getByLabel(field).fill(value);
    return dialog;
  }

  test("the second save shows the first beside the typed text; keeping mine keeps their other changes", async () => {
    const { id } = (await api<Book>("POST", "/book", EARTHSEA)).body.data as Book;
    const [first, second] = [await librarian(EARTHSEA.title), await librarian(EARTHSEA.title)];
    const firstDialog = await startEditing(first, EARTHSEA.title, "Year", "1969");
    const secondDialog = await startEditing(second, EARTHSEA.title, "Title", "Earthsea I");

    await firstDialog.getByRole("button", { name: "Save" }).click();
    await firstDialog.waitFor({ state: "detached" });
    assert.equal((await api<Book>("GET", `/book/${id}`)).body.data?.year, 1969);

    await secondDialog.getByRole("button", { name: "Save" }).click();
    const conflict = secondDialog.locator(".conflict");
    // Named from the book's history: here the built-in user, in the first tab.
    await conflict
      .getByText("librarian saved this book just now, while you were editing it.")
      .waitFor();
    assert.match(await conflict.innerText(), /Year\s+1969 \(changed\)/);
    assert.doesNotMatch(await conflict.innerText(), /Title[^\n]*\(changed\)/);
    // Nothing was written, and what the second librarian typed is still there.
    assert.deepEqual((await api<Book>("GET", `/book/${id}`)).body.data, {
      id,
      ...EARTHSEA,
      year: 1969,
    });
    assert.equal(await secondDialog.getByLabel("Title").inputValue(), "Earthsea I");
    await screenshot(second, "conflict-desktop.png");
    await second.setViewportSize({ width: 390, height: 844 });
    await second.emulateMedia({ colorScheme: "dark" });
    await screenshot(second, "conflict-phone-dark.png", { fullPage: true });

    await secondDialog.getByRole("button", { name: "Keep mine" }).click();
    await secondDialog.waitFor({ state: "detached" });
    const stored = (await api<Book>("GET", `/book/${id}`)).body.data;
    // Mine is the title this librarian changed; theirs, the year they changed, stays.
    assert.deepEqual(stored, { id, title: "Earthsea I", author: EARTHSEA.author, year: 1969 });
  });

  test("keeping theirs writes nothing and shows their book", async () => {
    const book = { ...EARTHSEA, title: "The Tombs of Atuan", year: 1970 };
    const { id } = (await api<Book>("POST", "/book", book)).body.data as Book;
    const [first, second] = [await librarian(book.title), await librarian(book.title)];
    const secondDialog = await startEditing(second, book.title, "Year", "1999");
    await api("PUT", `/book/${id}`, { year: 1971 });
    await first.close();

    await secondDialog.getByRole("button", { name: "Save" }).click();
    await secondDialog.getByRole("button", { name: "Keep theirs" }).click();
    await secondDialog.waitFor({ state: "detached" });
    await second.getByText("Kept the other librarian's “The Tombs of Atuan”.").waitFor();
    await second.locator("tbody td.col-year").getByText("1971").waitFor();
    assert.equal((await api<Book>("GET", `/book/${id}`)).body.data?.year, 1971);
  });

  test("a delete confirmed on an older version asks again, showing the book as it is now", async () => {
    const book = { ...EARTHSEA, title: "The Farthest Shore", year: 1972 };
    const { id } = (await api<Book>("POST", "/book", book)).body.data as Book;
    const page = await librarian(book.title);
    await page.getByRole("button", { name: `Delete “${book.title}”` }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this book?" });
    // Enabled once the dialog has read the book's version: the change below comes after it.
    await dialog.getByRole("button", { name: "Delete", disabled: false }).waitFor();
    await api("PUT", `/book/${id}`, { year: 1973 });
    await dialog.getByRole("button", { name: "Delete" }).click();
    await dialog.getByText("Another librarian changed this book").waitFor();
    await dialog.getByText("(1973)").waitFor();
    assert.equal((await api("GET", `/book/${id}`)).status, 200, "nothing deleted yet");
    await dialog.getByRole("button", { name: "Delete it anyway" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.equal((await api("GET", `/book/${id}`)).status, 404);
  });
});
