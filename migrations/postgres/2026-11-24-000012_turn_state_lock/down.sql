-- Keeping the line's lock in billable_turn_state is harmless on the way down: nothing to undo.
SELECT 1;
