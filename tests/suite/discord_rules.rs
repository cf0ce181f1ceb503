//! Issue 12's rules on the Discord surface, over the loopback Discord: who may see a
//! row's Full output, what Stop stops, and that secrets are never asked for in a channel.

use serde_json::json;

use super::discord::{is_steps, rig};
use crate::support::discord::{GENERAL, GUEST, OWNER};
use crate::support::model_server::Reply;

#[tokio::test]
async fn a_guest_pressing_full_output_on_an_owners_host_tool_row_gets_a_private_not_yours_and_none_of_it(
) {
    let r = rig().await;
    r.model.push(Reply::call(
        "shell",
        json!({"command": "echo owner-only-words"}),
    ));
    r.model.push(Reply::text("Echoed."));
    r.discord.mention(GENERAL, OWNER, "echo something");
    let done = r
        .discord
        .wait_for(|c| {
            is_steps(c, GENERAL)
                && c.embed_text().contains("✅ ok")
                && c.buttons().iter().any(|b| b.0.starts_with("ko:"))
        })
        .await;
    let full = done
        .buttons()
        .into_iter()
        .find(|b| b.0.starts_with("ko:"))
        .unwrap();
    let steps_id = done
        .message_id
        .clone()
        .unwrap_or_else(|| done.path.rsplit('/').next().unwrap().to_string());
    let guest = r.discord.press(GENERAL, &steps_id, &full.0, GUEST);
    let c = r.discord.wait_callback(guest).await;
    assert!(c.ephemeral(), "{:?}", c.body);
    assert!(c.content().contains("not yours"), "{:?}", c.body);
    assert!(
        !c.raw.contains("owner-only-words"),
        "none of the output reaches a guest: {}",
        c.raw
    );
    // The owner pressing the same button gets the whole output, privately.
    let owner = r.discord.press(GENERAL, &steps_id, &full.0, OWNER);
    let c = r.discord.wait_callback(owner).await;
    assert!(
        c.ephemeral() && c.raw.contains("owner-only-words"),
        "{}",
        c.raw
    );
}
