//! Whose memory a call reads and writes: a notebook for every person. The owner's turns
//! (the page, the terminal, `/v1`, an owner on Discord) use her memory
//! (`memory/MEMORY.md`, `memory/topics/`); anyone else's turn uses their own notebook,
//! kept by their Discord id (`memory/people/<id>/`, the same layout; with the shared store,
//! the rows of notebook `<id>`). A guest's turn never reaches the owner's memory or
//! another person's notebook; the owner may read any person's (`memory_recall` with
//! `person`).

use std::path::{Path, PathBuf};

use kotoba_core::protocol::{Mention, Origin};

/// One notebook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notebook {
    /// Her own memory, the owner's.
    Owner,
    /// A person's, by their Discord user id.
    Person(u64),
}

impl Notebook {
    /// The notebook of the person a turn speaks for; `None` for nobody in particular (a
    /// turn whose starter is not known), who has none.
    pub fn of(origin: &Origin) -> Option<Notebook> {
        match origin {
            Origin::Owner | Origin::Discord { owner: true, .. } => Some(Notebook::Owner),
            Origin::Discord { user: 0, .. } => None,
            Origin::Discord { user, .. } => Some(Notebook::Person(*user)),
        }
    }

    /// Its key in the shared store: `""` for the owner's, else the Discord id.
    pub fn key(self) -> String {
        match self {
            Notebook::Owner => String::new(),
            Notebook::Person(id) => id.to_string(),
        }
    }

    /// Its Markdown folder in data folder `home`.
    pub fn dir(self, home: &Path) -> PathBuf {
        let memory = home.join("memory");
        match self {
            Notebook::Owner => memory,
            Notebook::Person(id) => memory.join("people").join(id.to_string()),
        }
    }

    /// The notebook a `person` argument names (a Discord id or a `<@id>` mention).
    pub fn named(raw: &str) -> Option<Notebook> {
        let id = match Mention::parse(raw) {
            Some(Mention::Person(id)) => id,
            Some(Mention::Role(_)) => return None,
            None => raw.trim().parse().ok()?,
        };
        (id != 0).then_some(Notebook::Person(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_writes_her_memory_a_member_their_own_notebook_and_nobody_none() {
        let home = Path::new("/k");
        let owner = Notebook::of(&Origin::Owner).unwrap();
        assert_eq!(
            owner,
            Notebook::of(&Origin::Discord {
                user: 1,
                owner: true
            })
            .unwrap()
        );
        assert_eq!(owner.dir(home), Path::new("/k/memory"));
        let gus = Notebook::of(&Origin::Discord {
            user: 2,
            owner: false,
        })
        .unwrap();
        assert_eq!(gus.dir(home), Path::new("/k/memory/people/2"));
        assert_eq!((owner.key(), gus.key()), (String::new(), "2".to_string()));
        assert_eq!(
            Notebook::of(&Origin::Discord {
                user: 0,
                owner: false
            }),
            None
        );
        assert_eq!(Notebook::named("<@!42>"), Some(Notebook::Person(42)));
        assert_eq!(Notebook::named(" 42 "), Some(Notebook::Person(42)));
        assert_eq!(Notebook::named("gus"), None);
    }
}
