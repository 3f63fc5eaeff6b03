-- A look at a line drops the expired tickets ahead, as a join does: both now hold the
-- line's advisory lock while they do, so two of them dropping several rows of one line in
-- different orders cannot deadlock each other.
CREATE OR REPLACE FUNCTION billable_turn_state(p_team uuid, p_conversation text, p_ticket bigint)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    dropped bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtextextended(p_team::text || '/' || p_conversation, 0));
    DELETE FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation
          AND t.number < p_ticket AND t.lease_until < now();
    GET DIAGNOSTICS dropped = ROW_COUNT;
    IF NOT EXISTS (SELECT 1 FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation AND t.number = p_ticket) THEN
        RETURN 'lost';
    END IF;
    IF EXISTS (SELECT 1 FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation AND t.number < p_ticket) THEN
        IF dropped > 0 THEN
            PERFORM billable_ring_head(p_team, p_conversation);
        END IF;
        RETURN 'waiting';
    END IF;
    RETURN 'turn';
END;
$$;
