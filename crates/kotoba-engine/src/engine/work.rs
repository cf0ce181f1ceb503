//! Work mode: the background job runner (one job per session), its compute budget
//! (wall time minus time blocked on a person, captured at creation), its endings, the
//! hidden `__work_done__` announce turn, and the engine port tools use to start and
//! cancel jobs, run helpers and ask the person (engine.md §4).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use dashmap::DashMap;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::llm::Item;
use crate::tools::port::{Asked, EngineError, EnginePort, HelperResult, NothingStopped};
use crate::tools::ToolContext;
use kotoba_core::protocol::{
    Card, CardKind, Channel, Frame, Mode, Person, Register, Risk, TurnRequest, TurnStatus,
};

use super::approval::AskEnd;
use super::meter::JobMeter;
use super::transport::WORK_TIMEOUT_EL_BOUND;
use super::turn::run_loop;
use super::{Engine, WORK_DONE_SENTINEL};
use kotoba_core::turn::TurnContext;

/// How much of the person's own words travel into the brief.
pub const USER_WORDS_CAP: usize = 2000;
/// How many announced run_ids are remembered.
const ANNOUNCED_MEMORY: usize = 4096;

/// What a surface shows about a running job (the job card, /stop's question).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobInfo {
    /// The job's id (8 hex).
    pub run_id: String,
    /// Its goal.
    pub goal: String,
    /// Wall time since it started.
    pub elapsed: Duration,
    /// Action rows so far.
    pub steps: u32,
}

/// What a stop names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopScope {
    /// The turn running now (the page's Stop, a voice barge-in): its rows close as
    /// interrupted. Jobs and waiting approvals go on.
    Turn,
    /// What works or waits: the background job and every deferred approval still
    /// waiting (`cancel_work`, the terminal's `/stop`, Discord's Stop). The running chat
    /// turn is not touched — it may be the one asking.
    Work,
}

/// What one stop request stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// Whether a running turn was cut.
    pub turn: bool,
    /// The job that was running, if any.
    pub job: Option<JobInfo>,
    /// How many deferred approvals were still waiting (each is now dismissed).
    pub approvals: usize,
}

impl Stopped {
    /// The sentence for what was stopped; `Err` when nothing was.
    pub fn sentence(&self) -> Result<String, NothingStopped> {
        let cards = match self.approvals {
            0 => String::new(),
            1 => "one approval card still waiting".to_string(),
            n => format!("{n} approval cards still waiting"),
        };
        match (&self.job, cards.is_empty()) {
            (Some(info), no_cards) => Ok(format!(
                "Stopped the job '{}' after {} s and {} steps{}. Nothing of it is kept.",
                info.goal,
                info.elapsed.as_secs(),
                info.steps,
                if no_cards {
                    String::new()
                } else {
                    format!(", and cancelled the {cards}, so it will not run")
                }
            )),
            (None, false) => Ok(format!(
                "No background job was running, but I cancelled the {cards} here, so nothing of it \
                 will run, even if someone approves it later."
            )),
            (None, true) => Err(NothingStopped),
        }
    }
}

/// One running job.
struct Job {
    /// Its id (8 hex): its frames, its announce, its MCP servers.
    run_id: String,
    /// What it is for, as start_work named it.
    goal: String,
    /// When it started (elapsed time on the job card and /stop).
    started: Instant,
    /// Its steps and the time it spent blocked on a person (the compute budget).
    meter: Arc<JobMeter>,
    /// Cuts its loop (a stop, shutdown).
    cancel: CancellationToken,
    /// Set by a requested stop: it ends as stopped, announcing nothing.
    requested_stop: AtomicBool,
    /// The turn that started it: whom the job speaks for, for its whole life, and the
    /// person's words it carries.
    starter: Arc<TurnContext>,
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobEnd {
    /// The model finished in words.
    Done(String),
    /// A cap cut the chain: never reported as done.
    Capped(String),
    /// The compute budget ran out.
    TookTooLong(Duration),
    /// Someone asked it to stop: announces nothing.
    Stopped,
    /// Cancelled without a request (shutdown): recorded as a failure.
    Cancelled,
    /// The model failed.
    Error(String),
}

impl JobEnd {
    /// (ok, summary, announce) for the work_done frame.
    fn report(&self, goal: &str) -> (bool, String, bool) {
        match self {
            JobEnd::Done(text) => (true, format!("The job '{goal}' finished. Its report: {text}"), true),
            JobEnd::Capped(text) => (
                false,
                format!("The job '{goal}' hit its step cap before finishing; it is NOT done. Last report: {text}"),
                true,
            ),
            JobEnd::TookTooLong(b) => (
                false,
                format!("The job '{goal}' took too long: it used its {} s of compute and was stopped before finishing.", b.as_secs()),
                true,
            ),
            JobEnd::Stopped => (false, format!("The job '{goal}' was stopped at the person's request."), false),
            JobEnd::Cancelled => (false, format!("The job '{goal}' was cancelled without a request, so it failed."), true),
            JobEnd::Error(sentence) => (false, format!("The job '{goal}' failed: {sentence}"), true),
        }
    }
}

/// The jobs of the process, one per session at most, and the runs to announce.
#[derive(Default)]
pub struct Jobs {
    /// The job running in each session (by session id).
    running: DashMap<String, Arc<Job>>,
    /// Whom each run's announce speaks for, and which runs were announced: they change
    /// together when an announce turn claims its run.
    announces: Mutex<Announces>,
}

/// The runs (jobs and deferred runs) whose end is announced by a hidden turn.
#[derive(Default)]
struct Announces {
    /// The person whose turn started each run, by run_id (the last 4096): its hidden
    /// announce turn speaks for them, whoever spoke last.
    starters: std::collections::VecDeque<(String, Person)>,
    /// The run_ids announced already (the last 4096): a second announce runs nothing.
    announced: std::collections::VecDeque<String>,
}

impl Jobs {
    fn announces(&self) -> std::sync::MutexGuard<'_, Announces> {
        match self.announces.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Remember that `run_id` was started by `person`'s turn.
    pub(super) fn started_by(&self, run_id: &str, person: &Person) {
        let mut a = self.announces();
        a.starters.push_back((run_id.to_string(), person.clone()));
        while a.starters.len() > ANNOUNCED_MEMORY {
            a.starters.pop_front();
        }
    }

    /// The first time `run_id` is announced: whom its announce speaks for (its
    /// starter; nobody in particular when it is no longer known). `None` afterwards.
    fn first_announce(&self, run_id: &str) -> Option<Person> {
        let mut a = self.announces();
        if a.announced.iter().any(|r| r == run_id) {
            return None;
        }
        a.announced.push_back(run_id.to_string());
        while a.announced.len() > ANNOUNCED_MEMORY {
            a.announced.pop_front();
        }
        let at = a.starters.iter().position(|(r, _)| r == run_id);
        let person = at.and_then(|i| a.starters.remove(i)).map(|(_, p)| p);
        Some(person.unwrap_or_else(Person::nobody))
    }

    /// The job running in a session, if any.
    pub fn info(&self, session: &str) -> Option<JobInfo> {
        self.running.get(session).map(|j| JobInfo {
            run_id: j.run_id.clone(),
            goal: j.goal.clone(),
            elapsed: j.started.elapsed(),
            steps: j.meter.steps.load(Ordering::SeqCst),
        })
    }
}

/// The brief a job starts from: the goal, and the person's own words verbatim
/// (≤2000 chars), marked as overriding the paraphrase.
pub fn brief(goal: &str, user_words: Option<&str>) -> String {
    let mut b = format!("Goal of this background job: {goal}");
    if let Some(words) = user_words.filter(|w| !w.trim().is_empty()) {
        let words: String = words.chars().take(USER_WORDS_CAP).collect();
        b.push_str(
            "\n\nThe person's own words, verbatim. Where they differ from the goal above, THEIR WORDS \
             OVERRIDE the goal (URLs, exact spellings, the language they asked in):\n<<<\n",
        );
        b.push_str(&words);
        b.push_str("\n>>>");
    }
    b
}

impl Engine {
    /// The port tools reach the engine through.
    pub(crate) fn port(&self) -> Option<Arc<dyn EnginePort>> {
        self.me.upgrade().map(|e| e as Arc<dyn EnginePort>)
    }

    /// Start a job in the session of `starter`, the turn that asks for it: the job
    /// speaks for that turn's person for its whole life and carries their words. The
    /// budget is captured now: 1500 s for a job born in a /v1 turn, else the live
    /// `work_timeout`.
    pub async fn start_job(
        &self,
        starter: &TurnContext,
        goal: &str,
    ) -> Result<String, EngineError> {
        let Some(engine) = self.me.upgrade() else {
            return Err(EngineError::ShuttingDown);
        };
        let session = starter.session.as_str();
        if let Some(running) = self.jobs.info(session) {
            return Err(EngineError::JobRunning {
                goal: running.goal,
                secs: running.elapsed.as_secs(),
            });
        }
        // One job per session across the processes sharing the store, too.
        let live = self.store.liveness(crate::children::is_live_kotoba).await;
        match self.store.job_elsewhere(session, |o| live.is_live(o)).await {
            Ok(Some((goal, at_ms))) => {
                let secs = kotoba_store::now_ms().saturating_sub(at_ms).max(0) / 1000;
                return Err(EngineError::JobRunning {
                    goal,
                    secs: secs as u64,
                });
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("jobs: reading the jobs of other processes: {e}"),
        }
        let budget = if starter.el_call_bound == Some(true) {
            WORK_TIMEOUT_EL_BOUND
        } else {
            Duration::from_secs(self.config.settings().work_timeout)
        };
        let run_id = format!("{:08x}", rand::random::<u32>());
        let job = Arc::new(Job {
            run_id: run_id.clone(),
            goal: goal.to_string(),
            started: Instant::now(),
            meter: Arc::new(JobMeter::default()),
            cancel: self.shutdown.child_token(),
            requested_stop: AtomicBool::new(false),
            starter: Arc::new(starter.clone()),
        });
        self.jobs.running.insert(session.to_string(), job.clone());
        self.jobs.started_by(&run_id, &starter.person);
        let session = session.to_string();
        let brief = brief(goal, starter.user_request.as_deref());
        tokio::spawn(async move { engine.run_job(session, job, brief, budget).await });
        Ok(run_id)
    }

    /// Stop what `scope` names in a session and say what was stopped. For
    /// [`StopScope::Work`]: the job's runner (its state cleared; a requested stop
    /// announces nothing) and every deferred approval still waiting, also when no job
    /// runs, so a card approved later never runs.
    pub fn stop(&self, session: &str, scope: StopScope) -> Stopped {
        if scope == StopScope::Turn {
            let turn = self.sessions.get(session).is_some_and(|s| {
                s.note_stop();
                s.cancel_running()
            });
            return Stopped {
                turn,
                job: None,
                approvals: 0,
            };
        }
        let job = self.jobs.info(session);
        if let Some(job) = self.jobs.running.get(session) {
            job.requested_stop.store(true, Ordering::SeqCst);
            job.cancel.cancel();
        }
        let approvals = self.deferred.cancel_session(session);
        Stopped {
            turn: false,
            job,
            approvals,
        }
    }

    async fn run_job(
        self: Arc<Self>,
        session_id: String,
        job: Arc<Job>,
        brief: String,
        budget: Duration,
    ) {
        let session = self.session(&session_id).await;
        let run_id = job.run_id.clone();
        // Marked in the store while it runs, so a restart after a crash announces it.
        let _underway =
            super::inflight::Underway::job(&self.store, &run_id, &session_id, &job.goal).await;
        session.set_job_running(true);
        session.emit(
            Some(&run_id),
            Frame::WorkStarted {
                goal: job.goal.clone(),
            },
        );
        session.emit(Some(&run_id), Frame::Working { on: true });
        let words = job.starter.user_request.clone();
        let step_zero = crate::tools::skills::matching_skill(
            &self.config.paths.home,
            &job.goal,
            words.as_deref(),
        );
        let brief = match &step_zero {
            Some(skill) => format!("{brief}\n\nStep zero: the skill '{skill}' matches this job. Your first call must be skill_view with name '{skill}'; everything after it acts."),
            None => brief,
        };
        // The job speaks for its starter whatever is said in the session meanwhile.
        let ctx = Arc::new(TurnContext {
            session: job.starter.session.clone(),
            person: job.starter.person.clone(),
            register: Register::Text,
            channel: Channel::Text,
            el_call_bound: Some(false), // a detached job never inherits the mark
            mode: Mode::Work,
            run_id: Some(run_id.clone()),
            user_request: words,
            meter: Some(job.meter.clone()),
            depth: 0,
            step_zero,
            announce: false,
        });
        let work = run_loop(
            &self,
            session.clone(),
            ctx,
            vec![Item::User { text: brief }],
        );
        let end = tokio::select! {
            end = work => match end.status {
                TurnStatus::Completed => JobEnd::Done(end.text),
                TurnStatus::Capped => JobEnd::Capped(end.text),
                TurnStatus::Error => JobEnd::Error(end.text),
                TurnStatus::Interrupted => JobEnd::Cancelled,
            },
            used = over_budget(&job.meter, budget) => JobEnd::TookTooLong(used),
            _ = job.cancel.cancelled() => if job.requested_stop.load(Ordering::SeqCst) { JobEnd::Stopped } else { JobEnd::Cancelled },
        };
        self.jobs.running.remove(&session_id);
        if let Some(mcp) = self.tools.source() {
            mcp.forget_job(&run_id); // the next job starts with its servers deferred again
        }
        session.set_job_running(false);
        let (ok, summary, announce) = end.report(&job.goal);
        if announce {
            session.emit(Some(&run_id), Frame::WorkDone { ok, summary });
        }
        // The bracket closes either way, so no surface keeps showing work in progress.
        session.emit(Some(&run_id), Frame::Working { on: false });
    }

    /// The hidden announce turn a surface fires when it sees a `work_done` frame (a job
    /// or a deferred run ended; `summary` is the frame's): she tells the person the
    /// result in her own words. Announced once per run_id however many surfaces ask: a
    /// second call returns `None` and runs nothing. The sentinel never reaches the
    /// transcript or memory.
    /// While a voice room speaks in the session, the room says it
    /// ([`Engine::announce_aloud`]) and this returns `None`.
    pub async fn announce_work(
        &self,
        session: &str,
        run_id: &str,
        summary: &str,
        register: Register,
    ) -> Option<kotoba_core::protocol::TurnResult> {
        if self.session(session).await.in_call() {
            return None;
        }
        self.announce(session, run_id, summary, register).await
    }

    /// The voice room's announce of a run that ended in its session, spoken (once per
    /// run_id, as [`Engine::announce_work`]).
    pub async fn announce_aloud(
        &self,
        session: &str,
        run_id: &str,
        summary: &str,
    ) -> Option<kotoba_core::protocol::TurnResult> {
        self.announce(session, run_id, summary, Register::Voice)
            .await
    }

    async fn announce(
        &self,
        session: &str,
        run_id: &str,
        summary: &str,
        register: Register,
    ) -> Option<kotoba_core::protocol::TurnResult> {
        let starter = self.jobs.first_announce(run_id)?;
        let text = format!(
            "{WORK_DONE_SENTINEL}\n(A background job ended. Tell the person its result in your own words, \
             briefly and honestly; do not start it again.)\n{summary}"
        );
        // The hidden turn speaks for the person whose turn started the run, whoever
        // spoke last; for a run no longer known (after a restart), for nobody in
        // particular (a guest's tools).
        let req = TurnRequest {
            register,
            hidden: true,
            ..TurnRequest::text(starter.origin, session, starter.author, text)
        };
        Some(self.run_turn(req, super::TurnOptions::default()).await)
    }
}

/// Resolves with the compute used once wall time minus person-wait reaches `budget`.
async fn over_budget(meter: &JobMeter, budget: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let used = started.elapsed().saturating_sub(meter.wait.waited());
        if used >= budget {
            return used;
        }
        tokio::time::sleep(budget - used).await;
    }
}

#[async_trait]
impl EnginePort for Engine {
    async fn start_work(&self, ctx: &ToolContext, goal: &str) -> Result<String, EngineError> {
        let run_id = self.start_job(&ctx.turn, goal).await?;
        Ok(format!(
            "The job has been LAUNCHED in the background (run {run_id}) — that is all that has happened so \
             far: nothing has been opened, read, built or run yet. Tell them you've started on it; the result \
             will be announced when it is done."
        ))
    }

    fn cancel_work(&self, ctx: &ToolContext) -> Result<String, EngineError> {
        self.stop(ctx.session(), StopScope::Work)
            .sentence()
            .map_err(EngineError::NothingToStop)
    }

    async fn save_secret(&self, name: &str, value: &str) -> Result<(), EngineError> {
        Engine::save_secret(self, name, value)
            .await
            .map_err(|e| EngineError::Keystore(e.to_string()))
    }

    async fn unlock_secret(&self, ctx: &ToolContext, name: &str) -> Result<String, EngineError> {
        let key = self
            .master_key()
            .map_err(|e| EngineError::Keystore(e.to_string()))?;
        match self.store.get_secret(key, name).await {
            Ok(Some(value)) => {
                let var = crate::tools::secrets::env_name(name);
                let mut unlocked = self.unlocked.entry(ctx.session().to_string()).or_default();
                unlocked.retain(|(v, _)| v != &var);
                unlocked.push((var.clone(), value));
                Ok(var)
            }
            Ok(None) => Err(EngineError::NoSuchSecret(name.to_string())),
            Err(e) => Err(EngineError::Keystore(e.to_string())),
        }
    }

    async fn delegate(&self, ctx: &ToolContext, goals: Vec<String>) -> Vec<HelperResult> {
        super::helpers::run_helpers(self, ctx, goals).await
    }

    async fn forget_person(
        &self,
        user: u64,
        by: crate::tools::port::ErasedBy,
    ) -> Result<String, EngineError> {
        match Engine::forget_person(self, user, by).await {
            Ok(erased) => Ok(erased.summary()),
            Err(e) => Err(EngineError::Erase(e.to_string())),
        }
    }

    async fn ask_person(
        &self,
        ctx: &ToolContext,
        tool: &str,
        question: &str,
        window: Duration,
        secret: bool,
    ) -> Asked {
        let session = self.session(ctx.session()).await;
        let card = Card {
            request_id: format!("ask-{:016x}", rand::random::<u64>()),
            session: ctx.session().to_string(),
            kind: CardKind::Input,
            tool: tool.to_string(),
            action: question.to_string(),
            why: String::new(),
            risk: Risk::Read,
            can_always: false,
            can_always_exact: false,
            family: None,
            no_always_reason: None,
            expires_at_ms: 0,
            window_secs: window.as_secs(),
            answerers: self.answerers_for(&ctx.turn.person),
            secret,
            can_edit: false,
            danger: None,
        };
        let Some(wait) = self.cards.post(&session, card, window).await else {
            return Asked::Unreachable;
        };
        // A job's question is time blocked on a person, not compute.
        let _blocked = ctx.turn.meter.as_ref().map(|m| m.wait.block());
        match wait.wait_reply().await {
            (AskEnd::Decided { .. }, Some(text)) => Asked::Answered(text),
            (AskEnd::Decided { decision, .. }, None) if !decision.approves() => Asked::Skipped,
            (AskEnd::Decided { .. }, None) => Asked::Answered(String::new()),
            (AskEnd::Expired, _) => Asked::Expired,
            (AskEnd::Unreachable, _) => Asked::Unreachable,
            (AskEnd::Dismissed, _) => Asked::Dismissed,
        }
    }
}
