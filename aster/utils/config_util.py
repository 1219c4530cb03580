"""Reading, overriding, validating and saving pipeline configs.

    config = load_pipeline_config("configs/tiny.config")
    config = merge_overrides(config, "train_config { num_steps: 10 }",
                             ["train_input_reader[0].tf_record_input_reader.input_path=a.tfrecord"])
    validate(config)
    save_pipeline_config(config, train_dir)   # writes train_dir/pipeline.config

Every problem raises ConfigError (a ValueError) whose message names the field path and the bad
value, with a "did you mean" suggestion for misspelled field and enum names; never a raw protobuf
traceback.

Override forms:
- a text-proto snippet, merged field by field: a scalar replaces, a message merges recursively,
  and a repeated field named in the snippet replaces the whole list (not appended);
- dotted assignments `a.b.c=value`: `name[i]` indexes a repeated field (i == its length appends a
  new element), enums go by name, bools are true/false, a repeated scalar without an index takes a
  comma-separated list (`batch_size=16,16`), and a message field takes a text-proto body
  (`train_config.optimizer={adam_optimizer {}}`) that replaces it.
"""

import difflib
import os
import re
import tempfile

from google.protobuf import descriptor, message_factory, text_format

from aster.protos import pipeline_pb2
from aster.utils import config_checks, retired_fields

FD = descriptor.FieldDescriptor
PIPELINE_FILENAME = "pipeline.config"


# A pipeline config problem, naming the field path and the bad value (the builders raise it too).
ConfigError = config_checks.ConfigError


# --------------------------------------------------------------------------- reading and writing


def load_pipeline_config(path):
    """Reads a text-format TrainEvalPipelineConfig file.

    Args:
      path: the config file.

    Returns:
      pipeline_pb2.TrainEvalPipelineConfig.

    Raises:
      ConfigError: the file is missing or unreadable, or does not parse.
    """
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError(f"pipeline config {path!r} cannot be read: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(f"pipeline config {path!r} is not valid UTF-8: {e}") from e
    return parse_pipeline_config(text, source=path)


def parse_pipeline_config(text, source="<config>"):
    """Parses text-format pipeline config text; see load_pipeline_config."""
    config = pipeline_pb2.TrainEvalPipelineConfig()
    _parse_text(text, config, source)
    return config


def config_to_text(config):
    """Text format of a config; parse_pipeline_config(config_to_text(c)) == c."""
    return text_format.MessageToString(config, as_utf8=True)


def save_pipeline_config(config, path):
    """Writes a config atomically (temp file + rename), so a reader never sees half a file.

    Args:
      config: pipeline_pb2.TrainEvalPipelineConfig.
      path: a directory (the file is `<dir>/pipeline.config`) or a file path.

    Returns:
      The path written.
    """
    if os.path.isdir(path):
        path = os.path.join(path, PIPELINE_FILENAME)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".pipeline-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(config_to_text(config))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


# --------------------------------------------------------------------------- parse errors

_UNKNOWN_FIELD = re.compile(r'Message type "([\w.]+)" has no field named "(\w+)"')
_UNKNOWN_ENUM = re.compile(r'Enum type "([\w.]+)" has no value named (\w+)')
_LOCATION = re.compile(r"^(\d+):(\d+) : ")


def _parse_text(text, message, source):
    while True:
        try:
            text_format.Merge(text, message)
            return
        except text_format.ParseError as e:
            dropped = _drop_retired(text, str(e), message.DESCRIPTOR, source)
            if dropped is None:
                _raise_parse_error(text, str(e), message.DESCRIPTOR, source)
            text = dropped
            message.Clear()


def _raise_parse_error(text, raw, root, source):
    explained = _explain_parse_error(raw, root)
    match = _LOCATION.match(raw)
    if match:  # name the field: protobuf's message gives only the line and column
        path = config_checks.path_at(text, int(match.group(1)), int(match.group(2)), root)
        if path:
            location, _, rest = explained.partition(": ")
            explained = f"{location}: {path}: {rest}"
    raise ConfigError(f"{source}: {explained}") from None


def _drop_retired(text, raw, root, source):
    """The text without the retired field the parse error is about; None if it is not one.

    Raises:
      ConfigError: the retired field has a value that asks for something not built.
    """
    unknown, match = _UNKNOWN_FIELD.search(raw), _LOCATION.match(raw)
    if not unknown or not match:
        return None
    type_name, name = unknown.groups()
    retired = retired_fields.lookup(type_name, name)
    if retired is None:
        return None
    line, column = int(match.group(1)), int(match.group(2))
    path = config_checks.path_at(text, line, column, root)
    path = path[:-len(name)].rstrip(".") if path.endswith(name) else path
    lines = text.split("\n")
    offset = sum(len(row) + 1 for row in lines[:line - 1]) + column - 1
    try:
        return retired_fields.drop(text, offset, path, name, retired)
    except ValueError as e:
        raise ConfigError(f"{source}: line {line}: {e}") from None


def _explain_parse_error(raw, root):
    """Turns a protobuf ParseError message into one naming the field path and a suggestion."""
    location = ""
    match = _LOCATION.match(raw)
    if match:
        location = f"line {match.group(1)}, column {match.group(2)}: "
        raw = raw[match.end():]
    unknown = _UNKNOWN_FIELD.search(raw)
    if unknown:
        type_name, name = unknown.groups()
        fields = _field_names(root, type_name)
        where = _path_of_type(root, type_name) or type_name
        return f"{location}unknown field {name!r} in {where}{_suggest(name, fields)}"
    enum = _UNKNOWN_ENUM.search(raw)
    if enum:
        type_name, name = enum.groups()
        values = _enum_names(root, type_name)
        return f"{location}unknown enum value {name!r} of {type_name}{_suggest(name, values)}"
    return f"{location}{raw}"


def _walk_types(root, path="", seen=None):
    """Yields (path, message descriptor) for every message type reachable from root."""
    seen = set() if seen is None else seen
    if root.full_name in seen:
        return
    seen.add(root.full_name)
    yield path, root
    for field in root.fields:
        if field.type == FD.TYPE_MESSAGE:
            child = f"{path}.{field.name}" if path else field.name
            yield from _walk_types(field.message_type, child, seen)


def _path_of_type(root, type_name):
    for path, desc in _walk_types(root):
        if desc.full_name == type_name:
            return path or root.name
    return None


def _field_names(root, type_name):
    for _, desc in _walk_types(root):
        if desc.full_name == type_name:
            return [f.name for f in desc.fields]
    return []


def _enum_names(root, type_name):
    for _, desc in _walk_types(root):
        for field in desc.fields:
            if field.enum_type is not None and field.enum_type.full_name == type_name:
                return [v.name for v in field.enum_type.values]
    return []


def _suggest(name, candidates):
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    if candidates:
        return f"; expected one of {sorted(candidates)}"
    return ""


# --------------------------------------------------------------------------- overrides


def merge_overrides(config, text_snippet=None, assignments=()):
    """Applies overrides to a copy of `config` and returns it.

    Args:
      config: pipeline_pb2.TrainEvalPipelineConfig (not modified).
      text_snippet: optional text-format snippet of the pipeline message.
      assignments: iterable of "dotted.path[i].field=value" strings, applied in order after the
        snippet.

    Returns:
      A new TrainEvalPipelineConfig.

    Raises:
      ConfigError: a malformed snippet or assignment, an unknown field or enum name, a wrong
        type, or a bad index.
    """
    merged = type(config)()
    merged.CopyFrom(config)
    if text_snippet:
        override = type(config)()
        _parse_text(text_snippet, override, "config override")
        _merge_replacing_lists(merged, override)
    for assignment in assignments:
        set_field(merged, assignment)
    return merged


def _merge_replacing_lists(target, source):
    for field, value in source.ListFields():
        if field.is_repeated:
            target.ClearField(field.name)
            container = getattr(target, field.name)
            if field.type == FD.TYPE_MESSAGE:
                for item in value:
                    container.add().CopyFrom(item)
            else:
                container.extend(value)
        elif field.type == FD.TYPE_MESSAGE:
            _merge_replacing_lists(getattr(target, field.name), value)
        else:
            setattr(target, field.name, value)


_TOKEN = re.compile(r"^([A-Za-z_]\w*)(?:\[(\d+)\])?$")


def set_field(config, assignment):
    """Applies one `dotted.path=value` assignment to `config` in place (see module docstring)."""
    if "=" not in assignment:
        raise ConfigError(f"override {assignment!r} is not of the form path=value")
    path, value = assignment.split("=", 1)
    path = path.strip()
    tokens = path.split(".")
    message, walked = config, ""
    for i, token in enumerate(tokens):
        match = _TOKEN.match(token)
        if not match:
            raise ConfigError(f"override {assignment!r}: bad path element {token!r}")
        name, index = match.group(1), match.group(2)
        index = None if index is None else int(index)
        field = _lookup_field(message, name, walked or message.DESCRIPTOR.name)
        walked = f"{walked}.{token}" if walked else token
        last = i == len(tokens) - 1
        if field.type == FD.TYPE_MESSAGE and not last:
            message = _child_message(message, field, index, walked)
            continue
        if not last:
            raise ConfigError(f"override {assignment!r}: {walked} is not a message")
        _assign(message, field, index, value.strip(), walked)


def _lookup_field(message, name, where):
    field = message.DESCRIPTOR.fields_by_name.get(name)
    retired = retired_fields.lookup(message.DESCRIPTOR.name, name)
    if field is None and retired is not None:
        raise ConfigError(f"{retired_fields.message(where, name, retired)}; an override cannot "
                          "set it")
    if field is None:
        names = [f.name for f in message.DESCRIPTOR.fields]
        raise ConfigError(f"unknown field {name!r} in {where}{_suggest(name, names)}")
    return field


def _check_index(field, index, size, path, allow_append):
    repeated = field.is_repeated
    if index is not None and not repeated:
        raise ConfigError(f"{path}: {field.name} is not a repeated field and takes no index")
    if index is None:
        return
    limit = size if allow_append else size - 1
    if index > limit:
        raise ConfigError(
            f"{path}: index {index} is out of range ({field.name} has {size} entries"
            f"{'; use index ' + str(size) + ' to append' if allow_append else ''})"
        )


def _child_message(message, field, index, path):
    container = getattr(message, field.name)
    if not field.is_repeated:
        _check_index(field, index, 0, path, True)
        return container
    if index is None:
        raise ConfigError(f"{path}: {field.name} is repeated; give an index like {field.name}[0]")
    _check_index(field, index, len(container), path, True)
    return container.add() if index == len(container) else container[index]


def _assign(message, field, index, text, path):
    repeated = field.is_repeated
    if field.type == FD.TYPE_MESSAGE:
        parsed = _parse_message_value(field, text, path)
        _child_message(message, field, index, path).CopyFrom(parsed)
        return
    if not repeated:
        _check_index(field, index, 0, path, False)
        setattr(message, field.name, _parse_scalar(field, text, path))
        return
    container = getattr(message, field.name)
    if index is None:
        items = [t for t in (s.strip() for s in text.strip("[]").split(",")) if t]
        values = [_parse_scalar(field, item, path) for item in items]
        del container[:]
        container.extend(values)
        return
    _check_index(field, index, len(container), path, True)
    parsed = _parse_scalar(field, text, path)
    if index == len(container):
        container.append(parsed)
    else:
        container[index] = parsed


def _parse_message_value(field, text, path):
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    message = _new_message(field)
    try:
        text_format.Merge(body, message)
    except text_format.ParseError as e:
        detail = _explain_parse_error(str(e), message.DESCRIPTOR)
        kind = field.message_type.name
        raise ConfigError(f"{path}: bad {kind} value {text!r}: {detail}") from None
    return message


def _new_message(field):
    return message_factory.GetMessageClass(field.message_type)()


_INT_RANGES = {
    FD.TYPE_INT32: (-(2**31), 2**31 - 1),
    FD.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FD.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FD.TYPE_UINT32: (0, 2**32 - 1),
    FD.TYPE_FIXED32: (0, 2**32 - 1),
    FD.TYPE_INT64: (-(2**63), 2**63 - 1),
    FD.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FD.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FD.TYPE_UINT64: (0, 2**64 - 1),
    FD.TYPE_FIXED64: (0, 2**64 - 1),
}


def _parse_scalar(field, text, path):
    """Parses `text` as a value of the scalar field, or raises ConfigError naming path."""
    kind = field.type
    if kind == FD.TYPE_BOOL:
        lowered = text.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise ConfigError(f"{path}: expected true or false, got {text!r}")
    if kind in _INT_RANGES:
        try:
            value = int(text, 0)
        except ValueError:
            raise ConfigError(f"{path}: expected an integer, got {text!r}") from None
        low, high = _INT_RANGES[kind]
        if not low <= value <= high:
            raise ConfigError(f"{path}: {value} is out of range [{low}, {high}]")
        return value
    if kind in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE):
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{path}: expected a number, got {text!r}") from None
    if kind == FD.TYPE_ENUM:
        names = [v.name for v in field.enum_type.values]
        if text in names:
            return field.enum_type.values_by_name[text].number
        if text.lstrip("-").isdigit() and int(text) in field.enum_type.values_by_number:
            return int(text)
        raise ConfigError(
            f"{path}: unknown {field.enum_type.name} value {text!r}{_suggest(text, names)}"
        )
    if kind == FD.TYPE_STRING:
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1]
        return text
    if kind == FD.TYPE_BYTES:
        return text.encode("utf-8")
    raise ConfigError(f"{path}: cannot set a field of type {kind}")  # pragma: no cover


# --------------------------------------------------------------------------- validation and diff


def validate(config, check_files=False):
    """Checks a pipeline config before any graph is built.

    Args:
      config: pipeline_pb2.TrainEvalPipelineConfig.
      check_files: also require every input path / glob to match an existing file (True), or
        only those of the train_input_readers ("train").

    Raises:
      ConfigError: the first problem found, naming its field path and value.
    """
    problems = config_checks.find_problems(config, check_files=check_files)
    if problems:
        raise ConfigError(problems[0])


def flatten(message, prefix=""):
    """Maps every set leaf field of `message` to its value: {"train_config.num_steps": 10, ...}."""
    leaves = {}
    for field, value in message.ListFields():
        path = f"{prefix}.{field.name}" if prefix else field.name
        items = value if field.is_repeated else [value]
        for i, item in enumerate(items):
            item_path = f"{path}[{i}]" if field.is_repeated else path
            if field.type == FD.TYPE_MESSAGE:
                sub = flatten(item, item_path)
                leaves.update(sub if sub else {item_path: "{}"})
            elif field.type == FD.TYPE_ENUM:
                leaves[item_path] = field.enum_type.values_by_number[item].name
            else:
                leaves[item_path] = item
    return leaves


def diff(a, b):
    """Lists the leaf differences between two configs as (path, value_in_a, value_in_b).

    A value missing on one side is None there.
    """
    left, right = flatten(a), flatten(b)
    return [
        (path, left.get(path), right.get(path))
        for path in sorted(set(left) | set(right))
        if left.get(path) != right.get(path)
    ]
