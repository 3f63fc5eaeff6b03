// An invoice's page for its client, in headless Chromium at a desktop's and a phone's width:
// it shows what it must (PAGE_EXPECT, words separated by "|"), loads nothing from another
// host, runs with JavaScript off as on, and axe-core finds no WCAG 2.1 A or AA violation.
// A screenshot of each width goes to SHOTS_DIR (CI keeps them).
//
//   PAGE_URL=http://127.0.0.1:3000/invoices/… PAGE_EXPECT='Rechnung|1.439,90 €' SHOTS_DIR=… [SHOT_NAME=…] node invoice-page.mjs
//
// CHROMIUM names the browser (default /usr/bin/chromium). Prints one line per step and a
// last line `N passed, M failed`; exits 1 when any failed.

import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import puppeteer from "puppeteer-core";

import { check, runner } from "./runner.mjs";

const pageUrl = process.env.PAGE_URL;
const expected = (process.env.PAGE_EXPECT || "").split("|").filter(Boolean);
const shots = process.env.SHOTS_DIR || "target/page-screenshots";
// What the screenshots are called: SHOT_NAME-desktop.png, SHOT_NAME-phone.png.
const shotName = process.env.SHOT_NAME || "invoice-page";
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!pageUrl) {
  console.error("PAGE_URL is not set");
  process.exit(2);
}
mkdirSync(shots, { recursive: true });
const axePath = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const origin = new URL(pageUrl).origin;

const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
});
const { step, finish } = runner(async () => {});

try {
  for (const [name, viewport] of [
    ["desktop", { width: 1280, height: 900 }],
    ["phone", { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }],
  ]) {
    const page = await browser.newPage();
    await page.setViewport(viewport);
    const elsewhere = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(origin) && !request.url().startsWith("data:")) elsewhere.push(request.url());
    });
    const violations = [];
    page.on("console", (message) => {
      if (message.type() === "error") violations.push(message.text());
    });

    await step(`${name}: the page shows what is due and how to pay`, async () => {
      await page.setJavaScriptEnabled(false);
      const response = await page.goto(pageUrl, { waitUntil: "load" });
      check(response.status() === 200, `status ${response.status()}`);
      const text = await page.evaluate(() => document.body.innerText).catch(() => null);
      // With scripts off, evaluate cannot run: read the HTML instead.
      // CLDR's no-break spaces (1.439,90 €) read as spaces.
      const html = (text ?? (await page.content())).replace(/[\u00a0\u202f]/g, " ");
      for (const word of expected) check(html.includes(word), `${JSON.stringify(word)} is not on the page`);
      check(elsewhere.length === 0, `loaded from elsewhere: ${elsewhere.join(", ")}`);
      check(violations.length === 0, `the browser refused: ${violations.join("; ")}`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth).catch(() => viewport.width);
      await page.screenshot({ path: join(shots, `${shotName}-${name}.png`), fullPage: true });
      console.log(`     screenshot: ${join(shots, `${shotName}-${name}.png`)} (${width}px wide)`);
    });

    await step(`${name}: axe-core finds no WCAG 2.1 AA violation`, async () => {
      await page.setJavaScriptEnabled(true);
      // The page's policy allows no script; axe is the test's, not the page's.
      await page.setBypassCSP(true);
      await page.goto(pageUrl, { waitUntil: "load" });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      check(overflow <= 0, `the page is ${overflow}px wider than the screen`);
      await page.addScriptTag({ path: axePath });
      const result = await page.evaluate(async () =>
        // eslint-disable-next-line no-undef
        axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } }),
      );
      const found = result.violations.map(
        (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
      );
      check(found.length === 0, found.join("\n       "));
      check(result.passes.length > 10, `axe ran only ${result.passes.length} rules`);
    });
    await page.close();
  }
} finally {
  await browser.close();
}
finish();
