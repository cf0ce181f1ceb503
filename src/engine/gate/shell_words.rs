//! A small shell-words reader for the gate: quotes, escapes, operators, redirections
//! and command substitutions, enough to see every simple command a line would run.
//! It never panics on any input; what it cannot read (a quote that never closes) it
//! marks, so the gate stays conservative.

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text the command would receive (quotes and escapes removed; `$…` kept as written).
    pub text: String,
    /// True when the word holds an unquoted `*`, `?` or `[` the shell expands against file names.
    pub glob: bool,
}

/// One redirection (`> file`, `2>> log`, `<<EOF`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// The operator as written, without the file-descriptor number (`>`, `>>`, `&>`, `<<`).
    pub op: String,
    /// The word after the operator (empty when the line ended first).
    pub target: String,
}

impl Redirect {
    /// True when the redirection writes to its target.
    pub fn writes(&self) -> bool {
        let dup = self.op.ends_with('&')
            && !self.target.is_empty()
            && self.target.chars().all(|c| c.is_ascii_digit() || c == '-');
        self.op.contains('>') && !dup
    }
}

/// One simple command: its words, redirections and the bodies of its substitutions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Simple {
    /// The words, command name first.
    pub words: Vec<Word>,
    /// Its redirections, in order.
    pub redirects: Vec<Redirect>,
    /// The raw text of every `$( )`, backtick, `<( )` and `>( )` body inside it.
    pub substitutions: Vec<String>,
}

impl Simple {
    fn is_empty(&self) -> bool {
        self.words.is_empty() && self.redirects.is_empty() && self.substitutions.is_empty()
    }

    /// The word texts, in order.
    pub fn texts(&self) -> Vec<&str> {
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

/// A whole line: pipelines separated by `;`, `&&`, `||`, `&`, newline or parentheses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Line {
    /// The pipelines, in order.
    pub pipelines: Vec<Pipeline>,
    /// True when a quote, backtick or `$(` never closes.
    pub unbalanced: bool,
}

impl Line {
    /// Every simple command at the top level (substitution bodies not included).
    pub fn simples(&self) -> impl Iterator<Item = &Simple> {
        self.pipelines.iter().flat_map(|p| p.stages.iter())
    }
}

/// True for a `NAME=value` word (a variable assignment in command position).
pub(crate) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
                && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

enum Tok {
    Word(Word, Vec<String>),
    Redir(String),
    Pipe,
    List,
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    unbalanced: bool,
}

impl Lexer {
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
                _ => break,
            }
        }
        let c = self.peek()?;
        match c {
            '\n' | ';' | '(' | ')' => {
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
            '<' | '>' if self.peek_at(1) != Some('(') => Some(Tok::Redir(self.read_redir_op())),
            _ => Some(self.read_word()),
        }
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

    fn read_word(&mut self) -> Tok {
        let mut text = String::new();
        let mut glob = false;
        let mut quoted = false;
        let mut subs = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' => break,
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    self.pos += 2;
                    let body = self.read_balanced();
                    text.push(c);
                    text.push('(');
                    text.push_str(&body);
                    text.push(')');
                    subs.push(body);
                }
                '<' | '>' => {
                    let fd =
                        !text.is_empty() && !quoted && text.chars().all(|d| d.is_ascii_digit());
                    if fd {
                        return Tok::Redir(self.read_redir_op());
                    }
                    break;
                }
                '\\' => {
                    self.pos += 1;
                    quoted = true;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(x) => {
                            text.push(x);
                            self.pos += 1;
                        }
                        None => text.push('\\'),
                    }
                }
                '\'' => {
                    self.pos += 1;
                    quoted = true;
                    loop {
                        match self.peek() {
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(x) => {
                                text.push(x);
                                self.pos += 1;
                            }
                            None => {
                                self.unbalanced = true;
                                break;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    quoted = true;
                    self.read_double_quoted(&mut text, &mut subs);
                }
                '$' if self.peek_at(1) == Some('(') => {
                    self.pos += 2;
                    let body = self.read_balanced();
                    text.push_str("$(");
                    text.push_str(&body);
                    text.push(')');
                    subs.push(body);
                }
                '`' => {
                    self.pos += 1;
                    let body = self.read_backtick();
                    text.push('`');
                    text.push_str(&body);
                    text.push('`');
                    subs.push(body);
                }
                '*' | '?' | '[' => {
                    glob = true;
                    text.push(c);
                    self.pos += 1;
                }
                _ => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        Tok::Word(Word { text, glob }, subs)
    }

    /// After an opening `"`: up to the closing one, substitutions recorded.
    fn read_double_quoted(&mut self, text: &mut String, subs: &mut Vec<String>) {
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
                            text.push(x);
                            self.pos += 1;
                        }
                        Some(x) => {
                            text.push('\\');
                            text.push(x);
                            self.pos += 1;
                        }
                        None => text.push('\\'),
                    }
                }
                Some('$') if self.peek_at(1) == Some('(') => {
                    self.pos += 2;
                    let body = self.read_balanced();
                    text.push_str("$(");
                    text.push_str(&body);
                    text.push(')');
                    subs.push(body);
                }
                Some('`') => {
                    self.pos += 1;
                    let body = self.read_backtick();
                    text.push('`');
                    text.push_str(&body);
                    text.push('`');
                    subs.push(body);
                }
                Some(x) => {
                    text.push(x);
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

/// Read `line` into pipelines of simple commands. Never panics.
pub(crate) fn parse(line: &str) -> Line {
    let mut lexer = Lexer {
        chars: line.chars().collect(),
        pos: 0,
        unbalanced: false,
    };
    let mut out = Line::default();
    let mut pipeline = Pipeline::default();
    let mut current = Simple::default();
    let mut pending: Option<String> = None;
    let flush = |current: &mut Simple, pending: &mut Option<String>| {
        if let Some(op) = pending.take() {
            current.redirects.push(Redirect {
                op,
                target: String::new(),
            });
        }
    };
    while let Some(tok) = lexer.next_tok() {
        match tok {
            Tok::Word(word, subs) => {
                current.substitutions.extend(subs);
                match pending.take() {
                    Some(op) => current.redirects.push(Redirect {
                        op,
                        target: word.text,
                    }),
                    None => current.words.push(word),
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
    out.unbalanced = lexer.unbalanced;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        parse(line)
            .simples()
            .map(|s| s.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn quotes_and_escapes_are_removed_from_words() {
        assert_eq!(
            words(r#"echo 'a b' "c \"d\"" e\ f r''m"#),
            vec![vec!["echo", "a b", "c \"d\"", "e f", "rm"]]
        );
    }

    #[test]
    fn lists_and_pipelines_split_into_simple_commands() {
        let line = parse("a 1 && b | c; d || e & f\ng");
        let shape: Vec<usize> = line.pipelines.iter().map(|p| p.stages.len()).collect();
        assert_eq!(shape, vec![1, 2, 1, 1, 1, 1]);
    }

    #[test]
    fn redirections_take_the_next_word_as_target() {
        let line = parse("cat a 2> err >> out <in");
        let s = &line.pipelines[0].stages[0];
        assert_eq!(s.texts(), vec!["cat", "a"]);
        let ops: Vec<(&str, &str)> = s
            .redirects
            .iter()
            .map(|r| (r.op.as_str(), r.target.as_str()))
            .collect();
        assert_eq!(ops, vec![(">", "err"), (">>", "out"), ("<", "in")]);
    }

    #[test]
    fn substitution_bodies_are_recorded_even_inside_double_quotes() {
        let line = parse(r#"echo "$(rm -rf /)" `id` <(curl x)"#);
        let s = &line.pipelines[0].stages[0];
        assert_eq!(s.substitutions, vec!["rm -rf /", "id", "curl x"]);
        assert!(!line.unbalanced);
    }

    #[test]
    fn an_open_quote_is_marked_unbalanced() {
        assert!(parse("echo 'abc").unbalanced);
        assert!(parse("echo \"abc").unbalanced);
        assert!(parse("echo $(ls").unbalanced);
        assert!(parse("echo `ls").unbalanced);
        assert!(!parse("echo 'abc'").unbalanced);
    }

    #[test]
    fn unquoted_glob_characters_are_marked_and_quoted_ones_are_not() {
        let line = parse("ls *.txt '*.md'");
        let s = &line.pipelines[0].stages[0];
        assert!(s.words[1].glob);
        assert!(!s.words[2].glob);
    }

    #[test]
    fn assignments_are_recognised_by_name_shape() {
        assert!(is_assignment("FOO=1"));
        assert!(is_assignment("_x9="));
        assert!(!is_assignment("--output=x"));
        assert!(!is_assignment("9A=1"));
    }
}
