//! The two MCP settings: `mcp_servers` (name → {command, args, env} or {url}) and
//! `mcp_catalogue` (a list of {name, description, command/args or url}). Each entry is
//! validated on its own: a bad one is skipped with a warning naming the key and entry.

use serde_yaml_ng::{Mapping, Value};

use super::ValueError;

/// Why one entry of `mcp_servers` or `mcp_catalogue` is skipped (its warning names the
/// key and the entry before this).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// A server's name that cannot prefix its tools.
    #[error("the name must be letters, digits, '-' or '_' (no '__'), at most 32")]
    BadName,
    /// A catalogue entry's `name` that cannot prefix its tools.
    #[error("'name' must be letters, digits, '-' or '_' (no '__'), at most 32")]
    BadCatalogueName,
    /// A server that is not a map of its fields.
    #[error("must be a map with 'command' or 'url'")]
    NotMap,
    /// Both ways of reaching a server at once.
    #[error("has both 'url' and 'command'; give one")]
    UrlAndCommand,
    /// Neither way of reaching a server.
    #[error("needs 'command' (a stdio server) or 'url' (streamable HTTP)")]
    NoTransport,
    /// A `url` that is not http(s).
    #[error("'url' must be an http(s) URL, got {0:?}")]
    BadUrl(String),
    /// A blank `command`.
    #[error("'command' must not be empty")]
    EmptyCommand,
    /// `args` holding something that is not a word.
    #[error("'args' must be a list of words")]
    ArgsNotWords,
    /// `args` that is not a list.
    #[error("'args' must be a list")]
    ArgsNotList,
    /// `env` holding a name or value that is not a word.
    #[error("'env' must map names to words")]
    EnvNotWords,
    /// `env` that is not a map.
    #[error("'env' must be a map of names to values")]
    EnvNotMap,
}

/// How Kotoba reaches one MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A child process speaking MCP over its stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables (name, value).
        env: Vec<(String, String)>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        /// The endpoint URL (http or https).
        url: String,
    },
}

impl McpTransport {
    /// The line a card shows: the command that will run, or the URL reached.
    pub fn describe(&self) -> String {
        match self {
            McpTransport::Stdio { command, args, env } => {
                let mut parts: Vec<String> = env.iter().map(|(k, _)| format!("{k}=…")).collect();
                parts.push(quote(command));
                parts.extend(args.iter().map(|a| quote(a)));
                parts.join(" ")
            }
            McpTransport::Http { url } => url.clone(),
        }
    }
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// One configured (or installed) MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    /// Its name: the prefix of its tools (`name__tool`) and of its family (`mcp:name`).
    pub name: String,
    /// How it is reached.
    pub transport: McpTransport,
}

/// One catalogue entry mcp_find searches and mcp_install connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueEntry {
    /// The server it installs.
    pub server: McpServer,
    /// What it is for (searched by words).
    pub description: String,
}

/// Whether `name` can name a server: letters, digits, `-` and `_`, at most 32, and no
/// `__` (that separates the server from the tool in `server__tool`).
pub fn valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && !name.contains("__")
        && !name.starts_with('_')
        && !name.ends_with('_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Read a transport from an entry's fields: `url`, or `command` with optional `args`
/// (a list) and `env` (a map).
fn transport(entry: &Mapping) -> Result<McpTransport, EntryError> {
    let url = entry.get("url");
    let command = entry.get("command");
    match (url, command) {
        (Some(_), Some(_)) => Err(EntryError::UrlAndCommand),
        (Some(u), None) => {
            let url = text(u).unwrap_or_default();
            let url = url.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(EntryError::BadUrl(url.to_string()));
            }
            Ok(McpTransport::Http {
                url: url.to_string(),
            })
        }
        (None, Some(c)) => {
            let command = text(c).unwrap_or_default().trim().to_string();
            if command.is_empty() {
                return Err(EntryError::EmptyCommand);
            }
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Sequence(items)) => items
                    .iter()
                    .map(|i| text(i).ok_or(EntryError::ArgsNotWords))
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(EntryError::ArgsNotList),
            };
            let env = match entry.get("env") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Mapping(m)) => m
                    .iter()
                    .map(|(k, v)| match (text(k), text(v)) {
                        (Some(k), Some(v)) if !k.is_empty() => Ok((k, v)),
                        _ => Err(EntryError::EnvNotWords),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(EntryError::EnvNotMap),
            };
            Ok(McpTransport::Stdio { command, args, env })
        }
        (None, None) => Err(EntryError::NoTransport),
    }
}

/// Parse `mcp_servers`: the good entries, and a warning for each bad one. `Err` when
/// the value is not a map at all (the whole key is bad).
pub fn parse_servers(v: &Value) -> Result<(Vec<McpServer>, Vec<String>), ValueError> {
    let map = match v {
        Value::Null => return Ok((Vec::new(), Vec::new())),
        Value::Mapping(m) => m,
        _ => return Err(ValueError::NotServerMap),
    };
    let mut servers = Vec::new();
    let mut warnings = Vec::new();
    for (k, entry) in map {
        let name = text(k).unwrap_or_default();
        let parsed = if !valid_server_name(&name) {
            Err(EntryError::BadName)
        } else {
            match entry {
                Value::Mapping(m) => transport(m),
                _ => Err(EntryError::NotMap),
            }
        };
        match parsed {
            Ok(transport) => servers.push(McpServer { name, transport }),
            Err(why) => warnings.push(format!("setting 'mcp_servers.{name}': {why}; skipped")),
        }
    }
    Ok((servers, warnings))
}

/// Parse `mcp_catalogue`: the good entries, and a warning for each bad one. `Err` when
/// the value is not a list at all.
pub fn parse_catalogue(v: &Value) -> Result<(Vec<CatalogueEntry>, Vec<String>), ValueError> {
    let items = match v {
        Value::Null => return Ok((Vec::new(), Vec::new())),
        Value::Sequence(items) => items,
        _ => return Err(ValueError::NotCatalogueList),
    };
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Mapping(m) = item else {
            warnings.push(format!(
                "setting 'mcp_catalogue[{i}]': must be a map with name, description and command or url; skipped"
            ));
            continue;
        };
        let name = m.get("name").and_then(text).unwrap_or_default();
        let label = if name.is_empty() {
            format!("[{i}]")
        } else {
            format!("[{i}] ({name})")
        };
        let parsed = if !valid_server_name(&name) {
            Err(EntryError::BadCatalogueName)
        } else {
            transport(m)
        };
        match parsed {
            Ok(transport) => entries.push(CatalogueEntry {
                server: McpServer { name, transport },
                description: m
                    .get("description")
                    .and_then(text)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            }),
            Err(why) => warnings.push(format!("setting 'mcp_catalogue{label}': {why}; skipped")),
        }
    }
    Ok((entries, warnings))
}
