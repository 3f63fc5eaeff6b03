use std::collections::BTreeSet;

use kernel::InvalidValue;

/// One thing a key may be allowed to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Permission {
    ClientsRead,
    ClientsWrite,
    InvoicesRead,
    InvoicesWrite,
    TrackRead,
    TrackWrite,
    AgentRead,
    /// Recording payments, refunds and voids on invoices, and reading invoices (a
    /// bookkeeper's key); `invoices:write` implies it.
    PaymentsWrite,
    /// Reading the team's webhook endpoints and their deliveries.
    WebhooksRead,
    /// Subscribing, changing and deleting webhook endpoints, rotating their secrets,
    /// testing and redelivering.
    WebhooksWrite,
    /// Reading quotes; `invoices:read` implies it.
    QuotesRead,
    /// Writing, sending, deciding and converting quotes; `invoices:write` implies it.
    QuotesWrite,
    /// Reading bank statements and their transactions.
    BankingRead,
    /// Importing bank statements and booking their transactions as payments.
    BankingWrite,
}

impl Permission {
    pub const ALL: [Self; 14] = [
        Self::ClientsRead,
        Self::ClientsWrite,
        Self::InvoicesRead,
        Self::InvoicesWrite,
        Self::TrackRead,
        Self::TrackWrite,
        Self::AgentRead,
        Self::PaymentsWrite,
        Self::WebhooksRead,
        Self::WebhooksWrite,
        Self::QuotesRead,
        Self::QuotesWrite,
        Self::BankingRead,
        Self::BankingWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientsRead => "clients:read",
            Self::ClientsWrite => "clients:write",
            Self::InvoicesRead => "invoices:read",
            Self::InvoicesWrite => "invoices:write",
            Self::TrackRead => "track:read",
            Self::TrackWrite => "track:write",
            Self::AgentRead => "agent:read",
            Self::PaymentsWrite => "payments:write",
            Self::WebhooksRead => "webhooks:read",
            Self::WebhooksWrite => "webhooks:write",
            Self::QuotesRead => "quotes:read",
            Self::QuotesWrite => "quotes:write",
            Self::BankingRead => "banking:read",
            Self::BankingWrite => "banking:write",
        }
    }

    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        Self::ALL.into_iter().find(|p| p.as_str() == text).ok_or_else(|| {
            let known: Vec<_> = Self::ALL.iter().map(|p| p.as_str()).collect();
            InvalidValue::new(format!("must be one of {}", known.join(", ")))
        })
    }

    pub fn is_read(self) -> bool {
        matches!(
            self,
            Self::ClientsRead
                | Self::InvoicesRead
                | Self::TrackRead
                | Self::AgentRead
                | Self::WebhooksRead
                | Self::QuotesRead
                | Self::BankingRead
        )
    }

    /// The permissions that imply this one: a write its read, `invoices:write` the
    /// recording of payments, recording payments the reading of invoices, and invoices'
    /// permissions the same of quotes.
    fn implied_by(self) -> &'static [Self] {
        match self {
            Self::ClientsRead => &[Self::ClientsWrite],
            Self::InvoicesRead => &[Self::InvoicesWrite, Self::PaymentsWrite],
            Self::TrackRead => &[Self::TrackWrite],
            Self::PaymentsWrite | Self::QuotesWrite => &[Self::InvoicesWrite],
            Self::WebhooksRead => &[Self::WebhooksWrite],
            Self::BankingRead => &[Self::BankingWrite],
            Self::QuotesRead => &[Self::QuotesWrite, Self::InvoicesRead, Self::InvoicesWrite],
            _ => &[],
        }
    }
}

/// The set of permissions chosen when a key is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every read.
    ReadOnly,
    /// Every read and every write.
    Write,
    /// Only the listed permissions; a write permission implies its read.
    Restricted(BTreeSet<Permission>),
}

impl Scope {
    pub fn allows(&self, needed: Permission) -> bool {
        match self {
            Self::ReadOnly => needed.is_read(),
            Self::Write => true,
            Self::Restricted(granted) => {
                granted.contains(&needed) || needed.implied_by().iter().any(|w| granted.contains(w))
            }
        }
    }

    /// The kind of scope as written in the CLI and storage.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::Write => "write",
            Self::Restricted(_) => "restricted",
        }
    }

    /// The listed permissions of a restricted scope (empty for the others).
    pub fn permissions(&self) -> impl Iterator<Item = Permission> + '_ {
        let listed = match self {
            Self::Restricted(granted) => Some(granted.iter().copied()),
            _ => None,
        };
        listed.into_iter().flatten()
    }

    /// Builds a scope from its kind and, for `restricted`, its permissions.
    pub fn from_parts<S: AsRef<str>>(kind: &str, permissions: &[S]) -> Result<Self, InvalidValue> {
        let listed =
            permissions.iter().map(|p| Permission::parse(p.as_ref())).collect::<Result<BTreeSet<_>, _>>()?;
        match kind {
            "read-only" | "write" if !listed.is_empty() => {
                Err(InvalidValue::new("permissions can only be listed for a restricted scope"))
            }
            "read-only" => Ok(Self::ReadOnly),
            "write" => Ok(Self::Write),
            "restricted" if listed.is_empty() => {
                Err(InvalidValue::new("a restricted scope needs at least one permission"))
            }
            "restricted" => Ok(Self::Restricted(listed)),
            _ => Err(InvalidValue::new("must be one of read-only, write, restricted")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Permission, Scope};

    #[test]
    fn read_only_allows_every_read_and_no_write() {
        for p in Permission::ALL {
            assert_eq!(Scope::ReadOnly.allows(p), p.is_read(), "{p:?}");
        }
    }

    #[test]
    fn write_allows_everything() {
        assert!(Permission::ALL.into_iter().all(|p| Scope::Write.allows(p)));
    }

    #[test]
    fn restricted_allows_listed_permissions_and_reads_implied_by_writes() {
        let scope = Scope::from_parts("restricted", &["clients:write", "track:read"]).unwrap();
        let allowed: Vec<_> = Permission::ALL.into_iter().filter(|p| scope.allows(*p)).collect();
        assert_eq!(allowed, [Permission::ClientsRead, Permission::ClientsWrite, Permission::TrackRead]);
    }

    #[test]
    fn recording_payments_reads_invoices_and_comes_with_writing_them() {
        let bookkeeper = Scope::from_parts("restricted", &["payments:write"]).unwrap();
        let allowed: Vec<_> = Permission::ALL.into_iter().filter(|p| bookkeeper.allows(*p)).collect();
        assert_eq!(allowed, [Permission::InvoicesRead, Permission::PaymentsWrite]);
        let invoicing = Scope::from_parts("restricted", &["invoices:write"]).unwrap();
        assert!(invoicing.allows(Permission::PaymentsWrite));
        assert!(!Scope::ReadOnly.allows(Permission::PaymentsWrite));
    }

    #[test]
    fn invoices_permissions_bring_quotes_and_quotes_bring_no_invoices() {
        let allowed = |scope: &str| {
            let scope = Scope::from_parts("restricted", &[scope]).unwrap();
            Permission::ALL.into_iter().filter(|p| scope.allows(*p)).collect::<Vec<_>>()
        };
        assert_eq!(allowed("invoices:read"), [Permission::InvoicesRead, Permission::QuotesRead]);
        assert!(allowed("invoices:write").contains(&Permission::QuotesWrite));
        assert_eq!(allowed("quotes:write"), [Permission::QuotesRead, Permission::QuotesWrite]);
    }

    #[test]
    fn scope_parts_are_validated() {
        assert!(Scope::from_parts::<&str>("restricted", &[]).is_err());
        assert!(Scope::from_parts("write", &["clients:read"]).is_err());
        assert!(Scope::from_parts::<&str>("admin", &[]).is_err());
        assert!(Scope::from_parts("restricted", &["clients:delete"]).is_err());
        assert_eq!(Scope::from_parts::<&str>("read-only", &[]), Ok(Scope::ReadOnly));
    }

    #[test]
    fn permission_names_round_trip() {
        for p in Permission::ALL {
            assert_eq!(Permission::parse(p.as_str()), Ok(p));
        }
    }
}
