# BFCL's typer app, as the Go stub bfcl: cli(args) runs it with this
# process's model table and step limit (see internal/testrig/stub/bfcl).
import dataclasses
import json
import os
import subprocess
import sys


def cli(args=None, prog_name=None, standalone_mode=True, **kwargs):
    from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING
    from bfcl_eval.model_handler import base_handler

    table = {}
    for name, cfg in MODEL_CONFIG_MAPPING.items():
        handler = cfg.model_handler
        table[name] = {
            "handler": getattr(handler, "__name__", str(handler)),
            "is_fc_model": cfg.is_fc_model,
            "display_name": cfg.display_name,
        }
    env = dict(os.environ, WLC_STUB_BFCL_MODELS=json.dumps(table),
               WLC_STUB_BFCL_STEP_LIMIT=str(base_handler.MAXIMUM_STEP_LIMIT))
    argv = list(sys.argv[1:] if args is None else args)
    rc = subprocess.call(["bfcl"] + argv, env=env)
    if rc != 0 or standalone_mode:
        sys.exit(rc)


if __name__ == "__main__":
    cli()
