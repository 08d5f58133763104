// The librarian's day in a real headless Chromium: the first screen of an empty catalogue,
// importing a Goodreads export with a preview (by keyboard only), importing it again, export
// and import into an empty catalogue, the address keeping search and page, dark mode.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { App } from "../../src/http/app.js";
import { WEB_ROOT } from "../../src/http/web-page.js";
import type { Book } from "../../src/rules/book.js";
import {
  atFirstSight,
  browserSkipReason,
  launchChromium,
  screenshot,
  signedInPage,
} from "../support/browser.js";
import { describe } from "../support/describe.js";
import { buildTestApp, call, FORMULA_TITLES, listenLocally, tokenFor } from "../support/helpers.js";

const DESKTOP = { width: 1280, height: 800 };

const PHONE = { width: 390, height: 844 };

/**
 * A Goodreads "library export" of 200 rows; rows 20, 60, 100 and 140 cannot be imported as they
 * are, and row 180 has no year.
 */
function goodreadsExport(): string {
  const quote = (value: string) => `"${value.replaceAll('"', '""')}"`;
  const lines = [
    "Book Id,Title,Author,Author l-f,ISBN,My Rating,Year Published,Original Publication Year",
  ];
  for (let row = 1; row <= 200; row++) {
    const title = row === 20 ? "" : `Book ${String(row).padStart(3, "0")}, a "novel"`;
    const author = row === 60 ? "" : `Author ${row % 13}`;
    const year = row === 100 ? "circa 1900" : row === 140 ? "12000" : String(1800 + row);
    const published = row === 180 ? "" : year;
    const original = row === 180 ? "" : year;
    lines.push(
      [row, quote(title), quote(author), "x", '"=""0441013593"""', 0, published, original].join(
        ",",
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** What has the keyboard's focus the moment `text` shows in the dialog (see atFirstSight). */
const focusWhenShown = (page: Page, text: string) =>
  atFirstSight(page, "dialog", text, "document.activeElement?.textContent");

interface Running {
  app: App;
  base: string;
  api: <T>(method: string, url: string, body?: unknown) => Promise<T>;
}

async function startApp(): Promise<Running> {
  const app = await buildTestApp({ webRoot: WEB_ROOT });
  const base = await listenLocally(app);
  const token = await tokenFor(app);
  return {
    app,
    base,
    api: async <T>(method: string, url: string, body?: unknown) =>
      (await call<T>(app, method, url, { token, ...(body === undefined ? {} : { body }) })).body
        .data as T,
  };
}

describe("the librarian's day in Chromium", { skip: browserSkipReason() }, () => {
  let browser: Browser;
  let dir: string;
  const apps: App[] = [];
  before(async () => {
    browser = await launchChromium();
    dir = mkdtempSync(join(tmpdir(), "books-web-import-"));
  });
  after(async () => {
    await browser?.close();
    for (const app of apps) await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(running: Running, viewport = DESKTOP, colorScheme?: "dark"): Promise<Page> {
    return signedInPage(browser, running.base, {
      viewport,
      acceptDownloads: true,
      ...(colorScheme ? { colorScheme } : {}),
    });
  }

  const fresh = async () => {
    const running = await startApp();
    apps.push(running.app);
    return running;
  };
  const fields = (books: Book[]) =>
    books.map(({ title, author, year }) => ({ title, author, year }));

  test("an empty catalogue says so at the top, with Add and Import, on a desktop and a phone", async () => {
    const running = await fresh();
    for (const [viewport, name] of [
      [DESKTOP, "empty-desktop.png"],
      [PHONE, "empty-phone.png"],
    ] as const) {
      const page = await open(running, viewport);
      const empty = page.locator(".empty");
      await empty.getByText("The catalogue is empty.").waitFor();
      for (const label of ["Add a book", "Import a file"]) {
        const button = empty.getByRole("button", { name: label });
        const box = await button.boundingBox();
        assert.ok(box && box.y + box.height <= viewport.height, `${label} without scrolling`);
      }
      assert.equal(await page.evaluate("document.documentElement.scrollWidth"), viewport.width);
      await screenshot(page, name);
      await page.context().close();
    }
  });

  test("import by keyboard only: a preview of new, duplicate and refused rows, then the import; again, nothing added", async () => {
    const running = await fresh();
    const file = join(dir, "goodreads_library_export.csv");
    writeFileSync(file, goodreadsExport());
    const page = await open(running);
    await page.locator(".empty").getByRole("button", { name: "Import a file" }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Import a file" });
    await dialog.waitFor();
    // The dialog opens on its file chooser, which the keyboard opens.
    const chooser = page.waitForEvent("filechooser");
    assert.equal(await page.evaluate("document.activeElement?.type"), "file");
    await page.keyboard.press("Space");
    const previewFocus = await focusWhenShown(page, "holds 200 rows:");
    await (await chooser).setFiles(file);
    await dialog.getByText("“goodreads_library_export.csv” holds 200 rows:").waitFor();
    // The preview's own button has the focus as the preview shows.
    assert.equal(await previewFocus(), "Import 195 books");
    const counts = await dialog.locator(".preview-counts li").allInnerTexts();
    assert.deepEqual(counts, [
      "195 new",
      "0 already in the catalogue or the file (same title, author and year)",
      "1 row has no year",
      "4 rows cannot be imported as they are",
    ]);
    const refused = await dialog
      .locator(".refused tbody tr")
      .evaluateAll((rows) =>
        rows.map((row) => [...row.querySelectorAll("td")].map((td) => td.textContent)),
      );
    // The file's own lines: the header is line 1.
    assert.deepEqual(refused, [
      ["21", "—", "the title is empty"],
      ["61", 'Book 060, a "novel"', "the author is empty"],
      ["101", 'Book 100, a "novel"', "the year must be a whole number from -9999 to 9999"],
      ["141", 'Book 140, a "novel"', "the year must be a whole number from -9999 to 9999"],
    ]);
    assert.equal(
      await dialog.getByLabel('Year of line 181, “Book 180, a "novel"”').inputValue(),
      "",
    );
    assert.equal(await page.evaluate("document.activeElement?.textContent"), "Import 195 books");
    const summaryFocus = await focusWhenShown(page, "Imported 195 books");
    await page.keyboard.press("Enter");
    await dialog
      .getByText(
        "Imported 195 books from “goodreads_library_export.csv”; 0 duplicates skipped; 1 row without a year skipped; 4 refused.",
      )
      .waitFor();
    // Close has the focus as the summary shows: Enter at once closes the dialog.
    assert.equal(await summaryFocus(), "Close");
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "detached" });
    await page.locator("#book-count").getByText("195 books", { exact: true }).waitFor();
    const books = await running.api<Book[]>("GET", "/books");
    assert.equal(books.length, 195);
    assert.deepEqual(books[0], {
      id: books[0]?.id,
      title: 'Book 001, a "novel"',
      author: "Author 1",
      year: 1801,
    });
    // In the file's order.
    assert.deepEqual(
      books.map((b) => b.title),
      [...books.map((b) => b.title)].sort(),
    );

    // The same file again: every row is a duplicate, and nothing can be imported.
    await page.getByRole("button", { name: "Import a file" }).click();
    await dialog.waitFor();
    await dialog.locator('input[type="file"]').setInputFiles(file);
    await dialog.getByText("“goodreads_library_export.csv” holds 200 rows:").waitFor();
    assert.deepEqual(await dialog.locator(".preview-counts li").allInnerTexts(), [
      "0 new",
      "195 already in the catalogue or the file (same title, author and year)",
      "1 row has no year",
      "4 rows cannot be imported as they are",
    ]);
    assert.equal(await dialog.getByRole("button", { name: "Import 0 books" }).isDisabled(), true);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    assert.equal((await running.api<Book[]>("GET", "/books")).length, 195);
    await page.context().close();
  });

  test("rows without a year: one year for all, a year each, or skipped; lines where rows start, in a CRLF file", async () => {
    const running = await fresh();
    await running.api("POST", "/book", { title: "Emma", author: "Jane Austen", year: 1815 });
    const file = join(dir, "no-years.csv");
    const lines = [
      "title,author,year", // 1
      "Dune,Frank Herbert,1965", // 2
      "Die Straße,Ann Petry,", // 3
      '"Cien años\r\nde soledad",Gabriel García Márquez,', // 4-5
      "Emma,Jane Austen,", // 6
      '"Mrs\r\nDalloway",Virginia Woolf,', // 7-8
      "No author,,1999", // 9
      '"Broken\r\nyear",Writer,circa 1900', // 10-11
    ];
    writeFileSync(file, `${lines.join("\r\n")}\r\n`);
    const page = await open(running);
    await page.getByRole("button", { name: "Import a file" }).click();
    const dialog = page.getByRole("dialog", { name: "Import a file" });
    await dialog.locator('input[type="file"]').setInputFiles(file);
    await dialog.getByText("“no-years.csv” holds 7 rows:").waitFor();
    const counts = () => dialog.locator(".preview-counts li").allInnerTexts();
    assert.deepEqual(await counts(), [
      "1 new",
      "0 already in the catalogue or the file (same title, author and year)",
      "4 rows have no year",
      "2 rows cannot be imported as they are",
    ]);
    const cells = (table: string, column: number) =>
      dialog
        .locator(`${table} tbody tr td:nth-child(${column})`)
        .evaluateAll((tds) => tds.map((td) => td.textContent));
    // Each row at the line it starts on, a line break inside quotes counted once.
    assert.deepEqual(await cells(".no-year-rows", 1), ["3", "4", "6", "7"]);
    assert.deepEqual(await cells(".refused", 1), ["9", "10"]);
    const importButton = dialog.getByRole("button", { name: /^Import \d+ books?$/ });

    // One year for all of them at once, then skip them all again.
    await dialog.getByLabel("Year for all 4").fill("1900");
    await dialog.getByRole("button", { name: "Give all 4 this year" }).click();
    const yearFields = dialog.locator(".no-year-rows input");
    const years = await Promise.all((await yearFields.all()).map((f) => f.inputValue()));
    assert.deepEqual(years, ["1900", "1900", "1900", "1900"]);
    assert.equal(await importButton.innerText(), "Import 5 books");
    await dialog.getByRole("button", { name: "Skip all 4" }).click();
    assert.equal(await importButton.innerText(), "Import 1 book");

    // A year each; a year that is not one holds the import back until it is put right.
    await dialog.getByLabel("Year for all 4").fill("1946");
    await dialog.getByRole("button", { name: "Give all 4 this year" }).click();
    const cien = dialog.getByLabel(/^Year of line 4, “Cien años/);
    await cien.fill("19x7");
    await dialog
      .locator(".no-year-rows")
      .getByText("the year must be a whole number from -9999 to 9999")
      .waitFor();
    assert.equal(await cien.getAttribute("aria-invalid"), "true");
    assert.equal(await importButton.isDisabled(), true);
    await cien.fill("1967");
    await dialog.getByLabel("Year of line 6, “Emma”").fill("1815");
    // Left empty: skipped.
    await dialog.getByLabel(/^Year of line 7, “Mrs/).fill("");
    assert.deepEqual(await counts(), [
      "3 new",
      "1 already in the catalogue or the file (same title, author and year)",
      "4 rows have no year",
      "2 rows cannot be imported as they are",
    ]);
    assert.equal(await importButton.innerText(), "Import 3 books");
    await screenshot(page, "import-preview.png");
    await importButton.click();
    await dialog
      .getByText(
        "Imported 3 books from “no-years.csv”; 1 duplicate skipped; 1 row without a year skipped; 2 refused.",
      )
      .waitFor();
    // In the file's order, the rows given a year among the others.
    assert.deepEqual(fields(await running.api<Book[]>("GET", "/books")), [
      { title: "Emma", author: "Jane Austen", year: 1815 },
      { title: "Dune", author: "Frank Herbert", year: 1965 },
      { title: "Die Straße", author: "Ann Petry", year: 1946 },
      { title: "Cien años\r\nde soledad", author: "Gabriel García Márquez", year: 1967 },
    ]);
    await page.context().close();
  });

  test("CSV export from the page: a byte-order mark, formulas neutralised; imported back the same", async () => {
    const source = await fresh();
    const books = FORMULA_TITLES.map((title, i) => ({
      title,
      author: ["Writer", "@Author", "+Anonymous", "'Quoted"][i % 4] as string,
      year: 1900 + i,
    }));
    for (const book of books) await source.api("POST", "/book", book);
    const page = await open(source);
    await page.locator("#book-count").getByText(`${books.length} books`, { exact: true }).waitFor();
    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Export CSV" }).click();
    const path = join(dir, "formulas.csv");
    await (await download).saveAs(path);
    const bytes = readFileSync(path);
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], "a UTF-8 byte-order mark");
    const text = bytes.toString("utf8");
    assert.equal(text.split("\n")[1], `1,"'=HYPERLINK(""http://x"")",Writer,1900`);
    assert.equal(text.split("\n")[2], "2,'+cmd,'@Author,1901");

    const target = await fresh();
    const other = await open(target);
    await other.locator(".empty").getByRole("button", { name: "Import a file" }).click();
    const dialog = other.getByRole("dialog", { name: "Import a file" });
    await dialog.locator('input[type="file"]').setInputFiles(path);
    await dialog.getByRole("button", { name: `Import ${books.length} books` }).click();
    await dialog.getByText(/^Imported \d+ books from/).waitFor();
    assert.deepEqual(fields(await target.api<Book[]>("GET", "/books")), books);
    await page.context().close();
    await other.context().close();
  });

  test("a file that is not a list of books is told in plain words", async () => {
    const running = await fresh();
    const file = join(dir, "notes.json");
    writeFileSync(file, '{"title": "Dune", "author": "Frank Herbert", "year": 1965}');
    const page = await open(running);
    await page.locator(".empty").getByRole("button", { name: "Import a file" }).click();
    const dialog = page.getByRole("dialog", { name: "Import a file" });
    await dialog.locator('input[type="file"]').setInputFiles(file);
    await dialog.getByRole("alert").getByText("“notes.json” is not a list of books").waitFor();
    await page.context().close();
  });

  test("export the catalogue, then import it into an empty one: the same books in the same order", async () => {
    const source = await fresh();
    for (const [i, title] of ["Zazie dans le métro", "Émile", "Candide", "Dune"].entries()) {
      await source.api("POST", "/book", { title, author: `Author ${i}`, year: 1750 + i * 60 });
    }
    await source.api("POST", "/book", { title: "Dune", author: "Author 3", year: 1930 });
    const page = await open(source);
    await page.locator("#book-count").getByText("5 books", { exact: true }).waitFor();
    const saved: Record<string, string> = {};
    for (const format of ["JSON", "CSV"]) {
      const download = page.waitForEvent("download");
      await page.getByRole("button", { name: `Export ${format}` }).click();
      const file = await download;
      const path = join(dir, file.suggestedFilename());
      await file.saveAs(path);
      saved[format] = path;
    }
    await page.getByRole("status").getByText("Exported 5 books to catalogue.csv.").waitFor();
    const exported = JSON.parse(readFileSync(saved.JSON as string, "utf8")) as Book[];
    const books = await source.api<Book[]>("GET", "/books");
    assert.deepEqual(exported, books);
    assert.equal(
      readFileSync(saved.CSV as string, "utf8").split("\n")[0],
      "\uFEFFid,title,author,year",
    );

    for (const format of ["JSON", "CSV"]) {
      const target = await fresh();
      const other = await open(target);
      await other.locator(".empty").getByRole("button", { name: "Import a file" }).click();
      const dialog = other.getByRole("dialog", { name: "Import a file" });
      await dialog.locator('input[type="file"]').setInputFiles(saved[format] as string);
      // The catalogue holds one book twice: the file's second row of it is a duplicate,
      // imported when the librarian asks for the duplicates too.
      await dialog.getByRole("button", { name: "Import 4 books" }).waitFor();
      assert.deepEqual(await dialog.locator(".preview-counts li").allInnerTexts(), [
        "4 new",
        "1 already in the catalogue or the file (same title, author and year)",
      ]);
      await dialog.getByLabel("Import the duplicates too").check();
      await dialog.getByRole("button", { name: "Import 5 books" }).click();
      await dialog.getByText(/^Imported 5 books from/).waitFor();
      assert.deepEqual(fields(await target.api<Book[]>("GET", "/books")), fields(books), format);
      await other.context().close();
    }

    // A search exports only its books.
    await page.getByRole("searchbox").fill("dune");
    await page.locator("#book-count").getByText("2 books match “dune”", { exact: true }).waitFor();
    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Export JSON" }).click();
    const searchFile = join(dir, "search.json");
    await (await download).saveAs(searchFile);
    assert.deepEqual(
      JSON.parse(readFileSync(searchFile, "utf8")),
      books.filter((b) => b.title === "Dune"),
    );
    await page.context().close();
  });

  test("search, sort and page live in the address: reload, Back and a shared link keep them", async () => {
    const running = await fresh();
    for (let i = 1; i <= 30; i++) {
      await running.api("POST", "/book", {
        title: `${i % 2 ? "Tales" : "Poems"} ${String(i).padStart(2, "0")}`,
        author: "Writer",
        year: 1900 + i,
      });
    }
    const page = await open(running);
    const status = page.locator("#page-status");
    await status.getByText("Page 1 of 2: books 1 to 20.").waitFor();
    await page.getByRole("searchbox").fill("tales");
    await status.getByText("Page 1 of 1: books 1 to 15.").waitFor();
    await page.waitForURL(/\?q=tales$/);
    await page.getByRole("button", { name: /^Year/ }).click();
    await page.waitForURL(/\?q=tales&sort=year$/);
    await page.getByRole("button", { name: /^Year/ }).click();
    await page.waitForURL(/\?q=tales&sort=-year$/);
    await page.locator("th.col-year[aria-sort=descending]").waitFor();
    // The header turns at the click; the rows once the sorted page has come. (Not a string
    // for waitForFunction: its polling evaluates it, which the page's CSP forbids.)
    await page.locator("tbody tr:first-child td.col-year", { hasText: /^1929$/ }).waitFor();
    // Screen readers hear the order in the year's own words.
    assert.equal(
      await page.locator("th.col-year .visually-hidden").innerText(),
      ", sorted newest first; sort oldest first",
    );
    const firstYears = await page.locator("tbody td.col-year").allInnerTexts();
    assert.deepEqual(firstYears.slice(0, 2), ["1929", "1927"]);

    await page.reload();
    await status.getByText("Page 1 of 1: books 1 to 15.").waitFor();
    assert.equal(await page.getByRole("searchbox").inputValue(), "tales");
    assert.deepEqual(await page.locator("tbody td.col-year").allInnerTexts(), firstYears);

    await page.goBack();
    await page.waitForURL(/\?q=tales&sort=year$/);
    await page.locator("th.col-year[aria-sort=ascending]").waitFor();
    await page.goBack();
    await page.goBack();
    await page.waitForURL(/\/$/);
    await status.getByText("Page 1 of 2: books 1 to 20.").waitFor();
    assert.equal(await page.getByRole("searchbox").inputValue(), "");
    await page.goForward();
    await status.getByText("Page 1 of 1: books 1 to 15.").waitFor();

    // A page further on, in a link of its own: a new tab opens on the same books.
    await page.goto(`${running.base}/?sort=-year`);
    await status.getByText("Page 1 of 2: books 1 to 20.").waitFor();
    await page.getByRole("button", { name: "Next" }).first().click();
    await status.getByText("Page 2 of 2: books 21 to 30.").waitFor();
    const shared = page.url();
    assert.match(shared, /\?sort=-year&after=\d+&after_key=1911$/);
    const secondPage = await page.locator("tbody td.col-year").allInnerTexts();
    const other = await open(running);
    await other.goto(shared);
    await other.locator("tbody td.col-year").first().waitFor();
    assert.deepEqual(await other.locator("tbody td.col-year").allInnerTexts(), secondPage);
    await page.goBack();
    await status.getByText("Page 1 of 2: books 1 to 20.").waitFor();
    await page.context().close();
    await other.context().close();
  });

  test("dark mode follows the system; long titles show whole on hover", async () => {
    const running = await fresh();
    const long = `The ${"very ".repeat(30)}long title`;
    await running.api("POST", "/book", { title: long, author: "Writer", year: 2001 });
    await running.api("POST", "/book", { title: "Dune", author: "Frank Herbert", year: 1965 });
    const page = await open(running, DESKTOP, "dark");
    await page.locator("#book-count").getByText("2 books", { exact: true }).waitFor();
    const background = await page.evaluate(
      "getComputedStyle(document.documentElement).backgroundColor",
    );
    assert.equal(background, "rgb(20, 24, 28)");
    assert.equal(
      await page.getByRole("cell", { name: long, exact: true }).getAttribute("title"),
      long,
    );
    await screenshot(page, "catalogue-dark.png");
    await page.context().close();
  });
});
