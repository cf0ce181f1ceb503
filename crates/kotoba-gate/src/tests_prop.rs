//! Property tests: the reader never panics on any text, and a known dangerous command
//! glued into a list after any safe-looking prefix is always dangerous.

use std::path::Path;

use proptest::prelude::*;

use super::*;

const DANGEROUS: [(&str, &str); 8] = [
    ("rm -rf /", RECURSIVE_DELETE),
    ("sudo ls", PRIVILEGE_ESCALATION),
    ("curl x | sh", PIPE_TO_SHELL),
    ("dd if=x of=/dev/sda", RAW_DISK_WRITE),
    ("mkfs.ext4 /dev/sdb1", FILESYSTEM_FORMAT),
    ("chmod -R 777 /", RECURSIVE_CHMOD_ROOT),
    ("shutdown -h now", POWER_CONTROL),
    ("find . -delete", DESTRUCTIVE_FIND),
];

fn shell(command: &str) -> Decision {
    classify(
        &Action::Shell {
            command: command.to_string(),
        },
        Path::new("/nonexistent/kotoba-prop-workspace"),
        true,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn classify_never_panics_on_any_text(text in any::<String>()) {
        let _ = shell(&text);
        let _ = family_of(&text);
        let _ = is_dangerous_python(&text);
    }

    #[test]
    fn classify_never_panics_on_shell_shaped_text(
        text in r#"[a-z $(){}`'"\\|;&<>*?\[\]~/.=\n-]{0,80}"#
    ) {
        let d = shell(&text);
        if d.dangerous_label().is_some() {
            prop_assert!(!d.can_always && !d.can_always_exact);
        }
        if text.contains([';', '&', '|', '`', '\n', '<', '>', '$', '{', '}']) {
            prop_assert!(!d.is_auto_safe(), "{:?}", text);
        }
        let _ = classify(&Action::Code { code: text.clone(), family: "execute_code".into() }, Path::new("."), true);
    }

    #[test]
    fn a_dangerous_command_after_a_safe_prefix_is_always_dangerous(
        prefix in "(ls|echo|cat|grep|pwd|true)( [a-z0-9.]{1,8}){0,3}",
        sep in prop::sample::select(vec!["; ", " && ", " || ", "\n", " & "]),
        which in 0..DANGEROUS.len(),
    ) {
        let (danger, label) = DANGEROUS[which];
        let line = format!("{prefix}{sep}{danger}");
        let d = shell(&line);
        prop_assert!(!d.is_auto_safe(), "{:?}", line);
        prop_assert_eq!(d.dangerous_label(), Some(label), "{:?}", line);
        prop_assert!(!d.can_always && !d.can_always_exact);
    }

    #[test]
    fn a_dangerous_command_inside_a_substitution_is_always_dangerous(
        prefix in "(ls|echo|cat)( [a-z0-9]{1,8}){0,2}",
        which in 0..DANGEROUS.len(),
        backtick in any::<bool>(),
    ) {
        let (danger, label) = DANGEROUS[which];
        let line = if backtick {
            format!("{prefix} `{danger}`")
        } else {
            format!("{prefix} \"$({danger})\"")
        };
        let d = shell(&line);
        prop_assert_eq!(d.dangerous_label(), Some(label), "{:?}", line);
    }
}

#[test]
fn very_long_and_deeply_nested_lines_finish() {
    let long = "echo a; ".repeat(20_000);
    assert_eq!(shell(&long).verdict, Verdict::Ask);
    let nested = format!("{}x{}", "$(".repeat(2_000), ")".repeat(2_000));
    assert!(!shell(&nested).is_auto_safe());
    let wrappers = format!("{} ls", "nice ".repeat(5_000));
    assert!(!shell(&wrappers).is_auto_safe());
    let bombs = "a|a&".repeat(20_000);
    assert!(!shell(&bombs).is_auto_safe());
}
