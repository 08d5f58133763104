// The browser tests take the docs' screenshots, but write them to docs/screenshots/ only
// under SCREENSHOTS=1: a test run leaves the tracked ones, and the tree, as they were.
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { SCREENSHOTS_DIR, screenshot } from "../support/browser.js";
import { ROOT } from "../support/deploy.js";
import { describe } from "../support/describe.js";
import { withEnv } from "../support/env.js";

/** A page that only records what it was asked to screenshot. */
function recorder() {
  const asked: Record<string, unknown>[] = [];
  const page = {
    screenshot: async (options: Record<string, unknown>) => {
      asked.push(options);
      return Buffer.from("");
    },
  } as unknown as Page;
  return { page, asked };
}

describe("the docs' screenshots", () => {
  test("are taken but written nowhere unless SCREENSHOTS=1", async () => {
    for (const value of [undefined, "", "0"]) {
      const { page, asked } = recorder();
      await withEnv({ SCREENSHOTS: value }, () => screenshot(page, "x.png", { fullPage: true }));
      assert.deepEqual(asked, [{ fullPage: true }], `SCREENSHOTS=${value}`);
    }
  });

  test("under SCREENSHOTS=1, are written to docs/screenshots/", async () => {
    const { page, asked } = recorder();
    await withEnv({ SCREENSHOTS: "1" }, () => screenshot(page, "edit-phone.png"));
    assert.deepEqual(asked, [{ path: join(SCREENSHOTS_DIR, "edit-phone.png") }]);
    assert.equal(relative(ROOT, SCREENSHOTS_DIR), join("docs", "screenshots"));
  });
});
