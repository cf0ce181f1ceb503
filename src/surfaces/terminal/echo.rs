//! Turning the terminal's echo off while a secret is typed, and back on after. Only
//! when standard input is a terminal; piped input is read as it comes.

use std::io::IsTerminal;

use nix::sys::termios::{tcgetattr, tcsetattr, LocalFlags, SetArg};

fn set(echo: bool) {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return;
    }
    let Ok(mut attrs) = tcgetattr(&stdin) else {
        return;
    };
    attrs.local_flags.set(LocalFlags::ECHO, echo);
    if let Err(e) = tcsetattr(&stdin, SetArg::TCSANOW, &attrs) {
        tracing::debug!("terminal echo: {e}");
    }
}

/// Stop showing what is typed.
pub(super) fn off() {
    set(false);
}

/// Show what is typed again.
pub(super) fn on() {
    set(true);
}
