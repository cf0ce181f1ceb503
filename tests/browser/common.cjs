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

module.exports = { launch, step };
