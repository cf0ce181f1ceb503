//! Discord user ids on the wire: a card's owners are `u64` in the code and text in its
//! JSON (`["123"]`), as every stored card, the page and the shared store have always
//! had them; an entry that is no id (written by an older version) is skipped on the way
//! in, so it never names anyone.

use serde::{Deserialize, Deserializer, Serializer};

/// Write `ids` as a list of texts.
pub(super) fn serialize<S: Serializer>(ids: &[u64], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(ids.iter().map(u64::to_string))
}

/// An entry as it may have been written: text (today's) or a number.
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Number(u64),
    Text(String),
}

/// Read a list of ids written as texts (or numbers); an entry that is no id is skipped.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    let written = Vec::<Written>::deserialize(d)?;
    Ok(written
        .into_iter()
        .filter_map(|w| match w {
            Written::Number(n) => Some(n),
            Written::Text(t) => t.trim().parse().ok(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::protocol::Answerers;

    #[test]
    fn a_cards_owner_ids_keep_their_wire_form_as_text() {
        let owners = Answerers::Owners {
            ids: vec![100, 200],
            approvers: vec!["role:7".into()],
        };
        let json = serde_json::to_string(&owners).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"owners","ids":["100","200"],"approvers":["role:7"]}"#
        );
        assert_eq!(serde_json::from_str::<Answerers>(&json).unwrap(), owners);
        // As an older version may have kept it: a number, and an entry that is no id.
        let older = r#"{"kind":"holders","owners":["100",200,"me"],"local":false,"asker":"5","asker_needs":[],"anyone_with":[]}"#;
        match serde_json::from_str::<Answerers>(older).unwrap() {
            Answerers::Holders { owners, .. } => assert_eq!(owners, [100, 200]),
            other => panic!("{other:?}"),
        }
    }
}
