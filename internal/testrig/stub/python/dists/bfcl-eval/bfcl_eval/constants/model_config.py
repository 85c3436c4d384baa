# BFCL's model table; the stub's own entries live in the Go stub.
from dataclasses import dataclass
from typing import Optional


@dataclass
class ModelConfig:
    model_name: str
    display_name: str
    url: str
    org: str
    license: str
    model_handler: str
    input_price: Optional[float] = None
    output_price: Optional[float] = None
    is_fc_model: bool = True
    underscore_to_dot: bool = False


MODEL_CONFIG_MAPPING = {}
