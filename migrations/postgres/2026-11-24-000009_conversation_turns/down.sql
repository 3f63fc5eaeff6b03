DROP FUNCTION billable_renew_turns(uuid, bigint);
DROP FUNCTION billable_leave_turn(uuid, text, bigint);
DROP FUNCTION billable_turn_state(uuid, text, bigint);
DROP FUNCTION billable_join_turn(uuid, text, integer, uuid, bigint);
DROP TABLE agent_turns;
