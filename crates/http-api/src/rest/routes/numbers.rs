//! Numbers on the wire: exact decimals in and out, never binary floating point.

use billing::money::{Bound, Decimal};
use kernel::FieldError;
use serde::Serialize;
use serde_json::Number;
use utoipa::ToSchema;

/// An exact decimal, written as a JSON number with every digit it has (`10.50`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Exact(pub(crate) Decimal);

impl Serialize for Exact {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // serde_json keeps a number's text exactly (`arbitrary_precision`).
        let number: Number = self.0.to_string().parse().map_err(serde::ser::Error::custom)?;
        number.serialize(serializer)
    }
}

impl utoipa::PartialSchema for Exact {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::schema::Type::Number).into()
    }
}

impl ToSchema for Exact {}

/// A number field as an exact decimal within `bound`.
pub(crate) fn number(value: &Number, field: &str, bound: Bound) -> Result<Decimal, FieldError> {
    bound.parse(&value.to_string()).map_err(|e| e.at(field))
}
