// What `book-catalogue --help` and each command's --help print.
export const HELP = {
  main: `Usage: book-catalogue <command> [options]

Commands:
  serve                 Serve the catalogue, as npm start does (settings: docs/configuration.md)
  token                 Print a token, for scripts
  import FILE           Add books from a JSON array or a CSV file (a Goodreads export works)
  export [-o FILE]      Write the whole catalogue to standard output, or to FILE

Options for token, import and export:
  --url URL             The service (default: BOOK_CATALOGUE_URL or http://localhost:8080)
  --username NAME       Default: AUTH_USERNAME or admin
  --password PASSWORD   Default: AUTH_PASSWORD or password

book-catalogue <command> --help tells more.`,
  serve:
    "Usage: book-catalogue serve\n\nServes the catalogue, configured from the environment and .env (see docs/configuration.md).",
  token:
    "Usage: book-catalogue token [--url URL] [--username NAME] [--password PASSWORD]\n\nPrints a token valid for 15 minutes.",
  import: `Usage: book-catalogue import FILE [--dry-run] [--duplicates skip|keep] [--concurrency N] [connection options]

Adds the books of FILE, in the file's order: a JSON array of {title, author, year}, or a
CSV file whose header names title, author and year (Goodreads: Title, Author, and Original
Publication Year or Year Published). Ids in the file are ignored.

A row whose title, author and year are those of a book already in the catalogue (case,
accents and punctuation aside) is a duplicate: skipped and counted, unless --duplicates keep.
So importing an export into the same catalogue adds nothing.

Rows that are not books are reported with their line in the file, their title and why.
Exit code: 0 when every row was imported or skipped as a duplicate; 1 when some row was
refused; 2 when the file cannot be used at all (unreadable, not a list of books, a
column missing) or the command is wrong.

  --dry-run             Check every row and count the duplicates, send nothing
  --duplicates keep     Import duplicates too (default: skip)
  --concurrency N       Requests at once (default 1, which keeps the file's order)`,
  export: `Usage: book-catalogue export [--format json|csv] [-o FILE] [connection options]

Writes every book, in id order, to standard output or FILE: a JSON array (default) or CSV
with the header id,title,author,year. Nothing is written until the service has answered,
so when it is down or refuses the password, standard output stays empty (exit 1).

  --format json|csv     Default: json
  -o, --output FILE     Write to FILE, replaced only once the whole export has succeeded:
                        on a failure FILE stays as it was. Prefer it to "> FILE", which
                        empties FILE before the export even starts.

A reader that stops early (export | head) ends the export quietly, with exit status 0.`,
} as const;
