//! A shell-words reader for the gate: quotes (plain, ANSI-C `$'…'`, locale `$"…"`),
//! backslashes, brace expansion, operators, redirections, here-documents and command
//! substitutions, enough to see every simple command a line would run with the words
//! the shell would hand it. It never panics on any input; what it cannot read (a quote
//! that never closes, an expansion too large) it marks, so the gate stays conservative.

use super::braces::{self, Class, Piece};

/// One word after quote removal and brace expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text the command would receive (quotes and escapes removed; `$…` kept as written).
    pub text: String,
    /// True when the word holds an unquoted `*`, `?` or `[` the shell expands against file names.
    pub glob: bool,
    /// True when the word holds an expansion the gate does not resolve: `$NAME`, `${…}`,
    /// `$(…)`, backticks, `<(…)`.
    pub expands: bool,
    /// True when the word is written plainly: no backslash, no `$'…'`/`$"…"`, no brace
    /// expansion, no glob and no expansion — what it says is exactly what runs.
    pub plain: bool,
}

/// One redirection (`> file`, `2>> log`, `<<EOF`, `<<< text`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// The operator as written, without the file-descriptor number (`>`, `>>`, `&>`, `<<`).
    pub op: String,
    /// The word after the operator (empty when the line ended first).
    pub target: String,
    /// For `<<`/`<<-`: the index of its body in [`Line::heredocs`].
    pub heredoc: Option<usize>,
}

impl Redirect {
    /// True when the redirection writes to its target.
    pub(crate) fn writes(&self) -> bool {
        let dup = self.op.ends_with('&')
            && !self.target.is_empty()
            && self.target.chars().all(|c| c.is_ascii_digit() || c == '-');
        self.op.contains('>') && !dup
    }

    /// True when the redirection feeds text written in the line to standard input
    /// (`<<EOF`, `<<-EOF`, `<<< text`).
    pub(crate) fn feeds_text(&self) -> bool {
        self.op.starts_with("<<")
    }
}

/// One simple command: its words, redirections and the bodies of its substitutions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Simple {
    /// The words, command name first.
    pub words: Vec<Word>,
    /// Its redirections, in order.
    pub redirects: Vec<Redirect>,
    /// The raw text of every `$( )`, backtick, `<( )` and `>( )` body inside it (and
    /// inside a here-document whose delimiter is unquoted).
    pub substitutions: Vec<String>,
    /// The raw bodies of its `>( )` process substitutions (also in `substitutions`).
    pub output_substitutions: Vec<String>,
}

impl Simple {
    fn is_empty(&self) -> bool {
        self.words.is_empty() && self.redirects.is_empty() && self.substitutions.is_empty()
    }

    /// The word texts, in order.
    pub(crate) fn texts(&self) -> Vec<&str> {
        self.words.iter().map(|w| w.text.as_str()).collect()
    }
}

/// Commands joined by `|` (or `|&`): stage 0 first. A stage may be empty when the line
/// itself is malformed (`| sh`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pipeline {
    /// The stages, left to right.
    pub stages: Vec<Simple>,
}

/// The body of one here-document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Heredoc {
    /// The lines between the operator's line and the delimiter.
    pub body: String,
}

/// A whole line: pipelines separated by `;`, `&&`, `||`, `&`, newline or parentheses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Line {
    /// The pipelines, in order.
    pub pipelines: Vec<Pipeline>,
    /// Here-document bodies, in the order of their operators.
    pub heredocs: Vec<Heredoc>,
    /// True when a quote, backtick or `$(` never closes.
    pub unbalanced: bool,
    /// True when a brace expansion was too large to follow.
    pub overflow: bool,
}

impl Line {
    /// Every simple command at the top level (substitution bodies not included).
    pub(crate) fn simples(&self) -> impl Iterator<Item = &Simple> {
        self.pipelines.iter().flat_map(|p| p.stages.iter())
    }

    /// The body of a here-document redirection, when it is one.
    pub(crate) fn heredoc_body(&self, redirect: &Redirect) -> Option<&str> {
        redirect
            .heredoc
            .and_then(|i| self.heredocs.get(i))
            .map(|h| h.body.as_str())
    }
}

/// True for a `NAME=value` word (a variable assignment in command position).
pub(crate) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let name = name.strip_suffix('+').unwrap_or(name);
            let mut chars = name.chars();
            matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
                && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

/// A word as read, before brace expansion.
#[derive(Default)]
struct RawWord {
    pieces: Vec<Piece>,
    /// A backslash, `$'…'` or `$"…"` was decoded.
    decoded: bool,
    expands: bool,
    subs: Vec<String>,
    out_subs: Vec<String>,
}

impl RawWord {
    fn push(&mut self, c: char, class: Class) {
        self.pieces.push((c, class));
    }

    fn push_str(&mut self, text: &str, class: Class) {
        self.pieces.extend(text.chars().map(|c| (c, class)));
    }
}

enum Tok {
    Word(RawWord),
    Redir(String),
    Pipe,
    List,
}

/// A here-document waiting for its body after the next newline.
struct PendingDoc {
    delimiter: String,
    strip_tabs: bool,
    expands: bool,
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    unbalanced: bool,
    /// Set after `<<`/`<<-`: the next word is a delimiter (strip tabs?).
    expect_delimiter: Option<bool>,
    pending_docs: Vec<PendingDoc>,
    heredocs: Vec<(Heredoc, Vec<String>)>,
}

/// Characters that may follow `$` to start an expansion.
fn starts_expansion(c: Option<char>) -> bool {
    matches!(c, Some(x) if x.is_ascii_alphanumeric() || "_{(@*#?$!-".contains(x))
}

impl Lexer {
    fn new(text: &str) -> Lexer {
        Lexer {
            chars: text.chars().collect(),
            pos: 0,
            unbalanced: false,
            expect_delimiter: None,
            pending_docs: Vec::new(),
            heredocs: Vec::new(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn next_tok(&mut self) -> Option<Tok> {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.pos += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.pos += 2,
                Some('#') => {
                    // A comment runs to the end of the line.
                    while !matches!(self.peek(), None | Some('\n')) {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        let c = self.peek()?;
        match c {
            '\n' => {
                self.pos += 1;
                self.read_heredoc_bodies();
                Some(Tok::List)
            }
            ';' | '(' | ')' => {
                self.pos += 1;
                Some(Tok::List)
            }
            '&' => match self.peek_at(1) {
                Some('&') => {
                    self.pos += 2;
                    Some(Tok::List)
                }
                Some('>') => {
                    self.pos += 2;
                    let mut op = String::from("&>");
                    if self.peek() == Some('>') {
                        self.pos += 1;
                        op.push('>');
                    }
                    Some(Tok::Redir(op))
                }
                _ => {
                    self.pos += 1;
                    Some(Tok::List)
                }
            },
            '|' => match self.peek_at(1) {
                Some('|') => {
                    self.pos += 2;
                    Some(Tok::List)
                }
                Some('&') => {
                    self.pos += 2;
                    Some(Tok::Pipe)
                }
                _ => {
                    self.pos += 1;
                    Some(Tok::Pipe)
                }
            },
            '<' | '>' if self.peek_at(1) != Some('(') => Some(self.redirection()),
            _ => Some(self.read_word()),
        }
    }

    fn redirection(&mut self) -> Tok {
        let op = self.read_redir_op();
        if op == "<<" || op == "<<-" {
            self.expect_delimiter = Some(op == "<<-");
        }
        Tok::Redir(op)
    }

    /// At `<` or `>`: the longest redirection operator.
    fn read_redir_op(&mut self) -> String {
        let mut op = String::new();
        if let Some(c) = self.peek() {
            op.push(c);
            self.pos += 1;
        }
        let first = op.chars().next().unwrap_or('>');
        match (first, self.peek()) {
            ('<', Some('<')) => {
                self.pos += 1;
                op.push('<');
                if matches!(self.peek(), Some('<' | '-')) {
                    op.extend(self.peek());
                    self.pos += 1;
                }
            }
            ('<', Some('>' | '&')) | ('>', Some('>' | '|' | '&')) => {
                op.extend(self.peek());
                self.pos += 1;
            }
            _ => {}
        }
        op
    }

    /// After a newline: the bodies of the here-documents opened on the line before.
    fn read_heredoc_bodies(&mut self) {
        for doc in std::mem::take(&mut self.pending_docs) {
            let mut body = String::new();
            loop {
                if self.pos >= self.chars.len() {
                    break;
                }
                let mut line = String::new();
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    if c == '\n' {
                        break;
                    }
                    line.push(c);
                }
                let compared = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if compared == doc.delimiter {
                    break;
                }
                body.push_str(compared);
                body.push('\n');
            }
            let subs = if doc.expands {
                substitutions_in(&body)
            } else {
                Vec::new()
            };
            self.heredocs.push((Heredoc { body }, subs));
        }
    }

    fn read_word(&mut self) -> Tok {
        let mut word = RawWord::default();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' => break,
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    self.pos += 2;
                    let body = self.read_balanced();
                    word.push(c, Class::Unquoted);
                    word.push('(', Class::Unquoted);
                    word.push_str(&body, Class::Literal);
                    word.push(')', Class::Unquoted);
                    word.expands = true;
                    if c == '>' {
                        word.out_subs.push(body.clone());
                    }
                    word.subs.push(body);
                }
                '<' | '>' => {
                    let fd = !word.pieces.is_empty()
                        && word
                            .pieces
                            .iter()
                            .all(|(d, class)| d.is_ascii_digit() && *class == Class::Unquoted);
                    if fd {
                        return self.redirection();
                    }
                    break;
                }
                '\\' => {
                    self.pos += 1;
                    word.decoded = true;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(x) => {
                            word.push(x, Class::Literal);
                            self.pos += 1;
                        }
                        None => word.push('\\', Class::Literal),
                    }
                }
                '\'' => {
                    self.pos += 1;
                    self.read_single_quoted(&mut word);
                }
                '"' => {
                    self.pos += 1;
                    self.read_double_quoted(&mut word);
                }
                '$' if self.peek_at(1) == Some('\'') => {
                    self.pos += 2;
                    word.decoded = true;
                    self.read_ansi_c(&mut word);
                }
                '$' if self.peek_at(1) == Some('"') => {
                    self.pos += 2;
                    word.decoded = true;
                    self.read_double_quoted(&mut word);
                }
                '$' | '`' => self.read_dollar_or_backtick(&mut word, Class::Unquoted),
                _ => {
                    word.push(c, Class::Unquoted);
                    self.pos += 1;
                }
            }
        }
        if let Some(strip_tabs) = self.expect_delimiter.take() {
            let quoted = word.decoded || word.pieces.iter().any(|(_, k)| *k != Class::Unquoted);
            self.pending_docs.push(PendingDoc {
                delimiter: word.pieces.iter().map(|(c, _)| *c).collect(),
                strip_tabs,
                expands: !quoted,
            });
        }
        Tok::Word(word)
    }

    /// At `$` or `` ` `` where expansions are live (unquoted or inside `"…"`).
    fn read_dollar_or_backtick(&mut self, word: &mut RawWord, class: Class) {
        let Some(c) = self.peek() else { return };
        if c == '`' {
            self.pos += 1;
            let body = self.read_backtick();
            word.push('`', class);
            word.push_str(&body, Class::Literal);
            word.push('`', class);
            word.expands = true;
            word.subs.push(body);
            return;
        }
        if self.peek_at(1) == Some('(') {
            self.pos += 2;
            let body = self.read_balanced();
            word.push_str("$(", class);
            word.push_str(&body, Class::Literal);
            word.push(')', class);
            word.expands = true;
            word.subs.push(body);
            return;
        }
        if starts_expansion(self.peek_at(1)) {
            word.expands = true;
        }
        word.push('$', class);
        self.pos += 1;
    }

    /// After an opening `'`: up to the closing one, every character literal.
    fn read_single_quoted(&mut self, word: &mut RawWord) {
        loop {
            match self.peek() {
                Some('\'') => {
                    self.pos += 1;
                    return;
                }
                Some(x) => {
                    word.push(x, Class::Literal);
                    self.pos += 1;
                }
                None => {
                    self.unbalanced = true;
                    return;
                }
            }
        }
    }

    /// After `$'`: ANSI-C quoting, escapes decoded as bash decodes them.
    fn read_ansi_c(&mut self, word: &mut RawWord) {
        loop {
            let Some(c) = self.peek() else {
                self.unbalanced = true;
                return;
            };
            self.pos += 1;
            match c {
                '\'' => return,
                '\\' => {
                    if let Some(x) = self.ansi_escape() {
                        word.push(x, Class::Literal);
                    }
                }
                x => word.push(x, Class::Literal),
            }
        }
    }

    /// After a `\` inside `$'…'`: the character it stands for (`None` for `\c@`-style NUL).
    fn ansi_escape(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        let simple = match c {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(c),
            _ => None,
        };
        if simple.is_some() {
            return simple;
        }
        let digits = |lexer: &mut Lexer, radix: u32, max: usize| -> Option<u32> {
            let mut value = 0u32;
            let mut n = 0;
            while n < max {
                let Some(d) = lexer.peek().and_then(|d| d.to_digit(radix)) else {
                    break;
                };
                value = value.saturating_mul(radix).saturating_add(d);
                lexer.pos += 1;
                n += 1;
            }
            (n > 0).then_some(value)
        };
        let code = match c {
            '0'..='7' => {
                self.pos -= 1;
                digits(self, 8, 3).map(|v| v & 0xff)
            }
            'x' => digits(self, 16, 2),
            'u' => digits(self, 16, 4),
            'U' => digits(self, 16, 8),
            'c' => {
                let x = self.peek()?;
                self.pos += 1;
                Some(u32::from(x) & 0x1f)
            }
            _ => {
                // An unknown escape keeps its backslash; the character after it is read next.
                self.pos -= 1;
                return Some('\\');
            }
        };
        code.and_then(char::from_u32)
    }

    /// After an opening `"`: up to the closing one, substitutions recorded.
    fn read_double_quoted(&mut self, word: &mut RawWord) {
        loop {
            match self.peek() {
                None => {
                    self.unbalanced = true;
                    return;
                }
                Some('"') => {
                    self.pos += 1;
                    return;
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(x @ ('$' | '`' | '"' | '\\')) => {
                            word.decoded = true;
                            word.push(x, Class::Literal);
                            self.pos += 1;
                        }
                        Some(x) => {
                            word.push('\\', Class::Double);
                            word.push(x, Class::Double);
                            self.pos += 1;
                        }
                        None => word.push('\\', Class::Double),
                    }
                }
                Some('$' | '`') => self.read_dollar_or_backtick(word, Class::Double),
                Some(x) => {
                    word.push(x, Class::Double);
                    self.pos += 1;
                }
            }
        }
    }

    /// After an opening `` ` ``: the body up to the closing one.
    fn read_backtick(&mut self) -> String {
        let mut body = String::new();
        loop {
            match self.peek() {
                None => {
                    self.unbalanced = true;
                    return body;
                }
                Some('`') => {
                    self.pos += 1;
                    return body;
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(x @ ('`' | '\\' | '$')) => {
                            body.push(x);
                            self.pos += 1;
                        }
                        Some(x) => {
                            body.push('\\');
                            body.push(x);
                            self.pos += 1;
                        }
                        None => body.push('\\'),
                    }
                }
                Some(x) => {
                    body.push(x);
                    self.pos += 1;
                }
            }
        }
    }

    /// After an opening `(`: the raw body up to the matching `)`, quotes respected.
    fn read_balanced(&mut self) -> String {
        let mut body = String::new();
        let mut depth = 1usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return body;
                    }
                }
                '\\' => {
                    body.push(c);
                    if let Some(x) = self.peek() {
                        body.push(x);
                        self.pos += 1;
                    }
                    continue;
                }
                '\'' | '"' | '`' => {
                    body.push(c);
                    if !self.copy_quoted(c, &mut body) {
                        self.unbalanced = true;
                        return body;
                    }
                    continue;
                }
                _ => {}
            }
            body.push(c);
        }
        self.unbalanced = true;
        body
    }

    /// Copy a quoted run verbatim up to and including its closing `quote`; false at end.
    fn copy_quoted(&mut self, quote: char, body: &mut String) -> bool {
        while let Some(c) = self.peek() {
            self.pos += 1;
            body.push(c);
            if c == quote {
                return true;
            }
            if c == '\\' && quote != '\'' {
                if let Some(x) = self.peek() {
                    body.push(x);
                    self.pos += 1;
                }
            }
        }
        false
    }
}

/// The `$( )` and backtick bodies in text read as inside double quotes (a here-document
/// body whose delimiter is unquoted).
fn substitutions_in(text: &str) -> Vec<String> {
    let mut lexer = Lexer::new(text);
    let mut word = RawWord::default();
    while let Some(c) = lexer.peek() {
        match c {
            '\\' => lexer.pos += 2,
            '$' | '`' => lexer.read_dollar_or_backtick(&mut word, Class::Double),
            _ => lexer.pos += 1,
        }
    }
    word.subs
}

/// The words a raw word becomes: brace expansion, then quote removal.
fn finish(raw: RawWord, overflow: &mut bool) -> Vec<Word> {
    let expanded = match braces::expand(&raw.pieces) {
        Some(words) => words,
        None => {
            *overflow = true;
            vec![raw.pieces.clone()]
        }
    };
    let braced = expanded.len() != 1 || expanded.first() != Some(&raw.pieces);
    expanded
        .into_iter()
        .map(|pieces| {
            let glob = pieces
                .iter()
                .any(|(c, class)| *class == Class::Unquoted && matches!(c, '*' | '?' | '['));
            let text: String = pieces.iter().map(|(c, _)| *c).collect();
            Word {
                plain: !raw.decoded && !raw.expands && !glob && !braced,
                text,
                glob,
                expands: raw.expands,
            }
        })
        .collect()
}

/// Read `line` into pipelines of simple commands. Never panics.
pub(crate) fn parse(line: &str) -> Line {
    let mut lexer = Lexer::new(line);
    let mut out = Line::default();
    let mut pipeline = Pipeline::default();
    let mut current = Simple::default();
    let mut pending: Option<String> = None;
    let mut docs = 0usize;
    let flush = |current: &mut Simple, pending: &mut Option<String>| {
        if let Some(op) = pending.take() {
            current.redirects.push(Redirect {
                op,
                target: String::new(),
                heredoc: None,
            });
        }
    };
    while let Some(tok) = lexer.next_tok() {
        match tok {
            Tok::Word(raw) => {
                current.substitutions.extend(raw.subs.iter().cloned());
                current
                    .output_substitutions
                    .extend(raw.out_subs.iter().cloned());
                let words = finish(raw, &mut out.overflow);
                match pending.take() {
                    Some(op) => {
                        let heredoc = (op == "<<" || op == "<<-").then(|| {
                            docs += 1;
                            docs - 1
                        });
                        let target = words
                            .iter()
                            .map(|w| w.text.as_str())
                            .collect::<Vec<_>>()
                            .join(" ");
                        current.redirects.push(Redirect {
                            op,
                            target,
                            heredoc,
                        });
                    }
                    None => current.words.extend(words),
                }
            }
            Tok::Redir(op) => {
                flush(&mut current, &mut pending);
                pending = Some(op);
            }
            Tok::Pipe => {
                flush(&mut current, &mut pending);
                pipeline.stages.push(std::mem::take(&mut current));
            }
            Tok::List => {
                flush(&mut current, &mut pending);
                if !current.is_empty() || !pipeline.stages.is_empty() {
                    pipeline.stages.push(std::mem::take(&mut current));
                }
                if pipeline.stages.iter().any(|s| !s.is_empty()) {
                    out.pipelines.push(std::mem::take(&mut pipeline));
                } else {
                    pipeline = Pipeline::default();
                }
            }
        }
    }
    flush(&mut current, &mut pending);
    if !current.is_empty() || !pipeline.stages.is_empty() {
        pipeline.stages.push(current);
    }
    if pipeline.stages.iter().any(|s| !s.is_empty()) {
        out.pipelines.push(pipeline);
    }
    // A body never closed by its delimiter still runs: read what there is.
    lexer.read_heredoc_bodies();
    let bodies = std::mem::take(&mut lexer.heredocs);
    for pipeline in &mut out.pipelines {
        for stage in &mut pipeline.stages {
            for r in &stage.redirects {
                if let Some((_, subs)) = r.heredoc.and_then(|i| bodies.get(i)) {
                    stage.substitutions.extend(subs.iter().cloned());
                }
            }
        }
    }
    out.heredocs = bodies.into_iter().map(|(doc, _)| doc).collect();
    out.unbalanced = lexer.unbalanced;
    out
}

#[cfg(test)]
#[path = "tests_shell_words.rs"]
mod tests;
