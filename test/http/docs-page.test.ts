// The interactive docs page at /docs, in a real headless Chromium: it renders from the
// package's own files, and a reader gets a token, authorizes and tries a route.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { App } from "../../src/http/app.js";
import { Messages } from "../../src/http/envelope.js";
import { browserSkipReason, launchChromium } from "../support/browser.js";
import { describe } from "../support/describe.js";
import {
  buildTestApp,
  call,
  listenLocally,
  TEST_PASSWORD,
  TEST_USERNAME,
  tokenFor,
} from "../support/helpers.js";

const skip = browserSkipReason();

describe("the docs page in Chromium", { skip }, () => {
  let app: App;
  let browser: Browser;
  let page: Page;
  let base: string;
  const otherHosts: string[] = [];
  const cspViolations: string[] = [];
  const fetched: string[] = [];

  before(async () => {
    app = await buildTestApp();
    base = await listenLocally(app);
    const token = await tokenFor(app);
    await call(app, "POST", "/book", {
      token,
      body: { title: "The Name of the Rose", author: "Umberto Eco", year: 1980 },
    });
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    page.on("request", (request) => {
      if (!request.url().startsWith(base) && !request.url().startsWith("data:")) {
        otherHosts.push(request.url());
      }
      fetched.push(request.url().slice(base.length));
    });
    await page.goto(`${base}/docs`);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  /** The operation's block, opened. */
  async function tryOut(method: string, path: string) {
    const block = page.locator(`.opblock-${method}`, {
      has: page.locator(`.opblock-summary-path[data-path="${path}"]`),
    });
    await block.locator(".opblock-summary-control").click();
    // The page opens every operation ready to try (tryItOutEnabled): Execute is there at once.
    await block.getByRole("button", { name: "Execute" }).waitFor();
    return block;
  }

  /** Executes the opened operation and returns the live answer's code and body. */
  async function execute(block: ReturnType<Page["locator"]>) {
    await block.getByRole("button", { name: "Execute" }).click();
    const live = block.locator(".live-responses-table .response").first();
    await live.waitFor();
    const code = (await live.locator(".response-col_status").innerText()).trim();
    const body = await live.locator(".response-col_description pre").first().innerText();
    return { code, body: JSON.parse(body) as { status: number; message: string; data: unknown } };
  }

  test("renders every route from /openapi.json, with no request to another host", async () => {
    await page.locator(".opblock").first().waitFor();
    const paths = await page
      .locator(".opblock-summary-path")
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-path")));
    for (const path of ["/token", "/books", "/book", "/book/{id}", "/health", "/ready"]) {
      assert.ok(paths.includes(path), `${path} is on the page`);
    }
    assert.match(await page.locator(".info .title").innerText(), /Book Catalogue Service/);
    assert.deepEqual(otherHosts, []);
  });

  test("is the project's page: its title, no third party's bar or logo, one document, a link home", async () => {
    assert.equal(await page.title(), "Book Catalogue Service: API");
    assert.equal(await page.locator(".topbar").isVisible(), false);
    assert.equal(await page.locator("img:visible").count(), 0, "no logo");
    assert.ok(fetched.includes("/openapi.json"), fetched.join(" "));
    assert.ok(!fetched.some((path) => /^\/docs\/(json|yaml)/.test(path)), fetched.join(" "));
    const home = page.locator(".info .description a", { hasText: "The librarian's page" });
    assert.equal(await home.getAttribute("href"), "/");
  });

  test("try it: a token from POST /token, Authorize, then GET /books lists the catalogue", async () => {
    const tokenBlock = await tryOut("post", "/token");
    await tokenBlock
      .locator("textarea.body-param__text")
      .fill(JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD }));
    const login = await execute(tokenBlock);
    assert.equal(login.code, "200");
    const token = (login.body.data as { token: string }).token;
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);

    await page.locator(".auth-wrapper .authorize").click();
    const dialog = page.locator(".dialog-ux");
    await dialog.locator("input").fill(token);
    await dialog.locator("button.modal-btn.authorize").click();
    await dialog.locator("button.modal-btn.btn-done").click();

    const listing = await execute(await tryOut("get", "/books"));
    assert.equal(listing.code, "200");
    assert.deepEqual(listing.body, {
      status: 200,
      message: Messages.booksRetrieved,
      data: [{ id: 1, title: "The Name of the Rose", author: "Umberto Eco", year: 1980 }],
    });
  });

  test("the token is kept in no storage, and the page broke no rule of its CSP", async () => {
    const stored = (await page.evaluate(
      "JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.cookie])",
    )) as string;
    assert.doesNotMatch(stored, /eyJ/);
    assert.deepEqual(cspViolations, []);
  });

  test("another site cannot frame /docs", async () => {
    const framing = await browser.newPage();
    try {
      // about:blank is another origin than the service's.
      await framing.setContent(`<iframe src="${base}/docs"></iframe>`);
      const frame = framing.frames()[1];
      await framing.waitForTimeout(500);
      assert.ok(frame, "the frame exists");
      assert.equal(await frame.locator(".swagger-ui").count(), 0, "the docs rendered in a frame");
    } finally {
      await framing.close();
    }
  });

  test("on a phone the page is laid out to its width, its text readable", async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    try {
      const small = await phone.newPage();
      await small.goto(`${base}/docs`);
      await small.locator(".opblock-summary-path").first().waitFor();
      // Without a viewport of its own, a phone lays a page out 980 px wide and shrinks it.
      assert.equal(await small.evaluate("document.documentElement.clientWidth"), 390);
    } finally {
      await phone.close();
    }
  });

  test("try it without a token shows the service's 401", async () => {
    // A reload forgets the token pasted under Authorize: it was kept in the page only.
    await page.goto(`${base}/docs`);
    const { code, body } = await execute(
      await tryOut("get", "/book/{id}").then(async (block) => {
        await block.locator('input[placeholder="id"]').fill("1");
        return block;
      }),
    );
    assert.equal(code, "401");
    assert.deepEqual(body, { status: 401, message: Messages.tokenRequired, data: null });
  });
});

describe("the docs page with the development credentials", { skip }, () => {
  test("Execute on POST /token as the page fills it in gets a token", async () => {
    const app = await buildTestApp({ env: { AUTH_USERNAME: "", AUTH_PASSWORD: "" } });
    const base = await listenLocally(app);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${base}/docs`);
      const block = page.locator(".opblock-post", {
        has: page.locator('.opblock-summary-path[data-path="/token"]'),
      });
      await block.locator(".opblock-summary-control").click();
      const body = block.locator("textarea.body-param__text");
      await body.waitFor();
      assert.deepEqual(JSON.parse(await body.inputValue()), {
        username: "admin",
        password: "password",
      });
      await block.getByRole("button", { name: "Execute" }).click();
      const live = block.locator(".live-responses-table .response").first();
      await live.waitFor();
      assert.equal((await live.locator(".response-col_status").innerText()).trim(), "200");
    } finally {
      await browser.close();
      await app.close();
    }
  });
});
