//! What a command-line option names: a team by id or name, a user by id or email, a key
//! by id, prefix or the key itself. A name that fits several is refused, asking for the id.

use accounts::{AccountStore, ApiKeyId, ApiKeySecret, TeamId, UserId};
use anyhow::bail;
use kernel::Id;

use crate::agent_setup::pick_team;

/// The team `text` names (its id or its name), for the option `flag`.
pub(crate) async fn team(accounts: &dyn AccountStore, flag: &str, text: &str) -> anyhow::Result<TeamId> {
    pick_team(accounts, Some(text)).await?.map_err(|problem| anyhow::anyhow!("{flag}: {problem}"))
}

/// The user of `team` that `text` names (its id, or its email in any case), for `flag`.
pub(crate) async fn user(
    accounts: &dyn AccountStore,
    flag: &str,
    team: TeamId,
    text: &str,
) -> anyhow::Result<UserId> {
    let by_id = UserId::parse(text);
    let users = accounts.list_users(team).await?;
    match users.iter().find(|user| Some(user.id) == by_id || user.email.as_str().eq_ignore_ascii_case(text)) {
        Some(user) => Ok(user.id),
        None => bail!(
            "{flag}: team {team} has no user with the id or email {text:?} (billable users list --team {team})"
        ),
    }
}

/// The key `text` names: its id, its prefix as `keys list` shows it (`bk_AbCdEf`), or the
/// key itself.
pub(crate) async fn key(accounts: &dyn AccountStore, text: &str) -> anyhow::Result<ApiKeyId> {
    if let Some(id) = ApiKeyId::parse(text) {
        return Ok(id);
    }
    if let Some(secret) = ApiKeySecret::parse(text)
        && let Some(found) = accounts.find_credential(&secret.hash()).await?
    {
        return Ok(found.key.id);
    }
    let mut matching = Vec::new();
    for team in accounts.list_teams().await? {
        let keys = accounts.list_api_keys(team.id).await?;
        matching.extend(keys.into_iter().filter(|key| key.prefix == text).map(|key| key.id));
    }
    // A key that is not found is still a key: only its prefix is repeated.
    let shown = ApiKeySecret::parse(text)
        .map_or_else(|| text.to_owned(), |secret| format!("{}…", secret.display_prefix()));
    match matching.as_slice() {
        [id] => Ok(*id),
        [] => bail!("no API key has the id, prefix or text {shown:?} (billable keys list --team TEAM)"),
        _ => {
            bail!("several API keys start with {shown:?}; give the key's id (billable keys list --team TEAM)")
        }
    }
}
