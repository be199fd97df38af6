import pytest


@pytest.fixture(scope="session")
def prog392():
    from safebeal.datasets.activity_programs import load_program

    return load_program("392_2")
