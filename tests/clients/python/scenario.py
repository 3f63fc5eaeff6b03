#!/usr/bin/env python3
"""A scenario through the Python client that openapi-python-client generates from the
served /openapi.json, and through nothing else.

Every call goes through a generated `sync_detailed` function. Each one checks the status
code and that `response.parsed` is the generated model the document promises for it (a
list of them for a listing). The parsed model is then walked: a field the server left out
(`UNSET`) or a field the document does not describe (`additional_properties`) fails the
step too. The client raises on any status the document does not list
(`raise_on_unexpected_status=True`).

Environment:
  BASE_URL            the server, e.g. http://127.0.0.1:3000
  API_KEY             a `write` key of a fresh team (the one the first start prints)
  CLIENT_DIR          the directory that holds the generated package `billable_client`
  SMTP_MAILS          the JSON lines file of the SMTP server the server mails
                      (tests/mail/smtp_server.py): each mail it took, parsed
  WEBHOOK_RECEIVER    the URL of a webhook receiver on 127.0.0.1 (tests/webhooks/receiver.py),
                      which the server may deliver to (BILLABLE_WEBHOOK_ALLOW_PRIVATE=true)
  WEBHOOK_DELIVERIES  its JSON lines file: each delivery, verified with the official
                      Standard Webhooks library against the secrets it was told

The sending steps wait for the server's job passes (mail, webhook deliveries) by polling
for the outcome, half a second apart, at most 30 s. Only the receiver's `/_secrets` and the
two files are reached outside the generated client.

The server must run with a low per-key rate limit (scripts/generated-clients.sh starts it
with BILLABLE_RATE_LIMIT=175/60s): the last step calls a listing until a 429 comes.

Prints one line per step and ends with `N passed, M failed`; exits 1 when a step failed.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import sys
import time
import traceback
import urllib.request
import uuid
from datetime import date, datetime, timedelta, timezone
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

BASE_URL = os.environ["BASE_URL"]
API_KEY = os.environ["API_KEY"]
SMTP_MAILS = os.environ["SMTP_MAILS"]
WEBHOOK_RECEIVER = os.environ["WEBHOOK_RECEIVER"]
WEBHOOK_DELIVERIES = os.environ["WEBHOOK_DELIVERIES"]
sys.path.insert(0, os.environ["CLIENT_DIR"])

import billable_client  # noqa: E402
import billable_client.api  # noqa: E402
from billable_client import AuthenticatedClient, Client, errors  # noqa: E402
from billable_client import models  # noqa: E402
from billable_client.types import UNSET, File  # noqa: E402

# Every operation of the REST API (the agent's run history is left to other tests).
KEYED_OPERATIONS = [
    "list_clients", "create_client", "get_client", "replace_client", "delete_client",
    "list_invoices", "create_invoice", "get_invoice", "update_invoice", "mark_invoice",
    "delete_invoice",
    "list_time", "create_time", "get_time", "update_time", "delete_time",
    "list_tags", "create_tag", "rename_tag", "delete_tag",
    "list_projects", "create_project", "update_project", "delete_project",
    "list_sections", "create_section", "update_section", "delete_section",
    "invoice_time", "get_report",
    "list_quotes", "create_quote", "get_quote", "finalize_quote", "accept_quote", "convert_quote",
    "record_payment", "list_invoice_payments", "record_refund", "write_off", "void_payment",
    "get_payment", "list_payments", "receivables_report",
    "create_credit_note", "list_credit_notes", "get_credit_note",
    "send_invoice", "remind_invoice", "send_credit_note", "list_messages", "list_invoice_messages",
    "get_message", "retry_message", "get_policy", "put_policy",
    "list_event_types", "create_webhook_endpoint", "list_webhook_endpoints", "get_webhook_endpoint",
    "update_webhook_endpoint", "delete_webhook_endpoint", "rotate_webhook_secret",
    "test_webhook_endpoint", "list_webhook_deliveries", "redeliver_webhook",
    "create_recurring_invoice", "list_recurring_invoices", "get_recurring_invoice",
    "update_recurring_invoice", "delete_recurring_invoice", "pause_recurring_invoice",
    "resume_recurring_invoice", "preview_recurring_invoice", "list_recurring_runs",
    "mark_invoice_sent", "get_team", "update_team",
]
PUBLIC_OPERATIONS = ["invoice_pdf", "credit_note_pdf"]

client = AuthenticatedClient(
    base_url=BASE_URL,
    token=API_KEY,
    prefix="",
    auth_header_name="X-API-Key",
    raise_on_unexpected_status=True,
)
# The PDF link is public: fetched without a key.
public = Client(base_url=BASE_URL, raise_on_unexpected_status=True)


class Failed(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failed(message)


def model(name: str) -> type:
    """A generated model (or enum) class, by its schema name."""
    found = getattr(models, name, None)
    check(isinstance(found, type), f"the generated client has no model {name}")
    return found  # type: ignore[return-value]


_operations: dict[str, Any] = {}


def operation(name: str) -> Any:
    """The generated module of an operation, whatever tag it was filed under."""
    if not _operations:
        for tag in pkgutil.iter_modules(billable_client.api.__path__):
            package = importlib.import_module(f"billable_client.api.{tag.name}")
            for module in pkgutil.iter_modules(package.__path__):
                _operations[module.name] = f"billable_client.api.{tag.name}.{module.name}"
    check(name in _operations, f"the generated client has no operation {name}")
    return importlib.import_module(_operations[name])


def strict(value: Any, where: str) -> None:
    """Every field of a parsed model is present, and nothing came that the document does
    not describe."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            strict(item, f"{where}[{i}]")
        return
    fields = getattr(type(value), "__attrs_attrs__", None)
    if fields is None:
        return
    for field in fields:
        if field.name == "additional_properties":
            extra = getattr(value, field.name)
            check(not extra, f"{where}: fields the document does not describe: {sorted(extra)}")
            continue
        inner = getattr(value, field.name)
        check(inner is not UNSET, f"{where}.{field.name}: missing from the response")
        strict(inner, f"{where}.{field.name}")


def call(name: str, code: int, expected: type | list[type], *, via: Any = None, **kwargs: Any) -> Any:
    """Calls an operation's `sync_detailed` and checks the status and the parsed model.
    `expected` is a model class, or `[cls]` for an array of them."""
    try:
        response = operation(name).sync_detailed(client=via or client, **kwargs)
    except errors.UnexpectedStatus as error:
        raise Failed(
            f"{name}: undocumented status {error.status_code}: {error.content[:300]!r}"
        ) from None
    got = int(response.status_code)
    check(got == code, f"{name}: status {got}, expected {code}: {response.content[:300]!r}")
    parsed = response.parsed
    if isinstance(expected, list):
        cls = expected[0]
        check(isinstance(parsed, list), f"{name}: parsed {type(parsed).__name__}, expected list[{cls.__name__}]")
        for item in parsed:
            check(isinstance(item, cls), f"{name}: item parsed as {type(item).__name__}, expected {cls.__name__}")
    else:
        check(
            isinstance(parsed, expected),
            f"{name}: parsed {type(parsed).__name__}, expected {expected.__name__}",
        )
    strict(parsed, name)
    return response


def error_call(name: str, code: int, starts: str, **kwargs: Any) -> Any:
    """An operation that must fail with status `code` and an ErrorBody whose message
    starts with `starts`."""
    response = call(name, code, model("ErrorBody"), **kwargs)
    message = response.parsed.error
    check(message.startswith(starts), f"{name}: error {message!r}, expected it to start with {starts!r}")
    return response


def enum_value(value: Any, enum: str, expected: str, where: str) -> None:
    """`value` is a member of the generated enum `enum`, and reads `expected`."""
    cls = model(enum)
    check(isinstance(value, cls), f"{where}: {value!r} is a {type(value).__name__}, not the enum {enum}")
    check(value.value == expected, f"{where}: {value.value!r}, expected {expected!r}")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


POLL_SECONDS = 30


def until(what: str, fetch: Callable[[], Any], done: Callable[[Any], bool]) -> Any:
    """`fetch()` again every half second until `done` holds for what it gives, for at most
    POLL_SECONDS: the server's job passes send the mail and deliver the webhooks."""
    deadline = time.monotonic() + POLL_SECONDS
    while True:
        value = fetch()
        if done(value):
            return value
        check(time.monotonic() < deadline, f"{what}: not within {POLL_SECONDS} s; last {value!r}")
        time.sleep(0.5)


def json_lines(path: str) -> list[dict[str, Any]]:
    """The whole JSON lines written to `path` so far (a line still being written is left out)."""
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file.read().splitlines(keepends=True) if line.endswith("\n")]


def verify_with(*secrets: str) -> None:
    """Tells the webhook receiver the secrets to verify each delivery with."""
    request = urllib.request.Request(
        f"{WEBHOOK_RECEIVER}/_secrets",
        data=json.dumps(list(secrets)).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        check(answer.status == 204, f"the receiver's /_secrets answered {answer.status}")


def received(event_id: Any) -> list[dict[str, Any]]:
    """The receiver's deliveries of the event `event_id` (their `webhook-id`), in order."""
    return [d for d in json_lines(WEBHOOK_DELIVERIES) if d["webhook_id"] == str(event_id)]


# --- the steps -------------------------------------------------------------------------

STEPS: list[tuple[str, Callable[[dict[str, Any]], None]]] = []


def step(title: str) -> Callable[[Callable[[dict[str, Any]], None]], Callable[[dict[str, Any]], None]]:
    def register(fn: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
        STEPS.append((title, fn))
        return fn

    return register


@step("every /v1 operation but the PDF takes an AuthenticatedClient; the PDF takes a plain Client")
def _(s: dict[str, Any]) -> None:
    for name in KEYED_OPERATIONS:
        annotation = operation(name).sync_detailed.__annotations__.get("client")
        check(
            annotation in (AuthenticatedClient, "AuthenticatedClient"),
            f"{name}: client is {annotation}, not AuthenticatedClient (no `security` on the operation?)",
        )
    for name in PUBLIC_OPERATIONS:
        annotation = str(operation(name).sync_detailed.__annotations__.get("client"))
        check("Client" in annotation and "|" in annotation, f"{name}: client is {annotation}")


# Clients


@step("create a client (201 ClientBody, optional fields default to empty)")
def _(s: dict[str, Any]) -> None:
    body = model("ClientInput")(
        name="Acme GmbH",
        email="billing@acme.example",
        phone="+49 30 1234567",
        line1="Hauptstraße 1",
        postal_code="10115",
    )
    c = call("create_client", 201, model("ClientBody"), body=body).parsed
    check(c.name == "Acme GmbH" and c.email == "billing@acme.example", f"client {c}")
    check(c.phone == "+49 30 1234567" and c.vat_number == "" and c.line2 == "" and c.line3 == "", f"client {c}")
    check(isinstance(c.id, uuid.UUID) and isinstance(c.created_at, datetime), f"id {c.id!r}, createdAt {c.created_at!r}")
    s["client"] = c


@step("list clients (200 list[ClientBody]) holds the new client")
def _(s: dict[str, Any]) -> None:
    listed = call("list_clients", 200, [model("ClientBody")]).parsed
    check(s["client"].id in [c.id for c in listed], "the new client is not listed")


@step("get the client (200 ClientBody)")
def _(s: dict[str, Any]) -> None:
    c = call("get_client", 200, model("ClientBody"), id=s["client"].id).parsed
    check(c.id == s["client"].id and c.line1 == "Hauptstraße 1", f"client {c}")


@step("PATCH the client: a full replacement (200 ClientBody, left-out fields become empty)")
def _(s: dict[str, Any]) -> None:
    body = model("ClientInput")(
        name="Acme AG", email="billing@acme.example", line1="Bahnhofstrasse 2", postal_code="8001"
    )
    c = call("replace_client", 200, model("ClientBody"), id=s["client"].id, body=body).parsed
    check(c.name == "Acme AG" and c.line1 == "Bahnhofstrasse 2" and c.postal_code == "8001", f"client {c}")
    check(c.phone == "", f"phone {c.phone!r}: a replacement leaves out what it does not give")
    check(c.created_at == s["client"].created_at, "createdAt changed")


# Invoices


def line(description: str, unit_price: float, quantity: float) -> Any:
    return model("LineItemInput")(description=description, unit_price=unit_price, quantity=quantity)


@step("create an invoice for an inline client {email, name}, no address (201 InvoiceBody)")
def _(s: dict[str, Any]) -> None:
    body = model("InvoiceInput")(
        line_items=[line("Consulting", 19.99, 3)],
        client=model("InlineClientInput")(email="ap@globex.example", name="Globex"),
        tax_percentage=7.5,
        issue_date=utc("2026-11-20T09:30:00Z"),
    )
    i = call("create_invoice", 201, model("InvoiceBody"), body=body).parsed
    enum_value(i.status, "InvoiceStatus", "PENDING", "status")
    check(i.serial == "INV-0001", f"serial {i.serial!r}")
    check((i.subtotal, i.tax, i.total) == (59.97, 4.5, 64.47), f"totals {i.subtotal} {i.tax} {i.total}")
    check(i.client_id != s["client"].id, "the inline client matched the other client")
    check(i.currency == "USD", f"currency {i.currency!r}")
    check(i.issue_date == utc("2026-11-20T09:30:00Z") and i.due_date is None, f"dates {i.issue_date} {i.due_date}")
    check([(li.position, li.amount) for li in i.line_items] == [(0, 59.97)], f"items {i.line_items}")
    s["invoice"] = i


@step("the inline client was made from its details, with an empty address (200 ClientBody)")
def _(s: dict[str, Any]) -> None:
    c = call("get_client", 200, model("ClientBody"), id=s["invoice"].client_id).parsed
    check((c.name, c.email, c.line1, c.postal_code) == ("Globex", "ap@globex.example", "", ""), f"client {c}")


@step("create an invoice for an existing client by clientId (201 InvoiceBody)")
def _(s: dict[str, Any]) -> None:
    body = model("InvoiceInput")(line_items=[line("Retainer", 80, 1)], client_id=str(s["client"].id), tax=12.345)
    i = call("create_invoice", 201, model("InvoiceBody"), body=body).parsed
    check(i.client_id == s["client"].id, f"clientId {i.client_id}")
    check(re.fullmatch(r"INV-\d{4}", i.serial) is not None, f"serial {i.serial!r}")
    check((i.subtotal, i.tax, i.total) == (80, 12.35, 92.35), f"totals {i.subtotal} {i.tax} {i.total}")
    s["invoice2"] = i


@step("retry an invoice create with an Idempotency-Key: one invoice, the same answer (201, Idempotent-Replayed)")
def _(s: dict[str, Any]) -> None:
    before = len(call("list_invoices", 200, [model("InvoiceBody")]).parsed)
    key = str(uuid.uuid4())
    body = model("InvoiceInput")(line_items=[line("Retried", 10, 1)], client_id=str(s["client"].id))
    first = call("create_invoice", 201, model("InvoiceBody"), body=body, idempotency_key=key)
    retry = call("create_invoice", 201, model("InvoiceBody"), body=body, idempotency_key=key)
    check(retry.headers.get("idempotent-replayed") == "true", f"retry headers {dict(retry.headers)}")
    check("idempotent-replayed" not in first.headers, "the first answer is not a replay")
    check(retry.parsed.id == first.parsed.id and retry.parsed.serial == first.parsed.serial, "the same invoice")
    after = len(call("list_invoices", 200, [model("InvoiceBody")]).parsed)
    check(after == before + 1, f"{before} invoices before, {after} after two requests")
    other = model("InvoiceInput")(line_items=[line("Retried", 11, 1)], client_id=str(s["client"].id))
    error_call("create_invoice", 422, "Idempotency-Key: was used for a different request", body=other, idempotency_key=key)
    call("delete_invoice", 200, model("Deleted"), id=first.parsed.id)


@step("list invoices (200 list[InvoiceBody]) holds both")
def _(s: dict[str, Any]) -> None:
    listed = call("list_invoices", 200, [model("InvoiceBody")]).parsed
    ids = [i.id for i in listed]
    check(s["invoice"].id in ids and s["invoice2"].id in ids, f"listed {ids}")


def next_cursor(response: Any) -> str | None:
    """The cursor of the `Link: <…>; rel="next"` a listing answered with, if any."""
    link = response.headers.get("link")
    if link is None:
        return None
    check(link.endswith('>; rel="next"'), f"Link {link!r}")
    query = parse_qs(urlsplit(link[1 : -len('>; rel="next"')]).query)
    return query["cursor"][0]


@step("page invoices one at a time through Link headers (200, Link rel=next)")
def _(s: dict[str, Any]) -> None:
    seen: list[str] = []
    cursor: Any = UNSET
    while True:
        response = call("list_invoices", 200, [model("InvoiceBody")], limit=1, cursor=cursor)
        check(len(response.parsed) <= 1, f"a page of {len(response.parsed)}")
        seen += [i.id for i in response.parsed]
        cursor = next_cursor(response)
        if cursor is None:
            break
        check(len(seen) < 100, "the pages end")
    whole = [i.id for i in call("list_invoices", 200, [model("InvoiceBody")]).parsed]
    check(seen == whole, f"pages {seen} != listing {whole}")


@step("filter invoices by status (repeated), client and q (200 list[InvoiceBody])")
def _(s: dict[str, Any]) -> None:
    status = model("InvoiceStatus")
    pending = call("list_invoices", 200, [model("InvoiceBody")], status=[status("PENDING"), status("PAID")]).parsed
    check({i.id for i in pending} >= {s["invoice"].id, s["invoice2"].id}, "both are PENDING")
    overdue = call("list_invoices", 200, [model("InvoiceBody")], status=[status("OVERDUE")]).parsed
    check(all(i.id not in (s["invoice"].id, s["invoice2"].id) for i in overdue), "none is overdue")
    mine = call("list_invoices", 200, [model("InvoiceBody")], client_id=s["client"].id).parsed
    check([i.id for i in mine] == [s["invoice2"].id], f"by client {[i.id for i in mine]}")
    serial = s["invoice2"].serial
    found = call("list_invoices", 200, [model("InvoiceBody")], q=serial.lower()).parsed
    check([i.serial for i in found] == [serial], f"q={serial.lower()} found {[i.serial for i in found]}")
    error_call("list_invoices", 400, "issuedTo: must not be before issuedFrom",
               issued_from=date(2026, 11, 2), issued_to=date(2026, 11, 1))


@step("find clients by q (200 list[ClientBody])")
def _(s: dict[str, Any]) -> None:
    found = call("list_clients", 200, [model("ClientBody")], q="ACME A").parsed
    check([c.id for c in found] == [s["client"].id], f"q=ACME A found {[c.name for c in found]}")


@step("get the invoice (200 InvoiceBody)")
def _(s: dict[str, Any]) -> None:
    i = call("get_invoice", 200, model("InvoiceBody"), id=s["invoice"].id).parsed
    check(i.id == s["invoice"].id and i.total == 64.47, f"invoice {i}")


@step("PATCH the invoice: description, due date, items, tax (200 InvoiceBody, totals recomputed)")
def _(s: dict[str, Any]) -> None:
    body = model("InvoicePatch")(
        description="Consulting, November",
        due_date=utc("2099-12-31T00:00:00Z"),
        line_items=[line("Workshop", 100, 1), line("Travel", 0.5, 3)],
        tax_percentage=19,
    )
    i = call("update_invoice", 200, model("InvoiceBody"), id=s["invoice"].id, body=body).parsed
    check(i.description == "Consulting, November", f"description {i.description!r}")
    check(i.due_date == utc("2099-12-31T00:00:00Z"), f"dueDate {i.due_date!r}")
    check((i.subtotal, i.tax, i.total) == (101.5, 19.29, 120.79), f"totals {i.subtotal} {i.tax} {i.total}")
    check([li.description for li in i.line_items] == ["Workshop", "Travel"], f"items {i.line_items}")
    enum_value(i.status, "InvoiceStatus", "PENDING", "status")


@step("mark the invoice paid (200 InvoiceBody, status PAID)")
def _(s: dict[str, Any]) -> None:
    i = call("mark_invoice", 200, model("InvoiceBody"), id=s["invoice"].id).parsed
    enum_value(i.status, "InvoiceStatus", "PAID", "status")


@step("the books: an invoice of 50.00 paid in part reads PAID_PARTIAL (201 PaymentBody)")
def _(s: dict[str, Any]) -> None:
    body = model("InvoiceInput")(line_items=[line("Retainer", 50, 1)], client_id=str(s["invoice"].client_id))
    s["owed"] = call("create_invoice", 201, model("InvoiceBody"), body=body).parsed
    payment = model("PaymentInput")(amount=20, paid_on=date(2026, 11, 20), method=model("PaymentMethod")("bank_transfer"))
    p = call("record_payment", 201, model("PaymentBody"), id=s["owed"].id, body=payment).parsed
    check(p.amount == 20 and str(p.paid_on) == "2026-11-20", f"payment {p}")
    enum_value(p.kind, "EntryKind", "payment", "kind")
    s["payment"] = p
    i = call("get_invoice", 200, model("InvoiceBody"), id=s["owed"].id).parsed
    enum_value(i.status, "InvoiceStatus", "PAID_PARTIAL", "status")
    check((i.amount_paid, i.amount_due, i.paid_at) == (20, 30, None), f"balance {i.amount_paid} {i.amount_due} {i.paid_at}")


@step("the books: paying more than is due is refused (409 ErrorBody naming the figure)")
def _(s: dict[str, Any]) -> None:
    body = model("PaymentInput")(amount=31)
    error_call("record_payment", 409, "amount: exceeds amountDue 30.00", id=s["owed"].id, body=body)


@step("the books: a refund, then its void (201 and 200 PaymentBody)")
def _(s: dict[str, Any]) -> None:
    refund = call("record_refund", 201, model("PaymentBody"), id=s["owed"].id,
                  body=model("RefundInput")(amount=5, reason="goodwill")).parsed
    enum_value(refund.kind, "EntryKind", "refund", "kind")
    i = call("get_invoice", 200, model("InvoiceBody"), id=s["owed"].id).parsed
    check(i.amount_paid == 15, f"amountPaid {i.amount_paid}")
    voided = call("void_payment", 200, model("PaymentBody"), id=refund.id,
                  body=model("ReasonInput")(reason="entered by mistake")).parsed
    check(voided.voided_at is not None and voided.void_reason == "entered by mistake", f"voided {voided}")
    ledger = call("list_invoice_payments", 200, [model("PaymentBody")], id=s["owed"].id).parsed
    check(len(ledger) == 2, f"{len(ledger)} entries")
    one = call("get_payment", 200, model("PaymentBody"), id=s["payment"].id).parsed
    check(one.id == s["payment"].id, "the payment by id")


@step("the books: a credit note lowers what is due (201 CreditNoteBody)")
def _(s: dict[str, Any]) -> None:
    body = model("CreditNoteInput")(line_items=[line("Unused hours", 10, 1)], reason="two hours unused")
    note = call("create_credit_note", 201, model("CreditNoteBody"), id=s["owed"].id, body=body).parsed
    check(note.serial.startswith("CN-") and note.total == 10, f"credit note {note.serial} {note.total}")
    check((note.applied_to_invoice, note.refundable) == (10, 0), f"applied {note.applied_to_invoice}")
    listed = call("list_credit_notes", 200, [model("CreditNoteBody")], invoice_id=s["owed"].id).parsed
    check([n.id for n in listed] == [note.id], "listed by invoice")
    call("get_credit_note", 200, model("CreditNoteBody"), id=note.id)
    response = call("credit_note_pdf", 200, File, via=public, id=note.id)
    check(response.content.startswith(b"%PDF"), "a PDF")
    i = call("get_invoice", 200, model("InvoiceBody"), id=s["owed"].id).parsed
    check((i.amount_credited, i.amount_due) == (10, 20), f"balance {i.amount_credited} {i.amount_due}")


@step("the books: what each client owes, and the team's payments (200 lists)")
def _(s: dict[str, Any]) -> None:
    owed = call("receivables_report", 200, [model("ReceivableBody")], as_of=date(2026, 11, 30)).parsed
    row = [r for r in owed if r.client_id == s["invoice"].client_id]
    check(len(row) == 1 and row[0].total == 20 and row[0].currency == "USD", f"receivables {owed}")
    payments = call("list_payments", 200, [model("PaymentBody")], invoice_id=s["owed"].id).parsed
    check(len(payments) == 2, f"{len(payments)} payments")


@step("the books: writing off what is due expires the invoice (200 InvoiceBody)")
def _(s: dict[str, Any]) -> None:
    i = call("write_off", 200, model("InvoiceBody"), id=s["owed"].id, body=model("ReasonInput")(reason="client gone")).parsed
    enum_value(i.status, "InvoiceStatus", "EXPIRED", "status")
    check((i.amount_written_off, i.amount_due) == (20, 0), f"written off {i.amount_written_off}")


@step("the invoice PDF, without a key (200 %PDF bytes, inline)")
def _(s: dict[str, Any]) -> None:
    response = call("invoice_pdf", 200, File, via=public, id=s["invoice"].id)
    check(response.content.startswith(b"%PDF"), f"content starts {response.content[:16]!r}")
    check(response.parsed.payload.read() == response.content, "the parsed File does not hold the body")
    disposition = response.headers.get("content-disposition", "")
    check(disposition == f'inline; filename="{s["invoice"].serial}.pdf"', f"Content-Disposition {disposition!r}")


@step("the invoice's pdfUrl is the link the PDF is served at, relative to the server")
def _(s: dict[str, Any]) -> None:
    i = s["invoice"]
    check(i.pdf_url == f"/v1/invoices/pdf?id={i.id}", f"pdfUrl {i.pdf_url}")
    response = public.get_httpx_client().get(i.pdf_url)
    check(response.status_code == 200 and response.content.startswith(b"%PDF"), f"GET pdfUrl: {response.status_code}")


@step("the invoice PDF with download=true (200 %PDF bytes, attachment)")
def _(s: dict[str, Any]) -> None:
    response = call("invoice_pdf", 200, File, via=public, id=s["invoice"].id, download=True)
    check(response.content.startswith(b"%PDF"), f"content starts {response.content[:16]!r}")
    disposition = response.headers.get("content-disposition", "")
    check(disposition == f'attachment; filename="{s["invoice"].serial}.pdf"', f"Content-Disposition {disposition!r}")


@step("the team: rename it (200 TeamBody); its currency stays once it has invoices (409 naming currency)")
def _(s: dict[str, Any]) -> None:
    team = call("get_team", 200, model("TeamBody")).parsed
    renamed = call("update_team", 200, model("TeamBody"), body=model("TeamPatch")(name=f"{team.name} Ltd")).parsed
    check((renamed.id, renamed.name, renamed.currency) == (team.id, f"{team.name} Ltd", team.currency), f"{renamed}")
    other = "EUR" if team.currency != "EUR" else "USD"
    error_call("update_team", 409, "currency: ", body=model("TeamPatch")(currency=other))
    call("update_team", 200, model("TeamBody"), body=model("TeamPatch")(name=team.name))


@step("mark an invoice sent by other means (200 InvoiceBody with sentAt), once")
def _(s: dict[str, Any]) -> None:
    i = call("mark_invoice_sent", 200, model("InvoiceBody"), id=s["invoice"].id).parsed
    check(isinstance(i.sent_at, datetime), f"sentAt {i.sent_at}")
    again = call("mark_invoice_sent", 200, model("InvoiceBody"), id=s["invoice"].id).parsed
    check(again.sent_at == i.sent_at, f"marked again: {again.sent_at} after {i.sent_at}")


@step("an invoice with a bad line item (400 ErrorBody naming lineItems[0].quantity)")
def _(s: dict[str, Any]) -> None:
    body = model("InvoiceInput")(line_items=[line("Nothing", 10, 0)], client_id=str(s["client"].id))
    error_call("create_invoice", 400, "lineItems[0].quantity:", body=body)


@step("an unknown invoice id (404 ErrorBody)")
def _(s: dict[str, Any]) -> None:
    error_call("get_invoice", 404, "invoice not found", id=uuid.uuid4())


@step("a client that has invoices cannot be deleted (409 ErrorBody)")
def _(s: dict[str, Any]) -> None:
    error_call("delete_client", 409, "client has invoices", id=s["client"].id)


@step("delete the client's invoice (200 Deleted)")
def _(s: dict[str, Any]) -> None:
    d = call("delete_invoice", 200, model("Deleted"), id=s["invoice2"].id).parsed
    check(d.message == "invoice deleted", f"message {d.message!r}")


@step("delete the client (200 Deleted)")
def _(s: dict[str, Any]) -> None:
    d = call("delete_client", 200, model("Deleted"), id=s["client"].id).parsed
    check(d.message == "client deleted", f"message {d.message!r}")


@step("the deleted client is gone (404 ErrorBody)")
def _(s: dict[str, Any]) -> None:
    error_call("get_client", 404, "client not found", id=s["client"].id)


# Tags, projects, sections


@step("create a tag (201 TagBody)")
def _(s: dict[str, Any]) -> None:
    t = call("create_tag", 201, model("TagBody"), body=model("TagInput")(title="billable")).parsed
    check(t.title == "billable", f"tag {t}")
    s["tag"] = t


@step("rename the tag (200 TagBody)")
def _(s: dict[str, Any]) -> None:
    t = call("rename_tag", 200, model("TagBody"), id=s["tag"].id, body=model("TagInput")(title="Billable")).parsed
    check(t.id == s["tag"].id and t.title == "Billable", f"tag {t}")
    s["tag"] = t


@step("list tags (200 list[TagBody]) holds the tag")
def _(s: dict[str, Any]) -> None:
    listed = call("list_tags", 200, [model("TagBody")]).parsed
    check([t.title for t in listed if t.id == s["tag"].id] == ["Billable"], "the tag is not listed")


@step("create a project (201 ProjectBody, ACTIVE)")
def _(s: dict[str, Any]) -> None:
    body = model("ProjectInput")(title="Website relaunch", code="WEB")
    p = call("create_project", 201, model("ProjectBody"), body=body).parsed
    check(p.title == "Website relaunch" and p.code == "WEB", f"project {p}")
    enum_value(p.status, "ProjectStatus", "ACTIVE", "status")
    s["project"] = p


@step("PUT the project: title and status (200 ProjectBody)")
def _(s: dict[str, Any]) -> None:
    data = model("ProjectData")(title="Website relaunch 2026", status=model("ProjectStatus")("COMPLETED"))
    body = model("ProjectUpdate")(id=str(s["project"].id), data=data)
    p = call("update_project", 200, model("ProjectBody"), id=s["project"].id, body=body).parsed
    check(p.title == "Website relaunch 2026" and p.code == "WEB", f"project {p}")
    enum_value(p.status, "ProjectStatus", "COMPLETED", "status")


@step("list projects (200 list[ProjectBody]) holds the project")
def _(s: dict[str, Any]) -> None:
    listed = call("list_projects", 200, [model("ProjectBody")]).parsed
    check([p.title for p in listed if p.id == s["project"].id] == ["Website relaunch 2026"], "not listed")


@step("create a section (201 SectionBody)")
def _(s: dict[str, Any]) -> None:
    body = model("SectionInput")(title="Design", project_id=str(s["project"].id))
    x = call("create_section", 201, model("SectionBody"), body=body).parsed
    check(x.title == "Design" and x.project_id == s["project"].id, f"section {x}")
    s["section"] = x


@step("list the project's sections (200 list[SectionBody])")
def _(s: dict[str, Any]) -> None:
    listed = call("list_sections", 200, [model("SectionBody")], project_id=s["project"].id).parsed
    check([x.id for x in listed] == [s["section"].id], f"listed {[x.id for x in listed]}")


@step("PUT the section: rename (200 SectionBody)")
def _(s: dict[str, Any]) -> None:
    body = model("SectionUpdate")(title="UX design")
    x = call("update_section", 200, model("SectionBody"), id=s["section"].id, body=body).parsed
    check(x.title == "UX design" and x.project_id == s["project"].id, f"section {x}")


# Time entries


@step("create a time entry in the section, with a tag [{id, title}] (201 TimeEntryBody)")
def _(s: dict[str, Any]) -> None:
    tag = model("EntryTagInput")(id=s["tag"].id, title=s["tag"].title)
    body = model("TimeEntryInput")(
        duration_seconds=3600,
        task_name="Wireframes",
        description="First pass",
        date=utc("2026-11-18T09:30:00Z"),
        section_id=s["section"].id,
        tags=[tag],
    )
    e = call("create_time", 201, model("TimeEntryBody"), body=body).parsed
    check(e.duration_seconds == 3600 and e.task_name == "Wireframes", f"entry {e}")
    check(e.date == utc("2026-11-18T09:30:00Z") and e.ai_generated is False, f"entry {e}")
    check(e.section_id == s["section"].id and e.project_id == s["project"].id, "the section sets the project")
    check([(t.id, t.title) for t in e.tags] == [(s["tag"].id, "Billable")], f"tags {e.tags}")
    s["entry"] = e


@step("get the time entry (200 TimeEntryBody)")
def _(s: dict[str, Any]) -> None:
    e = call("get_time", 200, model("TimeEntryBody"), id=s["entry"].id).parsed
    check(e.id == s["entry"].id and e.description == "First pass", f"entry {e}")


@step("PATCH the time entry: duration, task, clear the description (200 TimeEntryBody)")
def _(s: dict[str, Any]) -> None:
    body = model("TimeEntryPatch")(duration_seconds=5400, task_name="Wireframes v2", description=None)
    e = call("update_time", 200, model("TimeEntryBody"), id=s["entry"].id, body=body).parsed
    check((e.duration_seconds, e.task_name, e.description) == (5400, "Wireframes v2", None), f"entry {e}")
    check(len(e.tags) == 1 and e.section_id == s["section"].id, "fields not given changed")


# The running timer


@step("no timer is running (404 ErrorBody)")
def _(s: dict[str, Any]) -> None:
    error_call("get_timer", 404, "no timer is running")


@step("start a timer in the section, with the tag (201 TimerBody)")
def _(s: dict[str, Any]) -> None:
    tag = model("EntryTagInput")(id=s["tag"].id, title=s["tag"].title)
    body = model("TimerInput")(task_name="Review", section_id=s["section"].id, tags=[tag])
    t = call("start_timer", 201, model("TimerBody"), body=body).parsed
    check(t.project_id == s["project"].id and t.section_id == s["section"].id, f"timer {t}")
    check(t.elapsed_seconds >= 1 and t.description is None, f"timer {t}")
    s["timer"] = t


@step("a second timer is refused while one runs (409 ErrorBody)")
def _(s: dict[str, Any]) -> None:
    body = model("TimerInput")(task_name="Something else")
    error_call("start_timer", 409, "a timer is already running", body=body)


@step("get the running timer (200 TimerBody)")
def _(s: dict[str, Any]) -> None:
    t = call("get_timer", 200, model("TimerBody")).parsed
    check(t.id == s["timer"].id and t.started_at == s["timer"].started_at, f"timer {t}")


@step("stop the timer: a time entry dated at its start (201 TimeEntryBody)")
def _(s: dict[str, Any]) -> None:
    e = call("stop_timer", 201, model("TimeEntryBody")).parsed
    check(e.date == s["timer"].started_at and e.duration_seconds >= 1, f"entry {e}")
    check(e.task_name == "Review" and [t.id for t in e.tags] == [s["tag"].id], f"entry {e}")
    error_call("get_timer", 404, "no timer is running")
    call("delete_time", 200, model("Deleted"), id=e.id)


def listed_entries(day: str, frequency: str) -> list[Any]:
    f = model("Frequency")(frequency)
    return call("list_time", 200, [model("TimeEntryBody")], date=date.fromisoformat(day), frequency=f).parsed


@step("list time by date, frequency week (200 list[TimeEntryBody])")
def _(s: dict[str, Any]) -> None:
    check([e.id for e in listed_entries("2026-11-22", "week")] == [s["entry"].id], "not in its ISO week")
    check(listed_entries("2026-11-23", "week") == [], "listed in the next week")


@step("list time by date, frequency month (200 list[TimeEntryBody])")
def _(s: dict[str, Any]) -> None:
    check([e.id for e in listed_entries("2026-11-01", "month")] == [s["entry"].id], "not in its month")
    check(listed_entries("2026-12-01", "month") == [], "listed in the next month")


@step("delete the time entry (200 Deleted)")
def _(s: dict[str, Any]) -> None:
    d = call("delete_time", 200, model("Deleted"), id=s["entry"].id).parsed
    check(d.message == "time entry deleted", f"message {d.message!r}")


@step("the deleted time entry is gone (404 ErrorBody)")
def _(s: dict[str, Any]) -> None:
    error_call("get_time", 404, "time entry not found", id=s["entry"].id)


@step("delete the section (200 Deleted)")
def _(s: dict[str, Any]) -> None:
    d = call("delete_section", 200, model("Deleted"), id=s["section"].id).parsed
    check(d.message == "section deleted", f"message {d.message!r}")


@step("delete the project (200 Deleted)")
def _(s: dict[str, Any]) -> None:
    d = call("delete_project", 200, model("Deleted"), id=s["project"].id).parsed
    check(d.message == "project deleted", f"message {d.message!r}")


@step("delete the tag (200 Deleted)")
def _(s: dict[str, Any]) -> None:
    d = call("delete_tag", 200, model("Deleted"), id=s["tag"].id).parsed
    check(d.message == "tag deleted", f"message {d.message!r}")


# A month of tracked time becomes an invoice

OCTOBER = {"from_": date(2026, 10, 1), "to": date(2026, 10, 31)}


@step("log a month of time on a project with an hourly rate (201 ProjectBody, 201 TimeEntryBody)")
def _(s: dict[str, Any]) -> None:
    p = call("create_project", 201, model("ProjectBody"), body=model("ProjectInput")(title="Support", rate=120)).parsed
    check(p.rate == 120, f"rate {p.rate}")
    s["rated"], s["month"] = p, []
    for day, seconds in [("2026-10-05T10:00:00Z", 3600), ("2026-10-12T10:00:00Z", 1800), ("2026-10-31T23:59:59Z", 900)]:
        body = model("TimeEntryInput")(duration_seconds=seconds, task_name="Calls", date=utc(day), project_id=p.id)
        e = call("create_time", 201, model("TimeEntryBody"), body=body).parsed
        check(e.billable is True and e.invoice_id is None, f"entry {e}")
        s["month"].append(e)
    body = model("TimeEntryInput")(
        duration_seconds=7200, task_name="Internal", date=utc("2026-10-20T10:00:00Z"), project_id=p.id, billable=False
    )
    s["unbillable"] = call("create_time", 201, model("TimeEntryBody"), body=body).parsed


@step("report the month by project (200 ReportBody)")
def _(s: dict[str, Any]) -> None:
    r = call("get_report", 200, model("ReportBody"), group_by=model("ReportGroupBy")("project"), **OCTOBER).parsed
    group = next(g for g in r.groups if g.key == str(s["rated"].id))
    check((group.seconds, group.billable_seconds, group.amount) == (13500, 6300, 210), f"group {group}")


def month_bill(s: dict[str, Any], **extra: Any) -> Any:
    return model("TimeInvoiceInput")(
        client_id=str(s["invoice"].client_id), project_ids=[str(s["rated"].id)], **OCTOBER, **extra
    )


@step("preview the month's invoice, rounded up to 15 minutes (200 TimeInvoiceBody, nothing written)")
def _(s: dict[str, Any]) -> None:
    rounding = model("RoundingInput")(minutes=15, mode=model("RoundingMode")("up"))
    i = call("invoice_time", 200, model("TimeInvoiceBody"), body=month_bill(s, rounding=rounding, preview=True)).parsed
    check(i.skipped_entries == [], f"skipped {i.skipped_entries}")
    check([(li.description, li.quantity, li.unit_price) for li in i.line_items] == [("Support", 1.75, 120)], f"{i}")
    check(i.total == 210, f"total {i.total}")
    e = call("get_time", 200, model("TimeEntryBody"), id=s["month"][0].id).parsed
    check(e.invoice_id is None, "the preview billed an entry")


@step("bill the month (201 TimeInvoiceBody): its entries carry the invoice and are locked (409)")
def _(s: dict[str, Any]) -> None:
    i = call("invoice_time", 201, model("TimeInvoiceBody"), body=month_bill(s)).parsed
    check(i.skipped_entries == [], f"skipped {i.skipped_entries}")
    check(i.total == 210 and re.fullmatch(r"INV-\d{4}", i.serial) is not None, f"invoice {i}")
    for entry in s["month"]:
        e = call("get_time", 200, model("TimeEntryBody"), id=entry.id).parsed
        check(e.invoice_id == i.id, f"entry {e.id} is billed by {e.invoice_id}")
    free = call("get_time", 200, model("TimeEntryBody"), id=s["unbillable"].id).parsed
    check(free.invoice_id is None, "time not billable was billed")
    locked = model("TimeEntryPatch")(duration_seconds=60)
    error_call("update_time", 409, "invoiceId: ", id=s["month"][0].id, body=locked)
    error_call("delete_time", 409, "invoiceId: ", id=s["month"][0].id)
    error_call("invoice_time", 400, "from: no billable time", body=month_bill(s))
    s["time_invoice"] = i


@step("delete the month's invoice: its time is released (200 Deleted, invoiceId null)")
def _(s: dict[str, Any]) -> None:
    call("delete_invoice", 200, model("Deleted"), id=s["time_invoice"].id)
    for entry in [*s["month"], s["unbillable"]]:
        e = call("get_time", 200, model("TimeEntryBody"), id=entry.id).parsed
        check(e.invoice_id is None, f"entry {e.id} still billed")
        call("delete_time", 200, model("Deleted"), id=entry.id)
    call("delete_project", 200, model("Deleted"), id=s["rated"].id)


# Webhooks: the endpoint is the receiver on 127.0.0.1, which verifies every delivery with
# the official Standard Webhooks library. Before sending, so that the invoice's events
# reach it too.


@step("list the webhook event types (200 list[EventTypeBody]) holds invoice.paid")
def _(s: dict[str, Any]) -> None:
    types = call("list_event_types", 200, [model("EventTypeBody")]).parsed
    paid = [t for t in types if t.type_ == model("EventType")("invoice.paid")]
    check(len(paid) == 1, f"types {[t.type_.value for t in types]}")
    check(paid[0].permission == "invoices:read" and paid[0].description != "", f"invoice.paid {paid[0]}")


@step("subscribe the receiver to invoice.* and payment.created (201 EndpointWithSecret, a whsec_ secret)")
def _(s: dict[str, Any]) -> None:
    pattern = model("EventPattern")
    body = model("EndpointInput")(
        url=f"{WEBHOOK_RECEIVER}/billable",
        events=[pattern("invoice.*"), pattern("payment.created")],
        description="Bookkeeping sync",
    )
    response = call("create_webhook_endpoint", 201, model("EndpointWithSecret"), body=body)
    e = response.parsed
    check(e.secret.startswith("whsec_") and len(e.secret) > 30, f"secret {e.secret!r}")
    check(e.events == ["invoice.*", "payment.created"] and e.description == "Bookkeeping sync", f"endpoint {e}")
    check(e.enabled and e.disabled_at is None and e.previous_secret_expires_at is None, f"endpoint {e}")
    check(response.headers.get("location") == f"/v1/webhooks/{e.id}", f"Location {response.headers.get('location')!r}")
    verify_with(e.secret)
    s["endpoint"] = e


@step("list the endpoints, get it (200 list[EndpointBody], EndpointBody: no secret)")
def _(s: dict[str, Any]) -> None:
    listed = call("list_webhook_endpoints", 200, [model("EndpointBody")]).parsed
    check([e.id for e in listed] == [s["endpoint"].id], f"listed {[e.id for e in listed]}")
    e = call("get_webhook_endpoint", 200, model("EndpointBody"), id=s["endpoint"].id).parsed
    check(e.url == f"{WEBHOOK_RECEIVER}/billable" and e.created_at == s["endpoint"].created_at, f"endpoint {e}")


@step("PATCH the endpoint's description: the rest stays (200 EndpointBody)")
def _(s: dict[str, Any]) -> None:
    body = model("EndpointPatch")(description="Bookkeeping sync, ledger")
    e = call("update_webhook_endpoint", 200, model("EndpointBody"), id=s["endpoint"].id, body=body).parsed
    check(e.description == "Bookkeeping sync, ledger", f"description {e.description!r}")
    check(e.events == ["invoice.*", "payment.created"] and e.enabled, f"endpoint {e}")
    check(e.updated_at >= s["endpoint"].updated_at, f"updatedAt {e.updated_at}")


def delivery(s: dict[str, Any], delivery_id: Any) -> Any:
    """The endpoint's delivery `delivery_id` once it is no longer pending."""
    def fetch() -> Any:
        listed = call("list_webhook_deliveries", 200, [model("WebhookDeliveryBody")], id=s["endpoint"].id).parsed
        return next((d for d in listed if d.id == delivery_id), None)

    return until("the delivery", fetch, lambda d: d is not None and d.status.value != "pending")


@step("send a test event: delivered, verified with the secret (202 WebhookDeliveryBody, then succeeded)")
def _(s: dict[str, Any]) -> None:
    queued = call("test_webhook_endpoint", 202, model("WebhookDeliveryBody"), id=s["endpoint"].id).parsed
    enum_value(queued.event_type, "EventType", "webhook.test", "eventType")
    enum_value(queued.status, "DeliveryStatus", "pending", "status")
    d = delivery(s, queued.id)
    enum_value(d.status, "DeliveryStatus", "succeeded", "status")
    check((d.attempts, d.response_status, d.error) == (1, 204, None), f"delivery {d}")
    check(d.event_id == queued.event_id and d.last_attempt_at is not None, f"delivery {d}")
    got = received(d.event_id)
    check(len(got) == 1, f"{len(got)} deliveries of {d.event_id} received")
    check(got[0]["verified"] == {s["endpoint"].secret: True}, f"verified {got[0]['verified']}")
    event = json.loads(got[0]["body"])
    check(event["type"] == "webhook.test" and event["data"]["endpointId"] == str(s["endpoint"].id), f"event {event}")
    s["test_delivery"] = d


@step("rotate the secret with no body: the old one signs a day more (200 EndpointWithSecret)")
def _(s: dict[str, Any]) -> None:
    before = datetime.now(timezone.utc)
    e = call("rotate_webhook_secret", 200, model("EndpointWithSecret"), id=s["endpoint"].id).parsed
    check(e.secret.startswith("whsec_") and e.secret != s["endpoint"].secret, "a new secret")
    overlap = e.previous_secret_expires_at - before if e.previous_secret_expires_at else None
    check(overlap is not None and timedelta(hours=23) < overlap <= timedelta(days=1, minutes=1),
          f"previousSecretExpiresAt {e.previous_secret_expires_at}")
    s["old_secret"], s["endpoint"] = s["endpoint"].secret, e


@step("redeliver the test event: the same webhook-id, signed with both secrets (202 WebhookDeliveryBody)")
def _(s: dict[str, Any]) -> None:
    verify_with(s["old_secret"], s["endpoint"].secret)
    test = s["test_delivery"]
    queued = call(
        "redeliver_webhook", 202, model("WebhookDeliveryBody"), id=s["endpoint"].id, delivery_id=test.id
    ).parsed
    check(queued.id == test.id and queued.event_id == test.event_id, f"redelivery {queued}")
    enum_value(queued.status, "DeliveryStatus", "pending", "status")
    d = delivery(s, test.id)
    enum_value(d.status, "DeliveryStatus", "succeeded", "status")
    check(d.attempts == 2, f"attempts {d.attempts}")
    got = received(test.event_id)
    check(len(got) == 2 and got[0]["body"] == got[1]["body"], f"{len(got)} deliveries of {test.event_id}")
    both = {s["old_secret"]: True, s["endpoint"].secret: True}
    check(got[1]["verified"] == both, f"verified {got[1]['verified']}")
    check(len(got[1]["webhook_signature"].split()) == 2, f"webhook-signature {got[1]['webhook_signature']!r}")


# Sending: e-mail to a real SMTP server (tests/mail/smtp_server.py), which parses each mail.


def mails() -> list[dict[str, Any]]:
    """Every mail the SMTP server took so far."""
    return json_lines(SMTP_MAILS)


def sent(message: Any) -> Any:
    """The message once the job pass is done with it, and sent."""
    def fetch() -> Any:
        return call("get_message", 200, model("MessageBody"), id=message.id).parsed

    m = until(f"message {message.id}", fetch, lambda m: m.status.value not in ("queued", "sending"))
    enum_value(m.status, "MessageStatus", "sent", "status")
    check(m.sent_at is not None and m.attempts == 1 and m.last_error is None, f"message {m}")
    return m


def mail_of(message: Any) -> dict[str, Any]:
    """The mail the SMTP server took for `message`: its Message-ID is `<messageId>`."""
    found = [mail for mail in mails() if mail["message_id"] == f"<{message.message_id}>"]
    check(len(found) == 1, f"{len(found)} mails with Message-ID <{message.message_id}>")
    return found[0]


@step("create an invoice due in 30 days for a client with an email (201 InvoiceBody)")
def _(s: dict[str, Any]) -> None:
    due = datetime.combine(date.today() + timedelta(days=30), datetime.min.time(), timezone.utc)
    body = model("InvoiceInput")(
        line_items=[line("Support, November", 120, 2)],
        client=model("InlineClientInput")(email="ap@initech.example", name="Initech"),
        due_date=due,
    )
    i = call("create_invoice", 201, model("InvoiceBody"), body=body).parsed
    check(i.due_date == due and i.sent_at is None and i.next_reminder_at is None, f"invoice {i}")
    s["sending"] = i


@step("send the invoice to an address, its subject with placeholders (202 MessageBody, queued, kind invoice)")
def _(s: dict[str, Any]) -> None:
    body = model("SendInput")(to=["accounts@initech.example"], subject="Invoice {serial} for {client}")
    response = call("send_invoice", 202, model("MessageBody"), id=s["sending"].id, body=body)
    m = response.parsed
    enum_value(m.status, "MessageStatus", "queued", "status")
    enum_value(m.kind, "MessageKind", "invoice", "kind")
    check(m.subject == f"Invoice {s['sending'].serial} for Initech", f"subject {m.subject!r}")
    check((m.to, m.cc, m.invoice_id, m.sent_at) == (["accounts@initech.example"], [], s["sending"].id, None), f"{m}")
    check([(a.filename, a.content_type) for a in m.attachments] == [(f"{s['sending'].serial}.pdf", "application/pdf")],
          f"attachments {m.attachments}")
    check(response.headers.get("location") == f"/v1/messages/{m.id}", f"Location {response.headers.get('location')!r}")
    s["message"] = m


@step("send the invoice with no body at all: the client's email, the default wording (202 MessageBody)")
def _(s: dict[str, Any]) -> None:
    m = call("send_invoice", 202, model("MessageBody"), id=s["sending"].id).parsed
    enum_value(m.kind, "MessageKind", "invoice", "kind")
    check(m.to == ["ap@initech.example"] and m.subject == f"Invoice {s['sending'].serial}", f"message {m}")
    check(len(m.attachments) == 1 and m.message_id != s["message"].message_id, f"message {m}")
    s["default_message"] = m


@step("both are sent (200 MessageBody until sent); the SMTP server took them, with the PDF attached")
def _(s: dict[str, Any]) -> None:
    serial = s["sending"].serial
    for message, to, subject in [
        (s["message"], "accounts@initech.example", f"Invoice {serial} for Initech"),
        (s["default_message"], "ap@initech.example", f"Invoice {serial}"),
    ]:
        m = sent(message)
        mail = mail_of(m)
        check((mail["to"], mail["subject"]) == (to, subject), f"mail to {mail['to']!r}: {mail['subject']!r}")
        check(mail["from"] == "billing@billable.localhost", f"From {mail['from']!r}")
        check(serial in mail["body"], f"body {mail['body']!r}")
        pdfs = [(a["filename"], a["content_type"], a["size"]) for a in mail["attachments"]]
        check(len(pdfs) == 1 and pdfs[0][:2] == (f"{serial}.pdf", "application/pdf") and pdfs[0][2] > 1000,
              f"attachments {pdfs}")
        check(mail["attachments"][0]["sha256"] == m.attachments[0].sha256, "the PDF sent is the one queued")
    i = call("get_invoice", 200, model("InvoiceBody"), id=s["sending"].id).parsed
    check(i.sent_at is not None, "the invoice's sentAt is not set")


@step("list messages by status sent, and the invoice's messages (200 list[MessageBody])")
def _(s: dict[str, Any]) -> None:
    both = [s["default_message"].id, s["message"].id]
    listed = call("list_messages", 200, [model("MessageBody")], status=model("MessageStatus")("sent")).parsed
    check([m.id for m in listed] == both, f"sent {[m.id for m in listed]}, newest first")
    check(all(m.status.value == "sent" for m in listed), "a message not sent")
    mine = call("list_invoice_messages", 200, [model("MessageBody")], id=s["sending"].id).parsed
    check([m.id for m in mine] == both, f"the invoice's {[m.id for m in mine]}, newest first")


@step("the receiver got invoice.created and invoice.sent of the invoice, verified")
def _(s: dict[str, Any]) -> None:
    invoice = str(s["sending"].id)

    def events() -> list[tuple[str, bool]]:
        found = []
        for d in json_lines(WEBHOOK_DELIVERIES):
            event = json.loads(d["body"])
            if event["data"].get("id") == invoice:
                found.append((event["type"], d["verified"].get(s["endpoint"].secret) is True))
        return found

    got = until("the invoice's events", events, lambda got: ("invoice.sent", True) in got)
    check(("invoice.created", True) in got, f"events {got}")
    check(all(ok for _, ok in got), f"events {got}")


# Reminders


@step("an enabled reminder policy without steps (400 ErrorBody naming steps)")
def _(s: dict[str, Any]) -> None:
    body = model("ReminderPolicyInput")(enabled=True)
    error_call("put_policy", 400, "steps: an enabled policy needs at least one step", body=body)


@step("PUT the reminder policy: 3 days before the due date and 7 after (200 ReminderPolicyBody)")
def _(s: dict[str, Any]) -> None:
    steps = [model("ReminderStepBody")(days_after_due=-3), model("ReminderStepBody")(days_after_due=7)]
    body = model("ReminderPolicyInput")(enabled=True, steps=steps)
    p = call("put_policy", 200, model("ReminderPolicyBody"), body=body).parsed
    check(p.enabled and [x.days_after_due for x in p.steps] == [-3, 7], f"policy {p}")
    check("{serial}" in p.subject, f"the default subject {p.subject!r}")
    s["policy"] = p


@step("get the reminder policy (200 ReminderPolicyBody)")
def _(s: dict[str, Any]) -> None:
    p = call("get_policy", 200, model("ReminderPolicyBody")).parsed
    check(p.to_dict() == s["policy"].to_dict(), f"policy {p}")


@step("the invoice's next reminder is 3 days before its due date (200 InvoiceBody, nextReminderAt)")
def _(s: dict[str, Any]) -> None:
    i = call("get_invoice", 200, model("InvoiceBody"), id=s["sending"].id).parsed
    check(i.next_reminder_at == i.due_date - timedelta(days=3),
          f"nextReminderAt {i.next_reminder_at}, due {i.due_date}")
    check(i.reminders_sent == 0, f"remindersSent {i.reminders_sent}")


@step("remind of the invoice now, with no body: sent in the policy's words (202 MessageBody, kind reminder)")
def _(s: dict[str, Any]) -> None:
    queued = call("remind_invoice", 202, model("MessageBody"), id=s["sending"].id).parsed
    enum_value(queued.kind, "MessageKind", "reminder", "kind")
    check(queued.to == ["ap@initech.example"] and queued.attachments == [], f"reminder {queued}")
    check(queued.reminder_step is None, "a reminder by hand takes no step of the policy")
    mail = mail_of(sent(queued))
    check(mail["subject"] == queued.subject and s["sending"].serial in mail["subject"], f"subject {mail['subject']!r}")
    check(mail["attachments"] == [], f"attachments {mail['attachments']}")


@step("delete the endpoint (200 Deleted); it is gone (404 ErrorBody)")
def _(s: dict[str, Any]) -> None:
    d = call("delete_webhook_endpoint", 200, model("Deleted"), id=s["endpoint"].id).parsed
    check(d.message == "webhook endpoint deleted", f"message {d.message!r}")
    error_call("get_webhook_endpoint", 404, "webhook endpoint not found", id=s["endpoint"].id)


# Recurring invoices: a retainer billed on the last day of each month. The passes that make
# its invoices are driven by other tests (`billable jobs run --at`); here, its life.


@step("create a recurring invoice: monthly on the last day, 12 periods (201 RecurringBody)")
def _(s: dict[str, Any]) -> None:
    retained = model("ClientInput")(name="Initech", email="ap@initech.example", line1="1 Main St", postal_code="10001")
    client_id = call("create_client", 201, model("ClientBody"), body=retained).parsed.id
    body = model("RecurringInput")(
        client_id=str(client_id),
        template=model("TemplateInput")(line_items=[line("Retainer", 1500, 1)], tax_percentage=19, due_days=14),
        schedule=model("ScheduleBody")(frequency=model("RecurringFrequency")("monthly"), day_of_month=-1),
        starts_on=date(2030, 1, 1),
        count=12,
    )
    r = call("create_recurring_invoice", 201, model("RecurringBody"), body=body).parsed
    enum_value(r.status, "RecurringStatus", "active", "status")
    check((r.next_run_on, r.generated_count, r.count) == (date(2030, 1, 31), 0, 12), f"recurring {r}")
    check(r.schedule.rrule == "FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=-1;COUNT=12", f"rrule {r.schedule.rrule!r}")
    s["recurring"] = r


@step("list and get it (200 list[RecurringBody], RecurringBody)")
def _(s: dict[str, Any]) -> None:
    listed = call("list_recurring_invoices", 200, [model("RecurringBody")]).parsed
    check(s["recurring"].id in [r.id for r in listed], "the recurring invoice is not listed")
    got = call("get_recurring_invoice", 200, model("RecurringBody"), id=s["recurring"].id).parsed
    check(got.template.line_items[0].unit_price == 1500, f"template {got.template}")


@step("preview its next dates: 31 January, 28 February, 31 March 2030 (200 list[PreviewPeriod])")
def _(s: dict[str, Any]) -> None:
    periods = call("preview_recurring_invoice", 200, [model("PreviewPeriod")], id=s["recurring"].id, count=3).parsed
    check([p.period_start for p in periods] == [date(2030, 1, 31), date(2030, 2, 28), date(2030, 3, 31)],
          f"periods {periods}")
    check(periods[0].due_date == date(2030, 2, 14) and periods[0].time_from is None, f"first {periods[0]}")


@step("change its price for the periods to come (200 RecurringBody)")
def _(s: dict[str, Any]) -> None:
    body = model("RecurringPatch")(template=model("TemplateInput")(line_items=[line("Retainer", 1650, 1)]))
    r = call("update_recurring_invoice", 200, model("RecurringBody"), id=s["recurring"].id, body=body).parsed
    check(r.template.line_items[0].unit_price == 1650 and r.next_run_on == date(2030, 1, 31), f"changed {r}")


@step("pause and resume it (200 RecurringBody)")
def _(s: dict[str, Any]) -> None:
    paused = call("pause_recurring_invoice", 200, model("RecurringBody"), id=s["recurring"].id).parsed
    enum_value(paused.status, "RecurringStatus", "paused", "status")
    check(paused.next_run_on is None, f"nextRunOn {paused.next_run_on!r}")
    resumed = call("resume_recurring_invoice", 200, model("RecurringBody"), id=s["recurring"].id).parsed
    enum_value(resumed.status, "RecurringStatus", "active", "status")
    check(resumed.next_run_on == date(2030, 1, 31), f"nextRunOn {resumed.next_run_on!r}")


@step("its runs: none yet (200 list[RecurringRunBody]); end it (200 Deleted), then 404")
def _(s: dict[str, Any]) -> None:
    runs = call("list_recurring_runs", 200, [model("RecurringRunBody")], id=s["recurring"].id).parsed
    check(runs == [], f"runs {runs}")
    d = call("delete_recurring_invoice", 200, model("Deleted"), id=s["recurring"].id).parsed
    check(d.message == "recurring invoice deleted", f"message {d.message!r}")
    error_call("get_recurring_invoice", 404, "recurring invoice not found", id=s["recurring"].id)


# Quotes


@step("a quote from draft to accepted, a 30 % deposit and the final invoice that deducts it (QuoteBody, InvoiceBody)")
def _(s: dict[str, Any]) -> None:
    who = model("ClientInput")(
        name="Initech", email="ap@initech.example", line1="4120 Freidrich Lane", postal_code="78744"
    )
    buyer = call("create_client", 201, model("ClientBody"), body=who).parsed
    body = model("QuoteInput")(
        client_id=str(buyer.id),
        line_items=[line("Design", 800, 5), line("Hosting", 40, 2)],
        tax_percentage=10,
        description="Website redesign",
    )
    q = call("create_quote", 201, model("QuoteBody"), body=body).parsed
    check(q.serial is None and (q.subtotal, q.tax, q.total) == (4080, 408, 4488), f"draft {q}")
    enum_value(q.status, "QuoteStatus", "DRAFT", "status")
    q = call("finalize_quote", 200, model("QuoteBody"), id=q.id).parsed
    check(re.fullmatch(r"Q-\d{4}", q.serial or "") is not None, f"serial {q.serial!r}")
    enum_value(q.status, "QuoteStatus", "SENT", "status")
    accept = model("AcceptInput")(signer_name="Bill Lumbergh")
    q = call("accept_quote", 200, model("QuoteBody"), id=q.id, body=accept).parsed
    enum_value(q.status, "QuoteStatus", "ACCEPTED", "status")
    check(q.decision.signer_name == "Bill Lumbergh" and q.decision.source == "team", f"decision {q.decision}")
    deposit = call(
        "convert_quote", 201, model("InvoiceBody"), id=q.id,
        body=model("ConvertInput")(mode="deposit", deposit_percent=30),
    ).parsed
    check(deposit.quote_conversion == "deposit" and deposit.quote_id == q.id, f"deposit {deposit}")
    check((deposit.taxable_amount, deposit.tax, deposit.total) == (1224, 122.4, 1346.4), f"deposit {deposit.total}")
    last = call(
        "convert_quote", 201, model("InvoiceBody"), id=q.id, body=model("ConvertInput")(mode="full")
    ).parsed
    check(last.quote_conversion == "final" and last.deposit_invoice_ids == [deposit.id], f"final {last}")
    check((last.total, last.deposits_deducted, last.amount_due) == (4488, 1346.4, 3141.6), f"final {last.amount_due}")
    error_call("convert_quote", 409, f"status: the quote was invoiced in full as {last.serial}", id=q.id,
               body=model("ConvertInput")(mode="full"))
    q = call("get_quote", 200, model("QuoteBody"), id=q.id).parsed
    enum_value(q.status, "QuoteStatus", "CONVERTED", "status")
    check(q.invoice_ids == [deposit.id, last.id], f"invoiceIds {q.invoice_ids}")


# Rate limit: last, since it spends the key's allowance.

RATE_LIMIT_TRIES = 1000


@step(f"list tags until the rate limit answers (429 ErrorBody with Retry-After, within {RATE_LIMIT_TRIES} calls)")
def _(s: dict[str, Any]) -> None:
    tag_body, error_body = model("TagBody"), model("ErrorBody")
    for attempt in range(1, RATE_LIMIT_TRIES + 1):
        try:
            response = operation("list_tags").sync_detailed(client=client)
        except errors.UnexpectedStatus as error:
            raise Failed(f"list_tags: undocumented status {error.status_code}: {error.content[:300]!r}") from None
        status = int(response.status_code)
        if status == 200:
            check(isinstance(response.parsed, list), f"call {attempt}: parsed {type(response.parsed).__name__}")
            check(all(isinstance(t, tag_body) for t in response.parsed), f"call {attempt}: not TagBody items")
            continue
        check(status == 429, f"call {attempt}: status {status}: {response.content[:300]!r}")
        check(isinstance(response.parsed, error_body), f"429 parsed {type(response.parsed).__name__}")
        strict(response.parsed, "list_tags")
        check(response.parsed.error == "rate limit exceeded", f"error {response.parsed.error!r}")
        retry_after = response.headers.get("retry-after", "")
        check(retry_after.isdigit() and int(retry_after) >= 1, f"Retry-After {retry_after!r}")
        print(f"     (429 after {attempt} calls, Retry-After: {retry_after})")
        return
    raise Failed(f"no 429 within {RATE_LIMIT_TRIES} calls: is the server's BILLABLE_RATE_LIMIT low?")


def main() -> int:
    state: dict[str, Any] = {}
    passed = failed = 0
    for number, (title, fn) in enumerate(STEPS, start=1):
        try:
            fn(state)
        except Failed as error:
            failed += 1
            print(f"FAIL {number:2} {title}\n     {error}")
        except KeyError as error:
            failed += 1
            print(f"FAIL {number:2} {title}\n     needs {error} from a step that failed")
        except Exception:  # noqa: BLE001 - a bug or a parse failure; show it whole
            failed += 1
            print(f"FAIL {number:2} {title}")
            print("     " + traceback.format_exc().rstrip().replace("\n", "\n     "))
        else:
            passed += 1
            print(f"ok   {number:2} {title}")
        sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
