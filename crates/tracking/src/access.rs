//! Who may log, see and change time for whom.

use accounts::{Principal, Role, UserId};

use crate::TimeEntry;

/// The user a request acts as, with the role that decides what they may do for others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor {
    pub user_id: UserId,
    pub role: Role,
}

impl From<&Principal> for Actor {
    fn from(principal: &Principal) -> Self {
        Self { user_id: principal.user_id, role: principal.role }
    }
}

/// The actor asked to act for another user without the role for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotAllowed;

impl Actor {
    /// Everyone acts for themselves; owners and admins for anyone in their team.
    pub fn may_act_for(&self, user: UserId) -> bool {
        user == self.user_id || self.role.may_act_for_others()
    }

    /// Members see their own entries; owners and admins the team's.
    pub fn sees(&self, entry: &TimeEntry) -> bool {
        self.may_act_for(entry.user_id)
    }

    /// Whose time billing bills for them: a member's own, the team's (`None`) for owners
    /// and admins.
    pub fn billed_user(&self) -> Option<UserId> {
        (!self.role.may_act_for_others()).then_some(self.user_id)
    }

    /// Whose entries a listing shows when `requested` (a `userId` filter) is asked for:
    /// members only ever their own; owners and admins the team's, or one user's.
    pub fn listing_user(&self, requested: Option<UserId>) -> Result<Option<UserId>, NotAllowed> {
        match requested {
            Some(user) if !self.may_act_for(user) => Err(NotAllowed),
            Some(user) => Ok(Some(user)),
            None if self.role.may_act_for_others() => Ok(None),
            None => Ok(Some(self.user_id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use accounts::{Role, UserId};
    use kernel::Id;

    use super::{Actor, NotAllowed};

    #[test]
    fn role_matrix() {
        let (me, colleague) = (UserId::generate(), UserId::generate());
        for role in Role::ALL {
            let actor = Actor { user_id: me, role };
            let elevated = role != Role::Member;
            assert!(actor.may_act_for(me));
            assert_eq!(actor.may_act_for(colleague), elevated, "{role:?}");
            assert_eq!(actor.listing_user(Some(me)), Ok(Some(me)));
            let others = actor.listing_user(Some(colleague));
            assert_eq!(others, if elevated { Ok(Some(colleague)) } else { Err(NotAllowed) });
            assert_eq!(actor.listing_user(None), Ok(if elevated { None } else { Some(me) }));
            assert_eq!(actor.billed_user(), if elevated { None } else { Some(me) });
        }
    }
}
