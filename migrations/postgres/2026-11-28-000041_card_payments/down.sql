DROP TABLE client_credits;
DROP TABLE card_receipts;
DROP TABLE card_accounts;
