// A finished turn survives a reload: send a message whose turn runs two commands (one
// ok, one failed) and answers; once it is done, read each row (action, outcome, status,
// result, whole output behind its expander), reload, and read them again. Started by
// tests/suite/browser.rs, which runs the server and scripts the model.
// Env: KOTOBA_BASE, KOTOBA_NODE_MODULES, KOTOBA_SHOTS, KOTOBA_WEB_TOKEN.
"use strict";
const path = require("path");
const { launch, openPage, step } = require("./common.cjs");

const base = process.env.KOTOBA_BASE;
const shots = process.env.KOTOBA_SHOTS;

// Every row on the page, in order, as a person sees it; and where it sits.
function rowsOf() {
  return [...document.querySelectorAll(".row")].map((r) => {
    const pre = r.querySelector("details.full pre");
    const bubble = r.closest(".msg.her");
    return {
      action: r.querySelector(".action").textContent,
      outcome: r.dataset.outcome,
      status: r.querySelector(".status").textContent,
      result: r.querySelector(".result").textContent,
      full: pre ? pre.textContent : null,
      expander: !!r.querySelector("details.full summary"),
      // Her answer is drawn after the rows, in the same bubble.
      answer_after: bubble ? [...bubble.querySelectorAll(":scope > .text")].map((t) => t.textContent).join("") : null,
    };
  });
}

(async () => {
  const browser = await launch();
  const errors = [];
  const seen = {};
  try {
    step("load the page");
    const page = await openPage(browser, base, "rows", errors);
    await page.check("#text-only");
    await page.waitForSelector('#conn[data-state="open"]', { timeout: 15000 });

    step("a turn with two rows, then her answer");
    await page.fill("#text", "run the two checks");
    await page.click("#send");
    await page.waitForFunction(
      () => [...document.querySelectorAll(".msg.her .text")].some((e) => e.textContent.includes("Both checks ran.")),
      null,
      { timeout: 20000 },
    );
    await page.waitForFunction(
      () => document.querySelectorAll(".row").length === 2
        && ![...document.querySelectorAll(".row")].some((r) => r.dataset.outcome === "running"),
      null,
      { timeout: 15000 },
    );
    seen.before = await page.evaluate(rowsOf);

    step("reload: the finished turn is drawn again");
    await page.reload();
    await page.waitForSelector('#conn[data-state="open"]', { timeout: 15000 });
    await page.waitForFunction(() => document.querySelectorAll(".row").length >= 2, null, { timeout: 15000 })
      .catch(() => {});
    seen.after = await page.evaluate(rowsOf);
    seen.user_lines = await page.evaluate(() =>
      [...document.querySelectorAll(".msg.user")].map((m) => m.textContent));
    await page.screenshot({ path: path.join(shots, "reload.png"), fullPage: true });
  } finally {
    seen.errors = errors;
    await browser.close();
  }
  process.stdout.write(JSON.stringify(seen) + "\n");
})().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + "\n");
  process.exit(1);
});
