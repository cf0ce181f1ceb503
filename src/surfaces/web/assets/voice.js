// The page's voice (docs/surfaces.md "The page speaks and listens"): one WebSocket per
// session to /api/voice, into the same voice room as a Discord call. Her voice comes
// as 20 ms frames of 24 kHz mono 16-bit PCM and is played as it arrives (a short
// jitter buffer, then back to back); {"type":"stop"} drops what is queued at once.
// The microphone (hands-free: a click turns it on and off; hold to talk: press, speak,
// release) is captured by an AudioWorklet at 16 kHz and sent as the same PCM; the
// room does the endpointing, recognition and barge-in. Counters for tests and the
// curious: window.kotobaVoice (samples received and played, their peak, samples sent,
// stops asked, socket, mic).
"use strict";

window.KotobaVoice = function KotobaVoice(session, ui) {
  const RATE = 24000; // her voice
  const MIC_RATE = 16000; // what the room hears
  const LEAD = 0.08; // seconds of her voice buffered before playing starts
  const state = { received: 0, played: 0, peak: 0, sent: 0, stops: 0, queued_after_stop: null, socket: "closed", mic: "off", stt: null, tts: null };
  window.kotobaVoice = state;
  let ws = null;
  let out = null; // the AudioContext she plays in
  let nextAt = 0;
  let playing = [];
  let muted = false;
  let mic = null; // { ctx, stream, node }
  let wanted = false; // the socket should be open
  let retry = null;
  const spoken = new Set(); // the turns said aloud here

  function changed() {
    ui.changed(state);
  }

  function player() {
    if (!out) out = new AudioContext();
    if (out.state === "suspended") out.resume().catch(() => {});
    return out;
  }

  function open() {
    wanted = true;
    if (ws && ws.readyState <= 1) return;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(scheme + "//" + location.host + "/api/voice?session=" + encodeURIComponent(session));
    ws.binaryType = "arraybuffer";
    ws.onopen = () => {
      state.socket = "open";
      ws.send(JSON.stringify({ type: "mute", muted }));
      changed();
    };
    ws.onclose = () => {
      state.socket = "closed";
      hush();
      changed();
      if (wanted && !retry) retry = setTimeout(() => { retry = null; if (wanted) open(); }, 3000);
    };
    ws.onmessage = (m) => {
      if (typeof m.data !== "string") return play(m.data);
      let v;
      try { v = JSON.parse(m.data); } catch (_) { return; }
      onText(v);
    };
  }

  function onText(v) {
    switch (v.type) {
      case "ready": state.stt = v.stt; state.tts = v.tts; changed(); break;
      case "speaking":
        spoken.add(v.turn_id);
        if (ui.spoken) ui.spoken(v.turn_id);
        break;
      case "stop":
        state.stops += 1;
        hush();
        state.queued_after_stop = playing.length;
        break;
      case "caption":
        if (v.kind === "heard") ui.heard(v.text);
        else if (v.kind === "notice") ui.notice(v.text);
        break;
      case "error": ui.notice(v.message); break;
      case "replaced":
        wanted = false;
        ui.notice("Her voice moved to another page of this conversation; this one still writes.");
        break;
      default: break;
    }
  }

  function play(buf) {
    const pcm = new Int16Array(buf);
    state.received += pcm.length;
    if (muted || !pcm.length) return;
    const ctx = player();
    const b = ctx.createBuffer(1, pcm.length, RATE);
    const ch = b.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) {
      ch[i] = pcm[i] / 32768;
      const a = Math.abs(pcm[i]);
      if (a > state.peak) state.peak = a;
    }
    const src = ctx.createBufferSource();
    src.buffer = b;
    src.connect(ctx.destination);
    if (nextAt < ctx.currentTime) nextAt = ctx.currentTime + LEAD;
    src.start(nextAt);
    nextAt += b.duration;
    playing.push(src);
    src.onended = () => {
      state.played += pcm.length;
      ui.counted(state);
      playing = playing.filter((s) => s !== src);
      if (!playing.length) ui.speaking(false);
    };
    ui.speaking(true);
  }

  // Go quiet at once: what is queued is dropped.
  function hush() {
    for (const s of playing) {
      s.onended = null;
      try { s.stop(); } catch (_) { /* not started yet */ }
    }
    playing = [];
    nextAt = 0;
    ui.speaking(false);
  }

  async function micOn() {
    if (mic) return true;
    open();
    player();
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      ui.notice("This browser gives the page no microphone, so she can't hear you here; typing still works.");
      return false;
    }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      });
    } catch (e) {
      ui.notice("The microphone was not allowed (" + (e.name || "refused") + "), so she can't hear you; typing still works.");
      return false;
    }
    try {
      const ctx = new AudioContext({ sampleRate: MIC_RATE });
      await ctx.audioWorklet.addModule("/assets/mic-worklet.js");
      const source = ctx.createMediaStreamSource(stream);
      const node = new AudioWorkletNode(ctx, "kotoba-mic");
      node.port.onmessage = (e) => {
        if (ws && ws.readyState === 1) {
          ws.send(e.data);
          state.sent += e.data.byteLength / 2;
        }
      };
      const sink = ctx.createGain();
      sink.gain.value = 0;
      source.connect(node);
      node.connect(sink);
      sink.connect(ctx.destination);
      mic = { ctx, stream, node };
    } catch (e) {
      for (const t of stream.getTracks()) t.stop();
      ui.notice("The microphone could not be read (" + e + "); typing still works.");
      return false;
    }
    state.mic = "on";
    changed();
    return true;
  }

  function micOff() {
    if (!mic) return;
    mic.node.port.onmessage = null;
    for (const t of mic.stream.getTracks()) t.stop();
    mic.ctx.close().catch(() => {});
    mic = null;
    state.mic = "off";
    changed();
  }

  return {
    open,
    micOn,
    micOff,
    micIsOn: () => !!mic,
    // Muted: her audio is not played (nor sent), and typed turns are written.
    setMuted(m) {
      muted = m;
      if (m) hush();
      else player();
      if (ws && ws.readyState === 1) ws.send(JSON.stringify({ type: "mute", muted }));
    },
    // She is heard here: the socket is open and not muted.
    live: () => !muted && !!ws && ws.readyState === 1,
    // This turn is said aloud here (its narration is heard, not printed).
    speaks: (turnId) => !muted && spoken.has(turnId),
    wake: () => { if (!muted) player(); },
  };
};
