"""Config fields that were retired, what replaced them, and how a config that still sets one loads.

These fields were in the original ASTER protos (and in ours) but nothing reads them, they chose
something that is not built (multi-branch convnets), or they were renamed. They stay in the protos
marked `[deprecated = true]`, so an old config parses; config_migrations.migrate() then looks at
each one that is set:
- a value the framework behaves as anyway (`net_type: SINGLE_BRANCH`, `multi_attention: false`,
  any value of a field that chose nothing) is cleared with one warning naming the field and what
  replaced it; a renamed field (`bfloat16`) moves its value to the new name, also with a warning;
- any other value (`net_type: TWO_BRANCHES`, a non-empty `label_map_path`) is a ConfigError
  naming the field, since the config asks for something that does not exist.
A `--set` override of a retired field is always a ConfigError (config_overrides), and
config_checks (so every builder) reports one set in a config that was built in code.
"""

import dataclasses

_NO_MASKS = "text recognition has no instance masks"
_SINGLE = "only single-branch convnets are built"


@dataclasses.dataclass(frozen=True)
class Retired:
    """What replaced a field; `harmless(value)` says whether a value may be dropped (None: any
    value may); `renamed_to` names the field that takes its value instead."""

    replacement: str
    harmless: object = None
    renamed_to: str = ""


def _is_false(value):
    return value is False


def _is_empty(value):
    return value == ""


def _is_single_branch(value):
    return value == 0  # NetType.SINGLE_BRANCH


RETIRED = {
    ("TrainConfig", "from_detection_checkpoint"): Retired(
        "fine_tune_checkpoint restores every model variable the checkpoint has "
        "(fine_tune_variable_map renames scopes)"),
    ("TrainConfig", "startup_delay_steps"): Retired(
        "workers start when the chief's session is ready (they poll it every "
        "worker_recovery_wait_secs)"),
    ("TrainConfig", "bfloat16"): Retired(
        "write mixed_precision: true instead (bfloat16 on CPUs that compute it natively, float16 "
        "with loss scaling on GPUs, as bfloat16 did)", renamed_to="mixed_precision"),
    ("EvalConfig", "visualization_export_dir"): Retired(
        "example sheets are written to <eval_dir>/<dataset>/"),
    ("EvalConfig", "export_path"): Retired("aster-export --output_dir writes the SavedModel"),
    ("EvalConfig", "eval_instance_masks"): Retired(_NO_MASKS, _is_false),
    ("EvalConfig", "metrics_set"): Retired(
        "the recognition metrics (word accuracy per protocol, 1 - NED, lexicon accuracy) are the "
        "only ones", lambda value: value == "recognition_metrics"),
    ("InputReader", "label_map_path"): Retired(
        "the characters are the model's label_map.character_set", _is_empty),
    ("InputReader", "min_after_dequeue"): Retired("the shuffle buffer is queue_capacity"),
    ("InputReader", "load_instance_masks"): Retired(_NO_MASKS, _is_false),
    ("InputReader", "external_input_reader"): Retired(
        "the readers are tf_record_input_reader and lmdb_input_reader", lambda value: False),
    ("LanguageModelRnnCell", "restore_path"): Retired(
        "fine_tune_checkpoint with fine_tune_variable_map restores the language-model cells",
        _is_empty),
    ("CrnnNet", "net_type"): Retired(_SINGLE, _is_single_branch),
    ("ResNet", "net_type"): Retired(_SINGLE, _is_single_branch),
    ("AttentionPredictor", "multi_attention"): Retired(
        "the encoder has one feature branch, so the decoder has one attention", _is_false),
}


def lookup(type_name, field_name):
    """The Retired entry of a field of a message type (short or full name), or None."""
    return RETIRED.get((type_name.rsplit(".", 1)[-1], field_name))


def message(path, field_name, retired):
    """The sentence naming a retired field and what replaced it."""
    where = f"{path}.{field_name}" if path else field_name
    verb = "was renamed" if retired.renamed_to else "was removed"
    return f"{where} {verb}: {retired.replacement}"


def show(field, value):
    """A field's value as a config would write it (enum names, quoted strings)."""
    if field.enum_type is not None:
        return field.enum_type.values_by_number[value].name
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "ListFields"):
        return "{...}"
    return str(value)


def set_retired_fields(message_, path=""):
    """Yields (enclosing message, its path, field, value, Retired) for every retired field set in
    `message_` and the messages under it."""
    for field, value in message_.ListFields():
        retired = lookup(message_.DESCRIPTOR.name, field.name)
        if retired is not None:
            yield message_, path, field, value, retired
            continue
        if field.message_type is None:
            continue
        f_path = f"{path}.{field.name}" if path else field.name
        items = enumerate(value) if field.is_repeated else [(None, value)]
        for i, item in items:
            yield from set_retired_fields(item, f_path if i is None else f"{f_path}[{i}]")
