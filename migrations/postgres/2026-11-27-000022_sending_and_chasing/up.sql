-- Sending and chasing: the events every change records, the one durable queue of jobs,
-- e-mail messages with their attachments, reminder policies and the schedule they give
-- invoices, and outbound webhook endpoints with their deliveries.
--
-- The queue and the undispatched events are read across teams by every job pass, so their
-- partial indexes lead with time, not team_id: each is small (what is due or running now).

-- The event log. `seq` orders events: a thread's events (one invoice's, say) are written
-- under that invoice's row lock, so their seq follows the order of their commits.
CREATE TABLE events (
    seq           bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
    team_id       uuid        NOT NULL REFERENCES teams (id),
    id            uuid        NOT NULL,
    type          text        NOT NULL CHECK (type ~ '^[a-z_]+\.[a-z_]+$'),
    subject_id    uuid        NOT NULL,
    thread        text        NOT NULL CHECK (char_length(thread) BETWEEN 1 AND 200),
    data          text        NOT NULL,
    occurred_at   timestamptz NOT NULL,
    dispatched_at timestamptz,
    PRIMARY KEY (team_id, id)
);
CREATE INDEX events_undispatched ON events (seq) WHERE dispatched_at IS NULL;
CREATE INDEX events_newest ON events (team_id, seq DESC);
CREATE INDEX events_dispatched ON events (dispatched_at) WHERE dispatched_at IS NOT NULL;

-- The agent's subscription of each team (the `events` trigger of its definition).
CREATE TABLE event_subscriptions (
    team_id    uuid        PRIMARY KEY REFERENCES teams (id),
    -- Space-separated patterns: `*`, `invoice.*`, `payment.created`.
    events     text        NOT NULL CHECK (events <> ''),
    updated_at timestamptz NOT NULL
);

-- Everything that happens later. A running job is leased to one process until
-- `lease_until`; `attempts` fences a finish from an attempt whose lease ended. Jobs of one
-- thread run one at a time, in `seq` order.
CREATE TABLE jobs (
    team_id     uuid        NOT NULL REFERENCES teams (id),
    id          uuid        NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('mail', 'webhook', 'agent')),
    subject_id  uuid        NOT NULL,
    thread      text                 CHECK (char_length(thread) BETWEEN 1 AND 200),
    seq         bigint,
    state       text        NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts    integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    run_at      timestamptz NOT NULL,
    lease_until timestamptz,
    last_error  text,
    created_at  timestamptz NOT NULL,
    finished_at timestamptz,
    PRIMARY KEY (team_id, id),
    CHECK ((thread IS NULL) = (seq IS NULL)),
    CHECK ((state = 'running') = (lease_until IS NOT NULL)),
    CHECK ((state IN ('done', 'failed')) = (finished_at IS NOT NULL))
);
CREATE INDEX jobs_due ON jobs (run_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_until) WHERE state = 'running';
CREATE INDEX jobs_thread ON jobs (team_id, thread, seq) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_subject ON jobs (team_id, subject_id);
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX jobs_newest ON jobs (created_at DESC, id DESC);

-- Invoices learn when they were first sent, how many reminders went out, their place in
-- the team's reminder policy (the last step handled) and when the next is due, and when
-- the job pass found them overdue.
ALTER TABLE invoices
    ADD COLUMN sent_at          timestamptz,
    ADD COLUMN reminders_sent   integer     NOT NULL DEFAULT 0 CHECK (reminders_sent >= 0),
    ADD COLUMN reminder_step    integer,
    ADD COLUMN next_reminder_at timestamptz,
    ADD COLUMN overdue_at       timestamptz;
CREATE INDEX invoices_next_reminder ON invoices (next_reminder_at) WHERE next_reminder_at IS NOT NULL;
CREATE INDEX invoices_overdue ON invoices (due_date)
    WHERE overdue_at IS NULL AND due_date IS NOT NULL AND status IN ('PENDING', 'PAID_PARTIAL');
-- Invoices past due before events existed raised none: they are not announced now.
UPDATE invoices SET overdue_at = due_date WHERE due_date < now();

ALTER TABLE clients ADD COLUMN reminders_enabled boolean NOT NULL DEFAULT true;

CREATE TABLE reminder_policies (
    team_id    uuid        PRIMARY KEY REFERENCES teams (id),
    enabled    boolean     NOT NULL,
    -- Comma-separated days after the due date, ascending: `-3,0,7`.
    steps      text        NOT NULL,
    subject    text        NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 255),
    body       text        NOT NULL CHECK (char_length(body) BETWEEN 1 AND 20000),
    updated_at timestamptz NOT NULL
);

CREATE TABLE messages (
    team_id        uuid        NOT NULL,
    id             uuid        NOT NULL,
    invoice_id     uuid        NOT NULL,
    credit_note_id uuid,
    kind           text        NOT NULL CHECK (kind IN ('invoice', 'reminder', 'credit_note')),
    -- Addresses separated by newlines (which no address holds).
    recipients_to  text        NOT NULL CHECK (recipients_to <> ''),
    recipients_cc  text        NOT NULL,
    subject        text        NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 255),
    body           text        NOT NULL CHECK (char_length(body) BETWEEN 1 AND 20000),
    status         text        NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'failed')),
    attempts       integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error     text,
    message_id     text        NOT NULL CHECK (char_length(message_id) BETWEEN 3 AND 300),
    reminder_step  integer,
    queued_at      timestamptz NOT NULL,
    sent_at        timestamptz,
    PRIMARY KEY (team_id, id),
    -- A message goes with its invoice (or credit note).
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, credit_note_id) REFERENCES credit_notes (team_id, id) ON DELETE CASCADE
);
CREATE INDEX messages_newest ON messages (team_id, id DESC);
CREATE INDEX messages_of_invoice ON messages (team_id, invoice_id, id DESC);

CREATE TABLE message_attachments (
    team_id      uuid    NOT NULL,
    message_id   uuid    NOT NULL,
    position     integer NOT NULL CHECK (position >= 0),
    filename     text    NOT NULL CHECK (char_length(filename) BETWEEN 1 AND 255),
    content_type text    NOT NULL,
    sha256       text    NOT NULL CHECK (char_length(sha256) = 64),
    content      bytea   NOT NULL,
    PRIMARY KEY (team_id, message_id, position),
    FOREIGN KEY (team_id, message_id) REFERENCES messages (team_id, id) ON DELETE CASCADE
);

-- Each (invoice, step) of the policy is handled once: this key settles a race of passes.
CREATE TABLE invoice_reminders (
    team_id    uuid        NOT NULL,
    invoice_id uuid        NOT NULL,
    step       integer     NOT NULL,
    message_id uuid        NOT NULL,
    queued_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, invoice_id, step),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE CASCADE
);

CREATE TABLE webhook_endpoints (
    team_id               uuid        NOT NULL REFERENCES teams (id),
    id                    uuid        NOT NULL,
    url                   text        NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
    -- Space-separated patterns.
    events                text        NOT NULL CHECK (events <> ''),
    description           text        NOT NULL CHECK (char_length(description) <= 500),
    secret                text        NOT NULL,
    previous_secret       text,
    previous_secret_until timestamptz,
    disabled_at           timestamptz,
    disabled_reason       text,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    CHECK ((previous_secret IS NULL) = (previous_secret_until IS NULL)),
    CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL))
);

CREATE TABLE webhook_deliveries (
    team_id         uuid        NOT NULL,
    id              uuid        NOT NULL,
    endpoint_id     uuid        NOT NULL,
    event_id        uuid        NOT NULL,
    event_type      text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    response_status integer,
    duration_ms     bigint,
    error           text,
    last_attempt_at timestamptz,
    next_attempt_at timestamptz,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    FOREIGN KEY (team_id, endpoint_id) REFERENCES webhook_endpoints (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, event_id) REFERENCES events (team_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_newest ON webhook_deliveries (team_id, endpoint_id, id DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (team_id, event_id);
