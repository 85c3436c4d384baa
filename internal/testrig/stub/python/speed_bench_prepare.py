# A stand-in for NeMo-Skills' SPEED-Bench prepare.py (what wlc's
# speed_bench.py fetches and runs): load_dataset gives a few rows of
# nvidia/SPEED-Bench's shape, with the datasets.Dataset methods used.
import json


class Dataset:
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def filter(self, keep):
        return Dataset([r for r in self.rows if keep(r)])

    def map(self, fn, remove_columns=()):
        out = []
        for r in self.rows:
            r = dict(r, **fn(r))
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
    return Dataset([{"id": i, "category": cats[i % 3], "subset": subset, "turns": ["turn %d of %s" % (i, subset)]}
                    for i in range(9)])


def _resolve_external_data(dataset, subset):
    return dataset
