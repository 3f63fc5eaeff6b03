//! The contract of every storage port, as tests any adapter can run: one `async fn` per
//! behaviour a port promises (each port's doc comments say which error a method MUST
//! return when), taking the adapter's ports on a fresh, empty store.
//!
//! An adapter runs the whole suite from its own tests with [`contract_suite!`], given the
//! path (from the crate root) of an `async fn` that makes [`Ports`] over a fresh store:
//!
//! ```ignore
//! async fn ports() -> store_contract::Ports {
//!     let store = std::sync::Arc::new(MyStore::new());
//!     store_contract::Ports::of(store.clone(), my_turns(store))
//! }
//! store_contract::contract_suite!(crate::ports);
//! ```
//!
//! `store-memory` runs it on its in-process store, `store-sql` on SQLite and on
//! PostgreSQL (a schema of its own per test, from [`Database`]); a team with a store of its
//! own runs it the same way, without touching the rest of billable.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    reason = "a contract test fails loudly where the port breaks its promise"
)]

use std::sync::Arc;
use std::time::Duration;

use accounts::{AccountStore, Currency, IdempotencyStore, Role, Scope, TeamId, TeamName, UserId, UserName};
use billing::BillingStore;
use chrono::TimeDelta;
use kernel::{Clock, Email, SystemClock};
use tracking::TrackStore;
use triggers::{AgentStore, ConversationTurns};

pub mod accounts_contract;
pub mod agent;
pub mod banking_contract;
pub mod cards_contract;
pub mod chasing_contract;
mod database;
pub mod deliveries;
pub mod idempotency;
pub mod invoices;
pub mod ledger_contract;
pub mod numbering_contract;
pub mod quotes_contract;
pub mod recurring_contract;
pub mod timers;
pub mod tracking_contract;
pub mod turns;

pub use database::{Database, admin_session, admin_url};

/// Makes the conversation lines of a store, with a lease of the given length.
pub type TurnsFactory = Arc<dyn Fn(Duration) -> Arc<dyn ConversationTurns> + Send + Sync>;

/// The ports one adapter implements, over one fresh store, as the suite drives them.
#[derive(Clone)]
pub struct Ports {
    pub accounts: Arc<dyn AccountStore>,
    pub billing: Arc<dyn BillingStore>,
    pub track: Arc<dyn TrackStore>,
    pub agent: Arc<dyn AgentStore>,
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// Events, jobs, messages, reminders and webhooks.
    pub notify: Arc<dyn notify::NotifyStore>,
    pub recurring: Arc<dyn recurring::RecurringStore>,
    /// The conversation lines every process sharing the store sees: shared ones on a
    /// store replicas share, in-process ones elsewhere.
    pub turns: TurnsFactory,
    /// What the store needs kept alive while it is used (a database to drop after).
    pub keep: Arc<dyn std::any::Any + Send + Sync>,
}

impl std::fmt::Debug for Ports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ports")
    }
}

impl Ports {
    /// Every port from one store that implements them all, with its conversation lines.
    pub fn of<S>(store: Arc<S>, turns: TurnsFactory) -> Self
    where
        S: AccountStore
            + BillingStore
            + TrackStore
            + AgentStore
            + IdempotencyStore
            + notify::NotifyStore
            + recurring::RecurringStore
            + 'static,
    {
        Self {
            accounts: store.clone(),
            billing: store.clone(),
            track: store.clone(),
            agent: store.clone(),
            idempotency: store.clone(),
            notify: store.clone(),
            recurring: store,
            turns,
            keep: Arc::new(()),
        }
    }

    /// The same ports, keeping `guard` alive as long as they are.
    #[must_use]
    pub fn keeping(self, guard: impl std::any::Any + Send + Sync) -> Self {
        Self { keep: Arc::new(guard), ..self }
    }

    pub fn accounts(&self) -> Arc<dyn AccountStore> {
        self.accounts.clone()
    }

    pub fn billing(&self) -> Arc<dyn BillingStore> {
        self.billing.clone()
    }

    pub fn track(&self) -> Arc<dyn TrackStore> {
        self.track.clone()
    }

    pub fn agent(&self) -> Arc<dyn AgentStore> {
        self.agent.clone()
    }

    pub fn idempotency(&self) -> Arc<dyn IdempotencyStore> {
        self.idempotency.clone()
    }

    pub fn notify(&self) -> Arc<dyn notify::NotifyStore> {
        self.notify.clone()
    }

    pub fn recurring(&self) -> Arc<dyn recurring::RecurringStore> {
        self.recurring.clone()
    }

    /// Conversation lines over this store, whose tickets a stopped holder keeps `lease` long.
    pub fn turns(&self, lease: Duration) -> Arc<dyn ConversationTurns> {
        (self.turns)(lease)
    }
}

/// Where the helpers below make their rows: the suite's ports, or an account store of a
/// test's own.
pub trait HasAccounts {
    fn account_store(&self) -> &dyn AccountStore;
}

impl HasAccounts for Ports {
    fn account_store(&self) -> &dyn AccountStore {
        self.accounts.as_ref()
    }
}

impl HasAccounts for Arc<dyn AccountStore> {
    fn account_store(&self) -> &dyn AccountStore {
        self.as_ref()
    }
}

/// Creates a team (currency EUR) and returns its id.
pub async fn create_team(ports: &impl HasAccounts, name: &str) -> TeamId {
    let team = accounts::new_team(
        TeamName::parse(name).unwrap(),
        Currency::parse("EUR").unwrap(),
        SystemClock.now(),
    );
    ports.account_store().create_team(&team).await.unwrap();
    team.id
}

/// Creates a user with `role` in `team`, with an email of its own.
pub async fn create_user(ports: &impl HasAccounts, team: TeamId, role: Role) -> UserId {
    let email =
        Email::parse(format!("{}-{}@example.com", role.as_str(), uuid::Uuid::new_v4().simple())).unwrap();
    let user =
        accounts::new_user(team, email, UserName::parse("Test User").unwrap(), role, SystemClock.now());
    ports.account_store().create_user(&user).await.unwrap();
    user.id
}

/// Issues a key; `expires_in` may be negative to make an already expired key.
pub async fn create_key(
    ports: &impl HasAccounts,
    team: TeamId,
    user: UserId,
    scope: Scope,
    expires_in: Option<TimeDelta>,
) -> (accounts::ApiKeyId, String) {
    let issued = accounts::issue_api_key(team, user, scope, expires_in, SystemClock.now());
    let issued = issued.store(ports.account_store()).await.unwrap();
    (issued.key.id, issued.secret.expose().to_owned())
}

/// One `#[tokio::test]` per behaviour of the contract, in a module per port, each on fresh
/// ports that `$ports` makes: the path, from the crate root, of an `async fn() -> Ports`.
#[macro_export]
macro_rules! contract_suite {
    ($ports:path) => {
        $crate::contract_suite!(@tests $ports;
            accounts_contract::{
                teams_round_trip,
                users_belong_to_existing_teams_with_unique_emails,
                users_list_per_team_oldest_first_with_every_field,
                keys_belong_to_users_of_their_team,
                credentials_are_found_by_hash_only,
                keys_list_per_team_oldest_first,
                revocation_keeps_the_first_time,
                key_use_never_moves_backwards,
                bootstrap_happens_once,
                concurrent_bootstraps_make_one_team,
                clients_round_trip,
                clients_are_invisible_to_other_teams,
                clients_list_in_name_order,
                replace_changes_details_and_keeps_creation,
                delete_is_permanent_and_scoped,
            },
            cards_contract::{
                a_card_payment_is_booked_once,
                money_beyond_what_is_due_becomes_the_clients_credit,
                a_card_refund_gives_back_the_credit_first_once,
                a_payment_in_another_currency_is_credit_in_that_currency_and_so_is_its_refund,
                concurrent_reports_of_one_payment_book_it_once,
                card_accounts_are_found_by_their_tokens_hash,
            },
            agent::{
                memory_gives_the_last_messages_in_order,
                memory_is_per_conversation_and_per_team,
                runs_round_trip_every_field,
                runs_list_newest_first_filtered_and_limited,
                runs_are_invisible_to_other_teams,
                runs_recorded_together_are_all_stored_or_none_is,
            },
            deliveries::{
                accepted_deliveries_are_queued_logged_and_claimed_once,
                a_repeated_id_or_body_is_a_duplicate_within_the_window,
                two_copies_at_once_make_one_accepted_delivery,
                attempts_finish_retry_or_fail,
                runs_whose_lease_ended_are_queued_again,
                pruning_forgets_old_records_but_not_pending_deliveries,
                the_log_lists_newest_first_filtered_and_per_team,
            },
            idempotency::{
                a_free_key_is_granted_once_even_when_claims_race,
                an_answered_key_gives_its_answer_to_the_same_request_only,
                an_unanswered_key_is_freed_by_release_or_its_lease,
                expired_keys_are_free_and_purged,
                keys_are_per_team,
            },
            invoices::{
                invoices_round_trip_with_items_in_order,
                lines_keep_their_own_vat,
                discounts_round_trip_and_credit_notes_take_them,
                serials_are_gapless_under_concurrency,
                a_refused_create_writes_nothing_and_gives_its_serial_back,
                a_recurring_invoice_has_one_invoice_per_sequence,
                inline_clients_match_by_email_oldest_first_or_are_made,
                an_invoice_is_in_its_clients_currency_with_its_exchange_kept,
                a_team_changes_its_currency_only_before_its_books_start,
                replacing_changes_fields_and_items,
                invoices_list_newest_issue_date_first_then_serial,
                an_invoice_keeps_its_supply_as_a_day_a_period_or_none,
                invoices_filter_by_status_client_issue_date_and_text_and_page_in_order,
                invoices_are_invisible_to_other_teams,
                clients_with_invoices_cannot_be_deleted,
                deleting_an_invoice_takes_its_items,
                a_team_has_one_default_sender,
                a_first_invoice_makes_the_default_sender_in_its_own_transaction,
                the_document_prints_the_senders_payment_details_and_logo,
            },
            ledger_contract::{
                payments_move_the_balance_and_the_status,
                refunds_voids_and_write_offs_keep_the_books,
                updates_keep_the_total_above_what_was_recorded,
                credit_notes_take_their_own_serials_and_lower_what_is_due,
                books_are_invisible_to_other_teams,
                concurrent_payments_are_played_one_after_the_other,
                concurrent_voids_payments_and_deletes_all_land,
                concurrent_credit_notes_take_gapless_serials,
                receivables_sum_what_is_due_by_age,
            },
            numbering_contract::{
                documents_take_the_teams_pattern_and_count_by_issue_year,
                a_number_taken_already_is_refused_and_its_count_given_back,
                yearly_counts_stay_gapless_under_concurrency,
                changes_of_different_series_all_hold,
            },
            quotes_contract::{
                quotes_round_trip_change_while_drafts_and_stay_in_their_team,
                a_quote_is_numbered_once_and_then_never_changes,
                concurrent_finalisations_number_quotes_without_gaps,
                a_decision_is_made_once_on_a_sent_quote_still_valid,
                an_accepted_quote_takes_deposits_then_its_final_invoice_deducts_them,
                concurrent_conversions_make_one_invoice,
                quotes_list_newest_first_filtered_by_status_and_client_and_page,
                a_conversion_is_refused_as_a_create_would_be,
                quote_writes_record_their_events_and_expiry_is_announced_once,
                a_quote_is_mailed_in_a_thread_of_its_own,
            },
            banking_contract::{
                a_statement_is_kept_once_however_often_it_is_imported,
                a_transaction_pays_once_and_what_is_above_the_due_is_credit,
                money_out_and_strangers_invoices_are_never_booked,
                a_csv_mapping_round_trips,
                thousands_of_entries_import_whole_and_each_unmatched_credit_raises_its_event,
            },
            timers::{
                a_timer_round_trips_with_its_tags_current,
                a_user_has_one_running_timer_even_when_starts_race,
                a_stop_makes_one_entry_and_ends_the_timer,
                a_discarded_timer_logs_nothing,
                timers_refuse_references_outside_the_team_and_hold_their_project,
                timers_are_invisible_to_other_teams,
            },
            tracking_contract::{
                tags_rename_and_delete_reach_every_entry,
                billed_time_is_locked_and_released_with_its_invoice,
                an_invoice_bills_its_time_in_its_own_transaction,
                a_preview_checks_as_a_create_does_and_keeps_nothing,
                reports_sum_time_per_group_and_rate,
                projects_keep_codes_unique_per_team,
                project_updates_change_only_what_they_name,
                projects_belong_to_a_client_of_their_team_which_keeps_them,
                projects_and_sections_with_entries_cannot_be_deleted,
                deleting_a_project_takes_its_sections,
                sections_need_a_project_of_the_team,
                entries_round_trip_with_their_tags,
                entries_list_by_period_and_user_in_order,
                entries_filter_by_project_section_and_tag_and_page_in_order,
                replacing_an_entry_replaces_its_tags,
                entries_refuse_references_outside_the_team,
                tracking_is_invisible_to_other_teams,
                the_listing_revision_grows_with_every_change_a_listing_shows,
            },
            turns::{
                one_holds_the_turn_the_others_wait_in_arrival_order,
                a_full_line_refuses_and_frees_a_place_when_one_leaves,
                a_ticket_that_leaves_while_waiting_is_passed_over,
                only_the_holder_writes_the_conversations_memory,
                lines_are_per_conversation_and_per_team,
            },
            recurring_contract::{
                recurring_invoices_round_trip_and_stay_in_their_team,
                recurring_invoices_list_in_order_and_page,
                a_replacement_never_undoes_a_change_made_meanwhile,
                the_due_ones_of_every_team_are_the_active_ones_whose_day_came,
                racing_passes_make_each_period_s_invoice_once_and_skip_the_missed_ones,
                a_pass_that_read_before_a_pause_writes_nothing,
                a_run_outlives_its_invoice_and_goes_with_its_recurring_invoice,
            },
            chasing_contract::{
                every_write_records_its_events_in_order,
                tracking_writes_record_their_events,
                refused_writes_and_previews_record_nothing,
                dispatch_hands_each_event_once_to_matching_endpoints_and_the_agent,
                endpoints_get_only_what_their_maker_may_read,
                jobs_are_claimed_once_leased_fenced_and_taken_over,
                jobs_of_one_thread_run_in_order,
                a_job_is_finished_only_by_the_attempt_that_holds_it,
                a_team_keeps_at_most_its_endpoints_under_concurrent_creates,
                messages_are_queued_sent_failed_and_retried,
                reminders_follow_the_policy_once_per_step,
                a_reminder_speaks_the_clients_language_or_else_the_teams,
                concurrent_reminder_passes_send_each_step_once,
                marking_an_invoice_sent_happens_once,
                due_work_counts_what_a_pass_would_find,
                overdue_is_announced_once_per_due_date,
                webhook_endpoints_keep_their_deliveries,
            },
        );
    };
    (@tests $ports:path; $($module:ident::{$($test:ident),* $(,)?}),* $(,)?) => {
        $(mod $module {$(
            #[tokio::test]
            async fn $test() {
                $crate::$module::$test($ports().await).await;
            }
        )*})*
    };
}

/// How long the suite lets a lease run where it does not wait for one to end.
pub const LONG_LEASE: Duration = Duration::from_secs(30);
