//! A small, conservative Python tokenizer for the gate (gate.md, execute_code): names
//! read as Python reads them (NFKC), string literals folded to their values, f-strings
//! and t-strings opened up so the code in their `{…}` fields is read as code, comments
//! dropped. Anything it cannot read the way Python would is reported, never guessed.

use unicode_normalization::UnicodeNormalization;

/// How deeply f-strings may nest inside each other's fields before the text is unreadable.
const MAX_NEST: usize = 16;

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    /// An identifier (or keyword), NFKC-normalised.
    Name(String),
    /// A string or bytes literal's value, escapes decoded. An f-string is opened up as
    /// `( 'piece' + ( field code ) + 'piece' )`.
    Str(String),
    /// A number (its text).
    Num(String),
    /// Punctuation or an operator (`(`, `.`, `+=`, …), or a character nothing else took.
    Op(String),
    /// The end of a logical line or a `;`.
    End,
}

/// The tokens of a snippet, and why it could not be read, if it could not.
#[derive(Debug, Default)]
pub(crate) struct Lexed {
    /// The tokens, in order.
    pub toks: Vec<Tok>,
    /// Set when the text cannot be read the way Python reads it (an unterminated
    /// string, an escape the gate does not decode, f-strings nested too deeply).
    pub unreadable: Option<String>,
}

/// NFKC-normalises the source and splits it into tokens.
pub(crate) fn lex(code: &str) -> Lexed {
    let chars: Vec<char> = code.nfkc().collect();
    let mut lexer = Lexer {
        chars,
        i: 0,
        depth: 0,
        out: Lexed::default(),
    };
    lexer.run(false, 0);
    lexer.out
}

/// Why a run of code stopped.
enum Stop {
    Eof,
    /// `}` at the field's top level.
    Close,
    /// `:` at the field's top level: a format spec follows.
    Spec,
    /// `!` at the field's top level: a conversion (`!r`) follows.
    Conv,
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    /// Bracket depth of top-level code (newlines inside brackets do not end a line).
    depth: usize,
    out: Lexed,
}

const OPS3: [&str; 5] = ["**=", "//=", ">>=", "<<=", "..."];
const OPS2: [&str; 19] = [
    "==", "!=", "<=", ">=", ":=", "->", "**", "//", "<<", ">>", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "@=",
];

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn push(&mut self, t: Tok) {
        self.out.toks.push(t);
    }

    fn op(&mut self, s: &str) {
        self.out.toks.push(Tok::Op(s.to_string()));
    }

    fn fail(&mut self, why: &str) {
        if self.out.unreadable.is_none() {
            self.out.unreadable = Some(why.to_string());
        }
    }

    fn failed(&self) -> bool {
        self.out.unreadable.is_some()
    }

    /// Code until the end of the text, or (in an f-string field) until the field's `}`,
    /// `:` or `!` at its own top level.
    fn run(&mut self, field: bool, nest: usize) -> Stop {
        let mut local = 0usize;
        while let Some(c) = self.peek() {
            if self.failed() {
                return Stop::Eof;
            }
            if field && local == 0 {
                match c {
                    '}' => return Stop::Close,
                    ':' => return Stop::Spec,
                    '!' if self.peek_at(1) != Some('=') => return Stop::Conv,
                    _ => {}
                }
            }
            match c {
                '\n' | '\r' => {
                    self.i += 1;
                    if !field && self.depth == 0 && self.out.toks.last() != Some(&Tok::End) {
                        self.push(Tok::End);
                    }
                }
                ' ' | '\t' | '\x0c' => self.i += 1,
                '#' => {
                    while let Some(c) = self.peek() {
                        if c == '\n' || c == '\r' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                '\\' if matches!(self.peek_at(1), Some('\n' | '\r')) => {
                    self.i += 2;
                    if self.peek_at(0) == Some('\n') && self.chars.get(self.i - 1) == Some(&'\r') {
                        self.i += 1;
                    }
                }
                '\'' | '"' => self.string("", nest),
                ';' if !field => {
                    self.i += 1;
                    self.push(Tok::End);
                }
                c if is_ident_start(c) => self.name_or_prefixed_string(nest),
                c if c.is_ascii_digit() => self.number(),
                '.' if self.peek_at(1).is_some_and(|d| d.is_ascii_digit()) => self.number(),
                '(' | '[' | '{' => {
                    self.i += 1;
                    self.op(&c.to_string());
                    if field {
                        local += 1;
                    } else {
                        self.depth += 1;
                    }
                }
                ')' | ']' | '}' => {
                    self.i += 1;
                    self.op(&c.to_string());
                    if field {
                        local = local.saturating_sub(1);
                    } else {
                        self.depth = self.depth.saturating_sub(1);
                    }
                }
                _ => self.operator(),
            }
        }
        Stop::Eof
    }

    fn operator(&mut self) {
        let rest: String = self.chars.iter().skip(self.i).take(3).collect();
        for len_ops in [&OPS3[..], &OPS2[..]] {
            if let Some(op) = len_ops.iter().find(|op| rest.starts_with(**op)) {
                self.i += op.chars().count();
                self.op(op);
                return;
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        self.i += 1;
        self.op(&c.to_string());
    }

    fn name_or_prefixed_string(&mut self, nest: usize) {
        let start = self.i;
        while self.peek().is_some_and(is_ident_char) {
            self.i += 1;
        }
        let word: String = self.chars.iter().skip(start).take(self.i - start).collect();
        let prefix = word.len() <= 2 && word.chars().all(|c| "rRuUfFbBtT".contains(c));
        if prefix && matches!(self.peek(), Some('\'' | '"')) {
            self.string(&word, nest);
        } else {
            self.push(Tok::Name(word));
        }
    }

    /// A number: digits, `_`, one `.`, an exponent, a `j`; `0x…`/`0o…`/`0b…` with their
    /// digits. Letters after it are left for the next token, as Python does (`1if`).
    fn number(&mut self) {
        let start = self.i;
        let radix = matches!(
            (self.peek(), self.peek_at(1)),
            (Some('0'), Some('x' | 'X' | 'o' | 'O' | 'b' | 'B'))
        );
        if radix {
            self.i += 2;
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_hexdigit() || c == '_')
            {
                self.i += 1;
            }
        } else {
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_digit() || c == '_' || c == '.')
            {
                self.i += 1;
            }
            if matches!(self.peek(), Some('e' | 'E')) {
                let sign = usize::from(matches!(self.peek_at(1), Some('+' | '-')));
                if self.peek_at(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1 + sign;
                    while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '_') {
                        self.i += 1;
                    }
                }
            }
            if matches!(self.peek(), Some('j' | 'J')) {
                self.i += 1;
            }
        }
        let text: String = self.chars.iter().skip(start).take(self.i - start).collect();
        self.push(Tok::Num(text));
    }

    /// A string literal starting at the quote under the cursor.
    fn string(&mut self, prefix: &str, nest: usize) {
        let Some(q) = self.peek() else { return };
        let triple = self.peek_at(1) == Some(q) && self.peek_at(2) == Some(q);
        self.i += if triple { 3 } else { 1 };
        let raw = prefix.contains(['r', 'R']);
        if prefix.contains(['f', 'F', 't', 'T']) {
            self.fstring(q, triple, raw, nest);
            return;
        }
        let mut value = String::new();
        loop {
            match self.peek() {
                None => return self.fail("a string literal never ends"),
                Some(c) if c == q && (!triple || self.closes_triple(q)) => {
                    self.i += if triple { 3 } else { 1 };
                    break;
                }
                Some('\n' | '\r') if !triple => {
                    return self.fail("a one-line string literal runs past its line")
                }
                Some('\\') => self.escape(raw, q, &mut value),
                Some(c) => {
                    value.push(c);
                    self.i += 1;
                }
            }
            if self.failed() {
                return;
            }
        }
        self.push(Tok::Str(value));
    }

    fn closes_triple(&self, q: char) -> bool {
        self.peek() == Some(q) && self.peek_at(1) == Some(q) && self.peek_at(2) == Some(q)
    }

    /// A backslash inside a string: decoded into `value` (or kept, in a raw string).
    fn escape(&mut self, raw: bool, q: char, value: &mut String) {
        self.i += 1;
        let Some(c) = self.peek() else {
            return self.fail("a string literal never ends");
        };
        if raw {
            // A raw string keeps the backslash, but `\'` still does not end it.
            value.push('\\');
            if c == q || c == '\\' {
                value.push(c);
                self.i += 1;
            }
            return;
        }
        self.i += 1;
        let simple = match c {
            '\n' => Some(None),
            '\r' => {
                if self.peek() == Some('\n') {
                    self.i += 1;
                }
                Some(None)
            }
            '\\' | '\'' | '"' => Some(Some(c)),
            'a' => Some(Some('\x07')),
            'b' => Some(Some('\x08')),
            'f' => Some(Some('\x0c')),
            'n' => Some(Some('\n')),
            'r' => Some(Some('\r')),
            't' => Some(Some('\t')),
            'v' => Some(Some('\x0b')),
            _ => None,
        };
        if let Some(decoded) = simple {
            value.extend(decoded);
            return;
        }
        let (radix, max) = match c {
            '0'..='7' => (8, 3),
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            'N' => return self.fail("a \\N{…} escape names a character the gate does not look up"),
            _ => {
                value.push('\\');
                value.push(c);
                return;
            }
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(c);
        }
        while digits.len() < max {
            match self.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(d);
                    self.i += 1;
                }
                _ => break,
            }
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(ch) => value.push(ch),
            None => {
                value.push('\\');
                value.push(c);
                value.push_str(if radix == 8 { "" } else { &digits });
            }
        }
    }

    /// An f-string (or t-string) after its opening quote, written out as
    /// `( 'piece' + ( field ) + … )`.
    fn fstring(&mut self, q: char, triple: bool, raw: bool, nest: usize) {
        if nest >= MAX_NEST {
            return self.fail("f-strings nest too deeply to read");
        }
        self.op("(");
        let mut piece = String::new();
        loop {
            if self.failed() {
                return;
            }
            match self.peek() {
                None => return self.fail("an f-string never ends"),
                Some(c) if c == q && (!triple || self.closes_triple(q)) => {
                    self.i += if triple { 3 } else { 1 };
                    break;
                }
                Some('\n' | '\r') if !triple => {
                    return self.fail("a one-line f-string runs past its line")
                }
                Some('\\') => self.escape(raw, q, &mut piece),
                Some('{') if self.peek_at(1) == Some('{') => {
                    piece.push('{');
                    self.i += 2;
                }
                Some('}') if self.peek_at(1) == Some('}') => {
                    piece.push('}');
                    self.i += 2;
                }
                Some('{') => {
                    self.i += 1;
                    self.push(Tok::Str(std::mem::take(&mut piece)));
                    self.op("+");
                    self.field(q, triple, nest + 1);
                    self.op("+");
                }
                Some(c) => {
                    piece.push(c);
                    self.i += 1;
                }
            }
        }
        self.push(Tok::Str(piece));
        self.op(")");
    }

    /// One `{…}` field of an f-string, after its `{`: its code, then any `!r` and
    /// format spec (whose own `{…}` fields are code too), up to and past its `}`.
    fn field(&mut self, q: char, triple: bool, nest: usize) {
        if nest >= MAX_NEST {
            return self.fail("f-strings nest too deeply to read");
        }
        self.op("(");
        let mut stop = self.run(true, nest);
        if let Stop::Conv = stop {
            self.i += 1;
            while self.peek().is_some_and(is_ident_char) {
                self.i += 1;
            }
            stop = match self.peek() {
                Some(':') => Stop::Spec,
                Some('}') => Stop::Close,
                _ => Stop::Eof,
            };
        }
        if let Stop::Spec = stop {
            self.i += 1;
            stop = self.spec(q, triple, nest);
        }
        match stop {
            Stop::Close => {
                self.i += 1;
                self.op(")");
            }
            _ => self.fail("an f-string field never ends"),
        }
    }

    /// A format spec after its `:`, up to (not past) the field's `}`.
    fn spec(&mut self, q: char, triple: bool, nest: usize) -> Stop {
        let mut text = String::new();
        loop {
            if self.failed() {
                return Stop::Eof;
            }
            match self.peek() {
                None => return Stop::Eof,
                Some('}') => break,
                Some(c) if c == q => return Stop::Eof,
                Some('\n' | '\r') if !triple => return Stop::Eof,
                Some('{') => {
                    self.i += 1;
                    self.op(")");
                    self.op("+");
                    self.field(q, triple, nest + 1);
                    self.op("+");
                    self.op("(");
                }
                Some(c) => {
                    text.push(c);
                    self.i += 1;
                }
            }
        }
        self.push(Tok::Str(text));
        Stop::Close
    }
}
