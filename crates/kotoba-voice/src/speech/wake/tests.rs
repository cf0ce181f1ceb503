//! Tests for who an utterance is for.

use super::*;

/// The expected outcome, written short for the table.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// Ignore.
    I,
    /// NameOnly.
    N,
    /// ForHer with the utterance unchanged.
    Same,
    /// ForHer with these words.
    F(&'static str),
}
use Want::*;

impl Want {
    fn wake(self, heard: &str) -> Wake {
        match self {
            I => Wake::Ignore,
            N => Wake::NameOnly,
            Same => Wake::ForHer(heard.trim().to_string()),
            F(words) => Wake::ForHer(words.to_string()),
        }
    }
}

fn kotoba() -> Names {
    Names::new(&["Kotoba".to_string(), "kotoba_bot".to_string()])
}

#[test]
fn who_an_utterance_is_for_by_name_place_room_size_and_window() {
    // heard, alone (1 person), busy (2 or 3 people), busy with the window open
    let table: &[(&str, Want, Want, Want)] = &[
        (
            "Kotoba, what's the weather?",
            F("what's the weather?"),
            F("what's the weather?"),
            F("what's the weather?"),
        ),
        (
            "What's the weather, Kotoba?",
            F("What's the weather?"),
            F("What's the weather?"),
            F("What's the weather?"),
        ),
        (
            "Hey Katoba, set a timer for ten minutes",
            F("Hey, set a timer for ten minutes"),
            F("Hey, set a timer for ten minutes"),
            F("Hey, set a timer for ten minutes"),
        ),
        (
            "Kotaba can you hear me",
            F("can you hear me"),
            F("can you hear me"),
            F("can you hear me"),
        ),
        (
            "is the build green Kotobah",
            F("is the build green"),
            F("is the build green"),
            F("is the build green"),
        ),
        (
            "Ko toba, play some music",
            F("play some music"),
            F("play some music"),
            F("play some music"),
        ),
        (
            "Cotoba what time is it",
            F("what time is it"),
            F("what time is it"),
            F("what time is it"),
        ),
        (
            "Toba, are you there?",
            F("are you there?"),
            F("are you there?"),
            F("are you there?"),
        ),
        (
            "co taba turn it down please",
            F("turn it down please"),
            F("turn it down please"),
            F("turn it down please"),
        ),
        (
            "¿Qué hora es, Kotoba?",
            F("¿Qué hora es?"),
            F("¿Qué hora es?"),
            F("¿Qué hora es?"),
        ),
        ("Thanks Kotoba", F("Thanks"), F("Thanks"), F("Thanks")),
        ("Do you think Kotoba likes it", Same, Same, Same),
        (
            "I told Kotoba yesterday that the build broke and nobody fixed it",
            Same,
            I,
            Same,
        ),
        (
            "Yeah I really think that Katoba is pretty cool honestly",
            Same,
            I,
            Same,
        ),
        (
            "Okay that's done. Kotoba, what's next on the list for today?",
            Same,
            Same,
            Same,
        ),
        (
            "We fixed it. Then I asked Kotoba about the other failing test again.",
            Same,
            I,
            Same,
        ),
        ("Kevin, what's the weather?", Same, I, Same),
        ("Tobias said the train is late again today", Same, I, Same),
        (
            "Kyoto was beautiful this spring, we walked for hours",
            Same,
            I,
            Same,
        ),
        (
            "Kotlin is nicer than Java for this kind of work",
            Same,
            I,
            Same,
        ),
        ("Tuba practice is at five", Same, I, Same),
        ("Let's get lunch", Same, I, Same),
        ("Kotoba", N, N, N),
        ("Kotoba?", N, N, N),
        ("Hey Kotoba!", N, N, N),
        ("ok, kotoba.", N, N, N),
        ("Koto ba.", N, N, N),
        ("Kotoba, Kotoba", N, N, N),
        ("", I, I, I),
        ("  ...  ", I, I, I),
        ("[BLANK_AUDIO]", I, I, I),
        ("(upbeat music)", I, I, I),
    ];
    for (heard, alone, busy, busy_window) in table {
        for humans in [1, 2, 3] {
            for window in [false, true] {
                let want = match (humans, window) {
                    (1, _) => alone,
                    (_, false) => busy,
                    (_, true) => busy_window,
                };
                assert_eq!(
                    wake(heard, &kotoba(), humans, window),
                    want.wake(heard),
                    "{heard:?} with {humans} people, window {window}"
                );
            }
        }
    }
}

#[test]
fn with_nobody_counted_every_utterance_is_for_her() {
    assert_eq!(
        wake("what time is it", &kotoba(), 0, false),
        Wake::ForHer("what time is it".into())
    );
}

#[test]
fn the_allowed_misspelling_grows_with_the_length_of_the_name() {
    let table: &[(&str, &str, bool)] = &[
        ("kotoba", "Kotoba", true),
        ("Katoba", "Kotoba", true),
        ("kotobaa", "Kotoba", true),
        ("toba", "Kotoba", true),
        ("cotaba", "Kotoba", true),
        ("katobah", "Kotoba", true),
        ("kaatobah", "Kotoba", false),
        ("ba", "Kotoba", false),
        ("tuba", "Kotoba", false),
        ("mirai", "Mirai", true),
        ("mira", "Mirai", true),
        ("mirae", "Mirai", true),
        ("miria", "Mirai", false),
        ("nova", "Nova", true),
        ("noba", "Nova", true),
        ("novak", "Nova", true),
        ("nab", "Nova", false),
        ("kai", "Kai", true),
        ("KÁI", "Kai", true),
        ("kay", "Kai", false),
        ("ka", "Kai", false),
        ("big bob", "Big Bob", true),
        ("bigbob", "Big Bob", true),
        ("big rob", "Big Bob", true),
        ("Big-Bob!", "Big Bob", true),
        ("", "Kotoba", false),
        ("kotoba", "", false),
    ];
    for (heard, name, want) in table {
        assert_eq!(name_matches(heard, name), *want, "{heard:?} for {name:?}");
    }
}

#[test]
fn two_heard_words_join_to_form_her_name_without_swallowing_a_neighbour() {
    let busy = |heard: &str| wake(heard, &kotoba(), 3, false);
    assert_eq!(busy("koto ba what's up"), Wake::ForHer("what's up".into()));
    assert_eq!(
        busy("Co taba, lights off"),
        Wake::ForHer("lights off".into())
    );
    assert_eq!(
        busy("what's the plan, koto ba?"),
        Wake::ForHer("what's the plan?".into())
    );
    assert_eq!(busy("es kotoba"), Wake::ForHer("es".into()));
}

#[test]
fn her_name_alone_asks_for_an_acknowledgement_in_any_room() {
    for humans in [0, 1, 2, 5] {
        for heard in ["Kotoba.", "hey hey Kotoba", "Kotoba...?", "Um, Kotoba"] {
            assert_eq!(
                wake(heard, &kotoba(), humans, false),
                Wake::NameOnly,
                "{heard}"
            );
        }
    }
    assert!(ACKNOWLEDGEMENTS.len() >= 3);
    for line in ACKNOWLEDGEMENTS {
        assert_eq!(crate::speech::filter::spoken(line), *line);
        assert!(line.split_whitespace().count() <= 3, "{line}");
    }
    assert_eq!(WAKE_WINDOW, Duration::from_secs(8));
}

#[test]
fn aliases_usernames_and_multi_word_names_wake_her_too() {
    let names = Names::new(&[
        "Kotoba".to_string(),
        "kotoba_bot".to_string(),
        "Koko".to_string(),
        "Miss Kotoba".to_string(),
        "  ".to_string(),
        "KOTOBA".to_string(),
    ]);
    let busy = |heard: &str| wake(heard, &names, 2, false);
    assert_eq!(busy("Koko, lights off"), Wake::ForHer("lights off".into()));
    assert_eq!(
        busy("kotoba bot what's up"),
        Wake::ForHer("what's up".into())
    );
    assert_eq!(
        busy("Miss Kotoba, a question"),
        Wake::ForHer("a question".into())
    );
    assert_eq!(busy("Koko"), Wake::NameOnly);
    assert_eq!(
        busy("the coconut cake we had last weekend was great"),
        Wake::Ignore
    );
    assert!(Names::new(&[" ".to_string(), "!".to_string()]).is_empty());
    assert!(!names.is_empty());
}

#[test]
fn with_no_names_only_a_quiet_room_or_the_window_reaches_her() {
    let none = Names::new(&[]);
    assert_eq!(wake("Kotoba, hi", &none, 2, false), Wake::Ignore);
    assert_eq!(
        wake("Kotoba, hi", &none, 2, true),
        Wake::ForHer("Kotoba, hi".into())
    );
    assert_eq!(
        wake("Kotoba, hi", &none, 1, false),
        Wake::ForHer("Kotoba, hi".into())
    );
}
