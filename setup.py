"""The compiled parts: corpus._tally, peS2o's token counter (see corpus/_tally.c), and
corpus._prefix, the title index's prefix-join loop (see corpus/_prefix.c).

Everything else about the package is in pyproject.toml; a C compiler is needed
anyway, since pycld2 builds from source.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("corpus._tally", ["corpus/_tally.c"], extra_compile_args=["-O2"]),
        Extension("corpus._prefix", ["corpus/_prefix.c"], extra_compile_args=["-O2"]),
    ]
)
