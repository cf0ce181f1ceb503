//! A pause while she talks: someone she serves began to speak over her, heard either
//! as their packets arrived (a hint, ahead of songbird's playout buffer) or as their
//! speech started at the room's ticks. It ends as a barge-in once their speech reaches
//! `min_speech`, or as nothing (a cough, a click, a hint no speech followed) and she
//! goes on where she paused.

use std::time::Duration;

use crate::speech::endpoint::Endpointer;

/// A pause that stays this quiet before reaching `min_speech` was a cough.
pub(super) const COUGH_QUIET: Duration = Duration::from_millis(300);
/// How long (in 20 ms frames of the person's audio) a pause begun on an arriving
/// packet waits for the ticks to start speech: songbird's playout buffer (40 ms), the
/// two voiced frames that start speech (40 ms) and slack — 200 ms.
pub(super) const ARRIVAL_WAIT_FRAMES: u64 = 10;

/// One pause, for one person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pause {
    /// Whose speech paused her.
    pub user: u64,
    /// The ticks have started their speech (not only a packet's hint).
    started: bool,
    /// The person's frame clock when the pause began.
    at_frame: u64,
}

/// What a pause comes to, judged at each tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Not known yet: she stays quiet.
    Wait,
    /// Their speech reached `min_speech`: cut her turn.
    BargeIn,
    /// Nothing came of it: she goes on where she paused.
    Resume,
}

impl Pause {
    /// A voiced packet from `user` arrived; `now_frame` is their ear's frame clock.
    pub(super) fn on_arrival(user: u64, now_frame: u64) -> Pause {
        Pause {
            user,
            started: false,
            at_frame: now_frame,
        }
    }

    /// The ticks started `user`'s speech.
    pub(super) fn on_speech(user: u64, now_frame: u64) -> Pause {
        Pause {
            user,
            started: true,
            at_frame: now_frame,
        }
    }

    /// The ticks started this person's speech (a hint's pause goes on as a speech one).
    pub(super) fn speech_started(&mut self) {
        self.started = true;
    }

    /// Judge the pause by the person's ear.
    pub(super) fn judge(&mut self, ear: &Endpointer, min_speech: Duration) -> Verdict {
        if !self.started {
            if ear.in_speech() {
                self.started = true;
            } else if ear.now() >= self.at_frame + ARRIVAL_WAIT_FRAMES {
                return Verdict::Resume;
            } else {
                return Verdict::Wait;
            }
        }
        if ear.speech_so_far() >= min_speech {
            Verdict::BargeIn
        } else if !ear.in_speech() || ear.quiet_for() >= COUGH_QUIET {
            Verdict::Resume
        } else {
            Verdict::Wait
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::speech::audio::HEAR_FRAME;
    use crate::speech::endpoint::EndpointSettings;
    use crate::speech::vad::VoiceDetector;

    /// A detector that says what it is told, frame by frame (then silence).
    struct Script(VecDeque<bool>);

    impl VoiceDetector for Script {
        fn is_speech(&mut self, _frame: &[i16]) -> bool {
            self.0.pop_front().unwrap_or(false)
        }
    }

    /// Feed `voiced` (one bool per frame) to a fresh ear, judging a pause begun on an
    /// arrival at frame 0 after every frame; the first verdict that is not Wait, with
    /// the frame it came on.
    fn run(voiced: &[bool]) -> Option<(usize, Verdict)> {
        let settings = EndpointSettings::default();
        let mut ear = Endpointer::new(settings, Box::new(Script(voiced.iter().copied().collect())));
        let mut pause = Pause::on_arrival(1, ear.now());
        let frame = vec![0i16; HEAR_FRAME];
        for i in 0..voiced.len() + 40 {
            ear.push(&frame);
            match pause.judge(&ear, settings.min_speech) {
                Verdict::Wait => {}
                v => return Some((i, v)),
            }
        }
        None
    }

    #[test]
    fn a_pause_on_an_arriving_packet_becomes_a_barge_in_once_speech_reaches_min_speech() {
        // 18 voiced frames = 360 ms ≥ 350 ms; speech starts at the 2nd frame.
        let (at, v) = run(&[true; 30]).unwrap();
        assert_eq!(v, Verdict::BargeIn);
        assert_eq!(at, 17, "at min_speech");
    }

    #[test]
    fn a_pause_on_an_arriving_packet_no_speech_followed_resumes_after_200_ms() {
        assert_eq!(
            run(&[false; 30]),
            Some((ARRIVAL_WAIT_FRAMES as usize - 1, Verdict::Resume))
        );
        // One voiced frame is no speech either.
        assert_eq!(
            run(&[true]),
            Some((ARRIVAL_WAIT_FRAMES as usize - 1, Verdict::Resume))
        );
    }

    #[test]
    fn a_pause_on_an_arriving_packet_then_a_cough_resumes_when_quiet() {
        // 5 voiced frames (100 ms) then quiet: speech started, too short, over.
        let mut script = vec![true; 5];
        script.extend([false; 40]);
        let (at, v) = run(&script).unwrap();
        assert_eq!(v, Verdict::Resume);
        assert!(at >= 5 + 14, "after 300 ms of quiet: {at}");
    }

    #[test]
    fn a_pause_begun_on_speech_judges_as_before() {
        let settings = EndpointSettings::default();
        let mut ear = Endpointer::new(settings, Box::new(Script(vec![true; 30].into())));
        let frame = vec![0i16; HEAR_FRAME];
        ear.push(&frame);
        ear.push(&frame);
        let mut pause = Pause::on_speech(1, ear.now());
        assert_eq!(pause.judge(&ear, settings.min_speech), Verdict::Wait);
        for _ in 0..16 {
            ear.push(&frame);
        }
        assert_eq!(pause.judge(&ear, settings.min_speech), Verdict::BargeIn);
    }
}
