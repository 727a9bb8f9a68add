//! The encoding of the registry for `GET /metrics` (OpenMetrics text).

use std::time::Instant;

use prometheus_client::encoding::text::encode;

use super::clock::millis;
use super::labels::task_labels;
use super::registry::Metrics;

/// The content type of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

impl Metrics {
    /// The whole registry in the OpenMetrics text format. Values that depend on the time of
    /// the scrape (time since the last rebalance, running and pause ratios) are set first.
    pub fn encode(&self) -> String {
        {
            let states = self.states.lock().expect("metrics lock");
            let now = Instant::now();
            self.time_since_last_rebalance.set(
                states
                    .rebalance
                    .completed_at
                    .map_or(-1, |at| millis(now - at)),
            );
            for (id, times) in &states.task_times {
                let (running, paused) = times.ratios(now);
                let l = task_labels(id);
                self.running_ratio.get_or_create(&l).set(running);
                self.pause_ratio.get_or_create(&l).set(paused);
            }
        }
        let mut out = String::new();
        encode(&mut out, &self.registry).expect("writing to a String cannot fail");
        let plugin = self.encode_plugin();
        if !plugin.is_empty() {
            match out.rfind("# EOF") {
                Some(at) => out.insert_str(at, &plugin),
                None => out.push_str(&plugin),
            }
        }
        out
    }
}
