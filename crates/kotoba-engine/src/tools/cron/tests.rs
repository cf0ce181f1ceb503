//! Tests of cronjob and the reminder scheduler, all on paused tokio time: one-offs fire
//! once at their time, repeats only when asked for, skip and remove, missed reminders.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{advance, timeout, Instant};

use super::*;
use crate::tools::shell::tests::ctx_in;

struct Fx {
    _dir: tempfile::TempDir,
    hub: Arc<Reminders>,
    ctx: ToolContext,
    fired: mpsc::UnboundedReceiver<Reminder>,
    _stop: tokio_util::sync::DropGuard,
}

fn fx(words: &str) -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::in_memory().unwrap());
    let hub = Reminders::new(store);
    let mut ctx = ctx_in(dir.path(), &dir.path().join("ws"));
    let turn = Arc::make_mut(&mut ctx.turn);
    turn.session = "discord:chan".into();
    turn.user_request = Some(words.into());
    ctx.reminders = Some(hub.clone());
    let (tx, fired) = mpsc::unbounded_channel();
    let stop = CancellationToken::new();
    let (h, s) = (hub.clone(), stop.clone());
    tokio::spawn(async move {
        h.run(s, move |r| {
            let _ = tx.send(r);
        })
        .await
    });
    Fx {
        _dir: dir,
        hub,
        ctx,
        fired,
        _stop: stop.drop_guard(),
    }
}

async fn cron(f: &Fx, args: Value) -> ToolOutput {
    CronJob::new().run(args, &f.ctx).await
}

/// Let the scheduler run whatever is ready without moving the clock.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

const MIN: Duration = Duration::from_secs(60);

#[tokio::test(start_paused = true)]
async fn a_one_off_reminder_fires_once_at_its_time_where_it_was_set() {
    let mut f = fx("remind me to stretch in ten minutes");
    let start = Instant::now();
    let out = cron(
        &f,
        json!({"action": "create", "text": "stretch", "in_minutes": 10}),
    )
    .await;
    assert!(out.is_ok(), "{}", out.text);
    assert!(out.text.contains("due in 10 min"), "{}", out.text);
    advance(MIN * 9).await;
    settle().await;
    assert!(f.fired.try_recv().is_err(), "fired early");
    let r = timeout(MIN * 5, f.fired.recv()).await.unwrap().unwrap();
    assert_eq!(start.elapsed().as_secs(), 600);
    assert_eq!(r.text, "stretch");
    assert_eq!(r.session, "discord:chan");
    assert_eq!(r.every_secs, None);
    assert!(timeout(MIN * 60 * 24 * 30, f.fired.recv()).await.is_err());
    let listed = cron(&f, json!({"action": "list"})).await;
    assert_eq!(listed.text, "No reminders are set in this conversation.");
}

#[tokio::test(start_paused = true)]
async fn a_repeat_is_refused_unless_the_persons_words_ask_for_one() {
    let f = fx("remind me to drink water in an hour");
    let out = cron(
        &f,
        json!({"action": "create", "text": "water", "in_minutes": 60, "every_minutes": 60}),
    )
    .await;
    assert!(out.refusal().is_some(), "{}", out.text);
    assert!(
        out.text.contains("did not ask for a repeat"),
        "{}",
        out.text
    );
    assert!(f
        .hub
        .store()
        .reminders_of("discord:chan")
        .await
        .unwrap()
        .is_empty());
    assert!(asks_for_repeat("Remind me EVERY hour"));
    assert!(asks_for_repeat("a daily reminder please"));
    assert!(!asks_for_repeat("remind me in an hour"));
}

#[tokio::test(start_paused = true)]
async fn a_repeating_reminder_fires_every_interval_and_skip_moves_past_the_next_one() {
    let mut f = fx("remind me to drink water every hour");
    let start = Instant::now();
    let out = cron(
        &f,
        json!({"action": "create", "text": "water", "in_minutes": 10, "every_minutes": 60}),
    )
    .await;
    assert!(out.is_ok(), "{}", out.text);
    assert!(out.text.contains("repeats every 1 h"), "{}", out.text);
    let id = f.hub.store().reminders_of("discord:chan").await.unwrap()[0].id;
    for at in [10, 70] {
        let r = timeout(MIN * 120, f.fired.recv()).await.unwrap().unwrap();
        assert_eq!(r.id, id);
        assert_eq!(start.elapsed().as_secs(), at * 60);
    }
    let out = cron(&f, json!({"action": "skip", "id": id})).await;
    assert!(out.is_ok(), "{}", out.text);
    timeout(MIN * 200, f.fired.recv()).await.unwrap().unwrap();
    assert_eq!(
        start.elapsed().as_secs(),
        190 * 60,
        "the 130-minute time was skipped"
    );
}

#[tokio::test(start_paused = true)]
async fn remove_deletes_only_this_conversations_reminder_and_it_never_fires() {
    let mut f = fx("remind me in 5 minutes");
    cron(
        &f,
        json!({"action": "create", "text": "tea", "in_minutes": 5}),
    )
    .await;
    let id = f.hub.store().reminders_of("discord:chan").await.unwrap()[0].id;
    let mut other = f.ctx.clone();
    Arc::make_mut(&mut other.turn).session = "web:someone".into();
    let out = CronJob::new()
        .run(json!({"action": "remove", "id": id}), &other)
        .await;
    assert!(out.refusal().is_some(), "{}", out.text);
    let out = cron(&f, json!({"action": "skip", "id": id})).await;
    assert!(out.text.contains("one-off"), "{}", out.text);
    let out = cron(&f, json!({"action": "remove", "id": id})).await;
    assert!(out.is_ok(), "{}", out.text);
    assert!(timeout(MIN * 60, f.fired.recv()).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn bad_arguments_are_refused_and_nothing_is_stored() {
    let f = fx("remind me");
    for args in [
        json!({"action": "create", "in_minutes": 5}),
        json!({"action": "create", "text": "x"}),
        json!({"action": "create", "text": "x", "in_minutes": -1}),
        json!({"action": "create", "text": "x", "in_minutes": 1, "every_minutes": 1}),
        json!({"action": "remove"}),
        json!({"action": "snooze"}),
        json!({}),
    ] {
        let out = cron(&f, args.clone()).await;
        assert!(out.refusal().is_some(), "{args}: {}", out.text);
    }
    assert!(f
        .hub
        .store()
        .reminders_of("discord:chan")
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_reminder_missed_while_the_process_was_down_fires_once_at_start() {
    let store = Arc::new(Store::in_memory().unwrap());
    store
        .add_reminder(&Reminder {
            id: 0,
            session: "s".into(),
            text: "late".into(),
            due_ms: now_ms() - 3_600_000,
            register: kotoba_core::protocol::Register::Text,
            channel: kotoba_core::protocol::Channel::Text,
            every_secs: None,
            asker: String::new(),
        })
        .await
        .unwrap();
    let hub = Reminders::new(store);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let stop = CancellationToken::new();
    let h = hub.clone();
    let s = stop.clone();
    tokio::spawn(async move { h.run(s, move |r| tx.send(r).unwrap()).await });
    assert_eq!(rx.recv().await.unwrap().text, "late");
    assert!(timeout(MIN * 60, rx.recv()).await.is_err());
    stop.cancel();
}

#[test]
fn the_next_repeat_falls_strictly_after_now_skipping_missed_ones() {
    assert_eq!(next_after(1_000, 60, 500), 1_000);
    assert_eq!(next_after(1_000, 60, 1_000), 61_000);
    assert_eq!(next_after(1_000, 60, 200_000), 241_000);
    assert_eq!(span(90 * 60_000), "1 h 30 min");
    assert_eq!(span(26 * 3_600_000), "1 day 2 h");
}
