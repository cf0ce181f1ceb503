//! Why one settings value is refused, typed: every parser of the key table (keys.rs),
//! the Discord people keys (people.rs) and the MCP keys (mcp.rs) says it with one of
//! these. The text of each is what a person reads after the key's name ("setting
//! 'work_max_iter': must be a whole number ≥ 1, got lots"), on the page, in
//! `/settings` and in the log, so it is kept word for word.

/// Why a value does not fit its key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// A list or a mapping where text was wanted.
    #[error("must be text, got {got}")]
    NotText {
        /// The value as written.
        got: String,
    },
    /// Blank where something must be written.
    #[error("must not be empty")]
    Empty,
    /// Not one of the words an enum-valued key takes.
    #[error("must be {expected}, got {got:?}")]
    NotOneOf {
        /// The words it takes, as a phrase ("'responses' or 'chat'").
        expected: &'static str,
        /// The word given, lowercased.
        got: String,
    },
    /// Not a whole number, or below the key's least.
    #[error("must be a whole number ≥ {min}, got {got}")]
    NotCount {
        /// The least it takes.
        min: u64,
        /// The value as written.
        got: String,
    },
    /// Not a number of seconds in the key's range.
    #[error("must be a number of seconds from {min} to {max}, got {got}")]
    NotSeconds {
        /// The least it takes.
        min: f64,
        /// The most it takes.
        max: f64,
        /// The value as written.
        got: String,
    },
    /// Not a fraction in the key's range.
    #[error("must be a fraction from {min} to {max}, got {got}")]
    NotFraction {
        /// The least it takes.
        min: f64,
        /// The most it takes.
        max: f64,
        /// The value as written.
        got: String,
    },
    /// A context window that is not a count of tokens (the count's own reason).
    #[error("{0} (tokens; empty: the model's own)")]
    NotWindow(Box<ValueError>),
    /// Not true or false.
    #[error("must be true or false (yes/no, on/off), got {got}")]
    NotFlag {
        /// The value as written.
        got: String,
    },
    /// Not an http(s) URL.
    #[error("must be an http(s) URL, got {got:?}")]
    NotUrl {
        /// The text given.
        got: String,
    },
    /// Not an environment variable's name.
    #[error("must be an environment variable name, got {got:?}")]
    NotEnvName {
        /// The text given.
        got: String,
    },
    /// A word of the list that is neither a variable name nor a `*` pattern.
    #[error("must be variable names or * patterns (letters, digits, _ and *), got {got:?}")]
    NotEnvPattern {
        /// The word.
        got: String,
    },
    /// Not a reasoning effort.
    #[error("must be one of off, minimal, low, medium, high; got {got:?}")]
    NotEffort {
        /// The text given, lowercased.
        got: String,
    },
    /// Not `host:port`.
    #[error("must be host:port such as 127.0.0.1:8000, got {got:?}")]
    NotAddress {
        /// The text given.
        got: String,
    },
    /// Not a two-letter language code.
    #[error("must be a two-letter language code such as 'en', got {got:?}")]
    NotLanguage {
        /// The text given, lowercased.
        got: String,
    },
    /// No Python interpreter named.
    #[error("must name a Python interpreter")]
    NoPython,
    /// A list holding something that is not a word.
    #[error("must be a list of words, got {got}")]
    NotWords {
        /// The whole list as written.
        got: String,
    },
    /// Neither a list nor comma-separated words.
    #[error("must be a list, got {got}")]
    NotList {
        /// The value as written.
        got: String,
    },
    /// An owner that is not a Discord user's id or mention.
    #[error("must be Discord user ids (123 or <@123>), got {got:?}")]
    NotUserId {
        /// The entry as written.
        got: String,
    },
    /// An approver that is not a person's or a role's id or mention.
    #[error(
        "must be Discord ids of people or roles (123, <@123>, <@&456>, role:456), got {got:?}"
    )]
    NotApprover {
        /// The entry as written.
        got: String,
    },
    /// Role tool sets written as text that is not YAML.
    #[error("must be a mapping of role → tool families: {0}")]
    NotRoleYaml(String),
    /// Role tool sets that are not a mapping.
    #[error("must be a mapping of role → tool families ({{\"701\": [files, web]}}), got {got}")]
    NotRoleMapping {
        /// The value as written.
        got: String,
    },
    /// A role tool set's key that names no role.
    #[error("must name roles by id (701, <@&701>, role:701), got {got:?}")]
    NotRole {
        /// The key as written.
        got: String,
    },
    /// A role tool set's entry that is not a tool family's name.
    #[error("must list tool family names, got {got:?}")]
    NotFamily {
        /// The entry.
        got: String,
    },
    /// `mcp_servers` that is not a map.
    #[error("must be a map of server name → {{command, args, env}} or {{url}}")]
    NotServerMap,
    /// `mcp_catalogue` that is not a list.
    #[error("must be a list of {{name, description, command/args or url}}")]
    NotCatalogueList,
    /// A secret's value that was refused: its reason would repeat it, so it is not
    /// given.
    #[error("is not usable (its value is not shown)")]
    Hidden,
}
