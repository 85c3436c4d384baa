# A stand-in for NeMo-Skills' SPEED-Bench prepare.py (what wlc's
# speed_bench.py fetches and runs): load_dataset gives a few rows of
# nvidia/SPEED-Bench's shape, with the datasets.Dataset methods used.
# _resolve_external_data resolves rows as upstream's does: in dataset
# order, an HLE row's prompt drawn from one generator seeded once for the
# module (upstream: HLE_RNG = np.random.default_rng(42), used by
# _generate_hle_prompt for the throughput configs), so which rows are
# resolved, and in which order, decides each HLE row's text; other rows
# are left as they are.
import json
import random

HLE_RNG = random.Random(42)
HLE = "cais/hle"


class Dataset:
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def filter(self, keep):
        return Dataset([r for r in self.rows if keep(r)])

    def map(self, fn, remove_columns=(), fn_kwargs=None):
        out = []
        for r in self.rows:
            r = dict(r, **fn(dict(r), **(fn_kwargs or {})))
            for c in remove_columns:
                r.pop(c, None)
            out.append(r)
        return Dataset(out)

    def to_json(self, path):
        with open(path, "w") as f:
            for r in self.rows:
                f.write(json.dumps(r) + "\n")


def load_dataset(name, subset, split):
    assert name == "nvidia/SPEED-Bench" and split == "test", (name, split)
    cats = ["coding", "writing", "math"]
    return Dataset([{"id": i, "category": cats[i % 3], "subset": subset, "source": HLE if i % 2 else "local",
                     "turns": ["turn %d of %s" % (i, subset)]}
                    for i in range(9)])


def _fetch_all_turns_data(example, speed_config):
    if example["source"] == HLE and "throughput" in speed_config:
        example["turns"] = ["hle demonstrations %d, then question %d" % (HLE_RNG.randrange(10**6), example["id"])]
    return example


def _resolve_external_data(dataset, speed_config):
    return dataset.map(_fetch_all_turns_data, fn_kwargs={"speed_config": speed_config})


def prepare_data(subset, out):
    # Upstream's own preparation of one config: every row resolved, then
    # written (wlc's must match it, row for row, for the rows it keeps).
    data = _resolve_external_data(load_dataset("nvidia/SPEED-Bench", subset, split="test"), subset)
    data = data.map(lambda row: {"messages": [{"role": "user", "content": t} for t in row["turns"]]}, remove_columns=["turns"])
    data.to_json(out)
