"""MODEL_CARD.md of a model folder, rendered from the facts package_model gathers (card.json).

Nothing here is typed by hand: every figure comes from the run's own files (provenance.json, the
data manifest, the event files, the evaluation reports) through aster/tools/package_model.py.
"""

import collections

from aster.core import charsets
from aster.protos import label_map_pb2

BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16")


def _first_attention(model):
    for predictor in model.predictor:
        if predictor.WhichOneof("predictor_oneof") == "attention_predictor":
            return predictor.attention_predictor
    return None


def _charset_name(label_map):
    charset = label_map.character_set
    if charset.WhichOneof("source_oneof") in (None, "built_in_set"):  # LOWERCASE by default
        return label_map_pb2.CharacterSet.BuiltInSet.Name(charset.built_in_set).lower()
    return "custom"


def model_facts(config):
    """What the card says of the model itself, from its pipeline config."""
    model = getattr(config.model, config.model.WhichOneof("model_oneof"))
    attention = _first_attention(model)
    facts = {
        "input_height": model.input_height,
        "input_width": model.input_width,
        "rectifier": model.HasField("spatial_transformer"),
        "predictors": [p.name for p in model.predictor if not p.auxiliary],
    }
    if attention is not None:
        # The decoders read max_num_steps - 1 characters and EOS (config_checks holds the
        # training labels to that).
        facts["max_characters"] = attention.max_num_steps - 1
        facts["beam_width"] = attention.beam_width
        facts["charset"] = _charset_name(attention.label_map)
        if facts["charset"] != "custom":
            facts["num_characters"] = len(charsets.BUILT_IN[facts["charset"].upper()])
    return facts


def _pct(value):
    return "n/a" if value is None else f"{100.0 * value:.2f}%"


def _hours(seconds):
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


def _precision(facts):
    if not facts["bfloat16"]:
        return "float32"
    if any(f in facts["provenance"].get("cpu_flags", []) for f in BFLOAT16_FLAGS):
        return "bfloat16 mixed precision (float32 weights)"
    return "float32 (the config asks for bfloat16; this CPU has no native bfloat16)"


def _reads_case_and_punctuation(facts):
    return facts["model"].get("num_characters", 0) > len(charsets.BUILT_IN["LOWERCASE"])


def _accuracy_table(facts):
    """Beam and greedy accuracy per set under the headline protocol; for a model that reads more
    than 36 characters, also protocol 94 (case and punctuation kept) beside it."""
    greedy = {d["name"]: d for d in facts["greedy"]["datasets"]}
    wide = _reads_case_and_punctuation(facts)
    lines = ["| set | images | beam | greedy |" + (" beam, protocol 94 |" if wide else "")
             + " rectifier forced to identity (beam) | control points moved (px, mean) |",
             "|---|---:|---:|---:|" + ("---:|" if wide else "") + "---:|---:|"]
    for d in facts["beam"]["datasets"]:
        identity = (d.get("identity_rectification") or {}).get("accuracy")
        moved = (d.get("rectifier") or {}).get("mean_displacement_px")
        p94 = (d.get("protocols") or {}).get("94", {}).get("accuracy")
        lines.append(f"| `{d['name']}` | {d['size']} | {_pct(d['accuracy'])} | "
                     f"{_pct(greedy.get(d['name'], {}).get('accuracy'))} |"
                     + (f" {_pct(p94)} |" if wide else "")
                     + f" {_pct(identity)} | {'n/a' if moved is None else f'{moved:.2f}'} |")
    return lines


def _charset_limit(model):
    """What the character set leaves out, for the card's Limits."""
    what = {"lowercase": "lower-case alphanumeric classes: no punctuation, no case, no other "
                         "alphabet",
            "allcases": "alphanumeric classes, case kept: no punctuation, no other alphabet",
            "allcases_symbols": "classes, the printable ASCII characters: no space (one word "
                                "per crop), no accented letters, no other alphabet"}.get(
        model.get("charset"), "classes: characters outside its set are never output")
    return f"- {model.get('num_characters', '?')} {what}."


def _output_line(model):
    """What the model outputs, from its character set."""
    what = {"lowercase": "a-z and 0-9; upper case is read as lower case, other characters are "
                         "never output",
            "allcases": "a-z, A-Z and 0-9, case kept; other characters are never output",
            "allcases_symbols": "the 94 printable ASCII characters: letters with their case, "
                                "digits and punctuation"}.get(model.get("charset"),
                                                              "its character set")
    return (f"- Output: {model.get('num_characters', '?')} classes ({model.get('charset')}: "
            f"{what}), at most {model.get('max_characters')} characters.")


def _stages(facts):
    """The runs that made the model, oldest first: the earlier stages it continued
    (`starts_from`, each a card's facts) and then its own."""
    stages = [facts]
    while stages[0].get("starts_from"):
        stages.insert(0, stages[0]["starts_from"])
    return stages


def _curve_table(facts):
    """Accuracy at every evaluated step; with earlier stages, a stage column (steps count from
    each stage's start)."""
    names = [d["name"] for d in facts["beam"]["datasets"]]
    stages = _stages(facts)
    first = "| stage | step | " if len(stages) > 1 else "| step | "
    lines = [first + " | ".join(f"`{n}`" for n in names) + " |",
             "|" + "---:|" * (len(names) + first.count("|") - 1)]
    for number, stage in enumerate(stages, 1):
        for step, accuracies in stage["curve"]:
            row = f"| {number} | {step} | " if len(stages) > 1 else f"| {step} | "
            lines.append(row + " | ".join(_pct(accuracies.get(n)) for n in names) + " |")
    return lines


def _stage_lines(facts):
    """The earlier stages (a run continued through fine_tune_checkpoint), oldest first. Each
    stage's sets come in the order of this model's evaluation, then any others by name: the same
    text whether the facts are fresh or read back from card.json (stored with sorted keys)."""
    names = [d["name"] for d in facts["beam"]["datasets"]]
    lines = []
    for number, stage in enumerate(_stages(facts)[:-1], 1):
        prov = stage["provenance"]
        ordered = sorted(stage["accuracy"].items(), key=lambda item: (
            names.index(item[0]) if item[0] in names else len(names), item[0]))
        accuracy = ", ".join(f"`{name}` {_pct(value)}" for name, value in ordered)
        data = prov.get("data_command")
        lines.append(
            f"- Stage {number}: `{prov.get('command', '')}` at commit "
            f"`{prov.get('commit', '')[:10] or 'unknown'}`"
            + (f" on the data of `{data}`" if data else "") + f", {stage['step']:,} steps of "
            f"{stage['batch_size']} images in {_hours(stage['train_seconds'])}, started "
            f"{prov.get('started_at', '')} on a {prov.get('cores')}-core {prov.get('cpu')}; "
            f"it read (beam) {accuracy}. The next stage starts from its weights "
            "(`fine_tune_checkpoint`; new optimizer state and step count).")
    return lines


def _total_seconds(facts):
    return sum(stage["train_seconds"] for stage in _stages(facts))


def _seeds(seed):
    """'seed 0', or 'seeds 0, 1' for the data of several aster-synth-words runs."""
    return f"seeds {seed}" if "," in str(seed) else f"seed {seed}"


def _data_lines(facts):
    train = facts["data"]
    return [
        f"- Data: `{facts['provenance'].get('data_command', '')}` "
        f"({train['num_images']:,} training images, {_seeds(train['seed'])}).",
        f"- Words: {train['words']} ({train['num_words']:,} words) with "
        f"{100 * train['random_fraction']:.0f}% generated strings (letters, digits, dates, "
        f"prices), at most {train['max_length']} characters.",
        _families_line(train),
    ]


def _families_line(train):
    """The training families, by category where the data's manifest gave one."""
    families = train["font_families"]
    categories = train.get("font_categories")
    if not categories:
        return f"- Font families seen in training ({len(families)}): {', '.join(families)}."
    by_category = collections.defaultdict(list)
    for family in families:
        by_category[categories.get(family, "unknown")].append(family)
    return f"- Font families seen in training ({len(families)}), by category: " + "; ".join(
        f"{category} ({len(names)}): {', '.join(names)}"
        for category, names in sorted(by_category.items())) + "."


def render(facts):
    """The Markdown of MODEL_CARD.md."""
    model, prov = facts["model"], facts["provenance"]
    commit = prov.get("commit", "")[:10] or "unknown"
    dirty = prov.get("uncommitted_files") or []
    beam = facts["beam"]
    lines = [
        f"# Model card: {facts['name']}",
        "",
        "Generated by `python -m aster.tools.package_model write` from the run's own outputs "
        "(`card.json` beside this file holds the facts); not edited by hand.",
        "",
        "ASTER: a thin-plate-spline rectifier, a ResNet and BiLSTM encoder and attention "
        f"decoders ({', '.join(model['predictors'])}). It reads one horizontal word per crop.",
        "",
        "## Accuracy",
        "",
        f"Word accuracy, protocol {beam.get('protocol')} "
        f"({beam.get('protocol_name') or 'case-insensitive alphanumeric'}), checkpoint step "
        f"{facts['step']}; beam width {model.get('beam_width')} and greedy. `val`: unseen words "
        "and font families in the training style; `val_ood`: unseen words, font families and "
        "style mix, half curved; `val_ood_curved`: that half.",
        "",
        *_accuracy_table(facts),
        "",
        "## Model",
        "",
        f"- Input: {model['input_height']}x{model['input_width']} RGB; other sizes are resized "
        "(bilinear, antialiased) by `aster-demo`, the SavedModel and the exported wrappers.",
        _output_line(model),
        f"- Parameters: {facts['trainable_parameters']:,} trainable; the weights file holds "
        f"{facts['num_values']:,} {facts.get('weights_dtype', 'float32')} values "
        f"({facts['num_variables']} variables, with the "
        f"batch-norm statistics and the auxiliary CTC head), {facts['weights_bytes'] / 1e6:.1f} "
        "MB; no optimizer state.",
        "",
        "## How it was made",
        "",
        f"- Code: commit `{commit}`"
        + (f", with these files changed and not yet committed: {', '.join(dirty)}" if dirty
           else "") + f"; packaged at commit `{facts.get('packaged_commit', '')[:10]}`.",
        *_data_lines(facts),
        *_stage_lines(facts),
        f"- Training{' (last stage)' if facts.get('starts_from') else ''}: "
        f"`{prov.get('command', '')}`, {facts['step']:,} steps of "
        f"{facts['batch_size']} images, {_precision(facts)}.",
        f"- Wall time: {_hours(facts['train_seconds'])} of training"
        + (f" ({facts['train_stops']} stops and resumes)" if facts["train_stops"] else "")
        + (f", {_hours(_total_seconds(facts))} with the earlier stages"
           if facts.get("starts_from") else "")
        + f", on a {prov.get('cores')}-core {prov.get('cpu')} "
        f"({', '.join(prov.get('cpu_flags', [])) or 'no AVX-512'}), started "
        f"{prov.get('started_at', '')}.",
        "",
        "## Accuracy during training (beam)",
        "",
        *_curve_table(facts),
        "",
        "## Limits",
        "",
        _charset_limit(model),
        f"- At most {model.get('max_characters')} characters; one horizontal word per crop "
        "(curved text is rectified, vertical text and whole lines are not read).",
        "- Trained on synthetic words only (the fonts above, rendered by aster-synth-words): "
        "fine-tune on crops of your own (README, \"Fine-tuning\") for other kinds of images.",
        "",
    ]
    return "\n".join(lines)
