//! discord_act's declarative actions resolved one at a time against
//! the server as it stands (names to ids, her limits: never Administrator, never at or
//! above her top role, never what she lacks the permission for) into a [`Change`], the
//! card's line for it and the permission it needs. Pure: tested without Discord.

use serde_json::Value;

use super::action::{Action, Mark, Refusal, Resolved, OPS};
use super::change::Change;
use super::guild::{
    colour, permission_bit, permission_names, Channel, ChannelKind, Guild, Overwrite, Role,
    ADMINISTRATOR, VIEW_CHANNEL,
};

const MANAGE_CHANNELS: u64 = 1 << 4;
const MANAGE_ROLES: u64 = 1 << 28;
const KICK_MEMBERS: u64 = 1 << 1;
const BAN_MEMBERS: u64 = 1 << 2;
const MODERATE_MEMBERS: u64 = 1 << 40;
const MOVE_MEMBERS: u64 = 1 << 24;
const MANAGE_NICKNAMES: u64 = 1 << 27;
const SEND_MESSAGES: u64 = 1 << 11;

fn text_of(v: &Option<Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(b)) => Some(b.to_string()),
        _ => None,
    }
}

fn need<'a>(v: &'a Option<String>, what: &str, op: &str) -> Result<&'a str, Refusal> {
    match v.as_deref().map(str::trim) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(format!("{op} needs `{what}`")),
    }
}

fn bits_of(names: &[String]) -> Result<u64, Refusal> {
    let mut bits = 0;
    for n in names {
        bits |= permission_bit(n).ok_or_else(|| {
            format!("'{n}' is not a Discord permission name (for example view_channel, send_messages, manage_messages)")
        })?;
    }
    Ok(bits)
}

/// What she is in this server: the checks every action passes.
struct Her<'a> {
    g: &'a Guild,
    perms: u64,
    top: i64,
}

impl Her<'_> {
    fn may(&self, bits: u64, what: &str) -> Result<(), Refusal> {
        let missing = bits & !self.perms;
        if missing == 0 {
            return Ok(());
        }
        Err(format!(
            "I lack the permission for {what} here ({})",
            permission_names(missing).join(", ")
        ))
    }

    fn role_below(&self, r: &Role) -> Result<(), Refusal> {
        if r.id != self.g.id && r.position >= self.top {
            return Err(format!(
                "@{} is at or above my highest role, so I may not change it",
                r.name
            ));
        }
        Ok(())
    }

    fn person_below(&self, user: u64) -> Result<(), Refusal> {
        let name = self.g.member_name(user);
        if user == self.g.owner {
            return Err(format!("{name} is the server owner, whom I never act on"));
        }
        if user == self.g.me {
            return Err("that is me; I do not act on myself".into());
        }
        if self.g.top_of(user) >= self.top {
            return Err(format!(
                "{name} holds a role at or above my highest role, so I may not act on them"
            ));
        }
        Ok(())
    }
}

fn channel<'a>(g: &'a Guild, raw: &str) -> Result<&'a Channel, Refusal> {
    g.channel(raw)
        .ok_or_else(|| format!("there is no channel or category '{raw}' here"))
}

fn role<'a>(g: &'a Guild, raw: &str) -> Result<&'a Role, Refusal> {
    g.role(raw)
        .ok_or_else(|| format!("there is no role '{raw}' here"))
}

fn person(g: &Guild, raw: &str) -> Result<u64, Refusal> {
    g.member(raw)
        .map(|m| m.id)
        .ok_or_else(|| format!("there is nobody called '{raw}' in this server"))
}

/// An overwrite subject: a role, else a person.
fn subject(g: &Guild, raw: &str) -> Result<(u64, bool, String), Refusal> {
    if let Some(r) = g.role(raw) {
        return Ok((r.id, false, format!("@{}", r.name)));
    }
    if let Some(m) = g.member(raw) {
        return Ok((m.id, true, m.display.clone()));
    }
    Err(format!("there is no role or person '{raw}' here"))
}

/// Allow and deny bits for one role (or person, `member`) in `list`: added to its
/// overwrite, a newly allowed bit no longer denied and the other way round, or a new
/// overwrite. Making a channel private and setting permissions change overwrites this
/// one way.
fn overwrite(list: &mut Vec<Overwrite>, id: u64, member: bool, allow: u64, deny: u64) {
    match list.iter_mut().find(|o| o.id == id && o.member == member) {
        Some(o) => {
            o.allow = (o.allow | allow) & !deny;
            o.deny = (o.deny | deny) & !allow;
        }
        None => list.push(Overwrite {
            id,
            member,
            allow,
            deny,
        }),
    }
}

/// The overwrites of a channel made private to `who` (and her, so she keeps it).
fn private_overwrites(
    g: &Guild,
    base: &[Overwrite],
    who: &[String],
) -> Result<(Vec<Overwrite>, Vec<String>), Refusal> {
    let mut list: Vec<Overwrite> = base.to_vec();
    let mut names = Vec::new();
    let mut put = |id, member, allow, deny| overwrite(&mut list, id, member, allow, deny);
    put(g.id, false, 0, VIEW_CHANNEL);
    for raw in who {
        let (id, member, name) = subject(g, raw)?;
        put(id, member, VIEW_CHANNEL, 0);
        names.push(name);
    }
    put(g.me, true, VIEW_CHANNEL, 0);
    Ok((list, names))
}

/// Resolve action `a` against `g`; `here` is the conversation's channel.
pub fn resolve(g: &Guild, a: &Action, here: u64) -> Result<Resolved, Refusal> {
    let her = Her {
        g,
        perms: g.permissions_of(g.me),
        top: g.my_top_role().map(|r| r.position).unwrap_or(0),
    };
    let op = a.op.trim();
    let plain = |change, line: String, needs| Resolved {
        change,
        line,
        needs,
        mark: Mark::Plain,
    };
    let r = match op {
        "create_channel" | "create_category" => {
            let name = need(&a.target, "target (the new name)", op)?;
            let kind = if op == "create_category" {
                ChannelKind::Category
            } else {
                let word = text_of(&a.value).unwrap_or_default();
                ChannelKind::named(&word).ok_or_else(|| {
                    format!(
                        "'{word}' is not a channel kind (text, voice, forum, stage, announcement)"
                    )
                })?
            };
            let parent = match (&a.to, kind) {
                (Some(to), k) if k != ChannelKind::Category && !to.trim().is_empty() => {
                    let c = channel(g, to)?;
                    if c.kind != ChannelKind::Category {
                        return Err(format!("'{to}' is not a category"));
                    }
                    Some(c.id)
                }
                _ => None,
            };
            let (overwrites, who) = if a.roles.is_empty() {
                (Vec::new(), Vec::new())
            } else {
                private_overwrites(g, &[], &a.roles)?
            };
            let mut needs = MANAGE_CHANNELS;
            if !overwrites.is_empty() {
                needs |= MANAGE_ROLES;
            }
            her.may(needs, "creating channels")?;
            let mut line = format!("create {} '{name}'", kind.word());
            if let Some(p) = parent.and_then(|p| g.channels.iter().find(|c| c.id == p)) {
                line.push_str(&format!(" in {}", p.name));
            }
            if !who.is_empty() {
                line.push_str(&format!(", private to {}", who.join(", ")));
            }
            plain(
                Change::CreateChannel {
                    name: name.to_string(),
                    kind,
                    parent,
                    topic: a.topic.clone(),
                    overwrites,
                },
                line,
                needs,
            )
        }
        "rename_channel" | "rename_category" => {
            let c = channel(g, need(&a.target, "target", op)?)?;
            let to = need(&a.to, "to (the new name)", op)?;
            her.may(MANAGE_CHANNELS, "renaming channels")?;
            plain(
                Change::EditChannel {
                    channel: c.id,
                    name: Some(to.to_string()),
                    parent: None,
                    topic: None,
                    slowmode: None,
                    overwrites: None,
                },
                format!("rename {} '{}' to '{to}'", c.kind.word(), c.name),
                MANAGE_CHANNELS,
            )
        }
        "move_channel" => {
            let c = channel(g, need(&a.target, "target", op)?)?;
            let to = a.to.as_deref().unwrap_or("").trim();
            let parent = if to.is_empty() || to.eq_ignore_ascii_case("none") {
                None
            } else {
                let p = channel(g, to)?;
                if p.kind != ChannelKind::Category {
                    return Err(format!("'{to}' is not a category"));
                }
                Some(p.id)
            };
            her.may(MANAGE_CHANNELS, "moving channels")?;
            let dest = match parent {
                Some(_) => format!("into {to}"),
                None => "out of its category".into(),
            };
            plain(
                Change::EditChannel {
                    channel: c.id,
                    name: None,
                    parent: Some(parent),
                    topic: None,
                    slowmode: None,
                    overwrites: None,
                },
                format!("move #{} {dest}", c.name),
                MANAGE_CHANNELS,
            )
        }
        "set_topic" => {
            let c = channel(g, need(&a.target, "target", op)?)?;
            let topic = a
                .topic
                .clone()
                .or_else(|| text_of(&a.value))
                .unwrap_or_default();
            her.may(MANAGE_CHANNELS, "setting topics")?;
            plain(
                Change::EditChannel {
                    channel: c.id,
                    name: None,
                    parent: None,
                    topic: Some(topic.clone()),
                    slowmode: None,
                    overwrites: None,
                },
                format!("set the topic of #{} to \"{topic}\"", c.name),
                MANAGE_CHANNELS,
            )
        }
        "set_slowmode" => {
            let c = channel(g, need(&a.target, "target", op)?)?;
            let secs = text_of(&a.value)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|s| *s <= 21_600)
                .ok_or("set_slowmode needs `value`: seconds from 0 to 21600")?;
            her.may(MANAGE_CHANNELS, "setting slowmode")?;
            plain(
                Change::EditChannel {
                    channel: c.id,
                    name: None,
                    parent: None,
                    topic: None,
                    slowmode: Some(secs),
                    overwrites: None,
                },
                format!("set slowmode of #{} to {secs} s", c.name),
                MANAGE_CHANNELS,
            )
        }
        "delete_channel" | "delete_category" => {
            let c = channel(g, need(&a.target, "target", op)?)?;
            her.may(MANAGE_CHANNELS, "deleting channels")?;
            Resolved {
                change: Change::DeleteChannel { channel: c.id },
                line: format!(
                    "delete {} '{}' (its messages go with it)",
                    c.kind.word(),
                    c.name
                ),
                needs: MANAGE_CHANNELS,
                mark: Mark::Delete,
            }
        }
        "create_role" => {
            let name = need(&a.target, "target (the new name)", op)?;
            let permissions = bits_of(&a.allow)?;
            if permissions & ADMINISTRATOR != 0 {
                return Err("I never give the Administrator permission to anyone".into());
            }
            let colour = match text_of(&a.value) {
                Some(v) => Some(colour(&v).ok_or_else(|| format!("'{v}' is not a colour"))?),
                None => None,
            };
            her.may(MANAGE_ROLES, "creating roles")?;
            her.may(permissions, "giving those permissions to a role")?;
            let mut line = format!("create role @{name}");
            if permissions != 0 {
                line.push_str(&format!(
                    " with {}",
                    permission_names(permissions).join(", ")
                ));
            }
            plain(
                Change::CreateRole {
                    name: name.to_string(),
                    colour,
                    hoist: a.hoist,
                    mentionable: a.mentionable,
                    permissions,
                },
                line,
                MANAGE_ROLES,
            )
        }
        "rename_role" | "recolor_role" | "set_role_flags" => {
            let r = role(g, need(&a.target, "target", op)?)?;
            her.may(MANAGE_ROLES, "changing roles")?;
            her.role_below(r)?;
            let (name, col, line) = match op {
                "rename_role" => {
                    let to = need(&a.to, "to (the new name)", op)?;
                    (
                        Some(to.to_string()),
                        None,
                        format!("rename role @{} to @{to}", r.name),
                    )
                }
                "recolor_role" => {
                    let v = text_of(&a.value)
                        .ok_or("recolor_role needs `value`: a colour like #ff8800")?;
                    let c = colour(&v).ok_or_else(|| format!("'{v}' is not a colour"))?;
                    (
                        None,
                        Some(c),
                        format!("recolour role @{} to #{c:06x}", r.name),
                    )
                }
                _ => {
                    if a.hoist.is_none() && a.mentionable.is_none() {
                        return Err("set_role_flags needs `hoist` or `mentionable`".into());
                    }
                    let flag = |n: &str, v: Option<bool>| {
                        v.map(|v| format!("{n} {}", if v { "on" } else { "off" }))
                    };
                    let words: Vec<String> =
                        [flag("hoist", a.hoist), flag("mentionable", a.mentionable)]
                            .into_iter()
                            .flatten()
                            .collect();
                    (None, None, format!("set @{}: {}", r.name, words.join(", ")))
                }
            };
            plain(
                Change::EditRole {
                    role: r.id,
                    name,
                    colour: col,
                    hoist: a.hoist,
                    mentionable: a.mentionable,
                },
                line,
                MANAGE_ROLES,
            )
        }
        "delete_role" => {
            let r = role(g, need(&a.target, "target", op)?)?;
            her.may(MANAGE_ROLES, "deleting roles")?;
            her.role_below(r)?;
            Resolved {
                change: Change::DeleteRole { role: r.id },
                line: format!("delete role @{} (held by {})", r.name, g.holders_of(r.id)),
                needs: MANAGE_ROLES,
                mark: Mark::Delete,
            }
        }
        "give_role" | "take_role" => {
            let r = role(g, need(&a.target, "target (the role)", op)?)?;
            let who = a.user.as_ref().or(a.to.as_ref());
            let user = person(g, need(&who.cloned(), "user", op)?)?;
            if op == "give_role" && r.permissions & ADMINISTRATOR != 0 {
                return Err(format!(
                    "@{} carries the Administrator permission, which I never give to anyone",
                    r.name
                ));
            }
            if r.managed || r.id == g.id {
                return Err(format!("@{} cannot be given or taken by hand", r.name));
            }
            her.may(MANAGE_ROLES, "giving and taking roles")?;
            her.role_below(r)?;
            let name = g.member_name(user);
            let (change, line) = if op == "give_role" {
                (
                    Change::GiveRole { user, role: r.id },
                    format!("give {name} the role @{}", r.name),
                )
            } else {
                (
                    Change::TakeRole { user, role: r.id },
                    format!("take @{} from {name}", r.name),
                )
            };
            plain(change, line, MANAGE_ROLES)
        }
        "kick" | "ban" | "timeout" | "nickname" => {
            let who = a.user.as_ref().or(a.target.as_ref());
            let user = person(g, need(&who.cloned(), "user", op)?)?;
            let name = g.member_name(user);
            let (change, line, needs, mark) = match op {
                "kick" => (
                    Change::Kick { user },
                    format!("kick {name}"),
                    KICK_MEMBERS,
                    Mark::Kick,
                ),
                "ban" => (
                    Change::Ban { user },
                    format!("ban {name}"),
                    BAN_MEMBERS,
                    Mark::Ban,
                ),
                "timeout" => {
                    let minutes = text_of(&a.value)
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .filter(|m| (1..=40_320).contains(m))
                        .ok_or("timeout needs `value`: minutes from 1 to 40320 (28 days)")?;
                    (
                        Change::Timeout { user, minutes },
                        format!("time out {name} for {minutes} min"),
                        MODERATE_MEMBERS,
                        Mark::Timeout,
                    )
                }
                _ => {
                    let nick = text_of(&a.value)
                        .or_else(|| a.to.clone())
                        .unwrap_or_default();
                    let line = if nick.is_empty() {
                        format!("clear {name}'s nickname")
                    } else {
                        format!("set {name}'s nickname to '{nick}'")
                    };
                    (
                        Change::Nickname { user, nick },
                        line,
                        MANAGE_NICKNAMES,
                        Mark::Plain,
                    )
                }
            };
            her.may(needs, &format!("{op} here"))?;
            her.person_below(user)?;
            Resolved {
                change,
                line,
                needs,
                mark,
            }
        }
        "move_to_voice" => {
            let who = a.user.as_ref().or(a.target.as_ref());
            let user = person(g, need(&who.cloned(), "user", op)?)?;
            let c = channel(g, need(&a.to, "to (the voice channel)", op)?)?;
            if !matches!(c.kind, ChannelKind::Voice | ChannelKind::Stage) {
                return Err(format!("#{} is not a voice channel", c.name));
            }
            her.may(MOVE_MEMBERS, "moving people between voice channels")?;
            plain(
                Change::MoveToVoice {
                    user,
                    channel: c.id,
                },
                format!(
                    "move {} to the voice channel {}",
                    g.member_name(user),
                    c.name
                ),
                MOVE_MEMBERS,
            )
        }
        "post_message" => {
            let text = text_of(&a.value)
                .filter(|t| !t.trim().is_empty())
                .ok_or("post_message needs `value`: the text")?;
            let c = match a.target.as_deref() {
                Some(t) if !t.trim().is_empty() => channel(g, t)?.id,
                _ => here,
            };
            her.may(SEND_MESSAGES, "posting")?;
            let cname = g
                .channels
                .iter()
                .find(|x| x.id == c)
                .map(|x| x.name.clone())
                .unwrap_or_else(|| "this channel".into());
            plain(
                Change::Post {
                    channel: c,
                    text: text.clone(),
                },
                format!(
                    "post in #{cname}: \"{}\"",
                    crate::tools::clip_chars(&text, 120)
                ),
                SEND_MESSAGES,
            )
        }
        "set_permissions" | "make_private" | "make_public" => {
            let c = channel(g, need(&a.target, "target", op)?)?;
            let (overwrites, line) = match op {
                "make_private" => {
                    let (list, who) = private_overwrites(g, &c.overwrites, &a.roles)?;
                    let only = if who.is_empty() {
                        "only me".to_string()
                    } else {
                        format!("only {} (and me)", who.join(", "))
                    };
                    (list, format!("make #{} private: {only}", c.name))
                }
                "make_public" => {
                    let mut list = c.overwrites.clone();
                    for o in list.iter_mut().filter(|o| !o.member && o.id == g.id) {
                        o.deny &= !VIEW_CHANNEL;
                    }
                    list.retain(|o| o.allow != 0 || o.deny != 0);
                    (
                        list,
                        format!("make #{} public: everyone can see it", c.name),
                    )
                }
                _ => {
                    if a.roles.is_empty() {
                        return Err(
                            "set_permissions needs `roles`: the roles or people it sets".into()
                        );
                    }
                    let (allow, deny) = (bits_of(&a.allow)?, bits_of(&a.deny)?);
                    if allow & ADMINISTRATOR != 0 {
                        return Err("I never give the Administrator permission to anyone".into());
                    }
                    if allow == 0 && deny == 0 {
                        return Err(
                            "set_permissions needs `allow` or `deny`: permission names".into()
                        );
                    }
                    let mut list = c.overwrites.clone();
                    let mut who = Vec::new();
                    for raw in &a.roles {
                        let (id, member, name) = subject(g, raw)?;
                        who.push(name);
                        overwrite(&mut list, id, member, allow, deny);
                    }
                    her.may(allow | deny, "granting those permissions")?;
                    let mut words = Vec::new();
                    if allow != 0 {
                        words.push(format!("allow {}", permission_names(allow).join(", ")));
                    }
                    if deny != 0 {
                        words.push(format!("deny {}", permission_names(deny).join(", ")));
                    }
                    (
                        list,
                        format!(
                            "in #{} for {}: {}",
                            c.name,
                            who.join(", "),
                            words.join("; ")
                        ),
                    )
                }
            };
            her.may(
                MANAGE_CHANNELS | MANAGE_ROLES,
                "changing who can see channels",
            )?;
            plain(
                Change::EditChannel {
                    channel: c.id,
                    name: None,
                    parent: None,
                    topic: None,
                    slowmode: None,
                    overwrites: Some(overwrites),
                },
                line,
                MANAGE_CHANNELS | MANAGE_ROLES,
            )
        }
        "set_forum" | "forum_post" => {
            let r = super::forum::resolve(g, a, op)?;
            her.may(r.needs, "setting up forums and posting in them")?;
            r
        }
        other => {
            return Err(format!(
                "'{other}' is not an op; use one of: {}",
                OPS.join(", ")
            ))
        }
    };
    Ok(r)
}
