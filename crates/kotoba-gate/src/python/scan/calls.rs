//! The Python gate's call rules, a part of the scanner (gate.md, execute_code): what a call's arguments say —
//! `open` and its kin with a mode that writes (a mode that is not a plain literal counts
//! as a write), archive and HTTP calls that write or send, and environment lookups.
//!
//! The environment holds the bot's own secrets, so reading it whole (`os.environ`
//! printed, copied, iterated or sent) is a secret read, as is looking up a variable whose
//! name looks secret (`DISCORD_TOKEN`, `AWS_SECRET_ACCESS_KEY`) or whose name is computed.
//! Looking up a plain name (`os.environ.get('HOME')`) or testing `'X' in os.environ` is
//! ordinary.

use super::super::lex::Tok;
use super::super::names::HTTP_LIBS;
use super::super::{Hits, DATA_UPLOAD, DYNAMIC_EVAL, FILE_WRITE, SECRET_READ, TREE_DELETION};
use super::{show, Scan};

/// Calls with more argument tokens than this are not read: they count as computed.
const MAX_ARG_TOKENS: usize = 4000;

/// One argument of a call.
pub(super) struct Arg<'a> {
    /// `name` of `name=value`.
    pub kw: Option<String>,
    /// The value's tokens.
    pub toks: &'a [Tok],
    /// `*args`, `**kwargs`, or a call too long to read: its value is unknown.
    pub unknown: bool,
}

impl Arg<'_> {
    fn positional(&self) -> bool {
        self.kw.is_none() && !self.unknown
    }
}

/// The top-level arguments of the call whose `(` is at token `open`.
pub(super) fn args<'a>(s: &Scan<'a>, open: usize) -> Vec<Arg<'a>> {
    let close = s.partner(open).unwrap_or(s.toks.len());
    if close.saturating_sub(open) > MAX_ARG_TOKENS {
        return vec![Arg {
            kw: None,
            toks: &[],
            unknown: true,
        }];
    }
    let mut out = Vec::new();
    let mut begin = open + 1;
    let mut k = open + 1;
    while k <= close {
        let at_end = k == close;
        if at_end || s.is_op(k, ",") {
            if let Some(piece) = s.toks.get(begin..k.min(s.toks.len())) {
                if !piece.is_empty() {
                    out.push(arg(piece));
                }
            }
            begin = k + 1;
            k += 1;
            continue;
        }
        let opener = matches!(s.toks.get(k), Some(Tok::Op(o)) if o == "(" || o == "[" || o == "{");
        k = match s.partner(k) {
            Some(p) if opener && p > k => p + 1,
            _ => k + 1,
        };
    }
    out
}

fn arg(piece: &[Tok]) -> Arg<'_> {
    match piece {
        [Tok::Op(o), ..] if o == "*" || o == "**" => Arg {
            kw: None,
            toks: piece,
            unknown: true,
        },
        [Tok::Name(n), Tok::Op(eq), rest @ ..] if eq == "=" => Arg {
            kw: Some(n.clone()),
            toks: rest,
            unknown: false,
        },
        _ => Arg {
            kw: None,
            toks: piece,
            unknown: false,
        },
    }
}

/// The value of an argument made only of string literals (`'w'`, `'w' 'b'`, `('w')`,
/// `'w' + 'b'`, an f-string without fields).
pub(super) fn literal(toks: &[Tok]) -> Option<String> {
    let mut value = String::new();
    let mut any = false;
    for t in toks {
        match t {
            Tok::Str(s) => {
                value.push_str(s);
                any = true;
            }
            Tok::Op(o) if matches!(o.as_str(), "(" | ")" | "+") => {}
            _ => return None,
        }
    }
    any.then_some(value)
}

/// An argument built at run time from pieces: `+`, `%`, `.format(…)`, `.join`, f-string
/// fields.
fn computed(toks: &[Tok]) -> bool {
    literal(toks).is_none()
        && toks.iter().any(|t| match t {
            Tok::Op(o) => o == "+" || o == "%",
            Tok::Name(n) => n == "format" || n == "join",
            _ => false,
        })
}

/// A file mode that only reads (`r`, `rb`, `rt`, `r:gz`, `r|*`).
fn is_read_mode(mode: &str) -> bool {
    let head = mode.split([':', '|']).next().unwrap_or("");
    !head.is_empty() && head.chars().all(|c| "rbtU".contains(c))
}

/// A string that looks like a file mode rather than a file name.
fn looks_like_mode(s: &str) -> bool {
    !s.is_empty() && s.len() <= 4 && s.chars().all(|c| "rwaxbtU+".contains(c))
}

/// Why an argument in a mode slot writes: a mode that writes, or one it computes.
fn mode_writes(a: &Arg) -> Option<String> {
    if a.unknown {
        return Some("it opens a file with arguments it unpacks at run time".into());
    }
    match literal(a.toks) {
        Some(m) if is_read_mode(&m) => None,
        Some(m) => Some(format!("it opens a file with mode '{m}'")),
        None => Some("it opens a file with a mode it computes".into()),
    }
}

/// Modules whose `open(name, mode)` takes the mode second, like the builtin.
const OPENING_MODULES: [&str; 17] = [
    "io",
    "_io",
    "codecs",
    "gzip",
    "bz2",
    "lzma",
    "tarfile",
    "wave",
    "aifc",
    "sunau",
    "dbm",
    "zarr",
    "builtins",
    "os",
    "posix",
    "fsspec",
    "smart_open",
];

/// Classes that open a file with a mode as their second argument.
const MODE_CLASSES: [&str; 10] = [
    "ZipFile",
    "PyZipFile",
    "TarFile",
    "GzipFile",
    "BZ2File",
    "LZMAFile",
    "File",
    "Dataset",
    "memmap",
    "FileIO",
];

/// Attributes that mark a chain as a `pathlib` path (`Path(p).open`, `p.home().replace`).
const PATHISH: [&str; 9] = [
    "Path",
    "PosixPath",
    "WindowsPath",
    "home",
    "cwd",
    "joinpath",
    "with_name",
    "with_suffix",
    "with_stem",
];

/// `DataFrame.to_<x>` writers; they write when given a path or a connection.
const TO_WRITERS: [&str; 19] = [
    "csv", "excel", "json", "parquet", "pickle", "feather", "hdf", "sql", "html", "latex", "stata",
    "netcdf", "zarr", "file", "xml", "orc", "gbq", "markdown", "string",
];

/// Keyword arguments that name where a writer writes.
const PATH_KWS: [&str; 9] = [
    "path_or_buf",
    "path",
    "excel_writer",
    "buf",
    "con",
    "fname",
    "file",
    "filename",
    "path_or_buffer",
];

/// Every rule about the call of `name` at token `i` (its `(` is at `i + 1`), whose
/// chains (as written and as aliases resolve it) are `chains`.
pub(super) fn call(
    s: &Scan,
    i: usize,
    name: &str,
    attr: bool,
    chains: &[Vec<String>],
    hits: &mut Hits,
) {
    let args = args(s, i + 1);
    let owner = |c: &Vec<String>| c.len().checked_sub(2).and_then(|k| c.get(k)).cloned();
    let owners: Vec<String> = chains.iter().filter_map(owner).collect();
    let pathish = chains
        .iter()
        .any(|c| c.iter().any(|seg| PATHISH.contains(&seg.as_str())));
    let http = chains.iter().any(|c| {
        c.first().is_some_and(|h| HTTP_LIBS.contains(&h.as_str()))
            || c.iter().any(|seg| {
                let l = seg.to_lowercase();
                l.ends_with("session") || l.ends_with("client")
            })
    });
    let shown = chains.first().map(|c| show(c)).unwrap_or_default();
    let positional = args.iter().filter(|a| a.positional()).count();
    let nth = |n: usize| args.iter().filter(|a| a.kw.is_none()).nth(n);
    let kw = |k: &str| args.iter().find(|a| a.kw.as_deref() == Some(k));
    let unknown = args.iter().any(|a| a.unknown);
    let write = |hits: &mut Hits, why: String| hits.add(FILE_WRITE, why);

    // Opening files.
    let module_open = !attr || owners.iter().any(|o| OPENING_MODULES.contains(&o.as_str()));
    if matches!(name, "open" | "fdopen") || MODE_CLASSES.contains(&name) {
        let first_is_mode = attr && pathish && name == "open";
        let slot = if first_is_mode { 0 } else { 1 };
        let mut why = nth(slot).and_then(mode_writes);
        if name == "open" && attr && !module_open && !pathish {
            // Another object's `.open(…)` (`zf.open(name)`, `Image.open(p)`): a first
            // argument that reads like a mode still counts.
            let first = nth(0).and_then(|a| literal(a.toks));
            if let Some(m) = first.filter(|m| looks_like_mode(m) && !is_read_mode(m)) {
                why = why.or(Some(format!("it opens a file with mode '{m}'")));
            }
        }
        for k in ["mode", "flag", "flags"] {
            why = why.or_else(|| kw(k).and_then(mode_writes));
        }
        if unknown {
            why = why.or(Some(
                "it opens a file with arguments it unpacks at run time".into(),
            ));
        }
        if kw("opener").is_some() {
            why = why.or(Some("it opens a file through an opener of its own".into()));
        }
        if let Some(why) = why {
            write(hits, why);
        }
    }

    match name {
        "rmdir" if attr => hits.add(TREE_DELETION, format!("it removes a directory (`{shown}`)")),
        "unlink" | "touch" | "chmod" | "lchmod" | "tofile" | "truncate" if attr => {
            write(hits, format!("it changes a file (`{shown}`)"))
        }
        "rename" if attr && (positional > 0 || pathish) => {
            write(hits, format!("it renames a file (`{shown}`)"))
        }
        "replace" if attr && pathish => write(hits, format!("it moves a file (`{shown}`)")),
        "save" if attr && !args.is_empty() => {
            write(hits, format!("it saves to a file (`{shown}`)"))
        }
        "extract" | "extractall" if attr && !owners.iter().any(|o| o == "str") => write(
            hits,
            format!("it unpacks an archive onto the disk (`{shown}`)"),
        ),
        "basicConfig" if kw("filename").is_some() => {
            write(hits, "it sends its log to a file".into())
        }
        "post" if attr => hits.add(DATA_UPLOAD, format!("it sends data with `{shown}`")),
        "urlopen" if positional >= 2 || kw("data").is_some() || unknown => {
            hits.add(DATA_UPLOAD, format!("it sends data with `{shown}`"))
        }
        "Request" if positional >= 2 || kw("data").is_some() || unknown => hits.add(
            DATA_UPLOAD,
            format!("it builds a request that carries data (`{shown}`)"),
        ),
        "request" if attr => {
            let method = nth(0).or_else(|| kw("method"));
            let reads = method
                .and_then(|a| literal(a.toks))
                .is_some_and(|m| matches!(m.to_uppercase().as_str(), "GET" | "HEAD" | "OPTIONS"));
            let body = ["body", "data", "json", "fields", "files", "content"]
                .iter()
                .any(|k| kw(k).is_some());
            if !reads || body || unknown {
                hits.add(
                    DATA_UPLOAD,
                    format!("it sends a request that may carry data (`{shown}`)"),
                );
            }
        }
        _ => {}
    }
    if attr && name.starts_with("write_") {
        write(hits, format!("it writes a file (`{shown}`)"));
    }
    if let Some(kind) = name.strip_prefix("to_").filter(|_| attr) {
        let to_path = positional > 0 || PATH_KWS.iter().any(|k| kw(k).is_some());
        if TO_WRITERS.contains(&kind) && (to_path || kind == "sql" || unknown) {
            write(hits, format!("it writes a file (`{shown}`)"));
        }
    }

    // Sending data: a method that sends, a body on an HTTP call, a URL built from data.
    if let Some(m) = kw("method").and_then(|a| literal(a.toks)) {
        if matches!(
            m.to_uppercase().as_str(),
            "POST" | "PUT" | "PATCH" | "DELETE"
        ) {
            hits.add(
                DATA_UPLOAD,
                format!("it sends a {} request", m.to_uppercase()),
            );
        }
    } else if kw("method").is_some() && matches!(name, "request" | "Request" | "urlopen") {
        hits.add(
            DATA_UPLOAD,
            "it sends a request with a method it computes".into(),
        );
    }
    let url_call = matches!(name, "urlopen" | "urlretrieve" | "Request")
        || (http && matches!(name, "get" | "head" | "options" | "stream" | "request"));
    if url_call && nth(0).is_some_and(|a| computed(a.toks)) {
        hits.add(
            DATA_UPLOAD,
            format!("it puts data it computes into a URL (`{shown}`)"),
        );
    }
    if http
        && ["data", "json", "files", "content"]
            .iter()
            .any(|k| kw(k).is_some())
    {
        hits.add(DATA_UPLOAD, format!("it sends a body with `{shown}`"));
    }

    // Unpickling.
    if let Some(a) = kw("allow_pickle") {
        if !matches!(a.toks, [Tok::Name(n)] if n == "False") {
            hits.add(
                DYNAMIC_EVAL,
                "it loads pickled data, which can run code".into(),
            );
        }
    }
}

/// `os.environ` at token `i`: whole (a secret read), or one key (judged by its name).
pub(super) fn environ(s: &Scan, i: usize, hits: &mut Hits) {
    let j = i + 1;
    if s.is_op(j, ".") {
        match s.name(j + 1) {
            Some("get" | "pop" | "setdefault") if s.is_op(j + 2, "(") => {
                return env_key(s, j + 2, hits);
            }
            Some("update" | "putenv" | "unsetenv") => return,
            _ => {}
        }
    } else if s.is_op(j, "[") {
        let close = s.partner(j).unwrap_or(j);
        let key = s.toks.get(j + 1..close).unwrap_or(&[]);
        return key_rule(key, hits);
    } else {
        // `'HOME' in os.environ` (or `not in`) only tests one name.
        let head = if i >= 2 && s.is_op(i - 1, ".") {
            i - 2
        } else {
            i
        };
        let before = |k: usize| head.checked_sub(k).and_then(|p| s.toks.get(p));
        let tested = match (before(1), before(2), before(3)) {
            (Some(Tok::Name(a)), Some(Tok::Str(_)), _) if a == "in" => true,
            (Some(Tok::Name(a)), Some(Tok::Name(b)), Some(Tok::Str(_))) => a == "in" && b == "not",
            _ => false,
        };
        if tested {
            return;
        }
    }
    hits.add(
        SECRET_READ,
        "it reads the whole environment (`os.environ`), where the bot's secrets live".into(),
    );
}

/// The first argument of a `getenv(…)`/`environ.get(…)` call whose `(` is at `open`.
pub(super) fn env_key(s: &Scan, open: usize, hits: &mut Hits) {
    match args(s, open).first() {
        Some(a) if !a.unknown && a.kw.is_none() => key_rule(a.toks, hits),
        Some(_) => key_rule(&[], hits),
        None => {}
    }
}

fn key_rule(key: &[Tok], hits: &mut Hits) {
    match literal(key) {
        Some(k) if secret_env_name(&k) => hits.add(
            SECRET_READ,
            format!("it reads the environment variable `{k}`, whose name says it is a secret"),
        ),
        Some(_) => {}
        None => hits.add(
            SECRET_READ,
            "it reads an environment variable whose name it computes".into(),
        ),
    }
}

/// An environment variable name that says it holds a secret.
fn secret_env_name(name: &str) -> bool {
    let l = name.to_lowercase();
    [
        "token",
        "secret",
        "passw",
        "api_key",
        "apikey",
        "private",
        "credential",
        "auth",
        "cookie",
        "discord",
        "openai",
        "anthropic",
        "aws_",
        "github_",
        "kotoba",
        "_key",
    ]
    .iter()
    .any(|w| l.contains(w))
        || l == "key"
}
