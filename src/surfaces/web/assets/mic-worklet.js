// The page's microphone tap (an AudioWorklet, run in a 16 kHz AudioContext): each
// 20 ms of the mono input becomes 320 little-endian 16-bit samples posted to the page,
// which sends them over the voice socket (docs/surfaces.md "The page speaks and
// listens").
"use strict";

class KotobaMic extends AudioWorkletProcessor {
  constructor() {
    super();
    this.frame = new Int16Array(320);
    this.filled = 0;
  }

  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    for (let i = 0; i < input.length; i++) {
      const s = Math.max(-1, Math.min(1, input[i]));
      this.frame[this.filled++] = s < 0 ? s * 32768 : s * 32767;
      if (this.filled === this.frame.length) {
        this.port.postMessage(this.frame.buffer.slice(0));
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor("kotoba-mic", KotobaMic);
