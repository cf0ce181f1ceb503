//! Tests for the soul file, its parser and the system prompt builder.

use std::fs;

use serde_json::json;

use super::*;
use crate::tools::{Scope, ToolLines, ToolSpec};
use kotoba_core::protocol::{Mode, Register, Risk, StepKind};

/// A tool spec with its own default lines, as a tool module would declare it.
fn spec(name: &str, risk: Risk) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: format!("The {name} tool."),
        family: name.to_string(),
        risk,
        step_kind: StepKind::for_tool(name),
        timeout: None,
        takes_timeout_arg: false,
        scope: Scope::Both,
        lines: ToolLines {
            announce: Some(format!("Module default announce for {name}.")),
            heartbeat: vec![format!("Module default heartbeat for {name}.")],
            after: Some(format!("Module default after for {name}.")),
            fail: Some(format!("Module default fail for {name}.")),
        },
        parameters: json!({"type": "object", "properties": {}}),
        behaviour: Default::default(),
    }
}

/// The fixed small companion toolset both snapshots are built with.
fn companion_specs() -> Vec<ToolSpec> {
    vec![
        spec("shell", Risk::Exec),
        spec("web_search", Risk::Network),
        spec("memory_recall", Risk::Read),
        spec("start_work", Risk::Write),
    ]
}

fn refs(specs: &[ToolSpec]) -> Vec<&ToolSpec> {
    specs.iter().collect()
}

const ALL_SHIPPED_TOOLS: [&str; 17] = [
    "shell",
    "execute_code",
    "read_file",
    "write_file",
    "patch",
    "search_files",
    "memory_write",
    "memory_recall",
    "session_search",
    "web_extract",
    "web_search",
    "todo",
    "cronjob",
    "open_link",
    "delegate",
    "skill_view",
    "start_work",
];

// ---- the shipped soul ----------------------------------------------------------

#[test]
fn the_shipped_soul_parses() {
    let soul = Soul::parse(SHIPPED_SOUL).expect("soul/default.md must parse");
    assert!(soul.personality.starts_with("You are Kotoba."));
    assert_eq!(Soul::shipped(), soul);
}

#[test]
fn the_shipped_soul_has_all_four_kinds_of_line_for_every_listed_tool() {
    let soul = Soul::shipped();
    for tool in ALL_SHIPPED_TOOLS {
        for kind in [
            SayKind::Announce,
            SayKind::Heartbeat,
            SayKind::After,
            SayKind::Fail,
        ] {
            assert!(
                soul.line(tool, kind).is_some(),
                "{tool} has no {kind:?} line"
            );
        }
    }
}

#[test]
fn the_seed_announce_lines_are_the_shipped_ones() {
    let soul = Soul::shipped();
    assert_eq!(
        soul.line("shell", SayKind::Announce),
        Some("Let me run that real quick.")
    );
    assert_eq!(
        soul.line("web_extract", SayKind::Announce),
        Some("Let me actually read that page for you.")
    );
    assert_eq!(
        soul.line("memory_write", SayKind::Announce),
        Some("Oh, that's worth remembering. I'll keep it.")
    );
}

#[test]
fn the_personality_carries_no_comments_and_no_lines() {
    let soul = Soul::shipped();
    assert!(!soul.personality.contains("<!--"));
    assert!(!soul.personality.contains("announce:"));
    assert!(!soul.personality.contains("## "));
}

// ---- soul line wins over the tool line ---------------------------------------

#[test]
fn the_soul_line_wins_over_the_tool_default() {
    let soul = Soul::shipped();
    let shell = spec("shell", Risk::Exec);
    let said = soul.line_or_default(&shell, SayKind::Announce);
    assert_eq!(said, Some("Let me run that real quick."));
    assert_ne!(said, shell.lines.announce.as_deref());
    assert_eq!(
        soul.heartbeats_or_default(&shell),
        soul.heartbeats("shell").unwrap()
    );
}

#[test]
fn the_tool_default_speaks_when_the_soul_is_silent_about_that_tool() {
    let soul = Soul::shipped();
    let other = spec("discord_people", Risk::Read);
    assert_eq!(soul.line("discord_people", SayKind::After), None);
    assert_eq!(
        soul.line_or_default(&other, SayKind::After),
        Some("Module default after for discord_people.")
    );
    assert_eq!(
        soul.heartbeats_or_default(&other),
        other.lines.heartbeat.as_slice()
    );
}

#[test]
fn heartbeat_line_is_the_first_and_heartbeats_keep_their_order() {
    let soul =
        Soul::parse("## Personality\nHi.\n## Lines\n### shell\nheartbeat: One.\nheartbeat: Two.\n")
            .unwrap();
    assert_eq!(soul.line("shell", SayKind::Heartbeat), Some("One."));
    assert_eq!(soul.heartbeats("shell").unwrap(), ["One.", "Two."]);
    assert_eq!(soul.line("shell", SayKind::Announce), None);
}

// ---- the parser ------------------------------------------------------------------

#[test]
fn blank_lines_and_comments_are_tolerated_anywhere() {
    let text = "<!-- top -->\n# Title\n\n## Personality\n<!-- a\nmulti-line\ncomment -->\n\
                Warm.\n\nQuick. <!-- inline -->\n\n## Lines\n\n<!-- c -->\n### shell\n\n\
                announce: Go. <!-- trailing -->\n";
    let soul = Soul::parse(text).unwrap();
    assert_eq!(soul.personality, "Warm.\n\nQuick.");
    assert_eq!(soul.line("shell", SayKind::Announce), Some("Go."));
}

fn error_of(text: &str) -> SoulError {
    Soul::parse(text).expect_err("this soul must be refused")
}

#[test]
fn an_unknown_key_is_refused_with_its_line_number() {
    let err = error_of("## Personality\nHi.\n## Lines\n### shell\nannounce: Go.\nbefore: No.\n");
    assert_eq!(
        err,
        SoulError::UnknownKey {
            line: 6,
            key: "before".into()
        }
    );
    assert!(err.to_string().starts_with("line 6:"));
}

#[test]
fn a_line_outside_a_tool_section_is_refused_with_its_line_number() {
    let err = error_of("## Personality\nHi.\n\n## Lines\nannounce: Go.\n");
    assert_eq!(err, SoulError::LineOutsideTool { line: 5 });
}

#[test]
fn line_numbers_count_the_lines_inside_comments() {
    let err = error_of("<!--\n\n\n-->\n## Personality\nHi.\n## Lines\n### shell\nsay: x\n");
    assert_eq!(err.line(), Some(9));
}

#[test]
fn malformed_files_are_refused_with_the_line_at_fault() {
    let cases: &[(&str, usize)] = &[
        ("stray\n## Personality\nHi.\n", 1),
        ("## Personality\nHi.\n## Voice\n", 3),
        ("## Personality\nHi.\n## Personality\nAgain.\n", 3),
        ("## Personality\nHi.\n### shell\n", 3),
        ("## Personality\nHi.\n## Lines\n### two words\n", 4),
        ("## Personality\nHi.\n## Lines\n### shell\n### shell\n", 5),
        ("## Personality\nHi.\n## Lines\n### shell\njust words\n", 5),
        ("## Personality\nHi.\n## Lines\n### shell\nafter:\n", 5),
        (
            "## Personality\nHi.\n## Lines\n### shell\nfail: A.\nfail: B.\n",
            6,
        ),
        (
            "## Personality\nHi.\n## Lines\n### shell\nafter: **Done**\n",
            5,
        ),
        (
            "## Personality\nHi.\n## Lines\n### shell\nafter: Done \u{1F389}\n",
            5,
        ),
        ("## Personality\nHi. <!-- never closed\n", 2),
        ("## Personality\n\n## Lines\n", 1),
        ("# Title only\n", 1),
    ];
    for (text, line) in cases {
        let err = error_of(text);
        assert_eq!(err.line(), Some(*line), "{text:?} gave {err}");
        assert!(err.to_string().contains(&format!("line {line}")), "{err}");
    }
}

// ---- loading an override --------------------------------------------------------

#[test]
fn a_soul_override_in_home_is_used() {
    let home = tempfile::tempdir().unwrap();
    let text = "## Personality\nYou are a test soul.\n## Lines\n### shell\nannounce: Off I go.\n";
    fs::write(home.path().join(OVERRIDE_FILE), text).unwrap();
    let (soul, problem) = Soul::load_reporting(home.path());
    assert_eq!(problem, None);
    assert_eq!(soul.personality, "You are a test soul.");
    assert_eq!(soul.line("shell", SayKind::Announce), Some("Off I go."));
    assert_eq!(Soul::load(home.path()), soul);
}

#[test]
fn a_broken_override_falls_back_to_the_shipped_soul_naming_the_line() {
    let home = tempfile::tempdir().unwrap();
    let text = "## Personality\nYou are broken.\n## Lines\n### shell\nannounce: Go.\nshout: NO\n";
    fs::write(home.path().join(OVERRIDE_FILE), text).unwrap();
    let (soul, problem) = Soul::load_reporting(home.path());
    assert_eq!(soul, Soul::shipped());
    let problem = problem.expect("the broken line is reported");
    assert_eq!(problem.line(), Some(6));
    assert!(problem.to_string().contains("line 6"));
    assert_eq!(Soul::load(home.path()), Soul::shipped());
}

#[test]
fn no_override_means_the_shipped_soul_and_no_problem() {
    let home = tempfile::tempdir().unwrap();
    assert_eq!(Soul::load_reporting(home.path()), (Soul::shipped(), None));
}

#[test]
fn an_unreadable_override_falls_back_to_the_shipped_soul() {
    let home = tempfile::tempdir().unwrap();
    fs::create_dir(home.path().join(OVERRIDE_FILE)).unwrap();
    let (soul, problem) = Soul::load_reporting(home.path());
    assert_eq!(soul, Soul::shipped());
    assert!(matches!(problem, Some(SoulError::Unreadable(_))));
}

// ---- the system prompt ----------------------------------------------------------

/// What only the written register is told.
const WRITTEN_ONLY: [&str; 6] = [
    "Markdown",
    "```",
    "fenced",
    "URLs in full",
    "digits",
    "14:05",
];

#[test]
fn the_written_register_gets_markdown_fences_urls_and_digits() {
    let specs = companion_specs();
    for mode in [Mode::Companion, Mode::Work] {
        let text = build_system_prompt(&Soul::shipped(), Register::Text, mode, &refs(&specs));
        for rule in WRITTEN_ONLY {
            assert!(text.contains(rule), "text prompt lacks {rule:?}");
        }
        assert!(!text.contains("turned into speech"));
    }
}

#[test]
fn the_spoken_register_gets_none_of_the_written_rules() {
    let specs = companion_specs();
    for mode in [Mode::Companion, Mode::Work] {
        let voice = build_system_prompt(&Soul::shipped(), Register::Voice, mode, &refs(&specs));
        assert!(!voice.contains("Markdown"));
        for rule in WRITTEN_ONLY {
            assert!(!voice.contains(rule), "voice prompt contains {rule:?}");
        }
        assert!(voice.contains("turned into speech"));
        assert!(voice.contains("the way a person says them out loud"));
    }
}

#[test]
fn both_registers_get_the_honesty_rules() {
    let specs = companion_specs();
    for register in [Register::Text, Register::Voice] {
        let p = build_system_prompt(&Soul::shipped(), register, Mode::Companion, &refs(&specs));
        assert!(p.contains("NOTHING ran"));
        assert!(p.contains("in the first person"));
        assert!(p.contains("in the person's language"));
        assert!(p.contains("it is not done"));
        assert!(p.starts_with(&Soul::shipped().personality));
    }
}

#[test]
fn the_written_extras_are_the_only_difference_between_the_registers() {
    let specs = companion_specs();
    let soul = Soul::shipped();
    let text = build_system_prompt(&soul, Register::Text, Mode::Companion, &refs(&specs));
    let voice = build_system_prompt(&soul, Register::Voice, Mode::Companion, &refs(&specs));
    let without = |p: &str, block: &str| p.replace(&format!("{block}\n\n"), "");
    assert_eq!(
        without(&text, super::prompt::WRITTEN_RULES),
        without(&voice, super::prompt::SPOKEN_RULES)
    );
}

/// Tool names that must not be mentioned unless offered.
const NAMED_ONLY_WHEN_OFFERED: [&str; 13] = [
    "browser",
    "delegate",
    "execute_code",
    "web_search",
    "web_extract",
    "skill_view",
    "activate_tools",
    "ask_user",
    "clarify",
    "todo",
    "write_file",
    "patch",
    "start_work",
];

#[test]
fn the_work_prompt_mentions_only_the_tools_offered() {
    let specs = vec![spec("shell", Risk::Exec), spec("read_file", Risk::Read)];
    for register in [Register::Text, Register::Voice] {
        let p = build_system_prompt(&Soul::shipped(), register, Mode::Work, &refs(&specs));
        assert!(p.contains("Act rather than describe"));
        assert!(p.contains("Verify before claiming"));
        assert!(p.contains("Keep the workspace organised"));
        assert!(p.contains("shell") && p.contains("read_file"));
        for name in NAMED_ONLY_WHEN_OFFERED {
            assert!(!p.contains(name), "{name} is mentioned but not offered");
        }
    }
}

#[test]
fn the_browser_is_mentioned_in_work_only_when_a_browser_tool_is_offered() {
    let soul = Soul::shipped();
    let without = vec![spec("shell", Risk::Exec)];
    let with = vec![
        spec("shell", Risk::Exec),
        spec("browser__navigate", Risk::Network),
    ];
    let p = build_system_prompt(&soul, Register::Text, Mode::Work, &refs(&without));
    assert!(!p.contains("browser"));
    let p = build_system_prompt(&soul, Register::Text, Mode::Work, &refs(&with));
    assert!(p.contains("You have a browser through browser__navigate."));
}

#[test]
fn every_capability_sentence_appears_when_its_tool_is_offered() {
    let soul = Soul::shipped();
    let specs: Vec<ToolSpec> = NAMED_ONLY_WHEN_OFFERED
        .iter()
        .map(|n| if *n == "browser" { "browser__click" } else { n })
        .map(|n| spec(n, Risk::Write))
        .collect();
    let p = build_system_prompt(&soul, Register::Voice, Mode::Work, &refs(&specs));
    for name in NAMED_ONLY_WHEN_OFFERED
        .iter()
        .filter(|n| **n != "start_work")
    {
        assert!(p.contains(name), "{name} offered but never mentioned");
    }
}

#[test]
fn the_companion_prompt_lists_the_tools_offered_and_only_those() {
    let soul = Soul::shipped();
    let specs = vec![
        spec("memory_recall", Risk::Read),
        spec("web_search", Risk::Network),
    ];
    let p = build_system_prompt(&soul, Register::Text, Mode::Companion, &refs(&specs));
    assert!(p.contains("The tools you have this turn are memory_recall and web_search."));
    assert!(!p.contains("start_work"));
    let none = build_system_prompt(&soul, Register::Text, Mode::Companion, &[]);
    assert!(none.contains("you have no tools this turn"));
}

#[test]
fn the_prompt_is_the_same_every_time_it_is_built() {
    let specs = companion_specs();
    let build =
        || build_system_prompt(&Soul::shipped(), Register::Voice, Mode::Work, &refs(&specs));
    assert_eq!(build(), build());
}

#[test]
fn the_voice_prompt_is_frozen_byte_for_byte() {
    let specs = companion_specs();
    let voice = build_system_prompt(
        &Soul::shipped(),
        Register::Voice,
        Mode::Companion,
        &refs(&specs),
    );
    insta::assert_snapshot!("voice_companion_prompt", voice);
}

#[test]
fn the_text_prompt_matches_its_snapshot() {
    let specs = companion_specs();
    let text = build_system_prompt(
        &Soul::shipped(),
        Register::Text,
        Mode::Companion,
        &refs(&specs),
    );
    insta::assert_snapshot!("text_companion_prompt", text);
}

#[test]
fn the_work_prompt_matches_its_snapshot() {
    let specs = vec![
        spec("skill_view", Risk::Read),
        spec("todo", Risk::Write),
        spec("shell", Risk::Exec),
        spec("read_file", Risk::Read),
        spec("patch", Risk::Write),
        spec("browser__navigate", Risk::Network),
        spec("delegate", Risk::Write),
    ];
    let text = build_system_prompt(&Soul::shipped(), Register::Text, Mode::Work, &refs(&specs));
    insta::assert_snapshot!("text_work_prompt", text);
}
