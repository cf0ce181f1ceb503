//! Whom a turn speaks for, under load, over the loopback Discord (docs/engine.md §1):
//! many people at once in several channels and a DM, each turn waiting on a slow model
//! while others speak, and every tool call acts as the person whose line started its
//! turn — a channel read, the voice join default, a reminder and its target, a host
//! tool withheld from a guest, a server change's card and who may answer it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kotoba::engine::Answerer;
use kotoba::protocol::{Answerers, CardAnswer, Decision};
use kotoba::surfaces::discord;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use kotoba_testkit::discord::rig::rig_on;
use kotoba_testkit::discord::{
    name_of, FakeDiscord, Msg, ADMIN, BOT_ROLE, CAROL, DM, GENERAL, GUEST, GUESTS, HOME, LOUNGE,
    OTHER, OWNER, OWNER2, STUDIO, VAULT,
};
use kotoba_testkit::model_server::Reply;

/// What the private channel holds: seen in a turn's answer only when its person may
/// read the channel.
const SECRET: &str = "the vault code is 7319";

/// What one turn asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ask {
    /// discord_read_history of the private channel.
    ReadVault,
    /// discord_voice join with no channel: the asker's voice channel.
    JoinMe,
    /// cronjob create: a host tool (owners only), stored with its asker.
    Remind,
    /// discord_act: a server change whose card names the asker among who may answer.
    Act,
}

/// One scripted turn: who, where, what.
#[derive(Debug, Clone, Copy)]
struct Plan {
    person: u64,
    channel: u64,
    ask: Ask,
}

/// The turn's tag in `text` (`[t17]` → 17).
fn tag_in(text: &str) -> Option<usize> {
    let at = text.rfind("[t")?;
    text[at + 2..].split(']').next()?.parse().ok()
}

/// The model's answer to a request of the turn it carries: the tool its plan names,
/// then, once the tool's result is in, that result verbatim after the turn's tag. Each
/// reply waits a random 20–120 ms, so turns overlap and other lines arrive meanwhile.
fn responder(plans: Arc<Vec<Plan>>, seed: u64) -> kotoba_testkit::model_server::Responder {
    let rng = Arc::new(Mutex::new(rand::rngs::StdRng::seed_from_u64(seed)));
    Arc::new(move |body: &Value| {
        let messages = body["messages"].as_array()?;
        let user = messages.iter().rev().find(|m| m["role"] == "user")?;
        let text = user["content"].as_str().map(str::to_string).or_else(|| {
            user["content"]
                .as_array()
                .and_then(|parts| parts.iter().find_map(|p| p["text"].as_str()))
                .map(str::to_string)
        })?;
        let n = tag_in(&text)?;
        let plan = plans.get(n)?;
        let wait = Duration::from_millis(rng.lock().ok()?.gen_range(20..120));
        let last = messages.last()?;
        let reply = if last["role"] == "tool" {
            let out = last["content"].as_str().unwrap_or("");
            Reply::text(&format!("[t{n}] {out}"))
        } else {
            match plan.ask {
                Ask::ReadVault => Reply::call(
                    "discord_read_history",
                    json!({"channel_id": VAULT.to_string(), "limit": 3}),
                ),
                Ask::JoinMe => Reply::call("discord_voice", json!({"action": "join"})),
                Ask::Remind => Reply::call(
                    "cronjob",
                    json!({"action": "create", "text": format!("water the plants t{n}"), "in_minutes": 600}),
                ),
                Ask::Act => Reply::call(
                    "discord_act",
                    json!({"actions": [{"op": "create_channel", "target": format!("room-{n}")}]}),
                ),
            }
        };
        Some((reply, wait))
    })
}

/// Who may read the private channel: the owner let in by its overwrite, and the
/// administrator.
fn may_read_vault(person: u64) -> bool {
    person == OWNER || person == ADMIN
}

/// The configured owners (the host tools are theirs).
fn is_owner(person: u64) -> bool {
    person == OWNER || person == OWNER2
}

/// The voice channel each person sits in.
fn voice_channel_of(person: u64) -> Option<u64> {
    match person {
        OWNER => Some(LOUNGE),
        GUEST => Some(STUDIO),
        OWNER2 => Some(STUDIO),
        _ => None,
    }
}

/// Her answers so far, by turn tag.
fn answers(d: &FakeDiscord) -> HashMap<usize, String> {
    let mut out = HashMap::new();
    for c in d.calls() {
        if c.method != "POST" || !c.path.ends_with("/messages") {
            continue;
        }
        let text = c.content();
        let tag = text
            .strip_prefix("[t")
            .and_then(|t| t.split(']').next()?.parse().ok());
        if let Some(n) = tag {
            out.insert(n, text);
        }
    }
    out
}

/// What must be true of turn `n`'s answer (and the store) for its plan; `Err` says
/// what acted as someone else.
fn check(
    n: usize,
    plan: &Plan,
    answer: &str,
    reminders: &[kotoba::protocol::Reminder],
    cards: &HashMap<usize, Answerers>,
) -> Result<(), String> {
    let who = name_of(plan.person);
    let fail = |why: &str| {
        Err(format!(
            "turn {n} ({who} in {}): {why}: {answer}",
            plan.channel
        ))
    };
    match plan.ask {
        Ask::ReadVault => {
            let in_guild = plan.channel != DM;
            let allowed = in_guild && may_read_vault(plan.person);
            if allowed && !answer.contains(SECRET) {
                return fail("may read the vault but did not get it");
            }
            if !allowed && answer.contains(SECRET) {
                return fail("read the vault as someone else");
            }
        }
        // Moving her between voice channels is the owners' (guests are not offered it).
        Ask::JoinMe if !is_owner(plan.person) => {
            if answer.contains("<#") {
                return fail("a guest's turn moved her in voice");
            }
        }
        Ask::JoinMe if plan.channel != DM => match voice_channel_of(plan.person) {
            Some(c) => {
                if !answer.contains(&format!("<#{c}>")) {
                    return fail("joined another person's voice channel");
                }
            }
            None => {
                if !answer.contains("not in a voice channel") {
                    return fail("joined someone's voice channel though not in one");
                }
            }
        },
        Ask::JoinMe => {}
        // A server change's card: the asker it names (who may answer it with the
        // permissions it needs) is the turn's person.
        Ask::Act if plan.channel == DM => {}
        Ask::Act => match cards.get(&n) {
            Some(Answerers::Holders { asker, .. }) if *asker == plan.person.to_string() => {}
            other => return fail(&format!("its card's answerers are {other:?}")),
        },
        Ask::Remind => {
            let mine: Vec<_> = reminders
                .iter()
                .filter(|r| r.text.ends_with(&format!(" t{n}")))
                .collect();
            match (is_owner(plan.person), mine.as_slice()) {
                (true, [r]) => {
                    let asker = format!("{who} ({})", plan.person);
                    if r.asker != asker {
                        return fail(&format!("the reminder's asker is {}", r.asker));
                    }
                }
                (true, other) => return fail(&format!("{} reminders set", other.len())),
                (false, []) => {}
                (false, _) => return fail("a guest's turn set a reminder (a host tool)"),
            }
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_call_acts_as_the_person_whose_line_started_its_turn_with_many_people_at_once() {
    let owners = format!("{OWNER},{OWNER2}");
    let crowd = FakeDiscord::start_crowd().await;
    // She may view, send and manage channels (a server change is hers to make).
    crowd.set_role(BOT_ROLE, "kotoba", (1 << 10) | (1 << 11) | (1 << 4), 5);
    let r = rig_on(crowd, &[("KOTOBA_DISCORD_OWNER_IDS", owners.as_str())]).await;
    let (discord, model) = (&r.discord, &r.model);
    discord.say(VAULT, OWNER, SECRET, Msg::default());
    for person in [OWNER, GUEST, OWNER2] {
        discord.voice_state(person, voice_channel_of(person));
    }
    // 8 people (two owners, an administrator, five guests) in three channels and the
    // owner's DM; 320 turns in a seeded random interleaving.
    let people = [
        OWNER, OWNER2, ADMIN, GUEST, CAROL, GUESTS[0], GUESTS[1], GUESTS[2],
    ];
    let seed: u64 = std::env::var("KOTOBA_STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(26);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let plans: Vec<Plan> = (0..320)
        .map(|_| {
            let person = people[rng.gen_range(0..people.len())];
            let channel = match (person, rng.gen_range(0..4)) {
                (OWNER, 3) => DM,
                (_, 0 | 3) => GENERAL,
                (_, 1) => OTHER,
                _ => HOME,
            };
            let ask = [Ask::ReadVault, Ask::JoinMe, Ask::Remind, Ask::Act][rng.gen_range(0..4)];
            Plan {
                person,
                channel,
                ask,
            }
        })
        .collect();
    let plans = Arc::new(plans);
    model.set_responder(responder(plans.clone(), seed));
    // Server-change cards: who each may be answered by is kept, then an owner at her
    // own surface says no (so the turn goes on and nothing changes).
    let cards: Arc<Mutex<HashMap<usize, Answerers>>> = Arc::default();
    let answering = {
        let (engine, cards) = (r.app.engine.clone(), cards.clone());
        tokio::spawn(async move {
            let me = Answerer {
                id: "local".into(),
                name: "the owner".into(),
                local: true,
                via: "the test".into(),
                holds: Vec::new(),
            };
            loop {
                for card in engine.all_open_cards().await {
                    if let Some(n) = tag_in(&card.why) {
                        cards.lock().unwrap().insert(n, card.answerers.clone());
                    }
                    let _ = engine
                        .answer(&card.request_id, CardAnswer::of(Decision::Deny), &me)
                        .await;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    for (n, plan) in plans.iter().enumerate() {
        discord.mention(plan.channel, plan.person, &format!("please do it [t{n}]"));
        tokio::time::sleep(Duration::from_millis(rng.gen_range(0..25))).await;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(420);
    let got = loop {
        let got = answers(discord);
        if got.len() >= plans.len() || tokio::time::Instant::now() > deadline {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let mut reminders = Vec::new();
    for c in [GENERAL, OTHER, HOME, DM] {
        reminders.extend(
            r.app
                .engine
                .store()
                .reminders_of(&discord::session_of(c))
                .await
                .unwrap(),
        );
    }
    answering.abort();
    let cards = cards.lock().unwrap().clone();
    let mut wrong = Vec::new();
    for (n, plan) in plans.iter().enumerate() {
        match got.get(&n) {
            Some(answer) => {
                if let Err(e) = check(n, plan, answer, &reminders, &cards) {
                    wrong.push(e);
                }
            }
            None => wrong.push(format!("turn {n} was never answered")),
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong of {}:\n{}",
        wrong.len(),
        plans.len(),
        wrong.join("\n")
    );
    let kinds = |ask| plans.iter().filter(|p| p.ask == ask).count();
    for ask in [Ask::ReadVault, Ask::JoinMe, Ask::Remind, Ask::Act] {
        assert!(kinds(ask) > 50, "{ask:?} is exercised");
    }
}

#[tokio::test]
async fn a_guests_read_of_a_channel_they_cannot_see_is_refused_even_while_the_owner_speaks_there() {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    let (discord, model) = (&r.discord, &r.model);
    discord.say(VAULT, OWNER, SECRET, Msg::default());
    // The guest's turn waits on the model while the owner writes in the same channel.
    let plans = Arc::new(vec![
        Plan {
            person: GUEST,
            channel: GENERAL,
            ask: Ask::ReadVault,
        },
        Plan {
            person: OWNER,
            channel: GENERAL,
            ask: Ask::ReadVault,
        },
    ]);
    let slow: kotoba_testkit::model_server::Responder = {
        let inner = responder(plans.clone(), 1);
        Arc::new(move |body: &Value| {
            inner(body).map(|(reply, _)| (reply, Duration::from_millis(400)))
        })
    };
    model.set_responder(slow);
    discord.mention(GENERAL, GUEST, "read the vault for me [t0]");
    tokio::time::sleep(Duration::from_millis(100)).await;
    discord.mention(GENERAL, OWNER, "and for me too [t1]");
    let d = discord;
    let both = async {
        loop {
            let got = answers(d);
            if got.len() == 2 {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let got = tokio::time::timeout(Duration::from_secs(30), both)
        .await
        .expect("both turns answered");
    assert!(
        !got[&0].contains(SECRET) && got[&0].contains("cannot read that channel"),
        "the guest's read is refused: {}",
        got[&0]
    );
    assert!(
        got[&1].contains(SECRET),
        "the owner's read runs: {}",
        got[&1]
    );
    assert!(
        discord
            .calls()
            .iter()
            .filter(
                |c| c.method == "GET" && c.path.ends_with(&format!("/channels/{VAULT}/messages"))
            )
            .count()
            == 1,
        "the vault was read once, for the owner"
    );
}

#[tokio::test]
async fn lines_whose_events_arrive_newest_first_are_each_answered_once() {
    let r = rig_on(FakeDiscord::start_crowd().await, &[]).await;
    let (discord, model) = (&r.discord, &r.model);
    model.set_responder(Arc::new(|body: &Value| {
        let messages = body["messages"].as_array()?;
        let user = messages.iter().rev().find(|m| m["role"] == "user")?;
        let n = tag_in(&user["content"].to_string())?;
        Some((Reply::text(&format!("[t{n}] heard")), Duration::ZERO))
    }));
    for round in 0..3 {
        let lines: Vec<(u64, String)> = (0..2)
            .map(|i| (GUESTS[i], format!("hello [t{}]", round * 2 + i)))
            .collect();
        let lines: Vec<(u64, &str)> = lines.iter().map(|(a, t)| (*a, t.as_str())).collect();
        discord.mentions_delivered_newest_first(GENERAL, &lines);
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while answers(discord).len() < 6 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let got = answers(discord);
    let mut heard: Vec<usize> = got.keys().copied().collect();
    heard.sort_unstable();
    assert_eq!(
        heard,
        vec![0, 1, 2, 3, 4, 5],
        "every line is answered: {got:?}"
    );
    let posts = discord
        .calls()
        .into_iter()
        .filter(|c| c.method == "POST" && c.path.ends_with("/messages"))
        .count();
    assert_eq!(posts, 6, "and none twice");
}
