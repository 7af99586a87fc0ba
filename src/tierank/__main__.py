"""``python -m tierank``: the ``tierank`` command line."""

if __name__ == "__main__":
    from .cli import run

    run()
