"""Where a text-format config went wrong: parse errors that name the field path.

    config_text.parse_text(text, message, source)   # ConfigError naming the field path
    config_text.path_at(text, line, column, root)   # "train_config.num_steps"

Protobuf's ParseError gives only a line and a column; these name the field path and suggest the
closest field or enum name. (Retired fields parse: config_migrations handles them.)
"""

import difflib
import re

from google.protobuf import descriptor, text_format

from aster.utils.config_checks import ConfigError

FD = descriptor.FieldDescriptor

# --------------------------------------------------------------------------- parse errors

_UNKNOWN_FIELD = re.compile(r'Message type "([\w.]+)" has no field named "(\w+)"')
_UNKNOWN_ENUM = re.compile(r'Enum type "([\w.]+)" has no value named (\w+)')
_LOCATION = re.compile(r"^(\d+):(\d+) : ")


def parse_text(text, message, source):
    """Merges text-format `text` into `message`; a parse error becomes a ConfigError that names
    the field path, with a "did you mean" suggestion (protobuf gives a line and column only)."""
    try:
        text_format.Merge(text, message)
    except text_format.ParseError as e:
        _raise_parse_error(text, str(e), message.DESCRIPTOR, source)


def _raise_parse_error(text, raw, root, source):
    explained = explain_parse_error(raw, root)
    match = _LOCATION.match(raw)
    if match:  # name the field: protobuf's message gives only the line and column
        path = path_at(text, int(match.group(1)), int(match.group(2)), root)
        if path:
            location, _, rest = explained.partition(": ")
            explained = f"{location}: {path}: {rest}"
    raise ConfigError(f"{source}: {explained}") from None


def explain_parse_error(raw, root):
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
        return f"{location}unknown field {name!r} in {where}{suggest(name, fields)}"
    enum = _UNKNOWN_ENUM.search(raw)
    if enum:
        type_name, name = enum.groups()
        values = _enum_names(root, type_name)
        return f"{location}unknown enum value {name!r} of {type_name}{suggest(name, values)}"
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


def suggest(name, candidates):
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    if candidates:
        return f"; expected one of {sorted(candidates)}"
    return ""



# --------------------------------------------------------------------------- parse error location

_TOKENS = re.compile(r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[\w.+-]+|.',
                     re.DOTALL)


def path_at(text, line, column, root):
    """The field path (`a.b[1].c`) of the field whose name or value is at line:column of `text`.

    Used to name the field of a text-format parse error (a wrong type, an unknown enum value);
    protobuf's own message gives only the line and column.

    Args:
      text: text-format config.
      line, column: 1-based position of the error (as protobuf reports it).
      root: descriptor of the top message.

    Returns:
      The path, or "" when the position is before any field.
    """
    offsets, total = [], 0
    for row in text.split("\n"):
        offsets.append(total)
        total += len(row) + 1
    limit = offsets[min(line, len(offsets)) - 1] + max(column - 1, 0) if offsets else 0
    # Stack entries: (descriptor or None, path, {field name: occurrences so far}).
    stack = [(root, "", {})]
    last_path, pending = "", None
    for match in _TOKENS.finditer(text):
        if match.start() > limit:
            break
        token = match.group()
        if token.isspace() or token.startswith("#"):
            continue
        desc, path, counts = stack[-1]
        if token in ("{", "<"):
            child = desc.fields_by_name.get(pending) if desc is not None and pending else None
            stack.append((child.message_type if child is not None else None, last_path, {}))
            pending = None
        elif token in ("}", ">"):
            if len(stack) > 1:
                stack.pop()
            pending = None
        elif token in (":", "[", "]", ","):
            continue
        elif pending is None and re.fullmatch(r"[A-Za-z_]\w*", token):
            field = desc.fields_by_name.get(token) if desc is not None else None
            name = f"{path}.{token}" if path else token
            if field is not None and field.is_repeated:
                counts[token] = counts.get(token, -1) + 1
                name = f"{name}[{counts[token]}]"
            last_path, pending = name, token
        else:
            pending = None  # a value ends the field
    return last_path
