# As BFCL's: the limit is copied when this module is imported.
from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT  # noqa: F401
