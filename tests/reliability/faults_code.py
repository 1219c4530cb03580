"""A scan of the project's sources for code that evaluates or unpickles data.

Configs are text-format protobufs, datasets are TFRecord/LMDB bytes, checkpoints are TF's own
format: none of them may reach pickle, eval/exec, yaml.load, marshal or np.load with pickles.
"""

import ast
import collections
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
Result = collections.namedtuple("Result", "case tried held figure failures")

_MODULES = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "shelve", "marshal", "joblib"}
_CALLS = {"eval", "exec", "compile", "literal_eval"}


def _problems(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            bad = {n.split(".")[0] for n in names} & _MODULES
            if bad:
                found.append(f"{path}:{node.lineno}: imports {sorted(bad)}")
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else "")
        keywords = {k.arg: k.value for k in node.keywords}
        builtin = isinstance(func, ast.Name)  # re.compile is fine; compile() is not
        if name in _CALLS and (builtin or name == "literal_eval"):
            found.append(f"{path}:{node.lineno}: calls {name}()")
        if name in ("load", "load_all", "unsafe_load") and isinstance(func, ast.Attribute) and \
                getattr(func.value, "id", "") == "yaml":
            found.append(f"{path}:{node.lineno}: yaml.{name}()")
        allow = keywords.get("allow_pickle")
        if name == "load" and isinstance(allow, ast.Constant) and allow.value:
            found.append(f"{path}:{node.lineno}: load(allow_pickle=True)")
    return found


def source_files():
    out = []
    for directory in ("aster", "benchmarks"):
        for base, _, files in os.walk(os.path.join(ROOT, directory)):
            out.extend(os.path.join(base, f) for f in files
                       if f.endswith(".py") and not f.endswith("_pb2.py"))
    out.append(os.path.join(ROOT, "setup.py"))
    return sorted(out)


def run():
    files = source_files()
    failures = [p for f in files for p in _problems(f)]
    figure = (f"{len(files)} source files scanned (aster/, benchmarks/, setup.py): "
              f"{len(failures)} uses of pickle/marshal/shelve, eval/exec/compile, yaml.load or "
              f"np.load(allow_pickle=True)")
    return Result("No evaluation or unpickling of data", len(files), len(files) - len(
        {p.split(":")[0] for p in failures}), figure, failures)
