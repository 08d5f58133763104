// The roles in words, and what each lets the page offer.
import type { Role } from "book-catalogue";

export const ROLES: readonly Role[] = ["reader", "librarian", "admin"];

export const ROLE_NAMES: Record<Role, string> = {
  reader: "Reader",
  librarian: "Librarian",
  admin: "Administrator",
};

export const ROLE_ALLOWS: Record<Role, string> = {
  reader: "Finds, reads and exports books.",
  librarian: "Also adds, edits, deletes and imports books.",
  admin: "Also manages accounts.",
};

/** Whether the role may add, edit, delete and import books. */
export const editsBooks = (role: Role) => role !== "reader";
