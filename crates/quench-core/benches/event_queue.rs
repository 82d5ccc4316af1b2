//! The cost of the event queue alone: hold `n` pending events and repeatedly pop the earliest
//! and push a replacement a pseudo-random interval later, as a simulation does. Prints
//! events per second, the ceiling the whole engine's events/s can be compared against.
//! Run: `cargo bench -p quench-core --bench event_queue`.

use quench_core::rng::Rng;
use quench_core::sched::Scheduler;
use quench_core::Time;
use std::hint::black_box;
use std::time::Instant;

const OPERATIONS: u64 = 5_000_000;
/// Mean gap to the replacement event: 100 µs, a packet time at 100 Mb/s.
const MEAN_GAP_NS: f64 = 100_000.0;

fn main() {
    println!("{:>10} {:>14} {:>12}", "pending", "events/s", "ns/event");
    for pending in [16u64, 256, 4096, 65_536] {
        let mut rng = Rng::from_seed(pending);
        let mut q: Scheduler<u32> = Scheduler::default();
        for i in 0..pending {
            q.schedule(Time(rng.exponential(MEAN_GAP_NS) as u64), i as u32);
        }
        let start = Instant::now();
        for _ in 0..OPERATIONS {
            let (t, ev) = q.pop_until(Time::MAX).expect("the queue never empties");
            q.schedule(Time(t.0 + rng.exponential(MEAN_GAP_NS) as u64), black_box(ev));
        }
        let secs = start.elapsed().as_secs_f64();
        println!("{pending:>10} {:>14.3e} {:>12.1}", OPERATIONS as f64 / secs, secs * 1e9 / OPERATIONS as f64);
    }
}
