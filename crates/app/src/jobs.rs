//! The job runner's wiring: the queue's store, the senders, and the books' own work (the
//! invoices of recurring invoices, and their e-mail) through the domain's use cases. Nothing
//! here reaches the HTTP adapter: `make layering` holds this file to that.

use std::sync::Arc;

use accounts::AccountStore;
use billing::BillingStore;
use billing::issue::Printer;
use kernel::{Clock, Email, StoreError};
use notify::NotifyStore;
use notify::service::{Links, Mail};
use recurring::RecurringStore;
use tracking::TrackStore;

/// The parts of a job runner over the application's store: a runner on any clock can be
/// made of them (tests make one per pass, at the instant they choose).
#[derive(Clone)]
pub struct JobParts {
    pub(crate) books: RecurringBooks,
    pub(crate) store: Arc<dyn NotifyStore>,
    pub(crate) signal: Arc<tokio::sync::Notify>,
    pub(crate) webhooks: outbound::WebhookSender,
    pub(crate) mail: Option<outbound::MailJobs>,
    pub(crate) agent: Option<outbound::AgentJobs>,
    pub(crate) settings: outbound::RunnerSettings,
}

impl std::fmt::Debug for JobParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobParts").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl JobParts {
    /// A runner on business time `clock`.
    pub fn runner(&self, clock: Arc<dyn Clock>) -> outbound::JobRunner {
        outbound::JobRunner::new(
            self.store.clone(),
            clock,
            self.signal.clone(),
            self.webhooks.clone(),
            self.mail.clone(),
            self.agent.clone(),
            self.settings.clone(),
        )
        .with_books(Arc::new(self.books.clone()))
    }
}

/// The stores the recurring pass reads and writes.
#[derive(Clone)]
pub(crate) struct BookStores {
    pub(crate) recurring: Arc<dyn RecurringStore>,
    pub(crate) billing: Arc<dyn BillingStore>,
    pub(crate) accounts: Arc<dyn AccountStore>,
    pub(crate) track: Arc<dyn TrackStore>,
    pub(crate) notify: Arc<dyn NotifyStore>,
}

/// The invoices recurring invoices make, and the e-mail of those to be sent, on each full
/// pass of the job runner.
#[derive(Clone)]
pub(crate) struct RecurringBooks {
    pub(crate) stores: BookStores,
    pub(crate) printer: Printer,
    /// Who mail is from and the links it carries; `None` when e-mail is not configured.
    pub(crate) sending: Option<(Email, Links)>,
}

#[async_trait::async_trait]
impl outbound::BookWork for RecurringBooks {
    async fn run_due(&self, now: chrono::DateTime<chrono::Utc>) -> Result<u32, StoreError> {
        let stores = &self.stores;
        let ports = recurring::service::Ports {
            recurring: &*stores.recurring,
            billing: &*stores.billing,
            accounts: &*stores.accounts,
            tracking: &*stores.track,
        };
        let mail = self.sending.as_ref().map(|(from, links)| Mail {
            billing: &*stores.billing,
            store: &*stores.notify,
            printer: &self.printer,
            from,
            links,
        });
        let report = recurring::service::run_due_and_send(ports, mail, now).await?;
        Ok(u32::try_from(report.generated.len()).unwrap_or(u32::MAX))
    }
}
