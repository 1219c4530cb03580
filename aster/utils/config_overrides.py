"""Overrides of a pipeline config: a text-format snippet and dotted `path=value` assignments.

See aster/utils/config_util.py for the forms; config_util re-exports merge_overrides and
set_field.
"""

import re

from google.protobuf import descriptor, message_factory

from aster.utils import config_migrations, config_text, retired_fields
from aster.utils.config_checks import ConfigError

FD = descriptor.FieldDescriptor

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
        config_text.parse_text(text_snippet, override, "config override")
        config_migrations.migrate(override, "config override")
        merge_messages(merged, override)
    for assignment in assignments:
        set_field(merged, assignment)
    return merged


def merge_messages(target, source):
    """Merges `source` into `target` in place: a scalar replaces, a message merges field by field,
    a repeated field set in `source` replaces the whole list (the override and `base` rule)."""
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
            child = getattr(target, field.name)
            child.SetInParent()  # an empty message (`x {}`) is set too, as in the source
            merge_messages(child, value)
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
    if retired is not None:
        raise ConfigError(f"{retired_fields.message(where, name, retired)}; an override cannot "
                          "set it")
    if field is None:
        names = [f.name for f in message.DESCRIPTOR.fields]
        raise ConfigError(f"unknown field {name!r} in {where}{config_text.suggest(name, names)}")
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
        config_text.parse_text(body, message, path)
    except ConfigError as e:
        kind = field.message_type.name
        raise ConfigError(f"{path}: bad {kind} value {text!r}: {e}") from None
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
        hint = config_text.suggest(text, names)
        raise ConfigError(f"{path}: unknown {field.enum_type.name} value {text!r}{hint}")
    if kind == FD.TYPE_STRING:
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1]
        return text
    if kind == FD.TYPE_BYTES:
        return text.encode("utf-8")
    raise ConfigError(f"{path}: cannot set a field of type {kind}")  # pragma: no cover

