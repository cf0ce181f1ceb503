//! User attachments: images and PDFs up to 8 MB are downloaded and reach the model with
//! the person's words; anything else (another kind, too large, a failed download) is
//! named to her as not received, with the reason.

use std::sync::OnceLock;
use std::time::Duration;

use serenity::all::Attachment;

use crate::protocol::Media;

/// The largest attachment that reaches the model.
pub const MAX_ATTACHMENT_BYTES: u64 = 8 * 1024 * 1024;

/// The MIME type of an attachment the model can read, if it is one (image or PDF).
pub fn readable_mime(content_type: Option<&str>, filename: &str) -> Option<String> {
    let declared = content_type.map(|c| {
        c.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    let by_name = match filename
        .rsplit('.')
        .next()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => Some("image/png"),
        Some("jpg" | "jpeg") => Some("image/jpeg"),
        Some("gif") => Some("image/gif"),
        Some("webp") => Some("image/webp"),
        Some("pdf") => Some("application/pdf"),
        _ => None,
    };
    let mime = declared
        .filter(|d| !d.is_empty())
        .or(by_name.map(str::to_string))?;
    let readable = [
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "application/pdf",
    ];
    readable.contains(&mime.as_str()).then_some(mime)
}

fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_default()
    })
}

/// Why an attachment did not reach the model (the note says it after its name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Missed {
    /// The download broke off (what the client said).
    #[error("could not be downloaded ({0})")]
    Broke(String),
    /// Discord's CDN answered with an error status.
    #[error("could not be downloaded (HTTP {0})")]
    Status(u16),
    /// The file is over the limit.
    #[error("is larger than 8 MB")]
    TooLarge,
}

async fn download(url: &str) -> Result<Vec<u8>, Missed> {
    let resp = client()
        .get(url)
        .send()
        .await
        .map_err(|e| Missed::Broke(e.to_string()))?;
    if !resp.status().is_success() {
        return Err(Missed::Status(resp.status().as_u16()));
    }
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| Missed::Broke(e.to_string()))?;
    if bytes.len() as u64 > MAX_ATTACHMENT_BYTES {
        return Err(Missed::TooLarge);
    }
    Ok(bytes.to_vec())
}

/// Fetch what the model can read; the note names what it cannot, and why.
pub async fn collect(attachments: &[Attachment]) -> (Vec<Media>, String) {
    let mut media = Vec::new();
    let mut missing = Vec::new();
    for a in attachments {
        let Some(mime) = readable_mime(a.content_type.as_deref(), &a.filename) else {
            missing.push(format!("'{}' (only images and PDFs reach you)", a.filename));
            continue;
        };
        if u64::from(a.size) > MAX_ATTACHMENT_BYTES {
            missing.push(format!("'{}' (larger than 8 MB)", a.filename));
            continue;
        }
        match download(&a.url).await {
            Ok(data) => media.push(Media {
                name: a.filename.clone(),
                mime,
                data,
            }),
            Err(why) => missing.push(format!("'{}' ({why})", a.filename)),
        }
    }
    let mut note = String::new();
    if !media.is_empty() {
        let names: Vec<String> = media.iter().map(|m| format!("'{}'", m.name)).collect();
        note.push_str(&format!(
            "\n[The person attached {}: you can see it.]",
            names.join(", ")
        ));
    }
    if !missing.is_empty() {
        note.push_str(&format!(
            "\n[Attached but NOT received: {}.]",
            missing.join(", ")
        ));
    }
    (media, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_images_and_pdfs_are_readable_by_declared_type_or_by_name() {
        assert_eq!(
            readable_mime(Some("image/png"), "x.bin").as_deref(),
            Some("image/png")
        );
        assert_eq!(
            readable_mime(None, "scan.PDF").as_deref(),
            Some("application/pdf")
        );
        assert_eq!(
            readable_mime(Some("application/pdf; charset=binary"), "a").as_deref(),
            Some("application/pdf")
        );
        assert_eq!(readable_mime(Some("application/zip"), "a.zip"), None);
        assert_eq!(readable_mime(None, "notes.txt"), None);
    }
}
