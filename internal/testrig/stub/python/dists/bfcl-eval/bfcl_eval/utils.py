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
    entries = [dict(e) for e in export()["entries"][test_category]]
    if not include_prereq:
        entries = [e for e in entries if not is_memory_prereq(e["id"])]
    return entries


def is_memory(test_category):
    return "memory" in test_category


def is_memory_prereq(test_category):
    return "prereq" in test_category


def is_web_search(test_category):
    return "web_search" in test_category


def is_multi_turn(test_category):
    return "multi_turn" in test_category


def extract_test_category_from_id(test_entry_id, remove_prereq=False):
    if remove_prereq:
        test_entry_id = test_entry_id.replace("_prereq", "")
    if ":" in test_entry_id:
        test_entry_id = test_entry_id.split(":")[0]
    return test_entry_id.rsplit("_", 1)[0]


def sort_key(entry):
    # BFCL's: memory prerequisites first, memory questions last.
    entry_id = entry["id"].split(":")[0]
    test_category, index = entry_id.rsplit("_", 1)
    if "-" in index:
        index = index.split("-")[0]
    if is_memory_prereq(test_category):
        priority = 0
    elif is_web_search(test_category):
        priority = 1
    elif is_memory(test_category):
        priority = 4
    elif is_multi_turn(test_category):
        priority = 3
    else:
        priority = 2
    return (priority, test_category, int(index))
