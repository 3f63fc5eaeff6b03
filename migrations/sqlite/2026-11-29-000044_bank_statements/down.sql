DROP TABLE bank_csv_mappings;
DROP TABLE bank_payments;
DROP TABLE bank_transactions;
DROP TABLE bank_statements;
