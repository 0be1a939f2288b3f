# Extra cell for run_chapter_at_seed.py: per run, every variant's worst relative price error and certified
# exploitability, the untrained start's exploitability and the 1%-price yardstick, as one JSON line.
import json as _json
print("JSON", _json.dumps({"perr": {n: np.abs(v[0] / q_star - 1).max(1).tolist() for n, v in variants.items()},
                           "phi": {n: [float(c.exploitability) for c in v[1]] for n, v in variants.items()},
                           "phi0": np.asarray(phi0).tolist(), "yardstick": float(yardstick)}))
