//! One `table!` set per backend, with identical table and column names, so a query body
//! written once compiles against either (see [`crate::db_run`]).

/// Declares the tables once, with the SQL type of each column chosen per backend.
macro_rules! tables {
    ($uuid:ty, $ts:ty, $blob:ty, $num:ty) => {
        diesel::table! {
            teams (id) {
                id -> $uuid,
                name -> Text,
                currency -> Text,
                created_at -> $ts,
            }
        }

        diesel::table! {
            users (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                email -> Text,
                email_key -> Text,
                name -> Text,
                role -> Text,
                created_at -> $ts,
            }
        }

        diesel::table! {
            api_keys (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                user_id -> $uuid,
                key_hash -> $blob,
                prefix -> Text,
                scope -> Text,
                permissions -> Text,
                created_at -> $ts,
                expires_at -> Nullable<$ts>,
                revoked_at -> Nullable<$ts>,
                last_used_at -> Nullable<$ts>,
            }
        }

        diesel::table! {
            clients (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                name -> Text,
                email -> Text,
                email_key -> Text,
                phone -> Text,
                vat_number -> Text,
                line1 -> Text,
                line2 -> Text,
                line3 -> Text,
                postal_code -> Text,
                created_at -> $ts,
                updated_at -> $ts,
                reminders_enabled -> Bool,
                city -> Text,
                country_code -> Nullable<Text>,
                buyer_reference -> Text,
                currency -> Nullable<Text>,
                payment_terms_days -> Nullable<Integer>,
                peppol_id -> Nullable<Text>,
                language -> Nullable<Text>,
            }
        }

        diesel::table! {
            projects (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                title -> Text,
                code -> Nullable<Text>,
                status -> Text,
                created_at -> $ts,
                updated_at -> $ts,
                rate -> Nullable<$num>,
                client_id -> Nullable<$uuid>,
            }
        }

        diesel::table! {
            sections (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                project_id -> $uuid,
                title -> Text,
                created_at -> $ts,
                updated_at -> $ts,
            }
        }

        diesel::table! {
            tags (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                title -> Text,
                created_at -> $ts,
                updated_at -> $ts,
            }
        }

        diesel::table! {
            time_entries (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                user_id -> $uuid,
                duration_seconds -> BigInt,
                task_name -> Text,
                description -> Nullable<Text>,
                date -> $ts,
                project_id -> Nullable<$uuid>,
                section_id -> Nullable<$uuid>,
                ai_generated -> Bool,
                created_at -> $ts,
                updated_at -> $ts,
                tag_ids -> Text,
                billable -> Bool,
                invoice_id -> Nullable<$uuid>,
            }
        }

        diesel::table! {
            time_entry_tags (team_id, entry_id, tag_id) {
                team_id -> $uuid,
                entry_id -> $uuid,
                tag_id -> $uuid,
            }
        }

        diesel::table! {
            running_timers (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                user_id -> $uuid,
                task_name -> Text,
                description -> Nullable<Text>,
                project_id -> Nullable<$uuid>,
                section_id -> Nullable<$uuid>,
                started_at -> $ts,
            }
        }

        diesel::table! {
            running_timer_tags (team_id, timer_id, tag_id) {
                team_id -> $uuid,
                timer_id -> $uuid,
                tag_id -> $uuid,
            }
        }

        diesel::table! {
            idempotency_keys (team_id, key) {
                team_id -> $uuid,
                key -> Text,
                fingerprint -> $blob,
                claimed_at -> $ts,
                lease_until -> $ts,
                expires_at -> $ts,
                status -> Nullable<Integer>,
                headers -> Nullable<Text>,
                body -> Nullable<$blob>,
            }
        }

        diesel::table! {
            track_revisions (team_id, shard) {
                team_id -> $uuid,
                shard -> SmallInt,
                revision -> BigInt,
            }
        }

        diesel::table! {
            sender_addresses (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                is_default -> Bool,
                name -> Text,
                line1 -> Text,
                line2 -> Text,
                line3 -> Text,
                postal_code -> Text,
                email -> Nullable<Text>,
                vat_number -> Text,
                created_at -> $ts,
                updated_at -> $ts,
                payment_details -> Text,
                logo -> Nullable<Binary>,
                city -> Text,
                country_code -> Nullable<Text>,
                iban -> Nullable<Text>,
                bic -> Nullable<Text>,
                contact_name -> Text,
                contact_phone -> Text,
                contact_email -> Nullable<Text>,
                peppol_id -> Nullable<Text>,
                language -> Text,
                payment_qr -> Text,
            }
        }

        diesel::table! {
            invoice_serials (team_id) {
                team_id -> $uuid,
                last_serial -> Integer,
            }
        }

        diesel::table! {
            numbering_patterns (team_id, series) {
                team_id -> $uuid,
                series -> Text,
                pattern -> Text,
            }
        }

        diesel::table! {
            numbering_counts (team_id, series, year) {
                team_id -> $uuid,
                series -> Text,
                year -> Integer,
                last_counter -> Integer,
            }
        }

        diesel::table! {
            invoices (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                serial -> Integer,
                number -> Text,
                number_counter -> Integer,
                number_key -> Text,
                description -> Nullable<Text>,
                issue_date -> $ts,
                due_date -> Nullable<$ts>,
                status -> Text,
                currency -> Text,
                tax_percentage -> $num,
                tax -> $num,
                subtotal -> $num,
                total -> $num,
                client_id -> $uuid,
                sender_id -> $uuid,
                created_at -> $ts,
                updated_at -> $ts,
                amount_paid -> $num,
                amount_credited -> $num,
                amount_written_off -> $num,
                credit_refundable -> $num,
                paid_on -> Nullable<Date>,
                ledger_events -> Integer,
                sent_at -> Nullable<$ts>,
                reminders_sent -> Integer,
                reminder_step -> Nullable<Integer>,
                next_reminder_at -> Nullable<$ts>,
                overdue_at -> Nullable<$ts>,
                recurring_invoice_id -> Nullable<$uuid>,
                recurring_sequence -> Nullable<Integer>,
                vat_category -> Text,
                vat_exemption_reason -> Nullable<Text>,
                exchange -> Nullable<Text>,
                service_from -> Nullable<Date>,
                service_to -> Nullable<Date>,
                service_is_period -> Bool,
                purchase_order -> Nullable<Text>,
                discount_percentage -> Nullable<$num>,
                discount_amount -> Nullable<$num>,
                payment_reference -> Nullable<Text>,
                quote_id -> Nullable<$uuid>,
                quote_kind -> Nullable<Text>,
                deposit_invoice_ids -> Nullable<Text>,
                deposits_deducted -> $num,
                payable -> $num,
            }
        }

        diesel::table! {
            ledger_entries (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                invoice_id -> $uuid,
                position -> Integer,
                kind -> Text,
                amount -> $num,
                on_day -> Date,
                method -> Text,
                reference -> Nullable<Text>,
                notes -> Nullable<Text>,
                voided_at -> Nullable<$ts>,
                void_reason -> Nullable<Text>,
                created_at -> $ts,
            }
        }

        diesel::table! {
            credit_note_serials (team_id) {
                team_id -> $uuid,
                last_serial -> Integer,
            }
        }

        diesel::table! {
            credit_notes (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                serial -> Integer,
                number -> Text,
                number_counter -> Integer,
                invoice_id -> $uuid,
                position -> Integer,
                issue_date -> $ts,
                currency -> Text,
                tax_percentage -> $num,
                tax -> $num,
                subtotal -> $num,
                total -> $num,
                reason -> Nullable<Text>,
                applied -> $num,
                refundable -> $num,
                created_at -> $ts,
                discount_percentage -> Nullable<$num>,
                discount_amount -> Nullable<$num>,
            }
        }

        diesel::table! {
            credit_note_lines (team_id, id) {
                team_id -> $uuid,
                credit_note_id -> $uuid,
                id -> $uuid,
                position -> Integer,
                description -> Text,
                unit_price -> $num,
                quantity -> $num,
                amount -> $num,
                created_at -> $ts,
                updated_at -> $ts,
                unit_code -> Text,
                vat_category -> Nullable<Text>,
                tax_percentage -> Nullable<$num>,
                vat_exemption_reason -> Nullable<Text>,
                discount_percentage -> Nullable<$num>,
                discount_amount -> Nullable<$num>,
            }
        }

        diesel::table! {
            line_items (team_id, id) {
                team_id -> $uuid,
                invoice_id -> $uuid,
                id -> $uuid,
                position -> Integer,
                description -> Text,
                unit_price -> $num,
                quantity -> $num,
                amount -> $num,
                created_at -> $ts,
                updated_at -> $ts,
                unit_code -> Text,
                vat_category -> Nullable<Text>,
                tax_percentage -> Nullable<$num>,
                vat_exemption_reason -> Nullable<Text>,
                discount_percentage -> Nullable<$num>,
                discount_amount -> Nullable<$num>,
            }
        }

        diesel::table! {
            agent_messages (team_id, conversation_key, position) {
                team_id -> $uuid,
                conversation_key -> Text,
                position -> BigInt,
                role -> Text,
                content -> Text,
                created_at -> $ts,
            }
        }

        diesel::table! {
            agent_runs (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                trigger -> Text,
                conversation_key -> Nullable<Text>,
                input_excerpt -> Text,
                status -> Text,
                steps -> Integer,
                input_tokens -> BigInt,
                output_tokens -> BigInt,
                started_at -> $ts,
                finished_at -> $ts,
                error -> Nullable<Text>,
                tool_calls -> Text,
                model_input -> Nullable<Text>,
                reply -> Nullable<Text>,
            }
        }

        diesel::table! {
            agent_deliveries (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                delivery_id -> Text,
                event -> Text,
                action -> Nullable<Text>,
                repository -> Nullable<Text>,
                conversation_key -> Nullable<Text>,
                verdict -> Text,
                note -> Nullable<Text>,
                body_sha256 -> Text,
                received_at -> $ts,
                input -> Nullable<Text>,
                state -> Nullable<Text>,
                attempts -> Integer,
                next_attempt_at -> Nullable<$ts>,
                run_id -> Nullable<$uuid>,
                error -> Nullable<Text>,
                finished_at -> Nullable<$ts>,
                lease_until -> Nullable<$ts>,
                summary -> Text,
            }
        }

        diesel::table! {
            agent_delivery_dedupe (team_id, delivery_id) {
                team_id -> $uuid,
                delivery_id -> Text,
                body_sha256 -> Text,
                accepted_at -> $ts,
            }
        }

        diesel::table! {
            events (team_id, id) {
                seq -> BigInt,
                team_id -> $uuid,
                id -> $uuid,
                #[sql_name = "type"]
                kind -> Text,
                subject_id -> $uuid,
                thread -> Text,
                data -> Text,
                occurred_at -> $ts,
                dispatched_at -> Nullable<$ts>,
                owner_id -> Nullable<$uuid>,
            }
        }

        diesel::table! {
            event_subscriptions (team_id) {
                team_id -> $uuid,
                events -> Text,
                updated_at -> $ts,
            }
        }

        diesel::table! {
            jobs (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                kind -> Text,
                subject_id -> $uuid,
                thread -> Nullable<Text>,
                seq -> Nullable<BigInt>,
                state -> Text,
                attempts -> Integer,
                run_at -> $ts,
                lease_until -> Nullable<$ts>,
                last_error -> Nullable<Text>,
                created_at -> $ts,
                finished_at -> Nullable<$ts>,
            }
        }

        diesel::table! {
            reminder_policies (team_id) {
                team_id -> $uuid,
                enabled -> Bool,
                steps -> Text,
                subject -> Text,
                body -> Text,
                updated_at -> $ts,
            }
        }

        diesel::table! {
            messages (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                invoice_id -> Nullable<$uuid>,
                credit_note_id -> Nullable<$uuid>,
                kind -> Text,
                recipients_to -> Text,
                recipients_cc -> Text,
                subject -> Text,
                body -> Text,
                status -> Text,
                attempts -> Integer,
                last_error -> Nullable<Text>,
                message_id -> Text,
                reminder_step -> Nullable<Integer>,
                queued_at -> $ts,
                sent_at -> Nullable<$ts>,
                quote_id -> Nullable<$uuid>,
            }
        }

        diesel::table! {
            message_attachments (team_id, message_id, position) {
                team_id -> $uuid,
                message_id -> $uuid,
                position -> Integer,
                filename -> Text,
                content_type -> Text,
                sha256 -> Text,
                content -> $blob,
            }
        }

        diesel::table! {
            invoice_reminders (team_id, invoice_id, step) {
                team_id -> $uuid,
                invoice_id -> $uuid,
                step -> Integer,
                message_id -> $uuid,
                queued_at -> $ts,
            }
        }

        diesel::table! {
            webhook_endpoints (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                url -> Text,
                events -> Text,
                description -> Text,
                secret -> Text,
                previous_secret -> Nullable<Text>,
                previous_secret_until -> Nullable<$ts>,
                disabled_at -> Nullable<$ts>,
                disabled_reason -> Nullable<Text>,
                created_at -> $ts,
                updated_at -> $ts,
                created_by -> Nullable<$uuid>,
            }
        }

        diesel::table! {
            webhook_deliveries (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                endpoint_id -> $uuid,
                event_id -> $uuid,
                event_type -> Text,
                status -> Text,
                attempts -> Integer,
                response_status -> Nullable<Integer>,
                duration_ms -> Nullable<BigInt>,
                error -> Nullable<Text>,
                last_attempt_at -> Nullable<$ts>,
                next_attempt_at -> Nullable<$ts>,
                created_at -> $ts,
            }
        }

        diesel::table! {
            recurring_invoices (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                client_id -> $uuid,
                template -> Text,
                frequency -> Text,
                interval_count -> Integer,
                day_of_month -> Nullable<Integer>,
                weekday -> Nullable<Text>,
                month -> Nullable<Integer>,
                starts_on -> Date,
                ends_on -> Nullable<Date>,
                period_count -> Nullable<Integer>,
                mode -> Text,
                unbilled_time -> Nullable<Text>,
                status -> Text,
                next_sequence -> Nullable<Integer>,
                next_run_on -> Nullable<Date>,
                generated_count -> Integer,
                created_at -> $ts,
                updated_at -> $ts,
                created_by -> Nullable<$uuid>,
            }
        }

        diesel::table! {
            recurring_runs (team_id, recurring_invoice_id, period_start) {
                team_id -> $uuid,
                recurring_invoice_id -> $uuid,
                period_start -> Date,
                invoice_id -> Nullable<$uuid>,
                status -> Text,
                reason -> Nullable<Text>,
                ran_at -> $ts,
            }
        }

        diesel::table! {
            card_accounts (team_id, processor) {
                team_id -> $uuid,
                processor -> Text,
                secret_key -> Text,
                webhook_secret -> Text,
                webhook_token_hash -> $blob,
                created_at -> $ts,
                updated_at -> $ts,
            }
        }

        diesel::table! {
            card_receipts (team_id, processor, reference) {
                team_id -> $uuid,
                processor -> Text,
                reference -> Text,
                kind -> Text,
                payment -> Text,
                invoice_id -> $uuid,
                client_id -> $uuid,
                currency -> Text,
                amount -> $num,
                booked -> $num,
                credited -> $num,
                created_at -> $ts,
            }
        }

        diesel::table! {
            client_credits (team_id, client_id, currency) {
                team_id -> $uuid,
                client_id -> $uuid,
                currency -> Text,
                balance -> $num,
                updated_at -> $ts,
            }
        }

        diesel::table! {
            quotes (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                client_id -> $uuid,
                number -> Nullable<Text>,
                number_counter -> Nullable<Integer>,
                status -> Text,
                description -> Nullable<Text>,
                notes -> Nullable<Text>,
                valid_until -> Nullable<$ts>,
                currency -> Text,
                exchange -> Nullable<Text>,
                vat_category -> Text,
                vat_exemption_reason -> Nullable<Text>,
                tax_percentage -> $num,
                tax -> $num,
                subtotal -> $num,
                total -> $num,
                discount_percentage -> Nullable<$num>,
                discount_amount -> Nullable<$num>,
                sent_at -> Nullable<$ts>,
                verdict -> Nullable<Text>,
                signer -> Nullable<Text>,
                decline_reason -> Nullable<Text>,
                decided_on -> Nullable<Text>,
                decided_ip -> Nullable<Text>,
                decided_user_agent -> Nullable<Text>,
                decided_at -> Nullable<$ts>,
                expiry_announced_for -> Nullable<$ts>,
                supersedes -> Nullable<$uuid>,
                created_at -> $ts,
                updated_at -> $ts,
            }
        }

        diesel::table! {
            quote_lines (team_id, id) {
                team_id -> $uuid,
                quote_id -> $uuid,
                id -> $uuid,
                position -> Integer,
                description -> Text,
                unit_price -> $num,
                quantity -> $num,
                amount -> $num,
                created_at -> $ts,
                updated_at -> $ts,
                unit_code -> Text,
                vat_category -> Nullable<Text>,
                tax_percentage -> Nullable<$num>,
                vat_exemption_reason -> Nullable<Text>,
                discount_percentage -> Nullable<$num>,
                discount_amount -> Nullable<$num>,
            }
        }

        diesel::table! {
            quote_invoices (team_id, invoice_id) {
                team_id -> $uuid,
                invoice_id -> $uuid,
                quote_id -> $uuid,
                position -> Integer,
                kind -> Text,
                number -> Text,
                counter -> Integer,
                net -> $num,
                total -> $num,
            }
        }

        diesel::table! {
            bank_statements (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                format -> Text,
                account -> Nullable<Text>,
                currency -> Text,
                opening_balance -> Nullable<$num>,
                closing_balance -> Nullable<$num>,
                from_day -> Nullable<Date>,
                to_day -> Nullable<Date>,
                entries -> Integer,
                duplicates -> Integer,
                matched -> Integer,
                suggested -> Integer,
                imported_at -> $ts,
            }
        }

        diesel::table! {
            bank_transactions (team_id, id) {
                team_id -> $uuid,
                id -> $uuid,
                statement_id -> $uuid,
                entry_key -> Text,
                account -> Nullable<Text>,
                booked_on -> Date,
                value_on -> Nullable<Date>,
                amount -> $num,
                currency -> Text,
                counterparty_name -> Nullable<Text>,
                counterparty_iban -> Nullable<Text>,
                remittance -> Text,
                reference -> Nullable<Text>,
                bank_reference -> Nullable<Text>,
                status -> Text,
                suggested_invoice_id -> Nullable<$uuid>,
                credited -> $num,
                credited_client_id -> Nullable<$uuid>,
                created_at -> $ts,
            }
        }

        diesel::table! {
            bank_payments (team_id, entry_id) {
                team_id -> $uuid,
                transaction_id -> $uuid,
                entry_id -> $uuid,
                invoice_id -> $uuid,
                amount -> $num,
            }
        }

        diesel::table! {
            bank_csv_mappings (team_id) {
                team_id -> $uuid,
                mapping -> Text,
                updated_at -> $ts,
            }
        }

        diesel::allow_tables_to_appear_in_same_query!(
            teams,
            users,
            api_keys,
            clients,
            projects,
            sections,
            tags,
            time_entries,
            time_entry_tags,
            running_timers,
            running_timer_tags,
            sender_addresses,
            invoice_serials,
            numbering_patterns,
            numbering_counts,
            invoices,
            line_items,
            ledger_entries,
            credit_note_serials,
            credit_notes,
            credit_note_lines,
            agent_messages,
            agent_runs,
            agent_deliveries,
            agent_delivery_dedupe,
            track_revisions,
            idempotency_keys,
            events,
            event_subscriptions,
            jobs,
            reminder_policies,
            messages,
            message_attachments,
            invoice_reminders,
            webhook_endpoints,
            webhook_deliveries,
            recurring_invoices,
            recurring_runs,
            card_accounts,
            card_receipts,
            client_credits,
            bank_statements,
            bank_transactions,
            bank_payments,
            bank_csv_mappings,
            quotes,
            quote_lines,
            quote_invoices,
        );
    };
}

pub(crate) mod pg {
    // `table!` brings `diesel::sql_types::*` into scope for the column types.
    tables!(Uuid, Timestamptz, Binary, Numeric);

    /// Run first in the first-start bootstrap's transaction: a second process starting
    /// at the same moment waits here, then sees the team the first one made.
    pub(crate) const SERIALIZE_BOOTSTRAP: &str = "LOCK TABLE teams IN SHARE ROW EXCLUSIVE MODE";
}

pub(crate) mod sqlite {
    tables!(Text, TimestamptzSqlite, Binary, Text);

    /// A write first, so that the transaction takes SQLite's write lock (waiting for it
    /// as `busy_timeout` allows) before it reads: a transaction that read first could not
    /// upgrade while another wrote, and would fail with "database is locked".
    pub(crate) const SERIALIZE_BOOTSTRAP: &str = "UPDATE teams SET name = name WHERE 0";
}
