"""Config fields that were removed, what replaced them, and how a config that still names one loads.

These fields were in the original ASTER protos (and in ours) but nothing read them, or they chose
something that is not built (multi-branch convnets). They are gone from the protos, which reserve
their numbers. A text config that still has one loads like this:
- a value the framework behaves as anyway (`net_type: SINGLE_BRANCH`, `multi_attention: false`,
  any value where the field chose nothing) is dropped with one warning naming the field and what
  replaced it;
- any other value (`net_type: TWO_BRANCHES`, a non-empty `label_map_path`) is a ConfigError naming
  the field, since the config asks for something that does not exist.
A `--set` override of a retired field is always a ConfigError (config_util).
"""

import collections
import logging

_LOG = logging.getLogger("aster.config")

# replacement: what to use instead; harmless: value texts that may be dropped (None: any value).
Retired = collections.namedtuple("Retired", "replacement harmless")

_FALSE = ("false", "f", "0", "False")
_EMPTY = ('""', "''")
_NO_MASKS = "text recognition has no instance masks"
_SINGLE = Retired("only single-branch convnets are built", ("SINGLE_BRANCH", "0"))

RETIRED = {
    ("TrainConfig", "from_detection_checkpoint"): Retired(
        "fine_tune_checkpoint restores every model variable the checkpoint has "
        "(fine_tune_variable_map renames scopes)", None),
    ("TrainConfig", "startup_delay_steps"): Retired(
        "workers start when the chief's session is ready (they poll it every "
        "worker_recovery_wait_secs)", None),
    ("EvalConfig", "visualization_export_dir"): Retired(
        "example sheets are written to <eval_dir>/<dataset>/", None),
    ("EvalConfig", "export_path"): Retired("aster-export --output_dir writes the SavedModel", None),
    ("EvalConfig", "eval_instance_masks"): Retired(_NO_MASKS, _FALSE),
    ("InputReader", "label_map_path"): Retired(
        "the characters are the model's label_map.character_set", _EMPTY),
    ("InputReader", "min_after_dequeue"): Retired("the shuffle buffer is queue_capacity", None),
    ("InputReader", "load_instance_masks"): Retired(_NO_MASKS, _FALSE),
    ("LanguageModelRnnCell", "restore_path"): Retired(
        "fine_tune_checkpoint with fine_tune_variable_map restores the language-model cells",
        _EMPTY),
    ("CrnnNet", "net_type"): _SINGLE,
    ("ResNet", "net_type"): _SINGLE,
    ("AttentionPredictor", "multi_attention"): Retired(
        "the encoder has one feature branch, so the decoder has one attention",
        _FALSE),
}


def lookup(type_name, field_name):
    """The Retired entry of a field of a message type (short or full name), or None."""
    return RETIRED.get((type_name.rsplit(".", 1)[-1], field_name))


def message(path, field_name, retired):
    """The sentence naming a retired field and what replaced it."""
    where = f"{path}.{field_name}" if path else field_name
    return f"{where} was removed: {retired.replacement}"


def drop(text, offset, path, field_name, retired):
    """Removes the retired field whose name starts at `offset` of `text`, or raises.

    Args:
      text: the config text.
      offset: index of the field name in `text`.
      path: the enclosing message's field path (for the messages).
      field_name, retired: the field and its RETIRED entry.

    Returns:
      The text without the field (its name, `:` and value or `{...}` block).

    Raises:
      ValueError: the value is not one that may be dropped (the caller makes it a ConfigError).
    """
    end, value = _field_end(text, offset + len(field_name))
    if retired.harmless is not None and value not in retired.harmless:
        raise ValueError(f"{message(path, field_name, retired)} (got {value})")
    _LOG.warning("config: %s; its value %s is ignored (delete the line)",
                 message(path, field_name, retired), value)
    return text[:offset] + text[end:]


def _field_end(text, i):
    """(end index, value text) of the value that follows a field name at text[i:]."""
    i = _skip_space(text, i)
    if i < len(text) and text[i] == ":":
        i = _skip_space(text, i + 1)
    if i < len(text) and text[i] in "{<[":
        end = _block_end(text, i)
        return end, text[i:end]
    j = i
    while j < len(text) and (text[j].isalnum() or text[j] in "._+-"):
        j += 1
    if j == i and i < len(text) and text[i] in "\"'":
        j = _string_end(text, i)
    return j, text[i:j]


def _skip_space(text, i):
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text[i] == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
        else:
            break
    return i


def _string_end(text, i):
    quote, j = text[i], i + 1
    while j < len(text) and text[j] != quote:
        j += 2 if text[j] == "\\" else 1
    return min(j + 1, len(text))


def _block_end(text, i):
    closing = {"{": "}", "<": ">", "[": "]"}
    stack, j = [], i
    while j < len(text):
        c = text[j]
        if c in "\"'":
            j = _string_end(text, j)
            continue
        if c == "#":
            j = _skip_space(text, j)
            continue
        if c in closing:
            stack.append(closing[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return j + 1
        j += 1
    return len(text)
