"""The values of the TPS spatial transformer's string options: the one table of them.

protos/spatial_transformer.proto keeps `init_bias_pattern` and `activation` as strings, not enums:
configs write them quoted (`init_bias_pattern: "identity"`), and protobuf's text-format parser
refuses a quoted value for an enum field ('Enum type ... has no value named "IDENTITY"'), so enum
fields would stop every existing config from loading. aster.utils.config_checks (the rule that
aster-config validate and the builder apply) and aster.core.spatial_transformer (the Python
callers' check) both read these tuples. No TensorFlow here: config_checks must not import it.
"""

INIT_PATTERNS = ("identity", "slope", "sine")
"""Initial control-point patterns held in the last FC layer's bias (init_control_points)."""

ACTIVATIONS = ("none", "sigmoid")
"""Activations on the predicted control points."""
