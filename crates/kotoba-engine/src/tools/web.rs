//! The web family: `web_extract` (fetch one page and hand the model its readable text,
//! extracted by `dom_smoothie`, a port of Mozilla's Readability) and `web_search` (a
//! configured SearXNG-compatible endpoint). Both have network risk and step_kind web.

use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{json, Value};

use super::args::req_str;
use super::{clip_chars, Availability, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use super::{Behaviour, CapGroup};
use kotoba_core::protocol::{Mode, Risk};

mod error;
pub use error::WebError;

/// Most characters of page text the model gets.
pub const MAX_PAGE_CHARS: usize = 6000;
/// The largest body web_extract reads, in bytes (5 MB).
pub const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;
/// How long one fetch (connect, redirects and body) may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(20);
/// Most redirects followed.
pub const MAX_REDIRECTS: usize = 5;
/// Most search results handed to the model.
pub const MAX_SEARCH_RESULTS: usize = 6;

fn http_client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
        .connect_timeout(timeout)
        .user_agent(concat!("kotoba/", env!("CARGO_PKG_VERSION")))
        .build()
        .unwrap_or_default()
}

fn web_spec(name: &str, description: &str, lines: ToolLines, parameters: Value) -> ToolSpec {
    ToolSpec {
        behaviour: Behaviour::guest(),
        ..ToolSpec::plain(name, description, "web", Risk::Network, lines, parameters)
    }
}

/// Whether `text` holds an http(s) URL.
pub fn has_url(text: &str) -> bool {
    text.split_whitespace().any(|w| {
        let w = w.trim_start_matches(['(', '<', '[', '"', '\'']);
        (w.starts_with("http://") || w.starts_with("https://")) && w.len() > "https://".len()
    })
}

/// Parse `raw` as an http(s) URL, or say why not.
pub fn http_url(raw: &str) -> Result<reqwest::Url, WebError> {
    let url = reqwest::Url::parse(raw.trim()).map_err(|e| WebError::NotUrl {
        raw: raw.to_string(),
        error: e.to_string(),
    })?;
    match url.scheme() {
        "http" | "https" if url.host_str().is_some() => Ok(url),
        "http" | "https" => Err(WebError::NoHost(raw.to_string())),
        other => Err(WebError::Scheme(other.to_string())),
    }
}

/// Why a fetch did not give a page.
fn fetch_error(e: &reqwest::Error, timeout: Duration) -> WebError {
    if e.is_timeout() {
        WebError::TimedOut(timeout.as_secs())
    } else if e.is_redirect() {
        WebError::Redirects(MAX_REDIRECTS)
    } else if e.is_connect() {
        WebError::Unreachable
    } else {
        WebError::Fetch(e.to_string())
    }
}

// ---------------------------------------------------------------- web_extract

/// Fetches one page and returns its readable text.
#[derive(Debug, Clone)]
pub struct WebExtract {
    spec: ToolSpec,
    client: reqwest::Client,
    timeout: Duration,
}

impl Default for WebExtract {
    fn default() -> Self {
        Self::new()
    }
}

impl WebExtract {
    /// The tool with the standard timeout.
    pub fn new() -> Self {
        Self::with_timeout(FETCH_TIMEOUT)
    }

    /// The tool with another fetch timeout (tests).
    pub fn with_timeout(timeout: Duration) -> Self {
        let description = format!(
            "Fetch a web page (http or https) and read its main text, without menus and \
             ads: at most {MAX_PAGE_CHARS} characters. Use it for a link the person gave."
        );
        WebExtract {
            spec: web_spec(
                "web_extract",
                &description,
                ToolLines::of(
                    "Let me actually read that page for you.",
                    &[
                        "Still loading the page.",
                        "It's a slow site, still reading.",
                    ],
                    "Read it.",
                    "I couldn't read that page.",
                ),
                json!({
                    "type": "object",
                    "properties": {
                        "url": {"type": "string", "description": "The http(s) address of the page."}
                    },
                    "required": ["url"],
                    "additionalProperties": false
                }),
            ),
            client: http_client(timeout),
            timeout,
        }
    }

    /// Fetch `url`: the final URL, the content type and the body, or why not.
    async fn fetch(&self, url: reqwest::Url) -> Result<(String, String, Vec<u8>), WebError> {
        let resp = self
            .client
            .get(url)
            .header(
                reqwest::header::ACCEPT,
                "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            )
            .send()
            .await
            .map_err(|e| fetch_error(&e, self.timeout))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(WebError::Status(status));
        }
        let final_url = resp.url().to_string();
        let ctype = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let textual = ctype.is_empty()
            || ctype.starts_with("text/")
            || ctype.contains("html")
            || ctype.contains("xml");
        if !textual {
            let kind = ctype.split(';').next().unwrap_or(&ctype).trim().to_string();
            return Err(WebError::NotHtml(kind));
        }
        if let Some(len) = resp.content_length() {
            if len > MAX_BODY_BYTES as u64 {
                return Err(WebError::TooLarge {
                    len,
                    max: MAX_BODY_BYTES,
                });
            }
        }
        let mut body = Vec::new();
        let mut stream = resp.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| fetch_error(&e, self.timeout))?;
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(WebError::Overflowed(MAX_BODY_BYTES));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((final_url, ctype, body))
    }
}

/// The readable text of a page: its title and main text (Readability's scoring drops
/// navigation, ads and footers). `Err` says why there is none.
pub fn readable_text(html: &str, url: &str) -> Result<(String, String), WebError> {
    let cfg = dom_smoothie::Config {
        text_mode: dom_smoothie::TextMode::Formatted,
        max_elements_to_parse: 60_000,
        ..Default::default()
    };
    let mut reader = dom_smoothie::Readability::new(html, Some(url), Some(cfg))
        .or_else(|_| dom_smoothie::Readability::new(html, None, None))
        .map_err(|e| WebError::Unparsable(e.to_string()))?;
    let article = reader
        .parse()
        .map_err(|e| WebError::Unreadable(e.to_string()))?;
    let text = article.text_content.trim().to_string();
    if text.is_empty() {
        return Err(WebError::NoText);
    }
    Ok((article.title.trim().to_string(), text))
}

#[async_trait]
impl Tool for WebExtract {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// Offered in a conversation only when one of the last three user messages holds a
    /// link; a background job may always read pages.
    fn available(&self, ctx: &Availability<'_>) -> bool {
        ctx.mode == Mode::Work || ctx.recent_user_messages.iter().any(|m| has_url(m))
    }

    fn withdraw_after_failure(&self) -> bool {
        true
    }

    async fn run(&self, args: Value, _ctx: &ToolContext) -> ToolOutput {
        let raw = match req_str(&args, "url", "web_extract") {
            Ok(u) => u,
            Err(r) => return r,
        };
        let url = match http_url(raw) {
            Ok(u) => u,
            Err(why) => {
                return ToolOutput::refused(format!("web_extract: {why}. Nothing was fetched."))
            }
        };
        let fetched = tokio::time::timeout(self.timeout, self.fetch(url)).await;
        let (final_url, ctype, body) = match fetched {
            Ok(Ok(f)) => f,
            Ok(Err(why)) => return ToolOutput::failed(format!("web_extract: {why}.")),
            Err(_) => {
                return ToolOutput::failed(format!(
                    "web_extract: the page timed out after {} s.",
                    self.timeout.as_secs()
                ))
            }
        };
        let page = String::from_utf8_lossy(&body).into_owned();
        let (title, text) = if ctype.starts_with("text/plain") {
            (String::new(), page.trim().to_string())
        } else {
            let at = final_url.clone();
            match tokio::task::spawn_blocking(move || readable_text(&page, &at)).await {
                Ok(Ok(found)) => found,
                Ok(Err(why)) => return ToolOutput::failed(format!("web_extract: {why}.")),
                Err(e) => {
                    return ToolOutput::failed(format!("web_extract: extraction stopped ({e})."))
                }
            }
        };
        let total = text.chars().count();
        let mut out = String::new();
        if !title.is_empty() {
            out.push_str(&format!("Title: {title}\n"));
        }
        out.push_str(&format!("URL: {final_url}\n\n"));
        if total > MAX_PAGE_CHARS {
            out.push_str(&text.chars().take(MAX_PAGE_CHARS).collect::<String>());
            out.push_str(&format!(
                "\n[page text cut at {MAX_PAGE_CHARS} of {total} characters]"
            ));
        } else {
            out.push_str(&text);
        }
        ToolOutput::ok(out)
    }
}

// ---------------------------------------------------------------- web_search

/// Searches the web through a configured SearXNG-compatible endpoint.
#[derive(Debug, Clone)]
pub struct WebSearch {
    spec: ToolSpec,
    client: reqwest::Client,
    timeout: Duration,
}

impl Default for WebSearch {
    fn default() -> Self {
        Self::new()
    }
}

impl WebSearch {
    /// The tool with its spec.
    pub fn new() -> Self {
        let timeout = Duration::from_secs(15);
        WebSearch {
            spec: ToolSpec {
                // Searches are paid per call: their own cap.
                behaviour: Behaviour {
                    cap_group: CapGroup::WebSearch,
                    ..Behaviour::guest()
                },
                ..web_spec(
                    "web_search",
                    &format!(
                        "Search the web. Returns up to {MAX_SEARCH_RESULTS} results (title, link, \
                     snippet). Read a result with web_extract when the snippet is not enough."
                    ),
                    ToolLines::of(
                        "Let me look that up.",
                        &["Still searching.", "Digging through results."],
                        "Found some things.",
                        "The search didn't work.",
                    ),
                    json!({
                        "type": "object",
                        "properties": {
                            "query": {"type": "string", "description": "What to search for."}
                        },
                        "required": ["query"],
                        "additionalProperties": false
                    }),
                )
            },
            client: http_client(timeout),
            timeout,
        }
    }
}

/// The search URL for an endpoint setting: used as given when it names a path, else
/// `/search` is added (SearXNG's JSON API).
pub fn search_endpoint(base: &str) -> Result<reqwest::Url, WebError> {
    let mut url = http_url(base)?;
    if url.path() == "/" || url.path().is_empty() {
        url.set_path("/search");
    }
    Ok(url)
}

/// The results of a SearXNG JSON answer as lines for the model.
pub fn format_results(body: &Value) -> Vec<String> {
    body.get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let url = r.get("url").and_then(Value::as_str)?;
            let title = r.get("title").and_then(Value::as_str).unwrap_or(url);
            let snippet = r.get("content").and_then(Value::as_str).unwrap_or("");
            Some(format!(
                "{} — {url}\n  {}",
                clip_chars(title.trim(), 160),
                clip_chars(snippet.trim(), 300)
            ))
        })
        .take(MAX_SEARCH_RESULTS)
        .collect()
}

#[async_trait]
impl Tool for WebSearch {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// Offered only when a search endpoint is configured (`web_search_url`).
    fn available(&self, ctx: &Availability<'_>) -> bool {
        ctx.settings.web_search_url.is_some()
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let query = match req_str(&args, "query", "web_search") {
            Ok(q) if !q.trim().is_empty() => q.trim(),
            Ok(_) => return ToolOutput::refused("web_search: the query is empty. Nothing ran."),
            Err(r) => return r,
        };
        let Some(base) = ctx.settings.web_search_url.as_deref() else {
            return ToolOutput::refused(
                "web_search: no search endpoint is configured (setting web_search_url). Nothing ran.",
            );
        };
        let url = match search_endpoint(base) {
            Ok(u) => u,
            Err(why) => {
                return ToolOutput::failed(format!(
                    "web_search: the setting web_search_url: {why}."
                ))
            }
        };
        let request = self
            .client
            .get(url)
            .query(&[("q", query), ("format", "json")])
            .timeout(self.timeout)
            .send();
        let resp = match request.await {
            Ok(r) if r.status().is_success() => r,
            Ok(r) => {
                return ToolOutput::failed(format!(
                    "web_search: the search endpoint answered {}.",
                    r.status()
                ))
            }
            Err(e) => {
                return ToolOutput::failed(format!(
                    "web_search: {}.",
                    fetch_error(&e, self.timeout)
                ))
            }
        };
        let body: Value = match resp.json().await {
            Ok(v) => v,
            Err(e) => {
                return ToolOutput::failed(format!(
                    "web_search: the endpoint did not answer JSON ({e}); is format=json enabled?"
                ))
            }
        };
        let lines = format_results(&body);
        if lines.is_empty() {
            return ToolOutput::ok(format!("No results for '{query}'."));
        }
        ToolOutput::ok(lines.join("\n"))
    }
}

#[cfg(test)]
mod tests;
