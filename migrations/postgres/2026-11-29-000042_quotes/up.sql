-- Quotes: what the work will cost, before the invoice. A draft has no number; finalising
-- it takes the next of the team's quote series (numbering_counts, series 'quotes'). The
-- status column holds what writes decide (EXPIRED follows from valid_until and the clock);
-- the decision is final once recorded.
CREATE TABLE quotes (
    team_id              uuid        NOT NULL REFERENCES teams (id),
    id                   uuid        NOT NULL,
    client_id            uuid        NOT NULL,
    number               text        CHECK (number IS NULL OR length(number) BETWEEN 1 AND 64),
    number_counter       integer     CHECK (number_counter IS NULL OR number_counter > 0),
    status               text        NOT NULL CHECK (status IN ('DRAFT', 'SENT', 'ACCEPTED', 'DECLINED', 'CONVERTED')),
    description          text        CHECK (length(description) <= 1000),
    notes                text        CHECK (length(notes) <= 5000),
    valid_until          timestamptz,
    currency             text        NOT NULL CHECK (length(currency) = 3),
    exchange             text,
    vat_category         text        NOT NULL,
    vat_exemption_reason text,
    tax_percentage       numeric     NOT NULL,
    tax                  numeric     NOT NULL,
    subtotal             numeric     NOT NULL,
    total                numeric     NOT NULL,
    discount_percentage  numeric,
    discount_amount      numeric,
    sent_at              timestamptz,
    -- The client's decision: accepted with a signer's name, or declined with a reason; on
    -- the quote's page (with the address and browser it came from) or recorded by the team.
    verdict              text        CHECK (verdict IN ('accepted', 'declined')),
    signer               text        CHECK (length(signer) BETWEEN 1 AND 200),
    decline_reason       text        CHECK (length(decline_reason) <= 1000),
    decided_on           text        CHECK (decided_on IN ('page', 'team')),
    decided_ip           text,
    decided_user_agent   text,
    decided_at           timestamptz,
    -- When quote.expired was announced for its valid_until.
    expiry_announced_for timestamptz,
    supersedes           uuid,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, number),
    FOREIGN KEY (team_id, client_id) REFERENCES clients (team_id, id),
    CHECK ((number IS NULL) = (number_counter IS NULL)),
    CHECK ((verdict IS NULL) = (decided_at IS NULL))
);
CREATE INDEX quotes_listing ON quotes (team_id, created_at DESC, id DESC);
CREATE INDEX quotes_client ON quotes (team_id, client_id);

CREATE TABLE quote_lines (
    team_id              uuid        NOT NULL,
    quote_id             uuid        NOT NULL,
    id                   uuid        NOT NULL,
    position             integer     NOT NULL CHECK (position >= 0),
    description          text        NOT NULL CHECK (length(description) <= 1000),
    unit_price           numeric     NOT NULL CHECK (unit_price >= 0),
    quantity             numeric     NOT NULL CHECK (quantity > 0),
    amount               numeric     NOT NULL CHECK (amount >= 0),
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    unit_code            text        NOT NULL CHECK (length(unit_code) IN (2, 3)),
    vat_category         text        CHECK (vat_category IN ('S', 'Z', 'E', 'AE', 'K', 'G', 'O')),
    tax_percentage       numeric     CHECK (tax_percentage BETWEEN 0 AND 100),
    vat_exemption_reason text,
    discount_percentage  numeric     CHECK (discount_percentage BETWEEN 0 AND 100),
    discount_amount      numeric     CHECK (discount_amount >= 0),
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, quote_id, position),
    FOREIGN KEY (team_id, quote_id) REFERENCES quotes (team_id, id) ON DELETE CASCADE
);

-- The invoices made of each quote, in order: deposits, then its full or final invoice.
-- Deleting an invoice takes its row.
CREATE TABLE quote_invoices (
    team_id    uuid    NOT NULL,
    invoice_id uuid    NOT NULL,
    quote_id   uuid    NOT NULL,
    position   integer NOT NULL CHECK (position >= 0),
    kind       text    NOT NULL CHECK (kind IN ('full', 'deposit', 'final')),
    number     text    NOT NULL,
    counter    integer NOT NULL CHECK (counter > 0),
    net        numeric NOT NULL,
    total      numeric NOT NULL,
    PRIMARY KEY (team_id, invoice_id),
    UNIQUE (team_id, quote_id, position),
    FOREIGN KEY (team_id, invoice_id) REFERENCES invoices (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, quote_id) REFERENCES quotes (team_id, id)
);

-- An invoice made of a quote names it and how it bills it; a final invoice lists the
-- deposit invoices it deducts and what they come to. `payable` is what the ledger plays
-- with: the total less those deposits.
ALTER TABLE invoices ADD COLUMN quote_id uuid;
ALTER TABLE invoices ADD COLUMN quote_kind text CHECK (quote_kind IN ('full', 'deposit', 'final'));
ALTER TABLE invoices ADD COLUMN deposit_invoice_ids text;
ALTER TABLE invoices ADD COLUMN deposits_deducted numeric NOT NULL DEFAULT 0 CHECK (deposits_deducted >= 0);
ALTER TABLE invoices ADD COLUMN payable numeric;
UPDATE invoices SET payable = total;
ALTER TABLE invoices ALTER COLUMN payable SET NOT NULL;
