//! Why an MCP server could not be named or connected, typed. Each is one sentence (or,
//! for [`ConnectError`], the clause inside one) that the MCP tools hand the model as it
//! reads, so the words stay exactly as they were.

/// Why a server (or catalogue entry) named by the model could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// There is nothing of that kind at all to name.
    #[error("There is no {what} at all, so '{query}' names none.")]
    NoneAtAll {
        /// What was looked for ("MCP server", "catalogue entry").
        what: &'static str,
        /// The name given, trimmed.
        query: String,
    },
    /// No name matches, exactly, ignoring case or as a prefix.
    #[error("No {what} is called '{query}'. The ones there are: {}.", .names.join(", "))]
    NoMatch {
        /// What was looked for.
        what: &'static str,
        /// The name given, trimmed.
        query: String,
        /// Every name there is.
        names: Vec<String>,
    },
    /// The name is the prefix of more than one.
    #[error("'{query}' could be more than one {what} ({}); give the whole name.", .names.join(", "))]
    Ambiguous {
        /// What was looked for.
        what: &'static str,
        /// The name given, trimmed.
        query: String,
        /// The names it could be.
        names: Vec<String>,
    },
    /// The name matched, but what it named was gone when it was taken.
    #[error("No {what} is called '{query}'.")]
    Gone {
        /// What was looked for.
        what: &'static str,
        /// The name given.
        query: String,
    },
    /// The server did not connect.
    #[error("The MCP server '{server}' could not be connected: {why}.{}", last_words(.said))]
    Connect {
        /// The server's name.
        server: String,
        /// What went wrong.
        why: ConnectError,
        /// Its last lines on standard error (` / ` between them), when it wrote any.
        said: String,
    },
}

/// The server's last words as they end the sentence: nothing when it said none.
fn last_words(said: &str) -> String {
    if said.trim().is_empty() {
        String::new()
    } else {
        format!(" Its last words: {said}")
    }
}

/// What went wrong while connecting a server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The program could not be started.
    #[error("'{command}' could not be started ({error})")]
    Start {
        /// The program.
        command: String,
        /// Why, as the system said.
        error: String,
    },
    /// The MCP handshake with a child process failed.
    #[error("the handshake failed ({0})")]
    Handshake(String),
    /// The MCP handshake over streamable HTTP failed.
    #[error("the handshake with {url} failed ({error})")]
    HttpHandshake {
        /// The endpoint.
        url: String,
        /// Why, as the client said.
        error: String,
    },
    /// The server did not list its tools.
    #[error("it did not list its tools ({0})")]
    Tools(String),
    /// Everything together took longer than the connect timeout.
    #[error("it did not finish connecting within {0} s")]
    Timeout(u64),
}
