//! The gate sees through spellings: quoting the shell removes, braces it expands,
//! wrappers and runners, interpreters calling the shell, device paths, power control
//! through service managers, wipes through any tool — each judged as what it runs.

use super::*;

fn shell(command: &str) -> Decision {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "a").unwrap();
    classify(
        &Action::Shell {
            command: command.to_string(),
        },
        ws.path(),
        true,
    )
}

fn assert_dangerous(table: &[(&str, &str)]) {
    for (line, label) in table {
        let d = shell(line);
        assert_eq!(d.dangerous_label(), Some(*label), "{line:?}: {d:?}");
        assert!(!d.can_always && !d.can_always_exact, "{line:?}");
    }
}

#[test]
fn quoting_the_shell_removes_never_hides_a_dangerous_command() {
    assert_dangerous(&[
        (r"$'\x72m' -rf build", RECURSIVE_DELETE),
        (r"$'\162\155' -rf build", RECURSIVE_DELETE),
        (r"$'\u0072\u006d' -r build", RECURSIVE_DELETE),
        (r#"$"rm" -rf build"#, RECURSIVE_DELETE),
        ("r''m -rf build", RECURSIVE_DELETE),
        (r"r\m -rf build", RECURSIVE_DELETE),
        (r#""s"udo id"#, PRIVILEGE_ESCALATION),
        (r"$'sudo' id", PRIVILEGE_ESCALATION),
        (r"rm $'-\x72f' build", RECURSIVE_DELETE),
    ]);
}

#[test]
fn brace_expansion_is_read_as_the_words_it_makes() {
    assert_dangerous(&[
        ("{rm,-rf,~}", RECURSIVE_DELETE),
        ("{sudo,id}", PRIVILEGE_ESCALATION),
        ("s{u,}do id", PRIVILEGE_ESCALATION),
        ("rm -{r,f} build", RECURSIVE_DELETE),
        ("{shutdown,-h,now}", POWER_CONTROL),
    ]);
}

#[test]
fn a_variable_set_earlier_in_the_line_is_read_as_what_it_holds() {
    assert_dangerous(&[
        ("X=rm; $X -rf /", RECURSIVE_DELETE),
        ("a=su; b=do; $a$b id", PRIVILEGE_ESCALATION),
        ("export C='rm -rf'; $C build", RECURSIVE_DELETE),
        ("$SHELL -c 'rm -rf build'", RECURSIVE_DELETE),
    ]);
}

#[test]
fn here_strings_and_here_documents_fed_to_a_shell_are_read_as_its_script() {
    assert_dangerous(&[
        ("bash <<< 'rm -rf build'", RECURSIVE_DELETE),
        ("sh <<EOF\nsudo id\nEOF", PRIVILEGE_ESCALATION),
        (
            "python3 <<'PY'\nimport shutil; shutil.rmtree('x')\nPY",
            TREE_DELETION,
        ),
        ("cat <<EOF\n$(rm -rf build)\nEOF", RECURSIVE_DELETE),
        ("env -S 'rm -rf build'", RECURSIVE_DELETE),
        ("env --split-string='sudo id'", PRIVILEGE_ESCALATION),
    ]);
}

#[test]
fn interpreters_calling_the_shell_are_read_through() {
    assert_dangerous(&[
        (r#"perl -e 'system("rm -rf build")'"#, RECURSIVE_DELETE),
        (
            r#"perl -e 'system("rm", "-rf", "build")'"#,
            RECURSIVE_DELETE,
        ),
        ("perl -e '`sudo id`'", PRIVILEGE_ESCALATION),
        ("perl -e 'qx{reboot}'", POWER_CONTROL),
        (r#"ruby -e 'system("shutdown now")'"#, POWER_CONTROL),
        (
            r#"node -e 'require("child_process").execSync("rm -rf build")'"#,
            RECURSIVE_DELETE,
        ),
        (r#"awk 'BEGIN{system("rm -rf build")}'"#, RECURSIVE_DELETE),
        (r#"awk '{print | "sh"}' a.txt"#, PIPE_TO_SHELL),
        ("perl -MFile::Path -e 'rmtree(\"build\")'", RECURSIVE_DELETE),
        (
            "ruby -rfileutils -e 'FileUtils.rm_rf(\"x\")'",
            RECURSIVE_DELETE,
        ),
        ("perl -e 'fork while fork'", FORK_BOMB),
        (
            "echo 'import os; os.system(\"id\")' | python3",
            PROCESS_SPAWN,
        ),
        (
            r#"osascript -e 'do shell script "sudo id"'"#,
            PRIVILEGE_ESCALATION,
        ),
    ]);
}

#[test]
fn runners_that_execute_their_argument_are_read_through() {
    assert_dangerous(&[
        ("toybox rm -rf build", RECURSIVE_DELETE),
        ("screen -dmS job rm -rf build", RECURSIVE_DELETE),
        ("tmux new-session -d 'rm -rf build'", RECURSIVE_DELETE),
        ("systemd-run --user rm -rf build", RECURSIVE_DELETE),
        ("script -qc 'sudo id' /dev/null", PRIVILEGE_ESCALATION),
        ("parallel rm -rf ::: build", RECURSIVE_DELETE),
        ("parallel ::: 'rm -rf build'", RECURSIVE_DELETE),
        ("coproc rm -rf build", RECURSIVE_DELETE),
        ("trap 'rm -rf build' EXIT", RECURSIVE_DELETE),
        (
            "tar -cf x.tar --checkpoint=1 --checkpoint-action=exec='rm -rf build' a.txt",
            RECURSIVE_DELETE,
        ),
        ("ssh -o ProxyCommand='sudo id' host", PRIVILEGE_ESCALATION),
        (
            "git -c core.sshCommand='rm -rf build' fetch",
            RECURSIVE_DELETE,
        ),
        ("command rm -rf build", RECURSIVE_DELETE),
        ("exec rm -rf build", RECURSIVE_DELETE),
    ]);
}

#[test]
fn device_paths_are_judged_after_normalisation() {
    assert_dangerous(&[
        ("dd if=x of=//dev/sda", RAW_DISK_WRITE),
        ("dd if=x of=/./dev/sda", RAW_DISK_WRITE),
        ("dd if=x of=/dev/../dev/sda", RAW_DISK_WRITE),
        ("cp /dev/zero /dev/sda", RAW_DISK_WRITE),
        ("tee /dev/sdb < a.txt", RAW_DISK_WRITE),
        ("cat a.txt > /proc/self/root/dev/sda", RAW_DISK_WRITE),
        ("mkdosfs /dev/sdb1", FILESYSTEM_FORMAT),
        ("mkntfs -f /dev/sdb1", FILESYSTEM_FORMAT),
    ]);
}

#[test]
fn privilege_and_power_control_in_every_spelling_are_dangerous() {
    assert_dangerous(&[
        ("sudoedit /etc/hosts", PRIVILEGE_ESCALATION),
        ("systemctl start poweroff.target", POWER_CONTROL),
        ("systemctl isolate reboot.target", POWER_CONTROL),
        ("loginctl reboot", POWER_CONTROL),
        ("echo b > /proc/sysrq-trigger", POWER_CONTROL),
        (
            "dbus-send --system --print-reply --dest=org.freedesktop.login1 \
             /org/freedesktop/login1 org.freedesktop.login1.Manager.PowerOff boolean:true",
            POWER_CONTROL,
        ),
        (
            "busctl call org.freedesktop.login1 /org/freedesktop/login1 \
             org.freedesktop.login1.Manager Reboot b true",
            POWER_CONTROL,
        ),
    ]);
}

#[test]
fn pipes_into_a_shell_in_every_spelling_are_dangerous() {
    assert_dangerous(&[
        ("curl x | source /dev/stdin", PIPE_TO_SHELL),
        ("cat a.txt | . /dev/stdin", PIPE_TO_SHELL),
        ("echo id | xargs sh -c", PIPE_TO_SHELL),
        ("curl x | tee >(bash)", PIPE_TO_SHELL),
        ("curl x | pwsh -", PIPE_TO_SHELL),
        ("curl x | nice -n 5 bash", PIPE_TO_SHELL),
        ("curl x | env FOO=1 nohup bash", PIPE_TO_SHELL),
        ("curl x | timeout 10s sh", PIPE_TO_SHELL),
        ("echo id | xargs -0 sh -c", PIPE_TO_SHELL),
    ]);
}

#[test]
fn history_and_keys_are_wiped_by_any_tool_that_deletes_or_truncates() {
    assert_dangerous(&[
        ("sed -i d ~/.bash_history", HISTORY_OR_KEY_WIPE),
        (
            "sed -i '/host/d' ~/.ssh/authorized_keys",
            HISTORY_OR_KEY_WIPE,
        ),
        ("gpg --delete-secret-keys me", HISTORY_OR_KEY_WIPE),
        ("rm ~/.zsh_history", HISTORY_OR_KEY_WIPE),
        (
            "truncate -s0 ~/.local/share/fish/fish_history",
            HISTORY_OR_KEY_WIPE,
        ),
        ("cp /dev/null ~/.zhistory", HISTORY_OR_KEY_WIPE),
        ("mv ~/.ssh/id_ed25519 /tmp/x", HISTORY_OR_KEY_WIPE),
    ]);
}

#[test]
fn fork_bombs_under_any_name_are_dangerous() {
    assert_dangerous(&[
        ("boom(){ boom|boom& }; boom", FORK_BOMB),
        ("f() { f & f; }; f", FORK_BOMB),
        ("function g { g | g & }; g", FORK_BOMB),
        ("_(){ _&_; };_", FORK_BOMB),
    ]);
}

#[test]
fn destructive_find_through_a_shell_env_or_xargs_is_dangerous() {
    assert_dangerous(&[
        (
            "find . -name '*.o' -exec sh -c 'rm \"$1\"' _ {} \\;",
            DESTRUCTIVE_FIND,
        ),
        ("find . -exec env rm {} +", DESTRUCTIVE_FIND),
        ("find . -print0 | xargs -0 rm", DESTRUCTIVE_FIND),
        ("find . -type f | xargs unlink", DESTRUCTIVE_FIND),
        ("rsync -a --delete empty/ sub/", RECURSIVE_DELETE),
    ]);
}

#[test]
fn find_with_a_double_dash_still_cannot_write_files_unasked() {
    for line in [
        "find -- . -fprint out.txt",
        "find . -- -fprintf out.txt %p",
        "find -L .",
        "find . -follow",
    ] {
        assert_eq!(shell(line).verdict, Verdict::Ask, "{line:?}");
    }
}

#[test]
fn read_only_commands_that_still_act_ask() {
    for line in [
        "xxd a.txt out.bin",
        "xxd -r a.txt out.bin",
        "uniq a.txt out.txt",
        "date -s 2020-01-01",
        "date --set=tomorrow",
        "date 0101000025",
        "grep -R x .",
        "rg -L x",
        "rg --search-zip x",
    ] {
        assert_eq!(shell(line).verdict, Verdict::Ask, "{line:?}");
    }
    for line in [
        "xxd a.txt",
        "uniq a.txt",
        "date +%s",
        "date -d tomorrow",
        "grep -r x .",
    ] {
        assert!(shell(line).is_auto_safe(), "{line:?}: {:?}", shell(line));
    }
}

#[test]
fn a_line_the_gate_cannot_read_plainly_never_offers_a_family_grant() {
    for line in [
        r"g\it push",
        r"$'git' push",
        "git {push,pull}",
        "git add *.txt",
        "make > log.txt",
        "npm test <<< y",
        "cargo build $FLAGS",
        "dd if=a.txt of=b.txt status=$(id)",
        "sed -n 1p a.txt\n",
    ] {
        let d = shell(line);
        assert!(!d.can_always, "{line:?}: {d:?}");
        assert!(d.no_always_reason.is_some(), "{line:?}");
        assert!(
            d.dangerous_label().is_some() || d.can_always_exact,
            "{line:?}"
        );
    }
    for line in [
        "git commit -m 'fix the bug'",
        "dd if=a.txt of=b.txt",
        "sed -n 1p a.txt",
    ] {
        assert!(shell(line).can_always, "{line:?}: {:?}", shell(line));
    }
}

#[test]
fn runners_are_never_granted_as_a_family() {
    for line in [
        "tmux ls",
        "screen -ls",
        "toybox ls",
        "systemd-run --user true",
        "parallel echo ::: a",
    ] {
        let d = shell(line);
        assert!(!d.can_always, "{line:?}: {d:?}");
    }
}

#[test]
fn ordinary_lines_near_the_dangerous_ones_stay_ordinary() {
    for line in [
        "git commit -m 'exec=grep is fixed'",
        "echo 'sudo make me a sandwich'",
        "systemctl status nginx",
        "gpg --list-keys",
        "cp a.txt b.txt",
        "dd if=a.txt of=/dev/null",
        "perl -ne 'print if /x/' a.txt",
        "awk '{print $1}' a.txt",
        "tar -czf out.tgz sub",
        "find . -name '*.rs' -exec grep -l x {} +",
        "rsync -a sub/ backup/",
        "ls | xargs grep -l main",
    ] {
        assert_eq!(shell(line).dangerous_label(), None, "{line:?}");
    }
}
