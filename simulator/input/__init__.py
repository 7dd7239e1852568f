"""Reading TOML input strictly: a file into data (:mod:`.toml`), declared keys
(:mod:`.fields`) and the located reader every check goes through (:mod:`.reader`)."""
