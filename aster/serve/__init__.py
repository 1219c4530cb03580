"""aster-serve: a recognizer behind an HTTP API and a web page (issue 45; docs/deploying.md, "HTTP
API").

    aster-serve                                   # the shipped model on http://127.0.0.1:8080/
    aster-serve --checkpoint_path runs/demo_cpu   # or a checkpoint, or --saved_model_dir DIR

The modules: cli.py (the console script: flags, model loading, uvicorn), loading.py (the predictor
and the model card's facts), batching.py (one worker thread that runs the predictor on batches of
the images pending from all requests), limits.py (request and image checks), app.py (the Starlette
application: routes and JSON errors) and static/ (the page at `/`). Only this package imports the
`serve` extra (starlette, uvicorn, python-multipart): the rest of `aster` installs without it.
"""
