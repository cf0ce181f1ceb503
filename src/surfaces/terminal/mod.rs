//! `kotoba chat`: a line-based chat against the same engine (register text) — streamed
//! answer text, a spinner while a tool runs, approval cards answered at the keyboard.

mod answer;
mod echo;
pub mod render;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::broadcast::error::RecvError;

use crate::engine::{Answerer, Engine, TurnOptions};
use crate::protocol::{
    Card, CardAnswer, CardKind, Decision, Frame, Origin, Phase, Register, TurnRequest, TurnStatus,
};

use answer::Typed;

/// The terminal's session id prefix: a local session is its owner's by construction.
pub const SESSION_PREFIX: &str = crate::session::TERMINAL_PREFIX;

/// What the keyboard's next line answers.
#[derive(Default)]
struct Prompt {
    card: Option<Waiting>,
    spinning: Option<String>,
    confirm_stop: bool,
    /// The last face the engine showed (a finished turn's comes just before its end).
    face: Option<String>,
}

/// A card the next typed line answers.
struct Waiting {
    request_id: String,
    /// A question: the line is the answer (an empty line skips it), not y/n.
    input: bool,
    /// Its answer is a secret: the typed line is not echoed.
    secret: bool,
    /// The card itself (what it offers).
    card: Card,
    /// `e` was typed: the next line is the edited command.
    editing: bool,
}

/// The person at the keyboard: the owner by construction.
fn me() -> Answerer {
    Answerer {
        id: "local".into(),
        name: "you".into(),
        local: true,
        via: "the terminal".into(),
        holds: Vec::new(),
    }
}

/// `/cards`: every card waiting for the owner, in any session, numbered.
async fn list_cards(engine: &Engine) -> String {
    let cards = engine.all_open_cards().await;
    if cards.is_empty() {
        return "No card is waiting anywhere.\n> ".into();
    }
    let mut text = String::new();
    for (i, c) in cards.iter().enumerate() {
        text.push_str(&format!(
            "{}. [{}] {}: {}\n",
            i + 1,
            c.session,
            c.tool,
            c.action.lines().next().unwrap_or_default()
        ));
    }
    text.push_str("Answer one with /cards <n> y | n [reason] | a [1h|8h] | f [1h|8h].\n> ");
    text
}

/// `/cards <n> <answer>`: answer the n-th waiting card.
async fn answer_listed(engine: &Engine, args: &str) -> String {
    let (n, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    let cards = engine.all_open_cards().await;
    let Some(card) = n
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| cards.get(i))
    else {
        return format!("There is no card {n}; /cards lists them.\n> ");
    };
    match answer::read(card, rest) {
        Typed::Answer(a) => match engine.answer(&card.request_id, a, &me()).await {
            Ok(()) => "Answered.\n> ".into(),
            Err(e) => format!("({e})\n> "),
        },
        Typed::Edit => "Edit a card where it is drawn; here: y, n [reason], a or f.\n> ".into(),
        Typed::Unclear(why) => format!("({why})\n> "),
    }
}

/// What `/help` prints: every command the terminal itself answers (anything else is
/// said to her).
const HELP: &str = "Commands (anything else is said to her):
  /help          this list
  /cards         the cards waiting, in every session; /cards N y|n|a|f answers card N
  /stop          stop the background job running here (asks first)
  /quit, /exit   leave (Ctrl-D too)
At a card: y yes · n no (a reason may follow) · a always (this line) · f always (its family) · e edit
> ";

/// How many of a resumed session's newest lines are printed when it opens.
const RESUMED_LINES: usize = 6;

/// The newest lines of a session opened again (`kotoba chat --session NAME`) and the
/// rows of its turns among them, drawn as they were, so the person sees where the
/// conversation stands; empty for a new one.
async fn resumed(engine: &Engine, session_id: &str) -> String {
    let entries = engine
        .store()
        .shown(session_id, RESUMED_LINES)
        .await
        .unwrap_or_default();
    if entries.is_empty() {
        return String::new();
    }
    let mut text = String::from("(earlier in this session)\n");
    for entry in entries {
        let m = match entry {
            crate::store::Shown::Line(m) => m,
            crate::store::Shown::Step { row, .. } => {
                text.push_str(&render::finished_row(&row));
                text.push('\n');
                continue;
            }
        };
        let who = if m.role == "assistant" {
            "Kotoba"
        } else {
            "you"
        };
        let said: String = m.text.chars().take(300).collect();
        let more = if m.text.chars().count() > 300 {
            " …"
        } else {
            ""
        };
        text.push_str(&format!("{who}: {said}{more}\n"));
    }
    text
}

fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Run the chat until end of input or `/quit`.
pub async fn run(
    engine: Arc<Engine>,
    session_name: &str,
    notice: Option<String>,
) -> anyhow::Result<()> {
    let typed = crate::session::SessionId::terminal(session_name);
    let session_id = typed.as_str().to_string();
    let session = engine.session(&session_id).await;
    let prompt = Arc::new(Mutex::new(Prompt::default()));
    let mut rx = session.subscribe();
    if let Some(n) = notice {
        out(&format!("{n}\n"));
    }
    out(&resumed(&engine, &session_id).await);
    out("Kotoba is listening. Type a message; /help lists the commands, /quit leaves.\n> ");

    let drawer = {
        let prompt = prompt.clone();
        let announcer = engine.clone();
        let announce_session = session_id.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(120));
            let mut n = 0usize;
            loop {
                tokio::select! {
                    ev = rx.recv() => match ev {
                        Ok(ev) => {
                            draw(&ev.frame, &prompt);
                            if let (Frame::WorkDone { summary, .. }, Some(run_id)) = (&ev.frame, ev.run_id.clone()) {
                                // The job ended: she announces it in process, once.
                                let (engine, session) = (announcer.clone(), announce_session.clone());
                                let summary = summary.clone();
                                tokio::spawn(async move {
                                    engine.announce_work(&session, &run_id, &summary, Register::Text).await;
                                });
                            }
                        }
                        Err(RecvError::Lagged(k)) => out(&format!("\n({k} updates skipped)\n")),
                        Err(RecvError::Closed) => break,
                    },
                    _ = tick.tick() => {
                        let p = lock(&prompt);
                        // Still while a card waits: its prompt and the typed answer
                        // stay as they are.
                        if let (Some(action), None) = (&p.spinning, &p.card) {
                            n += 1;
                            out(&format!("\r{} {action}", render::SPINNER[n % render::SPINNER.len()]));
                        }
                    }
                }
            }
        })
    };

    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut turns = Vec::new();
    // Ctrl-C cuts what runs: a card waiting at the keyboard is dismissed, and its audit
    // row says so now, not at the next start.
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line? {
                Some(line) => line,
                None => break,
            },
            _ = interrupt.recv() => {
                echo::on();
                out("\n(stopped: what was running was cut, and a waiting card dismissed)\n");
                engine.shutdown();
                break;
            }
        };
        let line = line.trim().to_string();
        let confirming = std::mem::take(&mut lock(&prompt).confirm_stop);
        if confirming {
            if matches!(line.to_lowercase().as_str(), "y" | "yes") {
                match engine
                    .stop(&session_id, crate::engine::StopScope::Work)
                    .sentence()
                {
                    Ok(said) => out(&format!("{said}\n> ")),
                    Err(nothing) => out(&format!("{nothing}\n> ")),
                }
            } else {
                out("Kept it running.\n> ");
            }
            continue;
        }
        let card = lock(&prompt).card.take();
        if let Some(mut waiting) = card {
            let me = me();
            if waiting.secret {
                echo::on();
                out("\n");
            }
            let answered = match (waiting.input, line.is_empty()) {
                // A question takes the typed line verbatim; an empty line skips it.
                (true, false) => {
                    engine
                        .answer(&waiting.request_id, CardAnswer::text(line.clone()), &me)
                        .await
                }
                (true, true) => {
                    engine
                        .answer(&waiting.request_id, CardAnswer::of(Decision::Deny), &me)
                        .await
                }
                // The edited command, approved; the gate judges it again.
                (false, false) if waiting.editing => {
                    let edit = CardAnswer {
                        edited: Some(line.clone()),
                        ..CardAnswer::of(Decision::Approve)
                    };
                    engine.answer(&waiting.request_id, edit, &me).await
                }
                (false, _) => match answer::read(&waiting.card, &line) {
                    Typed::Answer(a) => engine.answer(&waiting.request_id, a, &me).await,
                    Typed::Edit => {
                        out(&format!(
                            "Type the line as it should run (it goes through the gate again):\n{}\n> ",
                            waiting.card.action
                        ));
                        waiting.editing = true;
                        lock(&prompt).card = Some(waiting);
                        continue;
                    }
                    Typed::Unclear(why) => {
                        waiting.editing = false;
                        out(&format!("({why})\n: "));
                        lock(&prompt).card = Some(waiting);
                        continue;
                    }
                },
            };
            if let Err(e) = answered {
                out(&format!("({e})\n"));
            }
            continue;
        }
        match line.as_str() {
            "" => out("> "),
            "/quit" | "/exit" => break,
            "/help" | "/?" => out(HELP),
            "/cards" => out(&list_cards(&engine).await),
            l if l.starts_with("/cards ") => {
                out(&answer_listed(&engine, l.trim_start_matches("/cards ").trim()).await)
            }
            "/stop" => match engine.job(&session_id) {
                None => out("No background job is running, so there is nothing to stop.\n> "),
                Some(info) => {
                    lock(&prompt).confirm_stop = true;
                    out(&render::stop_question(&info));
                }
            },
            l if l.starts_with("/stop ") => out(&format!(
                "/stop takes no argument: '{}' was not acted on. Type /stop alone.\n> ",
                l.trim_start_matches("/stop ").trim()
            )),
            _ => {
                let engine = engine.clone();
                // The person at the keyboard is the owner by construction.
                let req = TurnRequest::text(Origin::Owner, typed.clone(), "you", line);
                turns.push(tokio::spawn(async move {
                    engine.run_turn(req, TurnOptions::default()).await
                }));
            }
        }
    }
    for t in turns {
        let _ = t.await;
    }
    // What the cut turns' drops handed over (a dismissed card's audit row, an
    // interrupted run's row) is written before she exits.
    engine.store().finish_later().await;
    drawer.abort();
    out("\n");
    Ok(())
}

fn lock(p: &Mutex<Prompt>) -> std::sync::MutexGuard<'_, Prompt> {
    match p.lock() {
        Ok(g) => g,
        Err(e) => e.into_inner(),
    }
}

fn draw(frame: &Frame, prompt: &Mutex<Prompt>) {
    let mut p = lock(prompt);
    match frame {
        Frame::TextDelta { text } => out(text),
        Frame::Step(row) if row.phase == Phase::Start => {
            out(&format!("\n{} {}", render::SPINNER[0], row.action));
            p.spinning = Some(row.action.clone());
        }
        Frame::Card(card) => {
            // The spinner stops on its own line; the card is drawn below it and
            // answered on its own line.
            if p.spinning.is_some() {
                out("\n");
            }
            let input = card.kind == CardKind::Input;
            p.card = Some(Waiting {
                request_id: card.request_id.clone(),
                input,
                secret: card.secret,
                card: (**card).clone(),
                editing: false,
            });
            if input {
                out(&render::question(card));
                if card.secret {
                    echo::off();
                }
            } else {
                out(&render::card(card));
            }
        }
        Frame::CardSettled { request_id, .. }
            if p.card.as_ref().is_some_and(|w| &w.request_id == request_id) =>
        {
            if p.card.take().is_some_and(|w| w.secret) {
                echo::on();
            }
            if let Some(l) = render::line(frame) {
                out(&format!("\n{l}\n"));
            }
        }
        Frame::Face { expression } => p.face = Some(expression.clone()),
        Frame::TurnDone { status, .. } => {
            // Her finished face, from the one map (`crate::face`), when it is not calm.
            match p.face.take() {
                Some(face) if *status == TurnStatus::Completed && face != crate::face::CALM => {
                    out(&format!("\n{} {face}\n> ", crate::face::emoji(&face)))
                }
                _ => out("\n> "),
            }
        }
        other => {
            if let Some(l) = render::line(other) {
                if p.spinning.take().is_some() {
                    out("\r");
                }
                out(&format!("{l}\n"));
            }
        }
    }
}
