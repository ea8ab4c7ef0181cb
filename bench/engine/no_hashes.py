"""A checkout of this commit with the content hashes stubbed out, for `gap.py
--baseline`: what the hashes cost a run, measured interleaved (bench/README.md, "The
gap to the parallel floor", session 14). Never for use: every snapshot gets a random
identity, so nothing is ever reused or verifiable.

    python3 bench/engine/no_hashes.py /tmp/nohash
    .venv/bin/python bench/engine/gap.py --size 100x1e6 --reps 5 \\
        --only strata,before,threads --baseline /tmp/nohash
    git worktree remove --force /tmp/nohash
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
# the first statement of fingerprints.row_hashes' body: from here on it returns the row
# count of each relation (a cheap aggregate) and random sums instead of hashing
ANCHOR = "    if not relations:\n        return []\n"
STUB = ("    import random\n"
        "    return [RowHash(int(con.execute(f\"SELECT count(*) FROM {r}\").fetchone()[0]),\n"
        "                    random.getrandbits(60), random.getrandbits(60))\n"
        "            for r, _ in relations]\n")


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    target = Path(sys.argv[1]).resolve()
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(target), "HEAD"],
                   check=True)
    path = target / "strata" / "engine" / "fingerprints.py"
    text = path.read_text()
    if text.count(ANCHOR) != 1:
        raise SystemExit(f"{path}: row_hashes no longer starts as expected; update ANCHOR")
    path.write_text(text.replace(ANCHOR, ANCHOR + STUB))
    print(f"{target}: content hashes stubbed out (strata/engine/fingerprints.py)")


if __name__ == "__main__":
    main()
