// Drives Kotoba's page in a real headless Chromium (Debian's /usr/bin/chromium) with
// playwright-core: load the page, send a message, see the streamed answer, send one
// that runs a command, see its step row and card, press Approve, see the row close ok;
// reloaded while the card waits, the row, the chip, the card and the mute choice are
// drawn again;
// muted, the page says she writes and sends the written register;
// a second card offers an edit and a time box and is denied with a reason; a third,
// dangerous, is drawn as dangerous with the gate's label and offers no always.
// Saves screenshots. Started by tests/suite/browser.rs, which runs the server and
// scripts the model. Env: KOTOBA_BASE, KOTOBA_NODE_MODULES, KOTOBA_SHOTS.
"use strict";
const path = require("path");
const { launch, openPage, step } = require("./common.cjs");

const base = process.env.KOTOBA_BASE;
const shots = process.env.KOTOBA_SHOTS;

async function herTextIncludes(page, text) {
  await page.waitForFunction(
    (t) => [...document.querySelectorAll(".msg.her .text")].some((e) => e.textContent.includes(t)),
    text,
    { timeout: 15000 },
  );
}

async function faceBecomes(page, face) {
  await page
    .waitForFunction((f) => document.querySelector("#face").dataset.expression === f, face, { timeout: 10000 })
    .catch(() => {});
}

(async () => {
  const browser = await launch();
  const errors = [];
  const seen = {};
  try {
    step("load the page");
    const page = await openPage(browser, base, "browser", errors);
    // The page speaks unless muted; this run mutes it, so her typed answers are the
    // written register (tests/browser/voice.cjs is the spoken run).
    seen.mute_offered = await page.evaluate(() => {
      const box = document.querySelector("#text-only");
      return !box.checked && !box.disabled;
    });
    await page.check("#text-only");
    seen.register_note = await page.evaluate(() => {
      const note = document.querySelector("#register-note");
      return note && !note.hidden ? note.textContent : null;
    });
    await page.waitForSelector('#conn[data-state="open"]', { timeout: 15000 });

    step("send a message and see the streamed answer");
    await page.fill("#text", "hello there");
    await page.click("#send");
    await herTextIncludes(page, "Hi! I'm right here with you.");
    // Her finished face comes from what she wrote ("Haha" is happy), by the engine's map.
    await faceBecomes(page, "happy");
    seen.face_first = await page.evaluate(() => document.querySelector("#face").dataset.expression);
    seen.deltas = await page.evaluate(() => document.querySelectorAll(".msg.her").length);

    step("a message that runs a command: its row and its card");
    await page.fill("#text", "please make the file");
    await page.click("#send");
    await page.waitForSelector('.row[data-outcome="running"]', { timeout: 15000 });
    seen.row_action = await page.textContent(".row .action");
    await page.waitForSelector('.card button[data-decision="approve"]', { timeout: 15000 });
    seen.card_action = await page.textContent(".card pre.action");
    seen.row_waiting = await page.textContent('.row[data-outcome="running"] .status');
    await page.waitForFunction(() => /expires in \d+ s/.test(document.querySelector(".card .countdown").textContent));
    seen.countdown = await page.textContent(".card .countdown");
    await page.screenshot({ path: path.join(shots, "card.png"), fullPage: true });

    step("reload while the turn waits: its row, chip and card are drawn again");
    await page.reload();
    await page.waitForSelector('#conn[data-state="open"]', { timeout: 15000 });
    await page.waitForSelector('.card button[data-decision="approve"]', { timeout: 15000 });
    seen.reload_row_status = await page
      .textContent('.row[data-outcome="running"] .status', { timeout: 5000 })
      .catch(() => "no running row");
    seen.reload_chip = await page.evaluate(() => !document.querySelector("#chip").hidden);
    seen.reload_rows = await page.evaluate(() => document.querySelectorAll(".row").length);
    seen.reload_muted = await page.evaluate(() => document.querySelector("#text-only").checked);

    step("press Approve and see the row close ok");
    await page.click('.card button[data-decision="approve"]');
    await page.waitForSelector('.row[data-outcome="ok"]', { timeout: 15000 });
    seen.row_status = await page.textContent('.row[data-outcome="ok"] .status');
    await herTextIncludes(page, "Done, the file is there.");
    await faceBecomes(page, "calm");
    seen.face_last = await page.evaluate(() => document.querySelector("#face").dataset.expression);
    seen.settled = await page.textContent(".card .settled");
    seen.buttons_disabled = await page.evaluate(() => [...document.querySelectorAll(".card button")].every((b) => b.disabled));
    await page.click(".row details.full summary").catch(() => {});
    await page.screenshot({ path: path.join(shots, "page.png"), fullPage: true });

    step("a second card: it offers an edit and a time box; deny it with a reason");
    await page.fill("#text", "make another file");
    await page.click("#send");
    await page.waitForSelector('.card:not(.done) button[data-decision="deny"]', { timeout: 15000 });
    seen.offers_edit = await page.evaluate(() => !!document.querySelector('.card:not(.done) button[data-decision="edit"]'));
    seen.time_boxes = await page.evaluate(() => [...document.querySelectorAll(".card:not(.done) select.for-s option")].map((o) => o.textContent));
    await page.fill(".card:not(.done) input.reason", "not in this folder today");
    await page.click('.card:not(.done) button[data-decision="deny"]');
    await page.waitForSelector('.row[data-outcome="refused"]', { timeout: 15000 });
    await herTextIncludes(page, "Left it alone.");
    seen.denied = await page.evaluate(() => [...document.querySelectorAll(".card .settled")].map((e) => e.textContent).pop());

    step("a dangerous card: drawn as dangerous with the gate's label, no always offered");
    await page.fill("#text", "clear out the old builds");
    await page.click("#send");
    await page.waitForSelector('.card:not(.done) button[data-decision="deny"]', { timeout: 15000 });
    seen.danger = await page.evaluate(() => {
      const c = document.querySelector(".card:not(.done)");
      const d = c.querySelector(".danger");
      return {
        marked: c.classList.contains("dangerous"),
        label: d ? d.textContent : null,
        colour: d ? getComputedStyle(d).color : null,
        always: c.querySelectorAll("select.for-s option").length,
        plain_colour: getComputedStyle(c.querySelector(".tool")).color,
      };
    });
    await page.screenshot({ path: path.join(shots, "dangerous.png"), fullPage: true });
    await page.click('.card:not(.done) button[data-decision="deny"]');
    await herTextIncludes(page, "Not that one, then.");

    step("no microphone allowed: one sentence, and typing still works");
    await page.click("#mic");
    await page.waitForSelector(".note.voice-note", { timeout: 15000 });
    seen.mic_note = await page.textContent(".note.voice-note");
    seen.mic_state = await page.evaluate(() => document.querySelector("#voice").dataset.mic);
    seen.errors = errors;
    process.stdout.write(JSON.stringify(seen) + "\n");
  } finally {
    await browser.close();
  }
})().catch((e) => {
  process.stderr.write("browser test failed: " + (e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
