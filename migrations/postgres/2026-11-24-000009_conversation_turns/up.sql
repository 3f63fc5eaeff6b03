-- The lines of conversations, shared by every replica: one row per request that joined a
-- conversation's line; the smallest live number holds the turn. Each row is leased to the
-- replica whose request it is, which renews the leases of all its rows at once; a row
-- whose lease ended (its replica died) is dropped by whoever looks at the line next.
--
-- UNLOGGED, and every function below commits without waiting for the disk: a line lives
-- only as long as its runs, which a database crash ends anyway.
CREATE UNLOGGED TABLE agent_turns (
    team_id uuid NOT NULL,
    conversation_key text NOT NULL,
    number bigint GENERATED ALWAYS AS IDENTITY,
    replica uuid NOT NULL,
    lease_until timestamptz NOT NULL,
    PRIMARY KEY (team_id, conversation_key, number)
);

-- Joins the line unless `depth` requests wait in it already. Answers the ticket's number
-- (NULL when refused) and how many live tickets are ahead of it (0: it holds the turn).
CREATE FUNCTION billable_join_turn(
    p_team uuid, p_conversation text, p_depth integer, p_replica uuid, p_lease_ms bigint
) RETURNS bigint[] LANGUAGE plpgsql AS $$
DECLARE
    live bigint;
    dropped bigint;
    taken bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    -- Admissions to one line are serialized, so the count and the insert agree.
    PERFORM pg_advisory_xact_lock(hashtextextended(p_team::text || '/' || p_conversation, 0));
    DELETE FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation AND t.lease_until < now();
    GET DIAGNOSTICS dropped = ROW_COUNT;
    SELECT count(*) INTO live FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation;
    IF dropped > 0 AND live > 0 THEN
        PERFORM pg_notify('billable_turns', p_team::text || '/' || p_conversation);
    END IF;
    IF live > p_depth THEN
        RETURN ARRAY[NULL, live];
    END IF;
    INSERT INTO agent_turns (team_id, conversation_key, replica, lease_until)
        VALUES (p_team, p_conversation, p_replica, now() + p_lease_ms * interval '1 millisecond')
        RETURNING number INTO taken;
    RETURN ARRAY[taken, live];
END;
$$;

-- Where a ticket stands: 'turn', 'waiting', or 'lost' (its lease ended and the line went
-- on without it). Drops the tickets ahead of it whose lease ended.
CREATE FUNCTION billable_turn_state(p_team uuid, p_conversation text, p_ticket bigint)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    DELETE FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation
          AND t.number < p_ticket AND t.lease_until < now();
    IF NOT EXISTS (SELECT 1 FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation AND t.number = p_ticket) THEN
        RETURN 'lost';
    END IF;
    IF EXISTS (SELECT 1 FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation AND t.number < p_ticket) THEN
        RETURN 'waiting';
    END IF;
    RETURN 'turn';
END;
$$;

-- Leaves the line, and rings whoever waits in it; answers whether anyone does.
CREATE FUNCTION billable_leave_turn(p_team uuid, p_conversation text, p_ticket bigint)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    DELETE FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation AND t.number = p_ticket;
    IF EXISTS (SELECT 1 FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation) THEN
        PERFORM pg_notify('billable_turns', p_team::text || '/' || p_conversation);
        RETURN true;
    END IF;
    RETURN false;
END;
$$;

-- Renews the lease of every ticket of one replica.
CREATE FUNCTION billable_renew_turns(p_replica uuid, p_lease_ms bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    renewed bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE agent_turns SET lease_until = now() + p_lease_ms * interval '1 millisecond'
        WHERE replica = p_replica;
    GET DIAGNOSTICS renewed = ROW_COUNT;
    RETURN renewed;
END;
$$;
