// The interactive reference (Swagger UI at /reference/) driven in headless Chromium the
// way a reader uses it: Authorize with the API key, then "Try it out" and "Execute" on
// a read, on creates with the example body the page shows, and on a create with that
// body edited. Checks what the page shows and what it sent, and that /mcp is listed.
//
//   BASE_URL=http://127.0.0.1:3000 API_KEY=bk_... node reference.mjs
//
// CHROMIUM names the browser (default /usr/bin/chromium). On a failed step a screenshot
// goes to a fresh temporary directory, whose path is printed. Prints one line per step
// and a last line `N passed, M failed`; exits 1 when any failed.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer from "puppeteer-core";

import { check, runner } from "./runner.mjs";

const baseUrl = required("BASE_URL").replace(/\/+$/, "");
const apiKey = required("API_KEY");
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const timeout = Number(process.env.REFERENCE_TIMEOUT_MS || 20000);

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return value;
}

let shots;

const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,1000"],
  defaultViewport: { width: 1400, height: 1000 },
});

try {
  const page = await browser.newPage();
  page.setDefaultTimeout(timeout);

  // Any uncaught script error.
  const scriptErrors = [];
  page.on("pageerror", (error) => scriptErrors.push(error.message));

  // A failed step's screenshot.
  const { step, finish } = runner(async (name, index) => {
    try {
      shots ??= mkdtempSync(join(tmpdir(), "billable-reference-"));
      const file = join(shots, `${String(index).padStart(2, "0")}-${name.replace(/[^A-Za-z0-9]+/g, "-")}.png`);
      await page.screenshot({ path: file });
      console.log(`     screenshot: ${file}`);
    } catch (shotError) {
      console.log(`     no screenshot: ${shotError instanceof Error ? shotError.message : shotError}`);
    }
  });


  /** The operation block of `method path`, expanded. */
  async function openOperation(method, path) {
    const find = () =>
      page.evaluateHandle(
        (method, path) =>
          [...document.querySelectorAll(`.opblock.opblock-${method}`)].find(
            (block) => block.querySelector(".opblock-summary-path")?.getAttribute("data-path") === path,
          ) ?? null,
        method,
        path,
      );
    let block = (await find()).asElement();
    if (!block) throw new Error(`no operation ${method.toUpperCase()} ${path} on the page`);
    await block.scrollIntoView();
    const expanded = await block.evaluate((el) => el.classList.contains("is-open"));
    if (!expanded) {
      const summary = await block.$(".opblock-summary-control, .opblock-summary");
      check(summary, `${method.toUpperCase()} ${path}: no summary to click`);
      await summary.click();
      await page.waitForFunction((el) => el.classList.contains("is-open"), {}, block);
    }
    return block;
  }

  /**
   * Clicks "Try it out" in `block`, unless the reference opens operations ready to try
   * (Swagger UI's `tryItOutEnabled`: then "Execute" is already there).
   */
  async function tryItOut(block) {
    const control = await block.waitForSelector("button.try-out__btn, button.execute");
    const ready = await control.evaluate(
      (el) => el.classList.contains("execute") || el.classList.contains("cancel"),
    );
    if (!ready) await control.click();
    await block.waitForSelector("button.execute");
  }

  /**
   * Clicks "Execute" in `block`; returns the status the page shows and the request the
   * page sent for it (with its headers as Chromium saw them).
   */
  async function execute(block, method, path) {
    // An answer from an earlier Execute stays on the page until the new one has rendered:
    // clear it, so that the status read below is this request's.
    const clear = await block.$("button.btn-clear");
    if (clear) {
      await clear.click();
      await block.waitForSelector(".live-responses-table", { hidden: true });
    }
    const sent = page.waitForRequest(
      (request) => request.method() === method.toUpperCase() && new URL(request.url()).pathname === path,
    );
    const answered = page.waitForResponse(
      (response) =>
        response.request().method() === method.toUpperCase() && new URL(response.url()).pathname === path,
    );
    await (await block.$("button.execute")).click();
    const [request, response] = await Promise.all([sent, answered]);
    const cell = await block.waitForSelector(".live-responses-table tbody tr.response td.response-col_status");
    const shown = await cell.evaluate((el) => el.textContent?.trim() ?? "");
    const body = await block.$eval(
      ".live-responses-table .response-col_description pre, .live-responses-table .response-col_description code",
      (el) => el.textContent ?? "",
    ).catch(() => "");
    return { shown: Number.parseInt(shown, 10), request, response, body };
  }

  function assertKeyed(request, what) {
    const headers = request.headers();
    check(headers["x-api-key"] !== undefined, `${what}: the page sent no X-API-Key header`);
    check(headers["x-api-key"] === apiKey, `${what}: the page sent another X-API-Key than the one authorized`);
  }

  let documentCache;
  /** The OpenAPI document the page renders. */
  async function openapi() {
    documentCache ??= await (await fetch(`${baseUrl}/openapi.json`)).json();
    return documentCache;
  }

  /** `value` with a local `$ref` followed (its sibling keywords win, as in OpenAPI 3.1). */
  function deref(doc, value) {
    if (typeof value?.$ref !== "string" || !value.$ref.startsWith("#/")) return value;
    const { $ref, ...siblings } = value;
    const target = $ref
      .slice(2)
      .split("/")
      .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
      .reduce((node, part) => node?.[part], doc);
    return { ...deref(doc, target), ...siblings };
  }

  /**
   * The example JSON body the document gives for `method path`, looked up where Swagger UI
   * 5.17 takes the body it shows in "Try it out" from, in its order: the media type's
   * first `examples` entry, its `example`, then the body schema's first `examples` item,
   * `default`, `example`. Undefined when there is none: Swagger UI then makes a body up
   * from the schema (random text for patterns, the first `oneOf` branch, which is `null`
   * for an optional object), which can even be accepted: no proof of an example.
   */
  function documentedBody(doc, method, path) {
    const media = doc.paths[path]?.[method]?.requestBody?.content?.["application/json"];
    if (!media) return undefined;
    const [first] = Object.values(media.examples ?? {});
    if (first !== undefined) return deref(doc, first).value;
    if (media.example !== undefined) return media.example;
    const schema = deref(doc, media.schema) ?? {};
    if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
    if (schema.default !== undefined) return schema.default;
    return schema.example;
  }

  /** `value` as JSON with the keys of every object sorted, to compare bodies. */
  function canonical(value) {
    const sort = (v) =>
      Array.isArray(v)
        ? v.map(sort)
        : v && typeof v === "object"
          ? Object.fromEntries(Object.keys(v).sort().map((key) => [key, sort(v[key])]))
          : v;
    return JSON.stringify(sort(value));
  }

  /** A JSON text on one line (another text as it is), for a message. */
  function oneLine(text) {
    try {
      return JSON.stringify(JSON.parse(text));
    } catch {
      return text;
    }
  }

  /**
   * "Try it out" on `POST path` and "Execute" with the body the page shows, as it is: the
   * reader who does no more than click must get a 201. Returns the example and the
   * created resource the page shows.
   */
  async function executeExample(path) {
    const block = await openOperation("post", path);
    await tryItOut(block);
    const textarea = await block.waitForSelector("textarea.body-param__text");
    const text = await textarea.evaluate((el) => el.value);
    let example;
    try {
      example = JSON.parse(text);
    } catch {
      throw new Error(`the body shown is not JSON: ${text}`);
    }
    const { shown, request, response, body } = await execute(block, "post", path);
    const documented = documentedBody(await openapi(), "post", path);
    // Checked first: without an example in the document the body shown is made up, and
    // what the server made of it says nothing about the example.
    check(
      documented !== undefined,
      `the document gives no example body; the page made one up from the schema, ` +
        `and the server answered ${response.status()} to it: ${oneLine(text)} -> ${oneLine(body)}`,
    );
    check(
      canonical(example) === canonical(documented),
      `the page shows ${oneLine(text)}, not the document's example ${JSON.stringify(documented)}`,
    );
    assertKeyed(request, `POST ${path}`);
    check(
      canonical(JSON.parse(request.postData() ?? "null")) === canonical(example),
      "the page sent another body than it shows",
    );
    check(response.status() === 201, `the server answered ${response.status()} to the example: ${oneLine(body)}`);
    check(shown === 201, `the page shows ${shown}`);
    return { example, created: JSON.parse(body) };
  }

  await step("GET / redirects to the reference", async () => {
    const response = await page.goto(`${baseUrl}/`, { waitUntil: "networkidle0" });
    check(response !== null, "no response");
    const chain = response.request().redirectChain();
    check(chain.length >= 1, "no redirect");
    check(chain[0].response()?.status() === 302, `redirect status ${chain[0].response()?.status()}`);
    check(new URL(page.url()).pathname === "/reference/", `landed on ${page.url()}`);
    check(response.status() === 200, `reference status ${response.status()}`);
  });

  await step("the reference renders the document", async () => {
    const title = await page.waitForSelector(".swagger-ui .info .title");
    const text = await title.evaluate((el) => el.textContent ?? "");
    check(text.includes("billable"), `title ${JSON.stringify(text)}`);
    check(text.includes("2026.6.2"), `title without the version: ${JSON.stringify(text)}`);
    await page.waitForSelector('.opblock .opblock-summary-path[data-path="/v1/invoices/clients"]');
  });

  await step("every keyed operation shows the key's lock, and only those", async () => {
    const doc = await (await fetch(`${baseUrl}/openapi.json`)).json();
    const expected = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => `${method} ${path} ${op.security ? "keyed" : "public"}`),
    );
    const shown = await page.$$eval(".opblock", (blocks) =>
      blocks.map((block) => {
        const method = block.querySelector(".opblock-summary-method")?.textContent?.toLowerCase();
        const path = block.querySelector(".opblock-summary-path")?.getAttribute("data-path");
        return `${method} ${path} ${block.querySelector(".authorization__btn") ? "keyed" : "public"}`;
      }),
    );
    check(expected.some((op) => op.endsWith("keyed")), "the document declares no keyed operation");
    check(
      JSON.stringify([...shown].sort()) === JSON.stringify([...expected].sort()),
      `the page shows ${JSON.stringify(shown.filter((op) => !expected.includes(op)))} ` +
        `where the document says ${JSON.stringify(expected.filter((op) => !shown.includes(op)))}`,
    );
  });

  await step("Authorize with the API key", async () => {
    await (await page.waitForSelector(".scheme-container button.authorize")).click();
    const input = await page.waitForSelector(".modal-ux #api_key_value");
    await input.type(apiKey);
    await (await page.waitForSelector(".modal-ux button.modal-btn.authorize[type=submit]")).click();
    // Authorized: the key is masked and the button offers Logout.
    await page.waitForFunction(() =>
      [...document.querySelectorAll(".modal-ux .auth-container h6")].some((h) => h.textContent === "Authorized"),
    );
    await (await page.waitForSelector(".modal-ux button.btn-done")).click();
    await page.waitForSelector(".modal-ux", { hidden: true });
    const locked = await page.$(".scheme-container button.authorize.locked");
    check(locked !== null, "the Authorize button does not show the lock closed");
  });

  await step("Try it out: GET /v1/invoices/clients answers 200, sent with the key", async () => {
    const path = "/v1/invoices/clients";
    const block = await openOperation("get", path);
    // The operation says it needs the key: its lock is shown.
    check((await block.$(".authorization__btn")) !== null, "the operation shows no lock (no security requirement)");
    await tryItOut(block);
    const { shown, request, response, body } = await execute(block, "get", path);
    assertKeyed(request, `GET ${path}`);
    check(response.status() === 200, `the server answered ${response.status()}: ${body}`);
    check(shown === 200, `the page shows ${shown}`);
    check(Array.isArray(JSON.parse(body)), "the page does not show an array of clients");
  });

  // The examples as shown, before the edit below: an edited body stays in the page.
  await step("Try it out: POST /v1/invoices/clients with the example shown answers 201", async () => {
    const { example, created } = await executeExample("/v1/invoices/clients");
    check(typeof created.id === "string", "no id in the response shown");
    check(created.name === example.name, `the page shows ${JSON.stringify(created)}`);
  });

  await step("Try it out: POST /v1/invoices with the example shown (client inline) answers 201", async () => {
    const { example, created } = await executeExample("/v1/invoices");
    // An example with a `clientId` could only name a client of another server.
    check(
      example.client && typeof example.client === "object" && example.clientId === undefined,
      "the example does not give its client inline",
    );
    check(typeof created.id === "string", "no id in the response shown");
    check(typeof created.clientId === "string", `no client in the invoice shown: ${JSON.stringify(created)}`);
  });

  await step("Try it out: POST /v1/track/time with the example shown answers 201", async () => {
    const { example, created } = await executeExample("/v1/track/time");
    check(typeof created.id === "string", "no id in the response shown");
    check(created.taskName === example.taskName, `the page shows ${JSON.stringify(created)}`);
  });

  await step("Try it out: POST /v1/invoices/clients with the example edited answers 201", async () => {
    const path = "/v1/invoices/clients";
    const block = await openOperation("post", path);
    await tryItOut(block);
    const textarea = await block.waitForSelector("textarea.body-param__text");
    const example = JSON.parse(await textarea.evaluate((el) => el.value));
    check(example && typeof example === "object", "no example body");
    const valid = {
      name: "Reference Client",
      email: "reference@example.com",
      phone: "+32 2 555 01 23",
      vatNumber: "",
      line1: "1 Reference Street",
      line2: "",
      line3: "",
      postalCode: "1000",
      city: "Brussels",
      countryCode: "BE",
      buyerReference: "",
    };
    for (const key of Object.keys(example)) {
      check(key in valid, `the example has a field this check does not know: ${key}`);
    }
    for (const key of ["name", "email", "line1", "postalCode"]) {
      check(key in example, `the example lacks the required ${key}`);
    }
    const edited = Object.fromEntries(Object.keys(example).map((key) => [key, valid[key]]));
    await textarea.click();
    await page.keyboard.down("Control");
    await page.keyboard.press("KeyA");
    await page.keyboard.up("Control");
    await page.keyboard.press("Backspace");
    await page.keyboard.sendCharacter(JSON.stringify(edited, null, 2));
    const { shown, request, response, body } = await execute(block, "post", path);
    assertKeyed(request, `POST ${path}`);
    check(
      request.headers()["content-type"]?.startsWith("application/json"),
      `content-type ${request.headers()["content-type"]}`,
    );
    check(JSON.stringify(JSON.parse(request.postData() ?? "null")) === JSON.stringify(edited), "the page sent another body");
    check(response.status() === 201, `the server answered ${response.status()}: ${body}`);
    check(shown === 201, `the page shows ${shown}`);
    const client = JSON.parse(body);
    check(client.name === "Reference Client", `the page shows ${body}`);
    check(typeof client.id === "string", "no id in the response shown");
  });

  await step("the reference lists the MCP endpoint /mcp", async () => {
    const listed = await page.$('.opblock .opblock-summary-path[data-path="/mcp"]');
    const documented = "/mcp" in (await openapi()).paths;
    check(listed !== null, `no operation /mcp on the page (the document ${documented ? "has" : "has no"} /mcp)`);
  });

  await step("no uncaught script errors on the page", async () => {
    check(scriptErrors.length === 0, scriptErrors.join("; "));
  });
  finish();
} finally {
  await browser.close();
}
