//! What she keeps about a Discord server: one short fact per row about a member (how she
//! knows it: said, told by someone else, observed; where she heard it and from whom, so a
//! turn is told only what its person could have heard), the newest kept per person; and
//! the plans of discord_plan with the journal of the steps applied.

use super::db::args;
use super::seen::{as_i64, as_u64};
use super::{now_ms, Store, StoreError};

/// The most facts kept per person; older ones go.
pub(super) const FACTS_PER_PERSON: usize = 20;

/// One fact about a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonFact {
    /// Their user id.
    pub user: u64,
    /// Their name when it was written.
    pub name: String,
    /// The fact.
    pub fact: String,
    /// said, told or observed.
    pub source: String,
    /// Who it came from.
    pub by: String,
    /// The channel (or thread) she heard it in; 0: not known (a fact kept before this
    /// was recorded), which only owners are told.
    pub heard_in: u64,
    /// The Discord user id of the person who told her; 0: not known.
    pub told_by: u64,
}

impl Store {
    /// Keep fact `f` about a member of `guild`, with where she heard it and from whom,
    /// dropping the member's oldest past [`FACTS_PER_PERSON`].
    pub async fn add_person_fact(&self, guild: u64, f: &PersonFact) -> Result<(), StoreError> {
        let (g, u) = (as_i64(guild), as_i64(f.user));
        let (heard_in, told_by) = (as_i64(f.heard_in), as_i64(f.told_by));
        self.tx(async |c| {
            c.execute(
                "INSERT INTO people_facts(guild, \"user\", name, fact, source, by, at_ms,
                   heard_in, told_by)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                args![
                    g,
                    u,
                    f.name.as_str(),
                    f.fact.as_str(),
                    f.source.as_str(),
                    f.by.as_str(),
                    now_ms(),
                    heard_in,
                    told_by
                ],
            )
            .await?;
            c.execute(
                "DELETE FROM people_facts WHERE guild = ?1 AND \"user\" = ?2 AND id NOT IN
                   (SELECT id FROM people_facts WHERE guild = ?1 AND \"user\" = ?2
                    ORDER BY id DESC LIMIT ?3)",
                args![g, u, FACTS_PER_PERSON as i64],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// The facts kept about members of `guild` (only `users` when given), oldest first.
    pub async fn person_facts(
        &self,
        guild: u64,
        users: Option<&[u64]>,
    ) -> Result<Vec<PersonFact>, StoreError> {
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT \"user\", name, fact, source, by, heard_in, told_by FROM people_facts
                 WHERE guild = ?1 ORDER BY id",
                    args![as_i64(guild)],
                )
                .await
            })
            .await?;
        let mut out = Vec::new();
        for r in rows {
            let user = as_u64(r.int(0)?);
            if users.is_none_or(|u| u.contains(&user)) {
                out.push(PersonFact {
                    user,
                    name: r.text(1)?,
                    fact: r.text(2)?,
                    source: r.text(3)?,
                    by: r.text(4)?,
                    heard_in: as_u64(r.int(5)?),
                    told_by: as_u64(r.int(6)?),
                });
            }
        }
        Ok(out)
    }

    /// Keep plan `id` (its changes as JSON) for `session` in `guild`.
    pub async fn save_plan(
        &self,
        id: &str,
        session: &str,
        guild: u64,
        changes: &str,
    ) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "INSERT INTO discord_plans(id, session, guild, changes, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(id) DO UPDATE SET session = excluded.session,
                   guild = excluded.guild, changes = excluded.changes, at_ms = excluded.at_ms",
                args![id, session, as_i64(guild), changes, now_ms()],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// Plan `id`: its session, guild and changes.
    pub async fn plan(&self, id: &str) -> Result<Option<(String, u64, String)>, StoreError> {
        let row = self
            .run(async |c| {
                c.query_opt(
                    "SELECT session, guild, changes FROM discord_plans WHERE id = ?1",
                    args![id],
                )
                .await
            })
            .await?;
        row.map(|r| Ok((r.text(0)?, as_u64(r.int(1)?), r.text(2)?)))
            .transpose()
    }

    /// Journal step `step` of plan `plan` as applied, with its result.
    pub async fn plan_step_done(
        &self,
        plan: &str,
        step: usize,
        result: &str,
    ) -> Result<(), StoreError> {
        self.run(async |c| {
            c.execute(
                "INSERT INTO discord_plan_done(plan, step, result, at_ms) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(plan, step) DO UPDATE SET result = excluded.result,
                   at_ms = excluded.at_ms",
                args![plan, step as i64, result, now_ms()],
            )
            .await
        })
        .await?;
        Ok(())
    }

    /// The steps of plan `plan` journalled as applied.
    pub async fn plan_steps_done(&self, plan: &str) -> Result<Vec<usize>, StoreError> {
        let rows = self
            .run(async |c| {
                c.query(
                    "SELECT step FROM discord_plan_done WHERE plan = ?1 ORDER BY step",
                    args![plan],
                )
                .await
            })
            .await?;
        rows.iter()
            .map(|r| Ok(usize::try_from(r.int(0)?).unwrap_or(0)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_persons_facts_are_kept_per_guild_member_and_the_oldest_go_past_the_limit() {
        let fact = |text: &str, source: &str, heard_in: u64| PersonFact {
            user: 7,
            name: "wren".into(),
            fact: text.into(),
            source: source.into(),
            by: "wren".into(),
            heard_in,
            told_by: 7,
        };
        for db in crate::testing::each() {
            let store = db.open().await;
            for i in 0..FACTS_PER_PERSON + 2 {
                store
                    .add_person_fact(1, &fact(&format!("fact {i}"), "said", 300 + i as u64))
                    .await
                    .unwrap();
            }
            store
                .add_person_fact(2, &fact("elsewhere", "observed", 9))
                .await
                .unwrap();
            let facts = store.person_facts(1, Some(&[7])).await.unwrap();
            assert_eq!(facts.len(), FACTS_PER_PERSON);
            assert_eq!(facts[0].fact, "fact 2");
            assert_eq!(
                (facts[0].heard_in, facts[0].told_by),
                (302, 7),
                "where and from whom"
            );
            assert!(store.person_facts(1, Some(&[8])).await.unwrap().is_empty());
            assert_eq!(
                store.person_facts(2, None).await.unwrap()[0].fact,
                "elsewhere"
            );
            store.plan_step_done("p1", 3, "ok").await.unwrap();
            store.plan_step_done("p1", 3, "ok again").await.unwrap();
            assert_eq!(store.plan_steps_done("p1").await.unwrap(), [3]);
        }
    }
}
