//! Speech synthesis providers (`tts.provider`).
