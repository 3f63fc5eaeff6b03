DROP TABLE recurring_runs;
