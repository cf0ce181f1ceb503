//! Tests of the playback queue and its reader (a fake player stands in for songbird).

use std::sync::Mutex as StdMutex;

use symphonia::core::audio::SampleBuffer;

use super::*;

/// Records the readers it was asked to play and how often it was stopped.
#[derive(Default)]
struct FakePlayer {
    readers: StdMutex<Vec<(QueueReader, Ended)>>,
    stops: AtomicU64,
}

impl Player for FakePlayer {
    fn play(&self, reader: QueueReader, ended: Ended) {
        self.readers.lock().unwrap().push((reader, ended));
    }

    fn stop(&self) {
        self.stops.fetch_add(1, Ordering::SeqCst);
    }
}

impl FakePlayer {
    fn started(&self) -> usize {
        self.readers.lock().unwrap().len()
    }

    fn take(&self, i: usize) -> QueueReader {
        let mut readers = self.readers.lock().unwrap();
        let (r, _) = &mut readers[i];
        QueueReader {
            queue: r.queue.clone(),
            generation: r.generation,
            pending: std::mem::take(&mut r.pending),
            at: r.at,
        }
    }
}

fn out() -> (SongbirdOut, Arc<FakePlayer>) {
    let player = Arc::new(FakePlayer::default());
    (SongbirdOut::with_player(player.clone()), player)
}

/// A frame whose samples say which frame and which sample they are.
fn frame(n: usize) -> Vec<f32> {
    (0..PLAY_FRAME)
        .map(|i| n as f32 + i as f32 / PLAY_FRAME as f32)
        .collect()
}

/// Read `frames` frames' worth of bytes with odd-sized reads, as f32.
fn read_samples(r: &mut QueueReader, frames: usize) -> Vec<f32> {
    let mut bytes = Vec::new();
    let sizes = [1000usize, 7, 4096, 333, 8];
    let mut k = 0;
    while bytes.len() < frames * FRAME_BYTES {
        let want = sizes[k % sizes.len()].min(frames * FRAME_BYTES - bytes.len());
        k += 1;
        let mut buf = vec![0u8; want];
        let n = r.read(&mut buf).unwrap();
        assert!(n > 0, "the reader ended early");
        bytes.extend_from_slice(&buf[..n]);
    }
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn the_bytes_read_back_are_exactly_the_frames_queued_in_order() {
    let (out, player) = out();
    for n in 0..3 {
        out.frame(&frame(n));
    }
    assert_eq!(player.started(), 1, "one track for a run of frames");
    let mut r = player.take(0);
    let got = read_samples(&mut r, 3);
    let want: Vec<f32> = (0..3).flat_map(frame).collect();
    assert_eq!(got, want);
    assert_eq!(out.queued(), 0);
}

#[test]
fn reads_never_wait_an_empty_queue_reads_as_silence() {
    let (out, player) = out();
    out.frame(&frame(1));
    let mut r = player.take(0);
    assert_eq!(read_samples(&mut r, 1), frame(1));
    assert!(read_samples(&mut r, 2).iter().all(|&s| s == 0.0));
    // A frame arriving while the track plays silence is played next, by the same track.
    out.frame(&frame(2));
    assert_eq!(read_samples(&mut r, 1), frame(2));
    assert_eq!(player.started(), 1);
}

#[test]
fn the_track_ends_after_a_second_of_nothing_and_the_next_frame_starts_a_new_one() {
    let (out, player) = out();
    out.frame(&frame(1));
    let mut r = player.take(0);
    read_samples(&mut r, 1);
    let silence = read_samples(&mut r, IDLE_END as usize);
    assert!(silence.iter().all(|&s| s == 0.0));
    assert_eq!(IDLE_END as usize * 20, 1000, "the idle time is one second");
    assert_eq!(r.read(&mut [0u8; 64]).unwrap(), 0, "end of the track");
    assert!(!out.is_live());
    out.frame(&frame(2));
    assert_eq!(player.started(), 2);
    let mut r2 = player.take(1);
    assert_eq!(read_samples(&mut r2, 1), frame(2));
    // The old reader stays ended.
    assert_eq!(r.read(&mut [0u8; 64]).unwrap(), 0);
}

#[test]
fn stop_empties_the_queue_and_stops_the_track_at_once() {
    let (out, player) = out();
    for n in 0..5 {
        out.frame(&frame(n));
    }
    let mut r = player.take(0);
    read_samples(&mut r, 1);
    out.stop();
    assert_eq!(out.queued(), 0);
    assert_eq!(player.stops.load(Ordering::SeqCst), 1);
    assert!(!out.is_live());
    // What the old track had half-read is all it gets; then it ends.
    assert_eq!(r.read(&mut [0u8; 64]).unwrap(), 0);
    // The next frame starts a new track that plays only what came after the stop.
    out.frame(&frame(9));
    assert_eq!(player.started(), 2);
    let mut r2 = player.take(1);
    assert_eq!(read_samples(&mut r2, 1), frame(9));
    assert!(read_samples(&mut r2, 1).iter().all(|&s| s == 0.0));
}

#[test]
fn a_track_that_ends_by_itself_lets_the_next_frame_start_another() {
    let (out, player) = out();
    out.frame(&frame(1));
    let ended = player.readers.lock().unwrap()[0].1.clone();
    ended.now();
    assert!(!out.is_live());
    out.frame(&frame(2));
    assert_eq!(player.started(), 2);
    // Frames queued before the end are not lost: the new track plays them first.
    let mut r2 = player.take(1);
    assert_eq!(read_samples(&mut r2, 2), [frame(1), frame(2)].concat());
}

#[test]
fn a_full_queue_drops_frames_and_counts_them() {
    let (out, _player) = out();
    let f = frame(0);
    for _ in 0..MAX_QUEUED + 3 {
        out.frame(&f);
    }
    assert_eq!(out.queued(), MAX_QUEUED);
    assert_eq!(out.dropped(), 3);
}

#[tokio::test]
async fn songbird_decodes_the_reader_to_exactly_the_frames_queued() {
    use songbird::input::codecs::{get_codec_registry, get_probe};
    use songbird::input::LiveInput;

    let (out, player) = out();
    for n in 0..4 {
        out.frame(&frame(n));
    }
    let reader = player.take(0);
    let input = Input::from(RawAdapter::new(reader, PLAY_RATE, 2));
    let rt = tokio::runtime::Handle::current();
    let parsed = tokio::task::spawn_blocking(move || {
        input.make_playable(get_codec_registry(), get_probe(), &rt)
    })
    .await
    .unwrap()
    .unwrap();
    let Input::Live(LiveInput::Parsed(mut p), _) = parsed else {
        panic!("not parsed")
    };
    let mut got: Vec<f32> = Vec::new();
    while let Ok(packet) = p.format.next_packet() {
        let decoded = p.decoder.decode(&packet).unwrap();
        assert_eq!(decoded.spec().rate, PLAY_RATE);
        assert_eq!(decoded.spec().channels.count(), 2);
        let mut buf = SampleBuffer::<f32>::new(decoded.capacity() as u64, *decoded.spec());
        buf.copy_interleaved_ref(decoded);
        got.extend_from_slice(buf.samples());
    }
    let (played, rest) = got.split_at(4 * PLAY_FRAME);
    assert_eq!(played, &(0..4).flat_map(frame).collect::<Vec<_>>()[..]);
    // Then a second of silence, then the end of the track.
    assert_eq!(rest.len(), IDLE_END as usize * PLAY_FRAME);
    assert!(rest.iter().all(|&s| s == 0.0));
}

#[test]
fn her_voice_reaches_songbird_already_parsed_so_no_tick_goes_to_parsing_it() {
    use songbird::input::LiveInput;

    let (out, player) = out();
    out.frame(&frame(0));
    let input = playable(player.take(0)).expect("a playable input");
    assert!(
        input.is_playable(),
        "parsed before it is handed over: songbird mixes it in the tick that takes it"
    );
    let Input::Live(LiveInput::Parsed(mut p), _) = input else {
        panic!("not parsed")
    };
    // Reading the header took nothing from her voice: what plays first is her frame.
    let mut got: Vec<f32> = Vec::new();
    while got.len() < PLAY_FRAME {
        let packet = p.format.next_packet().unwrap();
        let decoded = p.decoder.decode(&packet).unwrap();
        let mut buf = SampleBuffer::<f32>::new(decoded.capacity() as u64, *decoded.spec());
        buf.copy_interleaved_ref(decoded);
        got.extend_from_slice(buf.samples());
    }
    assert_eq!(&got[..PLAY_FRAME], &frame(0)[..]);
}
