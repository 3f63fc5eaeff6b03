//! The port contract (`store-contract`) on the in-memory store, with the in-process
//! conversation lines a single process pairs it with.

use std::sync::Arc;

use store_contract::Ports;
use store_memory::MemoryStore;
use triggers::ConversationTurns;

async fn ports() -> Ports {
    let store = Arc::new(MemoryStore::new());
    let memory = store.clone();
    let turns =
        move |_lease| Arc::new(::agent::LocalTurns::new(memory.clone())) as Arc<dyn ConversationTurns>;
    Ports::of(store, Arc::new(turns))
}

store_contract::contract_suite!(crate::ports);
