// A scenario against a running billable, through a client generated from its served
// /openapi.json: openapi-typescript turns the document into `paths` types, and
// openapi-fetch sends typed requests. `tsc` (strict) checks every path, parameter, body
// and response used here against the document, so a document that drifts from what the
// API takes or gives fails the build before any request is sent.
//
//   BASE_URL=http://127.0.0.1:3000 API_KEY=bk_... SMTP_MAILS=... WEBHOOK_RECEIVER=... \
//     WEBHOOK_DELIVERIES=... node dist/scenario.js
//
// (the sending steps' SMTP server and webhook receiver: see scripts/generated-clients.sh)
//
// Prints one line per step and a last line `N passed, M failed`; exits 1 when any failed.

import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import createClient from "openapi-fetch";
import type { paths } from "./generated/schema.js";
import { check, runner } from "./runner.mjs";

// ---- Types taken from the document -------------------------------------------------

type Method = "get" | "post" | "put" | "patch" | "delete";

/** The JSON request body of an operation, as the document describes it. */
type JsonBody<P extends keyof paths, M extends Method & keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;

/** What every error body is (docs/api.md, Errors). */
type ErrorBody = { error: string };

type IsAny<T> = 0 extends 1 & T ? true : false;

/**
 * The value, checked at compile time not to be typed `any`: an operation whose
 * response the document leaves untyped would otherwise check nothing. A value typed
 * `any` needs a second argument here, which no call gives, so `tsc` fails.
 */
function typed<T>(value: T, ..._notAny: IsAny<T> extends true ? ["value is typed any"] : []): T {
  return value;
}

/** Whether A and B are the same type (not merely assignable to each other). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/**
 * The error of a response, checked at compile time to be typed exactly `{error: string}`
 * by the document (not `never`, not `unknown`, not a wider or narrower shape).
 */
function errorTyped<T>(
  value: T,
  ..._exact: Same<NonNullable<T>, ErrorBody> extends true ? [] : ["error body is not typed {error: string}"]
): T {
  return value;
}

/** A body that is exactly an operation's request body: excess properties are errors. */
function body<P extends keyof paths, M extends Method & keyof paths[P]>(
  _path: P,
  _method: M,
  value: JsonBody<P, M>,
): JsonBody<P, M> {
  return value;
}

// ---- A small runner ------------------------------------------------------------------

const baseUrl = required("BASE_URL").replace(/\/+$/, "");
const apiKey = required("API_KEY");
// The sending steps' SMTP server and webhook receiver (see "Sending and chasing" below).
const smtpMails = required("SMTP_MAILS");
const webhookReceiver = required("WEBHOOK_RECEIVER").replace(/\/+$/, "");
const webhookDeliveries = required("WEBHOOK_DELIVERIES");

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return value;
}

const { step, finish } = runner();

/** `expected` must be of the type the document gives `actual`. */
function equal<T>(actual: T, expected: NoInfer<T>, what: string): void {
  check(actual === expected, `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** The status, then the data of a success; a failure throws with the error body. */
function ok<D, E>(
  result: { data?: D; error?: E; response: Response },
  status: number,
  what: string,
): NonNullable<D> {
  const { data, error, response } = result;
  if (response.status !== status || data === undefined || data === null) {
    throw new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(error ?? data)}`);
  }
  return data;
}

/** The typed error body of a refusal with `status`. */
function refused(result: { error?: ErrorBody; response: Response }, status: number, what: string): ErrorBody {
  const { error, response } = result;
  equal(response.status, status, `${what} status`);
  check(error !== undefined, `${what}: no error body`);
  check(typeof error.error === "string" && error.error.length > 0, `${what}: error is not a message`);
  equal(response.headers.get("content-type")?.split(";")[0], "application/json", `${what} content-type`);
  return error;
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`needs ${what} from an earlier step`);
  return value;
}

// ---- The scenario ------------------------------------------------------------------------

// JSON answers only: listings and reports may also answer CSV (`Accept: text/csv`), which
// the media type parameter leaves out of the answers' types.
const api = createClient<paths, "application/json">({ baseUrl, headers: { "X-API-Key": apiKey } });
const anonymous = createClient<paths>({ baseUrl });

const stamp = Date.now().toString(36);
let clientId: string | undefined;
let invoiceId: string | undefined;
let inlineClientId: string | undefined;
let tagId: string | undefined;
let projectId: string | undefined;
let sectionId: string | undefined;
let entryId: string | undefined;

// Wednesday of the ISO week Monday 2026-11-16 .. Sunday 2026-11-22.
const entryDate = "2026-11-18T09:30:00Z";

await step("create a client", async () => {
  const result = await api.POST("/v1/invoices/clients", {
    body: body("/v1/invoices/clients", "post", {
      name: `Acme ${stamp}`,
      email: `billing+${stamp}@acme.example`,
      line1: "1 Main Street",
      postalCode: "1000",
      vatNumber: "BE0123456789",
    }),
  });
  const client = typed(ok(result, 201, "create client"));
  equal(client.name, `Acme ${stamp}`, "name");
  equal(client.phone, "", "phone left out");
  equal(client.line2, "", "line2 left out");
  equal(result.response.headers.get("location"), `/v1/invoices/clients/${client.id}`, "Location");
  clientId = client.id;
});

await step("list clients", async () => {
  const clients = typed(ok(await api.GET("/v1/invoices/clients"), 200, "list clients"));
  const id = need(clientId, "a client");
  check(
    clients.some((c) => c.id === id),
    "the new client is not listed",
  );
});

await step("get a client", async () => {
  const id = need(clientId, "a client");
  const client = typed(
    ok(await api.GET("/v1/invoices/clients/{id}", { params: { path: { id } } }), 200, "get client"),
  );
  equal(client.id, id, "id");
  equal(client.vatNumber, "BE0123456789", "vatNumber");
  const teamId: string = client.teamId;
  check(teamId.length > 0, "teamId is empty");
});

await step("replace a client (PATCH)", async () => {
  const id = need(clientId, "a client");
  const result = await api.PATCH("/v1/invoices/clients/{id}", {
    params: { path: { id } },
    body: body("/v1/invoices/clients/{id}", "patch", {
      name: `Acme ${stamp} Ltd`,
      email: `accounts+${stamp}@acme.example`,
      line1: "2 Main Street",
      postalCode: "1000",
    }),
  });
  const client = typed(ok(result, 200, "replace client"));
  equal(client.name, `Acme ${stamp} Ltd`, "name");
  equal(client.line1, "2 Main Street", "line1");
  // A full replacement: the vatNumber that was left out is now empty.
  equal(client.vatNumber, "", "vatNumber after replacement");
});

await step("delete a client", async () => {
  const id = need(clientId, "a client");
  const result = await api.DELETE("/v1/invoices/clients/{id}", { params: { path: { id } } });
  const deleted = typed(ok(result, 200, "delete client"));
  equal(deleted.message, "client deleted", "message");
  const again = await api.GET("/v1/invoices/clients/{id}", { params: { path: { id } } });
  const error: ErrorBody = refused(again, 404, "get deleted client");
  equal(error.error, "client not found", "error");
});

await step("create an invoice with an inline client (no address)", async () => {
  const result = await api.POST("/v1/invoices", {
    body: body("/v1/invoices", "post", {
      client: { email: `inline+${stamp}@example.com`, name: `Inline ${stamp}` },
      lineItems: [
        { description: "Design", unitPrice: 19.99, quantity: 3 },
        { description: "Hosting", unitPrice: 5, quantity: 1, amount: 5 },
      ],
      dueDate: "2999-01-31",
      description: "November",
    }),
  });
  const invoice = typed(ok(result, 201, "create invoice"));
  equal(invoice.status, "PENDING", "status");
  equal(invoice.lineItems.length, 2, "line items");
  equal(invoice.lineItems[0]?.position, 0, "first position");
  equal(invoice.lineItems[1]?.position, 1, "second position");
  equal(invoice.subtotal, 64.97, "subtotal");
  equal(invoice.total, 64.97, "total");
  check(/^INV-\d{4,}$/.test(invoice.serial), `serial ${invoice.serial}`);
  equal(result.response.headers.get("location"), `/v1/invoices/${invoice.id}`, "Location");
  invoiceId = invoice.id;
  inlineClientId = invoice.clientId;
});

await step("the inline client was made without an address", async () => {
  const id = need(inlineClientId, "an invoice's client");
  const client = typed(
    ok(await api.GET("/v1/invoices/clients/{id}", { params: { path: { id } } }), 200, "get inline client"),
  );
  equal(client.email, `inline+${stamp}@example.com`, "email");
  equal(client.line1, "", "line1");
  equal(client.postalCode, "", "postalCode");
});

await step("change an invoice (PATCH)", async () => {
  const id = need(invoiceId, "an invoice");
  const result = await api.PATCH("/v1/invoices/{id}", {
    params: { path: { id } },
    body: body("/v1/invoices/{id}", "patch", {
      description: "November, revised",
      taxPercentage: 10,
      lineItems: [{ description: "Design", unitPrice: 100, quantity: 2 }],
    }),
  });
  const invoice = typed(ok(result, 200, "update invoice"));
  equal(invoice.description, "November, revised", "description");
  equal(invoice.lineItems.length, 1, "line items replaced");
  equal(invoice.subtotal, 200, "subtotal");
  equal(invoice.tax, 20, "tax");
  equal(invoice.total, 220, "total");
  equal(invoice.status, "PENDING", "status unchanged");
});

await step("mark an invoice paid", async () => {
  const id = need(invoiceId, "an invoice");
  const result = await api.PATCH("/v1/invoices/{id}/mark", { params: { path: { id } } });
  const invoice = typed(ok(result, 200, "mark invoice"));
  equal(invoice.status, "PAID", "status");
  const listed = typed(ok(await api.GET("/v1/invoices"), 200, "list invoices"));
  equal(listed.find((i) => i.id === id)?.status, "PAID", "listed status");
});

/** The `cursor` of a listing answer's `Link: <…>; rel="next"`, if it has one. */
function nextCursor(response: Response): string | undefined {
  const link = response.headers.get("link");
  if (link === null) return undefined;
  const match = /^<([^>]*)>; rel="next"$/.exec(link);
  check(match !== null, `Link ${link}`);
  return new URL(match[1] ?? "", baseUrl).searchParams.get("cursor") ?? undefined;
}

let retriedId: string | undefined;

await step("retry an invoice create with an Idempotency-Key", async () => {
  const key = `scenario-${stamp}`;
  const send = () =>
    api.POST("/v1/invoices", {
      params: { header: { "Idempotency-Key": key } },
      body: body("/v1/invoices", "post", {
        clientId: need(inlineClientId, "an invoice's client"),
        lineItems: [{ description: "Retried", unitPrice: 10, quantity: 1 }],
      }),
    });
  const first = await send();
  const retry = await send();
  const invoice = typed(ok(first, 201, "create invoice with a key"));
  equal(typed(ok(retry, 201, "the retry")).id, invoice.id, "the retry's invoice");
  equal(retry.response.headers.get("idempotent-replayed"), "true", "Idempotent-Replayed");
  equal(first.response.headers.get("idempotent-replayed"), null, "the first answer is no replay");
  retriedId = invoice.id;
});

await step("page invoices through Link headers and filter them", async () => {
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const result = await api.GET("/v1/invoices", { params: { query: { limit: 1, cursor } } });
    const page = typed(ok(result, 200, "a page of invoices"));
    check(page.length <= 1, `a page of ${page.length}`);
    seen.push(...page.map((i) => i.id));
    cursor = nextCursor(result.response);
    check(seen.length < 100, "the pages end");
  } while (cursor !== undefined);
  const whole = typed(ok(await api.GET("/v1/invoices"), 200, "list invoices")).map((i) => i.id);
  equal(seen.join(), whole.join(), "the pages add up to the listing");

  const clientId = need(inlineClientId, "an invoice's client");
  const query = { status: ["PAID", "PENDING"] as ("PAID" | "PENDING")[], clientId };
  const mine = typed(ok(await api.GET("/v1/invoices", { params: { query } }), 200, "filtered invoices"));
  equal(mine.map((i) => i.id).sort().join(), [need(invoiceId, "an invoice"), need(retriedId, "a retried invoice")].sort().join(), "by client and status");
  const overdue = await api.GET("/v1/invoices", { params: { query: { status: ["OVERDUE"], clientId } } });
  equal(typed(ok(overdue, 200, "overdue invoices")).length, 0, "none of the client's is overdue");
  const found = await api.GET("/v1/invoices/clients", { params: { query: { q: `INLINE ${stamp}` } } });
  equal(typed(ok(found, 200, "clients found by q")).map((c) => c.id).join(), clientId, "q finds the client");
  const bad = await api.GET("/v1/invoices", { params: { query: { limit: 0 } } });
  equal(refused(bad, 400, "limit 0").error, "limit: must be a whole number from 1 to 1000", "error");
});

await step("fetch the invoice PDF", async () => {
  const id = need(invoiceId, "an invoice");
  // Public: sent without a key.
  const result = await anonymous.GET("/v1/invoices/pdf", {
    params: { query: { id, download: true } },
    parseAs: "arrayBuffer",
  });
  const pdf: ArrayBuffer = ok(result, 200, "invoice PDF");
  equal(result.response.headers.get("content-type"), "application/pdf", "content-type");
  const disposition = result.response.headers.get("content-disposition") ?? "";
  check(disposition.startsWith("attachment;"), `content-disposition ${disposition}`);
  const magic = new TextDecoder().decode(pdf.slice(0, 5));
  equal(magic, "%PDF-", "first bytes");
});

await step("create a tag", async () => {
  const result = await api.POST("/v1/track/tags", {
    body: body("/v1/track/tags", "post", { title: `billable-${stamp}` }),
  });
  const tag = typed(ok(result, 201, "create tag"));
  equal(tag.title, `billable-${stamp}`, "title");
  tagId = tag.id;
});

await step("create a project", async () => {
  const result = await api.POST("/v1/track/projects", {
    body: body("/v1/track/projects", "post", { title: `Website ${stamp}`, code: `W${stamp}`.slice(0, 50) }),
  });
  const project = typed(ok(result, 201, "create project"));
  equal(project.status, "ACTIVE", "status");
  projectId = project.id;
});

await step("create a section", async () => {
  const result = await api.POST("/v1/track/sections", {
    body: body("/v1/track/sections", "post", { title: "Design", projectId: need(projectId, "a project") }),
  });
  const section = typed(ok(result, 201, "create section"));
  equal(section.projectId, need(projectId, "a project"), "projectId");
  sectionId = section.id;
  const listed = typed(
    ok(
      await api.GET("/v1/track/sections", { params: { query: { projectId: section.projectId } } }),
      200,
      "list sections",
    ),
  );
  check(
    listed.some((s) => s.id === section.id),
    "the section is not listed",
  );
});

await step("log time with tags", async () => {
  const id = need(tagId, "a tag");
  const result = await api.POST("/v1/track/time", {
    body: body("/v1/track/time", "post", {
      durationSeconds: 5400,
      taskName: "Wireframes",
      description: "Home page",
      date: entryDate,
      sectionId: need(sectionId, "a section"),
      tags: [{ id, title: `billable-${stamp}` }],
    }),
  });
  const entry = typed(ok(result, 201, "create time entry"));
  equal(entry.durationSeconds, 5400, "durationSeconds");
  equal(entry.date, "2026-11-18T09:30:00.000Z", "date");
  equal(entry.projectId, need(projectId, "a project"), "projectId implied by the section");
  equal(entry.sectionId, need(sectionId, "a section"), "sectionId");
  equal(entry.aiGenerated, false, "aiGenerated");
  equal(entry.tags.length, 1, "tags");
  equal(entry.tags[0]?.id, id, "tag id");
  entryId = entry.id;
});

for (const frequency of ["week", "month"] as const) {
  await step(`list time by date, frequency ${frequency}`, async () => {
    const id = need(entryId, "a time entry");
    const result = await api.GET("/v1/track/time", { params: { query: { date: "2026-11-20", frequency } } });
    const entries = typed(ok(result, 200, `list time (${frequency})`));
    const entry = entries.find((e) => e.id === id);
    check(entry !== undefined, "the entry is not listed");
    equal(entry.taskName, "Wireframes", "taskName");
  });
}

await step("filter and page time entries", async () => {
  const id = need(entryId, "a time entry");
  const query = { from: "2026-11-16", to: "2026-11-22", projectId: need(projectId, "a project"), limit: 1 };
  const result = await api.GET("/v1/track/time", { params: { query } });
  equal(typed(ok(result, 200, "entries of the project")).map((e) => e.id).join(), id, "the project's entry");
  equal(nextCursor(result.response), undefined, "one page");
  const other = await api.GET("/v1/track/time", { params: { query: { ...query, tagId: stamp } } });
  equal(refused(other, 400, "a tag id that is no UUID").error, "tagId: must be a UUID", "error");
});

let timedEntryId: string | undefined;

await step("run a timer: start, read, stop into a time entry", async () => {
  const started = await api.POST("/v1/track/timer/start", {
    body: body("/v1/track/timer/start", "post", { taskName: "Timed", projectId: need(projectId, "a project") }),
  });
  const timer = typed(ok(started, 201, "start timer"));
  equal(timer.taskName, "Timed", "taskName");
  const again = await api.POST("/v1/track/timer/start", { body: { taskName: "Twice" } });
  equal(refused(again, 409, "a second timer").error, "a timer is already running; stop it first", "error");
  const running = typed(ok(await api.GET("/v1/track/timer"), 200, "read timer"));
  equal(running.id, timer.id, "the running timer");
  const entry = typed(ok(await api.POST("/v1/track/timer/stop"), 201, "stop timer"));
  equal(entry.date, timer.startedAt, "dated at its start");
  check(entry.durationSeconds >= 1, `duration ${entry.durationSeconds}`);
  refused(await api.GET("/v1/track/timer"), 404, "no timer after stop");
  timedEntryId = entry.id;
});

await step("the day around another date does not hold the entry", async () => {
  const id = need(entryId, "a time entry");
  const result = await api.GET("/v1/track/time", { params: { query: { date: "2026-11-20", frequency: "day" } } });
  const entries = typed(ok(result, 200, "list time (day)"));
  check(!entries.some((e) => e.id === id), "the entry is listed on another day");
});

// ---- A month of tracked time becomes an invoice ------------------------------------------

const october = { from: "2026-10-01", to: "2026-10-31" };
let ratedProjectId: string | undefined;
let monthEntries: string[] = [];
let unbilledEntryId: string | undefined;
let timeInvoiceId: string | undefined;

await step("log a month of time on a project with an hourly rate", async () => {
  const made = await api.POST("/v1/track/projects", {
    body: body("/v1/track/projects", "post", { title: `Support ${stamp}`, rate: 120 }),
  });
  const project = typed(ok(made, 201, "create project"));
  equal(project.rate, 120, "rate");
  ratedProjectId = project.id;
  for (const [date, durationSeconds] of [["2026-10-05", 3600], ["2026-10-12", 1800], ["2026-10-31T23:59:59Z", 900]] as const) {
    const entry = body("/v1/track/time", "post", { durationSeconds, taskName: "Calls", date, projectId: project.id });
    const logged = typed(ok(await api.POST("/v1/track/time", { body: entry }), 201, "log time"));
    equal(logged.billable, true, "billable by default");
    equal(logged.invoiceId, null, "not billed yet");
    monthEntries.push(logged.id);
  }
  const free = body("/v1/track/time", "post", {
    durationSeconds: 7200, taskName: "Internal", date: "2026-10-20", projectId: project.id, billable: false,
  });
  unbilledEntryId = typed(ok(await api.POST("/v1/track/time", { body: free }), 201, "log unbillable time")).id;
});

await step("report the month by project", async () => {
  const query = { ...october, groupBy: "project" as const };
  const report = typed(ok(await api.GET("/v1/track/reports", { params: { query } }), 200, "report"));
  const group = report.groups.find((g) => g.key === need(ratedProjectId, "a rated project"));
  check(group !== undefined, "the project has no group");
  equal(group.seconds, 13500, "seconds");
  equal(group.billableSeconds, 6300, "billableSeconds");
  equal(group.amount, 210, "amount: 1.75 billable hours at 120");
});

await step("preview the month's invoice: nothing is written", async () => {
  const preview = body("/v1/invoices/from-time", "post", {
    ...october,
    clientId: need(inlineClientId, "a client"),
    projectIds: [need(ratedProjectId, "a rated project")],
    rounding: { minutes: 15, mode: "up" },
    preview: true,
  });
  const invoice = typed(ok(await api.POST("/v1/invoices/from-time", { body: preview }), 200, "preview"));
  equal(invoice.lineItems.length, 1, "one line for the project");
  equal(invoice.lineItems[0]?.quantity, 1.75, "hours");
  equal(invoice.skippedEntries.length, 0, "nothing left out");
  equal(invoice.total, 210, "total");
  const first = need(monthEntries[0], "an entry");
  const entry = typed(ok(await api.GET("/v1/track/time/{id}", { params: { path: { id: first } } }), 200, "entry"));
  equal(entry.invoiceId, null, "the preview billed nothing");
});

await step("bill the month: its entries carry the invoice and are locked", async () => {
  const bill = body("/v1/invoices/from-time", "post", {
    ...october,
    clientId: need(inlineClientId, "a client"),
    projectIds: [need(ratedProjectId, "a rated project")],
  });
  const invoice = typed(ok(await api.POST("/v1/invoices/from-time", { body: bill }), 201, "bill"));
  equal(invoice.total, 210, "total");
  equal(invoice.skippedEntries.length, 0, "nothing left out");
  timeInvoiceId = invoice.id;
  for (const id of monthEntries) {
    const entry = typed(ok(await api.GET("/v1/track/time/{id}", { params: { path: { id } } }), 200, "entry"));
    equal(entry.invoiceId, invoice.id, "billed by the invoice");
  }
  const free = need(unbilledEntryId, "an unbillable entry");
  const unbilled = typed(ok(await api.GET("/v1/track/time/{id}", { params: { path: { id: free } } }), 200, "entry"));
  equal(unbilled.invoiceId, null, "time not billable is not billed");
  const id = need(monthEntries[0], "an entry");
  const patched = await api.PATCH("/v1/track/time/{id}", { params: { path: { id } }, body: { durationSeconds: 60 } });
  check(refused(patched, 409, "change billed time").error.startsWith("invoiceId: "), "the lock names invoiceId");
  const deleted = await api.DELETE("/v1/track/time/{id}", { params: { path: { id } } });
  check(refused(deleted, 409, "delete billed time").error.startsWith("invoiceId: "), "the lock names invoiceId");
  const again = await api.POST("/v1/invoices/from-time", { body: bill });
  equal(refused(again, 400, "bill twice").error, "from: no billable time that is not billed yet in the range", "error");
});

await step("the month's time as CSV", async () => {
  const result = await api.GET("/v1/track/time", {
    params: { query: { ...october, projectId: need(ratedProjectId, "a rated project") } },
    headers: { Accept: "text/csv" },
    parseAs: "text",
  });
  const csv = typed(ok(result, 200, "time as CSV"));
  equal(result.response.headers.get("content-type"), "text/csv; charset=utf-8", "content-type");
  const lines = csv.trimEnd().split("\r\n");
  check(lines[0]?.startsWith("id,date,userId,projectId") === true, `header ${lines[0]}`);
  equal(lines.length, 5, "a header and four entries");
  check(monthEntries.every((id) => csv.includes(`${id},`)), "every entry is a row");
});

await step("delete the invoice: its time is released", async () => {
  const invoice = need(timeInvoiceId, "the month's invoice");
  ok(await api.DELETE("/v1/invoices/{id}", { params: { path: { id: invoice } } }), 200, "delete invoice");
  for (const id of [...monthEntries, need(unbilledEntryId, "an unbillable entry")]) {
    const entry = typed(ok(await api.GET("/v1/track/time/{id}", { params: { path: { id } } }), 200, "entry"));
    equal(entry.invoiceId, null, "released");
    ok(await api.DELETE("/v1/track/time/{id}", { params: { path: { id } } }), 200, "delete released time");
  }
  const project = need(ratedProjectId, "a rated project");
  ok(await api.DELETE("/v1/track/projects/{id}", { params: { path: { id: project } } }), 200, "delete project");
});

await step("a 404 has a typed error body", async () => {
  const result = await api.GET("/v1/invoices/{id}", {
    params: { path: { id: "019a3c2e-7b1d-7c3e-9a4f-5b6c7d8e9f01" } },
  });
  const error: ErrorBody = refused(result, 404, "unknown invoice");
  equal(error.error, "invoice not found", "error");
  // The error's type comes from the document, and it is {error: string}.
  check(errorTyped(result.error) !== undefined, "no error");
});

await step("a 400 has a typed error body naming the field", async () => {
  // Right types, invalid values: the server's rules, not the type checker, refuse it.
  const result = await api.POST("/v1/invoices/clients", {
    body: body("/v1/invoices/clients", "post", { name: "", email: "x@example.com", line1: "a", postalCode: "1" }),
  });
  const error = refused(result, 400, "empty name");
  check(error.error.startsWith("name:"), `error ${JSON.stringify(error.error)}`);
  check(errorTyped(result.error) !== undefined, "no error");

  const bad = await api.GET("/v1/track/time", { params: { query: { date: "yesterday" } } });
  const dateError: ErrorBody = refused(bad, 400, "invalid date");
  check(errorTyped(bad.error) !== undefined, "no error");
  check(dateError.error.startsWith("date:"), `error ${JSON.stringify(dateError.error)}`);
});

let owedId: string | undefined;

await step("the books: pay in part, overpay, refund and void, credit, what the client owes", async () => {
  const client = need(inlineClientId, "an invoice's client");
  const made = await api.POST("/v1/invoices", {
    body: body("/v1/invoices", "post", { clientId: client, lineItems: [{ description: "Retainer", unitPrice: 50, quantity: 1 }] }),
  });
  const id = typed(ok(made, 201, "create invoice")).id;
  owedId = id;
  const payment = await api.POST("/v1/invoices/{id}/payments", {
    params: { path: { id } },
    body: body("/v1/invoices/{id}/payments", "post", { amount: 20, paidOn: "2026-11-20", method: "card" }),
  });
  const paid = typed(ok(payment, 201, "record payment"));
  equal(paid.kind, "payment", "kind");
  equal(paid.method, "card", "method");
  const partial = typed(ok(await api.GET("/v1/invoices/{id}", { params: { path: { id } } }), 200, "get invoice"));
  equal(partial.status, "PAID_PARTIAL", "status");
  equal(partial.amountDue, 30, "amountDue");
  const over = await api.POST("/v1/invoices/{id}/payments", {
    params: { path: { id } },
    body: body("/v1/invoices/{id}/payments", "post", { amount: 31 }),
  });
  equal(refused(over, 409, "overpay").error, "amount: exceeds amountDue 30.00", "error");
  const refund = await api.POST("/v1/invoices/{id}/refunds", {
    params: { path: { id } },
    body: body("/v1/invoices/{id}/refunds", "post", { amount: 5, reason: "goodwill" }),
  });
  const refunded = typed(ok(refund, 201, "record refund"));
  equal(refunded.kind, "refund", "kind");
  const voided = await api.POST("/v1/payments/{id}/void", {
    params: { path: { id: refunded.id } },
    body: body("/v1/payments/{id}/void", "post", { reason: "entered by mistake" }),
  });
  check(typed(ok(voided, 200, "void")).voidedAt !== null, "voidedAt is set");
  const note = await api.POST("/v1/invoices/{id}/credit-notes", {
    params: { path: { id } },
    body: body("/v1/invoices/{id}/credit-notes", "post", { lineItems: [{ description: "Unused", unitPrice: 10, quantity: 1 }] }),
  });
  const credit = typed(ok(note, 201, "credit note"));
  equal(credit.appliedToInvoice, 10, "applied");
  check(credit.serial.startsWith("CN-"), `serial ${credit.serial}`);
  const after = typed(ok(await api.GET("/v1/invoices/{id}", { params: { path: { id } } }), 200, "get invoice"));
  equal(after.amountDue, 20, "amountDue after the credit");
  const owed = typed(ok(await api.GET("/v1/invoices/receivables", { params: { query: { asOf: "2026-11-30" } } }), 200, "receivables"));
  // 20.00 on this invoice, and the 10.00 of the retried one.
  equal(owed.find((row) => row.clientId === client)?.total, 30, "what the client owes");
  const listed = typed(ok(await api.GET("/v1/payments", { params: { query: { invoiceId: id } } }), 200, "payments"));
  equal(listed.length, 2, "the invoice's entries");
});

// ---- Sending and chasing: webhooks, e-mail, reminders ------------------------------------
//
// The server mails a real SMTP server (tests/mail/smtp_server.py), which writes each mail
// it takes, parsed, as a JSON line to SMTP_MAILS; and delivers webhooks to a receiver on
// 127.0.0.1 (tests/webhooks/receiver.py), which verifies each delivery with the official
// Standard Webhooks library and writes it to WEBHOOK_DELIVERIES. Mail and deliveries go out
// in the server's job passes: the steps poll for the outcome, half a second apart, 30 s at
// most. The receiver's /_secrets and the two files are all that is reached outside the
// generated client.

/** A mail as the SMTP server wrote it. */
interface Mail {
  message_id: string;
  from: string;
  to: string;
  subject: string;
  body: string;
  attachments: { filename: string; content_type: string; size: number; sha256: string }[];
}

/** A delivery as the receiver wrote it: `verified` holds, per secret, true or the error. */
interface Received {
  webhook_id: string;
  webhook_signature: string;
  body: string;
  verified: Record<string, true | string>;
}

/** The whole JSON lines of `path` so far (a line still being written is left out). */
function jsonLines<T>(path: string): T[] {
  const lines = readFileSync(path, "utf8").split("\n");
  return lines.slice(0, -1).filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as T);
}

const pollSeconds = 30;

/** `get()` again every half second until `done` holds for what it gives, for at most 30 s. */
async function until<T>(what: string, get: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + pollSeconds * 1000;
  for (;;) {
    const value = await get();
    if (done(value)) return value;
    check(Date.now() < deadline, `${what}: not within ${pollSeconds} s; last ${JSON.stringify(value)}`);
    await sleep(500);
  }
}

/** Tells the receiver the secrets to verify each delivery with. */
async function verifyWith(...secrets: string[]): Promise<void> {
  const answer = await fetch(`${webhookReceiver}/_secrets`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(secrets),
  });
  equal(answer.status, 204, "the receiver's /_secrets");
}

/** The receiver's deliveries of the event `eventId` (their `webhook-id`), in order. */
function received(eventId: string): Received[] {
  return jsonLines<Received>(webhookDeliveries).filter((d) => d.webhook_id === eventId);
}

/** The endpoint's delivery `deliveryId` once it is no longer pending. */
async function settled(endpoint: string, deliveryId: string) {
  const found = await until(
    "the delivery",
    async () => {
      const result = await api.GET("/v1/webhooks/{id}/deliveries", { params: { path: { id: endpoint } } });
      return typed(ok(result, 200, "list deliveries")).find((d) => d.id === deliveryId);
    },
    (d) => d !== undefined && d.status !== "pending",
  );
  check(found !== undefined, "the delivery is gone");
  return found;
}

/** The message `id` once a job pass is done with it, and sent. */
async function sent(id: string) {
  const message = await until(
    `message ${id}`,
    async () => typed(ok(await api.GET("/v1/messages/{id}", { params: { path: { id } } }), 200, "get message")),
    (m) => m.status !== "queued" && m.status !== "sending",
  );
  equal(message.status, "sent", "status");
  equal(message.attempts, 1, "attempts");
  equal(message.lastError, null, "lastError");
  check(message.sentAt !== null, "sentAt is not set");
  return message;
}

/** The mail the SMTP server took for a message: its Message-ID is `<messageId>`. */
function mailOf(message: { messageId: string }): Mail {
  const found = jsonLines<Mail>(smtpMails).filter((mail) => mail.message_id === `<${message.messageId}>`);
  equal(found.length, 1, `mails with Message-ID <${message.messageId}>`);
  return found[0] as Mail;
}

let endpointId: string | undefined;
let secret: string | undefined;
let oldSecret: string | undefined;
let testDeliveryId: string | undefined;
let testEventId: string | undefined;

await step("list the webhook event types: invoice.paid is one", async () => {
  const types = typed(ok(await api.GET("/v1/webhooks/event-types"), 200, "event types"));
  const paid = types.find((t) => t.type === "invoice.paid");
  check(paid !== undefined, `types ${types.map((t) => t.type).join()}`);
  equal(paid.permission, "invoices:read", "permission");
});

await step("subscribe the receiver to invoice.* and payment.created: a whsec_ secret", async () => {
  const result = await api.POST("/v1/webhooks", {
    body: body("/v1/webhooks", "post", {
      url: `${webhookReceiver}/billable`,
      events: ["invoice.*", "payment.created"],
      description: `Bookkeeping ${stamp}`,
    }),
  });
  const endpoint = typed(ok(result, 201, "create endpoint"));
  check(endpoint.secret.startsWith("whsec_"), `secret ${endpoint.secret}`);
  equal(endpoint.events.join(), "invoice.*,payment.created", "events");
  equal(endpoint.enabled, true, "enabled");
  equal(endpoint.previousSecretExpiresAt, null, "previousSecretExpiresAt");
  equal(result.response.headers.get("location"), `/v1/webhooks/${endpoint.id}`, "Location");
  await verifyWith(endpoint.secret);
  endpointId = endpoint.id;
  secret = endpoint.secret;
});

await step("list, get and PATCH the endpoint: no secret shown", async () => {
  const id = need(endpointId, "an endpoint");
  const listed = typed(ok(await api.GET("/v1/webhooks"), 200, "list endpoints"));
  equal(listed.map((e) => e.id).join(), id, "the team's endpoints");
  const endpoint = typed(ok(await api.GET("/v1/webhooks/{id}", { params: { path: { id } } }), 200, "get endpoint"));
  equal(endpoint.url, `${webhookReceiver}/billable`, "url");
  check(!("secret" in endpoint) && !("secret" in (listed[0] ?? {})), "the secret is shown");
  const patched = await api.PATCH("/v1/webhooks/{id}", {
    params: { path: { id } },
    body: body("/v1/webhooks/{id}", "patch", { description: `Ledger ${stamp}` }),
  });
  const changed = typed(ok(patched, 200, "update endpoint"));
  equal(changed.description, `Ledger ${stamp}`, "description");
  equal(changed.events.join(), "invoice.*,payment.created", "events unchanged");
});

await step("send a test event: delivered, and verified with the secret", async () => {
  const id = need(endpointId, "an endpoint");
  const queued = typed(ok(await api.POST("/v1/webhooks/{id}/test", { params: { path: { id } } }), 202, "test"));
  equal(queued.eventType, "webhook.test", "eventType");
  equal(queued.status, "pending", "status");
  const delivery = await settled(id, queued.id);
  equal(delivery.status, "succeeded", "status");
  equal(delivery.attempts, 1, "attempts");
  equal(delivery.responseStatus, 204, "responseStatus");
  const got = received(delivery.eventId);
  equal(got.length, 1, "deliveries received");
  equal(got[0]?.verified[need(secret, "a secret")], true, "verified with the secret");
  const event = JSON.parse(got[0]?.body ?? "{}") as { type: string; data: { endpointId: string } };
  equal(event.type, "webhook.test", "the event's type");
  equal(event.data.endpointId, id, "the event's data");
  testDeliveryId = delivery.id;
  testEventId = delivery.eventId;
});

await step("rotate the secret with no body: the old one signs a day more", async () => {
  const id = need(endpointId, "an endpoint");
  const before = Date.now();
  const result = await api.POST("/v1/webhooks/{id}/rotate-secret", { params: { path: { id } } });
  const rotated = typed(ok(result, 200, "rotate secret"));
  check(rotated.secret.startsWith("whsec_") && rotated.secret !== secret, "a new secret");
  check(rotated.previousSecretExpiresAt !== null, "previousSecretExpiresAt is not set");
  const overlap = Date.parse(rotated.previousSecretExpiresAt) - before;
  check(overlap > 23 * 3600e3 && overlap <= 24 * 3600e3 + 60e3, `previousSecretExpiresAt ${rotated.previousSecretExpiresAt}`);
  oldSecret = secret;
  secret = rotated.secret;
});

await step("redeliver the test event: the same webhook-id, signed with both secrets", async () => {
  const id = need(endpointId, "an endpoint");
  const deliveryId = need(testDeliveryId, "a test delivery");
  const [previous, current] = [need(oldSecret, "the old secret"), need(secret, "a secret")];
  await verifyWith(previous, current);
  const result = await api.POST("/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", {
    params: { path: { id, deliveryId } },
  });
  const queued = typed(ok(result, 202, "redeliver"));
  equal(queued.eventId, need(testEventId, "a test event"), "eventId");
  equal(queued.status, "pending", "status");
  const delivery = await settled(id, deliveryId);
  equal(delivery.status, "succeeded", "status");
  equal(delivery.attempts, 2, "attempts");
  const got = received(delivery.eventId);
  equal(got.length, 2, "deliveries received");
  equal(got[1]?.body, got[0]?.body, "the same body");
  equal(got[1]?.verified[previous], true, "verified with the old secret");
  equal(got[1]?.verified[current], true, "verified with the new secret");
  equal(got[1]?.webhook_signature.split(" ").length, 2, "signatures");
});

let sendingId: string | undefined;
let sendingSerial: string | undefined;
const messageIds: string[] = [];

await step("send an invoice due in 30 days to an address, its subject with placeholders", async () => {
  const due = new Date(Date.now() + 30 * 86400e3).toISOString().slice(0, 10);
  const made = await api.POST("/v1/invoices", {
    body: body("/v1/invoices", "post", {
      client: { email: `ap+${stamp}@initech.example`, name: "Initech" },
      lineItems: [{ description: "Support", unitPrice: 120, quantity: 2 }],
      dueDate: due,
    }),
  });
  const invoice = typed(ok(made, 201, "create invoice"));
  equal(invoice.nextReminderAt, null, "nextReminderAt without a policy");
  sendingId = invoice.id;
  sendingSerial = invoice.serial;
  const result = await api.POST("/v1/invoices/{id}/send", {
    params: { path: { id: invoice.id } },
    body: body("/v1/invoices/{id}/send", "post", {
      to: [`accounts+${stamp}@initech.example`],
      subject: "Invoice {serial} for {client}",
    }),
  });
  const message = typed(ok(result, 202, "send invoice"));
  equal(message.status, "queued", "status");
  equal(message.kind, "invoice", "kind");
  equal(message.subject, `Invoice ${invoice.serial} for Initech`, "subject");
  equal(message.to.join(), `accounts+${stamp}@initech.example`, "to");
  equal(message.attachments.map((a) => `${a.filename} ${a.contentType}`).join(), `${invoice.serial}.pdf application/pdf`, "attachments");
  equal(result.response.headers.get("location"), `/v1/messages/${message.id}`, "Location");
  messageIds.push(message.id);
});

await step("send the invoice with no body at all: the client's email, the default wording", async () => {
  const id = need(sendingId, "an invoice to send");
  const message = typed(ok(await api.POST("/v1/invoices/{id}/send", { params: { path: { id } } }), 202, "send invoice"));
  equal(message.kind, "invoice", "kind");
  equal(message.to.join(), `ap+${stamp}@initech.example`, "to");
  equal(message.subject, `Invoice ${need(sendingSerial, "a serial")}`, "subject");
  messageIds.push(message.id);
});

await step("both are sent; the SMTP server took them, the PDF attached", async () => {
  const serial = need(sendingSerial, "a serial");
  const expected = [
    [`accounts+${stamp}@initech.example`, `Invoice ${serial} for Initech`],
    [`ap+${stamp}@initech.example`, `Invoice ${serial}`],
  ] as const;
  for (const [index, [to, subject]] of expected.entries()) {
    const message = await sent(need(messageIds[index], "a message"));
    const mail = mailOf(message);
    equal(mail.to, to, "To");
    equal(mail.subject, subject, "Subject");
    equal(mail.from, "billing@billable.localhost", "From");
    equal(mail.attachments.length, 1, "attachments");
    const [pdf] = mail.attachments;
    check(pdf !== undefined, "no attachment");
    equal(`${pdf.filename} ${pdf.content_type}`, `${serial}.pdf application/pdf`, "the attachment");
    check(pdf.size > 1000, `a PDF of ${pdf.size} bytes`);
    equal(message.attachments[0]?.sha256, pdf.sha256, "the PDF sent is the one queued");
  }
  const id = need(sendingId, "an invoice to send");
  const invoice = typed(ok(await api.GET("/v1/invoices/{id}", { params: { path: { id } } }), 200, "get invoice"));
  check(invoice.sentAt !== null, "the invoice's sentAt is not set");
});

await step("list messages by status sent, and the invoice's messages", async () => {
  const newestFirst = [...messageIds].reverse().join();
  const result = await api.GET("/v1/messages", { params: { query: { status: "sent" } } });
  equal(typed(ok(result, 200, "list messages")).map((m) => m.id).join(), newestFirst, "sent messages");
  const id = need(sendingId, "an invoice to send");
  const mine = await api.GET("/v1/invoices/{id}/messages", { params: { path: { id } } });
  equal(typed(ok(mine, 200, "invoice messages")).map((m) => m.id).join(), newestFirst, "the invoice's messages");
});

await step("the receiver got invoice.created and invoice.sent of the invoice, verified", async () => {
  const id = need(sendingId, "an invoice to send");
  const current = need(secret, "a secret");
  const events = async () =>
    jsonLines<Received>(webhookDeliveries)
      .map((d) => ({ event: JSON.parse(d.body) as { type: string; data: { id?: string } }, verified: d.verified[current] }))
      .filter(({ event }) => event.data.id === id)
      .map(({ event, verified }) => `${event.type} ${verified === true ? "verified" : String(verified)}`);
  const got = await until("the invoice's events", events, (got) => got.includes("invoice.sent verified"));
  check(got.includes("invoice.created verified"), `events ${got.join("; ")}`);
  check(got.every((line) => line.endsWith(" verified")), `events ${got.join("; ")}`);
});

await step("an enabled reminder policy without steps is a 400 naming steps", async () => {
  const result = await api.PUT("/v1/reminder-policy", { body: body("/v1/reminder-policy", "put", { enabled: true }) });
  equal(refused(result, 400, "no steps").error, "steps: an enabled policy needs at least one step", "error");
  check(errorTyped(result.error) !== undefined, "no error");
});

await step("set the reminder policy: 3 days before the due date and 7 after; read it back", async () => {
  const result = await api.PUT("/v1/reminder-policy", {
    body: body("/v1/reminder-policy", "put", { enabled: true, steps: [{ daysAfterDue: -3 }, { daysAfterDue: 7 }] }),
  });
  const policy = typed(ok(result, 200, "put policy"));
  equal(policy.enabled, true, "enabled");
  equal(policy.steps.map((s) => s.daysAfterDue).join(), "-3,7", "steps");
  const read = typed(ok(await api.GET("/v1/reminder-policy"), 200, "get policy"));
  equal(JSON.stringify(read), JSON.stringify(policy), "the policy read back");
});

await step("the invoice's next reminder is 3 days before its due date", async () => {
  const id = need(sendingId, "an invoice to send");
  const invoice = typed(ok(await api.GET("/v1/invoices/{id}", { params: { path: { id } } }), 200, "get invoice"));
  check(invoice.dueDate !== null && invoice.nextReminderAt !== null, `dueDate ${invoice.dueDate}, nextReminderAt ${invoice.nextReminderAt}`);
  equal(Date.parse(invoice.nextReminderAt), Date.parse(invoice.dueDate) - 3 * 86400e3, "nextReminderAt");
  equal(invoice.remindersSent, 0, "remindersSent");
});

await step("remind of the invoice now, with no body: sent in the policy's words", async () => {
  const id = need(sendingId, "an invoice to send");
  const queued = typed(ok(await api.POST("/v1/invoices/{id}/remind", { params: { path: { id } } }), 202, "remind"));
  equal(queued.kind, "reminder", "kind");
  equal(queued.to.join(), `ap+${stamp}@initech.example`, "to");
  equal(queued.attachments.length, 0, "attachments");
  equal(queued.reminderStep, null, "a reminder by hand takes no step of the policy");
  const mail = mailOf(await sent(queued.id));
  equal(mail.subject, queued.subject, "Subject");
  check(mail.subject.includes(need(sendingSerial, "a serial")), `Subject ${mail.subject}`);
});

await step("delete the endpoint; it is gone (404)", async () => {
  const id = need(endpointId, "an endpoint");
  const deleted = typed(ok(await api.DELETE("/v1/webhooks/{id}", { params: { path: { id } } }), 200, "delete endpoint"));
  equal(deleted.message, "webhook endpoint deleted", "message");
  const again = await api.GET("/v1/webhooks/{id}", { params: { path: { id } } });
  equal(refused(again, 404, "deleted endpoint").error, "webhook endpoint not found", "error");
});

// ---- Recurring invoices: a retainer's life (its passes are driven by other tests) ----------

await step("a monthly retainer on the last day: made, previewed, changed, paused, resumed, ended", async () => {
  const created = await api.POST("/v1/recurring-invoices", {
    body: body("/v1/recurring-invoices", "post", {
      clientId: need(inlineClientId, "an invoice's client"),
      template: { lineItems: [{ description: "Retainer", unitPrice: 1500, quantity: 1 }], taxPercentage: 19, dueDays: 14 },
      schedule: { frequency: "monthly", dayOfMonth: -1 },
      startsOn: "2030-01-01",
      count: 12,
    }),
  });
  const recurring = typed(ok(created, 201, "create recurring invoice"));
  equal(created.response.headers.get("location"), `/v1/recurring-invoices/${recurring.id}`, "Location");
  equal(recurring.status, "active", "status");
  equal(recurring.nextRunOn, "2030-01-31", "nextRunOn");
  equal(recurring.schedule.rrule, "FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=-1;COUNT=12", "rrule");
  const path = { params: { path: { id: recurring.id } } };
  const listed = typed(ok(await api.GET("/v1/recurring-invoices"), 200, "list recurring invoices"));
  check(listed.some((r) => r.id === recurring.id), "listed");
  const preview = await api.GET("/v1/recurring-invoices/{id}/preview", {
    params: { path: { id: recurring.id }, query: { count: 3 } },
  });
  const periods = typed(ok(preview, 200, "preview"));
  equal(periods.map((p) => p.periodStart).join(), "2030-01-31,2030-02-28,2030-03-31", "the next dates");
  equal(periods[0]?.dueDate, "2030-02-14", "the first due date");
  const patched = await api.PATCH("/v1/recurring-invoices/{id}", {
    ...path,
    body: body("/v1/recurring-invoices/{id}", "patch", {
      template: { lineItems: [{ description: "Retainer", unitPrice: 1650, quantity: 1 }] },
    }),
  });
  equal(typed(ok(patched, 200, "update recurring invoice")).template.lineItems[0]?.unitPrice, 1650, "unitPrice");
  const paused = typed(ok(await api.POST("/v1/recurring-invoices/{id}/pause", path), 200, "pause"));
  equal(paused.status, "paused", "paused");
  equal(paused.nextRunOn, null, "nextRunOn while paused");
  const resumed = typed(ok(await api.POST("/v1/recurring-invoices/{id}/resume", path), 200, "resume"));
  equal(resumed.nextRunOn, "2030-01-31", "nextRunOn once resumed");
  const runs = typed(ok(await api.GET("/v1/recurring-invoices/{id}/runs", path), 200, "runs"));
  equal(runs.length, 0, "runs before its first day");
  const deleted = typed(ok(await api.DELETE("/v1/recurring-invoices/{id}", path), 200, "delete recurring invoice"));
  equal(deleted.message, "recurring invoice deleted", "message");
  const again = await api.GET("/v1/recurring-invoices/{id}", path);
  equal(refused(again, 404, "deleted recurring invoice").error, "recurring invoice not found", "error");
});

// ---- Quotes: from draft to a deposit and the final invoice --------------------------------

await step("a quote: drafted, finalised, accepted, a 30 % deposit, then the final invoice deducting it", async () => {
  const buyer = typed(
    ok(
      await api.POST("/v1/invoices/clients", {
        body: body("/v1/invoices/clients", "post", {
          name: "Initrode",
          email: "ap@initrode.example",
          line1: "1 Initrode Way",
          postalCode: "78701",
        }),
      }),
      201,
      "create client",
    ),
  );
  const created = await api.POST("/v1/quotes", {
    body: body("/v1/quotes", "post", {
      clientId: buyer.id,
      taxPercentage: 10,
      lineItems: [
        { description: "Design", unitPrice: 800, quantity: 5 },
        { description: "Hosting", unitPrice: 40, quantity: 2 },
      ],
    }),
  });
  const draft = typed(ok(created, 201, "create quote"));
  equal(draft.status, "DRAFT", "status");
  equal(draft.serial, null, "a draft's serial");
  equal(draft.total, 4488, "total");
  const path = { params: { path: { id: draft.id } } };
  const sent = typed(ok(await api.POST("/v1/quotes/{id}/finalize", path), 200, "finalize"));
  check(/^Q-\d{4}$/.test(sent.serial ?? ""), `serial ${sent.serial}`);
  const accepted = await api.POST("/v1/quotes/{id}/accept", {
    ...path,
    body: body("/v1/quotes/{id}/accept", "post", { signerName: "Peter Gibbons" }),
  });
  equal(typed(ok(accepted, 200, "accept")).status, "ACCEPTED", "status");
  const deposit = typed(
    ok(
      await api.POST("/v1/quotes/{id}/convert", {
        ...path,
        body: body("/v1/quotes/{id}/convert", "post", { mode: "deposit", depositPercent: 30 }),
      }),
      201,
      "deposit",
    ),
  );
  equal(deposit.quoteConversion, "deposit", "quoteConversion");
  equal(deposit.total, 1346.4, "the deposit's total");
  const last = typed(
    ok(
      await api.POST("/v1/quotes/{id}/convert", {
        ...path,
        body: body("/v1/quotes/{id}/convert", "post", { mode: "full" }),
      }),
      201,
      "final",
    ),
  );
  equal(last.quoteConversion, "final", "quoteConversion");
  equal(last.depositsDeducted, 1346.4, "depositsDeducted");
  equal(last.amountDue, 3141.6, "amountDue");
  equal(last.depositInvoiceIds.join(), deposit.id, "depositInvoiceIds");
  const again = await api.POST("/v1/quotes/{id}/convert", {
    ...path,
    body: body("/v1/quotes/{id}/convert", "post", { mode: "full" }),
  });
  equal(refused(again, 409, "second full conversion").error, `status: the quote was invoiced in full as ${last.serial}`, "error");
  const converted = typed(ok(await api.GET("/v1/quotes/{id}", path), 200, "get quote"));
  equal(converted.status, "CONVERTED", "status");
  equal(converted.invoiceIds.join(), [deposit.id, last.id].join(), "invoiceIds");
});

await step("a request without a key is a 401", async () => {
  const error: ErrorBody = refused(await anonymous.GET("/v1/invoices"), 401, "no key");
  equal(error.error, "missing X-API-Key header", "error");
});

await step("clean up", async () => {
  for (const entry of [need(entryId, "a time entry"), need(timedEntryId, "a timed entry")]) {
    ok(await api.DELETE("/v1/track/time/{id}", { params: { path: { id: entry } } }), 200, "delete time entry");
  }
  const section = need(sectionId, "a section");
  ok(await api.DELETE("/v1/track/sections/{id}", { params: { path: { id: section } } }), 200, "delete section");
  const project = need(projectId, "a project");
  ok(await api.DELETE("/v1/track/projects/{id}", { params: { path: { id: project } } }), 200, "delete project");
  const tag = need(tagId, "a tag");
  ok(await api.DELETE("/v1/track/tags/{id}", { params: { path: { id: tag } } }), 200, "delete tag");
  ok(await api.DELETE("/v1/invoices/{id}", { params: { path: { id: need(retriedId, "a retried invoice") } } }), 200, "delete invoice");
  // Invoices with payments are kept by the books, and so is their client.
  for (const invoice of [need(invoiceId, "an invoice"), need(owedId, "an invoice with books")]) {
    const kept = await api.DELETE("/v1/invoices/{id}", { params: { path: { id: invoice } } });
    check(refused(kept, 409, "delete an invoice with books").error.startsWith("invoice: it has payments"), "kept");
  }
});

finish();
