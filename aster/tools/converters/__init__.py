"""Dataset converters: each module turns one dataset layout into ASTER TFRecords.

Every module has `read_samples(...)` (the format-specific part, a generator of
`aster.tools.conversion.Sample`/`Skip`), `convert(..., output_path, **options)`, and
`add_arguments(parser)` / `run(args, options)` for its `aster-convert` subcommand.
"""
