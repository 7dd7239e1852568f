"""``python -m simulator`` is ``battle-odds``."""

from .cli import main

main()
