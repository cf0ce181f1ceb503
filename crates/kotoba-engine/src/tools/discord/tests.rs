//! The server tools' rules without Discord: what discord_act refuses before its card and
//! why, a batch resolving against what its earlier changes make, and where the server
//! tools are offered.

use super::action::Action;
use super::batch::check;
use super::guild::{Channel, ChannelKind, Guild, Member, Role, VIEW_CHANNEL};

const MANAGE_CHANNELS: u64 = 1 << 4;
const MANAGE_ROLES: u64 = 1 << 28;

fn role(id: u64, name: &str, position: i64, permissions: u64) -> Role {
    Role {
        id,
        name: name.into(),
        colour: 0,
        hoist: false,
        mentionable: false,
        position,
        permissions,
        managed: false,
    }
}

fn member(id: u64, name: &str, roles: &[u64]) -> Member {
    Member {
        id,
        username: name.into(),
        display: name.into(),
        roles: roles.to_vec(),
        bot: false,
    }
}

/// Her (id 9) with Manage Channels and Manage Roles at position 5; @seniors above her.
fn server(her_permissions: u64) -> Guild {
    Guild {
        id: 1,
        name: "g".into(),
        owner: 2,
        me: 9,
        here: 50,
        channels: vec![Channel {
            id: 50,
            name: "general".into(),
            kind: ChannelKind::Text,
            parent: None,
            position: 0,
            topic: None,
            slowmode: 0,
            overwrites: vec![],
        }],
        roles: vec![
            role(1, "@everyone", 0, VIEW_CHANNEL),
            role(20, "her", 5, her_permissions),
            role(21, "seniors", 7, 0),
            role(22, "juniors", 2, 0),
        ],
        members: vec![
            member(9, "kotoba", &[20]),
            member(2, "owner", &[]),
            member(3, "wren", &[22]),
            member(4, "sage", &[21]),
        ],
    }
}

fn act(op: &str, target: &str) -> Action {
    Action {
        op: op.into(),
        target: Some(target.into()),
        ..Action::default()
    }
}

#[test]
fn a_role_or_person_at_or_above_her_top_role_is_refused_by_name() {
    let g = server(MANAGE_CHANNELS | MANAGE_ROLES);
    let give = Action {
        user: Some("wren".into()),
        ..act("give_role", "@seniors")
    };
    let nick = Action {
        user: Some("sage".into()),
        value: Some("boss".into()),
        ..act("nickname", "")
    };
    let (ok, refused) = check(&g, &[give, act("rename_role", "@her"), nick], &[]);
    assert!(ok.is_empty(), "{ok:?}");
    assert!(
        refused[0].contains("@seniors is at or above my highest role"),
        "{refused:?}"
    );
    assert!(refused[1].starts_with("Refused change 2"), "{refused:?}");
    assert!(
        refused[2].contains("lack the permission") || refused[2].contains("sage holds a role"),
        "{refused:?}"
    );
}

#[test]
fn a_change_she_lacks_the_permission_for_is_refused_naming_the_permission() {
    let g = server(MANAGE_CHANNELS);
    let (ok, refused) = check(
        &g,
        &[act("create_role", "mods"), act("create_channel", "art")],
        &[],
    );
    assert_eq!(ok.len(), 1);
    assert!(
        refused[0].contains("I lack the permission for creating roles here (manage_roles)"),
        "{refused:?}"
    );
}

#[test]
fn a_batch_resolves_later_changes_against_what_its_earlier_ones_make() {
    let g = server(MANAGE_CHANNELS | MANAGE_ROLES);
    let private = Action {
        roles: vec!["@mods".into()],
        ..act("make_private", "#mod-chat")
    };
    let alone = check(&g, std::slice::from_ref(&private), &[]);
    assert!(
        alone.0.is_empty(),
        "without the batch the channel does not exist"
    );
    let (ok, refused) = check(
        &g,
        &[
            act("create_role", "mods"),
            act("create_channel", "mod-chat"),
            private,
        ],
        &[],
    );
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(ok.len(), 3);
    assert!(
        ok[2].2.line.contains("only @mods (and me)"),
        "{}",
        ok[2].2.line
    );
}

#[test]
fn bad_arguments_say_what_was_wrong() {
    let g = server(MANAGE_CHANNELS | MANAGE_ROLES);
    let (_, refused) = check(
        &g,
        &[
            act("explode", "x"),
            Action {
                value: Some("purple-ish".into()),
                ..act("recolor_role", "@juniors")
            },
            Action {
                value: Some("podcast".into()),
                ..act("create_channel", "x")
            },
        ],
        &[],
    );
    assert!(
        refused[0].contains("'explode' is not an op; use one of: create_channel"),
        "{refused:?}"
    );
    assert!(
        refused[1].contains("'purple-ish' is not a colour"),
        "{refused:?}"
    );
    assert!(
        refused[2].contains("'podcast' is not a channel kind"),
        "{refused:?}"
    );
}

#[test]
fn the_server_tools_are_offered_only_in_a_conversation_on_discord() {
    use crate::tools::{Availability, Tool};
    use kotoba_core::protocol::{Mode, Origin};
    let slot = super::PortSlot::default();
    struct Nothing;
    #[async_trait::async_trait]
    impl super::DiscordPort for Nothing {
        async fn read_history(
            &self,
            _: &kotoba_core::turn::TurnContext,
            _: Option<&str>,
            _: usize,
        ) -> Result<String, super::PortError> {
            Err(super::PortError::NotConnected)
        }
        async fn people(
            &self,
            _: &kotoba_core::turn::TurnContext,
            _: Option<&str>,
        ) -> Result<String, super::PortError> {
            Err(super::PortError::NotConnected)
        }
    }
    slot.set(Some(std::sync::Arc::new(Nothing)));
    let tool = super::DiscordAct::new(slot);
    let settings = kotoba_core::config::Settings::default();
    let on = |origin: &Origin| {
        tool.available(&Availability {
            mode: Mode::Companion,
            recent_user_messages: &[],
            settings: &settings,
            origin,
        })
    };
    assert!(on(&Origin::Discord {
        user: 3,
        owner: false
    }));
    assert!(!on(&Origin::Owner));
}

#[test]
fn a_batch_past_twenty_or_with_an_unknown_key_is_refused_saying_what_to_fix() {
    use serde_json::json;
    let many: Vec<_> = (0..21)
        .map(|_| json!({"op": "create_channel", "target": "x"}))
        .collect();
    let too_many = super::batch::parse(&json!({ "actions": many }), "actions", 20, "discord_act");
    assert!(too_many.is_err_and(|e| e
        .to_string()
        .contains("at most 20 changes in one call, not 21; split them")),);
    let odd = json!({"actions": [{"op": "kick", "who": "gus"}]});
    let malformed = super::batch::parse(&odd, "actions", 20, "discord_act");
    assert!(
        malformed.as_ref().is_err_and(|e| e
            .to_string()
            .contains("change 1 of discord_act is malformed: unknown field `who`")),
        "{malformed:?}"
    );
    let none = super::batch::parse(&json!({}), "actions", 20, "discord_act");
    assert!(none.is_err_and(|e| e.to_string().contains("needs `actions`")));
}
