//! Recurring invoices: retainers, hosting and maintenance contracts that bill themselves
//! once per period. Pure types and rules; this crate knows nothing of HTTP or SQL.
//!
//! - [`schedule`]: the days a schedule bills on (the days of the RFC 5545 rule of the same
//!   pattern), the period a job pass generates and the missed ones it skips, and the days
//!   whose time a period bills.
//! - [`recurring_invoice`]: a recurring invoice (its client, template, schedule, mode and the
//!   unbilled time it adds), its life (active, paused, completed) and the invoice each
//!   period makes.
//! - [`store`]: the `RecurringStore` port.
//! - [`service`]: the use cases over the ports, and the job pass that makes each due
//!   period's invoice.

pub mod recurring_invoice;
pub mod schedule;
pub mod service;
pub mod store;

pub use recurring_invoice::{
    DueDays, MAX_RUN_REASON, Mode, NewRecurringInvoice, RecurringChanges, RecurringInvoice,
    RecurringInvoiceId, RecurringRule, RecurringStatus, Run, RunStatus, Template, UnbilledTime,
};
pub use schedule::{
    BilledDays, DayOfMonth, Ending, Frequency, Occurrence, Pass, Pattern, Schedule, ScheduleInput,
    ScheduleRule, Weekday,
};
pub use store::{CreateRecurringError, PassRecord, PassRecorded, RecurringStore};
