//! A loopback web site shaped like the real one: an article wrapped in navigation, ads
//! and a footer, a 404, a page that never answers, a PDF, 20 MB bodies (with and
//! without a length), a redirect loop, plain text and a SearXNG-style JSON search.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::Router;
use serde_json::json;

/// The article's own sentences (what extraction must keep).
pub const ARTICLE_MARK: &str = "The lighthouse keeper counted the ships";
/// Words only the navigation, the ads and the footer hold (what it must drop).
pub const CHROME_MARKS: [&str; 3] = [
    "Subscribe to our newsletter",
    "BUY CHEAP WATCHES",
    "All rights reserved",
];

/// The running site.
pub struct PageServer {
    addr: std::net::SocketAddr,
    searches: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PageServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn article() -> String {
    article_of(8)
}

fn article_of(paragraphs: usize) -> String {
    let para = |i: usize| {
        format!(
            "<p>{ARTICLE_MARK} every night, paragraph {i}. The storm had come in from the \
             west, and the harbour lights flickered while the old keeper wrote each name in \
             his logbook, slowly and carefully, as his father had taught him to do.</p>"
        )
    };
    let body: String = (1..=paragraphs).map(para).collect();
    format!(
        "<!doctype html><html><head><title>The Keeper | Harbour Times</title>\
         <script>var tracking = 1;</script><style>.ad{{color:red}}</style></head><body>\
         <header><nav><a href='/'>Home</a> <a href='/news'>News</a> <a href='/sport'>Sport</a>\
         <a href='/subscribe'>Subscribe to our newsletter</a></nav></header>\
         <aside class='ad sidebar'><a href='/ad'>BUY CHEAP WATCHES</a></aside>\
         <main><article><h1>The Keeper</h1>{body}</article></main>\
         <footer><p>All rights reserved. <a href='/privacy'>Privacy</a></p></footer>\
         </body></html>"
    )
}

async fn search(
    State(count): State<Arc<AtomicU64>>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Response {
    count.fetch_add(1, Ordering::SeqCst);
    if q.get("format").map(String::as_str) != Some("json") {
        return StatusCode::FORBIDDEN.into_response();
    }
    let query = q.get("q").cloned().unwrap_or_default();
    axum::Json(json!({
        "query": query,
        "results": [
            {"title": format!("About {query}"), "url": "https://example.org/a", "content": "First snippet."},
            {"title": "Second", "url": "https://example.org/b", "content": "Second snippet."}
        ]
    }))
    .into_response()
}

impl PageServer {
    /// Bind 127.0.0.1:0 (TCP_NODELAY on every accepted socket) and serve until dropped.
    pub async fn start() -> PageServer {
        const HUGE: usize = 20 * 1024 * 1024;
        let searches = Arc::new(AtomicU64::new(0));
        let app = Router::new()
            .route(
                "/article",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                        article(),
                    )
                }),
            )
            .route(
                "/long",
                get(|| async { ([(header::CONTENT_TYPE, "text/html")], article_of(40)) }),
            )
            .route(
                "/missing",
                get(|| async { (StatusCode::NOT_FOUND, "no such page") }),
            )
            .route(
                "/slow",
                get(|| async {
                    std::future::pending::<()>().await;
                    "never"
                }),
            )
            .route(
                "/paper.pdf",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "application/pdf")],
                        b"%PDF-1.4\n%\xe2\xe3\n".to_vec(),
                    )
                }),
            )
            .route(
                "/huge",
                get(|| async { ([(header::CONTENT_TYPE, "text/html")], vec![b'a'; HUGE]) }),
            )
            .route(
                "/huge-stream",
                get(|| async {
                    let chunks = futures::stream::iter(
                        (0..HUGE / 65_536).map(|_| Ok::<_, std::io::Error>(vec![b'a'; 65_536])),
                    );
                    (
                        [(header::CONTENT_TYPE, "text/html")],
                        Body::from_stream(chunks),
                    )
                }),
            )
            .route("/loop", get(|| async { Redirect::temporary("/loop") }))
            .route(
                "/notes.txt",
                get(|| async { ([(header::CONTENT_TYPE, "text/plain")], "just plain notes\n") }),
            )
            .route("/search", get(search))
            .with_state(searches.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        PageServer {
            addr,
            searches,
            task,
        }
    }

    /// `http://127.0.0.1:PORT<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// How many searches reached the endpoint.
    pub fn searches(&self) -> u64 {
        self.searches.load(Ordering::SeqCst)
    }
}
