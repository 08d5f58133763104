// How each word of a search matches, as a person is told when it finds nothing: anywhere
// inside in the scripts written without spaces, else the start of a word, and a single letter
// or digit as a whole word; the same reading as the terms the stores look for.
import assert from "node:assert/strict";
import { test } from "node:test";
import { howWordsMatch, searchTerms } from "../../src/rules/search.js";

test("words of Han, Hiragana, Katakana, Hangul and Thai match anywhere inside", () => {
  for (const word of ["春樹", "森", "ひらがな", "カフカ", "주의", "ไทย"]) {
    assert.deepEqual(howWordsMatch(word), [{ word, match: "inside" }], word);
  }
  // A word with letters of another script is looked for from its start.
  assert.deepEqual(howWordsMatch("ＡＢＣ漢"), [{ word: "ＡＢＣ漢", match: "start" }]);
});

test("other words match at their start, a single letter or digit as a whole word", () => {
  assert.deepEqual(howWordsMatch("Tolk, k! 7 garcía"), [
    { word: "Tolk", match: "start" },
    { word: "k", match: "whole" },
    { word: "7", match: "whole" },
    { word: "garcía", match: "start" },
  ]);
  assert.deepEqual(howWordsMatch("murakami 春樹"), [
    { word: "murakami", match: "start" },
    { word: "春樹", match: "inside" },
  ]);
  assert.deepEqual(howWordsMatch(" * ?! "), []);
});

test("as the terms read it: a single letter is no prefix, a word of 春樹 is found inside", () => {
  assert.deepEqual(searchTerms("k"), [{ word: "k", prefix: false }]);
  assert.deepEqual(searchTerms("春樹"), [{ word: "春樹", prefix: true }]);
});
