//! Speech recognition providers (`stt.provider`).
