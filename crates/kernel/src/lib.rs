//! Shared vocabulary of the billable domain crates.
//!
//! Everything here is pure: value types that are valid by construction, the error a
//! value reports when it is not, and the few ports every domain needs (a clock, the
//! storage failure taxonomy, and store health). No HTTP, SQL or async runtime types.

mod clock;
mod email;
mod error;
mod id;
mod instant;
pub mod number;
mod search;
mod text;
mod words;

pub use clock::{Clock, FixedClock, SystemClock};
pub use email::Email;
pub use error::{FieldError, InvalidValue, Replaced, StoreError, StoreHealth, StoreStatus};
pub use id::{Id, mint_uuid, random_bits};
pub use instant::{parse_instant, span_end};
pub use search::SearchText;
pub use text::{Text, is_xml_char, xml_safe};
pub use words::Words;

/// Re-exported so that `define_id!` expands in crates that do not name `uuid` themselves.
#[doc(hidden)]
pub use uuid;
