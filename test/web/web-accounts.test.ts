// Accounts on the librarian's page, in a real headless Chromium: an administrator adds a
// librarian; the librarian sees their name, cannot open Accounts, and changes their password; a
// reader is offered nothing that writes; an administrator manages an account. Under
// SCREENSHOTS=1 it writes the Accounts screen and the password dialog to docs/screenshots/.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { BrowserContextOptions, Page } from "playwright-core";
import type { Account } from "../../src/client/client.js";
import {
  browserSkipReason,
  openPageService,
  type PageService,
  screenshot,
  signIn,
} from "../support/browser.js";
import { describe } from "../support/describe.js";
import { call, TEST_USERNAME } from "../support/helpers.js";
import { brokenHeaderLines, overflowing } from "../support/layout.js";

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

describe("accounts on the librarian's page, in Chromium", { skip: browserSkipReason() }, () => {
  let served: PageService;
  /** A call to the service's API, as the built-in administrator. */
  const api = <T>(method: string, url: string, body?: unknown) =>
    call<T>(served.app, method, url, {
      token: served.token,
      ...(body === undefined ? {} : { body }),
    });

  before(async () => {
    served = await openPageService();
    await api("POST", "/book", {
      title: "The Dispossessed",
      author: "Ursula K. Le Guin",
      year: 1974,
    });
  });
  after(() => served?.close());

  /** An account added through the API, as the built-in administrator. */
  async function addAccount(name: string, role: Account["role"], password: string) {
    const answer = await api<Account>("POST", "/accounts", { name, role, password });
    assert.equal(answer.status, 201, answer.raw);
    return answer.body.data as Account;
  }
  const accountNamed = async (name: string) =>
    (await api<Account[]>("GET", "/accounts")).body.data?.find((account) => account.name === name);

  /** The accounts the screenshots show, one of each role, one disabled, one of a long name. */
  async function screenAccounts() {
    if ((await accountNamed("marguerite")) !== undefined) return;
    if ((await accountNamed("ines")) === undefined) {
      await addAccount("ines", "librarian", "ines first password");
    }
    await addAccount("marguerite", "admin", "marguerite admin password");
    await addAccount("a very long name for a volunteer who helps", "reader", "x".repeat(12));
    const gone = await addAccount("sam", "reader", "sam left last year");
    await api("PATCH", `/accounts/${gone.id}`, { enabled: false });
  }

  /** A fresh tab at the page, signed in as `username` (the built-in administrator by default). */
  async function signedIn(
    username: string | undefined,
    password: string | undefined,
    options: BrowserContextOptions = { viewport: DESKTOP },
  ): Promise<Page> {
    const page = await (await served.browser.newContext(options)).newPage();
    await page.goto(served.base);
    await signIn(page, password, username);
    await page.getByRole("heading", { name: "Books" }).waitFor();
    return page;
  }

  test("an administrator adds a librarian from the Accounts screen", async () => {
    const page = await signedIn(undefined, undefined);
    const header = page.locator("header");
    await header.getByText(TEST_USERNAME, { exact: true }).waitFor();
    await header.getByText("Administrator", { exact: true }).waitFor();
    // The built-in pair's password is the operator's: not changed from the page.
    assert.equal(await header.getByRole("button", { name: "Change my password" }).count(), 0);
    await header.getByRole("link", { name: "Accounts" }).click();
    await page.getByRole("heading", { name: "Accounts" }).waitFor();
    await page.getByText("You are signed in as the built-in administrator").waitFor();

    await page.getByRole("button", { name: "Add an account" }).click();
    const dialog = page.getByRole("dialog", { name: "Add an account" });
    assert.equal(await page.evaluate("document.activeElement?.id"), "account-name");
    await dialog.getByRole("button", { name: "Add account" }).click();
    await dialog.getByText("Type a name.").waitFor();
    await dialog.getByLabel("Name").fill("ines");
    await dialog.getByRole("radio", { name: /^Librarian/ }).check();
    await dialog.getByLabel("Password", { exact: true }).fill("short");
    await dialog.getByRole("button", { name: "Add account" }).click();
    await dialog.getByText("The password needs at least 12 characters.").waitFor();
    assert.equal(await page.evaluate("document.activeElement?.id"), "account-password");
    await dialog.getByLabel("Password", { exact: true }).fill("ines first password");
    await dialog.getByLabel("Repeat the password").fill("ines first password");
    await dialog.getByRole("button", { name: "Add account" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.getByRole("status").getByText("Added ines, Librarian.").waitFor();
    const row = page.locator("tr", { has: page.getByText("ines", { exact: true }) });
    assert.deepEqual(await row.locator("td.col-role, td.col-state").allInnerTexts(), [
      "Librarian",
      "Enabled",
    ]);
    assert.equal((await accountNamed("ines"))?.role, "librarian");

    // A name taken: the service's reason beside the field.
    await page.getByRole("button", { name: "Add an account" }).click();
    await dialog.getByLabel("Name").fill("ines");
    await dialog.getByLabel("Password", { exact: true }).fill("another password");
    await dialog.getByLabel("Repeat the password").fill("another password");
    await dialog.getByRole("button", { name: "Add account" }).click();
    await dialog.getByText("The service refused it: taken by another account.").waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    await page.context().close();
  });

  test("the librarian sees their name, not Accounts, and changes their password", async () => {
    if ((await accountNamed("ines")) === undefined) {
      await addAccount("ines", "librarian", "ines first password");
    }
    const page = await signedIn("ines", "ines first password");
    const header = page.locator("header");
    await header.getByText("ines", { exact: true }).waitFor();
    await header.getByText("Librarian", { exact: true }).waitFor();
    assert.equal(await header.getByRole("link", { name: "Accounts" }).count(), 0);
    await page.getByRole("button", { name: "Add a book" }).waitFor();
    // Reached by its address anyway: the service's 403, said plainly.
    await page.goto(`${served.base}/#accounts`);
    await page
      .getByRole("alert")
      .getByText("Only administrators can see and manage accounts")
      .waitFor();
    await page.getByRole("link", { name: "Back to the books" }).click();
    await page.getByRole("heading", { name: "Books" }).waitFor();

    const opener = header.getByRole("button", { name: "Change my password" });
    await opener.click();
    const dialog = page.getByRole("dialog", { name: "Change my password" });
    assert.equal(await page.evaluate("document.activeElement?.id"), "current-password");
    const change = async (current: string, password: string, repeated = password) => {
      await dialog.getByLabel("Current password").fill(current);
      await dialog.getByLabel("New password", { exact: true }).fill(password);
      await dialog.getByLabel("Repeat the new password").fill(repeated);
      await dialog.getByRole("button", { name: "Change password" }).click();
    };
    await change("ines first password", "too short");
    await dialog.getByText("The password needs at least 12 characters.").waitFor();
    await change("ines first password", "ines second password", "ines 2nd password");
    await dialog.getByText("The two passwords are not the same.").waitFor();
    assert.equal(await page.evaluate("document.activeElement?.id"), "new-password-again");
    await change("not my password at all", "ines second password");
    await dialog.getByText("The service refused it: not the account's password.").waitFor();
    assert.equal(await page.evaluate("document.activeElement?.id"), "current-password");
    await change("ines first password", "ines second password");
    await dialog.waitFor({ state: "detached" });
    await page.getByRole("status").getByText("Your password has been changed.").waitFor();
    // Signed in again with the new password: the catalogue goes on, the focus back on the button.
    assert.equal(await page.evaluate("document.activeElement?.textContent"), "Change my password");
    await page.getByRole("button", { name: "Add a book" }).waitFor();

    await header.getByRole("button", { name: "Sign out" }).click();
    await signIn(page, "ines first password", "ines");
    await page.getByRole("alert").getByText("The username or password is wrong.").waitFor();
    await signIn(page, "ines second password", "ines");
    await header.getByText("ines", { exact: true }).waitFor();
    await page.getByRole("heading", { name: "Books" }).waitFor();
    await page.context().close();
  });

  test("a reader sees no Add, Edit, Delete or Import; History, yes", async () => {
    await addAccount("rosa", "reader", "rosa reads all day");
    const page = await signedIn("rosa", "rosa reads all day");
    await page.locator("header").getByText("Reader", { exact: true }).waitFor();
    await page.getByRole("cell", { name: "The Dispossessed", exact: true }).waitFor();
    for (const name of [/Add/, /Edit/, /Delete/, /Import/]) {
      assert.equal(await page.getByRole("button", { name }).count(), 0, `${name}`);
    }
    // A book's history only reads.
    await page.getByRole("button", { name: "History of “The Dispossessed”" }).waitFor();
    await page.getByRole("button", { name: "Export CSV" }).waitFor();
    assert.equal(await page.locator("header").getByRole("link", { name: "Accounts" }).count(), 0);
    await page.context().close();
  });

  test("an administrator changes a role, resets a password, disables and removes", async () => {
    const added = await addAccount("tomas", "reader", "tomas first password");
    const page = await signedIn(undefined, undefined);
    await page.goto(`${served.base}/#accounts`);
    const row = page.locator(`tr[data-account="${added.id}"]`);
    await row.getByRole("button", { name: "Change role: tomas" }).click();
    const roleDialog = page.getByRole("dialog", { name: "Change the role of tomas" });
    await roleDialog.getByRole("radio", { name: /^Librarian/ }).check();
    await roleDialog.getByRole("button", { name: "Change role" }).click();
    await page.getByRole("status").getByText("The role of tomas is now Librarian.").waitFor();
    assert.equal((await accountNamed("tomas"))?.role, "librarian");

    await row.getByRole("button", { name: "Reset password: tomas" }).click();
    const reset = page.getByRole("dialog", { name: "Reset the password of tomas" });
    await reset.getByLabel("New password", { exact: true }).fill("tomas second password");
    await reset.getByLabel("Repeat the new password").fill("tomas second password");
    await reset.getByRole("button", { name: "Reset password" }).click();
    await page.getByRole("status").getByText("Reset the password of tomas.").waitFor();
    const login = (password: string) =>
      call(served.app, "POST", "/token", { body: { username: "tomas", password } });
    assert.equal((await login("tomas second password")).status, 200);

    await row.getByRole("button", { name: "Disable: tomas" }).click();
    await row.getByRole("cell", { name: "Disabled" }).waitFor();
    assert.equal((await accountNamed("tomas"))?.enabled, false);
    await row.getByRole("button", { name: "Enable: tomas" }).click();
    await row.getByRole("cell", { name: "Enabled" }).waitFor();

    await row.getByRole("button", { name: "Remove: tomas" }).click();
    const remove = page.getByRole("dialog", { name: "Remove tomas?" });
    // Asked first, the focus on keeping it.
    assert.equal(await page.evaluate("document.activeElement?.textContent"), "Keep it");
    await remove.getByRole("button", { name: "Remove" }).click();
    await row.waitFor({ state: "detached" });
    assert.equal(await accountNamed("tomas"), undefined);
    await page.context().close();
  });

  for (const [size, viewport] of Object.entries({ desktop: DESKTOP, phone: PHONE })) {
    for (const colorScheme of ["light", "dark"] as const) {
      test(`nothing cut off: Accounts and the password dialog, ${size}, ${colorScheme}`, async () => {
        const suffix = `${size}${colorScheme === "dark" ? "-dark" : ""}`;
        await screenAccounts();
        const page = await signedIn("marguerite", "marguerite admin password", {
          viewport,
          colorScheme,
        });
        await page.locator("header").getByRole("link", { name: "Accounts" }).click();
        await page.getByRole("cell", { name: "marguerite (you)" }).waitFor();
        const problems = await overflowing(page);
        assert.deepEqual(await brokenHeaderLines(page), [], "header controls broken over lines");
        await screenshot(page, `accounts-${suffix}.png`, { fullPage: true });

        await page.getByRole("button", { name: "Change my password" }).click();
        const dialog = page.getByRole("dialog", { name: "Change my password" });
        await dialog.getByRole("button", { name: "Change password" }).click();
        await dialog.getByText("Type your current password.").waitFor();
        await dialog.getByLabel("Current password").fill("marguerite admin password");
        await dialog.getByLabel("New password", { exact: true }).fill("short");
        await dialog.getByRole("button", { name: "Change password" }).click();
        await dialog.getByText("The password needs at least 12 characters.").waitFor();
        problems.push(...(await overflowing(page)));
        await screenshot(page, `change-password-${suffix}.png`);
        const wide = await page.evaluate<number>("document.documentElement.scrollWidth");
        assert.ok(wide <= viewport.width, `no sideways scrolling (${wide} px)`);
        assert.deepEqual([...new Set(problems)], []);
        await page.context().close();
      });
    }
  }
});
