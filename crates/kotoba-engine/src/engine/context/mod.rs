//! Long conversations (docs/engine.md, "Long conversations"): what a request may
//! cost in tokens (`context.window`, `context.compact_at`, corrected by the usage the
//! provider reports), which oldest lines fold into the summary, and how a text or a
//! turn's tool output is shortened to fit. The loop applies them before each request
//! (`engine/fitting.rs`); the summariser is [`summarise`].

pub mod summarise;
pub mod transcript;

use std::sync::Mutex;

use crate::llm::tokens::{default_window, tokenizer_for, Tokenizer};
use crate::llm::Item;
use kotoba_core::config::Settings;

pub use transcript::{Line, Transcript};

/// A tool output longer than this many tokens is shortened first when a turn's own
/// steps fill the window; it keeps its head and tail.
pub const SHORT_OUTPUT: usize = 300;

/// What one request may cost, in the tokenizer's own units (the provider's reported
/// usage corrects them through `ratio`).
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// How the configured model counts.
    pub tokenizer: Tokenizer,
    /// The model's context window, in tokens.
    pub window: usize,
    /// The fraction of the window at which the conversation is compacted.
    pub compact_at: f64,
    /// Provider tokens per counted token (≥ 0.8; 1 until a reply reports usage).
    pub ratio: f64,
}

impl Budget {
    /// The budget the live settings give, corrected by `ratio`.
    pub fn new(settings: &Settings, ratio: f64) -> Budget {
        Budget {
            tokenizer: tokenizer_for(&settings.model),
            window: usize::try_from(window_of(settings)).unwrap_or(usize::MAX),
            compact_at: settings.context_compact_at,
            ratio: ratio.max(0.8),
        }
    }

    /// Counted tokens worth `provider` provider tokens.
    fn counted(&self, provider: f64) -> usize {
        (provider / self.ratio).floor() as usize
    }

    /// Past this many counted tokens a request compacts first.
    pub fn threshold(&self) -> usize {
        self.counted(self.window as f64 * self.compact_at)
            .min(self.limit())
    }

    /// No request is ever sent above this many counted tokens: the window less a tenth
    /// kept for her answer.
    pub fn limit(&self) -> usize {
        self.counted(self.window as f64 * 0.9)
    }

    /// The recent tail kept verbatim when the conversation is compacted: about a
    /// quarter of the window.
    pub fn tail(&self) -> usize {
        self.counted(self.window as f64 / 4.0)
    }

    /// How many words a summary is asked to stay within.
    pub fn summary_words(&self) -> usize {
        (self.counted(self.window as f64 / 10.0) * 3 / 4).clamp(60, 1_500)
    }

    /// The most tokens a summary may take (twice its words, room for any wording).
    pub fn summary_tokens(&self) -> usize {
        self.summary_words() * 2
    }

    /// Counted tokens as the provider would count them.
    pub fn provider(&self, counted: usize) -> usize {
        (counted as f64 * self.ratio).ceil() as usize
    }
}

/// The context window the settings give: `context.window`, else the model's own.
pub fn window_of(settings: &Settings) -> u64 {
    settings
        .context_window
        .unwrap_or_else(|| default_window(&settings.model))
}

/// The correction the provider's reported usage gives to the engine's own count,
/// shared by every turn of the process.
#[derive(Debug)]
pub struct Calibration(Mutex<f64>);

impl Default for Calibration {
    fn default() -> Self {
        Calibration(Mutex::new(1.0))
    }
}

impl Calibration {
    /// Provider tokens per counted token.
    pub fn ratio(&self) -> f64 {
        *lock(&self.0)
    }

    /// A request counted at `counted` was reported at `reported` input tokens. A report
    /// below half the count (a server that sends no real usage) is ignored.
    pub fn observe(&self, counted: usize, reported: u64) {
        if counted == 0 || (reported as f64) < counted as f64 / 2.0 {
            return;
        }
        let seen = (reported as f64 / counted as f64).clamp(0.8, 3.0);
        let mut r = lock(&self.0);
        *r = (*r + seen) / 2.0;
    }

    /// The provider said a request was too long: count higher from now on.
    pub fn overflowed(&self) {
        let mut r = lock(&self.0);
        *r = (*r * 1.25).min(3.0);
    }
}

/// What each request's fixed part (instructions and tool definitions) costs, kept
/// across turns: it changes only with the tools offered, the register or the settings.
#[derive(Debug, Default)]
pub struct FixedSizes(Mutex<std::collections::HashMap<u64, usize>>);

/// The most fixed parts remembered; past it the memory starts over.
const FIXED_KEPT: usize = 256;

impl FixedSizes {
    /// The size remembered under `key`, else `count()` remembered.
    pub fn get_or(&self, key: u64, count: impl FnOnce() -> usize) -> usize {
        if let Some(&n) = lock(&self.0).get(&key) {
            return n;
        }
        let n = count();
        let mut m = lock(&self.0);
        if m.len() >= FIXED_KEPT {
            m.clear();
        }
        m.insert(key, n);
        n
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// How many of the oldest lines fold into the summary so that the rest costs at most
/// `keep` tokens: whole exchanges (a person's line and what followed it), the newest
/// exchange always kept. 0: nothing to fold.
pub fn lines_to_fold(lines: &mut [Line], t: Tokenizer, keep: usize) -> usize {
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| i == 0 || lines[i].is_person())
        .collect();
    let Some(&newest) = starts.last() else {
        return 0;
    };
    let mut cut = newest;
    let mut kept: usize = lines[cut..].iter_mut().map(|l| l.tokens(t)).sum();
    for &start in starts.iter().rev().skip(1) {
        let cost: usize = lines[start..cut].iter_mut().map(|l| l.tokens(t)).sum();
        if kept + cost > keep {
            break;
        }
        kept += cost;
        cut = start;
    }
    cut
}

/// `text` cut to about `tokens` tokens: its head and tail kept, the middle replaced by
/// a note of how much was cut. Unchanged when it already fits.
pub fn clip(text: &str, tokens: usize, t: Tokenizer) -> String {
    let have = t.count(text);
    if have <= tokens {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let keep = (chars.len() as f64 * tokens as f64 / have as f64 * 0.9) as usize;
    let head = keep * 2 / 3;
    let tail = keep - head;
    let start: String = chars[..head].iter().collect();
    let end: String = chars[chars.len() - tail..].iter().collect();
    format!(
        "{start}\n[… about {} tokens cut here to fit the model's context window …]\n{end}",
        have.saturating_sub(tokens)
    )
}

/// Shorten the oldest tool outputs among `items` (each longer than twice
/// [`SHORT_OUTPUT`] is cut to about it) until `need` counted tokens are saved or none
/// is left; what was saved.
pub fn shorten_outputs(items: &mut [Item], t: Tokenizer, need: usize) -> usize {
    let mut saved = 0;
    for item in items.iter_mut() {
        if saved >= need {
            break;
        }
        if let Item::ToolResult { output, .. } = item {
            let before = t.count(output);
            if before > 2 * SHORT_OUTPUT {
                *output = clip(output, SHORT_OUTPUT, t);
                saved += before.saturating_sub(t.count(output));
            }
        }
    }
    saved
}

/// Clip the largest text of `items` (words, a tool output; `sizes` are theirs, in
/// order) to half its size, in place;
/// false when even the largest is too small to cut (nothing more can be saved). A
/// call's arguments and attachments are never cut.
pub fn clip_largest(items: &mut [Item], sizes: &[usize], t: Tokenizer) -> bool {
    let mut sized: Vec<(usize, usize)> = items
        .iter()
        .zip(sizes)
        .enumerate()
        .map(|(at, (i, size))| (at, i, *size))
        .filter(|(_, i, _)| {
            matches!(
                i,
                Item::User { .. } | Item::Assistant { .. } | Item::ToolResult { .. }
            )
        })
        .map(|(at, _, size)| (size, at))
        .collect();
    sized.sort_unstable();
    let Some(&(size, at)) = sized.last() else {
        return false;
    };
    if size < 64 {
        return false;
    }
    match &mut items[at] {
        Item::User { text } | Item::Assistant { text } => *text = clip(text, size / 2, t),
        Item::ToolResult { output, .. } => *output = clip(output, size / 2, t),
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests;
