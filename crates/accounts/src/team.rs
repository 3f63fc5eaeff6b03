use chrono::{DateTime, Utc};
use kernel::{Email, InvalidValue, Text, define_id};

define_id!(
    /// Identifies a team: the unit every piece of data belongs to.
    TeamId
);
define_id!(
    /// Identifies a user of a team.
    UserId
);

pub type TeamName = Text<1, 255>;
pub type UserName = Text<0, 255>;

/// An ISO 4217 alphabetic currency code, e.g. `EUR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency([u8; 3]);

impl Currency {
    pub const USD: Self = Self(*b"USD");

    pub fn parse(code: &str) -> Result<Self, InvalidValue> {
        match code.as_bytes() {
            &[a, b, c] if [a, b, c].iter().all(u8::is_ascii_uppercase) => Ok(Self([a, b, c])),
            _ => Err(InvalidValue::new("must be a three-letter ISO 4217 code such as EUR")),
        }
    }

    pub fn as_str(&self) -> &str {
        // The constructor admits ASCII uppercase letters only.
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub id: TeamId,
    pub name: TeamName,
    pub currency: Currency,
    pub created_at: DateTime<Utc>,
}

/// What a user may do beyond their own data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Owner,
    Admin,
    Member,
}

impl Role {
    pub const ALL: [Self; 3] = [Self::Owner, Self::Admin, Self::Member];

    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        Self::ALL
            .into_iter()
            .find(|role| role.as_str() == text)
            .ok_or_else(|| InvalidValue::new("must be one of owner, admin, member"))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Admin => "admin",
            Self::Member => "member",
        }
    }

    /// Owners and admins may log time for, and see the data of, other users of the team.
    pub fn may_act_for_others(self) -> bool {
        matches!(self, Self::Owner | Self::Admin)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: UserId,
    pub team_id: TeamId,
    pub email: Email,
    pub name: UserName,
    pub role: Role,
    pub created_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::{Currency, Role};

    #[test]
    fn currency_codes_are_three_uppercase_letters() {
        assert_eq!(Currency::parse("EUR").map(|c| c.to_string()), Ok("EUR".to_owned()));
        for bad in ["", "eur", "EURO", "E1R", "ÉUR"] {
            assert!(Currency::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn roles_round_trip_and_only_owners_and_admins_act_for_others() {
        for role in Role::ALL {
            assert_eq!(Role::parse(role.as_str()), Ok(role));
        }
        assert!(Role::parse("Owner").is_err());
        assert!(Role::Owner.may_act_for_others());
        assert!(Role::Admin.may_act_for_others());
        assert!(!Role::Member.may_act_for_others());
    }
}
