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

/// An ISO 4217 currency that has a minor unit (so not gold, test or "no currency" codes),
/// e.g. `EUR`. The table is the `iso_currency` crate's, kept in step with the standard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency(iso_currency::Currency);

impl Currency {
    pub const USD: Self = Self(iso_currency::Currency::USD);

    pub fn parse(code: &str) -> Result<Self, InvalidValue> {
        iso_currency::Currency::from_code(code)
            .filter(|currency| currency.exponent().is_some())
            .map(Self)
            .ok_or_else(|| InvalidValue::new("must be an ISO 4217 currency code such as EUR"))
    }

    pub fn as_str(&self) -> &'static str {
        self.0.code()
    }

    /// Digits after the decimal point of the currency's minor unit: 2 for EUR, 0 for JPY,
    /// 3 for KWD.
    pub fn minor_unit(self) -> u32 {
        // `parse` admits only currencies that have an exponent.
        self.0.exponent().map_or(2, u32::from)
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
    fn currencies_come_from_the_iso_table_with_their_minor_unit() {
        assert_eq!(Currency::parse("EUR").map(|c| c.to_string()), Ok("EUR".to_owned()));
        let minor = |code| Currency::parse(code).map(Currency::minor_unit);
        assert_eq!((minor("USD"), minor("JPY"), minor("KWD")), (Ok(2), Ok(0), Ok(3)));
        // Unknown codes, and codes without a minor unit (gold, "no currency").
        for bad in ["", "eur", "EURO", "E1R", "ÉUR", "ABC", "XAU", "XXX"] {
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
