//! The engine's rules across processes sharing one store (PostgreSQL): each test runs
//! two engines, as two processes would, on one database of the test server.

use super::testing::{local_starter, rig_on};
use crate::tools::port::EngineError;

#[tokio::test]
async fn a_session_runs_one_job_across_processes() {
    let Some((a, b)) = kotoba_store::testing::two_live_processes().await else {
        return;
    };
    // Process A runs a job in the session.
    let marked = a
        .open_job("run-a", "web:garden", "tidy the garden")
        .await
        .unwrap();
    let rig_b = rig_on(b, vec![]);
    match rig_b
        .engine
        .start_job(&local_starter("web:garden"), "water the plants")
        .await
    {
        Err(EngineError::JobRunning { goal, .. }) => assert_eq!(goal, "tidy the garden"),
        other => panic!("a second job started beside A's: {other:?}"),
    }
    // Another session, or the same once A's job ended, may start one.
    a.close_job(marked).await.unwrap();
    assert!(rig_b
        .engine
        .start_job(&local_starter("web:garden"), "water the plants")
        .await
        .is_ok());
    rig_b.engine.stop("web:garden", super::StopScope::Work);
}
