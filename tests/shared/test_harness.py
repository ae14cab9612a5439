"""The harness itself: the shared package imports on both runtimes, and a failing assert fails."""

import cylindre


def test_firmware_package_imports():
    assert cylindre.__name__ == "cylindre"


def test_assert_is_live():
    try:
        assert 1 == 2, "must fail"
    except AssertionError:
        return
    raise Exception("assert statements are compiled out")
