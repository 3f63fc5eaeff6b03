//! The queueing policy of conversations: one run at a time per conversation, the others
//! waiting in arrival order, at most `depth` of them; a conversation with nothing running
//! holds no memory. Pure bookkeeping: the runtime keeps it behind a lock and decides what
//! a ticket is (for instance the sender that wakes a waiting request).

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

/// Conversations with a run in progress, each with the tickets waiting behind it.
#[derive(Debug)]
pub struct ConversationQueues<T> {
    depth: usize,
    running: HashMap<String, VecDeque<T>>,
}

impl<T> ConversationQueues<T> {
    /// `depth`: how many requests may wait per conversation.
    pub fn new(depth: usize) -> Self {
        Self { depth, running: HashMap::new() }
    }

    /// Asks for the turn of conversation `key`.
    pub fn admit(&mut self, key: &str, ticket: T) -> Admission<T> {
        match self.running.get_mut(key) {
            None => {
                self.running.insert(key.to_owned(), VecDeque::new());
                Admission::Run
            }
            Some(waiting) if waiting.len() >= self.depth => Admission::Rejected(ticket),
            Some(waiting) => {
                waiting.push_back(ticket);
                Admission::Wait { position: waiting.len() }
            }
        }
    }

    /// Ends the turn of the run holding `key`: the earliest waiting ticket, which now holds
    /// the turn, or `None` when nobody waits and the conversation is forgotten. A caller
    /// whose ticket can no longer be woken calls `finish` again for the next one.
    pub fn finish(&mut self, key: &str) -> Option<T> {
        let waiting = self.running.get_mut(key)?;
        let next = waiting.pop_front();
        if next.is_none() {
            self.running.remove(key);
        }
        next
    }

    /// How many requests wait for `key` behind the running one.
    pub fn waiting(&self, key: &str) -> usize {
        self.running.get(key).map_or(0, VecDeque::len)
    }

    /// Conversations with a run in progress.
    pub fn active(&self) -> usize {
        self.running.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{Admission, ConversationQueues};

    #[test]
    fn one_runs_the_rest_wait_in_arrival_order_up_to_depth() {
        let mut queues = ConversationQueues::new(2);
        assert_eq!(queues.admit("a", 1), Admission::Run);
        assert_eq!(queues.admit("a", 2), Admission::Wait { position: 1 });
        assert_eq!(queues.admit("a", 3), Admission::Wait { position: 2 });
        assert_eq!(queues.admit("a", 4), Admission::Rejected(4));
        assert_eq!(queues.waiting("a"), 2);
        // Another conversation is not held up.
        assert_eq!(queues.admit("b", 5), Admission::Run);

        assert_eq!(queues.finish("a"), Some(2));
        // A slot freed: the next arrival waits again, behind 3.
        assert_eq!(queues.admit("a", 6), Admission::Wait { position: 2 });
        assert_eq!(queues.finish("a"), Some(3));
        assert_eq!(queues.finish("a"), Some(6));
        assert_eq!(queues.finish("a"), None);
        assert_eq!(queues.active(), 1);
        assert_eq!(queues.finish("b"), None);
        assert_eq!(queues.active(), 0);
    }

    #[test]
    fn depth_zero_refuses_anyone_while_a_run_is_in_progress() {
        let mut queues = ConversationQueues::new(0);
        assert_eq!(queues.admit("a", 1), Admission::Run);
        assert_eq!(queues.admit("a", 2), Admission::Rejected(2));
        assert_eq!(queues.finish("a"), None);
        assert_eq!(queues.admit("a", 3), Admission::Run);
    }

    #[test]
    fn idle_conversations_hold_no_memory() {
        let mut queues = ConversationQueues::new(8);
        for i in 0..10_000 {
            let key = format!("conversation-{i}");
            assert_eq!(queues.admit(&key, i), Admission::Run);
            assert_eq!(queues.finish(&key), None);
        }
        assert_eq!(queues.active(), 0);
        // Finishing an unknown conversation is harmless.
        assert_eq!(queues.finish("never-seen"), None);
    }
}
