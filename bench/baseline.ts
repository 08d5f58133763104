// The baseline: a bare node:http server that answers every request with the bytes the service
// sent for the scenario, with no routing, no token check and no store. It reads the body
// first, as the service must.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

interface Sample {
  status: number;
  contentType: string;
  body: string;
}

const sample = JSON.parse(readFileSync(process.env.SAMPLE_FILE as string, "utf8")) as Sample;
const body = Buffer.from(sample.body);
const headers = { "content-type": sample.contentType, "content-length": String(body.length) };

const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    response.writeHead(sample.status, headers);
    response.end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
