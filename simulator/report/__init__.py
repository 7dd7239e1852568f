"""How results and studies are shown: text tables and JSON (:mod:`.tables`), plots
(:mod:`.plots`). Nothing here runs a battle."""
