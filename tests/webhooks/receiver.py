"""A webhook receiver for billable's tests and benchmark, verifying every delivery with the
official Standard Webhooks library (PyPI `standardwebhooks`).

It records each request as one JSON line in --out: its headers (webhook-id,
webhook-timestamp, webhook-signature), its body, the status it answered, and, for each
secret it was told, whether the official `Webhook(secret).verify` accepted the delivery.

Control, on the same port:
- `POST /_secrets` with a JSON array of `whsec_…` secrets: the secrets to verify with.
- `POST /_respond` with `{"statuses": [500, "429:30", 410, …]}`: the answers of the next
  requests, in order (`429:30` is 429 with `Retry-After: 30`); then 204 again.

On start it prints `port=N` (127.0.0.1) and flushes.
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


class State:
    def __init__(self, out):
        self.lock = threading.Lock()
        self.secrets = []
        self.statuses = []
        self.out = open(out, "a", encoding="utf-8")

    def next_status(self):
        with self.lock:
            return self.statuses.pop(0) if self.statuses else 204

    def record(self, entry):
        with self.lock:
            self.out.write(json.dumps(entry) + "\n")
            self.out.flush()


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length)

        def answer(self, status, headers=()):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            body = self.body()
            if self.path == "/_secrets":
                with state.lock:
                    state.secrets = json.loads(body)
                return self.answer(204)
            if self.path == "/_respond":
                with state.lock:
                    state.statuses = list(json.loads(body)["statuses"])
                return self.answer(204)
            headers = {name.lower(): value for name, value in self.headers.items()}
            verified = {}
            with state.lock:
                secrets = list(state.secrets)
            for secret in secrets:
                try:
                    Webhook(secret).verify(body, headers)
                    verified[secret] = True
                except WebhookVerificationError as error:
                    verified[secret] = str(error)
            status = state.next_status()
            retry_after = None
            if isinstance(status, str):
                status, _, retry_after = status.partition(":")
                status = int(status)
            state.record({
                "received_at": time.time(),
                "path": self.path,
                "webhook_id": headers.get("webhook-id"),
                "webhook_timestamp": headers.get("webhook-timestamp"),
                "webhook_signature": headers.get("webhook-signature"),
                "content_type": headers.get("content-type"),
                "body": body.decode("utf-8"),
                "status": status,
                "verified": verified,
            })
            extra = [("Retry-After", retry_after)] if retry_after else []
            self.answer(status, extra)

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    state = State(args.out)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(state))
    server.daemon_threads = True
    print(f"port={server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
