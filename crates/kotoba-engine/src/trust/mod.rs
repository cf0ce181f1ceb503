//! Local trust: nobody else on the machine is her owner, and nothing she runs reads her
//! secrets: the page's token ([`token`]; the page checks it in `surfaces/web/auth.rs`),
//! what her children inherit ([`child_env`]) and the modes of her files ([`modes`]), and
//! the lines `kotoba doctor` prints about all three ([`report`]).

pub mod child_env;
pub mod modes;
pub mod token;

use std::path::PathBuf;

use kotoba_core::config::{Config, WebAuth};

/// What `serve` leaves untightened in the data folder: the workspace's contents.
pub fn private_skip(config: &Config) -> Vec<PathBuf> {
    vec![config.workspace(&config.settings())]
}

/// `kotoba doctor`'s lines: how the page is guarded, the data folder's modes, and what
/// children do not get. Nothing secret is printed.
pub fn report(config: &Config) -> Vec<(&'static str, String)> {
    let s = config.settings();
    let token_path = token::token_path(config);
    let auth = if s
        .web_password
        .as_ref()
        .is_some_and(|p| !p.0.trim().is_empty())
    {
        "password (web_password); the token also works for scripts".to_string()
    } else if s.web_auth == WebAuth::None {
        "NONE (web_auth: none): anyone on this machine who reaches the page is the owner — \
         remove it unless you alone use this machine"
            .to_string()
    } else if config.env(token::TOKEN_ENV).is_some() {
        "token (KOTOBA_WEB_TOKEN); `kotoba serve` prints the page's address with it".to_string()
    } else if token_path.exists() {
        format!(
            "token (kept in {}); `kotoba serve` prints the page's address with it",
            token_path.display()
        )
    } else {
        format!(
            "token (made at the first start in {}); `kotoba serve` prints the page's address with it",
            token_path.display()
        )
    };
    let home = &config.paths.home;
    let loose = modes::looser(home, &private_skip(config));
    let files = if !home.exists() {
        "the data folder does not exist yet (it is made 0700)".to_string()
    } else if loose.is_empty() {
        "private (folders 0700, files 0600)".to_string()
    } else {
        format!(
            "{} path(s) others can reach, e.g. {} — `kotoba serve` makes them private at start",
            loose.len(),
            loose[0].display()
        )
    };
    let policy = child_env::ChildEnv::of(config);
    let withheld = policy.withheld().len();
    let kept = if policy.kept().is_empty() {
        "none".to_string()
    } else {
        policy.kept().join(", ")
    };
    let env = format!(
        "children get her environment without her secrets and names holding {} \
         ({withheld} variable(s) withheld here; shell.env_keep: {kept})",
        child_env::SECRET_WORDS.join("/")
    );
    vec![
        ("page login", auth),
        ("file modes", files),
        ("child env", env),
    ]
}
