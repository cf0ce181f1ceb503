//! Voice activity detection on 20 ms frames of 16 kHz mono.
