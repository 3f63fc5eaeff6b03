//! Column types that map one Rust type to each backend's native SQL type.

use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{Numeric, Text, Uuid as PgUuid};
use diesel::sqlite::Sqlite;
use kernel::Id;
use rust_decimal::Decimal;
use uuid::Uuid;

/// A UUID: native `uuid` on PostgreSQL, lowercase hyphenated `TEXT` on SQLite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = PgUuid)]
#[diesel(sql_type = Text)]
pub(crate) struct DbUuid(pub Uuid);

impl DbUuid {
    pub(crate) fn of(id: impl Id) -> Self {
        Self(id.as_uuid())
    }

    pub(crate) fn into_id<I: Id>(self) -> I {
        I::from_uuid(self.0)
    }
}

impl ToSql<PgUuid, Pg> for DbUuid {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <Uuid as ToSql<PgUuid, Pg>>::to_sql(&self.0, out)
    }
}

impl FromSql<PgUuid, Pg> for DbUuid {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        <Uuid as FromSql<PgUuid, Pg>>::from_sql(value).map(Self)
    }
}

impl ToSql<Text, Sqlite> for DbUuid {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.0.hyphenated().to_string());
        Ok(IsNull::No)
    }
}

impl FromSql<Text, Sqlite> for DbUuid {
    fn from_sql(value: <Sqlite as diesel::backend::Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        Ok(Self(Uuid::try_parse(&text)?))
    }
}

/// An exact decimal: `numeric` on PostgreSQL, its decimal text on SQLite (whose `REAL`
/// would round it through binary floating point).
#[derive(Debug, Clone, Copy, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Numeric)]
#[diesel(sql_type = Text)]
pub(crate) struct DbDecimal(pub Decimal);

impl ToSql<Numeric, Pg> for DbDecimal {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <Decimal as ToSql<Numeric, Pg>>::to_sql(&self.0, out)
    }
}

impl FromSql<Numeric, Pg> for DbDecimal {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        <Decimal as FromSql<Numeric, Pg>>::from_sql(value).map(Self)
    }
}

impl ToSql<Text, Sqlite> for DbDecimal {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.0.to_string());
        Ok(IsNull::No)
    }
}

impl FromSql<Text, Sqlite> for DbDecimal {
    fn from_sql(value: <Sqlite as diesel::backend::Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        Ok(Self(text.parse()?))
    }
}
