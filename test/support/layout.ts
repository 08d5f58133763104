// What the browser tests check of the page's layout: no control's content cut off, and the
// header's links and buttons each on one line.
import type { Page } from "playwright-core";

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

/** The shown controls whose content does not fit their box, each described. */
export const overflowing = (page: Page) =>
  page.evaluate<string[]>(`(${FIND_OVERFLOWING})(${JSON.stringify(CONTROLS)})`);

/** The header's links and buttons whose text is broken over more than one line. */
export const brokenHeaderLines = (page: Page) =>
  page.evaluate<string[]>(`(${FIND_BROKEN_LINES})()`);

// Run in the page: the buttons of the table whose focus ring its cell would cut, each focused
// as a keyboard would (so that :focus-visible's ring is drawn), with how far out it reaches.
const FIND_CUT_RINGS = `() => {
  const found = [];
  for (const button of document.querySelectorAll("td button, th button")) {
    if (button.getClientRects().length === 0) continue;
    button.focus({ focusVisible: true });
    const style = getComputedStyle(button);
    const reach = parseFloat(style.outlineOffset) + parseFloat(style.outlineWidth);
    const ring = button.getBoundingClientRect();
    const cell = button.closest("td, th").getBoundingClientRect();
    const cut =
      ring.top - reach < cell.top - 0.5 || ring.bottom + reach > cell.bottom + 0.5 ||
      ring.left - reach < cell.left - 0.5 || ring.right + reach > cell.right + 0.5;
    if (cut && getComputedStyle(button.closest("td, th")).overflow !== "visible") {
      found.push((button.innerText || button.getAttribute("aria-label") || "").trim().slice(0, 40));
    }
  }
  document.activeElement?.blur();
  return found;
}`;

/** The table's buttons whose focus ring, drawn, would be cut by the cell around it. */
export const cutFocusRings = (page: Page) => page.evaluate<string[]>(`(${FIND_CUT_RINGS})()`);
