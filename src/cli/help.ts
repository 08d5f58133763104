// What `book-catalogue --help` and each command's --help print.
export const HELP = {
  main: `Usage: book-catalogue <command> [options]

Commands:
  serve                 Serve the catalogue, as npm start does (settings: docs/configuration.md)
  token                 Print a token, for scripts
  import FILE           Add books from a JSON array or a CSV file (a Goodreads export works)
  export [-o FILE]      Write the whole catalogue to standard output, or to FILE
  backup FILE           Write a consistent snapshot of the catalogue and its accounts
  backup --check FILE   Prove that FILE is a complete, intact backup
  restore FILE          Put a backup's books, with their ids, into an empty catalogue
  accounts …            List, add, change, disable or remove accounts (administrators)
  changes --since N     Print the change log after N, one JSON line an entry; --follow: live

Options for backup and restore:
  --db URL              The catalogue (default: DB_URL of the environment or .env, else
                        sqlite:./data/books.db)

Options for token, import, export, accounts and changes:
  --url URL             The service (default: BOOK_CATALOGUE_URL or http://localhost:8080)
  --username NAME       Default: AUTH_USERNAME or admin
  --password PASSWORD   Default: AUTH_PASSWORD or password

book-catalogue <command> --help tells more; book-catalogue --version prints the version.`,
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

Rows that cannot be imported are reported with the line they start on, their title and
why. In CSV, one leading ' before =, +, -, @, tab or carriage return (as export writes it)
is removed: export then import gives the same books.
Exit code: 0 when every row was imported or skipped as a duplicate; 1 when some row was
refused; 2 when the file cannot be used at all (unreadable, not a list of books, a
column missing) or the command is wrong.

  --dry-run             Check every row and count the duplicates, send nothing
  --duplicates keep     Import duplicates too (default: skip)
  --concurrency N       Requests at once (default 1, which keeps the file's order)`,
  export: `Usage: book-catalogue export [--format json|csv] [--no-bom] [-o FILE] [connection options]

Writes every book, in id order, to standard output or FILE: a JSON array (default) or CSV
with the header id,title,author,year. Nothing is written until the service has answered,
so when it is down or refuses the password, standard output stays empty (exit 1).

CSV starts with a UTF-8 byte-order mark, so that Excel reads accents and other scripts
right. A title or author that a spreadsheet would run as a formula (starting with =, +, -,
@, tab or carriage return, after any single quotes) gets one more leading single quote,
which import removes: export then import gives the same books. JSON is written as it is.

  --format json|csv     Default: json
  --no-bom              CSV without the byte-order mark, for tools that dislike it
  -o, --output FILE     Write to FILE, replaced only once the whole export has succeeded:
                        on a failure FILE stays as it was. Prefer it to "> FILE", which
                        empties FILE before the export even starts.

A reader that stops early (export | head) ends the export quietly, with exit status 0.`,
  backup: `Usage: book-catalogue backup FILE [--db URL]
       book-catalogue backup --check FILE

Writes one consistent snapshot of the whole catalogue to FILE, every book with its id and
every account with its password's hash (keep FILE private), while the service goes on serving: every write that finished before the backup began is in it.
It reads the store itself (DB_URL, as the service does, or --db), whether or not the service
runs. FILE appears only when complete: a backup that fails leaves no FILE behind.

  --check               Read FILE through and verify every account and book, the counts
                        and the checksum, and print them; write nothing (exit 1 when it
                        is not a usable backup)

The format, and how to schedule backups: docs/operations.md.`,
  restore: `Usage: book-catalogue restore FILE [--replace] [--db URL]

Checks the whole of FILE, then writes its books and accounts with their ids into the
catalogue (DB_URL, or --db) in one transaction: a failure leaves the catalogue as it was.
Every token issued before the restore to the accounts it restores ends. A backup of format 1
(before accounts) leaves the catalogue's accounts as they are. Later books get ids
above every id the backed-up catalogue ever gave. Either store restores a backup of either
(the way to move a catalogue to PostgreSQL). Stop the service first: its writes wait.

  --replace             Replace the books and accounts the catalogue holds (else it
                        must hold none)`,
  accounts: `Usage: book-catalogue accounts list [connection options]
       book-catalogue accounts add NAME --role ROLE
       book-catalogue accounts role NAME ROLE
       book-catalogue accounts password NAME
       book-catalogue accounts disable NAME | enable NAME | remove NAME

Manages the service's accounts through its API, signed in as an administrator (the built-in
pair, AUTH_USERNAME, or an admin account). ROLE is reader, librarian or admin. Never prints
a password or its hash.

add and password read the new password (at least 12 characters) from a prompt that does not
echo it, asked twice, on a terminal; else from the first line of standard input:
  printf '%s\n' "$NEW_PASSWORD" | book-catalogue accounts password alice
Never from the command line, where other users of the machine can read it.

password (a reset) and disable end the account's tokens at once; remove ends them too.
Exit code: 0 done; 1 the service refused (a name taken, no account of that name, not an
administrator) or could not be reached; 2 the command is wrong (a role that is not one),
or the password is too short or was not given.`,
  changes: `Usage: book-catalogue changes --since N [--follow] [--limit M] [connection options]

Prints the entries of the change log after the sequence N, in order, one JSON object a
line: {seq, op, id, book, before, at, by}, op being create, update, delete or restore.
--since 0 prints every entry from the first (refused once the log has been trimmed); the
last line's seq is where to go on from next time.
Without --follow it prints them page by page to the end of the log and exits.

  --follow              Then print each entry as it is committed, until Ctrl-C (exit 130);
                        the stream is opened again when it ends (its token expires every
                        15 minutes) or the connection fails, and no entry is lost or repeated
  --limit M             Entries a request asks for, 1 to 1000 (default 100)

Exit code: 0 done (a reader that stops early, changes | head, too); 1 the service refused
or could not be reached, among them 410 when the entries after N are no longer kept: the
message names the oldest kept and the N to go on from once the catalogue is read again
(export); 2 the command is wrong.`,
} as const;
