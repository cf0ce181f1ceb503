//! The voice benchmark's baselines: the providers asked directly with a plain client,
//! no room and no engine — the upload path (recognition, the model to its first
//! sentence, synthesis to its first byte) and the streamed one (a realtime
//! transcription session's commit → its final, then the same model and synthesis).

use std::time::Duration;

use tokio::time::Instant;

/// The providers' own sum, asked directly: recognition, the model to its first
/// sentence, synthesis to its first byte — one after another, as the room must.
pub async fn baseline(http: &reqwest::Client, speech: &str, model: &str, wav: &[u8]) -> Duration {
    let t0 = Instant::now();
    let form = reqwest::multipart::Form::new()
        .text("model", "gpt-4o-mini-transcribe")
        .part(
            "file",
            reqwest::multipart::Part::bytes(wav.to_vec())
                .file_name("audio.wav")
                .mime_str("audio/wav")
                .unwrap(),
        );
    http.post(format!("{speech}/audio/transcriptions"))
        .bearer_auth("k")
        .multipart(form)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    model_and_voice(http, speech, model).await;
    t0.elapsed()
}

/// The model to its first sentence, then synthesis to its first byte, asked directly.
async fn model_and_voice(http: &reqwest::Client, speech: &str, model: &str) {
    let mut resp = http
        .post(format!("{model}/responses"))
        .bearer_auth("k")
        .json(&serde_json::json!({"model": "scripted", "input": "hi", "stream": true}))
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    while let Some(chunk) = resp.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if seen.contains("now.") {
            break;
        }
    }
    let mut resp = http
        .post(format!("{speech}/audio/speech"))
        .bearer_auth("k")
        .json(&serde_json::json!({"model": "m", "input": "It is noon right now.", "voice": "alloy", "response_format": "pcm"}))
        .send()
        .await
        .unwrap();
    resp.chunk().await.unwrap();
}

/// The streamed providers' own time, asked directly: a realtime transcription session
/// is given the phrase, then its commit → the final transcript, then the model and
/// synthesis as in [`baseline`].
pub async fn baseline_streamed(
    http: &reqwest::Client,
    speech: &str,
    model: &str,
    pcm: &[i16],
) -> Duration {
    use futures::{SinkExt, StreamExt};
    use tokio_websockets::Message;
    let url = format!(
        "{}/realtime?intent=transcription",
        speech.replacen("http://", "ws://", 1)
    );
    let (mut ws, _) = tokio_websockets::ClientBuilder::new()
        .uri(&url)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let update = serde_json::json!({"type": "session.update", "session": {"type": "transcription",
        "audio": {"input": {"format": {"type": "audio/pcm", "rate": 24_000}, "turn_detection": null}}}});
    ws.send(Message::text(update.to_string())).await.unwrap();
    let bytes: Vec<u8> = pcm.iter().flat_map(|s| s.to_le_bytes()).collect();
    use base64::Engine as _;
    let append = serde_json::json!({"type": "input_audio_buffer.append",
        "audio": base64::engine::general_purpose::STANDARD.encode(bytes)});
    ws.send(Message::text(append.to_string())).await.unwrap();
    let t0 = Instant::now();
    ws.send(Message::text(
        r#"{"type":"input_audio_buffer.commit"}"#.to_string(),
    ))
    .await
    .unwrap();
    while let Some(Ok(m)) = ws.next().await {
        if m.as_text()
            .is_some_and(|t| t.contains("transcription.completed"))
        {
            break;
        }
    }
    let _ = ws.close().await;
    model_and_voice(http, speech, model).await;
    t0.elapsed()
}
