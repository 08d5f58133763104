// The roles in words, and what each lets the page offer.
import type { Role } from "book-catalogue";

export const ROLE_NAMES: Record<Role, string> = {
  reader: "Reader",
  librarian: "Librarian",
  admin: "Administrator",
};

/** Whether the role may add, edit, delete and import books. */
export const editsBooks = (role: Role) => role !== "reader";
