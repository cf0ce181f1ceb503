//! Counting what is sent in tokens: the tokenizer of the configured model's family
//! (o200k_base or cl100k_base from `tiktoken-rs`, an honest estimate for others), the
//! default context window from a small table of known models, and the size of each
//! request part (docs/engine.md, "Long conversations").

use super::{FunctionSpec, Item, ModelRequest};

/// The window assumed for a model this table does not know.
pub const UNKNOWN_WINDOW: u64 = 128_000;

/// Tokens each message costs beyond its text (role and separators in the wire format).
const PER_ITEM: usize = 4;

/// Tokens an image or file part is counted as (the provider's own cost varies with
/// its size; this is the usual cost of one high-detail image tile set).
const PER_MEDIA: usize = 1_000;

/// Text is counted in pieces of at most this many bytes: a long run with no break (a
/// base64 blob) costs the byte-pair merge quadratic time, and a cut between pieces can
/// only split a token, so the count errs high, never low.
const PIECE: usize = 2_048;

/// How a model family's text becomes tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenizer {
    /// OpenAI's o200k_base (GPT-4o, 4.1, 4.5, 5, the o-series, gpt-oss).
    O200k,
    /// OpenAI's cl100k_base (GPT-4, GPT-3.5).
    Cl100k,
    /// A model whose tokenizer is not bundled: o200k_base plus a fifth, so the
    /// estimate errs high (the provider's reported usage corrects it).
    Estimate,
}

/// One known family: a name prefix, its tokenizer and its context window.
struct Family {
    prefix: &'static str,
    tokenizer: Tokenizer,
    window: u64,
}

/// The small table of known models, most specific prefix first.
const FAMILIES: &[Family] = &[
    fam("gpt-5", Tokenizer::O200k, 272_000),
    fam("gpt-4.1", Tokenizer::O200k, 1_000_000),
    fam("gpt-4.5", Tokenizer::O200k, 128_000),
    fam("gpt-4o", Tokenizer::O200k, 128_000),
    fam("chatgpt-4o", Tokenizer::O200k, 128_000),
    fam("gpt-4-turbo", Tokenizer::Cl100k, 128_000),
    fam("gpt-4-32k", Tokenizer::Cl100k, 32_768),
    fam("gpt-4", Tokenizer::Cl100k, 8_192),
    fam("gpt-3.5-turbo", Tokenizer::Cl100k, 16_385),
    fam("gpt-oss", Tokenizer::O200k, 131_072),
    fam("o1", Tokenizer::O200k, 200_000),
    fam("o3", Tokenizer::O200k, 200_000),
    fam("o4", Tokenizer::O200k, 200_000),
    fam("codex", Tokenizer::O200k, 200_000),
    fam("claude", Tokenizer::Estimate, 200_000),
    fam("gemini", Tokenizer::Estimate, 1_000_000),
];

const fn fam(prefix: &'static str, tokenizer: Tokenizer, window: u64) -> Family {
    Family {
        prefix,
        tokenizer,
        window,
    }
}

/// The family of `model`, read after any provider prefix (`openai/gpt-4o`).
fn family(model: &str) -> Option<&'static Family> {
    let name = model
        .trim()
        .rsplit('/')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    FAMILIES.iter().find(|f| name.starts_with(f.prefix))
}

/// The tokenizer for `model`.
pub fn tokenizer_for(model: &str) -> Tokenizer {
    family(model).map_or(Tokenizer::Estimate, |f| f.tokenizer)
}

/// The context window of `model` when settings name none ([`UNKNOWN_WINDOW`] for a
/// model the table does not know).
pub fn default_window(model: &str) -> u64 {
    family(model).map_or(UNKNOWN_WINDOW, |f| f.window)
}

impl Tokenizer {
    /// Tokens in `text`.
    pub fn count(self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let bpe = match self {
            Tokenizer::Cl100k => tiktoken_rs::cl100k_base_singleton(),
            Tokenizer::O200k | Tokenizer::Estimate => tiktoken_rs::o200k_base_singleton(),
        };
        let mut n = 0;
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = rest.len().min(PIECE);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let (piece, tail) = rest.split_at(cut);
            n += bpe.count_ordinary(piece);
            rest = tail;
        }
        match self {
            Tokenizer::Estimate => n + n.div_ceil(5),
            _ => n,
        }
    }

    /// Tokens one conversation item costs.
    pub fn item(self, item: &Item) -> usize {
        PER_ITEM
            + match item {
                Item::User { text } | Item::Assistant { text } => self.count(text),
                Item::ToolCall(c) => self.count(&c.name) + self.count(&c.arguments),
                Item::ToolResult { output, .. } => self.count(output),
                Item::Media { media } => PER_MEDIA * media.len(),
                Item::Reasoning { raw } => self.count(&raw.to_string()),
            }
    }

    /// Tokens the offered tools' definitions cost.
    pub fn tools(self, tools: &[FunctionSpec]) -> usize {
        tools
            .iter()
            .map(|t| {
                PER_ITEM
                    + self.count(&t.name)
                    + self.count(&t.description)
                    + self.count(&t.parameters.to_string())
            })
            .sum()
    }

    /// Tokens the fixed part of a request costs: its system prompt and tools.
    pub fn fixed(self, req: &ModelRequest) -> usize {
        PER_ITEM + self.count(&req.system) + self.tools(&req.tools)
    }

    /// Tokens a whole request costs.
    pub fn request(self, req: &ModelRequest) -> usize {
        self.fixed(req) + req.items.iter().map(|i| self.item(i)).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_families_use_their_own_tokenizer_and_others_an_estimate_that_errs_high() {
        assert_eq!(tokenizer_for("gpt-4o-mini"), Tokenizer::O200k);
        assert_eq!(tokenizer_for("openai/gpt-5.6-luna"), Tokenizer::O200k);
        assert_eq!(tokenizer_for("gpt-4-0613"), Tokenizer::Cl100k);
        assert_eq!(tokenizer_for("llama3.1:8b"), Tokenizer::Estimate);
        let text = "The quick brown fox jumps over the lazy dog, twice over.";
        let exact = Tokenizer::O200k.count(text);
        assert!(exact > 8 && exact < 20, "{exact}");
        assert!(Tokenizer::Estimate.count(text) > exact);
    }

    #[test]
    fn a_known_model_has_its_window_and_an_unknown_one_128000() {
        assert_eq!(default_window("gpt-4o"), 128_000);
        assert_eq!(default_window("gpt-4"), 8_192);
        assert_eq!(default_window("GPT-4.1-mini"), 1_000_000);
        assert_eq!(default_window("my-local-model"), UNKNOWN_WINDOW);
    }

    #[test]
    fn a_blob_with_no_break_is_counted_in_pieces_and_never_lower_than_whole() {
        let blob: String = (0..20_000)
            .map(|i| (b'a' + (i * 7 % 26) as u8) as char)
            .collect();
        let pieces = Tokenizer::O200k.count(&blob);
        let whole = tiktoken_rs::o200k_base_singleton().count_ordinary(&blob[..6_000]);
        assert!(pieces >= whole, "{pieces} < {whole}");
        // Multi-byte text is cut on character boundaries.
        let kana = "ことばはこころのたね。".repeat(400);
        assert!(Tokenizer::O200k.count(&kana) > 400);
    }
}
