DROP FUNCTION billable_renew_turns(uuid, bigint);
DROP FUNCTION billable_leave_turns(uuid[], text[], bigint[]);
DROP FUNCTION billable_turn_state(uuid, text, bigint);
DROP FUNCTION billable_join_turns(uuid[], text[], integer[], uuid, bigint);
DROP FUNCTION billable_ring_head(uuid, text);
DROP TABLE agent_turns;
