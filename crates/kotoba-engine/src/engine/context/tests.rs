//! The pure parts of long conversations: budgets, which lines fold, clipping.

use super::*;
use crate::llm::tokens::Tokenizer;

fn line(id: i64, person: bool, words: usize) -> Line {
    let text = "word ".repeat(words);
    let item = if person {
        Item::User { text }
    } else {
        Item::Assistant { text }
    };
    Line::new(id, if person { "ann" } else { "kotoba" }, item)
}

#[test]
fn the_threshold_is_compact_at_of_the_window_and_never_above_the_answer_reserve() {
    let settings = Settings {
        context_window: Some(10_000),
        context_compact_at: 0.8,
        ..Settings::default()
    };
    let b = Budget::new(&settings, 1.0);
    assert_eq!(b.threshold(), 8_000);
    assert_eq!(b.limit(), 9_000);
    assert_eq!(b.tail(), 2_500);
    let high = Settings {
        context_compact_at: 0.95,
        ..settings.clone()
    };
    assert_eq!(Budget::new(&high, 1.0).threshold(), 9_000);
    // A provider that counts a quarter more leaves a quarter less in counted tokens.
    assert_eq!(Budget::new(&settings, 1.25).threshold(), 6_400);
}

#[test]
fn an_unset_window_is_the_models_own() {
    let s = Settings {
        model: "gpt-4".into(),
        ..Settings::default()
    };
    assert_eq!(window_of(&s), 8_192);
    let s = Settings {
        model: "some-local-model".into(),
        ..Settings::default()
    };
    assert_eq!(window_of(&s), 128_000);
}

#[test]
fn reported_usage_corrects_the_count_and_a_report_of_nothing_is_ignored() {
    let c = Calibration::default();
    c.observe(1_000, 0);
    assert_eq!(c.ratio(), 1.0);
    c.observe(1_000, 1_500);
    assert!((c.ratio() - 1.25).abs() < 1e-9);
    c.overflowed();
    assert!(c.ratio() > 1.5);
}

#[test]
fn whole_exchanges_fold_and_the_newest_exchange_always_stays() {
    let t = Tokenizer::O200k;
    let mut lines = vec![
        line(1, true, 100),
        line(2, false, 100),
        line(3, true, 100),
        line(4, false, 100),
        line(5, true, 100),
        line(6, false, 100),
    ];
    // Room for about two exchanges: the oldest folds.
    assert_eq!(lines_to_fold(&mut lines, t, 450), 2);
    // No room at all: everything but the newest exchange folds.
    assert_eq!(lines_to_fold(&mut lines, t, 0), 4);
    // Room for all: nothing folds.
    assert_eq!(lines_to_fold(&mut lines, t, 10_000), 0);
    // The cut never falls inside an exchange.
    let mut uneven = vec![
        line(1, true, 10),
        line(2, false, 10),
        line(3, false, 10),
        line(4, true, 10),
    ];
    assert_eq!(lines_to_fold(&mut uneven, t, 20), 3);
}

#[test]
fn a_clipped_text_keeps_its_head_and_tail_and_fits() {
    let t = Tokenizer::O200k;
    let text = format!("START {} END", "middle words here ".repeat(2_000));
    let clipped = clip(&text, 300, t);
    assert!(clipped.starts_with("START"));
    assert!(clipped.ends_with("END"));
    assert!(t.count(&clipped) <= 340, "{}", t.count(&clipped));
    assert_eq!(clip("short", 300, t), "short");
}

#[test]
fn the_oldest_tool_outputs_are_shortened_first() {
    let t = Tokenizer::O200k;
    let big = || "result line 42 ".repeat(1_000);
    let mut items = vec![
        Item::ToolResult {
            call_id: "a".into(),
            output: big(),
        },
        Item::ToolResult {
            call_id: "b".into(),
            output: big(),
        },
    ];
    let saved = shorten_outputs(&mut items, t, 100);
    assert!(saved >= 100);
    let size = |i: &Item| t.item(i);
    assert!(size(&items[0]) < 400);
    assert!(size(&items[1]) > 2_000, "only as many as needed");
}
