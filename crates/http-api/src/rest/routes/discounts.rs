//! Discounts on the wire: `{"percentage": 10}` or `{"amount": 5.00}`, on a line or on a
//! whole document, as EN 16931 allowances.

use billing::discount::{DISCOUNT_AMOUNT, DISCOUNT_PERCENTAGE};
use billing::money::{Currency, round_to_minor};
use billing::{Allowance, Discount};
use kernel::FieldError;
use serde::{Deserialize, Serialize};
use serde_json::Number;
use utoipa::ToSchema;

use crate::rest::routes::numbers::{Exact, number};

/// A discount: exactly one of `percentage` and `amount`. It takes at most what it applies
/// to, so nothing goes below 0.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"percentage": 10}))]
pub(crate) struct DiscountInput {
    /// Off what it applies to: greater than 0, at most 100, at most 4 decimal places.
    #[serde(default)]
    #[schema(value_type = Option<f64>, exclusive_minimum = 0, maximum = 100, example = 10)]
    percentage: Option<Number>,
    /// Off what it applies to: greater than 0, rounded to the minor unit.
    #[serde(default)]
    #[schema(value_type = Option<f64>, exclusive_minimum = 0, maximum = 1e21, example = 5.00)]
    amount: Option<Number>,
}

impl DiscountInput {
    /// The discount given in the field `field`.
    pub(crate) fn parse(self, field: &str) -> Result<Discount, FieldError> {
        match (self.percentage, self.amount) {
            (Some(percentage), None) => {
                number(&percentage, &format!("{field}.percentage"), DISCOUNT_PERCENTAGE)
                    .map(Discount::Percentage)
            }
            (None, Some(amount)) => {
                number(&amount, &format!("{field}.amount"), DISCOUNT_AMOUNT).map(Discount::Amount)
            }
            _ => Err(FieldError::new(
                field,
                "give either percentage or amount: {\"percentage\": 10} or {\"amount\": 5}",
            )),
        }
    }
}

/// A discount as given: one of `percentage` and `amount`, the other null.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DiscountBody {
    #[schema(required = true, value_type = Option<f64>, example = 10)]
    percentage: Option<Exact>,
    /// At the currency's minor unit.
    #[schema(required = true, value_type = Option<f64>, example = json!(null))]
    amount: Option<Exact>,
}

impl DiscountBody {
    pub(crate) fn of(discount: Discount, currency: Currency) -> Self {
        match discount {
            Discount::Percentage(percentage) => {
                Self { percentage: Some(Exact(percentage.normalize())), amount: None }
            }
            Discount::Amount(amount) => {
                Self { percentage: None, amount: Some(Exact(round_to_minor(amount, currency))) }
            }
        }
    }

    /// A discount exactly as it was given, before any currency rounds it (a template's).
    pub(crate) fn as_given(discount: Discount) -> Self {
        match discount {
            Discount::Percentage(percentage) => {
                Self { percentage: Some(Exact(percentage.normalize())), amount: None }
            }
            Discount::Amount(amount) => Self { percentage: None, amount: Some(Exact(amount.normalize())) },
        }
    }

    /// A line's discount, as it was given.
    pub(crate) fn of_line(allowance: Allowance, currency: Currency) -> Self {
        Self::of(allowance.discount(), currency)
    }
}
