DROP TABLE recurring_invoices;
