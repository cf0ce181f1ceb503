//! Writing one key into settings.yaml's text in place, so that a save from the page or
//! Discord keeps the owner's file as written: the key's own line (flat `a.b:` at the
//! top, or `b:` inside its `a:` section) is replaced, together with a block value's
//! indented lines under it, or the key is added at the end. Every comment, blank line
//! and other key stays; a comment at the end of the key's line stays too. The value
//! goes on one line (the caller gives it as flow YAML).

/// How far a line is indented.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Whether `line` (already unindented) is `name:` followed by nothing, a space or a
/// comment.
fn names(line: &str, name: &str) -> bool {
    let Some(rest) = line.strip_prefix(name) else {
        return false;
    };
    let Some(after) = rest.trim_start_matches([' ', '\t']).strip_prefix(':') else {
        return false;
    };
    after.is_empty() || after.starts_with([' ', '\t'])
}

/// The comment at the end of a `key: value  # comment` line, if any.
fn trailing_comment(line: &str) -> Option<&str> {
    let (_, after) = line.split_once(':')?;
    after.find(" #").map(|i| &after[i + 1..])
}

/// The line index of `key`'s line: flat at the top level, else (for `a.b`) `b:` as a
/// direct child of the top-level `a:` section.
fn find(lines: &[&str], key: &str) -> Option<usize> {
    let top = |l: &&str| indent(l) == 0 && !l.trim_start().starts_with('#');
    if let Some(i) = lines.iter().position(|l| top(l) && names(l, key)) {
        return Some(i);
    }
    let (section, inner) = key.split_once('.')?;
    let start = lines.iter().position(|l| top(l) && names(l, section))?;
    let mut child_indent = None;
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let n = indent(line);
        if n == 0 {
            return None;
        }
        let first = *child_indent.get_or_insert(n);
        if n == first && names(body, inner) {
            return Some(i);
        }
    }
    None
}

/// `text` with `key` set to `value` (one line of flow YAML).
pub(super) fn set_key(text: &str, key: &str, value: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(at) = find(&lines, key) else {
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{key}: {value}\n"));
        return out;
    };
    let line = lines[at];
    let depth = indent(line);
    let name = line
        .trim_start()
        .split(':')
        .next()
        .unwrap_or(key)
        .trim_end();
    let mut new = format!("{}{name}: {value}", &line[..depth]);
    if let Some(comment) = trailing_comment(line) {
        new.push(' ');
        new.push_str(comment);
    }
    // A block value's lines: indented deeper, or a `- item` list at the key's depth.
    let mut end = at + 1;
    while let Some(next) = lines.get(end) {
        let body = next.trim_start();
        let deeper = !body.is_empty() && indent(next) > depth;
        let item = indent(next) == depth && body.starts_with("- ");
        if !(deeper || item) {
            break;
        }
        end += 1;
    }
    let mut out: Vec<String> = lines[..at].iter().map(|l| l.to_string()).collect();
    out.push(new);
    out.extend(lines[end..].iter().map(|l| l.to_string()));
    let mut joined = out.join("\n");
    joined.push('\n');
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
# Kotoba's settings — my notes stay here.
model: gpt-4o   # the cheap one

# Work mode
work_max_iter: 12
voice:
  # hearing
  stt_provider: local
  speculate: true
disabled_toolsets:
  - browser
  - mcp
owners: [\"1\"]
";

    #[test]
    fn a_flat_key_is_replaced_on_its_line_keeping_every_comment_and_its_own() {
        let out = set_key(FILE, "model", "\"gpt-5\"");
        assert!(out.contains("model: \"gpt-5\" # the cheap one"), "{out}");
        assert!(out.contains("# Kotoba's settings — my notes stay here."));
        assert!(out.contains("# Work mode\nwork_max_iter: 12"));
        assert_eq!(out.lines().count(), FILE.lines().count());
    }

    #[test]
    fn a_dotted_key_is_replaced_inside_its_section() {
        let out = set_key(FILE, "voice.stt_provider", "\"openai\"");
        assert!(
            out.contains("voice:\n  # hearing\n  stt_provider: \"openai\"\n  speculate: true"),
            "{out}"
        );
        assert!(!out.contains("voice.stt_provider"), "{out}");
    }

    #[test]
    fn a_block_list_is_replaced_whole_by_one_line() {
        let out = set_key(FILE, "disabled_toolsets", "[\"web\"]");
        assert!(
            out.contains("disabled_toolsets: [\"web\"]\nowners:"),
            "{out}"
        );
        assert!(!out.contains("- browser"), "{out}");
    }

    #[test]
    fn a_new_key_is_added_at_the_end_and_a_commented_out_one_is_not_taken_for_it() {
        let text = "# work_max_iter: 99\nmodel: m\n";
        let out = set_key(text, "work_max_iter", "20");
        assert_eq!(out, "# work_max_iter: 99\nmodel: m\nwork_max_iter: 20\n");
        assert_eq!(set_key("", "model", "\"m\""), "model: \"m\"\n");
        let out = set_key("model: m", "voice.speculate", "false");
        assert_eq!(out, "model: m\nvoice.speculate: false\n");
    }

    #[test]
    fn a_key_that_only_starts_like_another_is_not_taken_for_it() {
        let text = "work_max_iter_extra: 1\n";
        let out = set_key(text, "work_max_iter", "3");
        assert!(out.ends_with("work_max_iter: 3\n") && out.contains("work_max_iter_extra: 1"));
    }
}
