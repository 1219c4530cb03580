"""aster-config: show, edit, validate and compare pipeline configs.

    aster-config show CONFIG [--set a.b=1 ...] [--config_override 'text proto']
    aster-config set CONFIG --set a.b=1 [--set ...] -o OUT
    aster-config validate CONFIG [--set ...] [--check_files]
    aster-config diff A B

Exit status 0 on success, 2 on a config error (one line naming the field path) or bad usage, as
in every aster command (1 is a runtime failure: a missing checkpoint, a loss that became NaN).
"""

import argparse
import sys

from aster.utils import cli_logging, config_util
from aster.utils.cli import (  # noqa: F401 (re-exported: the shared flags and exit statuses)
    CONFIG_ERROR_STATUS,
    add_override_flags,
    add_verbose_flag,
    config_error,
    load_with_overrides,
)


def _show(args):
    sys.stdout.write(config_util.config_to_text(load_with_overrides(args)))


def _set(args):
    config = load_with_overrides(args)
    config_util.validate(config)
    path = config_util.save_pipeline_config(config, args.output)
    print(f"wrote {path}")


def _validate(args):
    config = load_with_overrides(args)
    config_util.validate(config, check_files=args.check_files)
    print(f"{args.config}: valid")


def _diff(args):
    a = config_util.load_pipeline_config(args.a)
    b = config_util.load_pipeline_config(args.b)
    rows = config_util.diff(a, b)
    for path, left, right in rows:
        print(f"{path}: {_show_value(left)} -> {_show_value(right)}")
    if not rows:
        print("no differences")


def _show_value(value):
    return "(unset)" if value is None else repr(value)


_COMMANDS = {"show": _show, "set": _set, "validate": _validate, "diff": _diff}


def build_parser():
    parser = argparse.ArgumentParser(prog="aster-config", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the merged config")
    show.add_argument("config")
    add_override_flags(show)
    set_cmd = sub.add_parser("set", help="write the merged config to a new file")
    set_cmd.add_argument("config")
    set_cmd.add_argument("-o", "--output", required=True, help="output file or directory")
    add_override_flags(set_cmd)
    validate = sub.add_parser("validate", help="check a config; exit 2 with the problem")
    validate.add_argument("config")
    validate.add_argument("--check_files", action="store_true",
                          help="also require input files to exist")
    add_override_flags(validate)
    diff = sub.add_parser("diff", help="list leaf fields that differ between two configs")
    diff.add_argument("a")
    diff.add_argument("b")
    for command in (show, set_cmd, validate, diff):
        add_verbose_flag(command)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.verbose:  # otherwise warnings alone show, as bare messages (logging's last resort)
        cli_logging.configure(verbose=True)
    try:
        _COMMANDS[args.command](args)
    except config_util.ConfigError as e:
        return config_error("aster-config", e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
