// The webhook receiver of scripts/bench-sending.sh: answers every POST 204 at once and keeps,
// per delivery, when it arrived and when its event happened (the envelope's `timestamp`), so
// that the benchmark reads deliveries a second and the delay from commit to delivery. It
// verifies nothing: the tests verify every delivery with the official Standard Webhooks
// library; this one must not be the bottleneck it measures.
//
//   node scripts/bench-receiver.mjs        prints `port=N` (127.0.0.1) once it listens
//
//   GET  /_stats   {count, unique, firstMs, lastMs, latencyMs: {p50, p99, max}}
//   POST /_reset   forgets every delivery
//   GET  /_sample  the first delivery's headers and body, for wrk to send straight here
import http from "node:http";
import { performance } from "node:perf_hooks";

let arrivals = [];
let ids = new Set();
let sample = null;

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)];
}

function stats() {
  const delays = arrivals
    .filter(([, event]) => Number.isFinite(event))
    .map(([arrived, event]) => arrived - event)
    .sort((a, b) => a - b);
  return {
    count: arrivals.length,
    unique: ids.size,
    firstMs: arrivals.length ? Math.min(...arrivals.map(([arrived]) => arrived)) : null,
    lastMs: arrivals.length ? Math.max(...arrivals.map(([arrived]) => arrived)) : null,
    latencyMs: { p50: percentile(delays, 50), p99: percentile(delays, 99), max: delays.at(-1) ?? null },
  };
}

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    if (request.url === "/_stats") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats()));
      return;
    }
    if (request.url === "/_reset") {
      arrivals = [];
      ids = new Set();
      response.writeHead(204).end();
      return;
    }
    if (request.url === "/_sample") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(sample));
      return;
    }
    const arrived = performance.timeOrigin + performance.now();
    const body = Buffer.concat(chunks).toString("utf8");
    let happened = Number.NaN;
    try {
      happened = Date.parse(JSON.parse(body).timestamp);
    } catch {
      // Not an envelope: counted, with no delay.
    }
    arrivals.push([arrived, happened]);
    ids.add(String(request.headers["webhook-id"]));
    if (sample === null) {
      const headers = {};
      for (const name of ["content-type", "webhook-id", "webhook-timestamp", "webhook-signature"]) {
        headers[name] = request.headers[name];
      }
      sample = { headers, body };
    }
    response.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(`port=${server.address().port}`));
