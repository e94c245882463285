//! A stop signal for the run's helper threads (the display, the metrics file, the group sync):
//! their waits end as soon as it is raised. They slept in 50 and 100 ms steps between looks at
//! a flag, which held the end of every run up to a tenth of a second.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

pub struct Stop {
    raised: Mutex<bool>,
    wake: Condvar,
}

impl Default for Stop {
    fn default() -> Self {
        Stop::new()
    }
}

impl Stop {
    pub const fn new() -> Stop {
        Stop {
            raised: Mutex::new(false),
            wake: Condvar::new(),
        }
    }

    pub fn raise(&self) {
        *self.raised.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.wake.notify_all();
    }

    /// Waits `step`, or less once raised; whether it was raised.
    pub fn wait(&self, step: Duration) -> bool {
        let raised = self.raised.lock().unwrap_or_else(PoisonError::into_inner);
        let (raised, _) = self
            .wake
            .wait_timeout_while(raised, step, |r| !*r)
            .unwrap_or_else(PoisonError::into_inner);
        *raised
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn a_wait_ends_when_the_stop_is_raised_not_when_its_step_has_passed() {
        let stop = Arc::new(Stop::default());
        assert!(!stop.wait(Duration::from_millis(1)), "not raised yet");
        let raiser = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                stop.raise();
            })
        };
        let started = Instant::now();
        assert!(stop.wait(Duration::from_secs(600)), "raised");
        assert!(started.elapsed() < Duration::from_secs(300));
        raiser.join().unwrap();
        assert!(stop.wait(Duration::from_secs(600)), "stays raised, at once");
    }
}
