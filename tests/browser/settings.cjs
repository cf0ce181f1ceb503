// The page at a phone's width (360 px) and its Settings panel, in a real headless
// Chromium: nothing overflows sideways and the message box is wide enough to type in;
// the panel draws each key as the settings table says (a toggle for a boolean, a
// choice for an enum, a number with its range), with its default and doc line and the
// variable that overrides it here; a toggle saved from the panel reaches the file.
// Started by tests/suite/browser.rs. Env: KOTOBA_BASE, KOTOBA_NODE_MODULES, KOTOBA_SHOTS.
"use strict";
const path = require("path");
const { launch, step } = require("./common.cjs");

const base = process.env.KOTOBA_BASE;
const shots = process.env.KOTOBA_SHOTS;

(async () => {
  const browser = await launch();
  const errors = [];
  const seen = {};
  try {
    const page = await browser.newPage({ viewport: { width: 360, height: 740 } });
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });

    step("load the page at 360 px");
    await page.goto(base + "/?token=" + process.env.KOTOBA_WEB_TOKEN + "&session=phone");
    await page.waitForSelector('#conn[data-state="open"]', { timeout: 15000 });
    seen.scroll_width = await page.evaluate(() => document.documentElement.scrollWidth);
    seen.text_width = await page.evaluate(() => document.querySelector("#text").getBoundingClientRect().width);
    await page.screenshot({ path: path.join(shots, "phone.png") });

    step("open the settings panel");
    await page.evaluate(() => { document.querySelector("#settings-panel").open = true; });
    await page.waitForSelector('[name="force_ask"]', { timeout: 10000 });
    const input = (key) => page.evaluate((k) => {
      const e = document.querySelector(`[name="${k}"]`);
      const row = e.closest(".setting");
      return {
        tag: e.tagName.toLowerCase(), type: e.type || "", min: e.min || "", max: e.max || "",
        options: e.tagName === "SELECT" ? [...e.options].map((o) => o.value) : [],
        about: row.querySelector(".about") ? row.querySelector(".about").textContent : "",
        overridden: row.querySelector(".overridden-by") ? row.querySelector(".overridden-by").textContent : "",
      };
    }, key);
    seen.force_ask = await input("force_ask");
    seen.api = await input("api");
    seen.work_timeout = await input("work_timeout");
    seen.min_speech = await input("voice.min_speech");
    seen.model = await input("model");
    seen.panel_scroll_width = await page.evaluate(() => document.documentElement.scrollWidth);

    step("switch force_ask on and save");
    await page.evaluate(() => { document.querySelector("#settings-work").open = true; });
    await page.check('[name="force_ask"]');
    await page.click("#settings-save");
    await page.waitForFunction(() => document.querySelector("#settings-note").textContent.startsWith("Saved"), null, { timeout: 10000 });
    seen.note = await page.evaluate(() => document.querySelector("#settings-note").textContent);
    seen.force_ask_after = await page.evaluate(() => document.querySelector('[name="force_ask"]').checked);
    await page.screenshot({ path: path.join(shots, "phone-settings.png"), fullPage: true });
  } catch (e) {
    errors.push(String(e));
  } finally {
    seen.errors = errors;
    process.stdout.write(JSON.stringify(seen) + "\n");
    await browser.close();
  }
})();
