// Account passwords: scrypt from node:crypto, run in libuv's thread pool (the async function),
// never on the event loop. The parameters are OWASP's minimum for scrypt (Password Storage
// Cheat Sheet: N=2^17, r=8, p=1); what one hash costs here: docs/security.md. Each hash is kept
// as a PHC string, `$scrypt$ln=17,r=8,p=1$<salt>$<key>`, so the parameters can change later
// and an older hash still verifies with its own.
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

export interface ScryptCost {
  /** log2 of N, the CPU and memory cost. */
  ln: number;
  r: number;
  p: number;
}

export const PASSWORD_COST: ScryptCost = { ln: 17, r: 8, p: 1 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;
// Bounds on what a stored hash may ask for, so a row changed by hand cannot stall the service.
const MAX_LN = 20;
const MAX_RP = 32;
const PHC = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const N = 2 ** cost.ln;
  // scrypt needs 128·N·r bytes; the default bound (32 MiB) is below OWASP's parameters.
  const maxmem = 2 * 128 * N * cost.r;
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_BYTES, { N, r: cost.r, p: cost.p, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

const b64 = (bytes: Buffer) => bytes.toString("base64").replace(/=+$/, "");

export async function hashPassword(password: string, cost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, cost);
  return `$scrypt$ln=${cost.ln},r=${cost.r},p=${cost.p}$${b64(salt)}$${b64(key)}`;
}

function parse(encoded: string): { cost: ScryptCost; salt: Buffer; key: Buffer } | undefined {
  const match = PHC.exec(encoded);
  if (match === null) return undefined;
  const [ln, r, p] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
  if (ln < 1 || ln > MAX_LN || r < 1 || r > MAX_RP || p < 1 || p > MAX_RP) return undefined;
  const key = Buffer.from(match[5] as string, "base64");
  if (key.length !== KEY_BYTES) return undefined;
  return { cost: { ln, r, p }, salt: Buffer.from(match[4] as string, "base64"), key };
}

/**
 * Whether `password` is the one `encoded` was made from, compared in constant time. Without a
 * hash (no such account), or with one that cannot be read, `dummy` is checked instead, so that
 * the answer takes as long, and is false.
 */
async function verifyAgainst(password: string, encoded: string | undefined, dummy: string) {
  const parsed = parse(encoded ?? "");
  const used = parsed ?? (parse(dummy) as NonNullable<typeof parsed>);
  const key = await derive(password, used.salt, used.cost);
  return timingSafeEqual(key, used.key) && parsed !== undefined;
}

/** Hashing and checking passwords at one cost: what the app is built with. */
export interface Passwords {
  hash(password: string): Promise<string>;
  verify(password: string, encoded?: string): Promise<boolean>;
}

/**
 * Passwords hashed at `cost`, an unknown name checked at it too. The service uses
 * PASSWORD_COST; tests that log in hundreds of times build their app with a cheaper one.
 */
export function passwordsAt(cost: ScryptCost): Passwords {
  // What a login without an account is checked against: a random salt and key at `cost`. No
  // password derives that key, and checking it costs what checking a real one does.
  const dummy = `$scrypt$ln=${cost.ln},r=${cost.r},p=${cost.p}$${b64(randomBytes(SALT_BYTES))}$${b64(randomBytes(KEY_BYTES))}`;
  return {
    hash: (password) => hashPassword(password, cost),
    verify: (password, encoded) => verifyAgainst(password, encoded, dummy),
  };
}
