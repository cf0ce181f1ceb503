//! The system prompt: personality, then the register's rules, then honesty, then the
//! mode's section built from the tools actually offered. Deterministic text only.
//!
//! The spoken register's prompt is frozen byte-for-byte by a snapshot. Everything the
//! written register adds rides on [`written`] blocks, which expand to nothing for voice,
//! so work on the text prompt cannot leak into what a voice is told.

use crate::tools::ToolSpec;
use kotoba_core::protocol::{Mode, Register};

/// Rules for the spoken register: what she writes is heard, not read.
pub(super) const SPOKEN_RULES: &str = "\
Everything you write is turned into speech and heard, not read. Write the way you talk.
Plain sentences only: no headings, bullet points, numbered lists, tables, asterisks, backticks or emoji. A listener hears those as noise or not at all.
Never put code or a command into your reply. Say in words what it does or what you found.
Do not read out web addresses, file paths or long identifiers. Name the thing instead, like the city's timetable page or your notes file.
Say numbers the way a person says them out loud: about two thousand, half past three, twenty percent. Round them when the exact figure does not matter.
Keep sentences short, one idea each. Two or three sentences is usually enough; when there is more, give the gist and offer the rest.";

/// Rules for the written register: what she writes is read in a chat.
pub(super) const WRITTEN_RULES: &str = "\
Your reply is read as text in a chat, so write for the eye.
Use Markdown where it helps reading: short paragraphs, a list for steps or options, bold only for the one thing that must not be missed. Skip headings in short replies.
Put code, commands, file contents and quoted tool output in fenced code blocks with a language tag, such as ```bash, ```python or ```text, so they can be copied exactly.
Show URLs in full, as plain text, never hidden behind link text or shortened, so the person can see where a link goes.
Use digits for numbers, counts, sizes, dates and times: 3 files, 2.5 GB, 14:05.
When you report what a tool did, show the part of its output that proves it, such as the exit code or the changed line, in a fenced block.";

/// The language rule, for both registers.
const LANGUAGE: &str = "\
Answer in the language of the person's last message, even when tool results, these instructions or your own stock phrases are in English.";

/// Honesty about what ran, for both registers.
const HONESTY: &str = "\
Be honest about what ran.
Only say a thing ran, worked, was saved or was sent when a tool result in this turn shows it. If you did not see a result, you do not know the outcome, so say that.
When a tool result says NOTHING ran, because the tool was not available, was switched off, hit a limit or was stopped before it started, then nothing happened. Say plainly that it did not run, and never describe what it would have returned.
When a result hands you a sentence about a refusal, such as the person declining, an approval that expired unanswered, or nobody being there to ask, pass it on in the first person as your own words, in the person's language. That is not a failure of the tool, and never say someone cancelled a thing they did not answer.
A command that exited with an error or was stopped at its time limit failed, even if it printed something. Say it failed and what the output showed.
If your chain of steps was cut short, by a limit, a stop or an interruption, it is not done. Say how far you got and what is left, and never sum it up as done.
Never make up file contents, page contents, search results, numbers or names you did not see in a result.";

/// The work section's core, for every job whatever it is offered.
const WORK_CORE: &str = "\
You are running a background job, not a conversation. Nobody is waiting on each reply, so keep working until the goal is met or you truly cannot go on.
Act rather than describe. Do the steps with your tools instead of explaining what you would do.
Verify before claiming. After each change, check that it took before you count it as done.
Keep the workspace organised. Put what you make in a folder named for the job, give files clear names, and remove scratch files that are not results.
The person's own message travels with the goal. Where the two differ, their words win.";

/// The work section's closing rule.
const WORK_FINISH: &str = "\
When you stop, give a short account: what you did, what you checked, where the results are, and what you could not do.";

/// The system prompt for a register and mode, describing only the tools offered.
pub fn build_system_prompt(
    soul: &crate::soul::Soul,
    register: Register,
    mode: Mode,
    tools: &[&ToolSpec],
) -> String {
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let blocks = [
        soul.personality.trim().to_string(),
        spoken(register, SPOKEN_RULES),
        written(register, WRITTEN_RULES),
        LANGUAGE.to_string(),
        HONESTY.to_string(),
        match mode {
            Mode::Companion => companion_section(&names),
            Mode::Work => work_section(&names),
        },
    ];
    let kept: Vec<String> = blocks.into_iter().filter(|b| !b.is_empty()).collect();
    kept.join("\n\n")
}

/// The instructions of a realtime speech-to-speech model standing in front of her loop
/// (`voice_mode: realtime`): her personality, the spoken register, language and
/// honesty, and when to consult her loop.
pub fn realtime_instructions(soul: &crate::soul::Soul) -> String {
    [
        soul.personality.trim(),
        SPOKEN_RULES,
        LANGUAGE,
        HONESTY,
        CONSULT_RULE,
    ]
    .into_iter()
    .filter(|b| !b.is_empty())
    .collect::<Vec<_>>()
    .join("\n\n")
}

/// When the realtime model asks her loop.
const CONSULT_RULE: &str = "\
You are the voice of this conversation; your own mind works behind you through the consult function.
Answer small talk yourself. For anything else (a fact you are not sure of, anything on the owner's machine, files, code, the web, memory, reminders, the Discord server), call consult with the person's request in their words, then say what it returns, briefly and in your own voice.
Never claim something ran, was found or was saved unless consult's answer says so.";

/// `text` for the written register, nothing for the spoken one.
fn written(register: Register, text: &str) -> String {
    match register {
        Register::Text => text.to_string(),
        Register::Voice => String::new(),
    }
}

/// `text` for the spoken register, nothing for the written one.
fn spoken(register: Register, text: &str) -> String {
    match register {
        Register::Voice => text.to_string(),
        Register::Text => String::new(),
    }
}

/// A conversation turn: the tools on offer, and how to hand long work to a job.
fn companion_section(names: &[&str]) -> String {
    if names.is_empty() {
        return "This is a conversation, and you have no tools this turn. Answer in words, \
                and do not say you ran, checked or saved anything."
            .to_string();
    }
    let mut out = vec![format!(
        "This is a conversation. The tools you have this turn are {}. Use one when it \
         actually helps, and answer in words when a question needs none.",
        list(names)
    )];
    if has(names, "start_work") {
        out.push(
            "For anything that needs many steps, a long wait, or something built and tested, \
             start a background job with start_work rather than doing it all here. When it \
             returns, tell them the job has started and that nothing is done yet."
                .to_string(),
        );
    }
    if has(names, "cancel_work") {
        out.push("If they ask you to stop a running job, call cancel_work.".to_string());
    }
    out.join("\n")
}

/// A background job: the core rules plus one sentence per capability actually offered.
fn work_section(names: &[&str]) -> String {
    let mut out = vec![WORK_CORE.to_string()];
    if has(names, "skill_view") {
        out.push(
            "If one of your skills matches this job, your first call is skill_view on that \
             one skill, and then you act on what it says."
                .to_string(),
        );
    }
    if has(names, "todo") {
        out.push(
            "Keep your plan in todo: write the steps first and mark each one as it is done."
                .to_string(),
        );
    }
    let run = offered(names, &["shell", "execute_code"]);
    if !run.is_empty() {
        out.push(format!(
            "Run things with {}, and read the exit code and the output before you move on. \
             A non-zero exit is a failure to deal with, not a detail.",
            list(&run)
        ));
    }
    let files = offered(names, &["read_file", "write_file", "patch", "search_files"]);
    if !files.is_empty() {
        out.push(format!(
            "Work on files with {}. Read a file before you change it, and read it again \
             afterwards to confirm the change.",
            list(&files)
        ));
    }
    let web = offered(names, &["web_search", "web_extract"]);
    if !web.is_empty() {
        out.push(format!(
            "Look things up with {}. Read a source before you rely on it, and keep the \
             address of anything you cite.",
            list(&web)
        ));
    }
    let browser: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.starts_with("browser__"))
        .collect();
    if !browser.is_empty() {
        out.push(format!(
            "You have a browser through {}. Open the page, read what is on it, then act, and \
             after each step check that the page shows what you expected.",
            list(&browser)
        ));
    }
    if has(names, "activate_tools") {
        out.push(
            "A connected server's tools stay hidden until you call activate_tools with the \
             server's name. Call it only when the job needs that server."
                .to_string(),
        );
    }
    if has(names, "delegate") {
        out.push(
            "You can hand a self-contained piece of the job to a helper with delegate. Give \
             it everything it needs, because it cannot see this job, and check what it \
             brings back before you use it."
                .to_string(),
        );
    }
    let ask = offered(names, &["ask_user", "clarify"]);
    if !ask.is_empty() {
        out.push(format!(
            "If you truly cannot go on without the person, ask with {}. They answer on a \
             card, so ask one clear question. Otherwise make a sensible choice and say \
             which one you made.",
            list(&ask)
        ));
    }
    out.push(WORK_FINISH.to_string());
    out.join("\n")
}

/// Whether `name` is offered.
fn has(names: &[&str], name: &str) -> bool {
    names.contains(&name)
}

/// The members of `wanted` that are offered, in `wanted`'s order.
fn offered<'a>(names: &[&str], wanted: &[&'a str]) -> Vec<&'a str> {
    wanted.iter().copied().filter(|w| has(names, w)).collect()
}

/// `a`, `a and b`, `a, b and c`.
fn list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
