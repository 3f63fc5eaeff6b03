"""A real SMTP server for billable's e-mail tests and benchmark (aiosmtpd).

Every message it takes is read back with Python's MIME parser and written as one JSON line
to --out: the envelope, the decoded headers (Subject included, whatever its encoding), the
text body, and each attachment's file name, content type, size, SHA-256 and bytes (base64).

It can be slow (--delay-ms before each message is accepted) and misbehave on purpose: answer the first N messages with a temporary failure
(--fail-first N --fail-code 451), refuse recipients whose address holds a text for good
(--reject-rcpt TEXT --reject-code 550), speak TLS (--tls starttls, required before
anything else; --tls smtps, from the first byte) with a certificate of a CA it writes to
--ca-file, and require a login (--auth USER:PASSWORD).

On start it prints `port=N` (the port it listens on, 127.0.0.1) and flushes.
"""

import argparse
import asyncio
import base64
import email
import email.policy
import hashlib
import json
import ssl
import sys
import threading
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Recorder:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.failures_left = args.fail_first
        self.out = open(args.out, "a", encoding="utf-8")

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.args.reject_rcpt and self.args.reject_rcpt in address:
            return f"{self.args.reject_code} 5.1.1 <{address}>: no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.args.delay_ms:
            await asyncio.sleep(self.args.delay_ms / 1000)
        with self.lock:
            if self.failures_left > 0:
                self.failures_left -= 1
                self.write({"refused": True, "code": self.args.fail_code,
                            "message_id": message_id(envelope.content)})
                return f"{self.args.fail_code} 4.3.0 Mailbox busy, try again later"
            self.write(parsed(envelope))
        return "250 2.0.0 OK: queued"

    def write(self, record):
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.out.flush()


def message_id(content):
    message = email.message_from_bytes(content, policy=email.policy.default)
    return str(message.get("Message-ID", ""))


def parsed(envelope):
    message = email.message_from_bytes(envelope.content, policy=email.policy.default)
    body = message.get_body(preferencelist=("plain",))
    attachments = []
    for part in message.iter_attachments():
        data = part.get_payload(decode=True) or b""
        attachments.append({
            "filename": part.get_filename(),
            "content_type": part.get_content_type(),
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "base64": base64.b64encode(data).decode("ascii"),
        })
    return {
        "received_at": time.time(),
        "mail_from": envelope.mail_from,
        "rcpt_tos": list(envelope.rcpt_tos),
        "message_id": str(message.get("Message-ID", "")),
        "from": str(message.get("From", "")),
        "to": str(message.get("To", "")),
        "cc": str(message.get("Cc", "")),
        "subject": str(message.get("Subject", "")),
        "date": str(message.get("Date", "")),
        "body": body.get_content() if body is not None else "",
        "attachments": attachments,
    }


def tls_context(args):
    import trustme

    ca = trustme.CA()
    certificate = ca.issue_cert("127.0.0.1", "localhost")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    certificate.configure_cert(context)
    ca.cert_pem.write_to_path(args.ca_file)
    return context


def free_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="file the received messages are appended to, one JSON line each")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--fail-code", type=int, default=451)
    parser.add_argument("--reject-rcpt", default="")
    parser.add_argument("--reject-code", type=int, default=550)
    parser.add_argument("--tls", choices=["none", "starttls", "smtps"], default="none")
    parser.add_argument("--ca-file", help="where the TLS certificate's CA is written (PEM)")
    parser.add_argument("--auth", default="", help="USER:PASSWORD a client must log in with")
    parser.add_argument("--delay-ms", type=int, default=0, help="how long each message takes to be accepted")
    args = parser.parse_args()

    handler = Recorder(args)
    # aiosmtpd's controller cannot listen on port 0 (it connects to its own port to see it
    # is up): a free port is found first.
    port = args.port or free_port()
    options = {"hostname": "127.0.0.1", "port": port, "ready_timeout": 10}
    if args.auth:
        user, _, password = args.auth.partition(":")

        def authenticate(server, session, envelope, mechanism, data):
            ok = isinstance(data, LoginPassword) and data.login.decode() == user and data.password.decode() == password
            return AuthResult(success=ok)

        # Over implicit TLS aiosmtpd does not know the session is secure: it is, so AUTH is
        # offered; over STARTTLS only after it.
        options.update(authenticator=authenticate, auth_require_tls=args.tls == "starttls")
    if args.tls == "starttls":
        options.update(tls_context=tls_context(args), require_starttls=True)
    elif args.tls == "smtps":
        options.update(ssl_context=tls_context(args))
    controller = Controller(handler, **options)
    controller.start()
    print(f"port={port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


if __name__ == "__main__":
    sys.exit(main())
