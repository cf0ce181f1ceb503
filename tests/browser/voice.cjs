// The page's voice in a real headless Chromium with a fake microphone (a WAV of
// espeak-ng speech: "what time is it", a pause, "no wait"): the mic button turns
// hands-free listening on, the page hears the question (its caption appears as her
// listener heard it), her answer is played (the page's player counts non-silent
// samples), speaking over her stops her audio and her turn's row closes interrupted;
// muted, the next typed turn is written. Started by tests/suite/browser.rs.
// Env: KOTOBA_BASE, KOTOBA_NODE_MODULES, KOTOBA_SHOTS, KOTOBA_MIC_WAV.
"use strict";
const path = require("path");
const { launch, step } = require("./common.cjs");

const base = process.env.KOTOBA_BASE;
const shots = process.env.KOTOBA_SHOTS;
const MIC = [
  "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
  // Played once: a looping file would speak again while later steps hold the mic on.
  "--use-file-for-fake-audio-capture=" + process.env.KOTOBA_MIC_WAV + "%noloop",
  "--autoplay-policy=no-user-gesture-required",
];

const voice = (page) => page.evaluate(() => Object.assign({}, window.kotobaVoice || {}));

(async () => {
  const browser = await launch(MIC);
  const errors = [];
  const seen = {};
  try {
    const context = await browser.newContext({ viewport: { width: 1000, height: 860 } });
    await context.grantPermissions(["microphone"], { origin: base });
    const page = await context.newPage();
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });

    step("load the page: it opens her voice");
    await page.goto(base + "/?token=" + process.env.KOTOBA_WEB_TOKEN + "&session=voice");
    await page.waitForSelector('#conn[data-state="open"]', { timeout: 15000 });
    await page.waitForSelector('#voice[data-socket="open"]', { timeout: 15000 });

    step("turn the microphone on and be heard");
    await page.click("#mic");
    await page.waitForSelector('#voice[data-mic="on"]', { timeout: 15000 });
    await page.waitForFunction(
      () => [...document.querySelectorAll(".msg.user.heard .text")].some((e) => /what time is it/i.test(e.textContent)),
      null,
      { timeout: 30000 },
    );
    seen.heard = await page.evaluate(() => [...document.querySelectorAll(".msg.user.heard .text")].map((e) => e.textContent));

    step("her answer is played");
    await page.waitForFunction(() => window.kotobaVoice.played > 4800 && window.kotobaVoice.peak > 1000, null, { timeout: 20000 });
    seen.played = (await voice(page)).played;
    seen.peak = (await voice(page)).peak;
    seen.data_played = Number(await page.getAttribute("#voice", "data-played"));
    await page.screenshot({ path: path.join(shots, "voice.png"), fullPage: true });

    step("speak over her: she stops and her turn's row closes interrupted");
    await page.waitForSelector('.row[data-outcome="interrupted"]', { timeout: 30000 });
    const v = await voice(page);
    seen.stops = v.stops;
    seen.queued_after_stop = v.queued_after_stop;
    seen.sent = v.sent;
    seen.said_lines = await page.evaluate(() => document.querySelectorAll(".msg.her .say").length);

    step("what she was told over her is the next turn");
    await page.waitForFunction(
      () => [...document.querySelectorAll(".msg.her .text")].some((e) => e.textContent.includes("Okay, I left it alone.")),
      null,
      { timeout: 30000 },
    );
    seen.heard_count = await page.evaluate(() => document.querySelectorAll(".msg.user.heard").length);

    step("mute: the next typed turn is written");
    await page.click("#mic");
    await page.check("#text-only");
    await page.fill("#text", "write it down please");
    await page.click("#send");
    await page.waitForFunction(
      () => [...document.querySelectorAll(".msg.her .text")].some((e) => e.textContent.includes("Written down.")),
      null,
      { timeout: 20000 },
    );
    step("hold to talk: the microphone is on while the button is held");
    const box = await page.locator("#mic").boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.waitForSelector('#voice[data-mic="on"]', { timeout: 10000 });
    await page.waitForTimeout(600);
    await page.mouse.up();
    await page.waitForSelector('#voice[data-mic="off"]', { state: "attached", timeout: 10000 });
    seen.held = true;
    seen.errors = errors;
    process.stdout.write(JSON.stringify(seen) + "\n");
  } finally {
    await browser.close();
  }
})().catch((e) => {
  process.stderr.write("browser test failed: " + (e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
