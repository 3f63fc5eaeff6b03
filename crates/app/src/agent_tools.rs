//! The agent's built-in tools: the REST API's operations (`http_api::tools`) offered to the
//! model, acting as the definition's `tools.billable.user` with its permissions.

use std::sync::Arc;

use accounts::{AccountStore, TeamId, User, UserId};
use anyhow::anyhow;
use http_api::ApiState;
use http_api::tools::{BuiltinTools, acting_as};
use kernel::{Email, Id};
use triggers::ToolRegistry;

use crate::agent_definition::BillableTools;

/// The registry of the built-in tools `settings` allow, acting in `team` over `state`'s
/// stores. Fails naming the field when the user is not one of the team's.
pub(crate) async fn builtin_tools(
    file: &str,
    settings: &BillableTools,
    team: TeamId,
    accounts: &dyn AccountStore,
    state: Arc<ApiState>,
) -> anyhow::Result<ToolRegistry> {
    let user = find_user(accounts, team, &settings.user).await?.ok_or_else(|| {
        anyhow!(
            "{file}: tools.billable.user: no user of the agent's team has the id or email {:?}",
            settings.user
        )
    })?;
    Ok(BuiltinTools::new(state, acting_as(&user, settings.permissions.clone())).registry())
}

/// The user of `team` whose id or email (case-insensitively) is `wanted`.
async fn find_user(accounts: &dyn AccountStore, team: TeamId, wanted: &str) -> anyhow::Result<Option<User>> {
    let users = accounts.list_users(team).await?;
    let by_id = UserId::parse(wanted);
    let by_email = Email::parse(wanted).ok().map(|email| email.normalized());
    Ok(users.into_iter().find(|user| Some(user.id) == by_id || Some(user.email.normalized()) == by_email))
}
