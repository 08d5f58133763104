import { createSigner, createVerifier } from "fast-jwt";

export const TOKEN_LIFETIME_SECONDS = 900;
export const MAX_TOKEN_LENGTH = 8 * 1024;
const HMAC_ALGORITHMS = ["HS256", "HS384", "HS512"] as const;
/** Verified tokens remembered until their `exp`; past this many, the oldest is forgotten. */
export const VERIFIED_CACHE_SIZE = 10_000;

/** What a token that passed every check says. */
export interface VerifiedToken {
  /** When it expires, in ms. */
  expiresAt: number;
  /** The account its header's `kid` names; undefined for the built-in pair's. */
  account?: number;
}

export interface TokenService {
  /**
   * A signed HS256 token whose only claim is `exp` = now + 900 s; an account's names it in
   * the header's `kid`, under the signature.
   */
  issue(account?: number): string;
  /** What the token says, only for one that every rule of decisions.md accepts; else false. */
  verify(token: string): VerifiedToken | false;
}

// An account's id in a `kid`: written plainly, a safe integer.
const KID = /^[1-9][0-9]{0,15}$/;

/** The account a header's `kid` names; null when it names none that can exist. */
function accountOf(header: Record<string, unknown>): number | undefined | null {
  const { kid } = header;
  if (kid === undefined) return undefined;
  if (typeof kid !== "string" || !KID.test(kid) || !Number.isSafeInteger(Number(kid))) return null;
  return Number(kid);
}

// Three non-empty segments of the base64url alphabet, without padding.
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
// The last character of a canonical base64url segment leaves its unused low bits zero.
const LAST_OF_TWO = /[AQgw]$/;
const LAST_OF_THREE = /[AEIMQUYcgkosw048]$/;

/** Strict base64url: one encoding per byte string, so no two spellings verify alike. */
function isCanonicalSegment(segment: string): boolean {
  switch (segment.length % 4) {
    case 0:
      return true;
    case 2:
      return LAST_OF_TWO.test(segment);
    case 3:
      return LAST_OF_THREE.test(segment);
    default:
      return false;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * fast-jwt pinned to the HMAC family checks the signature, `alg`, `exp` and `nbf`; the checks
 * it lacks (strict base64url, size, any `crit`, a finite numeric `exp` strictly in the future)
 * are done here. A token that passed them all is remembered until its `exp`.
 */
export function createTokenService(secret: string): TokenService {
  const signer = (kid?: string) =>
    createSigner({ key: secret, algorithm: "HS256", noTimestamp: true, ...(kid ? { kid } : {}) });
  const sign = signer();
  const check = createVerifier({
    key: secret,
    algorithms: [...HMAC_ALGORITHMS],
    requiredClaims: ["exp"],
    // The cache below replaces fast-jwt's, whose key is a SHA-256 of the token: on the hot
    // path a Map keyed by the token costs a small part of that (docs/performance.md).
    cache: false,
    complete: true,
  });
  // Only tokens this service signed get in, so keys stay small (about 150 bytes).
  const verified = new Map<string, VerifiedToken>();

  return {
    issue: (account) => {
      const claims = { exp: Math.floor(Date.now() / 1000) + TOKEN_LIFETIME_SECONDS };
      return account === undefined ? sign(claims) : signer(String(account))(claims);
    },
    verify(token) {
      const known = verified.get(token);
      if (known !== undefined) {
        if (known.expiresAt > Date.now()) return known;
        verified.delete(token);
        return false;
      }
      if (token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) return false;
      if (!token.split(".").every(isCanonicalSegment)) return false;
      let decoded: { header: unknown; payload: unknown };
      try {
        decoded = check(token);
      } catch {
        return false;
      }
      const { header, payload } = decoded;
      if (!isObject(header) || !isObject(payload) || "crit" in header) return false;
      const nowSeconds = Date.now() / 1000;
      const { exp, nbf } = payload;
      if (typeof exp !== "number" || !Number.isFinite(exp) || exp <= nowSeconds) return false;
      if (nbf !== undefined && (typeof nbf !== "number" || !(nbf <= nowSeconds))) return false;
      const account = accountOf(header);
      if (account === null) return false;
      if (verified.size >= VERIFIED_CACHE_SIZE)
        verified.delete(verified.keys().next().value as string);
      const result =
        account === undefined ? { expiresAt: exp * 1000 } : { expiresAt: exp * 1000, account };
      verified.set(token, result);
      return result;
    },
  };
}
