//! The cron family: `cronjob` reminders (create / list / remove / skip), one-off or
//! repeating, stored in SQLite, and [`Reminders`], the clock and scheduler that fires
//! them on tokio time and hands each due reminder to the engine for delivery.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::args::{opt_str, req_str};
use super::Behaviour;
use super::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{Reminder, Risk, StepKind};
use kotoba_store::{now_ms, Store};

/// The longest a reminder may be set ahead: a year, in minutes.
pub const MAX_AHEAD_MINUTES: f64 = 366.0 * 24.0 * 60.0;
/// The shortest repeat, in minutes.
pub const MIN_EVERY_MINUTES: u64 = 5;
/// The longest reminder text, in characters.
pub const MAX_TEXT_CHARS: usize = 500;
/// How long the scheduler waits before looking again after the store failed.
const RETRY_AFTER_ERROR: Duration = Duration::from_secs(60);

/// Words of the person's request that ask for a repeat.
const REPEAT_WORDS: &[&str] = &[
    "every",
    "each",
    "daily",
    "weekly",
    "hourly",
    "monthly",
    "yearly",
    "weekday",
    "weekdays",
    "nightly",
    "repeat",
    "repeating",
    "recurring",
    "always",
];

/// Whether the person's own words ask for a repeating reminder.
pub fn asks_for_repeat(words: &str) -> bool {
    words
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| REPEAT_WORDS.contains(&w))
}

/// The next time a reminder due at `due_ms`, repeating every `every_secs`, falls strictly
/// after `now_ms` (missed repeats are skipped, not delivered in a burst).
pub fn next_after(due_ms: i64, every_secs: u64, now_ms: i64) -> i64 {
    let step = (every_secs.max(1).min(i64::MAX as u64 / 1000) * 1000) as i64;
    if due_ms > now_ms {
        return due_ms;
    }
    let behind = now_ms - due_ms;
    due_ms.saturating_add((behind / step + 1).saturating_mul(step))
}

/// The reminder clock and the scheduler's wake-up, shared by the engine (which runs
/// [`Reminders::run`]) and the cronjob tool (which stores and pokes it).
///
/// Its clock is the wall clock read once at start plus tokio time since, so due times are
/// unix milliseconds that survive a restart while the scheduler sleeps on tokio time.
pub struct Reminders {
    store: Arc<Store>,
    wake: Notify,
    base_wall_ms: i64,
    base: tokio::time::Instant,
}

impl std::fmt::Debug for Reminders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reminders")
            .field("base_wall_ms", &self.base_wall_ms)
            .finish_non_exhaustive()
    }
}

impl Reminders {
    /// The reminders kept in `store`.
    pub fn new(store: Arc<Store>) -> Arc<Reminders> {
        Arc::new(Reminders {
            store,
            wake: Notify::new(),
            base_wall_ms: now_ms(),
            base: tokio::time::Instant::now(),
        })
    }

    /// Now, in unix milliseconds, by the reminder clock.
    pub fn now_ms(&self) -> i64 {
        let elapsed = self.base.elapsed().as_millis().min(i64::MAX as u128) as i64;
        self.base_wall_ms.saturating_add(elapsed)
    }

    /// The store they live in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Tell the scheduler the set of reminders changed.
    pub fn changed(&self) {
        self.wake.notify_one();
    }

    /// Fire every due reminder through `deliver`, once each, until `stop` is cancelled.
    /// A reminder missed while the process was down fires as soon as this starts.
    pub async fn run(&self, stop: CancellationToken, deliver: impl Fn(Reminder)) {
        loop {
            let work = fire_due(&self.store, self.now_ms(), &stop).await;
            let wait = match work {
                Ok((fired, next)) => {
                    for r in fired {
                        deliver(r);
                    }
                    next.map(|due| {
                        Duration::from_millis(u64::try_from(due - self.now_ms()).unwrap_or(0))
                    })
                }
                Err(e) => {
                    tracing::warn!("reminders: {e}");
                    Some(RETRY_AFTER_ERROR)
                }
            };
            if stop.is_cancelled() {
                return;
            }
            let sleep = async {
                match wait {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = self.wake.notified() => {}
                _ = sleep => {}
            }
        }
    }
}

/// Move every reminder due at `now` on (a one-off done, a repeat to its next time), each
/// once; the ones to deliver, and when the next one is due.
async fn fire_due(
    store: &Store,
    now: i64,
    stop: &CancellationToken,
) -> Result<(Vec<Reminder>, Option<i64>), kotoba_store::StoreError> {
    let mut fired = Vec::new();
    for r in store.due_reminders(now).await? {
        if stop.is_cancelled() {
            break;
        }
        let next = r.every_secs.map(|every| next_after(r.due_ms, every, now));
        if store.move_reminder(r.id, r.due_ms, next).await? {
            fired.push(r);
        }
    }
    Ok((fired, store.next_reminder_due().await?))
}

/// Sets, lists, removes and skips reminders delivered where they were set.
#[derive(Debug, Clone)]
pub struct CronJob {
    spec: ToolSpec,
}

impl Default for CronJob {
    fn default() -> Self {
        Self::new()
    }
}

impl CronJob {
    /// The tool with its spec.
    pub fn new() -> Self {
        CronJob {
            spec: ToolSpec {
                name: "cronjob".into(),
                description: format!(
                    "Reminders, delivered in this conversation when they come due. action \
                     'create' needs 'text' and 'in_minutes' (from now); add 'every_minutes' \
                     (at least {MIN_EVERY_MINUTES}) ONLY when the person asked for a repeat \
                     in their own words. 'list' shows this conversation's reminders with \
                     their ids; 'remove' deletes one by 'id'; 'skip' skips the next time of a \
                     repeating one by 'id'."
                ),
                family: "cron".into(),
                risk: Risk::Write,
                step_kind: StepKind::for_tool("cronjob"),
                timeout: None,
                takes_timeout_arg: false,
                scope: Scope::Both,
                lines: ToolLines::of(
                    "Let me set that reminder.",
                    &["Still setting it.", "Nearly done."],
                    "Reminder's set.",
                    "I couldn't set that reminder.",
                ),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["create", "list", "remove", "skip"]},
                        "text": {"type": "string", "description": "What to remind them of (create)."},
                        "in_minutes": {"type": "number", "exclusiveMinimum": 0, "description": "Minutes from now until it is due (create)."},
                        "every_minutes": {"type": "integer", "minimum": MIN_EVERY_MINUTES, "description": "Repeat interval; only when the person asked for a repeat."},
                        "id": {"type": "integer", "description": "The reminder's id (remove, skip)."}
                    },
                    "required": ["action"],
                    "additionalProperties": false
                }),
                behaviour: Behaviour::default(),
            },
        }
    }
}

/// Minutes as a readable span: "45 min", "3 h 5 min", "2 days 1 h".
pub fn span(ms: i64) -> String {
    let mins = (ms.max(0) + 59_999) / 60_000;
    let (d, h, m) = (mins / 1440, (mins % 1440) / 60, mins % 60);
    let days = if d == 1 {
        "1 day".to_string()
    } else {
        format!("{d} days")
    };
    match (d, h, m) {
        (0, 0, m) => format!("{m} min"),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (_, 0, _) => days,
        (_, h, _) => format!("{days} {h} h"),
    }
}

fn describe(r: &Reminder, now: i64) -> String {
    let repeat = match r.every_secs {
        Some(s) => format!(", repeats every {}", span(s as i64 * 1000)),
        None => String::new(),
    };
    format!(
        "#{} \"{}\" — due in {}{repeat}",
        r.id,
        r.text,
        span(r.due_ms - now)
    )
}

fn id_arg(args: &Value, action: &str) -> Result<i64, ToolOutput> {
    args.get("id").and_then(Value::as_i64).ok_or_else(|| {
        ToolOutput::refused(format!(
            "cronjob: '{action}' needs the reminder's 'id' as a whole number (see action 'list'). \
             Nothing changed."
        ))
    })
}

#[async_trait]
impl Tool for CronJob {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn action_line(&self, args: &Value) -> String {
        let action = args.get("action").and_then(Value::as_str).unwrap_or("");
        let text = args.get("text").and_then(Value::as_str).unwrap_or("");
        super::clip_chars(format!("cronjob {action} {text}").trim_end(), 120)
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let action = match req_str(&args, "action", "cronjob") {
            Ok(a) => a,
            Err(r) => return r,
        };
        let Some(hub) = ctx.reminders.clone() else {
            return ToolOutput::failed(
                "cronjob: reminders are not running in this process; nothing was set.",
            );
        };
        let now = hub.now_ms();
        let result = match action {
            "create" => create(&args, ctx, &hub, now).await,
            "list" => hub.store().reminders_of(ctx.session()).await.map(|list| {
                if list.is_empty() {
                    ToolOutput::ok("No reminders are set in this conversation.")
                } else {
                    let lines: Vec<String> = list.iter().map(|r| describe(r, now)).collect();
                    ToolOutput::ok(lines.join("\n"))
                }
            }),
            "remove" | "skip" => {
                let id = match id_arg(&args, action) {
                    Ok(id) => id,
                    Err(r) => return r,
                };
                change(action, id, ctx, &hub, now).await
            }
            other => Ok(ToolOutput::refused(format!(
                "cronjob: unknown action '{other}'; use create, list, remove or skip. Nothing changed."
            ))),
        };
        result.unwrap_or_else(|e| ToolOutput::failed(format!("cronjob: the store failed: {e}.")))
    }
}

async fn create(
    args: &Value,
    ctx: &ToolContext,
    hub: &Reminders,
    now: i64,
) -> Result<ToolOutput, kotoba_store::StoreError> {
    let text = match opt_str(args, "text", "cronjob") {
        Ok(Some(t)) if !t.trim().is_empty() => t.trim().to_string(),
        Ok(_) => {
            return Ok(ToolOutput::refused(
                "cronjob: 'create' needs 'text', what to remind them of. Nothing was set.",
            ))
        }
        Err(r) => return Ok(r),
    };
    if text.chars().count() > MAX_TEXT_CHARS {
        return Ok(ToolOutput::refused(format!(
            "cronjob: the text is longer than {MAX_TEXT_CHARS} characters. Nothing was set."
        )));
    }
    let minutes = match args.get("in_minutes").and_then(Value::as_f64) {
        Some(m) if m > 0.0 && m <= MAX_AHEAD_MINUTES => m,
        Some(m) => {
            return Ok(ToolOutput::refused(format!(
                "cronjob: 'in_minutes' must be above 0 and at most a year ahead, got {m}. \
                 Nothing was set."
            )))
        }
        None => return Ok(ToolOutput::refused(
            "cronjob: 'create' needs 'in_minutes', a number of minutes from now. Nothing was set.",
        )),
    };
    let every_secs = match args.get("every_minutes") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(m) if m >= MIN_EVERY_MINUTES => Some(m.saturating_mul(60)),
            _ => {
                return Ok(ToolOutput::refused(format!(
                    "cronjob: 'every_minutes' must be a whole number of at least \
                     {MIN_EVERY_MINUTES}, got {v}. Nothing was set."
                )))
            }
        },
    };
    if every_secs.is_some()
        && !ctx
            .turn
            .user_request
            .as_deref()
            .is_some_and(asks_for_repeat)
    {
        return Ok(ToolOutput::refused(
            "cronjob: they did not ask for a repeat in their own words, so a repeating reminder \
             was NOT set. Set a one-off reminder (no 'every_minutes'), or ask them whether it \
             should repeat.",
        ));
    }
    let mut reminder = Reminder {
        id: 0,
        session: ctx.session().to_string(),
        text,
        due_ms: now + (minutes * 60_000.0).round() as i64,
        register: ctx.turn.register,
        channel: ctx.turn.channel,
        every_secs,
        asker: ctx.turn.person.author.clone(),
    };
    reminder.id = hub.store().add_reminder(&reminder).await?;
    hub.changed();
    Ok(ToolOutput::ok(format!("Set: {}", describe(&reminder, now))))
}

async fn change(
    action: &str,
    id: i64,
    ctx: &ToolContext,
    hub: &Reminders,
    now: i64,
) -> Result<ToolOutput, kotoba_store::StoreError> {
    let Some(r) = hub.store().reminder(ctx.session(), id).await? else {
        return Ok(ToolOutput::refused(format!(
            "cronjob: there is no reminder #{id} in this conversation (see action 'list'). \
             Nothing changed."
        )));
    };
    let moved = if action == "remove" {
        hub.store().move_reminder(id, r.due_ms, None).await?
    } else {
        let Some(every) = r.every_secs else {
            return Ok(ToolOutput::refused(format!(
                "cronjob: reminder #{id} is a one-off, so there is no next time to skip; use \
                 'remove' to delete it. Nothing changed."
            )));
        };
        let next = next_after(r.due_ms, every, r.due_ms.max(now));
        hub.store().move_reminder(id, r.due_ms, Some(next)).await?
    };
    if !moved {
        return Ok(ToolOutput::failed(format!(
            "cronjob: reminder #{id} fired or changed just now; list them again."
        )));
    }
    hub.changed();
    Ok(match action {
        "remove" => ToolOutput::ok(format!("Removed reminder #{id} \"{}\".", r.text)),
        _ => {
            let after = hub.store().reminder(ctx.session(), id).await?;
            let when = after.map_or_else(String::new, |a| format!(" {}", describe(&a, now)));
            ToolOutput::ok(format!("Skipped the next time of reminder:{when}"))
        }
    })
}

#[cfg(test)]
mod tests;
