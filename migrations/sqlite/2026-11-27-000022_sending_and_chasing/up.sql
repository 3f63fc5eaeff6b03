-- Mirror of migrations/postgres/2026-11-27-000022_sending_and_chasing in SQLite's terms.
-- SQLite serves one process (and the commands beside it) and takes one writer at a time, so
-- the queue needs no row locks here.

CREATE TABLE events (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id       TEXT    NOT NULL REFERENCES teams (id),
    id            TEXT    NOT NULL CHECK (length(id) = 36),
    type          TEXT    NOT NULL CHECK (type GLOB '[a-z_]*.[a-z_]*'),
    subject_id    TEXT    NOT NULL CHECK (length(subject_id) = 36),
    thread        TEXT    NOT NULL CHECK (length(thread) BETWEEN 1 AND 200),
    data          TEXT    NOT NULL,
    occurred_at   TEXT    NOT NULL,
    dispatched_at TEXT,
    UNIQUE (team_id, id)
) STRICT;
CREATE INDEX events_undispatched ON events (seq) WHERE dispatched_at IS NULL;
CREATE INDEX events_newest ON events (team_id, seq DESC);
CREATE INDEX events_dispatched ON events (dispatched_at) WHERE dispatched_at IS NOT NULL;

CREATE TABLE event_subscriptions (
    team_id    TEXT NOT NULL PRIMARY KEY REFERENCES teams (id),
    events     TEXT NOT NULL CHECK (events <> ''),
    updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE jobs (
    team_id     TEXT    NOT NULL REFERENCES teams (id),
    id          TEXT    NOT NULL CHECK (length(id) = 36),
    kind        TEXT    NOT NULL CHECK (kind IN ('mail', 'webhook', 'agent')),
    subject_id  TEXT    NOT NULL CHECK (length(subject_id) = 36),
    thread      TEXT             CHECK (length(thread) BETWEEN 1 AND 200),
    seq         INTEGER,
    state       TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    run_at      TEXT    NOT NULL,
    lease_until TEXT,
    last_error  TEXT,
    created_at  TEXT    NOT NULL,
    finished_at TEXT,
    PRIMARY KEY (team_id, id),
    CHECK ((thread IS NULL) = (seq IS NULL)),
    CHECK ((state = 'running') = (lease_until IS NOT NULL)),
    CHECK ((state IN ('done', 'failed')) = (finished_at IS NOT NULL))
) STRICT;
CREATE INDEX jobs_due ON jobs (run_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_until) WHERE state = 'running';
CREATE INDEX jobs_thread ON jobs (team_id, thread, seq) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_subject ON jobs (team_id, subject_id);
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX jobs_newest ON jobs (created_at DESC, id DESC);

ALTER TABLE invoices ADD COLUMN sent_at TEXT;
ALTER TABLE invoices ADD COLUMN reminders_sent INTEGER NOT NULL DEFAULT 0 CHECK (reminders_sent >= 0);
ALTER TABLE invoices ADD COLUMN reminder_step INTEGER;
ALTER TABLE invoices ADD COLUMN next_reminder_at TEXT;
ALTER TABLE invoices ADD COLUMN overdue_at TEXT;
CREATE INDEX invoices_next_reminder ON invoices (next_reminder_at) WHERE next_reminder_at IS NOT NULL;
CREATE INDEX invoices_overdue ON invoices (due_date)
    WHERE overdue_at IS NULL AND due_date IS NOT NULL AND status IN ('PENDING', 'PAID_PARTIAL');
-- Invoices past due before events existed raised none: they are not announced now.
UPDATE invoices SET overdue_at = due_date WHERE julianday(due_date) < julianday('now');

ALTER TABLE clients ADD COLUMN reminders_enabled INTEGER NOT NULL DEFAULT 1 CHECK (reminders_enabled IN (0, 1));

CREATE TABLE reminder_policies (
    team_id    TEXT    NOT NULL PRIMARY KEY REFERENCES teams (id),
    enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    steps      TEXT    NOT NULL,
    subject    TEXT    NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    body       TEXT    NOT NULL CHECK (length(body) BETWEEN 1 AND 20000),
    updated_at TEXT    NOT NULL
) STRICT;

CREATE TABLE messages (
    team_id        TEXT    NOT NULL,
    id             TEXT    NOT NULL CHECK (length(id) = 36),
    invoice_id     TEXT    NOT NULL,
    credit_note_id TEXT,
    kind           TEXT    NOT NULL CHECK (kind IN ('invoice', 'reminder', 'credit_note')),
    recipients_to  TEXT    NOT NULL CHECK (recipients_to <> ''),
    recipients_cc  TEXT    NOT NULL,
    subject        TEXT    NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    body           TEXT    NOT NULL CHECK (length(body) BETWEEN 1 AND 20000),
    status         TEXT    NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'failed')),
    attempts       INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error     TEXT,
    message_id     TEXT    NOT NULL CHECK (length(message_id) BETWEEN 3 AND 300),
    reminder_step  INTEGER,
    queued_at      TEXT    NOT NULL,
    sent_at        TEXT,
    PRIMARY KEY (team_id, id),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, credit_note_id) REFERENCES credit_notes (team_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX messages_newest ON messages (team_id, id DESC);
CREATE INDEX messages_of_invoice ON messages (team_id, invoice_id, id DESC);

CREATE TABLE message_attachments (
    team_id      TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    position     INTEGER NOT NULL CHECK (position >= 0),
    filename     TEXT    NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
    content_type TEXT    NOT NULL,
    sha256       TEXT    NOT NULL CHECK (length(sha256) = 64),
    content      BLOB    NOT NULL,
    PRIMARY KEY (team_id, message_id, position),
    FOREIGN KEY (team_id, message_id) REFERENCES messages (team_id, id) ON DELETE CASCADE
) STRICT;

CREATE TABLE invoice_reminders (
    team_id    TEXT    NOT NULL,
    invoice_id TEXT    NOT NULL,
    step       INTEGER NOT NULL,
    message_id TEXT    NOT NULL,
    queued_at  TEXT    NOT NULL,
    PRIMARY KEY (team_id, invoice_id, step),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE CASCADE
) STRICT;

CREATE TABLE webhook_endpoints (
    team_id               TEXT NOT NULL REFERENCES teams (id),
    id                    TEXT NOT NULL CHECK (length(id) = 36),
    url                   TEXT NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    events                TEXT NOT NULL CHECK (events <> ''),
    description           TEXT NOT NULL CHECK (length(description) <= 500),
    secret                TEXT NOT NULL,
    previous_secret       TEXT,
    previous_secret_until TEXT,
    disabled_at           TEXT,
    disabled_reason       TEXT,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    PRIMARY KEY (team_id, id),
    CHECK ((previous_secret IS NULL) = (previous_secret_until IS NULL)),
    CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL))
) STRICT;

CREATE TABLE webhook_deliveries (
    team_id         TEXT    NOT NULL,
    id              TEXT    NOT NULL CHECK (length(id) = 36),
    endpoint_id     TEXT    NOT NULL,
    event_id        TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    response_status INTEGER,
    duration_ms     INTEGER,
    error           TEXT,
    last_attempt_at TEXT,
    next_attempt_at TEXT,
    created_at      TEXT    NOT NULL,
    PRIMARY KEY (team_id, id),
    FOREIGN KEY (team_id, endpoint_id) REFERENCES webhook_endpoints (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, event_id) REFERENCES events (team_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX webhook_deliveries_newest ON webhook_deliveries (team_id, endpoint_id, id DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (team_id, event_id);
