//! The port contract (`store-contract`) on SQLite and on PostgreSQL, each test on a
//! database of its own.

use store_contract::{Database, Ports};

mod support;

async fn sqlite() -> Ports {
    support::open(Database::sqlite()).await.1
}

async fn postgres() -> Ports {
    support::open(Database::postgres().await).await.1
}

mod on_sqlite {
    store_contract::contract_suite!(crate::sqlite);
}

mod on_postgres {
    store_contract::contract_suite!(crate::postgres);
}
