//! Tests of the memory family: one fact per call, both files written, recall by word.

use super::*;
use crate::tools::shell::tests::ctx_in;

fn ctx(dir: &tempfile::TempDir) -> ToolContext {
    ctx_in(dir.path(), &dir.path().join("ws"))
}

async fn write(ctx: &ToolContext, args: Value) -> ToolOutput {
    MemoryWrite::new().run(args, ctx).await
}

async fn recall(ctx: &ToolContext, args: Value) -> ToolOutput {
    MemoryRecall::new().run(args, ctx).await
}

#[tokio::test]
async fn a_compound_fact_is_refused_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir);
    for bad in [
        "She likes tea. She hates coffee.",
        "Likes tea and also plays chess",
        "Likes tea; plays chess",
        "Likes tea\nPlays chess",
        &"x".repeat(301),
    ] {
        let out = write(&ctx, json!({"fact": bad})).await;
        assert!(out.refusal().is_some(), "{bad:?} was accepted");
        assert!(out.text.contains("once per fact"), "{}", out.text);
    }
    assert!(!dir.path().join("memory").exists());
}

#[test]
fn abbreviations_and_initials_do_not_make_a_second_sentence() {
    assert_eq!(compound_reason("Her doctor is Dr. Tanaka in Osaka."), None);
    assert_eq!(
        compound_reason("Her favourite author is J. R. R. Tolkien."),
        None
    );
    assert_eq!(compound_reason("Version 2.5 broke her build!"), None);
    assert!(compound_reason("Her cat is Miso! She adores him.").is_some());
}

#[tokio::test]
async fn a_single_fact_lands_in_the_index_and_its_topic_file() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir);
    let out = write(
        &ctx,
        json!({"fact": "Aiko plays the cello on weekends.", "topic": "Music Hobbies"}),
    )
    .await;
    assert!(out.is_ok(), "{}", out.text);
    assert_eq!(
        out.text,
        "Remembered under 'music-hobbies': Aiko plays the cello on weekends."
    );
    let date = today();
    let index = std::fs::read_to_string(dir.path().join("memory/MEMORY.md")).unwrap();
    assert!(index.starts_with("# Memory\n"));
    assert!(
        index.contains(&format!(
            "\n- {date} [music-hobbies] Aiko plays the cello on weekends.\n"
        )),
        "{index}"
    );
    let topic = std::fs::read_to_string(dir.path().join("memory/topics/music-hobbies.md")).unwrap();
    assert_eq!(
        topic,
        format!("# music-hobbies\n\n- {date} Aiko plays the cello on weekends.\n")
    );
}

#[tokio::test]
async fn an_identical_fact_is_not_stored_twice() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir);
    write(&ctx, json!({"fact": "Likes green tea."})).await;
    let out = write(&ctx, json!({"fact": "likes  green tea"})).await;
    assert!(
        out.is_ok() && out.text.starts_with("Already remembered"),
        "{}",
        out.text
    );
    let topic = std::fs::read_to_string(dir.path().join("memory/topics/general.md")).unwrap();
    assert_eq!(topic.matches("green tea").count(), 1);
    let index = std::fs::read_to_string(dir.path().join("memory/MEMORY.md")).unwrap();
    assert_eq!(index.matches("green tea").count(), 1);
}

#[tokio::test]
async fn recall_finds_a_fact_by_one_of_its_words_ignoring_case() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir);
    write(
        &ctx,
        json!({"fact": "Aiko plays the cello on weekends.", "topic": "music"}),
    )
    .await;
    write(&ctx, json!({"fact": "Her sister lives in Kyoto."})).await;
    let out = recall(&ctx, json!({"query": "What about CELLO?"})).await;
    assert!(out.is_ok());
    assert_eq!(
        out.text,
        format!("- {} [music] Aiko plays the cello on weekends.", today())
    );
    let out = recall(&ctx, json!({"query": "violin"})).await;
    assert_eq!(out.text, "Nothing in memory matches 'violin'.");
    let out = recall(&ctx, json!({"topic": "music"})).await;
    assert!(
        out.text.contains("cello") && !out.text.contains("Kyoto"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn recall_ranks_the_fact_sharing_more_words_first() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir);
    write(&ctx, json!({"fact": "Her sister visits Kyoto in spring."})).await;
    write(&ctx, json!({"fact": "Her sister is a nurse."})).await;
    let out = recall(&ctx, json!({"query": "sister Kyoto"})).await;
    let first = out.text.lines().next().unwrap();
    assert!(first.contains("Kyoto"), "{}", out.text);
    assert_eq!(out.text.lines().count(), 2);
}

#[tokio::test]
async fn recall_without_a_query_gives_recent_facts_or_says_nothing_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir);
    assert_eq!(
        recall(&ctx, json!({})).await.text,
        "Nothing is remembered yet."
    );
    for i in 0..25 {
        write(&ctx, json!({"fact": format!("Fact number {i}")})).await;
    }
    let out = recall(&ctx, json!({})).await;
    let lines: Vec<&str> = out.text.lines().collect();
    assert_eq!(lines.len(), MAX_RECALL + 1);
    assert!(lines[0].ends_with("Fact number 24"), "{}", lines[0]);
    assert_eq!(lines[MAX_RECALL], "[showing 20 of 25]");
}

#[tokio::test]
async fn the_index_keeps_the_newest_fifty_and_the_owners_own_lines() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new(dir.path());
    std::fs::create_dir_all(dir.path().join("memory")).unwrap();
    std::fs::write(
        store.index_path(),
        "# My notes about her\n\nKeep this line.\n",
    )
    .unwrap();
    for i in 0..60 {
        store
            .write(&format!("Fact {i}"), "general", "2024-05-01")
            .await
            .unwrap();
    }
    let index = std::fs::read_to_string(store.index_path()).unwrap();
    assert!(index
        .starts_with("# My notes about her\n\nKeep this line.\n- 2024-05-01 [general] Fact 59\n"));
    assert_eq!(
        index.lines().filter(|l| l.starts_with("- ")).count(),
        INDEX_KEEP
    );
    assert!(!index.contains("Fact 9\n"));
    let topic = std::fs::read_to_string(store.topic_path("general")).unwrap();
    assert_eq!(topic.lines().filter(|l| l.starts_with("- ")).count(), 60);
}

#[tokio::test]
async fn recall_finds_facts_the_index_has_dropped_and_lines_the_owner_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new(dir.path());
    for i in 0..55 {
        store
            .write(&format!("Fact {i}"), "general", "2024-05-01")
            .await
            .unwrap();
    }
    let topic = store.topic_path("general");
    let mut body = std::fs::read_to_string(&topic).unwrap();
    body.push_str("- Loves hiking in autumn\n");
    std::fs::write(&topic, body).unwrap();
    let ctx = ctx(&dir);
    let out = recall(&ctx, json!({"query": "hiking"})).await;
    assert_eq!(out.text, "- [general] Loves hiking in autumn");
    let (found, _) = store.recall(Some("0"), None).await.unwrap();
    assert_eq!(found[0].text, "Fact 0");
}

#[tokio::test]
async fn bad_arguments_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(&dir);
    assert!(write(&ctx, json!({})).await.refusal().is_some());
    assert!(write(&ctx, json!({"fact": 3})).await.refusal().is_some());
    assert!(write(&ctx, json!({"fact": "  "})).await.refusal().is_some());
    assert!(recall(&ctx, json!({"query": ["x"]}))
        .await
        .refusal()
        .is_some());
}

#[test]
fn slugs_are_file_safe_and_default_to_general() {
    assert_eq!(slug("  Music / Hobbies! "), "music-hobbies");
    assert_eq!(slug("../../etc"), "etc");
    assert_eq!(slug("!!!"), "general");
}

#[test]
fn dates_are_civil_dates_in_utc() {
    assert_eq!(date_from_days(0), "1970-01-01");
    assert_eq!(date_from_days(11_016), "2000-02-29");
    assert_eq!(date_from_days(19_723), "2024-01-01");
}
