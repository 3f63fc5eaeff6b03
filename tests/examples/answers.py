#!/usr/bin/env python3
"""What a server answers to the examples of docs/api.md, and what it makes of them: the
answers, the PDFs' text, the e-invoices, the mails, and /openapi.json. Written as JSON
lines with ids and instants replaced by stand-ins, so that two builds' records compare
line by line (scripts/compare-answers.sh).

    BASE_URL=… API_KEY=… SMTP_MAILS=… python3 tests/examples/answers.py > answers.jsonl

Every `curl` of a `sh` block of docs/api.md runs in order, on a client "Acme" and an
invoice of 100.00 made first: `$ID` is that invoice, `$PAYMENT`, `$MESSAGE` and `$RID` the
last payment, message and recurring invoice answered, and a `"0193…"` id the client.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

BASE = os.environ["BASE_URL"]
KEY = os.environ["API_KEY"]
MAILS = Path(os.environ["SMTP_MAILS"])
DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")
KEY_TEXT = re.compile(r"bk_[A-Za-z0-9]+|whsec_[A-Za-z0-9+/=]+")


class StandIns:
    """Each id gets the same stand-in wherever it appears, numbered in order of appearance."""

    def __init__(self):
        self.ids = {}

    def __call__(self, text):
        text = UUID.sub(lambda m: self.ids.setdefault(m.group(0), f"<id{len(self.ids) + 1}>"), text)
        text = INSTANT.sub("<instant>", text)
        return KEY_TEXT.sub("<secret>", text)


stand_in = StandIns()
out = []


def record(what, status, body):
    out.append(json.dumps({"what": stand_in(what), "status": status, "body": stand_in(body)}, ensure_ascii=False))


def call(method, path, body=None, headers=None, keyed=True):
    request = urllib.request.Request(BASE + path, method=method, data=None if body is None else body.encode())
    if keyed:
        request.add_header("X-API-Key", KEY)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def json_call(method, path, body=None):
    status, _, data = call(method, path, None if body is None else json.dumps(body))
    record(f"{method} {path} {json.dumps(body) if body is not None else ''}", status, data.decode())
    return json.loads(data) if data else None


def curls():
    """Each `curl` of the `sh` blocks of docs/api.md: (method, path, body, headers)."""
    for block in re.findall(r"```sh\n(.*?)```", DOCS.read_text(), re.S):
        lines = [line for line in block.splitlines() if not line.lstrip().startswith("#")]
        for command in re.split(r"\n(?=curl )", "\n".join(lines).replace("\\\n", " ")):
            words = shlex.split(command.replace("\n", " "), posix=True)
            if not words or words[0] != "curl":
                continue
            method, url, body, headers = "GET", None, None, {}
            i = 1
            while i < len(words):
                word = words[i]
                if word == "-X":
                    method, i = words[i + 1], i + 2
                elif word == "-H":
                    name, _, value = words[i + 1].partition(":")
                    headers[name.strip()] = value.strip()
                    i += 2
                elif word == "-d":
                    body, i = words[i + 1], i + 2
                elif word.startswith("-"):
                    i += 1
                else:
                    url, i = word, i + 1
            yield method, url, body, headers


def pdf_text(path):
    status, headers, data = call("GET", path, keyed=False)
    if status != 200:
        record(f"GET {path}", status, data.decode())
        return
    with tempfile.NamedTemporaryFile(suffix=".pdf") as pdf:
        pdf.write(data)
        pdf.flush()
        text = subprocess.run(["pdftotext", "-layout", pdf.name, "-"], capture_output=True, text=True, check=True)
    record(f"GET {path} ({headers.get('Content-Disposition')})", status, text.stdout)


def main():
    # A sender and a client with what XRechnung asks, so that every e-invoice is made.
    json_call("PATCH", "/v1/team", {"name": "Studio", "sender": {
        "line1": "Werkstraße 2", "postalCode": "20095", "city": "Hamburg", "countryCode": "DE",
        "vatNumber": "DE123456789", "iban": "DE89370400440532013000", "contactName": "Jo Studio",
        "contactPhone": "+49 40 123456", "contactEmail": "jo@studio.example",
        "paymentDetails": "IBAN DE89 3704 0044 0532 0130 00"}})
    client = json_call("POST", "/v1/invoices/clients", {
        "name": "Acme", "email": "billing@acme.example", "line1": "Hauptstraße 1", "postalCode": "10115",
        "city": "Berlin", "countryCode": "DE", "vatNumber": "DE987654321", "buyerReference": "04011000-12345-03"})
    invoice = json_call("POST", "/v1/invoices", {
        "clientId": client["id"], "description": "Website, November", "taxPercentage": 0,
        "vatCategory": "E", "vatExemptionReason": "Kleinunternehmer gemäß § 19 UStG",
        "dueDate": "2099-12-31",
        "lineItems": [{"description": "Design", "unitPrice": 60, "quantity": 1},
                      {"description": "Hosting", "unitPrice": 40, "quantity": 1}]})
    names = {"ID": invoice["id"], "PAYMENT": "", "MESSAGE": "", "RID": ""}
    for method, url, body, headers in curls():
        for name, value in names.items():
            url = url.replace("$" + name, value)
        url = url.replace("$BASE", "").replace("$KEY", KEY)
        if body is not None:
            body = body.replace('"0193…"', json.dumps(client["id"]))
        headers.pop("X-API-Key", None)
        headers.pop("content-type", None)
        headers.pop("Content-Type", None)
        status, _, data = call(method, url, body, headers)
        text = data.decode(errors="replace")
        record(f"{method} {url} {body or ''}", status, text)
        answer = json.loads(text) if text.startswith("{") else None
        if answer and "kind" in answer and "amount" in answer and "invoiceId" in answer:
            names["PAYMENT"] = answer["id"]
        if answer and "messageId" in answer:
            names["MESSAGE"] = answer["id"]
            time.sleep(3)  # the running job pass sends it
        if answer and "schedule" in answer:
            names["RID"] = answer["id"]
    # Every kind of mail, and the files each carries.
    notes = json_call("GET", "/v1/credit-notes")
    json_call("POST", f"/v1/credit-notes/{notes[0]['id']}/send", {"eInvoice": "xrechnung-ubl"})
    json_call("POST", f"/v1/invoices/{invoice['id']}/send", {"eInvoice": "facturx", "subject": "{serial}: {amountDue}"})
    json_call("POST", f"/v1/invoices/{invoice['id']}/remind", {})
    time.sleep(3)  # the running job pass sends them
    json_call("GET", f"/v1/invoices/{invoice['id']}")
    for fmt in ["xrechnung-ubl", "xrechnung-cii", "facturx"]:
        for kind, document in [("invoices", invoice), ("credit-notes", notes[0])]:
            status, _, data = call("GET", f"/v1/{kind}/{document['id']}/e-invoice?format={fmt}")
            record(f"e-invoice of {kind} {fmt}", status, data.decode())
    pdf_text(f"/v1/invoices/pdf?id={invoice['id']}")
    pdf_text(f"/v1/invoices/pdf?id={invoice['id']}&format=facturx")
    for note in notes or []:
        pdf_text(f"/v1/credit-notes/pdf?id={note['id']}")
    mails = sorted(MAILS.read_text().splitlines() if MAILS.exists() else [], key=lambda line: json.loads(line)["subject"])
    for line in mails:
        mail = json.loads(line)
        mail.pop("received_at", None)
        mail.pop("date", None)
        for attachment in mail.get("attachments", []):
            attachment.pop("sha256", None)
            attachment.pop("size", None)
        record("mail", 0, json.dumps(mail, ensure_ascii=False, sort_keys=True))
    status, _, data = call("GET", "/openapi.json", keyed=False)
    record("GET /openapi.json", status, json.dumps(json.loads(data), indent=1, sort_keys=True))
    print("\n".join(out))


if __name__ == "__main__":
    sys.exit(main())
