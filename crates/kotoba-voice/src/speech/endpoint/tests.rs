//! The endpointer's rules on real audio (espeak-ng phrases, silence, noise), frame by
//! frame in audio time.

use super::*;
use crate::speech::test_audio::{espeak, frames, noise, silence};
use crate::speech::vad::detector;

/// Every event with the frame index it came on.
fn feed(ep: &mut Endpointer, pcm: &[i16]) -> Vec<(u64, Heard)> {
    frames(pcm)
        .iter()
        .filter_map(|f| {
            let at = ep.now();
            ep.push(f).map(|h| (at, h))
        })
        .collect()
}

fn endpointer() -> Endpointer {
    Endpointer::new(EndpointSettings::default(), detector())
}

fn committed(events: &[(u64, Heard)]) -> Vec<Utterance> {
    events
        .iter()
        .filter_map(|(_, h)| match h {
            Heard::Committed(u) => Some(u.clone()),
            _ => None,
        })
        .collect()
}

fn starts(events: &[(u64, Heard)]) -> Vec<u64> {
    events
        .iter()
        .filter(|(_, h)| *h == Heard::Started)
        .map(|(at, _)| *at)
        .collect()
}

/// The first and last frames of `pcm` that carry sound (a peak above `level`).
fn sound_span(pcm: &[i16], level: u16) -> (u64, u64) {
    let loud: Vec<bool> = frames(pcm)
        .iter()
        .map(|f| f.iter().any(|s| s.unsigned_abs() > level))
        .collect();
    let first = loud.iter().position(|&l| l).unwrap_or(0) as u64;
    let last = loud.iter().rposition(|&l| l).unwrap_or(0) as u64;
    (first, last)
}

fn mix(a: &[i16], b: &[i16]) -> Vec<i16> {
    a.iter().zip(b).map(|(x, y)| x.saturating_add(*y)).collect()
}

fn near(got: u64, want: u64, slack: u64, what: &str) {
    assert!(
        got.abs_diff(want) <= slack,
        "{what}: frame {got}, expected {want} ± {slack}"
    );
}

const SENTENCE: &str = "Hello there, what time is it in Tokyo right now?";

#[test]
fn a_phrase_commits_after_one_second_of_silence() {
    let pcm = [silence(0.5), espeak(SENTENCE), silence(3.0)].concat();
    let (first, last) = sound_span(&pcm, 0);
    let events = feed(&mut endpointer(), &pcm);
    let utterances = committed(&events);
    assert_eq!(utterances.len(), 1, "{events:?}");
    let u = &utterances[0];
    near(u.ended_at, last + 50, 2, "commit");
    near(u.started_at, first, 2, "onset");
    let speech_frames = (u.speech.as_millis() / 20) as u64;
    near(speech_frames, last - first + 1, 3, "speech length");
    // Pre-roll (10 frames), the speech, and a 200 ms tail.
    let frames_kept = (u.pcm.len() / HEAR_FRAME) as u64;
    near(frames_kept, speech_frames + 20, 1, "kept audio");
    assert_eq!(starts(&events).len(), 1);
}

#[test]
fn a_phrase_in_noise_commits_after_one_second_of_noise() {
    let phrase = espeak(SENTENCE);
    let pcm = [
        noise(0.6, 300, 1),
        mix(&phrase, &noise(9.0, 300, 2)),
        noise(3.0, 300, 3),
    ]
    .concat();
    let first = 30;
    let (_, phrase_last) = sound_span(&phrase, 0);
    let last = first + phrase_last;
    let events = feed(&mut endpointer(), &pcm);
    let utterances = committed(&events);
    assert_eq!(utterances.len(), 1, "{events:?}");
    near(utterances[0].ended_at, last + 50, 2, "commit");
    near(utterances[0].started_at, first, 3, "onset");
}

#[test]
fn speech_onset_is_confirmed_within_three_frames() {
    for text in ["No, wait!", "Okay, listen", "Manami, hold on", "yes please"] {
        let pcm = [silence(0.4), espeak(text), silence(2.5)].concat();
        let (first, _) = sound_span(&pcm, 0);
        let events = feed(&mut endpointer(), &pcm);
        let started = starts(&events);
        assert_eq!(started.len(), 1, "{text:?}: {events:?}");
        assert!(
            started[0] >= first && started[0] < first + 3,
            "{text:?}: started on frame {}, sound from frame {first}",
            started[0]
        );
    }
}

#[test]
fn an_unvoiced_lead_in_counts_as_speech_from_its_first_frame() {
    // The "s" of "stop" is confirmed with the vowel after it, and the utterance
    // (and its length) still begins at the "s", so "stop" is not dropped as short.
    for text in ["Stop, stop!", "stop"] {
        let pcm = [silence(0.4), espeak(text), silence(2.5)].concat();
        let (first, last) = sound_span(&pcm, 0);
        let events = feed(&mut endpointer(), &pcm);
        let started = starts(&events);
        assert_eq!(started.len(), 1, "{text:?}: {events:?}");
        assert!(
            started[0] < first + 7,
            "{text:?}: started on frame {}",
            started[0]
        );
        let u = committed(&events);
        assert_eq!(u.len(), 1, "{text:?}: {events:?}");
        near(u[0].started_at, first, 1, "onset");
        near(
            (u[0].speech.as_millis() / 20) as u64,
            last - first + 1,
            2,
            "length",
        );
    }
}

#[test]
fn a_short_phrase_commits_after_two_seconds_of_silence() {
    // espeak's bare "yes" is 0.34 s of sound, under the 0.35 s minimum.
    let phrase = espeak("yes please");
    let pcm = [silence(0.5), phrase, silence(4.0)].concat();
    let (_, last) = sound_span(&pcm, 0);
    let events = feed(&mut endpointer(), &pcm);
    let utterances = committed(&events);
    assert_eq!(utterances.len(), 1, "{events:?}");
    let u = &utterances[0];
    assert!(u.speech < Duration::from_millis(1200), "{:?}", u.speech);
    near(u.ended_at, last + 100, 2, "commit");
}

#[test]
fn a_cough_shorter_than_the_minimum_commits_nothing() {
    let mut syllable: Vec<i16> = espeak("pah")
        .iter()
        .map(|&s| (i32::from(s) * 8).clamp(-32_768, 32_767) as i16)
        .collect();
    let (first, _) = sound_span(&syllable, 0);
    syllable.drain(..first as usize * HEAR_FRAME);
    syllable.truncate(3200);
    let pcm = [
        silence(0.5),
        noise(0.2, 12_000, 4),
        silence(2.5),
        syllable,
        silence(2.5),
    ]
    .concat();
    let mut ep = endpointer();
    let events = feed(&mut ep, &pcm);
    assert!(committed(&events).is_empty(), "{events:?}");
    // Whatever started was dropped.
    let dropped = events.iter().filter(|(_, h)| *h == Heard::Dropped).count();
    assert_eq!(starts(&events).len(), dropped, "{events:?}");
    assert!(!ep.in_speech());
}

#[test]
fn two_speakers_fed_interleaved_are_kept_apart() {
    let long = espeak(SENTENCE);
    let short = espeak("Sounds good to me");
    // Bob starts 0.8 s after Alice; each sends nothing while silent.
    let alice = [silence(0.2), long.clone()].concat();
    let bob = [silence(1.0), short.clone()].concat();
    let (alice_frames, bob_frames) = (frames(&alice), frames(&bob));
    let mut a = endpointer();
    let mut b = endpointer();
    let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
    for tick in 0..alice_frames.len().max(bob_frames.len()) + 200 {
        let at = tick as u64;
        let heard_a = match alice_frames.get(tick) {
            Some(f) => a.push(f),
            None => a.silence(),
        };
        let heard_b = match bob_frames.get(tick) {
            Some(f) => b.push(f),
            None => b.silence(),
        };
        got_a.extend(heard_a.map(|h| (at, h)));
        got_b.extend(heard_b.map(|h| (at, h)));
    }
    let (ua, ub) = (committed(&got_a), committed(&got_b));
    assert_eq!((ua.len(), ub.len()), (1, 1), "{got_a:?} {got_b:?}");
    let (a_first, a_last) = sound_span(&alice, 0);
    let (b_first, b_last) = sound_span(&bob, 0);
    near(ua[0].started_at, a_first, 2, "Alice's onset");
    near(ub[0].started_at, b_first, 2, "Bob's onset");
    near(ua[0].ended_at, a_last + 50, 2, "Alice's commit");
    let b_wait = if ub[0].speech < Duration::from_millis(1200) {
        100
    } else {
        50
    };
    near(ub[0].ended_at, b_last + b_wait, 2, "Bob's commit");
    near(
        (ua[0].speech.as_millis() / 20) as u64,
        a_last - a_first + 1,
        3,
        "Alice's length",
    );
    near(
        (ub[0].speech.as_millis() / 20) as u64,
        b_last - b_first + 1,
        3,
        "Bob's length",
    );
}

#[test]
fn a_short_pause_mid_sentence_keeps_one_utterance() {
    let first = espeak("I was thinking about the weather");
    let second = espeak("and whether it will rain tomorrow");
    let pcm = [
        silence(0.3),
        first.clone(),
        silence(0.6),
        second,
        silence(3.0),
    ]
    .concat();
    let (start, last) = sound_span(&pcm, 0);
    let events = feed(&mut endpointer(), &pcm);
    assert_eq!(starts(&events).len(), 1, "{events:?}");
    let utterances = committed(&events);
    assert_eq!(utterances.len(), 1, "{events:?}");
    near(utterances[0].started_at, start, 2, "onset");
    near(utterances[0].ended_at, last + 50, 2, "commit");
}

#[test]
fn a_shorter_silence_setting_moves_the_commit() {
    let pcm = [silence(0.5), espeak(SENTENCE), silence(3.0)].concat();
    let (_, last) = sound_span(&pcm, 0);
    let settings = EndpointSettings {
        silence: Duration::from_millis(500),
        ..EndpointSettings::default()
    };
    let events = feed(&mut Endpointer::new(settings, detector()), &pcm);
    let utterances = committed(&events);
    assert_eq!(utterances.len(), 1, "{events:?}");
    near(utterances[0].ended_at, last + 25, 2, "commit");

    // And a longer unsure wait moves a short phrase's commit.
    let short = [silence(0.5), espeak("yes please"), silence(4.0)].concat();
    let (_, last) = sound_span(&short, 0);
    let settings = EndpointSettings {
        unsure: Duration::from_millis(3000),
        ..EndpointSettings::default()
    };
    let events = feed(&mut Endpointer::new(settings, detector()), &short);
    let utterances = committed(&events);
    assert_eq!(utterances.len(), 1, "{events:?}");
    near(utterances[0].ended_at, last + 150, 2, "unsure commit");
}

/// A detector that hears speech in any frame with sound: the rules alone.
struct Loud;

impl VoiceDetector for Loud {
    fn is_speech(&mut self, frame: &[i16]) -> bool {
        frame.iter().any(|&s| s != 0)
    }
}

fn voiced(n: usize) -> Vec<Vec<i16>> {
    vec![vec![1000; HEAR_FRAME]; n]
}

fn run(ep: &mut Endpointer, voiced_frames: usize, silent_frames: usize) -> Vec<(u64, Heard)> {
    let mut events = Vec::new();
    for f in voiced(voiced_frames) {
        let at = ep.now();
        events.extend(ep.push(&f).map(|h| (at, h)));
    }
    for _ in 0..silent_frames {
        let at = ep.now();
        events.extend(ep.silence().map(|h| (at, h)));
    }
    events
}

#[test]
fn a_very_long_utterance_commits_at_thirty_seconds() {
    let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
    let events = run(&mut ep, 1600, 0);
    let utterances = committed(&events);
    assert_eq!(utterances.len(), 1, "{events:?}");
    assert_eq!(utterances[0].ended_at, 1499);
    assert_eq!(utterances[0].speech, MAX_UTTERANCE);
    // The talk goes on: a new utterance has started.
    assert_eq!(starts(&events), [1, 1501]);
    assert!(ep.in_speech());
}

#[test]
fn speech_just_under_the_minimum_is_dropped_and_just_over_is_kept() {
    // 0.34 s of speech: dropped after the unsure wait.
    let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
    let events = run(&mut ep, 17, 150);
    assert_eq!(events, [(1, Heard::Started), (16 + 100, Heard::Dropped)]);
    // 0.36 s: committed.
    let events = run(&mut ep, 18, 150);
    assert_eq!(committed(&events).len(), 1, "{events:?}");
}

#[test]
fn speech_longer_than_short_speech_waits_only_the_silence() {
    let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
    let events = run(&mut ep, 60, 120);
    let u = committed(&events);
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].ended_at, 59 + 50);
    let events = run(&mut ep, 59, 120);
    let u = committed(&events);
    assert_eq!(u[0].ended_at, u[0].started_at + 58 + 100);
}

#[test]
fn the_utterance_keeps_200ms_before_and_200ms_after_the_speech() {
    let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
    let mut events = Vec::new();
    for _ in 0..30 {
        events.extend(ep.silence());
    }
    let mut marked = voiced(70);
    marked[0][0] = 7;
    for f in &marked {
        events.extend(ep.push(f));
    }
    for _ in 0..60 {
        events.extend(ep.silence());
    }
    let Some(Heard::Committed(u)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(u.pcm.len(), (10 + 70 + 10) * HEAR_FRAME);
    assert_eq!(u.pcm[10 * HEAR_FRAME], 7);
    assert_eq!((u.started_at, u.ended_at), (30, 30 + 69 + 50));
    assert_eq!(u.speech, Duration::from_millis(1400));
}

#[test]
fn new_settings_apply_to_the_utterance_being_heard() {
    let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
    let events = run(&mut ep, 80, 10);
    assert_eq!(starts(&events), [1]);
    ep.set_settings(EndpointSettings {
        silence: Duration::from_millis(300),
        ..EndpointSettings::default()
    });
    let events = run(&mut ep, 0, 10);
    let u = committed(&events);
    assert_eq!(u.len(), 1, "{events:?}");
    assert_eq!(u[0].ended_at, 79 + 15);
}

#[test]
fn a_reset_forgets_the_utterance_but_not_the_clock() {
    let mut ep = Endpointer::new(EndpointSettings::default(), Box::new(Loud));
    run(&mut ep, 40, 0);
    assert!(ep.in_speech());
    ep.reset();
    assert!(!ep.in_speech());
    assert_eq!(ep.now(), 40);
    assert!(committed(&run(&mut ep, 0, 200)).is_empty());
    assert_eq!(ep.now(), 240);
}

#[test]
fn settings_come_from_the_voice_settings() {
    let v = VoiceSettings {
        silence_commit: 0.5,
        unsure_commit: 1.5,
        min_speech: 0.2,
        ..VoiceSettings::default()
    };
    let s = EndpointSettings::from_voice(&v);
    assert_eq!(s.silence, Duration::from_millis(500));
    assert_eq!(s.unsure, Duration::from_millis(1500));
    assert_eq!(s.min_speech, Duration::from_millis(200));
    assert_eq!(s.short_speech, Duration::from_millis(1200));
    assert_eq!(
        EndpointSettings::from_voice(&VoiceSettings::default()),
        EndpointSettings::default()
    );
    let bad = VoiceSettings {
        silence_commit: -1.0,
        unsure_commit: f64::NAN,
        ..VoiceSettings::default()
    };
    assert_eq!(
        EndpointSettings::from_voice(&bad),
        EndpointSettings::default()
    );
}

#[test]
fn a_trailing_word_at_the_end_makes_it_unsure() {
    assert!(ends_unsure("I went to the store and"));
    assert!(ends_unsure("so I was thinking, um..."));
    assert!(ends_unsure("Because AND,"));
    assert!(ends_unsure("call my mom but"));
    assert!(!ends_unsure("What time is it?"));
    assert!(!ends_unsure("and that's all"));
    assert!(!ends_unsure(""));
    assert!(!ends_unsure("... !"));
}

#[test]
fn a_request_is_complete_when_it_ends_a_sentence_on_a_word_that_does_not_leave_it_open() {
    let table = [
        ("What time is it?", true),
        ("Book a table for two.", true),
        ("Stop!", true),
        ("what time is it", false), // no end: never complete
        ("I want to...", false),
        ("I want to…", false),
        ("Book a table and.", false), // a trailing word
        ("What about?", false),       // a word that leaves it open
        ("I want to.", false),
        ("Can you, um?", false),
        ("", false),
        ("?", false),
    ];
    for (text, complete) in table {
        assert_eq!(is_complete(text), complete, "{text:?}");
    }
}

#[test]
fn a_short_pause_says_paused_once_with_the_audio_so_far_and_the_utterance_stays_open() {
    let pcm = [silence(0.5), espeak(SENTENCE), silence(3.0)].concat();
    let (_, last) = sound_span(&pcm, 0);
    let mut ep = endpointer();
    let events = feed(&mut ep, &pcm);
    let paused: Vec<(u64, Utterance)> = events
        .iter()
        .filter_map(|(at, h)| match h {
            Heard::Paused(u) => Some((*at, u.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(paused.len(), 1, "{events:?}");
    let (at, so_far) = &paused[0];
    near(*at, last + 10, 2, "paused at 200 ms");
    let done = committed(&events);
    assert_eq!(done.len(), 1);
    // The audio at the pause is what the commit has: nothing was said after it.
    assert_eq!(so_far.pcm, done[0].pcm);
    assert_eq!(so_far.last_voiced(), done[0].last_voiced());
    near(
        done[0].ended_at,
        last + 50,
        2,
        "the full wait without a verdict",
    );
}

#[test]
fn complete_words_at_the_pause_commit_at_the_early_wait_unless_they_spoke_again() {
    let pcm = [silence(0.5), espeak(SENTENCE), silence(3.0)].concat();
    let (_, last) = sound_span(&pcm, 0);
    let mut ep = endpointer();
    let mut commit = None;
    for f in frames(&pcm) {
        let at = ep.now();
        match ep.push(&f) {
            Some(Heard::Paused(u)) => ep.complete_at(u.last_voiced()),
            Some(Heard::Committed(_)) => commit = Some(at),
            _ => {}
        }
    }
    near(commit.expect("committed"), last + 30, 2, "at 600 ms");

    // A verdict for an older pause changes nothing once they spoke again.
    let mut ep = endpointer();
    let two = [
        silence(0.5),
        espeak("I want to"),
        silence(0.5),
        espeak("book a table"),
        silence(3.0),
    ]
    .concat();
    let mut first_pause = None;
    let mut applied = false;
    let mut commits = Vec::new();
    for f in frames(&two) {
        let at = ep.now();
        match ep.push(&f) {
            Some(Heard::Paused(u)) => {
                first_pause.get_or_insert(u.last_voiced());
            }
            Some(Heard::Committed(u)) => commits.push((at, u)),
            _ => {}
        }
        // The verdict on the first pause arrives once they are speaking again.
        if let Some(lv) = first_pause {
            if !applied && ep.last_voiced().is_some_and(|v| v != lv) {
                ep.complete_at(lv);
                applied = true;
            }
        }
    }
    assert!(applied, "the late verdict was given");
    assert_eq!(commits.len(), 1, "one utterance");
    let (_, last) = sound_span(&two, 0);
    assert!(commits[0].0 >= last + 48, "the full wait: {}", commits[0].0);
}

#[test]
fn no_early_pause_setting_never_says_paused() {
    let settings = EndpointSettings {
        early_pause: Duration::ZERO,
        ..EndpointSettings::default()
    };
    let pcm = [silence(0.5), espeak(SENTENCE), silence(3.0)].concat();
    let events = feed(&mut Endpointer::new(settings, detector()), &pcm);
    assert!(!events.iter().any(|(_, h)| matches!(h, Heard::Paused(_))));
}

#[test]
fn the_audio_heard_so_far_is_what_the_commit_gives_and_a_pause_adds_nothing_to_it() {
    let mut ep = endpointer();
    let spoken = [silence(0.5), espeak("what time is it"), silence(2.5)].concat();
    let mut at_pause = None;
    let mut whole = None;
    for f in frames(&spoken) {
        match ep.push(&f) {
            Some(Heard::Paused(u)) => at_pause = Some((u.pcm, ep.heard().to_vec())),
            Some(Heard::Committed(u)) => whole = Some(u.pcm),
            _ => {}
        }
        if ep.quiet_for() > Duration::from_millis(800) {
            assert_eq!(
                ep.heard().len(),
                at_pause.as_ref().unwrap().1.len(),
                "silence past the tail adds nothing"
            );
        }
    }
    let (so_far, heard) = at_pause.expect("it paused");
    assert_eq!(heard, so_far, "at the pause: the audio so far");
    assert_eq!(whole.expect("it committed"), so_far, "nothing said since");
    assert!(ep.heard().is_empty(), "nothing open after the commit");
}

#[test]
fn an_utterance_told_to_pause_sooner_pauses_at_that_quiet_once_but_never_when_pauses_are_off() {
    // No comma: its only quiet longer than 60 ms is after it.
    let pcm = [
        silence(0.5),
        espeak("what time is it in Tokyo"),
        silence(3.0),
    ]
    .concat();
    let (_, last) = sound_span(&pcm, 0);
    let run = |settings: EndpointSettings| {
        let mut ep = Endpointer::new(settings, detector());
        let mut paused = Vec::new();
        for f in frames(&pcm) {
            let at = ep.now();
            match ep.push(&f) {
                Some(Heard::Started) => ep.pause_sooner(Duration::from_millis(100)),
                Some(Heard::Paused(u)) => paused.push((at, u)),
                _ => {}
            }
        }
        paused
    };
    let paused = run(EndpointSettings::default());
    assert_eq!(paused.len(), 1, "once per pause");
    assert_eq!(
        paused[0].0 - paused[0].1.last_voiced(),
        5,
        "at 100 ms, not 200 ms"
    );
    near(paused[0].0, last + 5, 2, "after the speech");
    // Sooner only: a setting shorter still wins; pauses off stay off.
    let paused = run(EndpointSettings {
        early_pause: Duration::from_millis(60),
        ..EndpointSettings::default()
    });
    assert_eq!(
        paused[0].0 - paused[0].1.last_voiced(),
        3,
        "the setting's 60 ms"
    );
    assert!(run(EndpointSettings {
        early_pause: Duration::ZERO,
        ..EndpointSettings::default()
    })
    .is_empty());
}
