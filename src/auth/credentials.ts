import { createHash, timingSafeEqual } from "node:crypto";

export type CredentialCheck = (username: string, password: string) => boolean;

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/**
 * Checks the built-in pair in constant time: both sides are hashed to equal lengths and both
 * comparisons always run, so a wrong username and a wrong password take the same time.
 */
export function createCredentialCheck(username: string, password: string): CredentialCheck {
  const expectedUser = digest(username);
  const expectedPassword = digest(password);
  return (givenUser, givenPassword) => {
    const userOk = timingSafeEqual(digest(givenUser), expectedUser);
    const passwordOk = timingSafeEqual(digest(givenPassword), expectedPassword);
    return userOk && passwordOk;
  };
}

/** Whether a name is the built-in pair's, in constant time. */
export function createNameCheck(username: string): (name: string) => boolean {
  const expected = digest(username);
  return (name) => timingSafeEqual(digest(name), expected);
}
