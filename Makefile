# ASTER-TF. `make train` and `make test` are the two set-up commands on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
# Test processes (pytest-xdist; whole files per process, so a file's tests keep their order and
# its module fixtures are built once). 2 on the two-core CI machine: the suite in ~17 instead of
# ~28 minutes. TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= 2

.PHONY: install protos test lint clean

$(PY):
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH (or PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(STAMP): $(PY) setup.py pyproject.toml $(wildcard protos/*.proto)
	$(PIP) install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

protos: $(STAMP)
	$(PY) setup.py -q build_protos

test: install protos
	$(PY) -m pytest -q -ra -n $(TEST_WORKERS) --dist loadfile

lint: install
	$(VENV)/bin/ruff check aster tests benchmarks setup.py

clean:
	rm -rf build dist *.egg-info aster/protos/*_pb2.py .pytest_cache .ruff_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

# ---- train: fonts + synthetic words (generated once) -> configs/demo_cpu.config -> runs/demo_cpu
# -> evaluation of the final checkpoint with beam search on val, val_ood and val_ood's curved half
# (report table printed, results.md/json and the example sheets in runs/demo_cpu/eval). Rerunning
# resumes from the newest checkpoint in runs/demo_cpu (and only re-evaluates once training is
# done). `make eval` re-evaluates.
# SCRIPT=el (Greek) or SCRIPT=ru (Russian): the same for that alphabet (aster-synth-words
# --language, aster/synth/languages.py): data/synth_<script>, configs/demo_cpu_<script>.config,
# runs/demo_cpu_<script>, scored with protocol 1 (the model's character set, case-folded).
SCRIPT ?=
ifeq ($(SCRIPT),)
SYNTH_DIR := data/synth
DEMO_CONFIG := configs/demo_cpu.config
DEMO_DIR := runs/demo_cpu
LANGUAGE_ARGS :=
else
ifeq ($(filter el ru,$(SCRIPT)),)
$(error SCRIPT=$(SCRIPT): expected el (Greek) or ru (Russian), or no SCRIPT for English)
endif
SYNTH_DIR := data/synth_$(SCRIPT)
DEMO_CONFIG := configs/demo_cpu_$(SCRIPT).config
DEMO_DIR := runs/demo_cpu_$(SCRIPT)
LANGUAGE_ARGS := --language $(SCRIPT)
endif
FONTS_STAMP := $(VENV)/.fonts-installed
# Validation: val (unseen words and font families, training style) and val_ood (unseen words,
# font families and style mix); the families are chosen by split_families
# (aster/synth/font_families.py).
SYNTH_ARGS := --num_train 100000 --num_val 2000 --num_val_ood 2000 --num_shards 8

# The font families of setup.py's `fonts` extra (PyPI font-* packages; aster-synth-words finds them)
# and the word lists of its `languages` extra (wordfreq, for SCRIPT=el/ru).
$(FONTS_STAMP): $(STAMP) setup.py
	$(PIP) install -q -e '.[dev,fonts,languages]'
	@touch $(FONTS_STAMP)

# ---- system-fonts: Debian font packages for Latin text (~45 MB, 10 s here). With the `fonts` extra
# they give aster-synth-words > 40 font families and > 150 usable files after de-duplication.
# Installs only as root where apt-get exists (running `apt-get update` only when the package lists
# lack a package); elsewhere, or when apt-get fails (no network), it prints one line and succeeds
# (no stamp, so it tries again next time), and the fonts already on the machine are used.
# `make train` runs it before generating data/synth.
# Left out: fonts-croscore (Arimo/Tinos/Cousine draw the glyphs of Liberation 2), fonts-noto-core
# (mostly non-Latin scripts), fonts-urw-base35 (pulls in xfonts-utils).
SYSTEM_FONTS_STAMP := $(VENV)/.system-fonts
DEBIAN_FONTS := fonts-dejavu-core fonts-dejavu-extra fonts-liberation2 \
	fonts-crosextra-carlito fonts-crosextra-caladea fonts-freefont-ttf fonts-texgyre \
	fonts-open-sans fonts-cantarell fonts-roboto-unhinted fonts-lato fonts-linuxlibertine \
	fonts-ebgaramond fonts-go fonts-comfortaa fonts-sil-andika fonts-sil-charis \
	fonts-sil-gentiumplus fonts-hack fonts-paratype fonts-cabin fonts-quicksand \
	fonts-oldstandard fonts-cardo fonts-averia-gwf fonts-averia-sans-gwf fonts-averia-serif-gwf \
	fonts-fanwood fonts-goudybookletter fonts-courier-prime fonts-inconsolata fonts-oxygen \
	fonts-adf-accanthis fonts-adf-gillius fonts-adf-universalis fonts-adf-baskervald \
	fonts-adf-berenis fonts-adf-libris fonts-adf-oldania fonts-adf-tribun fonts-adf-verana \
	fonts-adf-ikarius fonts-adf-irianis
APT_INSTALL := DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends

.PHONY: system-fonts
system-fonts: $(SYSTEM_FONTS_STAMP)

$(SYSTEM_FONTS_STAMP):
	@if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "system-fonts: skipped (needs root and apt-get): aster-synth-words uses the fonts" \
			"already on this machine (/usr/share/fonts, ~/.fonts, ...) and the PyPI font" \
			"packages of setup.py's fonts extra"; \
	else \
		{ apt-get install -s -qq $(DEBIAN_FONTS) >/dev/null 2>&1 || apt-get update -qq; } && \
		{ $(APT_INSTALL) $(DEBIAN_FONTS) || \
			{ apt-get update -qq && $(APT_INSTALL) $(DEBIAN_FONTS); }; } && \
		mkdir -p $(VENV) && touch $@ || \
		echo "system-fonts: apt-get install failed: using the fonts already on this machine"; \
	fi

# ---- fonts-google: the Google Fonts library (aster/synth/google_fonts.py): the @fontsource npm
# packages of aster/synth/google_fonts.txt (572 pinned names, >= 500 families with latin faces)
# fetched with `npm pack` (nothing installed) into data/fonts_google, keeping per family its
# metadata.json (family, category, license), LICENSE and latin .woff2 faces; manifest.json lists
# each package's version, files and status (~150 MB, ~8 min with 4 fetches at a time here).
# A rerun fetches only what is missing; a missing package or no network is one line and the
# folder keeps what it has. aster-synth-words reads it with --google_fonts data/fonts_google
# (category-weighted sampling, reserved families never trained on: docs/data.md).
GOOGLE_FONTS_DIR := data/fonts_google

.PHONY: fonts-google
fonts-google: $(STAMP)
	@command -v npm >/dev/null 2>&1 || { echo "fonts-google: skipped (npm is not installed)"; exit 0; }; \
		$(PY) -m aster.synth.google_fonts --out_dir $(GOOGLE_FONTS_DIR) --jobs 4

$(SYNTH_DIR)/manifest.json: | $(FONTS_STAMP) system-fonts
	$(VENV)/bin/aster-synth-words --output_dir $(SYNTH_DIR) $(SYNTH_ARGS) $(LANGUAGE_ARGS)

# ---- synth-data: make train's synthetic words alone (data/synth, ~2 min), without training.
.PHONY: synth-data
synth-data: install $(FONTS_STAMP) $(SYNTH_DIR)/manifest.json

# ---- synth-data-94: the shipped model's kind of text (case kept, punctuation, up to 25
# characters, at 160x32 as the model reads) in the machine's fonts (and data/fonts_google's, if
# make fonts-google ran): data/synth94, the mixed-in reader and `val` of
# configs/finetune_cpu.config (README, "Fine-tuning the base model").
SYNTH94_DIR := data/synth94
SYNTH94_ARGS := --text ascii94 --num_train 100000 --num_val 2000 --num_val_ood 0 --num_shards 8 \
	--num_val_ood_per_category 0 --width 160
.PHONY: synth-data-94
synth-data-94: install $(FONTS_STAMP) $(SYNTH94_DIR)/manifest.json

$(SYNTH94_DIR)/manifest.json: | $(FONTS_STAMP) system-fonts
	$(VENV)/bin/aster-synth-words --output_dir $(SYNTH94_DIR) $(SYNTH94_ARGS) \
		$(if $(wildcard $(GOOGLE_FONTS_DIR)/manifest.json),--google_fonts $(GOOGLE_FONTS_DIR))

.PHONY: train
train: install protos $(FONTS_STAMP) $(SYNTH_DIR)/manifest.json
	$(VENV)/bin/aster-train --pipeline_config_path $(DEMO_CONFIG) --train_dir $(DEMO_DIR)
	$(VENV)/bin/aster-eval --pipeline_config_path $(DEMO_CONFIG) --checkpoint_dir $(DEMO_DIR) \
		--eval_dir $(DEMO_DIR)/eval --run_once

# ---- eval: the newest checkpoint of `make train` on the generated validation set; prints the
# report (also in runs/demo_cpu/eval/results.md, per checkpoint in eval/step-<step>/).
.PHONY: eval
eval: install protos
	@test -n "$$(ls $(DEMO_DIR)/*.index 2>/dev/null)" || \
		{ echo "no checkpoint in $(DEMO_DIR): run 'make train' first"; exit 1; }
	$(VENV)/bin/aster-eval --pipeline_config_path $(DEMO_CONFIG) --checkpoint_dir $(DEMO_DIR) \
		--eval_dir $(DEMO_DIR)/eval --run_once

# ---- pretrain: the shipped base model, models/aster_base, from a fresh clone: pretrain-36, then
# pretrain-94 (below). pretrain-36: fonts, 500,000
# synthetic training words into data/base (seed 0: the font families and words that make train's
# data/synth holds out, and the same val sets), then four stages, each trained, evaluated with
# beam search and greedy and written as a model folder (weights only, its pipeline.config,
# MODEL_CARD.md generated from the run's files: aster/tools/package_model.py):
# configs/base_cpu.config (30,000 steps, ~2 h on two Zen 4 cores in bfloat16) into runs/base_cpu,
# configs/base_cpu_stage2.config (20,000 more steps from those weights with a new, lower
# schedule, ~1 h 10 min) into runs/base_cpu_stage2, configs/base_cpu_stage3.config (24,000
# more, half of each batch from 500,000 new renders in data/base_extra, ~1 h 25 min) into
# runs/base_cpu_stage3, and configs/base_cpu_stage4.config (30,000 more on 400,000 renders in 98
# font families, data/base_wide: the 53 above and 45 from pretrain-fonts; the val and val_ood
# families named so that both sets stay the same) into runs/base_cpu_stage4, written as
# runs/base_cpu_stage4/model (36 classes; the shipped model until 2026-12-07). A rerun resumes each stage from the
# newest checkpoint in its train dir.
BASE_DATA := data/base
EXTRA_DATA := data/base_extra
BASE_MODEL := models/aster_base
BASE_SYNTH_ARGS := --num_train 500000 --num_val 2000 --num_val_ood 2000 --num_shards 40 --seed 0
EXTRA_SYNTH_ARGS := --split train --num_train 500000 --num_shards 40 --seed 1
BASE_SYNTH := aster-synth-words --output_dir $(BASE_DATA) $(BASE_SYNTH_ARGS)
EXTRA_SYNTH := aster-synth-words --output_dir $(EXTRA_DATA) $(EXTRA_SYNTH_ARGS)
BOTH_SYNTH := $(BASE_SYNTH); $(EXTRA_SYNTH)
# Stage four's data: the families that make train's automatic split holds out are named, since
# with more families found the automatic split would choose others.
WIDE_DATA := data/base_wide
EXTRA_FONTS := data/fonts_extra
EXTRA_FONTS_STAMP := $(EXTRA_FONTS)/packages.txt
VAL_FAMILIES := Averia Sans GWF,DejaVu Sans Mono,Fanwood,Hanken Grotesk,Libris ADF,Oxygen-Sans,TeX Gyre Bonum
OOD_FAMILIES := Andika,Berenis ADF,Cabin,Carlito,Charis SIL,EB Garamond,Fjalla One,FreeSerif,Go,Go Mono,Lato
WIDE_SYNTH_ARGS := --split train --num_train 400000 --num_shards 32 --seed 2 \
	--font_dirs $(EXTRA_FONTS) --heldout_font_families '$(VAL_FAMILIES)' \
	--ood_font_families '$(OOD_FAMILIES)'
WIDE_SYNTH := aster-synth-words --output_dir $(WIDE_DATA) $(WIDE_SYNTH_ARGS)
GREEDY_FLAGS := $(foreach i,0 1,--set \
	'model.multi_predictors_recognition_model.predictor[$(i)].attention_predictor.beam_width=1')

# $(call pretrain_stage,CONFIG,TRAIN_DIR,MODEL_DIR,EXTRA write FLAGS,DATA DIRS,DATA COMMANDS):
# one stage of make pretrain.
define pretrain_stage
	$(PY) -m aster.tools.package_model record --train_dir $(2) \
		--command "aster-train --pipeline_config_path $(1) --train_dir $(2)" \
		--data_command "$(6)"
	$(VENV)/bin/aster-train --pipeline_config_path $(1) --train_dir $(2)
	$(VENV)/bin/aster-eval --pipeline_config_path $(1) --checkpoint_dir $(2) --run_once \
		--eval_dir $(2)/eval
	$(VENV)/bin/aster-eval --pipeline_config_path $(1) --checkpoint_dir $(2) --run_once \
		--eval_dir $(2)/eval_greedy $(GREEDY_FLAGS) \
		--set eval_config.compare_identity_rectification=false
	$(PY) -m aster.tools.package_model write --train_dir $(2) --data_dir $(5) \
		--eval_dir $(2)/eval --greedy_eval_dir $(2)/eval_greedy --output_dir $(3) $(4)
endef

$(BASE_DATA)/manifest.json: | $(FONTS_STAMP) system-fonts
	$(VENV)/bin/$(BASE_SYNTH)

$(EXTRA_DATA)/manifest.json: | $(FONTS_STAMP) system-fonts
	$(VENV)/bin/$(EXTRA_SYNTH)

$(WIDE_DATA)/manifest.json: | $(FONTS_STAMP) system-fonts $(EXTRA_FONTS_STAMP)
	$(VENV)/bin/$(WIDE_SYNTH)

# ---- pretrain-fonts: 45 more font families (29 Debian packages of Latin text fonts, ~60 MB
# unpacked) for stage four, fetched with `apt-get download` (no root needed where the package
# lists are present) and unpacked with `dpkg -x` into data/fonts_extra, a folder that
# aster-synth-words searches only when told (--font_dirs): make train's fonts, family split and
# data stay as they are. data/fonts_extra/packages.txt names the .deb files (with versions).
# Left out: fonts-cmu (the Computer Modern design again, beside fonts-lmodern), fonts-spleen
# (bitmap fonts), the Thai fonts-tlwg-* and fonts-gfs-bodoni-classic/-baskerville (none of their
# files passes the Latin checks).
EXTRA_DEBIAN_FONTS := fonts-agave fonts-anonymous-pro fonts-b612 fonts-clear-sans fonts-comic-neue \
	fonts-dosis fonts-firacode fonts-gfs-artemisia fonts-gfs-didot fonts-gfs-neohellenic \
	fonts-hermit fonts-inter fonts-jetbrains-mono fonts-jura fonts-karla fonts-league-mono \
	fonts-league-spartan fonts-lmodern fonts-mononoki fonts-noto-mono fonts-play \
	fonts-quattrocento fonts-roboto-slab fonts-sil-doulos fonts-stix fonts-tuffy fonts-vollkorn \
	fonts-yanone-kaffeesatz fonts-yrsa-rasa
.PHONY: pretrain-fonts
pretrain-fonts: $(EXTRA_FONTS_STAMP)

$(EXTRA_FONTS_STAMP):
	@command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 || \
		{ echo "pretrain-fonts: needs apt-get and dpkg (Debian, Ubuntu) to fetch" \
			"$(words $(EXTRA_DEBIAN_FONTS)) font packages"; exit 1; }
	rm -rf $(EXTRA_FONTS) && mkdir -p $(EXTRA_FONTS)/debs
	cd $(EXTRA_FONTS)/debs && { apt-get download -qq $(EXTRA_DEBIAN_FONTS) || \
		{ [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get download -qq $(EXTRA_DEBIAN_FONTS); }; } || \
		{ echo "pretrain-fonts: apt-get download failed (no network, or no package lists:" \
			"run 'apt-get update' as root)"; exit 1; }
	for deb in $(EXTRA_FONTS)/debs/*.deb; do dpkg -x "$$deb" $(EXTRA_FONTS) || exit 1; done
	cd $(EXTRA_FONTS)/debs && ls *.deb > ../packages.tmp
	rm -rf $(EXTRA_FONTS)/debs && mv $(EXTRA_FONTS)/packages.tmp $@

.PHONY: pretrain pretrain-36
pretrain: pretrain-36
	$(MAKE) pretrain-94

pretrain-36: install protos $(FONTS_STAMP) $(BASE_DATA)/manifest.json $(EXTRA_DATA)/manifest.json \
		$(WIDE_DATA)/manifest.json
	$(call pretrain_stage,configs/base_cpu.config,runs/base_cpu,runs/base_cpu/model,,\
		$(BASE_DATA),$(BASE_SYNTH))
	$(call pretrain_stage,configs/base_cpu_stage2.config,runs/base_cpu_stage2,\
		runs/base_cpu_stage2/model,--starts_from runs/base_cpu/model,$(BASE_DATA),$(BASE_SYNTH))
	$(call pretrain_stage,configs/base_cpu_stage3.config,runs/base_cpu_stage3,\
		runs/base_cpu_stage3/model,--starts_from runs/base_cpu_stage2/model,\
		$(BASE_DATA) $(EXTRA_DATA),$(BOTH_SYNTH))
	$(call pretrain_stage,configs/base_cpu_stage4.config,runs/base_cpu_stage4,$(STAGE4_MODEL),\
		--starts_from runs/base_cpu_stage3/model,$(WIDE_DATA),$(WIDE_SYNTH))

# ---- pretrain-94: stages five to ten. The fifth (configs/base_cpu_stage5.config): the model
# reads the 94 printable ASCII characters with case kept, texts of up to 25 characters, in the
# Google Fonts library's training families besides the Debian ones. From stage four's model
# folder (runs/base_cpu_stage4/model, which `make pretrain-36` writes), on data/base94
# (400,000 images of aster-synth-words --text ascii94 --google_fonts, the `val` / `val_ood`
# families named as in stage four, 400 val_ood images per font category), evaluated on stage
# four's sets and the new ones (protocols 36 and 94 side by side) and written as
# runs/base_cpu_stage5/model. A rerun resumes each stage from the newest checkpoint in its
# runs/ folder. The tenth stage is written as models/aster_base, with a card that names every
# stage. Stage five's
# data/base94 was rendered when google_fonts.txt had 572 packages (565 training families); a
# render with today's 1,008 draws 998 (its validation sets are the same images).
BASE94_DATA := data/base94
STAGE4_MODEL := runs/base_cpu_stage4/model
BASE94_SYNTH_ARGS := --split all --text ascii94 --num_train 400000 --num_val 2000 \
	--num_val_ood 2000 --num_val_ood_per_category 400 --num_shards 32 --seed 4 \
	--google_fonts $(GOOGLE_FONTS_DIR) --font_dirs $(EXTRA_FONTS) \
	--heldout_font_families '$(VAL_FAMILIES)' --ood_font_families '$(OOD_FAMILIES)'
BASE94_SYNTH := aster-synth-words --output_dir $(BASE94_DATA) $(BASE94_SYNTH_ARGS)

$(BASE94_DATA)/manifest.json: | $(FONTS_STAMP) system-fonts $(EXTRA_FONTS_STAMP) fonts-google
	$(VENV)/bin/$(BASE94_SYNTH)

$(STAGE4_MODEL)/pipeline.config:
	@echo "$(STAGE4_MODEL) is missing: make pretrain-36 trains stages one to four"; exit 1

# Stages six to ten (configs/base_cpu_stage6.config ... stage10.config) go on from stage five,
# each from the one before (the ninth from the eighth widened: aster.tools.widen_model; its model
# folder stores float16 weights), with half of each batch from 400,000 more training renders per folder
# drawn with handwriting and display faces weighted up (HW_WEIGHTS): data/base94_hw (seed 5) and
# data/base94_lib (seed 6). The figures in RESULTS.md come from data/base94_hw rendered with the
# 565-family library and data/base94_lib with the 998-family one; a render today draws 998 for
# both.
HW_WEIGHTS := handwriting=0.3,display=0.25,sans-serif=0.2,serif=0.15,monospace=0.1
BASE94_TRAIN_ARGS := --split train --text ascii94 --num_train 400000 --num_shards 32 \
	--google_fonts $(GOOGLE_FONTS_DIR) --font_dirs $(EXTRA_FONTS) \
	--heldout_font_families '$(VAL_FAMILIES)' --ood_font_families '$(OOD_FAMILIES)' \
	--category_weights '$(HW_WEIGHTS)'
BASE94_HW_DATA := data/base94_hw
BASE94_LIB_DATA := data/base94_lib
BASE94_HW_SYNTH := aster-synth-words --output_dir $(BASE94_HW_DATA) $(BASE94_TRAIN_ARGS) --seed 5
BASE94_LIB_SYNTH := aster-synth-words --output_dir $(BASE94_LIB_DATA) $(BASE94_TRAIN_ARGS) --seed 6

$(BASE94_HW_DATA)/manifest.json: | $(FONTS_STAMP) system-fonts $(EXTRA_FONTS_STAMP) fonts-google
	$(VENV)/bin/$(BASE94_HW_SYNTH)

$(BASE94_LIB_DATA)/manifest.json: | $(FONTS_STAMP) system-fonts $(EXTRA_FONTS_STAMP) fonts-google
	$(VENV)/bin/$(BASE94_LIB_SYNTH)

# Stage ten (configs/base_cpu_stage10.config) reads a 32x160 input: 400,000 training renders at
# 160 pixels with the same category weights (data/base94_hw160, seed 7), and data/base94's
# validation sets rendered again at 160 pixels (data/base94_w160: seed 4, the same texts and
# families; no training split).
BASE94_HW160_DATA := data/base94_hw160
BASE94_W160_DATA := data/base94_w160
BASE94_HW160_SYNTH := aster-synth-words --output_dir $(BASE94_HW160_DATA) $(BASE94_TRAIN_ARGS) \
	--seed 7 --width 160
BASE94_W160_SYNTH := aster-synth-words --output_dir $(BASE94_W160_DATA) $(BASE94_SYNTH_ARGS) \
	--num_train 0 --width 160

$(BASE94_HW160_DATA)/manifest.json: | $(FONTS_STAMP) system-fonts $(EXTRA_FONTS_STAMP) fonts-google
	$(VENV)/bin/$(BASE94_HW160_SYNTH)

$(BASE94_W160_DATA)/manifest.json: | $(FONTS_STAMP) system-fonts $(EXTRA_FONTS_STAMP) fonts-google
	$(VENV)/bin/$(BASE94_W160_SYNTH)

# Stage eleven (configs/base_cpu_stage11.config) trains on at 32x160: 300,000 new training renders
# at 160 pixels (data/base94_hw160b, seed 8; 10 min here) beside data/base94.
BASE94_HW160B_DATA := data/base94_hw160b
BASE94_HW160B_SYNTH := aster-synth-words --output_dir $(BASE94_HW160B_DATA) $(BASE94_TRAIN_ARGS) \
	--seed 8 --width 160 --num_train 300000 --num_shards 24

$(BASE94_HW160B_DATA)/manifest.json: | $(FONTS_STAMP) system-fonts $(EXTRA_FONTS_STAMP) fonts-google
	$(VENV)/bin/$(BASE94_HW160B_SYNTH)

.PHONY: pretrain-94
pretrain-94: install protos $(FONTS_STAMP) $(BASE_DATA)/manifest.json \
		$(BASE94_DATA)/manifest.json $(BASE94_HW_DATA)/manifest.json \
		$(BASE94_LIB_DATA)/manifest.json $(BASE94_HW160_DATA)/manifest.json \
		$(BASE94_W160_DATA)/manifest.json $(STAGE4_MODEL)/pipeline.config
	$(call pretrain_stage,configs/base_cpu_stage5.config,runs/base_cpu_stage5,\
		runs/base_cpu_stage5/model,--starts_from $(STAGE4_MODEL),$(BASE94_DATA),$(BASE94_SYNTH))
	$(call pretrain_stage,configs/base_cpu_stage6.config,runs/base_cpu_stage6,\
		runs/base_cpu_stage6/model,--starts_from runs/base_cpu_stage5/model,\
		$(BASE94_DATA) $(BASE94_HW_DATA),$(BASE94_HW_SYNTH))
	$(call pretrain_stage,configs/base_cpu_stage7.config,runs/base_cpu_stage7,\
		runs/base_cpu_stage7/model,--starts_from runs/base_cpu_stage6/model,\
		$(BASE94_DATA) $(BASE94_LIB_DATA),$(BASE94_LIB_SYNTH))
	$(call pretrain_stage,configs/base_cpu_stage8.config,runs/base_cpu_stage8,\
		runs/base_cpu_stage8/model,--starts_from runs/base_cpu_stage7/model,\
		$(BASE94_DATA) $(BASE94_HW_DATA) $(BASE94_LIB_DATA),$(BASE94_HW_SYNTH) && $(BASE94_LIB_SYNTH))
	$(PY) -m aster.tools.widen_model --checkpoint_path runs/base_cpu_stage8/model \
		--pipeline_config_path configs/base_cpu_stage9.config --output_dir runs/base_cpu_stage9_start
	$(call pretrain_stage,configs/base_cpu_stage9.config,runs/base_cpu_stage9,\
		runs/base_cpu_stage9/model,--starts_from runs/base_cpu_stage8/model --float16,\
		$(BASE94_DATA) $(BASE94_HW_DATA) $(BASE94_LIB_DATA),$(BASE94_HW_SYNTH) && $(BASE94_LIB_SYNTH))
	$(call pretrain_stage,configs/base_cpu_stage10.config,runs/base_cpu_stage10,$(BASE_MODEL),\
		--starts_from runs/base_cpu_stage9/model --float16,\
		$(BASE94_DATA) $(BASE94_HW_DATA) $(BASE94_LIB_DATA) $(BASE94_HW160_DATA),\
		$(BASE94_HW_SYNTH) && $(BASE94_LIB_SYNTH) && $(BASE94_HW160_SYNTH) && $(BASE94_W160_SYNTH))

# ---- pretrain-11: stage eleven (configs/base_cpu_stage11.config; not shipped) goes on from the
# shipped model's weights ($(BASE_MODEL)) into runs/base_cpu_stage11/model: 1 h 2 min of
# training and ~8 min of evaluation and packaging on two Zen 4 cores (05f8c87), so that it fits in
# one session.
.PHONY: pretrain-11
pretrain-11: install protos $(BASE_DATA)/manifest.json $(BASE94_DATA)/manifest.json \
		$(BASE94_W160_DATA)/manifest.json $(BASE94_HW160B_DATA)/manifest.json
	$(call pretrain_stage,configs/base_cpu_stage11.config,runs/base_cpu_stage11,\
		runs/base_cpu_stage11/model,--starts_from $(BASE_MODEL) --float16,\
		$(BASE94_DATA) $(BASE94_HW160B_DATA),$(BASE94_HW160B_SYNTH) && $(BASE94_W160_SYNTH))

# ---- tiny-data: the data of configs/tiny.config and the README's example commands,
# data/tiny_train.tfrecord (512 synthetic words) and data/tiny_val.tfrecord (64 unseen words and
# font families), from aster-synth-words with the fonts on the machine (~20 s, mostly finding
# fonts). Rewritten each time (seed 0: the same fonts give the same images).
TINY_SYNTH_ARGS := --num_train 512 --num_val 64 --num_val_ood 0 --num_shards 1 --num_workers 1
.PHONY: tiny-data
tiny-data: install
	$(VENV)/bin/aster-synth-words --output_dir data/tiny $(TINY_SYNTH_ARGS)
	mv -f data/tiny/train.tfrecord data/tiny_train.tfrecord
	mv -f data/tiny/val.tfrecord data/tiny_val.tfrecord
	rm -rf data/tiny

# ---- reliability: every fault case of SPEC section 9 at full size (five SIGKILLs, a 20-minute soak
# of demo_cpu.config; SOAK_MINUTES=5 for a shorter one, 0 to reuse the last), then rewrites the
# table in docs/RELIABILITY.md. The CI-sized part runs in `make test` (tests/reliability/).
SOAK_MINUTES ?= 20
.PHONY: reliability
reliability: install protos
	$(PY) tests/reliability/report.py --kills 5 --soak_minutes $(SOAK_MINUTES)

# ---- bench: every benchmark script with short settings (tens of minutes on 2 shared cores).
# Figures print as tables. `make bench BENCH_FLAGS=--record` also keeps each script's output in
# build/bench/<script>.log and then rewrites the current-figures tables of benchmarks/RESULTS.md
# from those logs (benchmarks/record.py; the history below them is left alone). Other BENCH_FLAGS
# go to every script. A config missing from configs/ is skipped with a note.
BENCH_FLAGS ?=
BENCH_LOGS := build/bench
BENCH_RECORD := $(filter --record,$(BENCH_FLAGS))
# $(call bench_run,SCRIPT,ARGS): runs benchmarks/SCRIPT.py ARGS, through `record.py run` (which
# copies its output to build/bench/SCRIPT.log) when recording.
bench_run = $(if $(BENCH_RECORD),$(PY) benchmarks/record.py run $(BENCH_LOGS)/$(1).log --) \
	$(PY) benchmarks/$(1).py $(2) $(filter-out --record,$(BENCH_FLAGS))

.PHONY: bench
bench: install protos
	@rm -rf $(BENCH_LOGS)
	$(call bench_run,flops,--configs aster_paper demo_cpu --batch_size 32 --warmup 2 --steps 3)
	$(call bench_run,train_throughput,--configs aster_paper demo_cpu crnn_ctc --clones 1 2 \
		--warmup 2 --steps 4)
	$(call bench_run,step_profile,--configs demo_cpu aster_paper --top 12)
	$(call bench_run,inference,--config aster_paper --repeats 5)
	$(call bench_run,eval_batching,--repeats 1)
	$(call bench_run,input_pipeline,--runs 3 --steps 30 --warmup 10)
	$(call bench_run,synth_speed,--images 1000 --runs 3 --end_to_end)
	$(if $(BENCH_RECORD),$(PY) benchmarks/record.py write $(BENCH_LOGS)/*.log)
