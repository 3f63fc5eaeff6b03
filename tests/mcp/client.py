"""billable's /mcp through the official MCP Python SDK, as an MCP client application meets it.

    python3 tests/mcp/client.py BASE_URL WRITE_KEY SMTP_MAILS

Connects over streamable HTTP with the key as a bearer token, initializes, lists the tools,
creates a client and a project through them, reads them back, bills a month of time, pays
the invoice in part and reads what the client owes, e-mails the invoice and reads the message
log, lists, pauses and resumes a recurring invoice, and checks that a refusal comes back as
a tool error. Exits non-zero, saying why, at the first difference.
"""

import asyncio
import datetime
import json
import re
import sys
import urllib.request

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"mcp client: {message}")


def text_of(result) -> str:
    check(len(result.content) == 1 and result.content[0].type == "text", f"one text content: {result}")
    return result.content[0].text


async def main(base_url: str, key: str, mails: str) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(f"{base_url}/mcp", http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                init = await session.initialize()
                check(init.server_info.name == "billable", f"server name: {init.server_info}")
                tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                check(len(tools) == 41, f"a write key sees the 41 tools: {sorted(tools)}")
                schema = tools["create_client"].input_schema
                check({"name", "email"} <= set(schema["required"]), f"create_client's schema: {schema}")

                arguments = {"name": "Acme", "email": "billing@acme.test", "line1": "1 Main St", "postalCode": "10001"}
                made = await session.call_tool("create_client", arguments)
                check(not made.is_error, f"create_client: {text_of(made)}")
                client = json.loads(text_of(made))
                listed = json.loads(text_of(await session.call_tool("list_clients", {})))
                check([c["id"] for c in listed] == [client["id"]], f"list_clients: {listed}")

                project = await session.call_tool("create_project", {"title": "Website", "code": "web", "rate": 90})
                check(not project.is_error, f"create_project: {text_of(project)}")
                projects = json.loads(text_of(await session.call_tool("list_projects", {})))
                check([p["code"] for p in projects] == ["web"], f"list_projects: {projects}")

                # A month of time, reported and billed through the tools.
                entry = {"durationSeconds": 4500, "taskName": "Build", "date": "2026-11-10",
                         "projectId": projects[0]["id"]}
                logged = await session.call_tool("create_time_entry", entry)
                check(not logged.is_error, f"create_time_entry: {text_of(logged)}")
                month = {"from": "2026-11-01", "to": "2026-11-30"}
                report = json.loads(text_of(await session.call_tool("time_report", {**month, "groupBy": "project"})))
                check(report["groups"][0]["amount"] == 112.5, f"time_report: {report}")
                billed = await session.call_tool("bill_time", {**month, "clientId": client["id"]})
                check(not billed.is_error, f"bill_time: {text_of(billed)}")
                invoice = json.loads(text_of(billed))
                check(invoice["lineItems"][0]["quantity"] == 1.25 and invoice["total"] == 112.5, f"bill_time: {invoice}")
                again = await session.call_tool("bill_time", {**month, "clientId": client["id"]})
                check(again.is_error and "no billable time" in text_of(again), f"billed twice: {text_of(again)}")

                # What to send the client so that it pays: its page and what is due.
                link = json.loads(text_of(await session.call_tool("payment_link", {"id": invoice["id"]})))
                check(link["url"].endswith(f"/invoices/{invoice['id']}") and link["amountDue"] == 112.5
                      and link["paymentReference"] == invoice["paymentReference"] and link["payByCard"] is False,
                      f"payment_link: {link}")

                credit = json.loads(text_of(await session.call_tool("client_credit", {"id": client["id"]})))
                check(credit == {"clientId": client["id"], "creditBalance": []}, f"client_credit: {credit}")

                # Paid in part, through the tools: the books and what the client owes follow.
                paid = await session.call_tool("record_payment", {"id": invoice["id"], "amount": 12.5,
                                                                  "method": "bank_transfer"})
                check(not paid.is_error, f"record_payment: {text_of(paid)}")
                after = json.loads(text_of(await session.call_tool("get_invoice", {"id": invoice["id"]})))
                check((after["status"], after["amountPaid"], after["amountDue"]) == ("PAID_PARTIAL", 12.5, 100),
                      f"the invoice after a payment: {after}")
                overpaid = await session.call_tool("record_payment", {"id": invoice["id"], "amount": 100.01})
                check(overpaid.is_error and text_of(overpaid) == "amount: exceeds amountDue 100.00",
                      f"an overpayment: {text_of(overpaid)}")
                owed = json.loads(text_of(await session.call_tool("receivables", {})))
                check([(o["clientId"], o["total"]) for o in owed] == [(client["id"], 100)], f"receivables: {owed}")
                # The VAT return of the days around today (the invoice's issue date, in UTC).
                today = datetime.datetime.now(datetime.timezone.utc).date()
                around = {"from": str(today - datetime.timedelta(days=1)), "to": str(today + datetime.timedelta(days=1))}
                filed = json.loads(text_of(await session.call_tool("vat_return", around)))
                check([(line["currency"], line["taxableAmount"], line["taxAmount"]) for line in filed] == [("USD", 112.5, 0)],
                      f"vat_return: {filed}")
                too_long = await session.call_tool("vat_return", {"from": "2026-01-01", "to": "2027-12-31"})
                check(too_long.is_error and text_of(too_long).startswith("to: must be at most 366 days"),
                      f"vat_return over two years: {text_of(too_long)}")

                # E-mailed through the tools: the server's mail jobs hand it to the SMTP server.
                sent = await session.call_tool("send_invoice", {"id": invoice["id"], "subject": "Invoice ✓"})
                check(not sent.is_error, f"send_invoice: {text_of(sent)}")
                message = json.loads(text_of(sent))
                check((message["to"], message["kind"]) == (["billing@acme.test"], "invoice"), f"send_invoice: {message}")
                for _ in range(100):
                    messages = json.loads(text_of(await session.call_tool("list_messages", {})))
                    if messages[0]["status"] != "queued" and messages[0]["status"] != "sending":
                        break
                    await asyncio.sleep(0.1)
                check([(m["id"], m["status"]) for m in messages] == [(message["id"], "sent")],
                      f"list_messages: {messages}")
                with open(mails, encoding="utf-8") as file:
                    taken = [json.loads(line) for line in file]
                check([(m["rcpt_tos"], m["subject"], m["message_id"]) for m in taken]
                      == [(["billing@acme.test"], "Invoice ✓", f"<{message['messageId']}>")], f"the SMTP server took: {taken}")
                check("INV-0001 attached: 100.00 USD, due upon receipt." in taken[0]["body"],
                      f"the mail's body, of an invoice without a due date: {taken[0]['body']}")
                check([a["content_type"] for a in taken[0]["attachments"]] == ["application/pdf"],
                      f"the mail's attachments: {taken[0]['attachments']}")

                # A retainer made over REST, then listed, paused and resumed through the tools.
                retainer = {"clientId": client["id"], "startsOn": "2030-01-01", "count": 12,
                            "template": {"lineItems": [{"description": "Retainer", "unitPrice": 1500, "quantity": 1}]},
                            "schedule": {"frequency": "monthly", "dayOfMonth": -1}}
                request = urllib.request.Request(f"{base_url}/v1/recurring-invoices", data=json.dumps(retainer).encode(),
                                                 headers={"X-API-Key": key, "Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=10) as answer:
                    recurring = json.loads(answer.read())
                listed = json.loads(text_of(await session.call_tool("list_recurring_invoices", {})))
                check([(r["id"], r["nextRunOn"]) for r in listed] == [(recurring["id"], "2030-01-31")],
                      f"list_recurring_invoices: {listed}")
                paused = json.loads(text_of(await session.call_tool("pause_recurring_invoice", {"id": recurring["id"]})))
                check((paused["status"], paused["nextRunOn"]) == ("paused", None), f"pause_recurring_invoice: {paused}")
                resumed = json.loads(text_of(await session.call_tool("resume_recurring_invoice", {"id": recurring["id"]})))
                check((resumed["status"], resumed["nextRunOn"]) == ("active", "2030-01-31"),
                      f"resume_recurring_invoice: {resumed}")

                # The e-invoice tool names the business term this invoice still lacks for EN 16931
                # (its tax is flat and its parties have no country).
                lacking = await session.call_tool("e_invoice", {"id": invoice["id"], "format": "facturx"})
                check(lacking.is_error and re.fullmatch(r"\w+ \(BT-\d+\) is required for EN 16931: .+", text_of(lacking)),
                      f"e_invoice: {lacking}")

                refused = await session.call_tool("get_client", {"id": "not-an-id"})
                check(refused.is_error and text_of(refused) == "client not found", f"a refusal: {refused}")
    print(f"mcp client: {len(tools)} tools listed: a month of time billed, paid in part and e-mailed, a recurring invoice paused and resumed, refusals reported as tool errors")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
