use std::sync::Mutex;

use chrono::{DateTime, SubsecRound, TimeDelta, Utc};

/// Where "now" comes from, so that rules depending on time can be tested by moving it.
/// Times are kept to the millisecond, the precision the API shows and every store keeps.
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now().trunc_subsecs(3)
    }
}

/// A clock that stands still until moved; for tests.
#[derive(Debug)]
pub struct FixedClock(Mutex<DateTime<Utc>>);

impl FixedClock {
    pub fn new(at: DateTime<Utc>) -> Self {
        Self(Mutex::new(at.trunc_subsecs(3)))
    }

    pub fn advance(&self, by: TimeDelta) {
        let mut now = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *now += by;
    }
}

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
