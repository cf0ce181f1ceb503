//! A small Server-Sent Events parser: raw body chunks in, whole events out. The model
//! client feeds it every chunk reqwest hands over; lines may be split anywhere.

/// One dispatched SSE event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when the event named itself.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental parser. Bytes are buffered until a whole line is present, so a line or
/// a multi-byte character split across chunks is reassembled before it is read.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// A parser with nothing buffered.
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Feed one chunk; returns the events it completed, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            match self.buf[i] {
                b'\n' => {
                    let line = String::from_utf8_lossy(&self.buf[start..i]).into_owned();
                    self.line(&line, &mut out);
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    // A CR at the very end may be the first half of a CRLF: wait for more.
                    if i + 1 == self.buf.len() {
                        break;
                    }
                    let line = String::from_utf8_lossy(&self.buf[start..i]).into_owned();
                    self.line(&line, &mut out);
                    i += if self.buf[i + 1] == b'\n' { 2 } else { 1 };
                    start = i;
                }
                _ => i += 1,
            }
        }
        self.buf.drain(..start);
        out
    }

    /// The body ended: a last line without its newline, or data without the closing
    /// blank line, still counts (some servers end that way after `[DONE]`).
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let line = String::from_utf8_lossy(&rest);
            let line = line.trim_end_matches('\r').to_string();
            self.line(&line, &mut out);
        }
        self.dispatch(&mut out);
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return; // a comment (keep-alive)
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            _ => {} // id, retry and unknown fields mean nothing to a model stream
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.push(c));
        }
        out.extend(p.finish());
        out
    }

    fn data(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn a_data_line_split_across_chunks_is_reassembled() {
        let ev = feed(&[b"da", b"ta: {\"a\"", b":1}\n", b"\n", b"data: two\n\n"]);
        assert_eq!(data(&ev), vec!["{\"a\":1}", "two"]);
    }

    #[test]
    fn crlf_line_endings_are_read_like_lf_even_when_split_between_cr_and_lf() {
        let ev = feed(&[b"event: x\r", b"\ndata: one\r\n\r", b"\ndata: two\r\n\r\n"]);
        assert_eq!(data(&ev), vec!["one", "two"]);
        assert_eq!(ev[0].event.as_deref(), Some("x"));
        assert_eq!(
            ev[1].event, None,
            "the event name does not leak into the next event"
        );
    }

    #[test]
    fn comments_are_ignored_and_dispatch_nothing() {
        let ev = feed(&[b": keep-alive\n\n: another\ndata: real\n\n"]);
        assert_eq!(data(&ev), vec!["real"]);
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        let ev = feed(&[b"data: a\ndata:b\ndata:  c\n\n"]);
        assert_eq!(data(&ev), vec!["a\nb\n c"]);
    }

    #[test]
    fn a_multibyte_character_split_across_chunks_survives() {
        let bytes = "data: こんにちは\n\n".as_bytes();
        let (a, b) = bytes.split_at(8); // inside the first character
        let ev = feed(&[a, b]);
        assert_eq!(data(&ev), vec!["こんにちは"]);
    }

    #[test]
    fn a_last_event_without_its_blank_line_still_counts_at_the_end() {
        let ev = feed(&[b"data: one\n\ndata: [DONE]"]);
        assert_eq!(data(&ev), vec!["one", "[DONE]"]);
    }

    #[test]
    fn a_lone_cr_ends_a_line() {
        let ev = feed(&[b"data: one\r\rdata: two\r\r"]);
        assert_eq!(data(&ev), vec!["one", "two"]);
    }
}
