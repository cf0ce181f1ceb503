//! Skills: folders under `<home>/skills/` each holding a SKILL.md (a short front
//! matter with `name:` and `description:`, then the instructions). skill_list names
//! them; skill_view reads one. A job whose goal names exactly one skill must call
//! skill_view on it first (step zero).

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::req_str;
use super::Behaviour;
use super::{Scope, Tool, ToolContext, ToolLines, ToolOutput, ToolSpec};
use kotoba_core::protocol::{Risk, StepKind};

/// One skill on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (the folder's, unless the front matter says otherwise).
    pub name: String,
    /// One line saying when to use it.
    pub description: String,
    /// The SKILL.md file.
    pub path: PathBuf,
}

/// The skills folder.
pub fn skills_dir(home: &Path) -> PathBuf {
    home.join("skills")
}

fn parse(folder: &str, path: PathBuf, text: &str) -> Skill {
    let mut name = folder.to_string();
    let mut description = String::new();
    let mut lines = text.lines();
    if text.starts_with("---") {
        lines.next();
        for line in lines.by_ref() {
            if line.trim() == "---" {
                break;
            }
            if let Some(v) = line.strip_prefix("name:") {
                name = v.trim().to_string();
            } else if let Some(v) = line.strip_prefix("description:") {
                description = v.trim().to_string();
            }
        }
    }
    if description.is_empty() {
        description = lines
            .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .unwrap_or("")
            .trim()
            .to_string();
    }
    Skill {
        name,
        description,
        path,
    }
}

/// Every skill, sorted by name. Unreadable folders are skipped.
pub fn list(home: &Path) -> Vec<Skill> {
    let Ok(entries) = std::fs::read_dir(skills_dir(home)) else {
        return Vec::new();
    };
    let mut skills: Vec<Skill> = entries
        .flatten()
        .filter_map(|e| {
            let path = e.path().join("SKILL.md");
            let text = std::fs::read_to_string(&path).ok()?;
            Some(parse(&e.file_name().to_string_lossy(), path, &text))
        })
        .collect();
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    skills
}

fn words(s: &str) -> String {
    s.to_lowercase().replace(['-', '_'], " ")
}

/// The one skill a job's goal or the person's words name, if exactly one does.
pub fn matching_skill(home: &Path, goal: &str, user_words: Option<&str>) -> Option<String> {
    let haystack = format!(" {} {} ", words(goal), words(user_words.unwrap_or("")));
    let matches: Vec<String> = list(home)
        .into_iter()
        .filter(|s| {
            let name = words(&s.name);
            !name.trim().is_empty() && haystack.contains(&format!(" {} ", name.trim()))
        })
        .map(|s| s.name)
        .collect();
    match matches.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        family: "skills".into(),
        risk: Risk::Read,
        step_kind: StepKind::Skill,
        timeout: None,
        takes_timeout_arg: false,
        scope: Scope::Both,
        lines: if name == "skill_view" {
            ToolLines::of(
                "Let me check my notes on how to do this.",
                &["Still reading my notes.", "Almost through them."],
                "Got it.",
                "I couldn't open that skill.",
            )
        } else {
            ToolLines::of(
                "Let me see what skills I have.",
                &["Still looking.", "One moment."],
                "Here's what I know how to do.",
                "I couldn't list my skills.",
            )
        },
        parameters,
        behaviour: Behaviour::guest(),
    }
}

/// `skill_list`: the skills she has, with when to use each.
pub struct SkillList {
    spec: ToolSpec,
}

impl Default for SkillList {
    fn default() -> Self {
        SkillList {
            spec: spec(
                "skill_list",
                "List your skills (saved how-tos) with a line on when to use each.",
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
            ),
        }
    }
}

#[async_trait]
impl Tool for SkillList {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, _args: Value, ctx: &ToolContext) -> ToolOutput {
        let skills = list(&ctx.paths.home);
        if skills.is_empty() {
            return ToolOutput::ok("You have no skills saved yet.");
        }
        ToolOutput::ok(
            skills
                .iter()
                .map(|s| format!("- {}: {}", s.name, s.description))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }
}

/// `skill_view`: read one skill's instructions.
pub struct SkillView {
    spec: ToolSpec,
}

impl Default for SkillView {
    fn default() -> Self {
        let mut spec = spec(
            "skill_view",
            "Read one of your skills (its full instructions) by name.",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string", "description": "The skill's name from skill_list."}},
                "required": ["name"],
                "additionalProperties": false
            }),
        );
        // Its `name` argument opens that skill: a job's step zero is satisfied by it.
        spec.behaviour.opens_skill = Some("name");
        SkillView { spec }
    }
}

#[async_trait]
impl Tool for SkillView {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn action_line(&self, args: &Value) -> String {
        format!(
            "skill_view {}",
            args.get("name").and_then(Value::as_str).unwrap_or("")
        )
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        let name = match req_str(&args, "name", "skill_view") {
            Ok(n) => n,
            Err(refusal) => return refusal,
        };
        match list(&ctx.paths.home).into_iter().find(|s| s.name == name) {
            Some(skill) => match std::fs::read_to_string(&skill.path) {
                Ok(text) => ToolOutput::ok(text),
                Err(e) => ToolOutput::failed(format!("skill_view: could not read {}: {e}", skill.path.display())),
            },
            None => ToolOutput::refused(format!(
                "skill_view: there is no skill called '{name}'. Nothing was read; call skill_list to see the names."
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_skill(home: &Path, folder: &str, body: &str) {
        let dir = skills_dir(home).join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), body).unwrap();
    }

    #[test]
    fn skills_are_folders_with_a_skill_md_and_front_matter() {
        let home = tempfile::tempdir().unwrap();
        write_skill(home.path(), "release-notes", "---\nname: release-notes\ndescription: Draft release notes from git log\n---\n# Steps\n1. ...");
        write_skill(home.path(), "tidy", "# Tidy\nClean the workspace folder.");
        std::fs::create_dir_all(skills_dir(home.path()).join("empty")).unwrap();
        let s = list(home.path());
        assert_eq!(
            s.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["release-notes", "tidy"]
        );
        assert_eq!(s[0].description, "Draft release notes from git log");
        assert_eq!(s[1].description, "Clean the workspace folder.");
    }

    #[test]
    fn step_zero_picks_a_skill_only_when_exactly_one_is_named() {
        let home = tempfile::tempdir().unwrap();
        write_skill(
            home.path(),
            "release-notes",
            "---\nname: release-notes\n---\n",
        );
        write_skill(home.path(), "tidy", "# Tidy\n");
        assert_eq!(
            matching_skill(home.path(), "write the release notes for v2", None).as_deref(),
            Some("release-notes")
        );
        assert_eq!(
            matching_skill(home.path(), "fix the bug", Some("and then tidy up")).as_deref(),
            Some("tidy")
        );
        assert_eq!(
            matching_skill(home.path(), "tidy then write release notes", None),
            None,
            "two match: no step zero"
        );
        assert_eq!(matching_skill(home.path(), "fix the bug", None), None);
    }
}
