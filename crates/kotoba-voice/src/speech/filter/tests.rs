//! Tests for the spoken filter.

use super::*;
use proptest::prelude::*;

fn check(table: &[(&str, &str)]) {
    for (text, want) in table {
        assert_eq!(spoken(text), *want, "from {text:?}");
    }
}

#[test]
fn code_is_never_read_aloud_and_code_alone_becomes_a_pointer() {
    check(&[
        (
            "Try this:\n```bash\nrm -rf build\n```\nThen rebuild.",
            "Try this: Then rebuild.",
        ),
        ("```python\nprint('hi')\n```", CODE_POINTER),
        ("~~~\nx = 1\n~~~", CODE_POINTER),
        ("Here:\n```\nunclosed fence runs to the end", "Here:"),
        ("Run `cargo` first.", "Run cargo first."),
        ("Open `README.md` now.", "Open README.md now."),
        ("Run `ls -la /tmp` to see.", "Run to see."),
        ("`git status --short`", CODE_POINTER),
        ("Use ``a`b`` here.", "Use here."),
        ("A stray ` tick.", "A stray tick."),
    ]);
}

#[test]
fn links_become_their_label_and_bare_urls_go_or_become_the_link() {
    check(&[
        (
            "See [the docs](https://example.com/docs) for more.",
            "See the docs for more.",
        ),
        (
            "![diagram](https://x.y/a.png) Above is the plan.",
            "Above is the plan.",
        ),
        (
            "Source https://example.com/a?b=1 confirms it.",
            "Source confirms it.",
        ),
        (
            "The docs are at https://example.com/docs.",
            "The docs are at the link.",
        ),
        ("Docs: www.example.com", "Docs: the link"),
        (
            "It is on example.com/pricing, cheap.",
            "It is on the link, cheap.",
        ),
        ("Está en https://ejemplo.es/x.", "Está en el enlace."),
        ("Read it (https://example.com/x) today.", "Read it today."),
        ("Go to <https://example.com>.", "Go to the link."),
        ("I like example.com a lot.", "I like example.com a lot."),
        ("Version 3.5 is out.", "Version 3.5 is out."),
    ]);
}

#[test]
fn file_paths_are_not_read_aloud() {
    check(&[
        (
            "I saved it to ~/notes/today.md.",
            "I saved it to your files.",
        ),
        (
            "Deleted /tmp/build/cache and moved on.",
            "Deleted and moved on.",
        ),
        (
            "Lo guardé en /home/ana/notas.txt.",
            "Lo guardé en tus archivos.",
        ),
        (
            "It lives in C:\\Users\\ana\\x.txt now.",
            "It lives in your files now.",
        ),
        (
            "Use and/or here, at 24/7 speed.",
            "Use and/or here, at 24/7 speed.",
        ),
    ]);
}

#[test]
fn a_streamed_reply_is_spoken_sentence_by_sentence_without_markup() {
    let reply = "Sure! Here's what I found:\n\n## Results\n\n1. **Rust 1.85** is out.\n\
                 2. See [the notes](https://blog.rust-lang.org/x.html).\n\n| Crate | Version |\n\
                 |---|---|\n| tokio | 1.43 |\n\nTo update, run:\n```bash\nrustup update\n```\n\
                 That's it! 🎉 [laughs] Ask me if you need help with `cargo`.";
    let mut s = Sentences::new();
    let mut said: Vec<String> = reply.split_inclusive(' ').flat_map(|d| s.push(d)).collect();
    said.extend(s.finish());
    let said: Vec<String> = said
        .iter()
        .map(|x| spoken(x))
        .filter(|x| !x.is_empty())
        .collect();
    assert_eq!(
        said,
        [
            "Sure!",
            "Here's what I found:",
            "Results.",
            "Rust 1.85 is out.",
            "See the notes.",
            "Crate, Version.",
            "tokio, 1.43.",
            "To update, run:",
            "That's it!",
            "Ask me if you need help with cargo."
        ]
    );
}

#[test]
fn markdown_is_said_as_plain_words() {
    check(&[
        ("# Setup\nInstall it.", "Setup. Install it."),
        ("## Step two ##", "Step two."),
        (
            "This is **bold**, *italic*, __under__ and ~~gone~~ text.",
            "This is bold, italic, under and gone text.",
        ),
        ("> quoted wisdom", "quoted wisdom"),
        (
            "Steps:\n- first\n- second\n* third!",
            "Steps: first. second. third!",
        ),
        ("1. Open it\n2) Save it.", "Open it. Save it."),
        ("- [ ] todo\n- [x] done", "todo. done."),
        ("Above\n---\nBelow", "Above Below"),
        ("***", ""),
        (
            "| Name | Age |\n|------|:---:|\n| Ann | 30 |",
            "Name, Age. Ann, 30.",
        ),
        ("my_file_name and _emphasis_", "my file name and emphasis"),
        ("Issue #42 is fixed.", "Issue 42 is fixed."),
        ("A line\\* with escapes", "A line with escapes"),
    ]);
}

#[test]
fn tool_call_leaks_are_dropped_but_prose_about_functions_stays() {
    check(&[
        (r#"Sure. {"name": "shell", "arguments": {"command": "ls"}} Done."#, "Sure. Done."),
        (r#"{"tool": "web_search", "parameters": {"q": "x"}}"#, ""),
        ("Ok <tool_call>{\"name\":\"x\"}</tool_call> then.", "Ok then."),
        ("Ok <tool_call>{\"name\":\"x\", never closed", "Ok"),
        ("<function=shell>{\"cmd\": \"ls\"}</function> Listed.", "Listed."),
        ("Let me look.\nfunctions.shell({\"command\": \"ls -la\"})", "Let me look."),
        (r#"{"query":"tokyo weather"}to=functions.web_search"#, ""),
        ("Checking. to=functions.read_file", "Checking."),
        ("<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{\"cmd\":[\"ls\"]}<|call|>", ""),
        ("Found it.\n{\"path\": \"/tmp/a\", \"size\": 3}\nAll good.", "Found it. All good."),
        ("You use functions.map in JS.", "You use functions.map in JS."),
        ("A set {a, b} in maths.", "A set a, b in maths."),
        ("<think>hidden plan</think>Hello!", "Hello!"),
    ]);
}

#[test]
fn mentions_emoji_and_audio_tags_are_not_spoken() {
    check(&[
        ("Thanks <@123456789>!", "Thanks!"),
        ("Hi <@!42> and <@&7>, see <#99>.", "Hi and, see."),
        ("Nice <:pepe_laugh:1234> one <a:dance:5678>", "Nice one"),
        ("Meet <t:1700000000:R> then.", "Meet then."),
        ("Great job 🎉🎉 really 👍🏽 👨‍👩‍👧", "Great job really"),
        ("[laughs] Oh no! [sighs warmly] Fine.", "Oh no! Fine."),
        ("That is true [1].", "That is true."),
        ("Hey @everyone listen.", "Hey everyone listen."),
        ("Line<br>break", "Line break"),
        ("☀️ Sunny ✅", "Sunny"),
    ]);
}

#[test]
fn whitespace_is_collapsed_and_empty_text_stays_empty() {
    check(&[
        ("", ""),
        ("   \n\t ", ""),
        ("...", ""),
        ("Hello   there,\n\n  friend .", "Hello there, friend."),
        (
            "Plain sentence stays as it is.",
            "Plain sentence stays as it is.",
        ),
        (
            "¿Qué tal? ¡Bien! Café, año, naïve.",
            "¿Qué tal? ¡Bien! Café, año, naïve.",
        ),
        ("日本語の文です。", "日本語の文です。"),
    ]);
}

#[test]
fn her_soul_lines_pass_unchanged() {
    use kotoba_core::protocol::SayKind;
    use kotoba_engine::soul::Soul;
    let soul = Soul::shipped();
    let mut seen = 0;
    for tool in soul.tools_with_lines() {
        let kinds = [SayKind::Announce, SayKind::After, SayKind::Fail];
        let lines = kinds.iter().filter_map(|k| soul.line(tool, *k));
        let beats = soul
            .heartbeats(tool)
            .unwrap_or_default()
            .iter()
            .map(String::as_str);
        for text in lines.chain(beats) {
            assert_eq!(spoken(text), text.trim());
            seen += 1;
        }
    }
    assert!(seen > 40, "{seen}");
}

proptest! {
    #[test]
    fn no_markup_character_is_ever_spoken(text in "[a-z #*`|~_\\[\\](){}<>:/.\\n@!0-9\"-]{0,80}") {
        let out = spoken(&text);
        prop_assert!(!out.contains(['*', '#', '`', '|', '~', '[', ']', '{', '}']), "{:?} -> {:?}", text, out);
        prop_assert!(!out.contains("  ") && out.trim() == out);
    }
}
