from bfcl_eval._stub import export
from bfcl_eval.constants.category_mapping import ALL_CATEGORIES, TEST_COLLECTION_MAPPING


def parse_test_category_argument(test_category_args):
    names = set()
    for c in test_category_args:
        if c in TEST_COLLECTION_MAPPING:
            names.update(TEST_COLLECTION_MAPPING[c])
        elif c in ALL_CATEGORIES:
            names.add(c)
        else:
            raise Exception(f"Invalid test category name provided: {c}")
    return sorted(names)


def load_dataset_entry(test_category, include_prereq=True, include_language_specific_hint=True):
    return [{"id": i} for i in export()["ids"][test_category]]


def sort_key(entry):
    category, index = entry["id"].rsplit("_", 1)
    return (category, int(index))
