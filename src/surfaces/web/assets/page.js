// Kotoba's page: one event stream per session carrying the engine's frames unchanged,
// drawn as her streamed answer, step rows, peek line, working chip, face, background
// runs (kept apart by run_id) and approval cards with a live countdown. Everything a
// frame carries is written with textContent: nothing from the server becomes markup.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const session = params.get("session") || "main";
  // Her face is drawn, not an emoji (a machine without an emoji font shows boxes).
  const MOUTHS = {
    calm: "M20 40 Q32 48 44 40",
    happy: "M18 38 Q32 54 46 38",
    determined: "M22 42 L42 42",
    thinking: "M22 43 Q32 39 42 43",
    fail: "M20 46 Q32 36 44 46",
    sad: "M20 46 Q32 38 44 46",
    surprised: "M28 42 A4 5 0 1 0 36 42 A4 5 0 1 0 28 42",
    excited: "M18 37 Q32 58 46 37 Z",
    affectionate: "M21 40 Q32 50 43 40",
    confused: "M21 44 Q27 40 32 44 Q37 48 43 42",
    embarrassed: "M22 42 Q32 47 42 42",
    scared: "M22 45 Q27 41 32 45 Q37 49 42 45",
    sleepy: "M26 43 L38 43",
    angry: "M20 46 Q32 40 44 46",
  };
  // Which faces exist and what each means comes from the engine's one map
  // (src/face.rs); the page only draws the name it is sent.
  // The faces a turn shows while it works (the chip's and a tool's focus face).
  const WORKING_FACES = ["determined", "thinking"];
  const OUTCOME_MARK = { ok: "✓", failed: "✗", refused: "⊘", pending: "…", interrupted: "■" };
  const ENDING_WORDS = {
    declined: "you said no",
    unanswered: "the card expired unanswered",
    unreachable: "nobody could be asked",
    dismissed: "the card went away",
    policy: "refused before it ran",
  };

  let current = null; // the bubble of the reply being streamed
  const rows = new Map(); // row id -> element
  const cards = new Map(); // request id -> element
  const jobs = new Map(); // run_id -> element

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function scroll() {
    const log = $("log");
    log.scrollTop = log.scrollHeight;
  }

  function api(path, opts = {}) {
    const init = { method: opts.method || "GET", credentials: "same-origin", headers: {} };
    if (opts.body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(opts.body);
    }
    return fetch(path, init);
  }

  // ---- conversation ----------------------------------------------------------------

  function userLine(text, cls) {
    const b = el("div", "msg user" + (cls ? " " + cls : ""));
    b.appendChild(el("div", "text", text));
    $("log").appendChild(b);
    scroll();
  }

  // Her bubble is a flow: text, narration, rows and cards in the order they came, so
  // words said after a command run appear below its row.
  function herBubble() {
    const b = el("div", "msg her");
    $("log").appendChild(b);
    return b;
  }

  function appendText(bubble, text) {
    let last = bubble.lastElementChild;
    if (!last || !last.classList.contains("text")) {
      last = el("div", "text");
      bubble.appendChild(last);
    }
    last.textContent += text;
  }

  function bubbleText(bubble) {
    return [...bubble.querySelectorAll(":scope > .text")].map((t) => t.textContent).join("");
  }

  function ensureCurrent() {
    if (!current) current = herBubble();
    return current;
  }

  // ---- step rows -------------------------------------------------------------------

  function drawRow(row, container) {
    let r = rows.get(row.id);
    if (!r) {
      r = el("div", "row");
      r.dataset.rowId = row.id;
      r.dataset.kind = row.step_kind;
      r.dataset.tool = row.tool;
      const line = el("div", "line");
      line.appendChild(el("span", "mark", "◌"));
      line.appendChild(el("code", "action", row.action));
      line.appendChild(el("span", "status", "running"));
      r.appendChild(line);
      r.appendChild(el("div", "result"));
      container.appendChild(r);
      rows.set(row.id, r);
    }
    if (row.phase === "done") {
      const outcome = row.outcome || "ok";
      r.dataset.outcome = outcome;
      r.querySelector(".mark").textContent = OUTCOME_MARK[outcome] || "•";
      let status = outcome;
      if (row.ending && ENDING_WORDS[row.ending]) status += " — " + ENDING_WORDS[row.ending];
      if (outcome === "pending") status = "waiting for your answer";
      r.querySelector(".status").textContent = status;
      r.querySelector(".result").textContent = row.result || "";
      const old = r.querySelector("details");
      if (old) old.remove();
      if (row.full_output) {
        const d = el("details", "full");
        d.appendChild(el("summary", null, "full output"));
        d.appendChild(el("pre", null, row.full_output));
        if (row.clipped) d.appendChild(el("p", "clipped", "clipped: the output was longer than this and was cut"));
        r.appendChild(d);
      }
    } else {
      r.dataset.outcome = "running";
    }
    scroll();
  }

  // A running row whose tool asks on a card says so until the card settles: the
  // newest running row of that tool (an inline card holds its turn).
  function markWaiting(card) {
    const running = [...rows.values()].filter((r) =>
      r.dataset.outcome === "running" && r.dataset.tool === card.tool && !r.dataset.waiting);
    const r = running[running.length - 1];
    if (!r) return;
    r.dataset.waiting = card.request_id;
    r.querySelector(".status").textContent = "waiting for your answer";
  }

  function unmarkWaiting(id) {
    for (const r of rows.values()) {
      if (r.dataset.waiting !== id) continue;
      delete r.dataset.waiting;
      if (r.dataset.outcome === "running") r.querySelector(".status").textContent = "running";
    }
  }

  // ---- cards -----------------------------------------------------------------------

  function remaining(c) {
    let ms = c.expiresAt - Date.now();
    return Math.max(0, Math.ceil(ms / 1000));
  }

  function drawCard(card, where) {
    if (cards.has(card.request_id)) return;
    const c = el("div", "card");
    c.dataset.requestId = card.request_id;
    c.dataset.risk = card.risk;
    // A clock that disagrees with the server by more than the window falls back to
    // the window counted from now.
    const skewed = Math.abs(card.expires_at_ms - Date.now()) > (card.window_secs + 5) * 1000;
    c.expiresAt = skewed ? Date.now() + card.window_secs * 1000 : card.expires_at_ms;
    c.appendChild(el("div", "title", card.kind === "input" ? "She asks" : "May she run this?"));
    if (card.danger) {
      // The gate called it dangerous: drawn so, with its rule, and never saved as always.
      c.classList.add("dangerous");
      c.appendChild(el("div", "danger", "⚠ Dangerous: " + card.danger + " — it asks every time"));
    }
    c.appendChild(el("div", "tool", card.tool + " · " + card.risk));
    c.appendChild(el("pre", "action", card.action));
    if (card.why) c.appendChild(el("div", "why", card.why));
    if (card.no_always_reason) c.appendChild(el("div", "note", card.no_always_reason));
    const buttons = el("div", "buttons");
    const add = (label, decision, cls) => {
      const b = el("button", cls, label);
      b.type = "button";
      b.dataset.decision = decision;
      b.addEventListener("click", () => answer(card.request_id, decision, c));
      buttons.appendChild(b);
    };
    if (card.kind === "input") {
      // A question: a typed answer (masked for secrets), or skip it.
      const input = el("input", "answer");
      input.type = card.secret ? "password" : "text";
      input.autocomplete = "off";
      buttons.appendChild(input);
      const send = el("button", "approve", "Send");
      send.type = "button";
      send.addEventListener("click", () => answer(card.request_id, "approve", c, { text: input.value }));
      buttons.appendChild(send);
      add("Skip", "deny", "deny");
    } else {
      add("Approve", "approve", "approve");
      if (card.can_edit) {
        // Edit, then approve: the edited line goes through the gate again.
        const edit = el("textarea", "edited");
        edit.value = card.action;
        edit.hidden = true;
        c.appendChild(edit);
        const toggle = el("button", "secondary", "Edit…");
        toggle.type = "button";
        toggle.dataset.decision = "edit";
        toggle.addEventListener("click", () => {
          if (edit.hidden) { edit.hidden = false; toggle.textContent = "Run the edited line"; edit.focus(); }
          else answer(card.request_id, "approve", c, { edited: edit.value });
        });
        buttons.appendChild(toggle);
      }
      if (card.can_always_exact || card.can_always) {
        // The "always" choices take a time box.
        const box = el("select", "for-s");
        for (const [label, secs] of [["for 1 hour", "3600"], ["for 8 hours", "28800"], ["until revoked", ""]]) {
          const o = el("option", "", label);
          o.value = secs;
          box.appendChild(o);
        }
        box.value = "";
        const always = (decision) => () => {
          const extra = box.value ? { for_s: Number(box.value) } : {};
          answer(card.request_id, decision, c, extra);
        };
        if (card.can_always_exact) addWith("Always (this exact line)", "always_exact", always("always_exact"));
        if (card.can_always) addWith("Always (" + (card.family || card.tool) + ")", "always_family", always("always_family"));
        buttons.appendChild(box);
      }
      // Deny, with an optional reason she is told verbatim.
      const reason = el("input", "reason");
      reason.type = "text";
      reason.placeholder = "why not? (optional)";
      buttons.appendChild(reason);
      addWith("Deny", "deny", () => {
        const why = reason.value.trim();
        answer(card.request_id, "deny", c, why ? { reason: why } : {});
      });
    }
    function addWith(label, decision, onClick) {
      const b = el("button", decision === "deny" ? "deny" : "secondary", label);
      b.type = "button";
      b.dataset.decision = decision;
      b.addEventListener("click", onClick);
      buttons.appendChild(b);
    }
    c.appendChild(buttons);
    c.appendChild(el("div", "countdown", ""));
    c.appendChild(el("div", "settled"));
    cards.set(card.request_id, c);
    (where || ensureCurrent()).appendChild(c);
    tick();
    scroll();
  }

  function settleCard(id, text) {
    const c = cards.get(id);
    if (!c) return;
    c.classList.add("done");
    c.querySelectorAll("button").forEach((b) => (b.disabled = true));
    c.querySelector(".countdown").textContent = "";
    c.querySelector(".settled").textContent = text;
  }

  function settlementText(s) {
    switch (s.how) {
      case "decided": {
        const what = { approve: "Approved", always_exact: "Approved, always for this exact line,", always_family: "Approved, always for its family,", deny: "Denied" };
        return (what[s.decision] || s.decision) + " by " + s.by + (s.via ? " on " + s.via : "") + ".";
      }
      case "expired": return "Expired: nobody answered, nothing ran.";
      case "dismissed": return "Dismissed: the card went away, nothing ran.";
      default: return "Cancelled.";
    }
  }

  async function answer(id, decision, c, extra) {
    c.querySelectorAll("button").forEach((b) => (b.disabled = true));
    const body = Object.assign({ decision }, extra || {});
    const resp = await api("/api/cards/" + encodeURIComponent(id), { method: "POST", body });
    if (resp.status === 409) settleCard(id, "Already settled: nothing changed.");
    else if (!resp.ok) {
      const body = await resp.json().catch(() => ({}));
      c.querySelector(".settled").textContent = body.message || "That answer was refused.";
      c.querySelectorAll("button").forEach((b) => (b.disabled = false));
    }
  }

  function tick() {
    for (const c of cards.values()) {
      if (c.classList.contains("done")) continue;
      const s = remaining(c);
      c.querySelector(".countdown").textContent = s > 0 ? "expires in " + s + " s" : "expiring…";
    }
  }
  setInterval(tick, 1000);

  // ---- background runs -------------------------------------------------------------

  function job(runId) {
    let j = jobs.get(runId);
    if (!j) {
      j = el("div", "job");
      j.dataset.runId = runId;
      const head = el("div", "head");
      head.appendChild(el("code", "run-id", runId));
      head.appendChild(el("span", "goal", "background run"));
      head.appendChild(el("span", "state", "running"));
      j.appendChild(head);
      j.appendChild(el("div", "text"));
      j.appendChild(el("div", "steps"));
      $("job-list").appendChild(j);
      jobs.set(runId, j);
      $("jobs").hidden = false;
    }
    return j;
  }

  function onJobFrame(ev) {
    const j = job(ev.run_id);
    switch (ev.type) {
      case "work_started": j.querySelector(".goal").textContent = ev.goal; break;
      case "text_delta": j.querySelector(".text").textContent += ev.text; break;
      case "step": drawRow(ev, j.querySelector(".steps")); break;
      case "working": j.querySelector(".state").textContent = ev.on ? "working" : "idle"; break;
      case "task_list": {
        const list = el("ul", "tasks");
        for (const t of ev.items) list.appendChild(el("li", t.status, t.text));
        const old = j.querySelector(".tasks");
        if (old) old.replaceWith(list); else j.appendChild(list);
        break;
      }
      case "artifact": j.appendChild(el("div", "artifact", ev.change + ": " + ev.path)); break;
      case "subagent_spawned": j.appendChild(el("div", "sub", "helper " + ev.id + ": " + ev.goal)); break;
      case "subagent_done": j.appendChild(el("div", "sub", "helper " + ev.id + (ev.ok ? " done: " : " failed: ") + ev.summary)); break;
      case "work_done":
        j.dataset.ok = String(ev.ok);
        j.querySelector(".state").textContent = ev.ok ? "done" : "failed";
        j.appendChild(el("div", "summary", ev.summary));
        break;
      default: onFrame(Object.assign({}, ev, { run_id: undefined }));
    }
  }

  // ---- frames ----------------------------------------------------------------------

  function setFace(name) {
    const f = $("face");
    f.dataset.expression = name;
    f.querySelector(".mouth").setAttribute("d", MOUTHS[name] || MOUTHS.calm);
    f.querySelector(".name").textContent = name;
  }

  function onFrame(ev) {
    if (ev.run_id) return onJobFrame(ev);
    switch (ev.type) {
      case "turn_started":
        current = herBubble();
        current.dataset.turnId = ev.turn_id;
        break;
      case "text_delta":
        appendText(ensureCurrent(), ev.text);
        scroll();
        break;
      case "step": {
        // A deferred row completes later, in place, wherever it was drawn.
        const existing = rows.get(ev.id);
        drawRow(ev, existing ? existing.parentNode : ensureCurrent());
        break;
      }
      case "peek":
        $("peek").hidden = !ev.tool;
        $("peek").textContent = ev.tool ? "looking at: " + ev.tool : "";
        break;
      case "working": $("chip").hidden = !ev.on; break;
      case "face": setFace(ev.expression); break;
      case "say": {
        // Her narration (announce, heartbeat or hum, after and fail lines) is heard
        // in a turn the page says aloud; written in any other (a /v1 turn, muted).
        // The voice socket may say a turn is spoken a moment after this frame (two
        // sockets keep no common order): while her voice is live the line waits
        // hidden, is dropped when the turn turns out spoken, shown otherwise.
        const turnId = current && current.dataset.turnId;
        if (voice && turnId && voice.speaks(turnId)) break;
        const line = el("div", "say " + ev.kind, ev.text);
        line.dataset.turn = turnId || "";
        ensureCurrent().appendChild(line);
        if (voice && turnId && voice.live()) {
          line.hidden = true;
          setTimeout(() => { if (line.isConnected) line.hidden = false; }, 2000);
        }
        break;
      }
      case "card": drawCard(ev); markWaiting(ev); break;
      case "card_settled":
        settleCard(ev.request_id, settlementText(ev.settlement));
        unmarkWaiting(ev.request_id);
        break;
      case "link_card": {
        const a = el("a", "link", ev.title || ev.url);
        a.href = /^https?:\/\//.test(ev.url) ? ev.url : "#";
        a.target = "_blank";
        a.rel = "noopener noreferrer";
        ensureCurrent().appendChild(a);
        break;
      }
      case "reminder":
        // A reminder set in this session came due (docs/surfaces.md): a note in the log.
        $("log").appendChild(el("div", "note reminder", "⏰ Reminder: " + ev.text));
        scroll();
        break;
      case "compacted":
        // Her oldest lines were summarised to fit the model's window (docs/engine.md).
        $("log").appendChild(el("div", "note compacted",
          "Earlier conversation summarised (" + ev.lines + " lines; still searchable)."));
        scroll();
        break;
      case "turn_done":
        if (current) {
          current.dataset.status = ev.status;
          if (ev.status !== "completed") current.appendChild(el("div", "turn-status", ev.status));
          if (!bubbleText(current) && ev.text) appendText(current, ev.text);
        }
        current = null;
        // A working face lasts while she works; a stumble's face stays until the next one.
        if (WORKING_FACES.includes($("face").dataset.expression)) setFace("calm");
        break;
      default:
        break; // a frame this page does not draw yet
    }
  }

  // ---- stream, history, panels ------------------------------------------------------

  function connect() {
    const textOnly = $("text-only").checked ? "1" : "0";
    const src = new EventSource("/api/events?session=" + encodeURIComponent(session) + "&text_only=" + textOnly);
    src.onopen = () => { $("conn").dataset.state = "open"; $("conn").textContent = "connected"; };
    src.onerror = () => { $("conn").dataset.state = "closed"; $("conn").textContent = "reconnecting…"; };
    src.onmessage = (m) => {
      let ev;
      try { ev = JSON.parse(m.data); } catch (_) { return; }
      onFrame(ev);
    };
    src.addEventListener("lagged", (m) => {
      const n = JSON.parse(m.data).skipped;
      $("log").appendChild(el("div", "note", "(" + n + " updates skipped)"));
    });
    return src;
  }

  // Cards waiting for the owner in other sessions (Discord's, the terminal's, other
  // pages'): drawn in their own panel and answerable here; the first answer anywhere
  // settles them everywhere.
  const elsewhere = new Set();
  async function pollElsewhere() {
    const resp = await api("/api/cards");
    if (!resp.ok) return;
    const waiting = (await resp.json()).filter((c) => c.session !== "web:" + session);
    const list = $("elsewhere").querySelector(".list");
    for (const card of waiting) {
      if (!cards.has(card.request_id)) {
        elsewhere.add(card.request_id);
        drawCard(card, list);
        cards.get(card.request_id).dataset.session = card.session;
      }
    }
    const ids = new Set(waiting.map((c) => c.request_id));
    for (const id of elsewhere) {
      if (!ids.has(id)) {
        const c = cards.get(id);
        if (c && !c.classList.contains("done")) settleCard(id, "Settled elsewhere.");
        elsewhere.delete(id);
      }
    }
    $("elsewhere").hidden = !list.querySelector(".card:not(.done)");
  }
  setInterval(pollElsewhere, 2000);

  async function loadHistory() {
    const resp = await api("/api/history?session=" + encodeURIComponent(session));
    if (!resp.ok) return;
    // A turn's rows were drawn in her bubble before her answer: redrawn the same way.
    let turn = null;
    for (const m of await resp.json()) {
      if (m.role === "user") {
        userLine(m.text);
        turn = null;
      } else if (m.role === "step") {
        turn = turn || herBubble();
        drawRow(m.step, turn);
      } else {
        appendText(turn || herBubble(), m.text);
        turn = null;
      }
    }
  }

  async function loadStatus() {
    const resp = await api("/api/status?session=" + encodeURIComponent(session));
    if (!resp.ok) return;
    const s = await resp.json();
    const notes = [];
    if (s.auth === "none") {
      notes.push("This page has no login (web_auth: none): anyone on this machine who reaches it is her owner. Remove web_auth: none unless you alone use this machine.");
    }
    if (s.missing_setup) notes.push(s.missing_setup);
    if (notes.length) {
      $("setup").hidden = false;
      $("setup").textContent = notes.join(" ");
    }
    $("session-name").textContent = "session " + session + " · " + s.model;
    if (s.context) {
      $("session-name").title = s.context.tokens + " of " + s.context.window +
        " tokens of the model's window in use";
    }
  }

  async function loadGrants() {
    const resp = await api("/api/grants");
    if (!resp.ok) return;
    const list = await resp.json();
    const body = $("grants").querySelector("tbody");
    body.textContent = "";
    $("grants-empty").hidden = list.length > 0;
    for (const g of list) {
      const tr = el("tr");
      tr.appendChild(el("td", null, g.pattern));
      tr.appendChild(el("td", null, g.scope));
      tr.appendChild(el("td", null, g.granted_by));
      tr.appendChild(el("td", null, new Date(g.at_ms).toLocaleString()));
      const td = el("td");
      const b = el("button", "secondary", "Revoke");
      b.type = "button";
      b.addEventListener("click", async () => {
        await api("/api/grants/" + g.id, { method: "DELETE" });
        loadGrants();
      });
      td.appendChild(b);
      tr.appendChild(td);
      body.appendChild(tr);
    }
  }

  // Erase everything she keeps about one person (the same erase as their /forget-me).
  async function forgetPerson(e) {
    e.preventDefault();
    const id = $("forget-id").value.trim();
    if (!id) return;
    if (!confirm("Erase everything Kotoba keeps about " + id + "? This cannot be undone.")) return;
    const resp = await api("/api/people/" + encodeURIComponent(id) + "/forget", { method: "POST" });
    const body = await resp.json().catch(() => ({}));
    if (resp.ok) {
      const n = body.erased || {};
      $("forget-note").textContent = "Forgotten: " + (n.conversations || 0) + " conversation(s), " +
        (n.lines || 0) + " line(s), " + (n.facts || 0) + " fact(s), " + (n.notebook || 0) + " notebook row(s).";
      $("forget-id").value = "";
    } else {
      $("forget-note").textContent = "Not erased: " + (body.message || resp.status);
    }
  }

  async function loadAudit() {
    const resp = await api("/api/audit?limit=100");
    if (!resp.ok) return;
    const body = $("audit").querySelector("tbody");
    body.textContent = "";
    for (const r of await resp.json()) {
      const tr = el("tr");
      tr.appendChild(el("td", null, new Date(r.at_ms).toLocaleString()));
      tr.appendChild(el("td", null, r.tool));
      tr.appendChild(el("td", "mono", r.action));
      tr.appendChild(el("td", null, r.approved ? "yes" : "no"));
      tr.appendChild(el("td", null, r.approver));
      tr.appendChild(el("td", null, r.detail));
      body.appendChild(tr);
    }
  }

  // The Settings panel (docs/surfaces.md): every live settings.yaml key, the work caps
  // under "Advanced (work)"; Save sends only the keys changed, and a bad value is named.
  async function loadSettings() {
    const resp = await api("/api/settings");
    if (!resp.ok) return;
    drawSettings((await resp.json()).settings);
  }

  // One input per key, as the settings table says: a toggle, a choice, a number with
  // its range, or text; its default and doc line under it, and the variable that
  // overrides it here, if one does.
  function settingInput(s) {
    let input;
    if (s.kind === "toggle") {
      input = el("input");
      input.type = "checkbox";
      input.checked = s.value === "true";
    } else if (s.kind === "choice") {
      input = el("select");
      const words = s.choices.includes(s.value) ? s.choices : [s.value].concat(s.choices);
      for (const w of words) {
        const o = el("option", null, w === "" ? "(not set)" : w);
        o.value = w;
        input.appendChild(o);
      }
      input.value = s.value;
    } else {
      input = el("input");
      if (s.kind === "number") {
        input.type = "number";
        input.min = String(s.min);
        if (s.max !== null && s.max !== undefined) input.max = String(s.max);
        input.step = s.whole ? "1" : "any";
      }
      input.value = s.value;
    }
    input.name = s.key;
    input.dataset.was = valueOf(input);
    if (s.read_only) input.readOnly = true;
    if (s.secret) {
      input.type = "password";
      input.placeholder = s.set ? "(set)" : "(not set)";
    }
    return input;
  }

  function valueOf(input) {
    return input.type === "checkbox" ? String(input.checked) : input.value;
  }

  function drawSettings(list) {
    $("settings-general").textContent = "";
    $("settings-work-rows").textContent = "";
    for (const s of list) {
      const row = el("label", "setting");
      row.dataset.key = s.key;
      row.appendChild(el("span", "key mono", s.key));
      row.appendChild(settingInput(s));
      let about = s.doc + " (default: " + (s.default === "" ? "empty" : s.default) + ")";
      if (s.kind === "number") {
        about += s.max !== null && s.max !== undefined
          ? " — from " + s.min + " to " + s.max : " — at least " + s.min;
      }
      row.appendChild(el("span", "about", about));
      if (s.warning) row.appendChild(el("span", "warning", s.warning));
      if (s.overridden_by) {
        row.classList.add("overridden");
        row.appendChild(el("span", "overridden-by", "overridden by " + s.overridden_by));
      }
      $(s.group === "work" ? "settings-work-rows" : "settings-general").appendChild(row);
    }
  }

  async function saveSettings(e) {
    e.preventDefault();
    const body = {};
    for (const input of $("settings-form").querySelectorAll("[name]")) {
      if (input.readOnly) continue;
      const value = valueOf(input);
      if (value !== input.dataset.was) body[input.name] = value;
    }
    if (!Object.keys(body).length) { $("settings-note").textContent = "Nothing changed."; return; }
    const resp = await api("/api/settings", { method: "POST", body });
    const answer = await resp.json().catch(() => ({}));
    if (!resp.ok) {
      $("settings-note").textContent = (answer.key ? answer.key + ": " : "") + (answer.message || "Not saved.");
      return;
    }
    let note = "Saved: " + answer.saved.join(", ") + ". It applies from the next turn.";
    for (const o of answer.overridden || []) {
      note += " " + o.key + " is overridden by " + o.by + " here: the saved value applies once " + o.by + " is unset.";
    }
    $("settings-note").textContent = note;
    drawSettings(answer.settings);
  }

  async function send(e) {
    e.preventDefault();
    const text = $("text").value.trim();
    if (!text) return;
    $("text").value = "";
    userLine(text);
    if (voice) voice.wake();
    const resp = await api("/api/message", { method: "POST", body: { session, text, text_only: $("text-only").checked } });
    if (!resp.ok) {
      const body = await resp.json().catch(() => ({}));
      $("log").appendChild(el("div", "note", body.message || "That message was not sent."));
    }
  }

  // ---- voice -----------------------------------------------------------------------

  let voice = null;
  function startVoice() {
    if (!window.KotobaVoice) return;
    voice = window.KotobaVoice(session, {
      heard: (text) => userLine(text, "heard"),
      notice: (text) => { $("log").appendChild(el("div", "note voice-note", text)); scroll(); },
      speaking: (on) => { $("voice").dataset.speaking = on ? "true" : "false"; },
      // A turn is said aloud here: narration printed for it while that was not known
      // yet is dropped (it is heard).
      spoken: (turnId) => {
        document.querySelectorAll(".say").forEach((s) => { if (s.dataset.turn === turnId) s.remove(); });
      },
      counted: (st) => { $("voice").dataset.played = String(st.played); },
      changed: (st) => {
        const v = $("voice");
        v.dataset.socket = st.socket;
        v.dataset.mic = st.mic;
        v.textContent = st.mic === "on" ? "listening" : st.socket === "open" ? "she speaks here" : "";
        $("mic").setAttribute("aria-pressed", st.mic === "on" ? "true" : "false");
      },
    });
    voice.setMuted($("text-only").checked);
    if (!$("text-only").checked) voice.open();
    // Click: hands-free on or off. Hold (over 400 ms): talk while held.
    let pressedAt = 0;
    let wasOn = false;
    $("mic").addEventListener("pointerdown", (e) => {
      // The release comes back here even if the controls move under the pointer.
      try { $("mic").setPointerCapture(e.pointerId); } catch (_) { /* not a real pointer */ }
      pressedAt = Date.now();
      wasOn = voice.micIsOn();
      if (!wasOn) voice.micOn();
    });
    $("mic").addEventListener("pointerup", () => {
      const held = Date.now() - pressedAt > 400;
      if (wasOn || held) voice.micOff();
    });
    $("mic").addEventListener("keydown", (e) => {
      if (e.key !== "Enter" && e.key !== " ") return;
      e.preventDefault();
      if (voice.micIsOn()) voice.micOff(); else voice.micOn();
    });
    document.addEventListener("pointerdown", () => voice.wake(), { once: true });
  }

  function start() {
    // Typed here, she speaks her answer through the page's voice socket unless muted;
    // muted, the turn is the written register (docs/surfaces.md): code, links and
    // digits stay exact.
    $("text-only").checked = localStorage.getItem("kotoba.textOnly") === "1";
    $("register-note").hidden = !$("text-only").checked;
    let stream = null;
    $("text-only").addEventListener("change", () => {
      const muted = $("text-only").checked;
      localStorage.setItem("kotoba.textOnly", muted ? "1" : "0");
      $("register-note").hidden = !muted;
      if (voice) {
        voice.setMuted(muted);
        if (!muted) voice.open();
      }
      if (stream) stream.close();
      stream = connect();
    });
    startVoice();
    $("composer").addEventListener("submit", send);
    $("text").addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("composer").requestSubmit(); }
    });
    $("stop").addEventListener("click", () => api("/api/stop", { method: "POST", body: { session } }));
    $("grants-panel").addEventListener("toggle", () => { if ($("grants-panel").open) loadGrants(); });
    $("audit-panel").addEventListener("toggle", () => { if ($("audit-panel").open) loadAudit(); });
    $("settings-panel").addEventListener("toggle", () => { if ($("settings-panel").open) loadSettings(); });
    $("settings-form").addEventListener("submit", saveSettings);
    $("forget-form").addEventListener("submit", forgetPerson);
    loadStatus();
    loadHistory().finally(() => { stream = connect(); });
  }

  start();
})();
