// Book titles within the rules whose words fold to long ones: each store must keep and find
// them alike.

/** Titles within the rules (500 characters at most) whose words fold to long ones. */
export const LONG_WORD_TITLES = {
  // 400 Hangul syllables, no space.
  hangul: Array.from({ length: 400 }, (_, i) =>
    String.fromCodePoint(0xac00 + ((i * 37) % 11172)),
  ).join(""),
  // 400 kana with their voicing marks.
  voiced: Array.from(
    { length: 400 },
    (_, i) => "ガギグゲゴザジズゼゾダヂヅデドバビブベボがぎぐげご"[i % 25],
  ).join(""),
  // ㌕ is キログラム: 2,500 characters once decomposed.
  squared: "\u3315".repeat(500),
  // One word of Latin and katakana: 2,496 characters, 7,486 bytes.
  mixed: `x${"\u3315".repeat(499)}`,
  // ﷲ is الله: 2,000 letters, 4,000 bytes, one word.
  ligature: "\ufdf2".repeat(500),
  // क़ keeps its nukta apart once decomposed: 1,000 characters, 3,000 bytes.
  nukta: "\u0958".repeat(500),
} as const;
