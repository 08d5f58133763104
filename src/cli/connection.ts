// Where the command finds the service, and as whom: options, then the environment, then the
// development defaults.
export const connectionOptions = {
  url: { type: "string" },
  username: { type: "string" },
  password: { type: "string" },
} as const;

export function connection(values: {
  url?: string | undefined;
  username?: string | undefined;
  password?: string | undefined;
}) {
  return {
    baseUrl: values.url ?? process.env.BOOK_CATALOGUE_URL ?? "http://localhost:8080",
    username: values.username ?? process.env.AUTH_USERNAME ?? "admin",
    password: values.password ?? process.env.AUTH_PASSWORD ?? "password",
  };
}
