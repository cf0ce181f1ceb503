//! The token rules of the Python gate (gate.md, execute_code): imports and simple
//! aliases are read first (`import shutil as sh`, `s = requests.Session()`), then every
//! name is judged where it stands — as an attribute chain (`os.path.os.system`), bare
//! (`run = exec`), as a module passed around (`m = os`), or as a call whose arguments
//! decide (`open(p, mode)`, `urlopen(url, data)`, `os.environ[key]`).

mod calls;

use std::collections::HashMap;

use super::capability::{self, show, Site};
use super::lex::Tok;
use super::names::{
    anywhere, bare, dunder, import_only, module_value, pair, star_import, HTTP_LIBS,
    SENDING_METHODS,
};
use super::{Hits, FILE_WRITE, PROCESS_SPAWN, SECRET_READ};

/// Longest attribute chain followed (segments), so long chains stay linear.
const MAX_CHAIN: usize = 32;
/// Most alias targets kept per name, and names kept at all.
const MAX_TARGETS: usize = 4;
const MAX_ALIASES: usize = 4096;

/// Runs every token rule over `toks`, adding what it finds to `hits`.
pub(super) fn scan(toks: &[Tok], hits: &mut Hits) {
    let mut s = Scan {
        toks,
        pair: match_brackets(toks),
        in_import: vec![false; toks.len()],
        aliases: HashMap::new(),
    };
    s.first_pass(hits);
    for i in 0..toks.len() {
        if let Some(Tok::Name(name)) = toks.get(i) {
            s.judge(i, name, hits);
        }
    }
}

/// For each bracket, the index of its partner (`usize::MAX` when it has none).
fn match_brackets(toks: &[Tok]) -> Vec<usize> {
    let mut pair = vec![usize::MAX; toks.len()];
    let mut stack: Vec<usize> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Op(o) if matches!(o.as_str(), "(" | "[" | "{") => stack.push(i),
            Tok::Op(o) if matches!(o.as_str(), ")" | "]" | "}") => {
                if let Some(open) = stack.pop() {
                    if let Some(p) = pair.get_mut(open) {
                        *p = i;
                    }
                    if let Some(p) = pair.get_mut(i) {
                        *p = open;
                    }
                }
            }
            _ => {}
        }
    }
    pair
}

pub(super) struct Scan<'a> {
    pub(super) toks: &'a [Tok],
    pair: Vec<usize>,
    in_import: Vec<bool>,
    aliases: HashMap<String, Vec<Vec<String>>>,
}

impl<'a> Scan<'a> {
    pub(super) fn name(&self, i: usize) -> Option<&'a str> {
        match self.toks.get(i) {
            Some(Tok::Name(n)) => Some(n.as_str()),
            _ => None,
        }
    }

    pub(super) fn is_op(&self, i: usize, op: &str) -> bool {
        matches!(self.toks.get(i), Some(Tok::Op(o)) if o == op)
    }

    fn prev_is_op(&self, i: usize, op: &str) -> bool {
        i.checked_sub(1).is_some_and(|p| self.is_op(p, op))
    }

    fn prev_name(&self, i: usize) -> Option<&'a str> {
        i.checked_sub(1).and_then(|p| self.name(p))
    }

    /// The partner of the bracket at `i`.
    pub(super) fn partner(&self, i: usize) -> Option<usize> {
        self.pair.get(i).copied().filter(|p| *p != usize::MAX)
    }

    /// The attribute chain ending at token `j` (a name or a closing bracket), head first:
    /// `requests.Session().post` → `requests`, `Session`, `()`, `post`.
    fn chain_back(&self, j: usize) -> Vec<String> {
        self.chain_back_from(j).0
    }

    /// The chain ending at token `j` (as [`Scan::chain_back`]) and the index of the
    /// token it starts at (its head name, or the opening bracket of a head call).
    pub(super) fn chain_back_from(&self, j: usize) -> (Vec<String>, usize) {
        let mut segs = Vec::new();
        let mut j = j;
        let mut head = j;
        while segs.len() < MAX_CHAIN {
            match self.toks.get(j) {
                Some(Tok::Name(n)) => {
                    segs.push(n.clone());
                    head = j;
                    match j.checked_sub(2) {
                        Some(k) if self.is_op(j - 1, ".") => j = k,
                        _ => break,
                    }
                }
                Some(Tok::Op(o)) if matches!(o.as_str(), ")" | "]") => {
                    segs.push(if o == ")" { "()" } else { "[]" }.to_string());
                    let Some(open) = self.partner(j) else {
                        break;
                    };
                    head = open;
                    let Some(k) = open.checked_sub(1) else {
                        break;
                    };
                    match self.toks.get(k) {
                        Some(Tok::Name(_)) => j = k,
                        Some(Tok::Op(c)) if c == ")" || c == "]" => j = k,
                        _ => break,
                    }
                }
                _ => break,
            }
        }
        segs.reverse();
        (segs, head)
    }

    /// The chain starting at token `k` and reading forward: `requests.Session()`.
    fn chain_forward(&self, k: usize) -> Vec<String> {
        let mut segs = Vec::new();
        let Some(head) = self.name(k) else {
            return segs;
        };
        segs.push(head.to_string());
        let mut j = k + 1;
        while segs.len() < MAX_CHAIN {
            if self.is_op(j, ".") {
                match self.name(j + 1) {
                    Some(n) => {
                        segs.push(n.to_string());
                        j += 2;
                    }
                    None => break,
                }
            } else if self.is_op(j, "(") || self.is_op(j, "[") {
                segs.push(if self.is_op(j, "(") { "()" } else { "[]" }.to_string());
                match self.partner(j) {
                    Some(close) => j = close + 1,
                    None => break,
                }
            } else {
                break;
            }
        }
        segs
    }

    /// A chain with its head replaced by what an alias says it is (`s.post` with
    /// `s = requests.Session()` → `requests.Session().post`), when the head is an alias.
    fn resolved(&self, segs: &[String]) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for take in [2usize, 1] {
            let Some(key_segs) = segs.get(..take) else {
                continue;
            };
            if let Some(targets) = self.aliases.get(&key_segs.join(".")) {
                for t in targets {
                    let mut full = t.clone();
                    full.extend(segs.iter().skip(take).cloned());
                    out.push(full);
                }
            }
        }
        out
    }

    fn add_alias(&mut self, key: String, target: Vec<String>) {
        if target.is_empty()
            || (self.aliases.len() >= MAX_ALIASES && !self.aliases.contains_key(&key))
        {
            return;
        }
        let resolved = self.resolved(&target).into_iter().next().unwrap_or(target);
        let entry = self.aliases.entry(key).or_default();
        if entry.len() < MAX_TARGETS && !entry.contains(&resolved) {
            entry.push(resolved);
        }
    }

    /// Imports, `x = chain`, `with chain as x` and `(x := chain)`, in source order.
    fn first_pass(&mut self, hits: &mut Hits) {
        let mut i = 0;
        while i < self.toks.len() {
            let start = i == 0 || matches!(self.toks.get(i - 1), Some(Tok::End));
            let next = match self.toks.get(i) {
                Some(Tok::Name(n)) if n == "import" && !self.prev_is_op(i, ".") => {
                    self.import(i, hits)
                }
                Some(Tok::Name(n))
                    if n == "from" && (self.name(i + 1).is_some() || self.relative_from(i)) =>
                {
                    self.import_from(i, hits)
                }
                Some(Tok::Name(_)) if start => self.assignment(i),
                Some(Tok::Name(n)) if n == "as" => {
                    if let (Some(target), Some(before)) = (self.name(i + 1), i.checked_sub(1)) {
                        let chain = self.chain_back(before);
                        self.add_alias(target.to_string(), chain);
                    }
                    i + 1
                }
                Some(Tok::Op(o)) if o == ":=" => {
                    if let Some(target) = self.prev_name(i) {
                        let chain = self.chain_forward(i + 1);
                        self.add_alias(target.to_string(), chain);
                    }
                    i + 1
                }
                _ => i + 1,
            };
            i = next.max(i + 1);
        }
    }

    /// `from .x import y`: a `from` followed by relative dots.
    fn relative_from(&self, i: usize) -> bool {
        self.name(i) == Some("from") && (self.is_op(i + 1, ".") || self.is_op(i + 1, "..."))
    }

    /// A dotted name from `j`: its parts and the index after it.
    fn dotted(&self, mut j: usize) -> (Vec<String>, usize) {
        let mut parts = Vec::new();
        while let Some(n) = self.name(j) {
            parts.push(n.to_string());
            j += 1;
            if self.is_op(j, ".") && self.name(j + 1).is_some() {
                j += 1;
            } else {
                break;
            }
        }
        (parts, j)
    }

    fn mark_import(&mut self, from: usize, to: usize) {
        for k in from..to {
            if let Some(m) = self.in_import.get_mut(k) {
                *m = true;
            }
        }
    }

    /// `import a.b as c, d`.
    fn import(&mut self, i: usize, hits: &mut Hits) -> usize {
        let mut j = i + 1;
        loop {
            let (module, after) = self.dotted(j);
            if module.is_empty() {
                break;
            }
            j = after;
            let joined = module.join(".");
            self.check_chain(&module, hits);
            if let Some(label) = import_only(&joined) {
                hits.add(label, format!("it imports `{joined}`"));
            }
            if self.name(j) == Some("as") {
                if let Some(alias) = self.name(j + 1) {
                    if matches!(joined.as_str(), "os" | "posix" | "nt") {
                        hits.add(
                            PROCESS_SPAWN,
                            format!("it imports `{joined}` under another name (`{alias}`)"),
                        );
                    }
                    self.add_alias(alias.to_string(), module.clone());
                }
                j += 2;
            }
            if !self.is_op(j, ",") {
                break;
            }
            j += 1;
        }
        self.mark_import(i, j);
        j
    }

    /// `from a.b import c as d, e` and `from a import *`.
    fn import_from(&mut self, i: usize, hits: &mut Hits) -> usize {
        let mut j = i + 1;
        while self.is_op(j, ".") || self.is_op(j, "...") {
            j += 1;
        }
        let (module, after) = self.dotted(j);
        if self.name(after) != Some("import") {
            return i + 1;
        }
        j = after + 1;
        let paren = self.is_op(j, "(");
        if paren {
            j += 1;
        }
        let joined = module.join(".");
        loop {
            if self.is_op(j, "*") {
                let label =
                    star_import(&joined).or_else(|| module.first().and_then(|m| star_import(m)));
                if let Some(label) = label {
                    hits.add(label, format!("it imports everything from `{joined}`"));
                }
                j += 1;
            } else if let Some(name) = self.name(j) {
                let mut full = module.clone();
                full.push(name.to_string());
                self.check_chain(&full, hits);
                if let Some(label) = import_only(&full.join(".")) {
                    hits.add(label, format!("it imports `{}`", full.join(".")));
                }
                j += 1;
                let mut alias = name;
                if self.name(j) == Some("as") {
                    if let Some(a) = self.name(j + 1) {
                        alias = a;
                        if matches!(name, "open" | "fdopen") {
                            hits.add(FILE_WRITE, format!("it imports `{name}` as `{a}`"));
                        }
                    }
                    j += 2;
                }
                self.add_alias(alias.to_string(), full);
            } else {
                break;
            }
            if !self.is_op(j, ",") {
                break;
            }
            j += 1;
        }
        if paren && self.is_op(j, ")") {
            j += 1;
        }
        self.mark_import(i, j);
        j
    }

    /// `a = b = chain` and `self.x = chain` at the start of a statement.
    fn assignment(&mut self, i: usize) -> usize {
        let mut targets = Vec::new();
        let mut j = i;
        loop {
            let (target, after) = self.dotted(j);
            if target.is_empty() || !self.is_op(after, "=") {
                break;
            }
            targets.push(target.join("."));
            j = after + 1;
        }
        if targets.is_empty() {
            return i + 1;
        }
        let chain = self.chain_forward(j);
        for t in targets {
            self.add_alias(t, chain.clone());
        }
        j
    }

    /// The rules of one chain, head first: `module.name` pairs, HTTP libraries and
    /// sessions or clients sending data.
    pub(super) fn check_chain(&self, segs: &[String], hits: &mut Hits) {
        let Some(last) = segs.last() else { return };
        let owner = segs.len().checked_sub(2).and_then(|k| segs.get(k));
        if let Some(label) = owner.and_then(|o| pair(o, last)) {
            hits.add(label, format!("it uses `{}`", show(segs)));
        }
        // Another module's private alias of a module is that module: `tempfile._os` is
        // `os`, so `tempfile._os.system` is `os.system`. An object's own private fields
        // (`self._profile.run`) are not modules.
        let own = segs.first().is_some_and(|h| h == "self" || h == "cls");
        let private = owner.filter(|o| !own && o.starts_with('_') && !o.ends_with("__"));
        if let Some(o) = private {
            let module = o.trim_start_matches('_');
            if let Some(label) = pair(module, last) {
                hits.add(
                    label,
                    format!("it uses `{}`, `{module}` under a private alias", show(segs)),
                );
            }
        }
        if SENDING_METHODS.contains(&last.as_str()) {
            let head = segs.first().map(String::as_str).unwrap_or("");
            let via_client = segs.iter().take(segs.len() - 1).any(|s| {
                let l = s.to_lowercase();
                l.ends_with("session") || l.ends_with("client")
            });
            if HTTP_LIBS.contains(&head) || via_client {
                hits.add(
                    super::DATA_UPLOAD,
                    format!("it sends data with `{}`", show(segs)),
                );
            }
        }
    }

    /// Every rule about the name at token `i`.
    fn judge(&self, i: usize, name: &str, hits: &mut Hits) {
        let attr = self.prev_is_op(i, ".");
        let called = self.is_op(i + 1, "(");
        let defined = matches!(self.prev_name(i), Some("def" | "class"));
        let imported = self.in_import.get(i).copied().unwrap_or(false);
        if let Some(label) = anywhere(name) {
            hits.add(label, format!("it uses `{name}`"));
        }
        if !attr && !defined {
            if let Some(label) = bare(name) {
                hits.add(label, format!("it uses `{name}`"));
            }
        }
        if !defined {
            if let Some(label) = dunder(name) {
                hits.add(
                    label,
                    format!("it reaches `{name}`, which the gate cannot follow"),
                );
            }
        }
        if !attr && !imported && !self.is_op(i + 1, ".") {
            if let Some(label) = module_value(name) {
                hits.add(
                    label,
                    format!(
                        "it passes the module `{name}` around, where the gate cannot follow it"
                    ),
                );
            }
        }
        if matches!(name, "open" | "fdopen") && !called && !defined && !imported {
            hits.add(FILE_WRITE, format!("it passes `{name}` around as a value"));
        }
        let (segs, head) = if attr {
            self.chain_back_from(i)
        } else {
            (vec![name.to_string()], i)
        };
        let mut chains = self.resolved(&segs);
        chains.insert(0, segs);
        let decorator = self.prev_is_op(head, "@")
            && (head < 2 || matches!(self.toks.get(head - 2), Some(Tok::End)));
        capability::judge(
            &Site {
                name,
                attr,
                called,
                with_args: called && !self.is_op(i + 2, ")"),
                continued: self.is_op(i + 1, "."),
                defined,
                imported,
                decorator,
                chains: &chains,
            },
            hits,
        );
        for chain in &chains {
            if !self.safe_yaml(i, chain) {
                self.check_chain(chain, hits);
            }
        }
        if matches!(name, "environ" | "environb") && !imported {
            calls::environ(self, i, hits);
        }
        if matches!(name, "getenv" | "getenvb") && !imported {
            if called {
                calls::env_key(self, i + 1, hits);
            } else {
                hits.add(SECRET_READ, "it passes `getenv` around as a value".into());
            }
        }
        if called {
            calls::call(self, i, name, attr, &chains, hits);
        }
    }

    /// `yaml.load(s, Loader=yaml.SafeLoader)`: the one `yaml.load` that does not run code.
    fn safe_yaml(&self, i: usize, chain: &[String]) -> bool {
        let yaml_load = chain.len() >= 2
            && chain.get(chain.len() - 2).is_some_and(|o| o == "yaml")
            && self.is_op(i + 1, "(");
        yaml_load
            && calls::args(self, i + 1).iter().any(|a| {
                a.kw.as_deref() == Some("Loader")
                    && a.toks.iter().any(
                        |t| matches!(t, Tok::Name(n) if n == "SafeLoader" || n == "CSafeLoader"),
                    )
            })
    }
}
