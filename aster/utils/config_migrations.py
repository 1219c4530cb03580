"""What a config written for an earlier version becomes, with one warning per change.

    config_migrations.migrate(config, source)   # after parsing, before bases and --set

Each migration names the field and what to write instead:
- a retired field (aster/utils/retired_fields.py: `[deprecated = true]` in the protos) set to a
  value that changes nothing is cleared; a renamed one (`train_config.bfloat16`) moves its value
  to the new name; any other value is a ConfigError naming the field and the value.
- `eval_config.data_preprocessing_steps { string_filtering {...} }`: evaluation scores the
  transcript as written (each protocol filters it: 36 lower-cases and keeps digits and letters, 94
  keeps every printable character), so a text step there would make protocols 62 and 94 score a
  lower-cased label. The step is removed.
config_checks refuses both in a config that did not come through here (one built in code).
"""

import logging

from aster.utils import retired_fields
from aster.utils.config_checks import EVAL_TEXT_STEP, ConfigError

_LOG = logging.getLogger("aster.config")


def migrate(config, source):
    """Rewrites what an earlier version's config says into what this version means, in place.

    Args:
      config: pipeline_pb2.TrainEvalPipelineConfig, just parsed.
      source: the config's file name (for the warnings and errors).

    Raises:
      ConfigError: a retired field asks for something that is not built.
    """
    for message, path, field, value, retired in list(retired_fields.set_retired_fields(config)):
        _retire(message, path, field, value, retired, source)
    steps = config.eval_config.data_preprocessing_steps
    for i in reversed(range(len(steps))):
        if steps[i].WhichOneof("preprocessing_step") == "string_filtering":
            _LOG.warning("%s: eval_config.data_preprocessing_steps[%d].string_filtering is "
                         "ignored: %s", source, i, EVAL_TEXT_STEP)
            del steps[i]


def _retire(message, path, field, value, retired, source):
    said = retired_fields.message(path, field.name, retired)
    shown = retired_fields.show(field, value)
    if retired.renamed_to:
        new = retired.renamed_to
        if message.HasField(new) and getattr(message, new) != value:
            raise ConfigError(f"{source}: {said}; it is set ({shown}) beside {new} "
                              f"({retired_fields.show(field, getattr(message, new))}): keep one")
        setattr(message, new, value)
        _LOG.warning("%s: %s (read %s as %s: %s)", source, said, field.name, new, shown)
    elif retired.harmless is None or retired.harmless(value):
        _LOG.warning("%s: %s; its value %s is ignored (delete the line)", source, said, shown)
    else:
        raise ConfigError(f"{source}: {said} (got {shown})")
    message.ClearField(field.name)
