//! Conversation turns: one run at a time per conversation, in arrival order, across every
//! process that shares the store; memory written by the turn's holder only.

use std::sync::Arc;
use std::time::Duration;

use crate::Ports;
use crate::create_team;
use accounts::TeamId;
use kernel::{Clock, SystemClock};
use triggers::{ConversationKey, ConversationTurns, Joined, Message, Ticket, TurnError};

/// Long enough that no lease ends within a test that does not wait for it to.
const LEASE: Duration = Duration::from_secs(30);

pub fn key(text: &str) -> ConversationKey {
    ConversationKey::parse(text).unwrap()
}

fn turns(store: &Ports) -> Arc<dyn ConversationTurns> {
    store.turns(LEASE)
}

pub async fn holder(turns: &dyn ConversationTurns, team: TeamId, conversation: &str, depth: u32) -> Ticket {
    match turns.join(team, &key(conversation), depth).await.unwrap() {
        Joined::Turn(ticket) => ticket,
        other => panic!("expected the turn, got {other:?}"),
    }
}

pub async fn waiter(
    turns: &dyn ConversationTurns,
    team: TeamId,
    conversation: &str,
    position: usize,
) -> Ticket {
    match turns.join(team, &key(conversation), 8).await.unwrap() {
        Joined::Waiting { ticket, position: at } => {
            assert_eq!(at, position, "its place in the line");
            ticket
        }
        other => panic!("expected to wait, got {other:?}"),
    }
}

/// Whether `ticket` gets its turn within a short while.
pub async fn gets_turn_soon(turns: &dyn ConversationTurns, ticket: &Ticket) -> bool {
    tokio::time::timeout(Duration::from_millis(300), turns.wait_turn(ticket)).await.is_ok_and(|r| r.is_ok())
}

pub async fn one_holds_the_turn_the_others_wait_in_arrival_order(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let turns = turns(&store);
    let first = holder(turns.as_ref(), team, "c", 8).await;
    let second = waiter(turns.as_ref(), team, "c", 1).await;
    let third = waiter(turns.as_ref(), team, "c", 2).await;
    assert!(!gets_turn_soon(turns.as_ref(), &second).await, "the first still holds the turn");

    // The second is woken by the first leaving, not by its own looking.
    let waiting = {
        let turns = turns.clone();
        let second = second.clone();
        tokio::spawn(async move { turns.wait_turn(&second).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    turns.leave(&first).await.unwrap();
    let woken = tokio::time::timeout(Duration::from_secs(5), waiting).await;
    woken.expect("woken when the holder leaves").unwrap().unwrap();
    assert!(!gets_turn_soon(turns.as_ref(), &third).await, "the second holds it now");
    turns.leave(&second).await.unwrap();
    assert!(gets_turn_soon(turns.as_ref(), &third).await);
    turns.leave(&third).await.unwrap();
    holder(turns.as_ref(), team, "c", 8).await;
}

pub async fn a_full_line_refuses_and_frees_a_place_when_one_leaves(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let turns = turns(&store);
    let first = holder(turns.as_ref(), team, "c", 1).await;
    let Joined::Waiting { ticket: second, .. } = turns.join(team, &key("c"), 1).await.unwrap() else {
        panic!("one may wait");
    };
    assert_eq!(turns.join(team, &key("c"), 1).await.unwrap(), Joined::Full, "depth 1: one waits at most");
    assert!(matches!(turns.join(team, &key("c"), 2).await.unwrap(), Joined::Waiting { position: 2, .. }));
    turns.leave(&first).await.unwrap();
    assert!(gets_turn_soon(turns.as_ref(), &second).await);
    let zero = turns.join(team, &key("other"), 0).await.unwrap();
    assert!(matches!(zero, Joined::Turn(_)), "depth 0 still runs one");
    assert_eq!(turns.join(team, &key("other"), 0).await.unwrap(), Joined::Full);
}

pub async fn a_ticket_that_leaves_while_waiting_is_passed_over(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let turns = turns(&store);
    let first = holder(turns.as_ref(), team, "c", 8).await;
    let gone = waiter(turns.as_ref(), team, "c", 1).await;
    let third = waiter(turns.as_ref(), team, "c", 2).await;
    turns.leave(&gone).await.unwrap();
    assert!(!gets_turn_soon(turns.as_ref(), &third).await, "the holder keeps the turn");
    turns.leave(&first).await.unwrap();
    assert!(gets_turn_soon(turns.as_ref(), &third).await, "the line skips the ticket that left");
}

pub async fn only_the_holder_writes_the_conversations_memory(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let turns = turns(&store);
    let first = holder(turns.as_ref(), team, "c", 8).await;
    let second = waiter(turns.as_ref(), team, "c", 1).await;
    let now = SystemClock.now();
    let refused = turns.remember(&second, &[Message::user("out of turn")], now).await;
    assert!(matches!(refused, Err(TurnError::Lost)), "{refused:?}");
    turns.remember(&first, &[Message::user("one"), Message::assistant("two")], now).await.unwrap();
    turns.leave(&first).await.unwrap();
    let refused = turns.remember(&first, &[Message::user("after leaving")], now).await;
    assert!(matches!(refused, Err(TurnError::Lost)), "{refused:?}");
    assert!(gets_turn_soon(turns.as_ref(), &second).await);
    turns.remember(&second, &[Message::user("three")], now).await.unwrap();
    let memory = store.agent().recent_messages(team, &key("c"), 10).await.unwrap();
    assert_eq!(memory, [Message::user("one"), Message::assistant("two"), Message::user("three")]);
}

pub async fn lines_are_per_conversation_and_per_team(store: Ports) {
    let (acme, other) = (create_team(&store, "Acme").await, create_team(&store, "Other").await);
    let turns = turns(&store);
    holder(turns.as_ref(), acme, "c", 8).await;
    holder(turns.as_ref(), acme, "d", 8).await;
    holder(turns.as_ref(), other, "c", 8).await;
}
