from bfcl_eval._stub import export

VERSION_PREFIX = "BFCL_v4"
TEST_COLLECTION_MAPPING = export()["collections"]
ALL_CATEGORIES = export()["leaves"]
