// A postgres:// DB_URL as libpq reads it, with several hosts for a failover
// (postgres://h1:5432,h2:5432/db), cut into one connection string per host for node-postgres,
// which takes one host only.

/** The URL parameters the store honours; any other is refused rather than silently ignored. */
export const URL_PARAMETERS = [
  "sslmode",
  "sslrootcert",
  "sslcert",
  "sslkey",
  "application_name",
  "options",
  "target_session_attrs",
] as const;

export interface PostgresAddress {
  /** One connection string per host, in the order given. */
  readonly hosts: readonly string[];
  /** For messages: the URL without password or parameters (`postgres://u@h1:5432,h2/db`). */
  readonly description: string;
  /** Connect only to a server that takes writes: libpq's target_session_attrs=read-write. */
  readonly readWrite: boolean;
}

const FORM = /^(postgres(?:ql)?):\/\/(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/;

/** The URL's hosts and parameters, or the reason it cannot be used (never its password). */
export function parsePostgresUrl(url: string): PostgresAddress | { problem: string } {
  const parts = FORM.exec(url);
  if (parts === null) return { problem: "DB_URL is not a valid postgres:// URL" };
  const [, scheme, userinfo, hostList = "", path = "", query = ""] = parts;
  const params = new URLSearchParams(query);
  for (const name of params.keys()) {
    if (!(URL_PARAMETERS as readonly string[]).includes(name)) {
      return {
        problem: `DB_URL parameter ${name} is not supported; supported: ${URL_PARAMETERS.join(", ")} (a setting such as search_path goes in options=-c search_path=…)`,
      };
    }
  }
  const hosts = hostList === "" ? [""] : hostList.split(",");
  // Several hosts are there for a failover: only the primary takes the service's writes.
  const attrs = params.get("target_session_attrs") ?? (hosts.length > 1 ? "read-write" : "any");
  if (!["any", "read-write"].includes(attrs)) {
    return { problem: "DB_URL target_session_attrs must be any or read-write" };
  }
  params.delete("target_session_attrs");
  const rest = params.size > 0 ? `?${params}` : "";
  const user = userinfo === undefined ? "" : `${userinfo}@`;
  const strings = hosts.map((host) => `${scheme}://${user}${host}${path}${rest}`);
  if ((hosts.length > 1 && hosts.includes("")) || !strings.every((s) => URL.canParse(s))) {
    return { problem: "DB_URL is not a valid postgres:// URL" };
  }
  const name = userinfo === undefined ? "" : `${userinfo.split(":")[0]}@`;
  return {
    hosts: strings,
    description: `${scheme}://${name}${hostList}${path}`,
    readWrite: attrs === "read-write",
  };
}
