//! The queueing policy of conversations: one run at a time per conversation, the others
//! waiting in arrival order, at most `depth` of them; a conversation with nothing running
//! holds no memory. Pure bookkeeping: an in-process [`crate::ConversationTurns`] keeps it
//! behind a lock, with tickets that name each request.

use std::collections::{HashMap, VecDeque};

/// What became of a request that asked for its conversation's turn.
#[derive(Debug, PartialEq, Eq)]
pub enum Admission<T> {
    /// Nothing was running: the request runs now and holds the turn.
    Run,
    /// Another run holds the turn; the ticket waits at `position` (1 = next).
    Wait { position: usize },
    /// `depth` requests already wait: refused, the ticket given back.
    Rejected(T),
}

/// The ticket holding a conversation's turn and those waiting behind it.
#[derive(Debug)]
struct Line<T> {
    holder: T,
    waiting: VecDeque<T>,
}

/// Conversations with a run in progress, each with the tickets waiting behind it.
#[derive(Debug)]
pub struct ConversationQueues<T> {
    lines: HashMap<String, Line<T>>,
}

impl<T> Default for ConversationQueues<T> {
    fn default() -> Self {
        Self { lines: HashMap::new() }
    }
}

impl<T: PartialEq> ConversationQueues<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for the turn of conversation `key`, where at most `depth` requests may wait.
    pub fn admit(&mut self, key: &str, ticket: T, depth: usize) -> Admission<T> {
        match self.lines.get_mut(key) {
            None => {
                self.lines.insert(key.to_owned(), Line { holder: ticket, waiting: VecDeque::new() });
                Admission::Run
            }
            Some(line) if line.waiting.len() >= depth => Admission::Rejected(ticket),
            Some(line) => {
                line.waiting.push_back(ticket);
                Admission::Wait { position: line.waiting.len() }
            }
        }
    }

    /// Takes `ticket` out of `key`'s line. When it held the turn, the earliest waiting
    /// ticket takes it and is returned (`None` when nobody waits and the conversation is
    /// forgotten); a waiting ticket just leaves its place.
    pub fn leave(&mut self, key: &str, ticket: &T) -> Option<&T> {
        let line = self.lines.get_mut(key)?;
        if line.holder != *ticket {
            line.waiting.retain(|waiting| waiting != ticket);
            return None;
        }
        if let Some(next) = line.waiting.pop_front() {
            line.holder = next;
            return self.lines.get(key).map(|line| &line.holder);
        }
        self.lines.remove(key);
        None
    }

    /// Whether `ticket` holds `key`'s turn.
    pub fn holds(&self, key: &str, ticket: &T) -> bool {
        self.lines.get(key).is_some_and(|line| line.holder == *ticket)
    }

    /// How many requests wait for `key` behind the running one.
    pub fn waiting(&self, key: &str) -> usize {
        self.lines.get(key).map_or(0, |line| line.waiting.len())
    }

    /// Conversations with a run in progress.
    pub fn active(&self) -> usize {
        self.lines.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{Admission, ConversationQueues};

    #[test]
    fn one_runs_the_rest_wait_in_arrival_order_up_to_depth() {
        let mut queues = ConversationQueues::new();
        assert_eq!(queues.admit("a", 1, 2), Admission::Run);
        assert_eq!(queues.admit("a", 2, 2), Admission::Wait { position: 1 });
        assert_eq!(queues.admit("a", 3, 2), Admission::Wait { position: 2 });
        assert_eq!(queues.admit("a", 4, 2), Admission::Rejected(4));
        assert_eq!(queues.waiting("a"), 2);
        // Another conversation is not held up.
        assert_eq!(queues.admit("b", 5, 2), Admission::Run);

        assert_eq!(queues.leave("a", &1), Some(&2));
        assert!(queues.holds("a", &2));
        // A slot freed: the next arrival waits again, behind 3.
        assert_eq!(queues.admit("a", 6, 2), Admission::Wait { position: 2 });
        assert_eq!(queues.leave("a", &2), Some(&3));
        assert_eq!(queues.leave("a", &3), Some(&6));
        assert_eq!(queues.leave("a", &6), None);
        assert_eq!(queues.active(), 1);
        assert_eq!(queues.leave("b", &5), None);
        assert_eq!(queues.active(), 0);
    }

    #[test]
    fn a_waiting_ticket_that_leaves_gives_up_its_place_only() {
        let mut queues = ConversationQueues::new();
        assert_eq!(queues.admit("a", 1, 4), Admission::Run);
        assert_eq!(queues.admit("a", 2, 4), Admission::Wait { position: 1 });
        assert_eq!(queues.admit("a", 3, 4), Admission::Wait { position: 2 });
        assert_eq!(queues.leave("a", &2), None);
        assert!(queues.holds("a", &1), "the holder keeps the turn");
        assert_eq!(queues.waiting("a"), 1);
        assert_eq!(queues.leave("a", &1), Some(&3), "the turn skips the ticket that left");
    }

    #[test]
    fn depth_zero_refuses_anyone_while_a_run_is_in_progress() {
        let mut queues = ConversationQueues::new();
        assert_eq!(queues.admit("a", 1, 0), Admission::Run);
        assert_eq!(queues.admit("a", 2, 0), Admission::Rejected(2));
        assert_eq!(queues.leave("a", &1), None);
        assert_eq!(queues.admit("a", 3, 0), Admission::Run);
    }

    #[test]
    fn idle_conversations_hold_no_memory() {
        let mut queues = ConversationQueues::new();
        for i in 0..10_000 {
            let key = format!("conversation-{i}");
            assert_eq!(queues.admit(&key, i, 8), Admission::Run);
            assert_eq!(queues.leave(&key, &i), None);
        }
        assert_eq!(queues.active(), 0);
        // Leaving an unknown conversation is harmless.
        assert_eq!(queues.leave("never-seen", &0), None);
    }
}
