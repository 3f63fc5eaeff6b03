-- The lines of conversations, shared by every replica: one row per request that joined a
-- conversation's line; the smallest live number holds the turn. Each row is leased to the
-- replica whose request it is, which renews the leases of all its rows at once; a row
-- whose lease ended (its replica died) is dropped by whoever looks at the line next.
--
-- UNLOGGED, and every function below commits without waiting for the disk: a line lives
-- only as long as its runs, which a database crash ends anyway. Joining and leaving take
-- many tickets at once, so that a replica's concurrent runs share round trips. A line
-- whose head changed is told with NOTIFY billable_turns, the payload the head's number.
CREATE UNLOGGED TABLE agent_turns (
    team_id uuid NOT NULL,
    conversation_key text NOT NULL,
    number bigint GENERATED ALWAYS AS IDENTITY,
    replica uuid NOT NULL,
    lease_until timestamptz NOT NULL,
    PRIMARY KEY (team_id, conversation_key, number)
);

-- Notifies the head of a line, if the line has anyone in it.
CREATE FUNCTION billable_ring_head(p_team uuid, p_conversation text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    head bigint;
BEGIN
    SELECT min(t.number) INTO head FROM agent_turns t
        WHERE t.team_id = p_team AND t.conversation_key = p_conversation;
    IF head IS NOT NULL THEN
        PERFORM pg_notify('billable_turns', head::text);
    END IF;
END;
$$;

-- Joins each request to its line, in array order, unless `depth` requests wait in it
-- already. Answers two numbers per request: the ticket's number (NULL when refused) and
-- how many live tickets are ahead of it (0: it holds the turn).
CREATE FUNCTION billable_join_turns(
    p_teams uuid[], p_conversations text[], p_depths integer[], p_replica uuid, p_lease_ms bigint
) RETURNS bigint[] LANGUAGE plpgsql AS $$
DECLARE
    answer bigint[] := '{}';
    line_lock bigint;
    live bigint;
    dropped bigint;
    taken bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    -- Admissions to one line are serialized, so each count and its insert agree. Locks are
    -- taken in one order, so that two replicas' batches never wait for each other in a
    -- cycle.
    FOR line_lock IN
        SELECT DISTINCT hashtextextended(team::text || '/' || conversation, 0) AS k
        FROM unnest(p_teams, p_conversations) AS r(team, conversation) ORDER BY k
    LOOP
        PERFORM pg_advisory_xact_lock(line_lock);
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(p_teams, 1), 0) LOOP
        DELETE FROM agent_turns t
            WHERE t.team_id = p_teams[i] AND t.conversation_key = p_conversations[i]
              AND t.lease_until < now();
        GET DIAGNOSTICS dropped = ROW_COUNT;
        IF dropped > 0 THEN
            PERFORM billable_ring_head(p_teams[i], p_conversations[i]);
        END IF;
        SELECT count(*) INTO live FROM agent_turns t
            WHERE t.team_id = p_teams[i] AND t.conversation_key = p_conversations[i];
        IF live > p_depths[i] THEN
            answer := answer || ARRAY[NULL, live];
        ELSE
            INSERT INTO agent_turns (team_id, conversation_key, replica, lease_until)
                VALUES (p_teams[i], p_conversations[i], p_replica,
                        now() + p_lease_ms * interval '1 millisecond')
                RETURNING number INTO taken;
            answer := answer || ARRAY[taken, live];
        END IF;
    END LOOP;
    RETURN answer;
END;
$$;

-- Where a ticket stands: 'turn', 'waiting', or 'lost' (its lease ended and the line went
-- on without it). Drops the tickets ahead of it whose lease ended.
CREATE FUNCTION billable_turn_state(p_team uuid, p_conversation text, p_ticket bigint)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    dropped bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
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

-- Takes each ticket out of its line, and rings the new head of every line whose head left.
CREATE FUNCTION billable_leave_turns(p_teams uuid[], p_conversations text[], p_tickets bigint[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    moved record;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    FOR moved IN
        WITH gone AS (
            DELETE FROM agent_turns t
            USING unnest(p_teams, p_conversations, p_tickets) AS r(team, conversation, ticket)
            WHERE t.team_id = r.team AND t.conversation_key = r.conversation AND t.number = r.ticket
            RETURNING t.team_id, t.conversation_key, t.number
        )
        SELECT DISTINCT gone.team_id, gone.conversation_key FROM gone
    LOOP
        PERFORM billable_ring_head(moved.team_id, moved.conversation_key);
    END LOOP;
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
