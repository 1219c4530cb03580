"""The commands of README.md and of the configs' `Run:` headers run as written on a fresh clone.

Commands are read from README.md's ```sh blocks (`\\` continues a line, `#` starts a comment),
its ```python blocks, and the `Run:` block of each configs/*.config header (lines that start with
a program; a remark in parentheses after two spaces is prose). The slow test runs them in doc
order in a copy of the checkout whose .venv is this environment, with its bin/ first on PATH (as
after `. .venv/bin/activate`), exactly as written except that
  - paths under /tmp/ go under the test's temporary folder, and
  - `make X` runs as `make -o install X`: the environment is installed already, and a stale
    install stamp must not make the copy reinstall it (the editable install would then point at
    the copy).
It first writes the files the README says are the user's own (word images, a labels file).

NOT_RUN lists each command that cannot run in a test, with the reason. For those (the fast test):
a `make` command must dry-run (`make -n`), an aster program must accept the flags (its own
argparse parser) and the config with the command's overrides must validate, `pip install -e
'.[X]'` must name an extra of setup.py, and `aster-convert a|b|...` must name converters. Every
`make TARGET` named anywhere in the README must be a target too.
"""

import glob
import importlib
import os
import re
import shlex
import subprocess
import sys
import textwrap
from importlib import metadata

import pytest
import source_tree
from PIL import Image, ImageDraw

from aster.utils import config_util

ROOT = source_tree.ROOT
README = os.path.join(ROOT, "README.md")
_PROGRAM = re.compile(r"(make|pip|python|(\.venv/bin/)?aster-[a-z-]+)(\s|$)")

# Documented commands that cannot run in a test: command (as in the docs) -> reason.
NOT_RUN = {
    "make train": "fonts, 100,000 synthetic images and ~46 minutes of training "
                  "(tests/main_job_test.py runs its pipeline on tiny data)",
    "make test": "the whole test suite, this test included",
    "aster-synth-words --output_dir data/synth --num_train 100000 --num_val 2000 "
    "--num_val_ood 2000": "100,000 images take minutes; make tiny-data runs the same program",
    "aster-convert lmdb|synth90k|synthtext|iiit5k|svt|ic03|ic13|ic15|svtp|cute80 ... "
    "--output OUT": "a pattern: the first word stands for one of the converters",
    "aster-eval --pipeline_config_path configs/demo_cpu.config --checkpoint_dir runs/demo_cpu "
    "--eval_dir runs/demo_cpu/eval_mine --run_once --labels_file my_crops/labels.txt":
        "needs the checkpoints of make train and crops of your own",
    "aster-train --pipeline_config_path configs/demo_cpu.config --train_dir runs/demo_cpu_10k "
    "--set train_config.num_steps=10000 --set train_config.optimizer.adam_optimizer."
    "learning_rate.cosine_decay_learning_rate.total_steps=10000":
        "10,000 steps on the data of make train take ~40 minutes or more",
    "aster-eval --pipeline_config_path configs/demo_cpu.config --checkpoint_dir "
    "runs/demo_cpu_10k --eval_dir runs/demo_cpu_10k/eval --run_once":
        "needs the checkpoints of the 10,000-step run above",
    # configs/aster_paper.config
    "aster-train --pipeline_config_path configs/aster_paper.config --train_dir runs/aster_paper":
        "needs MJSynth and SynthText converted to TFRecords; 1.2M steps take days",
    "aster-eval --pipeline_config_path configs/aster_paper.config --checkpoint_dir "
    "runs/aster_paper --eval_dir runs/aster_paper/eval":
        "needs the converted benchmarks and the trained model; waits for new checkpoints",
    # configs/crnn_ctc.config
    "make install protos data/synth/manifest.json": "the fonts and 100,000 images of make train",
    ".venv/bin/aster-train --pipeline_config_path configs/crnn_ctc.config --train_dir "
    "runs/crnn_ctc": "reads make train's data/synth; 5,000 steps (tests/main_job_test.py trains "
                     "this config a few steps)",
    ".venv/bin/aster-eval --pipeline_config_path configs/crnn_ctc.config --checkpoint_dir "
    "runs/crnn_ctc --eval_dir runs/crnn_ctc/eval --run_once": "needs its trained checkpoints",
    # configs/demo_cpu.config
    "pip install -e '.[fonts]'": "changes this environment and needs PyPI",
    "aster-synth-words --output_dir data/synth --num_train 100000 --num_val 2000 "
    "--num_val_ood 2000 --num_shards 8": "100,000 images take minutes",
    "aster-train --pipeline_config_path configs/demo_cpu.config --train_dir runs/demo_cpu":
        "reads make train's data/synth; 5,000 steps take ~35 minutes",
    "aster-eval --pipeline_config_path configs/demo_cpu.config --checkpoint_dir runs/demo_cpu "
    "--eval_dir runs/demo_cpu/eval --run_once": "needs the checkpoints of make train",
    # configs/demo_cpu_el.config and configs/demo_cpu_ru.config
    **{command: reason for code in ("el", "ru") for command, reason in {
        f"make train SCRIPT={code}": "fonts, 100,000 synthetic images and ~20 minutes of "
                                     "training (tests/exporters/script_export_test.py trains a tiny "
                                     "Greek model)",
        f"aster-synth-words --output_dir data/synth_{code} --language {code} --num_train 100000 "
        "--num_val 2000 --num_val_ood 2000 --num_shards 8": "100,000 images take minutes",
        f"aster-train --pipeline_config_path configs/demo_cpu_{code}.config --train_dir "
        f"runs/demo_cpu_{code}": f"reads make train SCRIPT={code}'s data; 5,000 steps take "
                                 "~20 minutes",
        f"aster-eval --pipeline_config_path configs/demo_cpu_{code}.config --checkpoint_dir "
        f"runs/demo_cpu_{code} --eval_dir runs/demo_cpu_{code}/eval --run_once":
            f"needs the checkpoints of make train SCRIPT={code}",
    }.items()},
    "pip install -e '.[fonts,languages]'": "changes this environment and needs PyPI",
    # configs/base_cpu.config
    "make pretrain": "1,400,000 synthetic images and ~6 h of training",
    "aster-synth-words --output_dir data/base --num_train 500000 --num_val 2000 "
    "--num_val_ood 2000 --num_shards 40 --seed 0": "500,000 images take ~8 minutes",
    "aster-train --pipeline_config_path configs/base_cpu.config --train_dir runs/base_cpu":
        "reads make pretrain's data/base; 30,000 steps take ~2 hours",
    "aster-eval --pipeline_config_path configs/base_cpu.config --checkpoint_dir runs/base_cpu "
    "--eval_dir runs/base_cpu/eval --run_once": "needs the checkpoints of make pretrain",
    # configs/base_cpu_stage2.config
    "aster-train --pipeline_config_path configs/base_cpu_stage2.config --train_dir "
    "runs/base_cpu_stage2": "continues make pretrain's runs/base_cpu; 20,000 steps take ~80 "
                            "minutes",
    "aster-eval --pipeline_config_path configs/base_cpu_stage2.config --checkpoint_dir "
    "runs/base_cpu_stage2 --eval_dir runs/base_cpu_stage2/eval --run_once":
        "needs the checkpoints of make pretrain's second stage",
    # configs/base_cpu_stage3.config
    "aster-train --pipeline_config_path configs/base_cpu_stage3.config --train_dir "
    "runs/base_cpu_stage3": "continues make pretrain's runs/base_cpu_stage2; 24,000 steps take "
                            "~80 minutes",
    "aster-eval --pipeline_config_path configs/base_cpu_stage3.config --checkpoint_dir "
    "runs/base_cpu_stage3 --eval_dir runs/base_cpu_stage3/eval --run_once":
        "needs the checkpoints of make pretrain's third stage",
    # configs/base_cpu_stage4.config
    "make pretrain-fonts": "downloads Debian font packages",
    "aster-train --pipeline_config_path configs/base_cpu_stage4.config --train_dir "
    "runs/base_cpu_stage4": "continues make pretrain's runs/base_cpu_stage3; 30,000 steps take "
                            "~70 minutes",
    "aster-eval --pipeline_config_path configs/base_cpu_stage4.config --checkpoint_dir "
    "runs/base_cpu_stage4 --eval_dir runs/base_cpu_stage4/eval --run_once":
        "needs the checkpoints of make pretrain's fourth stage",
    # configs/base_cpu_stage5.config
    "make pretrain-94": "the Google Fonts library, 400,000 images and hours of training",
    "aster-train --pipeline_config_path configs/base_cpu_stage5.config --train_dir "
    "runs/base_cpu_stage5": "needs make pretrain-94's data/base94; 20,000 steps take ~1.5 hours",
    "aster-eval --pipeline_config_path configs/base_cpu_stage5.config --checkpoint_dir "
    "runs/base_cpu_stage5 --eval_dir runs/base_cpu_stage5/eval --run_once":
        "needs the checkpoints of make pretrain-94",
    # configs/base_cpu_stage6.config
    "aster-train --pipeline_config_path configs/base_cpu_stage6.config --train_dir "
    "runs/base_cpu_stage6": "needs stage five's model and two 400,000-image folders; 20,000 "
                            "steps take ~1.5 hours",
    "aster-eval --pipeline_config_path configs/base_cpu_stage6.config --checkpoint_dir "
    "runs/base_cpu_stage6 --eval_dir runs/base_cpu_stage6/eval --run_once":
        "needs the checkpoints of the sixth stage",
    # configs/base_cpu_stage7.config
    "aster-train --pipeline_config_path configs/base_cpu_stage7.config --train_dir "
    "runs/base_cpu_stage7": "needs stage six's model and two 400,000-image folders; 20,000 "
                            "steps take ~1.5 hours",
    "aster-eval --pipeline_config_path configs/base_cpu_stage7.config --checkpoint_dir "
    "runs/base_cpu_stage7 --eval_dir runs/base_cpu_stage7/eval --run_once":
        "needs the checkpoints of the seventh stage",
    # configs/base_cpu_stage8.config
    "aster-train --pipeline_config_path configs/base_cpu_stage8.config --train_dir "
    "runs/base_cpu_stage8": "needs stage seven's model and three 400,000-image folders; 18,000 "
                            "steps take ~1.3 hours",
    "aster-eval --pipeline_config_path configs/base_cpu_stage8.config --checkpoint_dir "
    "runs/base_cpu_stage8 --eval_dir runs/base_cpu_stage8/eval --run_once":
        "needs the checkpoints of the eighth stage",
    # configs/base_cpu_stage9.config
    "python -m aster.tools.widen_model --checkpoint_path runs/base_cpu_stage8/model "
    "--pipeline_config_path configs/base_cpu_stage9.config --output_dir runs/base_cpu_stage9_start":
        "needs stage eight's model (tests/tools/widen_model_test.py widens the tiny model)",
    "aster-train --pipeline_config_path configs/base_cpu_stage9.config --train_dir "
    "runs/base_cpu_stage9": "needs stage eight's model widened and three 400,000-image folders; "
                            "16,000 steps take ~1.5 hours",
    "aster-eval --pipeline_config_path configs/base_cpu_stage9.config --checkpoint_dir "
    "runs/base_cpu_stage9 --eval_dir runs/base_cpu_stage9/eval --run_once":
        "needs the checkpoints of the ninth stage",
    # configs/base_cpu_stage10.config
    "aster-train --pipeline_config_path configs/base_cpu_stage10.config --train_dir "
    "runs/base_cpu_stage10": "needs stage nine's checkpoints and four 400,000-image folders; "
                             "12,000 steps take ~1.6 hours",
    "aster-eval --pipeline_config_path configs/base_cpu_stage10.config --checkpoint_dir "
    "runs/base_cpu_stage10 --eval_dir runs/base_cpu_stage10/eval --run_once":
        "needs the checkpoints of the tenth stage",
    # configs/base_cpu_stage11.config
    "aster-train --pipeline_config_path configs/base_cpu_stage11.config --train_dir "
    "runs/base_cpu_stage11": "needs data/base94 and 300,000 renders at 160 pixels; "
                             "8,000 steps take ~1 hour",
    "aster-eval --pipeline_config_path configs/base_cpu_stage11.config --checkpoint_dir "
    "runs/base_cpu_stage11 --eval_dir runs/base_cpu_stage11/eval --run_once":
        "needs the checkpoints of the eleventh stage",
    # configs/finetune_cpu.config
    "make synth-data-94": "the fonts and 100,000 images of the shipped model's kind of text",
    "aster-convert folder --labels_file my_crops/labels.txt --output data/mine/train.tfrecord":
        "needs crops of your own (tests/tools/converters run the folder converter)",
    "aster-convert folder --labels_file my_crops_test/labels.txt --output "
    "data/mine/test.tfrecord": "needs crops of your own",
    "aster-train --pipeline_config_path configs/finetune_cpu.config --train_dir runs/mine":
        "needs your converted crops and make synth-data-94's data/synth94; 2,000 steps take "
        "~16 minutes (tests/pretrained_test.py fine-tunes from the shipped model)",
    "aster-eval --pipeline_config_path configs/finetune_cpu.config --checkpoint_dir runs/mine "
    "--eval_dir runs/mine/eval --run_once": "needs the fine-tuned checkpoints",
}


def _key(argv):
    return " ".join(argv)


_NOT_RUN = {_key(shlex.split(command)): reason for command, reason in NOT_RUN.items()}


# --------------------------------------------------------------------------- reading the docs


def _shell_commands(lines):
    """argv lists of the commands in `lines`: `\\` joins lines, `#` starts a comment."""
    commands, pending = [], ""
    for line in lines:
        pending += line.strip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        argv = shlex.split(pending, comments=True)
        pending = ""
        if argv:
            commands.append(argv)
    return commands


def readme_shell_commands():
    with open(README) as f:
        blocks = re.findall(r"^```sh\n(.*?)^```", f.read(), re.MULTILINE | re.DOTALL)
    return [argv for block in blocks for argv in _shell_commands(block.splitlines())]


def readme_python_blocks():
    with open(README) as f:
        blocks = re.findall(r"^( *)```python\n(.*?)^\1```", f.read(), re.MULTILINE | re.DOTALL)
    return [textwrap.dedent(code) for _, code in blocks]


def readme_make_targets():
    """The `make ...` commands written in inline code anywhere in the README."""
    with open(README) as f:
        return sorted(set(re.findall(r"`make ([a-z][\w-]*)", f.read())))


def config_run_commands(path):
    """argv lists of the commands in the `Run:` block of a config's header comment."""
    lines, in_run = [], False
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                break
            text = line[1:].rstrip()
            label = re.match(r"\s*(or|[A-Z][a-z]+):\s", text)
            if label:
                in_run = label.group(1) in ("Run", "or")
                text = text[label.end():]
            if in_run:
                lines.append(re.sub(r"\s{2,}\(.*$", "", text).strip())
    commands, continued = [], False
    for text in lines:  # a command starts with a program; other lines are prose
        if continued or _PROGRAM.match(text):
            commands.append(text)
            continued = text.endswith("\\")
    return _shell_commands(commands)


def documented_commands():
    """(source, argv) of every documented shell command, in doc order, each command once."""
    found = [("README.md", argv) for argv in readme_shell_commands()]
    for path in sorted(glob.glob(os.path.join(ROOT, "configs", "*.config"))):
        found += [(os.path.relpath(path, ROOT), argv) for argv in config_run_commands(path)]
    unique = {}
    for source, argv in found:
        unique.setdefault(_key(argv), (source, argv))
    return list(unique.values())


# --------------------------------------------------------------------------- checks without running


def _dry_run_make(targets):
    result = subprocess.run(["make", "-n", *targets], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, f"make -n {' '.join(targets)}: {result.stderr}"


def _parse_flags(program, args):
    """Parses `args` with the program's own argparse parser (console script -> module; `python
    -m MODULE` -> MODULE)."""
    if program == "python":
        assert args[0] == "-m", f"python runs a module of the package: {args}"
        module, args = importlib.import_module(args[1]), args[2:]
    else:
        (entry,) = [e for e in metadata.entry_points(group="console_scripts")
                    if e.name == program]
        module = importlib.import_module(entry.module)
    if hasattr(module, "build_parser"):
        return module.build_parser().parse_args(args)
    return module._parse_args(args)  # aster-train


def _check_config(args):
    path = getattr(args, "pipeline_config_path", "") or getattr(args, "config", "")
    if path:
        config = config_util.load_pipeline_config(path)
        assignments = getattr(args, "assignments", None) or getattr(args, "set", None) or []
        config = config_util.merge_overrides(config, args.config_override or None, assignments)
        config_util.validate(config)


def _check_converters(names):
    for name in names:
        with pytest.raises(SystemExit) as exited:
            _parse_flags("aster-convert", [name, "--help"])
        assert exited.value.code == 0, f"aster-convert has no converter {name!r}"


def _check_without_running(argv):
    program = os.path.basename(argv[0])
    if program == "make":
        _dry_run_make(argv[1:])
    elif program == "pip":
        assert argv[1:3] == ["install", "-e"], argv
        extras = re.fullmatch(r"\.\[([\w,-]+)\]", argv[3]).group(1).split(",")
        assert set(extras) <= set(metadata.metadata("aster-tf").get_all("Provides-Extra"))
    elif program == "aster-convert" and "|" in argv[1]:
        _check_converters(argv[1].split("|"))
    else:
        try:
            args = _parse_flags(program, argv[1:])
        except SystemExit as error:
            pytest.fail(f"{_key(argv)}: {program} rejects these flags (exit {error.code})")
        _check_config(args)


def test_docs_have_the_commands_this_test_knows():
    keys = [_key(argv) for _, argv in documented_commands()]
    assert "make tiny-data" in keys and len(keys) > len(_NOT_RUN)
    stale = set(_NOT_RUN) - set(keys)
    assert not stale, f"NOT_RUN lists commands no longer documented: {sorted(stale)}"
    assert len(readme_python_blocks()) >= 2


def test_commands_not_run_have_valid_flags_and_configs(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    for _, argv in documented_commands():
        if _key(argv) in _NOT_RUN:
            _check_without_running(argv)


def test_readme_make_targets_exist():
    targets = readme_make_targets()
    assert {"install", "eval", "tiny-data"} <= set(targets)
    for target in targets:
        _dry_run_make([target])


# --------------------------------------------------------------------------- running them


def _write_user_files(workdir):
    """The files the README says are the user's: word images and a path<TAB>text labels file."""
    words = {"word1.png": "hello", "word2.jpg": "world", "word.png": "tiny"}
    for name, text in words.items():
        image = Image.new("RGB", (100, 32), "white")
        ImageDraw.Draw(image).text((8, 10), text, fill="black")
        image.save(os.path.join(workdir, name))
    with open(os.path.join(workdir, "labels.txt"), "w") as f:
        f.writelines(f"{name}\t{text}\n" for name, text in words.items())


def _as_run(argv, scratch):
    argv = [scratch + a[len("/tmp"):] if a.startswith("/tmp/") else a for a in argv]
    return ["make", "-o", "install", *argv[1:]] if argv[0] == "make" else argv


def _run(argv, workdir):
    environment = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep +
                       os.environ.get("PATH", ""), TF_CPP_MIN_LOG_LEVEL="2",
                       VIRTUAL_ENV=os.path.join(workdir, ".venv"))
    environment.pop("PYTHONPATH", None)
    result = subprocess.run(argv, cwd=workdir, env=environment, capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, (f"{shlex.join(argv)} failed:\n{result.stdout[-2000:]}\n"
                                    f"{result.stderr[-4000:]}")
    return result.stdout


# Runs each README python block in its own namespace (one interpreter: one TensorFlow import).
_PYTHON_BLOCKS = """
import sys
for number, code in enumerate(sys.argv[1:]):
    exec(compile(code, f"README.md python block {number}", "exec"), {"__name__": "__main__"})
"""


@pytest.mark.slow
def test_documented_commands_run_as_written(tmp_path):
    workdir = source_tree.copy_source_tree(tmp_path / "clone")
    os.symlink(sys.prefix, os.path.join(workdir, ".venv"))
    scratch = str(tmp_path / "tmp")
    _write_user_files(workdir)
    outputs = {}
    for _, argv in documented_commands():
        if _key(argv) not in _NOT_RUN:
            outputs[_key(argv)] = _run(_as_run(argv, scratch), workdir)
    blocks = [code.replace('"/tmp/', f'"{scratch}/') for code in readme_python_blocks()]
    served = _run([sys.executable, "-c", _PYTHON_BLOCKS, *blocks], workdir)

    # What the README says these commands leave behind.
    assert os.path.isfile(os.path.join(workdir, "data", "tiny_train.tfrecord"))
    assert os.path.isfile(os.path.join(workdir, "data", "tiny_val.tfrecord"))
    assert os.path.isfile(os.path.join(scratch, "tiny", "model.ckpt-20.index"))
    assert os.path.isfile(os.path.join(scratch, "tiny", "eval", "results.json"))
    assert os.path.isfile(os.path.join(scratch, "tiny_export", "saved_model.pb"))
    assert os.path.isfile(os.path.join(workdir, "data", "mine.tfrecord"))
    assert os.path.isfile(os.path.join(workdir, "runs", "exp1", "pipeline.config"))
    (demo,) = [out for key, out in outputs.items() if key.startswith("aster-demo")]
    assert [line.split("\t")[0] for line in demo.splitlines()] == ["word1.png", "word2.jpg"]
    assert served.strip(), "the serving example prints the text and score"
