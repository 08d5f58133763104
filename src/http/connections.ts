import type { FastifyInstance } from "fastify";

/** Past the bound, a new connection is closed as soon as it is accepted; the others go on. */
export function limitConnections(app: FastifyInstance, maxConnections: number): void {
  app.server.maxConnections = maxConnections;
  let lastDropWarning = 0;
  app.server.on("drop", () => {
    const now = Date.now();
    if (now - lastDropWarning < 10_000) return;
    lastDropWarning = now;
    app.log.warn({ maxConnections }, "connection refused: MAX_CONNECTIONS are open");
  });
}
