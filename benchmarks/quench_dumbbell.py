# TEMPORARY placeholder for driver testing only; deleted afterwards.
import argparse, json
p = argparse.ArgumentParser()
for a in ("--flows", "--rate", "--buffer-pkts", "--seed"): p.add_argument(a, type=int)
p.add_argument("--duration", type=float); p.add_argument("--rtt", type=float); p.add_argument("--json")
a = p.parse_args()
g = [a.rate * 0.97 * (1 - 0.05 * (i % 2)) / a.flows for i in range(a.flows)]
json.dump({"simulator": "quench", "version": "0", "config": {}, "utilization": 0.99 if a.flows < 10 else 0.90,
  "goodput_bps": g, "aggregate_goodput_bps": sum(g), "drops": 0, "bottleneck_tx_packets": int(a.rate*a.duration/12000),
  "events": None if a.flows < 10 else 12345678, "wall_setup_s": 0.01, "wall_run_s": 0.1, "peak_rss_kib": 10000}, open(a.json, "w"))
