//! What a command's arguments could hold (docs/gate.md "Every command a line can run"):
//! which commands only read or print their words, the shell lines an argument or an
//! option value could be (rule 2), the paths it could name (rule 3, keys), and options
//! that make a runner run as root. The reader (`danger`) decides what each is worth.

use super::commands::is_block_device;
use super::{base_name, READ_ONLY_COMMANDS};

/// Commands beyond the read-only list that never run, write or destroy what their
/// arguments name: they look things up, compare or change the shell's own folder.
const LOOKERS: [&str; 20] = [
    "cd", "pushd", "popd", "test", "[", "[[", "which", "type", "file", "du", "df", "realpath",
    "readlink", "basename", "dirname", "diff", "cmp", "jq", "lsblk", "blkid",
];

/// Programs that use a key file as an identity (`ssh -i ~/.ssh/id_ed25519`): naming a
/// key is how they are used, not a wipe.
const IDENTITY_USERS: [&str; 8] = [
    "ssh",
    "scp",
    "sftp",
    "ssh-add",
    "ssh-copy-id",
    "autossh",
    "sshfs",
    "mosh",
];

/// Readers whose option names a program they will run on each file
/// (`rg --pre CMD`, `sort --compress-program CMD`).
pub(crate) const PROGRAM_OPTIONS: [(&str, &[&str]); 2] = [
    ("rg", &["--pre", "--hostname-bin"]),
    ("sort", &["--compress-program"]),
];

/// The lowercased name a command word runs (path stripped).
fn name(word: &str) -> String {
    base_name(word).to_lowercase()
}

/// True when the command only reads or prints its arguments, so no later word is a
/// command and no argument a line it runs: `echo`, `printf` without `-v`, the read-only
/// list and the lookers. Their own flags that run or write are judged by their rules.
pub(crate) fn is_reader(words: &[&str]) -> bool {
    let Some(first) = words.first() else {
        return true;
    };
    let name = name(first);
    if first.contains(['$', '`']) {
        return false;
    }
    match name.as_str() {
        "echo" => true,
        "printf" => !words.iter().any(|w| w.starts_with("-v")),
        n => READ_ONLY_COMMANDS.contains(&n) || LOOKERS.contains(&n),
    }
}

/// True for a program that names key files to use them.
pub(crate) fn uses_identities(words: &[&str]) -> bool {
    words
        .first()
        .is_some_and(|w| IDENTITY_USERS.contains(&name(w).as_str()))
}

/// Text a shell could be handed from one argument (rule 2): the argument itself when it
/// holds more than one word (`'rm -rf ~'`), the value after each `=`
/// (`core.fsmonitor=…`, `--rsync-path=…`, `exec=…`), and a value glued to a short
/// option (`-c'!rm …'`). Leading `!`, `|` and `:` (an editor's or pager's "run this")
/// are dropped.
pub(crate) fn command_texts(word: &str) -> Vec<String> {
    // The values first: `--opt='wipefs -a /dev/sda'` is read as the wipefs line it
    // holds before the whole word is read as one line.
    let mut texts: Vec<&str> = word
        .match_indices('=')
        .map(|(i, _)| &word[i + 1..])
        .collect();
    texts.extend(glued_value(word));
    if word.contains(char::is_whitespace) || word.starts_with(RUN_MARKS) {
        texts.push(word);
    }
    texts
        .into_iter()
        .map(|t| t.trim_start_matches(RUN_MARKS).trim_start())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Marks before a command that an editor or pager runs (`!cmd`, `:!cmd`, `|cmd`, and
/// `+cmd`, a command run at start: `less +'!cmd'`, `vim +'!cmd'`).
const RUN_MARKS: [char; 6] = ['|', '!', ':', '&', ';', '+'];

/// The value glued to a short option: `-oVALUE` → `VALUE` (`None` for `--long`, `-x`).
fn glued_value(word: &str) -> Option<&str> {
    let rest = word.strip_prefix('-')?;
    if rest.starts_with('-') {
        return None;
    }
    let mut chars = rest.char_indices();
    chars.next()?;
    chars.next().map(|(i, _)| &rest[i..])
}

/// Paths one argument could name (rule 3, keys): itself, the value after each `=`
/// (`of=/dev/sda`, `--output=/dev/sda`) and a value glued to a short option
/// (`-o/dev/sda`). Text with spaces is a line, read as one, never a path.
pub(crate) fn path_texts(word: &str) -> Vec<&str> {
    let mut out = vec![word];
    out.extend(word.match_indices('=').map(|(i, _)| &word[i + 1..]));
    out.extend(glued_value(word));
    out.retain(|p| !p.is_empty() && !p.contains(char::is_whitespace));
    out
}

/// The first argument naming a block device or the device folder, as written.
pub(crate) fn device_named<'a>(args: &[&'a str], cwd: Option<&str>) -> Option<&'a str> {
    args.iter().copied().find(|arg| {
        path_texts(arg)
            .iter()
            .any(|p| is_block_device(&absolute(p, cwd)))
    })
}

/// A path as the shell would open it after an earlier `cd DIR` in the same line.
pub(crate) fn absolute(path: &str, cwd: Option<&str>) -> String {
    match cwd {
        Some(dir) if !path.starts_with(['/', '~', '$', '-']) => {
            format!("{}/{path}", dir.trim_end_matches('/'))
        }
        _ => path.to_string(),
    }
}

/// An option that makes a runner run its command as root (`--uid=0`, `-u root`,
/// `-p User=root`, `--userspec=root`), as written.
pub(crate) fn root_option(args: &[&str]) -> Option<String> {
    let is_root = |v: &str| matches!(v, "0" | "root" | "0:0" | "root:root");
    let keyed = |k: &str| {
        let k = k.trim_start_matches('-').to_lowercase();
        matches!(
            k.as_str(),
            "u" | "uid" | "user" | "userspec" | "reuid" | "chuid" | "p" | "property"
        ) || k.ends_with("user")
    };
    for (i, arg) in args.iter().enumerate() {
        if let Some((key, value)) = arg.split_once('=') {
            let value = value.rsplit('=').next().unwrap_or(value);
            let key = key.rsplit('=').next().unwrap_or(key);
            if keyed(key) && is_root(value) {
                return Some(arg.to_string());
            }
        } else if arg.starts_with('-') && keyed(arg) {
            let next = args.get(i + 1).copied().unwrap_or("");
            let value = next.rsplit('=').next().unwrap_or(next);
            let says_user = !next.contains('=') || next.to_lowercase().starts_with("user=");
            if says_user && is_root(value) {
                return Some(format!("{arg} {next}"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_is_read_as_the_lines_it_could_hand_a_shell() {
        assert_eq!(command_texts("rm -rf ~"), vec!["rm -rf ~"]);
        assert_eq!(
            command_texts("core.fsmonitor=rm -rf ~"),
            vec!["rm -rf ~", "core.fsmonitor=rm -rf ~"]
        );
        assert_eq!(command_texts("-c!reboot"), vec!["reboot"]);
        assert_eq!(command_texts("--rsync-path=sudo rsync")[0], "sudo rsync");
        assert!(command_texts("plain").is_empty());
    }

    #[test]
    fn a_device_is_found_inside_option_values_and_after_cd() {
        assert_eq!(device_named(&["-o", "/dev/sda"], None), Some("/dev/sda"));
        assert_eq!(
            device_named(&["of=//dev/./sdb"], None),
            Some("of=//dev/./sdb")
        );
        assert_eq!(
            device_named(&["-o/dev/nvme0n1"], None),
            Some("-o/dev/nvme0n1")
        );
        assert_eq!(device_named(&["-t", "/dev", "sda"], None), Some("/dev"));
        assert_eq!(device_named(&["sda"], Some("/dev")), Some("sda"));
        assert_eq!(
            device_named(&["/dev/null", "sda", "/dev/ttyS0"], None),
            None
        );
    }

    #[test]
    fn root_options_are_seen_in_every_spelling() {
        for args in [
            &["--uid=0", "id"][..],
            &["--uid", "root", "id"],
            &["-p", "User=root", "id"],
            &["--property=User=root", "id"],
            &["--userspec=root:root", "/", "sh"],
        ] {
            assert!(root_option(args).is_some(), "{args:?}");
        }
        assert_eq!(
            root_option(&["--uid=1000", "-p", "MemoryMax=1G", "id"]),
            None
        );
    }
}
