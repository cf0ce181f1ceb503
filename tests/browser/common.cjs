// What the page's browser scripts share: playwright-core from the test deps, the
// Chromium flags every run uses, and a step line on stderr.
"use strict";
const path = require("path");

const { chromium } = require(path.join(process.env.KOTOBA_NODE_MODULES, "playwright-core"));

const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

function step(name) {
  process.stderr.write("browser: " + name + "\n");
}

function launch(extra = []) {
  return chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: FLAGS.concat(extra) });
}

// A page of `browser` at `base` on `session` (with the test token), open and connected;
// each script error on it is pushed to `errors`.
async function openPage(browser, base, session, errors) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 860 } });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  await page.goto(base + "/?token=" + process.env.KOTOBA_WEB_TOKEN + "&session=" + session);
  await page.waitForSelector('#conn[data-state="open"]', { timeout: 15000 });
  return page;
}

module.exports = { launch, openPage, step };
