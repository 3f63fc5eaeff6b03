"""A local, stateful Stripe for the card payment tests: PyPI `localstripe` (PaymentIntents,
PaymentMethods, charges, refunds, with Stripe's form-encoded API and its secret key check)
run in this process, with a thin stand-in for the one resource it lacks, Checkout Sessions,
each backed by a real localstripe PaymentIntent.

    python3 tests/payments/fake_stripe.py [--port 0]

On start it prints `port=N` (127.0.0.1) and flushes. Each run starts empty and keeps
everything in memory: localstripe's store file (/tmp/localstripe.pickle) is never read or
written, so that several fakes run side by side, one per test.

Stripe's API, `Authorization: Bearer sk_…` (or `-u sk_…:`) required, as at Stripe:
- localstripe's own `/v1/...` (for the tests: `POST /v1/refunds`, `GET /v1/payment_intents/{id}`,
  `GET /v1/charges/{id}`, `GET /v1/events`), its refunds held to Stripe's rules: none beyond
  what is left of the charge, and without `amount` what is left;
- `POST /v1/checkout/sessions`, form-encoded as Stripe documents it: `mode=payment`,
  `line_items[N][price_data][currency]`, `line_items[N][price_data][unit_amount]` (minor
  units), `line_items[N][price_data][product_data][name]`, `line_items[N][quantity]`, `success_url`, `cancel_url`, `client_reference_id`,
  `customer_email`, `locale`, `metadata[…]`, `payment_intent_data[metadata][…]`,
  `payment_method_types[N]`. Any other parameter is refused (400, `invalid_request_error`).
  `Idempotency-Key` is honoured as Stripe does: the same key and parameters replay the first
  answer (with `Idempotent-Replayed: true`), other parameters are refused (400,
  `idempotency_error`). Answers the Checkout Session, whose PaymentIntent is made at once
  (Stripe itself makes it only when the client pays);
- `GET /v1/checkout/sessions/{id}`: the session as it stands;
- `POST /v1/checkout/sessions/{id}/expire`: an open session expires, its PaymentIntent is
  canceled.

For the tests, no key needed:
- `GET /checkout/{id}`: the page the client is sent to (the session's `url`), standing in
  for Stripe's hosted Checkout;
- `POST /checkout/{id}/pay`: the client pays there with Stripe's test card
  4242 4242 4242 4242; answers `{"checkout.session.completed": event,
  "payment_intent.succeeded": event, "success_url": …}`, the Event objects Stripe would send.
  A session is paid once: again, 400;
- `POST /_events/charge.refunded` with `{"payment_intent": "pi_…"}`: the `charge.refunded`
  event of that PaymentIntent's charge as it stands after the refunds made through
  `POST /v1/refunds`.

Nothing is delivered from here: the tests send the events themselves, signed with the
official `stripe` library (tests/payments/sign_stripe.mjs), when, how often and where they
choose. localstripe's own webhooks go only to URLs registered at `/_config/webhooks/`, and
none is.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import html
import re
import secrets
import socket
import sys
import time

from aiohttp import web
from localstripe import resources, server, webhooks

# Nothing from or to disk: localstripe saves its whole store to one file in /tmp after each
# change (Store.__setitem__, and a middleware after each POST) and reads it back on start,
# which would mix up fakes that run at once.
resources.Store.dump_to_disk = lambda self: None
resources.Store.try_load_from_disk = lambda self: None
_scheduled: set[asyncio.Task] = set()


def _schedule_webhook(event) -> None:
    """localstripe's webhook sending (to no URL here), which can never take the fake down."""

    async def send() -> None:
        try:
            await webhooks._send_webhook(event)
        except Exception as error:  # noqa: BLE001 - a webhook that fails is only reported
            print(f"fake_stripe: localstripe's webhook {event.type}: {error!r}", file=sys.stderr)

    task = asyncio.ensure_future(send())
    _scheduled.add(task)
    task.add_done_callback(_scheduled.discard)


resources.schedule_webhook = _schedule_webhook

SESSIONS: dict[str, dict] = {}
# Idempotency-Key → (the parameters, the first answer), as Stripe keeps them for 24 hours.
KEYS: dict[str, tuple[dict, dict]] = {}
PAYING: set[str] = set()
API_VERSION = "2024-06-20"

METADATA = "metadata"  # any string keys and values
# The parameters taken, as Stripe documents them; a list is one element's schema.
PARAMETERS = {
    "mode": str,
    "line_items": [{
        "quantity": int,
        "price_data": {"currency": str, "unit_amount": int, "product_data": {"name": str, "description": str}},
    }],
    "success_url": str,
    "cancel_url": str,
    "client_reference_id": str,
    "customer_email": str,
    "locale": str,
    "metadata": METADATA,
    "payment_intent_data": {"metadata": METADATA, "description": str},
    "payment_method_types": [str],
}
# Checkout's languages (Stripe's `locale` enum).
LOCALES = (
    "auto", "bg", "cs", "da", "de", "el", "en", "en-GB", "es", "es-419", "et", "fi", "fil", "fr", "fr-CA",
    "hr", "hu", "id", "it", "ja", "ko", "lt", "lv", "ms", "mt", "nb", "nl", "pl", "pt", "pt-BR", "ro", "ru",
    "sk", "sl", "sv", "th", "tr", "vi", "zh", "zh-HK", "zh-TW",
)
# How many decimals a currency's minor unit has, where not 2 (Stripe's zero- and
# three-decimal currencies).
ZERO_DECIMAL = {"bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf"}
THREE_DECIMAL = {"bhd", "jod", "kwd", "omr", "tnd"}


class StripeError(Exception):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", **more):
        super().__init__(message)
        self.status, self.body = status, {"error": {"type": kind, "message": message, **more}}

    def response(self) -> web.Response:
        return web.json_response(self.body, status=self.status)


def missing(param: str) -> StripeError:
    return StripeError(400, f"Missing required param: {param}.", code="parameter_missing", param=param)


OPEN_PATHS = ("/checkout/", "/_events/")


@web.middleware
async def auth_middleware(request: web.Request, handler):
    """localstripe's key check, but for the pages and events only the tests use."""
    if request.path.startswith(OPEN_PATHS):
        return await handler(request)
    return await server.auth_middleware(request, handler)


@web.middleware
async def refund_limit_middleware(request: web.Request, handler):
    """Stripe's refunds, where localstripe's differ: no refund beyond what is left of the
    charge (localstripe would refund any amount, any number of times), and without `amount`
    what is left (localstripe: the whole charge again)."""
    if request.method == "POST" and request.path == "/v1/refunds":
        data = await server.get_post_data(request) or {}
        charge = None
        try:
            if isinstance(data.get("charge"), str):
                charge = resources.Charge._api_retrieve(data["charge"])
            elif isinstance(data.get("payment_intent"), str):
                charge = resources.PaymentIntent._api_retrieve(data["payment_intent"]).latest_charge
        except server.UserError:
            pass  # localstripe answers the 404 itself
        if charge is not None and charge.status == "succeeded":
            left = charge.amount - charge.amount_refunded
            amount = resources.try_convert_to_int(data.get("amount", left))
            if left <= 0:
                raise StripeError(400, f"Charge {charge.id} has already been refunded.",
                                  code="charge_already_refunded")
            if isinstance(amount, int) and amount > left:
                raise StripeError(400, f"Refund amount ({amount}) is greater than unrefunded amount on charge "
                                       f"({left}).", param="amount")
            if "amount" not in data:
                # Stripe refunds what is left; localstripe would refund the whole charge again.
                expand = data.pop("expand", None)
                refund = resources.Refund._api_create(**data, amount=left)
                return server.json_response(refund._export(expand=expand))
    return await handler(request)


@web.middleware
async def stripe_error_middleware(request: web.Request, handler):
    try:
        return await handler(request)
    except StripeError as error:
        return error.response()


app = server.app
app.middlewares[app.middlewares.index(server.auth_middleware)] = auth_middleware
app.middlewares.remove(server.save_store_middleware)
app.middlewares.insert(0, stripe_error_middleware)
app.middlewares.append(refund_limit_middleware)


def check(value, schema, path: str) -> None:
    """Refuses a parameter the schema lacks, or of the wrong kind, as Stripe does."""
    if schema is METADATA:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise StripeError(400, f"Invalid hash: {path}", code="parameter_invalid_hash", param=path)
    elif isinstance(schema, dict):
        if not isinstance(value, dict):
            raise StripeError(400, f"Invalid object: {path}", code="parameter_invalid_object", param=path)
        for key, inner in value.items():
            name = f"{path}[{key}]" if path else key
            if key not in schema:
                raise StripeError(400, f"Received unknown parameter: {name}", code="parameter_unknown", param=name)
            check(inner, schema[key], name)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            raise StripeError(400, f"Invalid array: {path}", code="parameter_invalid_array", param=path)
        for index, inner in enumerate(value):
            check(inner, schema[0], f"{path}[{index}]")
    elif schema is int:
        if not (isinstance(value, int) or (isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value))):
            raise StripeError(400, f"Invalid integer: {value}", code="parameter_invalid_integer", param=path)
    elif not isinstance(value, str):
        raise StripeError(400, f"Invalid string: {path}", code="parameter_invalid_string", param=path)


def event(kind: str, obj: dict) -> dict:
    """A Stripe Event object around `obj`."""
    return {
        "id": "evt_" + secrets.token_hex(12),
        "object": "event",
        "api_version": API_VERSION,
        "created": int(time.time()),
        "livemode": False,
        "pending_webhooks": 1,
        "request": {"id": None, "idempotency_key": None},
        "type": kind,
        "data": {"object": obj},
    }


def find_session(request: web.Request) -> dict:
    session_id = request.match_info["id"]
    session = SESSIONS.get(session_id)
    if session is None:
        raise StripeError(404, f"No such checkout.session: '{session_id}'", code="resource_missing", param="session")
    return session


async def create_session(request: web.Request) -> web.Response:
    data = await server.get_post_data(request) or {}
    check(data, PARAMETERS, "")
    key = request.headers.get("Idempotency-Key")
    if key and key in KEYS:
        params, answer = KEYS[key]
        if params != data:
            raise StripeError(
                400,
                "Keys for idempotent requests can only be used with the same parameters they were first used "
                f"with. Try using a key other than '{key}' if you meant to execute a different request.",
                "idempotency_error",
            )
        return web.json_response(answer, headers={"Idempotent-Replayed": "true"})

    if "mode" not in data:
        raise missing("mode")
    if data["mode"] != "payment":
        raise StripeError(400, "This stand-in for Checkout Sessions takes mode=payment only.", param="mode")
    if not data.get("line_items"):
        raise missing("line_items")
    amount, currencies = 0, set()
    for index, line in enumerate(data["line_items"]):
        at = f"line_items[{index}]"
        if "price_data" not in line:
            raise missing(f"{at}[price_data]")
        price = line["price_data"]
        for field in ("currency", "unit_amount"):
            if field not in price:
                raise missing(f"{at}[price_data][{field}]")
        if "name" not in price.get("product_data", {}):
            raise missing(f"{at}[price_data][product_data][name]")
        if "quantity" not in line:
            raise missing(f"{at}[quantity]")
        unit, quantity = int(price["unit_amount"]), int(line["quantity"])
        if unit < 0:
            raise StripeError(400, "This value must be greater than or equal to 0.",
                              param=f"{at}[price_data][unit_amount]")
        if quantity < 1:
            raise StripeError(400, "This value must be greater than or equal to 1.", param=f"{at}[quantity]")
        if not re.fullmatch(r"[A-Za-z]{3}", price["currency"]):
            raise StripeError(400, f"Invalid currency: {price['currency']}.", param=f"{at}[price_data][currency]")
        currencies.add(price["currency"].lower())
        amount += unit * quantity
    if len(currencies) > 1:
        raise StripeError(400, "All line items must have the same currency.", param="line_items")
    (currency,) = currencies
    if amount <= 0:
        raise StripeError(400, "The Checkout Session's total amount due must be greater than 0.")
    if "locale" in data and data["locale"] not in LOCALES:
        raise StripeError(400, "Invalid locale: must be one of " + ", ".join(LOCALES), param="locale")

    metadata = data.get("metadata", {})
    intent_metadata = data.get("payment_intent_data", {}).get("metadata", metadata)
    intent = resources.PaymentIntent._api_create(amount=amount, currency=currency, metadata=dict(intent_metadata))
    session_id = "cs_test_" + secrets.token_hex(24)
    created = int(time.time())
    SESSIONS[session_id] = session = {
        "id": session_id,
        "object": "checkout.session",
        "url": f"http://127.0.0.1:{request.url.port}/checkout/{session_id}",
        "payment_intent": intent.id,
        "amount_subtotal": amount,
        "amount_total": amount,
        "currency": currency,
        "metadata": metadata,
        "client_reference_id": data.get("client_reference_id"),
        "customer_email": data.get("customer_email"),
        "locale": data.get("locale"),
        "payment_method_types": data.get("payment_method_types", ["card"]),
        "status": "open",
        "payment_status": "unpaid",
        "success_url": data.get("success_url"),
        "cancel_url": data.get("cancel_url"),
        "mode": "payment",
        "livemode": False,
        "created": created,
        "expires_at": created + 24 * 3600,
    }
    answer = dict(session)
    if key:
        KEYS[key] = (data, answer)
    return web.json_response(answer)


async def get_session(request: web.Request) -> web.Response:
    return web.json_response(find_session(request))


async def expire_session(request: web.Request) -> web.Response:
    session = find_session(request)
    if session["status"] != "open" or session["id"] in PAYING:
        raise StripeError(400, f"Only Checkout Sessions with a status in [\"open\"] can be expired. "
                               f"This Checkout Session has a status of \"{session['status']}\".")
    resources.PaymentIntent._api_cancel(session["payment_intent"])
    session.update(status="expired", url=None)
    return web.json_response(session)


def money(minor: int, currency: str) -> str:
    digits = 0 if currency in ZERO_DECIMAL else 3 if currency in THREE_DECIMAL else 2
    return f"{minor / 10**digits:.{digits}f} {currency.upper()}"


async def checkout_page(request: web.Request) -> web.Response:
    session = find_session(request)
    amount = html.escape(money(session["amount_total"], session["currency"]))
    if session["status"] == "open":
        body = (f"<p>Pay {amount}</p><form method=post action=\"/checkout/{session['id']}/pay\">"
                "<p>Card 4242 4242 4242 4242</p><button>Pay</button></form>")
    else:
        body = f"<p>{amount}: {html.escape(session['status'])}</p>"
    return web.Response(
        text=f"<!doctype html><html lang=en><title>Checkout (test)</title><h1>Checkout (test)</h1>{body}</html>",
        content_type="text/html",
    )


async def pay(request: web.Request) -> web.Response:
    session = find_session(request)
    if session["status"] != "open" or session["id"] in PAYING:
        state = "being paid" if session["id"] in PAYING else session["status"]
        raise StripeError(400, f"This Checkout Session is {state}: it can be paid only once, while open.")
    PAYING.add(session["id"])
    try:
        # The client's card, set on the PaymentIntent, then confirmed: localstripe's confirm
        # takes no payment_method itself.
        method = resources.PaymentMethod._api_create(type="card", card={
            "number": "4242424242424242", "exp_month": "12",
            "exp_year": str(datetime.date.today().year + 5), "cvc": "123",
        })
        resources.PaymentIntent._api_update(session["payment_intent"], payment_method=method.id)
        intent = resources.PaymentIntent._api_confirm(session["payment_intent"])
        # localstripe may settle the charge later on its event loop: wait for it to say so.
        deadline = time.monotonic() + 10
        while intent.status != "succeeded":
            if intent.status not in ("processing", "requires_confirmation") or time.monotonic() > deadline:
                raise StripeError(500, f"the PaymentIntent {intent.id} is {intent.status}", "api_error")
            await asyncio.sleep(0.02)
        # Stripe's session has no url once it is complete.
        session.update(status="complete", payment_status="paid", url=None,
                       customer_details={"email": session["customer_email"]})
    finally:
        PAYING.discard(session["id"])
    return web.json_response({
        "checkout.session.completed": event("checkout.session.completed", dict(session)),
        "payment_intent.succeeded": event("payment_intent.succeeded", intent._export()),
        "success_url": session["success_url"],
    })


async def charge_refunded(request: web.Request) -> web.Response:
    try:
        intent_id = (await request.json())["payment_intent"]
    except (ValueError, KeyError, TypeError):
        raise missing("payment_intent") from None
    intent = resources.PaymentIntent._api_retrieve(intent_id)
    if intent.latest_charge is None:
        raise StripeError(400, f"the PaymentIntent {intent_id} has no charge")
    # localstripe's Charge exports `refunds` (a list of Refund objects), `amount_refunded`,
    # `refunded` and `payment_intent`.
    return web.json_response(event("charge.refunded", intent.latest_charge._export()))


app.router.add_post("/v1/checkout/sessions", create_session)
app.router.add_get("/v1/checkout/sessions/{id}", get_session)
app.router.add_post("/v1/checkout/sessions/{id}/expire", expire_session)
app.router.add_get("/checkout/{id}", checkout_page)
app.router.add_post("/checkout/{id}/pay", pay)
app.router.add_post("/_events/charge.refunded", charge_refunded)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0 (the default): a free port")
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", args.port))

    async def serve() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        print(f"port={sock.getsockname()[1]}", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
