# type: ignore  (read by MicroPython's manifestfile.py and host_tools.pico.firmware, never imported)
# MicroPython freezing manifest: exactly the modules the Pico runs (main.py's imports, followed
# through). `make firmware` copies only these (as .mpy) with main.py and board.json; the rest of
# firmware/ (rules/, feed.py, replay.py, link/host.py, calibration helpers) runs on the host only.
# tests/firmware/test_firmware_build.py checks this list against main.py's import closure.
#
# To freeze them into a MicroPython UF2 (docs/wheel/uf2.md):
#   make -C micropython/ports/rp2 BOARD=RPI_PICO FROZEN_MANIFEST=$PWD/firmware/manifest.py
# The port's own manifest (asyncio, etc.) is kept by the include below.
include("$(PORT_DIR)/boards/manifest.py")

package(
    "cylindre",
    files=(
        "__init__.py",
        "board/__init__.py",
        "board/boardfile.py",
        "board/clock.py",
        "board/encoder.py",
        "board/fastcobs.py",
        "board/loop.py",
        "board/pio_quad.py",
        "board/ring.py",
        "board/shell.py",
        "board/store.py",
        "board/wiring.py",
        "link/__init__.py",
        "link/cammegh.py",
        "link/cobs.py",
        "link/device.py",
        "link/frame.py",
        "link/mac.py",
        "link/protocol.py",
        "link/status.py",
        "spin/__init__.py",
        "spin/ball.py",
        "spin/controller.py",
        "spin/core.py",
        "spin/droplearn.py",
        "spin/geometry.py",
        "spin/health.py",
        "spin/launch.py",
        "spin/origin.py",
        "spin/pockets.py",
        "spin/predict.py",
        "spin/rest.py",
        "spin/rotor.py",
        "spin/settings.py",
        "spin/track.py",
    ),
)
