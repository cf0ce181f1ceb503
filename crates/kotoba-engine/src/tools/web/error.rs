//! Why a link could not be used or a page not read, typed. Each is the clause the web
//! tools (and open_link) put after their own name in what the model reads
//! ("web_extract: the page timed out after 20 s."), so the words stay as they were.

/// Why a link or a page did not give the model any text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebError {
    /// The text is not a URL at all.
    #[error("'{raw}' is not a URL ({error})")]
    NotUrl {
        /// The text given.
        raw: String,
        /// What the URL parser said.
        error: String,
    },
    /// An http(s) URL without a host.
    #[error("'{0}' has no host")]
    NoHost(String),
    /// A URL of another scheme than http or https.
    #[error("only http and https links are allowed, not '{0}:'")]
    Scheme(String),
    /// The fetch took longer than its time.
    #[error("the page timed out after {0} s")]
    TimedOut(u64),
    /// The page kept redirecting.
    #[error("the page redirected more than {0} times")]
    Redirects(usize),
    /// The site's server did not answer the connection.
    #[error("the site could not be reached (connection failed)")]
    Unreachable,
    /// The fetch broke off otherwise.
    #[error("the fetch failed ({0})")]
    Fetch(String),
    /// The server answered with an error status.
    #[error("the server answered {0}")]
    Status(reqwest::StatusCode),
    /// The page is not text.
    #[error("it is not HTML but {0}")]
    NotHtml(String),
    /// The page says it is larger than the limit.
    #[error("the page is too large ({len} bytes, above the limit of {max})")]
    TooLarge {
        /// Its size, as the server gave it.
        len: u64,
        /// The limit, in bytes.
        max: usize,
    },
    /// The page grew past the limit while it was read.
    #[error("the page is too large (more than the limit of {0} bytes)")]
    Overflowed(usize),
    /// The page could not be parsed as HTML.
    #[error("the page could not be parsed ({0})")]
    Unparsable(String),
    /// Readability found no main text (what it said).
    #[error("no readable text was found on the page ({0})")]
    Unreadable(String),
    /// The main text was empty.
    #[error("no readable text was found on the page")]
    NoText,
}
