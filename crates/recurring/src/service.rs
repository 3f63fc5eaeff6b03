//! The recurring-invoice use cases over the ports: keeping them (create, change, pause,
//! resume, end), and the job pass that makes each due period's invoice.

use accounts::{AccountStore, Currency, TeamId};
use billing::Invoice;
use billing::invoice::{InvoiceRule, Recurrence};
use billing::issue::{DocumentRef, Files, PdfFormat};
use billing::service::{BillingError, InvoiceDraft};
use billing::store::{BillTo, CreateInvoiceError, NewInvoice};
use chrono::{DateTime, Days, NaiveDate, Utc};
use kernel::{Id, Replaced, StoreError};
use tracking::invoicing::TimeBillingRule;
use tracking::{Actor, BillTimeError, TimeToInvoice, TrackStore};

use crate::recurring_invoice::{
    Mode, NewRecurringInvoice, RecurringChanges, RecurringInvoice, RecurringInvoiceId, RecurringRule, Run,
    RunStatus, Template, UnbilledTime,
};
use crate::schedule::Occurrence;
use crate::store::{CreateRecurringError, PassRecord, PassRecorded, RecurringStore};

/// Why a recurring-invoice use case refused.
#[derive(Debug, thiserror::Error)]
pub enum RecurringError {
    #[error(transparent)]
    Rule(#[from] RecurringRule),
    #[error("no such client in the team")]
    UnknownClient,
    #[error("recurring invoice not found")]
    NotFound,
    /// A member asked to change which time another user's recurring invoice bills.
    #[error("a member bills only their own time, and another user made this recurring invoice")]
    TimeOfAnother,
    /// It kept changing while the change was tried (passes, other edits).
    #[error("the recurring invoice changed meanwhile; try again")]
    Conflict,
    /// `issue_and_send` e-mails each invoice, and this deployment sends no e-mail.
    #[error("issue_and_send e-mails each invoice, and e-mail is not configured")]
    NoMail,
    /// The client is billed in another currency than the team's; a recurring invoice states
    /// no exchange rate, which changes from period to period.
    #[error("the client is billed in {client}, not the team's {team}")]
    ClientCurrency { client: Currency, team: Currency },
    /// The template would not make a valid invoice for the client now.
    #[error(transparent)]
    Template(InvoiceRule),
    /// A project whose time is included is not the team's, or not one the client's
    /// invoices may bill ([`tracking::invoicing::check_wanted`]).
    #[error(transparent)]
    Projects(TimeBillingRule),
    /// Pricing the template failed otherwise.
    #[error(transparent)]
    Billing(BillingError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How often a read-change-write is tried before [`RecurringError::Conflict`].
const ATTEMPTS: usize = 3;

/// A new recurring invoice of the team, made on `now`'s day: billed in the team's currency,
/// its template a valid invoice for the client now, its projects the team's, and mailed
/// only where `mail` is configured.
pub async fn create(
    ports: Ports<'_>,
    mail: bool,
    team: TeamId,
    new: NewRecurringInvoice,
    now: DateTime<Utc>,
) -> Result<RecurringInvoice, RecurringError> {
    check_mode(mail, new.mode)?;
    check_client(ports, team, new.client_id).await?;
    check_template(ports, team, new.client_id, &new.template, now).await?;
    check_projects(ports, team, new.client_id, new.unbilled_time.as_ref()).await?;
    let recurring = RecurringInvoice::new(RecurringInvoiceId::generate(), team, new, now.date_naive(), now)?;
    ports.recurring.create_recurring(&recurring).await.map_err(|error| match error {
        CreateRecurringError::UnknownClient => RecurringError::UnknownClient,
        CreateRecurringError::Store(error) => error.into(),
    })?;
    Ok(recurring)
}

pub async fn get(
    store: &dyn RecurringStore,
    team: TeamId,
    id: RecurringInvoiceId,
) -> Result<RecurringInvoice, RecurringError> {
    store.get_recurring(team, id).await?.ok_or(RecurringError::NotFound)
}

/// Reads the team's recurring invoice `id`, applies `change` and writes the result only if
/// it is unchanged since the read, reading again when it was (a pass moved on meanwhile).
async fn read_change_write(
    store: &dyn RecurringStore,
    team: TeamId,
    id: RecurringInvoiceId,
    change: impl Fn(&RecurringInvoice) -> Result<RecurringInvoice, RecurringRule>,
) -> Result<RecurringInvoice, RecurringError> {
    for _ in 0..ATTEMPTS {
        let read = get(store, team, id).await?;
        let changed = change(&read)?;
        if changed == read {
            return Ok(read);
        }
        match store.replace_recurring(&changed, read.updated_at).await? {
            Replaced::Written => return Ok(changed),
            Replaced::Missing => return Err(RecurringError::NotFound),
            Replaced::Stale => {}
        }
    }
    Err(RecurringError::Conflict)
}

/// Applies `changes` to the periods still to come, asked by `actor`, held to the rules of
/// [`create`]. Only who may bill its maker's time may change the time it bills.
pub async fn change(
    ports: Ports<'_>,
    mail: bool,
    actor: &Actor,
    team: TeamId,
    id: RecurringInvoiceId,
    changes: RecurringChanges,
    now: DateTime<Utc>,
) -> Result<RecurringInvoice, RecurringError> {
    let store = ports.recurring;
    let current = get(store, team, id).await?;
    let client = changes.client_id.unwrap_or(current.client_id);
    // The client's currency may have changed since: a new template is checked against it
    // as the client is, so the refusal names the client rather than a rate.
    if changes.client_id.is_some() || changes.template.is_some() {
        check_client(ports, team, client).await?;
    }
    if let Some(template) = &changes.template {
        check_template(ports, team, client, template, now).await?;
    }
    if let Some(mode) = changes.mode {
        check_mode(mail, mode)?;
    }
    if changes.client_id.is_some() || changes.unbilled_time.is_some() {
        let time = changes.unbilled_time.as_ref().unwrap_or(&current.unbilled_time);
        check_projects(ports, team, client, time.as_ref()).await?;
    }
    if matches!(changes.unbilled_time, Some(Some(_))) && !current.may_bill_time_as(actor) {
        return Err(RecurringError::TimeOfAnother);
    }
    read_change_write(store, team, id, |read| {
        read.changed(changes.clone(), now.date_naive(), touched(read, now))
    })
    .await
}

/// A mode that e-mails needs e-mail configured.
fn check_mode(mail: bool, mode: Mode) -> Result<(), RecurringError> {
    if mode == Mode::IssueAndSend && !mail { Err(RecurringError::NoMail) } else { Ok(()) }
}

/// The client must be the team's and billed in the team's currency.
async fn check_client(
    ports: Ports<'_>,
    team: TeamId,
    client: billing::ClientId,
) -> Result<(), RecurringError> {
    let client = ports.billing.get(team, client).await?.ok_or(RecurringError::UnknownClient)?;
    let team_currency = billing::service::the_team(ports.accounts, team).await?.currency;
    match client.details.currency.filter(|currency| *currency != team_currency) {
        Some(currency) => Err(RecurringError::ClientCurrency { client: currency, team: team_currency }),
        None => Ok(()),
    }
}

/// `template` must make a valid invoice for `client` now (its prices fit the currency's
/// minor unit, its lines their limits), as each period will price it.
async fn check_template(
    ports: Ports<'_>,
    team: TeamId,
    client: billing::ClientId,
    template: &Template,
    now: DateTime<Utc>,
) -> Result<(), RecurringError> {
    if template.line_items.is_empty() {
        return Ok(());
    }
    let draft = InvoiceDraft {
        bill_to: BillTo::Existing(client),
        issue_date: Some(now),
        due_date: template.due_days.and_then(|days| now.checked_add_days(Days::new(u64::from(days.days())))),
        description: template.description.clone(),
        status: None,
        sender_id: None,
        tax_percentage: template.tax_percentage,
        tax: template.tax,
        line_items: template.line_items.clone(),
        time_entries: Vec::new(),
        vat: Some(template.vat.clone()),
        exchange_rate: None,
        supply: billing::Supply::default(),
        discount: template.discount,
    };
    match billing::service::new_invoice(ports.billing, ports.accounts, team, draft, now).await {
        Ok(_) => Ok(()),
        Err(BillingError::Rule(rule)) => Err(RecurringError::Template(rule)),
        Err(BillingError::Store(error)) => Err(RecurringError::Store(error)),
        Err(other) => Err(RecurringError::Billing(other)),
    }
}

/// The projects whose time is included must be the team's and ones the client's invoices
/// may bill (a project deleted or moved to another client later fails the periods after,
/// each run saying so).
async fn check_projects(
    ports: Ports<'_>,
    team: TeamId,
    client: billing::ClientId,
    time: Option<&UnbilledTime>,
) -> Result<(), RecurringError> {
    let Some(time) = time else { return Ok(()) };
    let Some(wanted) = &time.projects else { return Ok(()) };
    let projects = ports.tracking.list_projects(team).await?;
    tracking::invoicing::check_wanted(&projects, wanted, Some(client), time.client_projects_only)
        .map_err(RecurringError::Projects)
}

pub async fn pause(
    store: &dyn RecurringStore,
    team: TeamId,
    id: RecurringInvoiceId,
    now: DateTime<Utc>,
) -> Result<RecurringInvoice, RecurringError> {
    read_change_write(store, team, id, |read| read.paused(touched(read, now))).await
}

pub async fn resume(
    store: &dyn RecurringStore,
    team: TeamId,
    id: RecurringInvoiceId,
    now: DateTime<Utc>,
) -> Result<RecurringInvoice, RecurringError> {
    read_change_write(store, team, id, |read| read.resumed(now.date_naive(), touched(read, now))).await
}

/// The time a change of `read` is stamped with: `now`, or just after `read`'s own when
/// the clock stands still (a test's), so that every write moves `updated_at` on and a
/// write conditional on the old one never passes twice.
fn touched(read: &RecurringInvoice, now: DateTime<Utc>) -> DateTime<Utc> {
    now.max(read.updated_at + chrono::TimeDelta::milliseconds(1))
}

/// What the pass made of the due recurring invoices.
#[derive(Debug, Default)]
pub struct PassReport {
    /// The invoices made.
    pub generated: Vec<Invoice>,
    /// The invoices made to be e-mailed (`issue_and_send`): their team and id.
    pub to_send: Vec<(TeamId, billing::InvoiceId)>,
    /// Periods recorded skipped (missed, or nothing to bill).
    pub skipped: u32,
    /// Periods recorded failed.
    pub failed: u32,
    /// Periods left to the next pass: their time was billed or changed while the invoice
    /// was made.
    pub deferred: u32,
}

/// The ports recurring invoices are kept with and their passes read and write.
#[derive(Clone, Copy)]
pub struct Ports<'a> {
    pub recurring: &'a dyn RecurringStore,
    /// Where the clients are, whose currency an invoice is in.
    pub billing: &'a dyn billing::BillingStore,
    pub accounts: &'a dyn AccountStore,
    pub tracking: &'a dyn TrackStore,
}

impl std::fmt::Debug for Ports<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ports")
    }
}

/// How many due recurring invoices a pass reads at once.
const BATCH: u32 = 100;

/// Generates every period due on `now`'s day, of every team: for each recurring invoice,
/// its latest due period's invoice, the missed ones before it recorded skipped. Passes
/// that race (replicas) make each invoice once: the first to record wins, the others
/// find the recurring invoice changed and leave it.
pub async fn run_due(ports: Ports<'_>, now: DateTime<Utc>) -> Result<PassReport, StoreError> {
    let today = now.date_naive();
    let mut report = PassReport::default();
    loop {
        let due = ports.recurring.due_recurring(today, BATCH).await?;
        let mut moved = 0;
        for recurring in &due {
            if pass_one(ports, recurring, today, now, &mut report).await? {
                moved += 1;
            }
        }
        // A batch none of which moved on (each left to another pass, or to try again
        // later) would be read again as it is.
        if due.len() < BATCH as usize || moved == 0 {
            return Ok(report);
        }
    }
}

/// A pass ([`run_due`]), then the e-mail of each invoice of an `issue_and_send` recurring
/// invoice it made, sent as an invoice is sent with nothing asked: the PDF attached, the
/// default wording. Without `mail` (e-mail not configured) those invoices stay unsent, and
/// each is logged.
pub async fn run_due_and_send(
    ports: Ports<'_>,
    mail: Option<notify::service::Mail<'_>>,
    now: DateTime<Utc>,
) -> Result<PassReport, StoreError> {
    let report = run_due(ports, now).await?;
    let files = Files { pdf: Some(PdfFormat::Plain), xml: None };
    for (team, invoice) in &report.to_send {
        let Some(mail) = mail else {
            tracing::error!(%team, %invoice, "an invoice of a recurring invoice was not e-mailed: e-mail is not configured");
            continue;
        };
        let asked = notify::service::Asked::default();
        let document = DocumentRef::Invoice(*invoice);
        if let Err(error) = notify::service::send(mail, *team, document, files, asked, now).await {
            tracing::error!(%team, %invoice, %error, "an invoice of a recurring invoice could not be queued for e-mail");
        }
    }
    let generated = report.generated.len();
    if generated + report.skipped as usize + report.failed as usize + report.deferred as usize > 0 {
        tracing::info!(
            generated,
            skipped = report.skipped,
            failed = report.failed,
            deferred = report.deferred,
            "recurring invoices passed"
        );
    }
    Ok(report)
}

/// What a period's invoice came to.
enum Made {
    /// The invoice, and why entries of the period's time were left out (none: `None`).
    Invoice(Box<NewInvoice>, Option<String>),
    /// A run that makes no invoice: skipped (nothing to bill) or failed, and why.
    Nothing(RunStatus, String),
}

/// The invoice of `period`: the template's lines and, when included, the unbilled time of
/// the period's days; a store error is returned, to try again on a later pass.
async fn make(
    ports: Ports<'_>,
    recurring: &RecurringInvoice,
    period: Occurrence,
    now: DateTime<Utc>,
) -> Result<Made, StoreError> {
    let mut draft = recurring.draft(period);
    let mut left_out = Vec::new();
    if let (Some(days), Some(unbilled)) = (recurring.billed_time(period), &recurring.unbilled_time) {
        // The time its maker may bill, as the team has them now: a member's own time,
        // the team's for owners and admins; nothing once they left the team.
        let Some(maker) = ports.accounts.get_user(recurring.team_id, recurring.created_by).await? else {
            return Ok(Made::Nothing(
                RunStatus::Failed,
                "unbilled time: the user who made the recurring invoice is no longer in the team, and it \
                 bills time only as they may"
                    .into(),
            ));
        };
        let maker = Actor { user_id: maker.id, role: maker.role };
        let time = TimeToInvoice {
            days,
            projects: unbilled.projects.clone(),
            group_by: unbilled.group_by,
            rate: unbilled.rate,
            rounding: unbilled.rounding,
            user: maker.billed_user(),
            client: Some(recurring.client_id),
            client_projects_only: unbilled.client_projects_only,
        };
        match tracking::service::unbilled_time(ports.tracking, recurring.team_id, &time).await {
            Ok(billable) => {
                draft.line_items.extend(billable.lines);
                draft.time_entries = billable.entries;
                left_out = billable.skipped;
            }
            Err(BillTimeError::Rule(TimeBillingRule::NoTime | TimeBillingRule::RoundedAway)) => {}
            Err(BillTimeError::Rule(rule)) => {
                return Ok(Made::Nothing(RunStatus::Failed, format!("unbilled time: {rule}")));
            }
            Err(BillTimeError::Invoice(error)) => return failure(error),
        }
    }
    if draft.line_items.is_empty() {
        return Ok(Made::Nothing(
            RunStatus::Skipped,
            "nothing to bill: no line items and no unbilled time".into(),
        ));
    }
    match billing::service::new_invoice(ports.billing, ports.accounts, recurring.team_id, draft, now).await {
        Ok(mut new) => {
            new.recurrence = Some(Recurrence {
                recurring_invoice_id: recurring.id,
                sequence: recurring.generated_count + 1,
            });
            Ok(Made::Invoice(Box::new(new), left_out_reason(&left_out)))
        }
        Err(error) => failure(error),
    }
}

/// What a generated run says of the entries of its time that could not be billed.
fn left_out_reason(left_out: &[tracking::invoicing::SkippedEntry]) -> Option<String> {
    if left_out.is_empty() {
        return None;
    }
    let each: Vec<String> =
        left_out.iter().map(|skipped| format!("{}: {}", skipped.id, skipped.reason)).collect();
    Some(format!("left out {} time entries that cannot be billed: {}", left_out.len(), each.join("; ")))
}

/// A failed run for a rule an invoice broke; a store error to try again later.
fn failure(error: BillingError) -> Result<Made, StoreError> {
    match error {
        BillingError::Store(error) => Err(error),
        other => Ok(Made::Nothing(RunStatus::Failed, other.to_string())),
    }
}

/// Passes `recurring` on `today`; whether it moved on (`false`: another pass did, or it is
/// to be tried again).
async fn pass_one(
    ports: Ports<'_>,
    recurring: &RecurringInvoice,
    today: NaiveDate,
    now: DateTime<Utc>,
    report: &mut PassReport,
) -> Result<bool, StoreError> {
    let Some(pass) = recurring.pass(today) else { return Ok(false) };
    let Some(period) = pass.generate else { return Ok(false) };
    let stamp = touched(recurring, now);
    let mut runs: Vec<Run> = pass
        .skip
        .iter()
        .map(|missed| {
            Run::without_invoice(
                *missed,
                RunStatus::Skipped,
                "missed: a later period was billed instead",
                now,
            )
        })
        .collect();
    let made = make(ports, recurring, period, now).await?;
    let (invoice, last) = match made {
        Made::Invoice(new, left_out) => {
            let run = Run {
                period_start: period.on,
                invoice_id: Some(new.id),
                status: RunStatus::Generated,
                reason: left_out
                    .map(|reason| reason.chars().take(crate::recurring_invoice::MAX_RUN_REASON).collect()),
                ran_at: now,
            };
            (Some(*new), run)
        }
        Made::Nothing(status, reason) => (None, Run::without_invoice(period, status, &reason, now)),
    };
    let status = last.status;
    runs.push(last);
    let record = PassRecord {
        recurring: recurring.passed(&pass, invoice.is_some(), stamp),
        read_at: recurring.updated_at,
        runs,
        invoice,
    };
    match ports.recurring.record_pass(&record).await {
        Ok(PassRecorded::Written(made)) => {
            report.skipped += u32::try_from(pass.skip.len()).unwrap_or(u32::MAX);
            match made {
                Some(invoice) => {
                    if recurring.mode == Mode::IssueAndSend {
                        report.to_send.push((invoice.team_id, invoice.id));
                    }
                    report.generated.push(*invoice);
                }
                None if status == RunStatus::Failed => report.failed += 1,
                None => report.skipped += 1,
            }
            Ok(true)
        }
        Ok(PassRecorded::Stale) => Ok(false),
        Err(CreateInvoiceError::Store(error)) => Err(error),
        Err(CreateInvoiceError::TimeTaken | CreateInvoiceError::RecurrenceTaken) => {
            // The time was billed or changed meanwhile, or another pass made the invoice:
            // nothing was written; the next pass looks again.
            report.deferred += 1;
            Ok(false)
        }
        Err(refused) => {
            // The invoice broke a rule only storage checks (its client was deleted): the
            // period is recorded failed, and the schedule moves on.
            let reason = billing::service::refused(refused).to_string();
            let record = PassRecord {
                runs: record
                    .runs
                    .iter()
                    .map(|run| match run.status {
                        RunStatus::Generated => Run::without_invoice(period, RunStatus::Failed, &reason, now),
                        _ => run.clone(),
                    })
                    .collect(),
                recurring: recurring.passed(&pass, false, stamp),
                invoice: None,
                ..record
            };
            match ports.recurring.record_pass(&record).await.map_err(|error| match error {
                CreateInvoiceError::Store(error) => error,
                other => StoreError::Unexpected(anyhow::Error::new(other)),
            })? {
                PassRecorded::Written(_) => {
                    report.skipped += u32::try_from(pass.skip.len()).unwrap_or(u32::MAX);
                    report.failed += 1;
                    Ok(true)
                }
                PassRecorded::Stale => Ok(false),
            }
        }
    }
}
