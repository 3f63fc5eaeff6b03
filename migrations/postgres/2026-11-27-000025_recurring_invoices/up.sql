-- Recurring invoices: a schedule that bills a client once per period, its template and the
-- unbilled time it adds (both JSON, parsed back into their domain types), where it stands,
-- and its next period. The invoices it makes name it (migration 000024).
CREATE TABLE recurring_invoices (
    team_id         uuid        NOT NULL REFERENCES teams (id),
    id              uuid        NOT NULL,
    client_id       uuid        NOT NULL,
    -- The template as JSON: description, lineItems, taxPercentage, tax, dueDays.
    template        text        NOT NULL,
    frequency       text        NOT NULL CHECK (frequency IN ('weekly', 'monthly', 'yearly')),
    interval_count  integer     NOT NULL CHECK (interval_count BETWEEN 1 AND 100),
    day_of_month    integer              CHECK (day_of_month = -1 OR day_of_month BETWEEN 1 AND 28),
    weekday         text                 CHECK (weekday IN ('monday', 'tuesday', 'wednesday', 'thursday',
                                                            'friday', 'saturday', 'sunday')),
    month           integer              CHECK (month BETWEEN 1 AND 12),
    starts_on       date        NOT NULL,
    ends_on         date,
    period_count    integer              CHECK (period_count BETWEEN 1 AND 1000),
    mode            text        NOT NULL CHECK (mode IN ('issue', 'issue_and_send')),
    -- The unbilled time a period adds, as JSON; NULL when it adds none.
    unbilled_time   text,
    status          text        NOT NULL CHECK (status IN ('active', 'paused', 'completed')),
    -- The next period (its place in the schedule and its day); NULL once completed.
    next_sequence   integer              CHECK (next_sequence >= 1),
    next_run_on     date,
    generated_count integer     NOT NULL DEFAULT 0 CHECK (generated_count >= 0),
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    CHECK ((next_sequence IS NULL) = (next_run_on IS NULL)),
    CHECK ((status = 'completed') = (next_run_on IS NULL)),
    CHECK (ends_on IS NULL OR period_count IS NULL),
    CHECK ((frequency = 'weekly') = (weekday IS NOT NULL)),
    CHECK ((frequency = 'weekly') = (day_of_month IS NULL)),
    CHECK ((frequency = 'yearly') = (month IS NOT NULL))
);
-- What a job pass reads across teams: the active ones due.
CREATE INDEX recurring_invoices_due ON recurring_invoices (next_run_on) WHERE status = 'active';
