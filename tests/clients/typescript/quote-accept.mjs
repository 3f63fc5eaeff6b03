// A client accepts a quote on its page in headless Chromium, with JavaScript off as a
// careful client may have it: it types its name, ticks the box, presses Accept, and the
// page it is sent back to says it accepted (PAGE_EXPECT, words separated by "|"). A
// screenshot goes to SHOTS_DIR.
//
//   PAGE_URL=http://127.0.0.1:3000/quotes/… SIGNER='Dr. Erika Beispiel' PAGE_EXPECT='Angenommen von' node quote-accept.mjs

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import puppeteer from "puppeteer-core";

import { check, runner } from "./runner.mjs";

const pageUrl = process.env.PAGE_URL;
const signer = process.env.SIGNER || "Erika Mustermann";
const expected = (process.env.PAGE_EXPECT || "").split("|").filter(Boolean);
const shots = process.env.SHOTS_DIR || "target/page-screenshots";
if (!pageUrl) {
  console.error("PAGE_URL is not set");
  process.exit(2);
}
mkdirSync(shots, { recursive: true });
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
});
const { step, finish } = runner(async () => {});

try {
  const page = await browser.newPage();
  await page.setJavaScriptEnabled(false);
  await step("the client types its name, ticks the box and accepts", async () => {
    const response = await page.goto(pageUrl, { waitUntil: "load" });
    check(response.status() === 200, `status ${response.status()}`);
    await page.type("#signer", signer);
    await page.click("#agree");
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("form[action$='/accept'] button")]);
    check(new URL(page.url()).pathname === new URL(pageUrl).pathname, `ended at ${page.url()}`);
    const html = (await page.content()).replace(/[\u00a0\u202f]/g, " ");
    for (const word of expected) check(html.includes(word), `${JSON.stringify(word)} is not on the page`);
    check(!html.includes('id="signer"'), "the page still offers the forms");
    await page.screenshot({ path: join(shots, "quote-accepted.png"), fullPage: true });
  });
} finally {
  await browser.close();
}
finish();
